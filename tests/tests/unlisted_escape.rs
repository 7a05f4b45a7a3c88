//! Issue 21, round 4 of the outside review, end to end (the real `cordon` binary on the real
//! kernel and bwrap): a directory the after-run scan cannot list does not hide a plant.
//!
//! A command running as an unprivileged user plants `h/.mcp.json` and then takes the read bit
//! off `h` (`chmod 300 h`, or `100`): cordon, running as the same user, cannot list `h`, so the
//! walk saw nothing and the run ended without a warning, while Claude Code started in `h` still
//! opens `.mcp.json` by name (the search bit stays). The directory is now watched itself and
//! moved aside with what it hides. As root the scan reads through the mode and moves the file
//! aside. Each case runs as root and as the unprivileged `cordon-test` user, on Landlock and on
//! bwrap.

#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_copied, describe, is_root, shell_exec, shell_workspace, test_user};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `cordon`, copied once per test process where the unprivileged user can run it.
fn cordon() -> &'static Path {
    cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")))
}

/// Runs `script` under `cordon exec` in a fresh workspace; the workspace and the output.
fn run(user: bool, backend: &str, script: &str) -> (tempfile::TempDir, PathBuf, Output) {
    assert!(is_root(), "run the escape suite as root (CI does)");
    let ids = user.then(test_user);
    let (tmp, root) = shell_workspace("unlisted", backend, ids);
    let out = shell_exec(cordon(), &root, ids, script).output().unwrap();
    (tmp, root.join("ws"), out)
}

#[test]
fn a_plant_in_a_directory_the_scan_cannot_list_is_moved_aside() {
    let script = "mkdir -p h && echo '{\"mcpServers\":{}}' > h/.mcp.json && chmod 300 h && \
                  mkdir -p i/j && echo 'touch pwned' > i/j/.envrc && chmod 100 i/j && \
                  mkdir -p k && echo '{}' > k/notes.json && chmod 300 k";
    for user in [false, true] {
        for backend in ["landlock", "bwrap"] {
            let what = format!("[{} {backend}]", if user { "user" } else { "root" });
            let (_tmp, ws, out) = run(user, backend, script);
            assert!(out.status.success(), "{what} {}", describe(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            for plant in ["h/.mcp.json", "i/j/.envrc"] {
                // The operator's tool opens the name: it must no longer lead to the plant.
                assert!(
                    !ws.join(plant).exists(),
                    "{what} {plant} is still where the operator's tools open it, and no warning said so:\n{err}"
                );
            }
            assert!(
                err.contains("cordon: warning: the run left"),
                "{what} {err}"
            );
            let audit = fs::read_to_string(ws.join("../state/audit.jsonl")).unwrap();
            assert!(
                audit.contains("after-run"),
                "{what} no after-run record:\n{audit}"
            );
            // Restore the modes so the temporary directory can be removed.
            for d in [
                "h",
                ".h.cordon-quarantine",
                "i/j",
                "i/.j.cordon-quarantine",
                "k",
                ".k.cordon-quarantine",
            ] {
                let _ = fs::set_permissions(ws.join(d), fs::Permissions::from_mode(0o755));
            }
        }
    }
}
