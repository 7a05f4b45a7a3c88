//! `Io::cancel` and `Cancel`: a readable cancel descriptor kills the whole sandboxed tree at once, on both
//! Linux backends, and the run ends `Outcome::Cancelled`. The processes are looked up in the
//! host's /proc by a marker argument only this test uses.

use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Cancel, Command, Io, Machine, Outcome};
use cordon_policy::{Backend, Policy};

mod common;
use common::pids_with;

static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cancel_kills_the_tree(backend: Backend, n: u8) {
    // One run at a time: the runner without namespaces reaps (and kills) every child of this
    // process when its run ends, the other test's sandbox among them.
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir ws");
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "cordon.toml",
        dir.path(),
    )
    .expect("policy");
    let prepared = prepare(&policy, &Machine::probe(), backend)
        .unwrap_or_else(|r| panic!("{backend:?} must be usable here: {r:?}"));

    // Unique per backend and run: a sleep in the foreground and two forked into the background.
    let marker = format!("1000.{}{n}", std::process::id());
    let script =
        format!("sleep {marker} & sleep {marker} & (sleep {marker} &) ; sleep {marker}; wait");
    let cancel = Cancel::new().expect("cancel switch");
    let command = Command {
        program: "/bin/bash".into(),
        args: vec!["-c".into(), script.into()],
        cwd: ws.clone(),
        timeout: None,
    };
    let io = Io {
        cancel: Some(cancel.fd()),
        ..Io::default()
    };
    let runner = std::thread::spawn(move || prepared.run(command, io));

    // Wait until all four sleeps run (bounded: a broken sandbox must fail, not hang).
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&marker).len() < 4 {
        assert!(Instant::now() < until, "the sleeps never all started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = pids_with(&marker);
    assert!(!cancel.is_cancelled());
    cancel.cancel();
    assert!(cancel.is_cancelled());
    let ran = runner.join().expect("runner thread").expect("run");
    assert_eq!(ran.exit.expect("run"), Outcome::Cancelled);
    let left: Vec<i32> = before
        .iter()
        .copied()
        .filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
        .collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert!(pids_with(&marker).is_empty(), "a sleep is still running");
}

#[test]
fn cancel_kills_every_process_on_landlock() {
    cancel_kills_the_tree(Backend::Landlock, 1);
}

#[test]
fn cancel_kills_every_process_on_bwrap() {
    cancel_kills_the_tree(Backend::Bwrap, 2);
}
