//! Helpers shared by the CLI's integration tests: run the real `cordon` binary.
#![allow(dead_code)] // each test file uses a different subset

use std::path::Path;
use std::process::{Command, Output};

/// `cordon ARGS…` in `dir`, with no policy from the environment.
pub fn cordon(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(args)
        .current_dir(dir)
        .env_remove("CORDON_POLICY")
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary directory holding `policy` as `cordon.toml`.
pub fn workspace(policy: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    d
}
