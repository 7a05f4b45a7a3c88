//! Helpers shared by the CLI's integration tests: run the real `cordon` binary.
#![allow(dead_code)] // each test file uses a different subset

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

/// `cordon ARGS…` in `dir`, with no policy from the environment.
pub fn cordon(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().unwrap()
}

/// The `cordon` binary to run in `dir`, with no policy or session from the environment, and
/// the default audit log (for policies that set none) and the trust store in the tests' own
/// directories, never the user's.
pub fn command(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cordon"));
    // A UTF-8 locale whatever the tests run in: outside one, cordon escapes every non-ASCII
    // character it shows (`cordon_gate::clean`).
    c.current_dir(dir)
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env("LANG", "C.UTF-8")
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .env("XDG_STATE_HOME", state_home())
        .env("XDG_CONFIG_HOME", config_home());
    c
}

/// `XDG_CONFIG_HOME` for the tests (the trust store): trust is pinned to each file's own
/// path, so the tests' temporary workspaces never share an entry.
pub fn config_home() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("config")
}

/// The operator trusts `dir`'s `cordon.toml` as it is now (`cordon policy trust`), so that
/// discovery takes it.
pub fn trust(dir: &Path) {
    trust_file(dir, "cordon.toml");
}

/// `cordon policy trust FILE` in `dir`; must succeed.
pub fn trust_file(dir: &Path, file: &str) {
    let o = cordon(dir, &["policy", "trust", file]);
    assert!(o.status.success(), "trust {file}: {}", stderr(&o));
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

/// A temporary directory holding `policy` as `cordon.toml`, trusted.
pub fn workspace(policy: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    trust(d.path());
    d
}

/// A plain HTTP server on 127.0.0.1 that answers with the request line; its port.
pub fn web_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if s.read_exact(&mut b).is_err() {
                        return;
                    }
                    head.push(b[0]);
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{line}",
                    line.len()
                );
            });
        }
    });
    port
}

/// Host pids, other than this test process, whose command line contains `marker`.
pub fn pids_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == std::process::id() as i32 {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmdline).contains(marker) {
                out.push(pid);
            }
        }
    }
    out
}
