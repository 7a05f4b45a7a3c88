//! A run's release (`Io::release`, what the gate makes its decision's record durable in):
//! the sandbox is built while it is awaited — the namespaces cloned, bwrap started — but the
//! command starts only once it returned `Ok`, and never when it returned an error; nothing of
//! the sandbox stays behind then.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Command, ErrorKind, Io, Machine, Outcome, Prepared, Release};
use cordon_policy::{Backend, Policy};

/// This process's children (every thread's), from /proc.
fn children() -> Vec<i32> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    out
}

/// Children that are not zombies waiting to be reaped by a later run (an init that reported
/// and exits by itself is reaped by the next run, by design).
fn live_children() -> Vec<i32> {
    children()
        .into_iter()
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, None | Some('Z' | 'X'))
        })
        .collect()
}

fn prepared(backend: Backend) -> (tempfile::TempDir, Prepared) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ws")).expect("mkdir ws");
    // `none` runs only where the policy accepts an unconfined run.
    let require = if backend == Backend::None {
        "[sandbox]\nrequire_os_sandbox = false\n"
    } else {
        ""
    };
    let policy = Policy::parse(
        &format!("version = 1\n{require}[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n"),
        "cordon.toml",
        dir.path(),
    )
    .expect("policy");
    let p = prepare(&policy, &Machine::probe(), backend)
        .unwrap_or_else(|e| panic!("{backend:?} must be usable here: {e}"));
    (dir, p)
}

/// Writes `ran` only when the release's marker is there already.
fn command(ws: &std::path::Path) -> Command {
    Command {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            "[ -e released ] && echo yes > ran; [ -e ran ]".into(),
        ],
        cwd: ws.to_path_buf(),
        timeout: Some(Duration::from_secs(120)),
    }
}

/// One test at a time: each looks at every child of this process.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// While the release waits: did the sandbox's start-up already begin (a child of ours)?
fn a_slow_release_holds_the_command(backend: Backend, started_meanwhile: bool) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, sandbox) = prepared(backend);
    let ws = dir.path().join("ws");
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let marker = ws.join("released");
    // Only a child this run made counts: an earlier test's init may still be dying (reaped by
    // the next run, by design), and on a loaded machine it was seen here during an unconfined
    // run, which builds nothing.
    let before = children();
    let new_child = move || live_children().iter().any(|pid| !before.contains(pid));
    let release = Release::new(move || {
        // A slow sync: the command must not start meanwhile. Generous, for a loaded machine:
        // the child may take a while to appear, and the wait goes on after it did.
        let until = Instant::now() + Duration::from_secs(30);
        let mut seen = new_child();
        while !seen && Instant::now() < until && started_meanwhile {
            std::thread::sleep(Duration::from_millis(5));
            seen = new_child();
        }
        std::thread::sleep(Duration::from_millis(700));
        let _ = seen_tx.send(seen);
        std::fs::write(&marker, "").map_err(|e| format!("marker: {e}"))
    });
    let ran = sandbox
        .run(
            command(&ws),
            Io {
                release: Some(release),
                ..Default::default()
            },
        )
        .expect("run");
    assert_eq!(
        ran.exit.as_ref().map_err(|e| e.to_string()),
        Ok(&Outcome::Exited(0)),
        "the command ran after its release, and only then ({backend:?})"
    );
    assert!(ws.join("ran").exists());
    assert_eq!(
        seen_rx.recv().expect("the release ran"),
        started_meanwhile,
        "the sandbox's start-up runs while the release is awaited ({backend:?}): \
         {started_meanwhile} expected"
    );
}

fn a_refused_release_never_starts_the_command(backend: Backend) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, sandbox) = prepared(backend);
    let ws = dir.path().join("ws");
    std::fs::write(ws.join("released"), "").expect("marker");
    for _ in 0..5 {
        let release = Release::new(|| {
            std::thread::sleep(Duration::from_millis(200));
            Err("the decision's record could not be made durable".into())
        });
        let ran = sandbox
            .run(
                command(&ws),
                Io {
                    release: Some(release),
                    ..Default::default()
                },
            )
            .expect("run");
        let e = ran.exit.expect_err("a refused release runs nothing");
        assert_eq!(e.kind(), ErrorKind::Refused, "{e}");
        assert!(e.to_string().contains("could not be made durable"), "{e}");
        assert!(
            !ws.join("ran").exists(),
            "the command ran although its release was refused ({backend:?})"
        );
        // Nothing of the sandbox that was being built stays (bounded: an init's teardown
        // takes a moment on a loaded machine).
        let until = Instant::now() + Duration::from_secs(30);
        while !live_children().is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(live_children(), Vec::<i32>::new(), "{backend:?}");
    }
}

#[test]
fn a_slow_release_holds_the_landlock_command() {
    a_slow_release_holds_the_command(Backend::Landlock, true);
}

#[test]
fn a_slow_release_holds_the_bwrap_command() {
    a_slow_release_holds_the_command(Backend::Bwrap, true);
}

#[test]
fn a_slow_release_holds_the_unconfined_command() {
    // Nothing to build for `none`: released before the command is spawned.
    a_slow_release_holds_the_command(Backend::None, false);
}

#[test]
fn a_refused_release_never_starts_the_landlock_command() {
    a_refused_release_never_starts_the_command(Backend::Landlock);
}

#[test]
fn a_refused_release_never_starts_the_bwrap_command() {
    a_refused_release_never_starts_the_command(Backend::Bwrap);
}

#[test]
fn a_refused_release_never_starts_the_unconfined_command() {
    a_refused_release_never_starts_the_command(Backend::None);
}
