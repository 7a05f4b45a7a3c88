//! Helpers shared by the CLI's integration tests: run the real `cordon` binary.
#![allow(dead_code)] // each test file uses a different subset

use std::path::Path;
use std::process::{Command, Output};

/// `cordon ARGS…` in `dir`, with no policy from the environment.
pub fn cordon(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().unwrap()
}

/// The `cordon` binary to run in `dir`, with no policy or session from the environment, and
/// the default audit log (for policies that set none) in the tests' own state directory,
/// never the user's.
pub fn command(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cordon"));
    c.current_dir(dir)
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .env("XDG_STATE_HOME", state_home());
    c
}

/// `XDG_STATE_HOME` for the tests: under cargo's scratch directory for integration tests.
pub fn state_home() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("state")
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
