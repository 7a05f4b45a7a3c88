//! Issue 21, round 12: no check-then-use on a call's working directory. The gate checks a
//! call's cwd (canonical, inside a root); the sandbox enters it later, by its path, and in
//! bwrap's or cordon's own mount namespace resolves that path again. Something else that can
//! write the root (an earlier allowed call still running, a wrapped server) swaps a component
//! for a link to outside between the two: the run must never start there.
//!
//! A thread swaps `ws/d` between a real directory and a link to `/usr`, outside the roots
//! (`renameat2(RENAME_EXCHANGE)`, so `d` always exists) while `cordon mcp` runs many
//! `run_command` calls with `cwd` `ws/d`, each printing `/bin/pwd -P` and the marker file it
//! finds there. Every call must either be refused or have run in `ws/d` itself; never outside. Root
//! and the unprivileged `cordon-test` user, Landlock and bwrap (its zygote: `cordon mcp` keeps
//! one sandbox for its calls).

#![cfg(target_os = "linux")]

use cordon_e2e::{chown_tree, is_root, shell_workspace, test_user};
use serde_json::{json, Value};
use std::ffi::CString;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const CALLS: usize = 30;

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Exchanges `a` and `b` (a directory and a link) until `stop`: the link stays at `a` for
/// 0.25 ms of every 2 ms, the directory the rest (calls must pass the gate's check for the
/// swap to matter).
fn swap_until(a: &Path, b: &Path, stop: &AtomicBool) {
    let (a, b) = (cstr(a), cstr(b));
    let exchange = || {
        // SAFETY: renameat2 reads the two NUL-terminated paths, live on this frame.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    };
    while !stop.load(Ordering::Relaxed) {
        exchange();
        std::thread::sleep(Duration::from_micros(250));
        exchange();
        std::thread::sleep(Duration::from_micros(1750));
    }
}

/// Stops the swapper when dropped, a failed assertion too (the scope would wait for it).
struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What one run printed: `pwd -P`, then the marker of the directory it started in. A run that
/// started in the checked directory reads INSIDE (its `pwd -P` may be `ws/l` by then: the
/// exchange moves the directory itself); one that followed the link is in `outside`.
fn check_output(text: &str, ws: &Path, outside: &Path, ran: &mut usize) -> Option<String> {
    if text.lines().any(|l| Path::new(l) == outside) {
        return Some(format!("a run started outside the roots: {text}"));
    }
    if text.contains("INSIDE") {
        *ran += 1;
        if !text.contains(&format!("{}/", ws.display())) {
            return Some(format!("a run started outside {}: {text}", ws.display()));
        }
    }
    None
}

#[test]
fn a_cwd_swapped_for_a_link_after_the_check_never_starts_a_run_outside() {
    assert!(is_root(), "run the escape suite as root (CI does)");
    let cordon = cordon_e2e::cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")));
    // Every run that started outside, on every backend and user, before failing.
    let mut escaped = Vec::new();
    for user in [false, true] {
        for backend in ["landlock", "bwrap"] {
            let ids = user.then(test_user);
            let what = format!("[user {user} {backend}]");
            let (_tmp, root) = shell_workspace("cwd-race", backend, ids);
            let ws = root.join("ws");
            let d = ws.join("d");
            fs::create_dir(&d).unwrap();
            fs::write(d.join("marker"), "INSIDE\n").unwrap();
            // Outside every root, and seen inside bwrap's view too (a system directory): a
            // link to a directory bwrap does not show would only fail to be entered there.
            let outside = Path::new("/usr");
            let link = ws.join("l");
            std::os::unix::fs::symlink(outside, &link).unwrap();
            if let Some((uid, gid)) = ids {
                chown_tree(&ws, uid, gid);
            }
            let policy = root.join("policies/cordon.toml");
            // The same call many times in a row is what this test is (no doom-loop ask);
            // `[approval]` is the policy's last table.
            let mut text = fs::read_to_string(&policy).unwrap();
            text.push_str("doom_loop = 0\n");
            fs::write(&policy, text).unwrap();
            let command = |cwd: &Path| {
                let mut c = Command::new(cordon);
                c.current_dir(cwd)
                    .env_clear()
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("HOME", root.join("home"))
                    .env("LANG", "C.UTF-8")
                    .env("TMPDIR", root.join("tmp"))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                if let Some((uid, gid)) = ids {
                    c.uid(uid).gid(gid);
                }
                c
            };
            // Not bash's `pwd -P`: it resolves $PWD by name, now, not where the run is.
            let script = "/bin/pwd -P; cat marker";
            let stop = AtomicBool::new(false);
            let (mut ran, mut refused, before) = (0, 0, escaped.len());
            std::thread::scope(|s| {
                let swapper = s.spawn(|| swap_until(&d, &link, &stop));
                let _stop = Stop(&stop);
                // `cordon mcp`, its calls naming `ws/d` as their cwd.
                let mut c = command(&ws)
                    .args(["mcp", "--policy"])
                    .arg(&policy)
                    .stdin(Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut stdin = c.stdin.take().unwrap();
                let mut out = BufReader::new(c.stdout.take().unwrap());
                let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
                let mut answer = String::new();
                send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"}}}));
                out.read_line(&mut answer).unwrap();
                send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
                for j in 0..CALLS {
                    send(
                        json!({"jsonrpc": "2.0", "id": j + 1, "method": "tools/call",
                        "params": {"name": "run_command",
                        "arguments": {"command": script, "cwd": d}}}),
                    );
                    answer.clear();
                    assert!(out.read_line(&mut answer).unwrap() > 0, "{what}: mcp ended");
                    let v: Value = serde_json::from_str(&answer).unwrap();
                    let text = v["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{what}: {v}"));
                    if std::env::var_os("CWD_DEBUG").is_some() {
                        eprintln!("{text}");
                    }
                    if let Some(e) = check_output(text, &ws, outside, &mut ran) {
                        escaped.push(format!("{what}: {e}"));
                    }
                    if text.contains("changed after cordon checked it") {
                        refused += 1;
                    }
                }
                drop(stdin);
                let _ = c.wait();
                stop.store(true, Ordering::Relaxed);
                swapper.join().unwrap();
            });
            let outside_runs = escaped.len() - before;
            eprintln!(
                "{what}: of {CALLS} calls {ran} ran in the checked directory, {refused} were refused after the swap, {outside_runs} started outside"
            );
            // Not vacuous: calls did pass the gate's check while the link came and went.
            assert!(
                ran + refused + outside_runs >= CALLS / 4,
                "{what}: too few calls passed the gate's check to race"
            );
        }
    }
    assert!(escaped.is_empty(), "{}", escaped.join("\n"));
}
