//! A long-lived process runs many commands with one prepared sandbox (the MCP server does):
//! nothing of any run stays behind as a process of its own, running or a zombie, however the
//! run ends — exited, timed out, or cancelled at a random point of its start-up or its run —
//! and nothing outlives a runner SIGKILLed at a random point of its sandbox's start-up.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Cancel, Enforcement, Io, Machine, Prepared};
use cordon_policy::{Backend, Policy};

mod common;
use common::{children, command, lcg, pids_with};

fn prepared(backend: Backend) -> (tempfile::TempDir, Prepared) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = prepared_in(dir.path(), backend);
    (dir, p)
}

/// A sandbox whose writable root is `dir/ws` (made here).
fn prepared_in(dir: &std::path::Path, backend: Backend) -> Prepared {
    std::fs::create_dir(dir.join("ws")).expect("mkdir ws");
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "cordon.toml",
        dir,
    )
    .expect("policy");
    prepare(&policy, &Machine::probe(), backend)
        .unwrap_or_else(|e| panic!("{backend:?} must be usable here: {e}"))
}

/// One test at a time: each looks at every child of this process.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn nothing_stays_behind(backend: Backend) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, sandbox) = prepared(backend);
    let mut seed = u64::from(std::process::id());
    for i in 0..40 {
        let ran = match i % 4 {
            // Cancelled at a random point between 0 and 30 ms: during bwrap's start-up, the
            // namespace's set-up, or the command's run.
            0 | 1 => {
                let cancel = Cancel::new().expect("cancel");
                let delay = Duration::from_micros(lcg(&mut seed) % 30_000);
                let c = cancel.clone();
                let killer = std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    c.cancel();
                });
                let io = Io {
                    cancel: Some(cancel.fd()),
                    ..Io::default()
                };
                let ran = sandbox.run(command(dir.path(), "sleep 1 & sleep 1"), io);
                killer.join().expect("killer");
                ran
            }
            2 => {
                let mut c = command(dir.path(), "sleep 5");
                c.timeout = Some(Duration::from_millis(lcg(&mut seed) % 40 + 1));
                sandbox.run(c, Io::default())
            }
            _ => sandbox.run(command(dir.path(), "true"), Io::default()),
        };
        let ran = ran.expect("the run");
        // No gap: on bwrap, the PID namespace of cordon's own around it was made.
        assert_eq!(ran.enforcement, Enforcement::Full, "{backend:?}");
        ran.exit.expect("the command started");
    }
    // A zombie is reaped by the run that made it, before it returns; a process still dying of
    // its parent-death signal may take a moment (bounded: a loaded machine is slow). The one
    // exception, on bwrap: bwrap's init is not waited for once the command's status is in —
    // its teardown is reaped by the next run — so at most the last run's may be there. On
    // Landlock the run's init has exited and been reaped before its private TMPDIR is removed
    // (see `landlock_runs_end_after_their_namespace`).
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let mut left = children();
        if backend != Backend::Landlock && left.len() == 1 && left[0].2 == "bwrap" {
            left.clear();
        }
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "{backend:?}: processes left behind by the runs (pid, state, name): {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bwrap_runs_leave_nothing_behind() {
    nothing_stays_behind(Backend::Bwrap);
}

#[test]
fn landlock_runs_leave_nothing_behind() {
    nothing_stays_behind(Backend::Landlock);
}

/// A Landlock run returns only once its namespace is gone: its init has exited (and is
/// reaped) before the run's private TMPDIR is removed. That directory is a mount point in
/// the namespace (init gives it its write access back there); removed while the namespace
/// lives, the kernel takes the mount away from it first and waits for an RCU grace period —
/// 2–16 ms on cordon's way out of every run on a loaded two-CPU machine — where init's own
/// exit, meanwhile, frees the same mounts beside the after-run scan. Each run is a plain one
/// that ends at once, the case where the run used to return before init had exited.
#[test]
fn landlock_runs_end_after_their_namespace() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, sandbox) = prepared(Backend::Landlock);
    let out = dir.path().join("ws/tmpdir");
    for i in 0..10 {
        let ran = sandbox
            .run(
                command(dir.path(), "printf %s \"$TMPDIR\" > tmpdir"),
                Io::default(),
            )
            .expect("the run");
        assert_eq!(ran.enforcement, Enforcement::Full);
        ran.exit.expect("the command started");
        // No wait here: the run itself waited.
        let left = children();
        assert!(
            left.is_empty(),
            "run {i}: the run returned before its namespace's init was gone (pid, state, name): {left:?}"
        );
        let tmp = std::fs::read_to_string(&out).expect("the command's TMPDIR");
        assert!(
            tmp.contains("cordon-run-") && !std::path::Path::new(&tmp).exists(),
            "run {i}: the run's private TMPDIR {tmp:?} was not removed"
        );
    }
}

