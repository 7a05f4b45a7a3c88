//! `prepare` removes the private TMPDIRs that killed cordons left (their lock is free) in this
//! user's `$TMPDIR/cordon-<euid>` — on a thread of its own, beside the first run — and never one
//! whose cordon still holds its lock; it does not list `$TMPDIR` itself.

#![cfg(target_os = "linux")]

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Machine};
use cordon_policy::{Backend, Policy};

#[test]
fn prepare_sweeps_dead_runs_tmpdirs_and_keeps_live_ones() {
    let base = tempfile::tempdir().expect("tempdir");
    // This test binary's only test: TMPDIR is read by `prepare` (std::env::temp_dir).
    std::env::set_var("TMPDIR", base.path());
    let me = rustix::process::geteuid().as_raw();
    let user = base.path().join(format!("cordon-{me}"));
    std::fs::create_dir(&user).expect("mkdir");
    let dead = user.join("cordon-run-dead");
    std::fs::create_dir_all(dead.join("left/behind")).expect("mkdir");
    std::fs::write(dead.join("left/behind/file"), "x").expect("write");
    let live = user.join("cordon-run-live");
    std::fs::create_dir(&live).expect("mkdir");
    let held = std::fs::File::open(&live).expect("open");
    rustix::fs::flock(
        held.as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .expect("lock");
    let other = user.join("not-cordons");
    std::fs::create_dir(&other).expect("mkdir");
    // What an older cordon left directly in TMPDIR is no longer looked at (listing a busy /tmp
    // was the cost): left alone.
    let legacy = base.path().join("cordon-run-legacy");
    std::fs::create_dir(&legacy).expect("mkdir");

    let ws = tempfile::tempdir().expect("tempdir");
    let policy = Policy::parse(
        "version = 1\n[sandbox]\nrequire_os_sandbox = false\n",
        "cordon.toml",
        ws.path(),
    )
    .expect("policy");
    let _sandbox = prepare(&policy, &Machine::probe(), Backend::None).expect("prepare");
    let until = Instant::now() + Duration::from_secs(60);
    while dead.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!dead.exists(), "a dead run's TMPDIR was not swept");
    assert!(live.exists(), "a live run's TMPDIR was swept");
    assert!(other.exists(), "a directory that is not cordon's was swept");
    assert!(legacy.exists(), "TMPDIR itself was swept");
    drop(held);
}