/// Set in the process [`killed_runner`] starts: `BACKEND MARKER DIR` (DIR made and removed by
/// the test that kills it: a directory of the runner's own would be left behind by the kill).
const KILLED_RUNNER: &str = "CORDON_TEST_KILLED_RUNNER";

/// Not a test of its own: the process that [`nothing_outlives_a_killed_runner`] starts and
/// SIGKILLs (it runs only with [`KILLED_RUNNER`] set). It prepares a sandbox, says `ready` on
/// its stdout, and runs a command that would sleep for a long time, with its stdio relayed
/// to its own (the caller's pipes, as `cordon exec`'s are).
#[test]
fn killed_runner() {
    let Some(what) = std::env::var(KILLED_RUNNER).ok() else {
        return;
    };
    let mut parts = what.splitn(3, ' ');
    let (Some(backend), Some(marker), Some(dir)) = (parts.next(), parts.next(), parts.next())
    else {
        panic!("{KILLED_RUNNER}: BACKEND MARKER DIR, not {what:?}");
    };
    let backend = match backend {
        "bwrap" => Backend::Bwrap,
        _ => Backend::Landlock,
    };
    let dir = std::path::Path::new(dir);
    let sandbox = prepared_in(dir, backend);
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(b"ready\n").expect("stdout");
        out.flush().expect("stdout");
    }
    let line = format!("sleep {marker} & sleep {marker}; wait");
    let _ = sandbox.run(command(dir, &line), Io::default());
    panic!("the runner was meant to be killed before its command ended");
}

/// A runner (as `cordon exec` is) SIGKILLed at a random point of its sandbox's start-up
/// leaves nothing behind: no process of the sandbox (bwrap's own included) runs on, and
/// nothing holds the runner's stdout.
fn nothing_outlives_a_killed_runner(backend: &str, trials: u32) {
    use std::io::{BufRead, Read};
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let me = std::env::current_exe().expect("test binary");
    let mut seed = u64::from(std::process::id()) ^ 0x5eed;
    for trial in 0..trials {
        let marker = format!("1000.{}{trial:04}", std::process::id());
        let dir = tempfile::tempdir().expect("the runner's directory");
        let mut child = std::process::Command::new(&me)
            .args([
                "--exact",
                "killed_runner",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                KILLED_RUNNER,
                format!("{backend} {marker} {}", dir.path().display()),
            )
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the runner");
        // The test harness writes its own lines first.
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        while !line.ends_with("ready\n") {
            line.clear();
            let n = stdout.read_line(&mut line).expect("the runner's stdout");
            assert!(n > 0, "{backend}: the runner ended before it was ready");
        }
        // Between 0 and 15 ms after the sandbox was prepared: the TMPDIR, the checks, the
        // relay, bwrap's or the namespace's start-up, the command's.
        std::thread::sleep(Duration::from_micros(lcg(&mut seed) % 15_000));
        child.kill().expect("SIGKILL the runner");
        child.wait().expect("reap the runner");
        // End-of-file on the runner's stdout: nothing holds it any more (bounded: a loaded
        // machine is slow to tear namespaces down).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut rest = Vec::new();
            let _ = stdout.read_to_end(&mut rest);
            let _ = tx.send(());
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(30)).is_ok(),
            "{backend}, trial {trial}: something still holds the killed runner's stdout after 30 s: {:?}",
            pids_with(&marker)
        );
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let left = pids_with(&marker);
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < until,
                "{backend}, trial {trial}: processes of the killed runner's sandbox still run: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // This process is a subreaper (cordon's runner makes itself one): what the killed runners'
    // sandboxes left dying was handed to it, and is a zombie of it until reaped here — else the
    // next test of this file that lists this process's children counts them as its own.
    // (ONE is held: no other run of this process has children now.) Until none is left, not
    // only those already dead: a sandbox's init (on Landlock a clone of the runner, whose
    // command line does not carry the marker) may still be dying of its parent-death signal,
    // and would become a zombie of this process after a single pass (bounded: a loaded
    // machine is slow to tear namespaces down).
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        // `wait`, not `waitpid(None, …)`: rustix's `waitpid(None)` is wait4(0), which waits only
        // for children in this process's group, and a killed runner's sandbox init is in a
        // group of its own: ECHILD came while ~100 of them were still zombies here.
        match rustix::process::wait(rustix::process::WaitOptions::NOHANG) {
            Ok(Some(_)) => continue,
            Err(rustix::io::Errno::CHILD) => break,
            Ok(None) => {
                assert!(
                    Instant::now() < until,
                    "{backend}: what the killed runners' sandboxes left is still running after 30 s (pid, state, name): {:?}",
                    children()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("{backend}: waitpid: {e}"),
        }
    }
}

#[test]
fn nothing_outlives_a_killed_bwrap_runner() {
    nothing_outlives_a_killed_runner("bwrap", 100);
}

#[test]
fn nothing_outlives_a_killed_landlock_runner() {
    nothing_outlives_a_killed_runner("landlock", 40);
}
