//! The bwrap sandbox a long-lived front end keeps for its runs (`Prepared::reuse_sandbox`, the
//! "zygote", `src/run/zygote.rs`), on the real bwrap and kernel: each run is as isolated from
//! the next as one-shot runs are where it matters (nothing it started runs on, the next run
//! cannot see or signal it, its /tmp is empty), confinement is applied to each run, a zygote
//! that dies refuses that call and is replaced on the next, nothing leaks (no zombie, no
//! descriptor), a SIGKILLed front end takes it down, and two prepared policies never share one.
//!
//! Root and unprivileged (run this binary as another user: bwrap then makes a user namespace).

#![cfg(target_os = "linux")]

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_ossandbox::{
    prepare, Cancel, ChildStdio, Command, Io, Machine, Outcome, Prepared, Ran, RunPath,
};
use cordon_policy::{Backend, Policy};

mod common;
use common::{children, command, lcg, pids_with};

/// One test at a time: some look at every child of this process, or every process.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn policy_text(mode: &str) -> String {
    format!("version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"{mode}\"\n")
}

/// A bwrap sandbox for `ws` (mode `mode`) that reuses one sandbox for its runs.
fn reusing(dir: &Path, mode: &str) -> Prepared {
    let ws = dir.join("ws");
    if !ws.exists() {
        std::fs::create_dir(&ws).expect("mkdir ws");
    }
    let policy = Policy::parse(&policy_text(mode), "cordon.toml", dir).expect("policy");
    let mut p = prepare(&policy, &Machine::probe(), Backend::Bwrap)
        .unwrap_or_else(|e| panic!("bwrap must be usable here: {e}"));
    p.reuse_sandbox();
    p
}

/// Runs `line` with its stdout (and stderr) captured: the run and what it printed.
fn run_io(sandbox: &Prepared, dir: &Path, c: Command, mut io: Io) -> (Ran, String) {
    let _ = dir;
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).expect("pipe");
    let w: Arc<OwnedFd> = Arc::new(w);
    io.stdio = ChildStdio {
        fds: [None, Some(w.clone()), Some(w.clone())],
        ..Default::default()
    };
    drop(w);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::fs::File::from(r).read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let ran = sandbox.run(c, io).expect("the run");
    // End-of-file once the run is over: nothing of it holds its stdout any more (generous for a
    // loaded machine; a process the run left would hold it for good).
    let out = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("something of the finished run still holds its stdout");
    (ran, out)
}

fn run(sandbox: &Prepared, dir: &Path, line: &str) -> (Ran, String) {
    run_io(sandbox, dir, command(dir, line), Io::default())
}

fn exit_code(ran: &Ran) -> i32 {
    match &ran.exit {
        Ok(o) => o.exit_code(),
        Err(e) => panic!("the command did not run: {e}"),
    }
}

#[test]
fn what_a_run_leaves_running_is_killed_when_it_ends_and_the_next_run_cannot_see_it() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let marker = format!("987{}", std::process::id());
    // In the background, and as a daemon that left the session and the process group.
    let line = format!(
        "sleep {marker}1 & setsid sh -c 'sleep {marker}2' </dev/null >/dev/null 2>&1 & echo hi"
    );
    let (ran, out) = run(&sandbox, dir.path(), &line);
    assert_eq!(ran.path, RunPath::Reused, "{out}");
    assert_eq!(exit_code(&ran), 0, "{out}");
    assert_eq!(out, "hi\n");
    // The zygote answers only once none of the run's processes is left, zombies included: no
    // waiting here.
    assert_eq!(
        pids_with(&marker),
        Vec::<i32>::new(),
        "processes of the finished run"
    );
    // The second run, in the same sandbox, sees no process but its own (and the sandbox's init
    // and zygote): none of the first run's, and nothing to signal.
    let (ran, out) = run(
        &sandbox,
        dir.path(),
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done",
    );
    assert_eq!(ran.path, RunPath::Reused, "{out}");
    assert!(
        !out.contains(&marker),
        "the second run sees the first's: {out}"
    );
    assert!(!out.contains("sleep"), "{out}");
}

#[test]
fn each_run_finds_tmp_empty_and_its_own_tmpdir() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    // What a fresh sandbox's /tmp holds: the places bwrap mounts on (this test's directory
    // lies in /tmp) and, as root, the sandbox's own device nodes, as on a one-shot run.
    let (_, fresh) = run(&sandbox, dir.path(), "ls -A /tmp");
    let (ran, out) = run(
        &sandbox,
        dir.path(),
        "echo $TMPDIR; mkdir -p /tmp/d/e && echo x > /tmp/d/e/f && echo y > \"$TMPDIR/g\" && chmod 000 /tmp/d && ls -A /tmp",
    );
    assert_eq!(ran.path, RunPath::Reused);
    assert_eq!(exit_code(&ran), 0, "{out}");
    assert!(out.starts_with("/tmp\n"), "{out}");
    assert!(out.contains("d\n") && out.contains("g\n"), "{out}");
    for _ in 0..3 {
        let (ran, out) = run(&sandbox, dir.path(), "ls -A /tmp");
        assert_eq!(ran.path, RunPath::Reused);
        assert_eq!(exit_code(&ran), 0, "{out}");
        assert_eq!(out, fresh, "left in /tmp by an earlier run");
    }
}

#[test]
fn each_run_is_confined_as_a_one_shot_run_is() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir outside");
    for _ in 0..2 {
        let line = format!(
            "grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status; ls /proc/self/fd | tr '\\n' ' '; echo; \
             touch ws-file && echo wrote-ws; touch {0}/x 2>/dev/null && echo wrote-outside; \
             touch /etc/cordon-zygote-test 2>/dev/null && echo wrote-etc; \
             echo \"session $(cut -d' ' -f6 /proc/$$/stat) $$\"",
            outside.display()
        );
        let (ran, out) = run(&sandbox, dir.path(), &line);
        assert_eq!(ran.path, RunPath::Reused, "{out}");
        assert_eq!(exit_code(&ran), 0, "{out}");
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        assert!(out.contains("Seccomp:\t2"), "{out}");
        assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
        // Only stdio (and ls's own directory) reach the command: none of the zygote's.
        assert!(out.contains("\n0 1 2 3 \n"), "{out}");
        assert!(out.contains("wrote-ws"), "{out}");
        assert!(!out.contains("wrote-outside"), "{out}");
        assert!(!out.contains("wrote-etc"), "{out}");
        assert!(!outside.join("x").exists());
        // A session of its own (as bwrap's --new-session gives a one-shot run).
        let session = out
            .lines()
            .find_map(|l| l.strip_prefix("session "))
            .expect("the session line");
        let (sid, pid) = session.split_once(' ').expect("two numbers");
        assert_eq!(sid, pid, "{out}");
    }
}

#[test]
fn a_timeout_or_a_cancel_kills_the_run_and_the_sandbox_serves_the_next() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let marker = format!("876{}", std::process::id());
    let mut c = command(
        dir.path(),
        &format!("sleep {marker} & sleep {marker}; wait"),
    );
    c.timeout = Some(Duration::from_millis(500));
    let (ran, _) = run_io(&sandbox, dir.path(), c, Io::default());
    assert_eq!(ran.path, RunPath::Reused);
    assert!(matches!(ran.exit, Ok(Outcome::TimedOut)), "{:?}", ran.exit);
    assert_eq!(pids_with(&marker), Vec::<i32>::new());

    let cancel = Cancel::new().expect("cancel");
    let c2 = cancel.clone();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        c2.cancel();
    });
    let io = Io {
        cancel: Some(cancel.fd()),
        ..Io::default()
    };
    let (ran, _) = run_io(
        &sandbox,
        dir.path(),
        command(
            dir.path(),
            &format!("sleep {marker} & sleep {marker}; wait"),
        ),
        io,
    );
    killer.join().expect("killer");
    assert_eq!(ran.path, RunPath::Reused);
    assert!(matches!(ran.exit, Ok(Outcome::Cancelled)), "{:?}", ran.exit);
    assert_eq!(pids_with(&marker), Vec::<i32>::new());

    let (ran, out) = run(&sandbox, dir.path(), "echo again");
    assert_eq!(ran.path, RunPath::Reused);
    assert_eq!(out, "again\n");
}

/// The zygote's pid on the host: the process running the inner stage as `… zygote SOCK`.
fn zygote_pids() -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args.len() >= 2 && args[0].starts_with(b"/proc/self/fd/") && args[1] == b"zygote" {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_zygote_that_dies_refuses_that_call_and_the_next_call_starts_another() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = Arc::new(reusing(dir.path(), "rw"));
    let before = zygote_pids();
    let (ran, _) = run(&sandbox, dir.path(), "true");
    assert_eq!(ran.path, RunPath::Reused);
    let mine: Vec<i32> = zygote_pids()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(mine.len(), 1, "one zygote: {mine:?}");
    let marker = format!("765{}", std::process::id());
    let s = sandbox.clone();
    let d = dir.path().to_path_buf();
    let line = format!("echo started; sleep {marker}");
    let during = std::thread::spawn(move || run(&s, &d, &line));
    // Killed while the run is on (it has started: its sleep is there).
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&marker).is_empty() {
        assert!(Instant::now() < until, "the run did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(mine[0]).expect("pid"),
        rustix::process::Signal::KILL,
    )
    .expect("SIGKILL the zygote");
    let (ran, out) = during.join().expect("the run's thread");
    let e = ran.exit.expect_err("a call whose zygote died is refused");
    assert_eq!(e.kind().exit_code(), 125, "{e}");
    assert!(e.to_string().contains("the call is refused"), "{e}");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    assert_eq!(ran.path, RunPath::Reused);
    assert!(out.contains("started"), "{out}");
    // The sandbox went with its zygote: nothing of the run is left.
    let until = Instant::now() + Duration::from_secs(30);
    while !pids_with(&marker).is_empty() {
        assert!(Instant::now() < until, "the run outlived its sandbox");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ran, out) = run(&sandbox, dir.path(), "echo next");
    assert_eq!(ran.path, RunPath::Reused);
    assert_eq!(out, "next\n");
    let now: Vec<i32> = zygote_pids()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0], mine[0], "a new zygote");
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("fds").count()
}

#[test]
fn runs_leave_no_zombie_and_no_descriptor_and_dropping_ends_the_sandbox() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let (ran, _) = run(&sandbox, dir.path(), "true");
    assert_eq!(ran.path, RunPath::Reused);
    let fds = open_fds();
    let kids = children();
    // The zygote's pid 1 (a clone of its keeper thread) is our one child.
    assert_eq!(kids.len(), 1, "{kids:?}");
    for i in 0..30 {
        let (ran, out) = run(&sandbox, dir.path(), &format!("echo {i} & wait"));
        assert_eq!(ran.path, RunPath::Reused);
        assert_eq!(out, format!("{i}\n"));
    }
    assert_eq!(open_fds(), fds, "descriptors leaked by the runs");
    assert_eq!(children(), kids, "children after the runs");
    // The sandbox's /tmp on the host: the private directory this process holds locked (its
    // descriptor's link names it), the only one while no run is on.
    let held: Vec<std::path::PathBuf> = std::fs::read_dir("/proc/self/fd")
        .expect("fds")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("cordon-run-"))
        })
        .collect();
    assert_eq!(held.len(), 1, "the sandbox's /tmp: {held:?}");
    assert!(held[0].is_dir());
    drop(sandbox);
    // Ended and reaped by the drop: nothing of it is our child any more.
    assert_eq!(children(), vec![], "children after the drop");
    assert!(open_fds() < fds, "the sandbox's descriptors are closed");
    assert!(!held[0].exists(), "the sandbox's /tmp directory is removed");
}

#[test]
fn two_prepared_policies_never_share_a_sandbox() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let rw = reusing(dir.path(), "rw");
    let ro = reusing(dir.path(), "ro");
    for _ in 0..2 {
        let (ran, out) = run(&ro, dir.path(), "touch f 2>/dev/null && echo wrote");
        assert_eq!(ran.path, RunPath::Reused);
        assert!(!out.contains("wrote"), "{out}");
        let (ran, out) = run(&rw, dir.path(), "touch f && echo wrote");
        assert_eq!(ran.path, RunPath::Reused);
        assert!(out.contains("wrote"), "{out}");
    }
}

/// Set in the process [`killed_front_end`] starts.
const KILLED_FRONT_END: &str = "CORDON_TEST_ZYGOTE_FRONT_END";

/// Not a test of its own: a front end that keeps a sandbox, runs one command in it, says
/// `ready`, and waits to be SIGKILLed (only with [`KILLED_FRONT_END`] set).
#[test]
fn killed_front_end() {
    let Some(marker) = std::env::var(KILLED_FRONT_END).ok() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let (ran, _) = run(&sandbox, dir.path(), "true");
    assert_eq!(ran.path, RunPath::Reused);
    println!("ready");
    // The second run sleeps until the process is killed.
    let _ = run(&sandbox, dir.path(), &format!("sleep {marker}"));
    panic!("the front end was meant to be killed");
}

#[test]
fn a_sigkilled_front_end_takes_its_sandbox_down() {
    use std::io::BufRead;
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let me = std::env::current_exe().expect("test binary");
    let marker = format!("654{}", std::process::id());
    let before = zygote_pids();
    let mut child = std::process::Command::new(&me)
        .args([
            "--exact",
            "killed_front_end",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(KILLED_FRONT_END, &marker)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the front end");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    while !line.ends_with("ready\n") {
        line.clear();
        let n = stdout.read_line(&mut line).expect("the front end's stdout");
        assert!(n > 0, "the front end ended before it was ready");
    }
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&marker).is_empty() {
        assert!(Instant::now() < until, "the front end's run did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let zygotes: Vec<i32> = zygote_pids()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert!(!zygotes.is_empty(), "the front end's zygote runs");
    child.kill().expect("SIGKILL the front end");
    child.wait().expect("reap it");
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let left: Vec<i32> = pids_with(&marker)
            .into_iter()
            .chain(zygote_pids().into_iter().filter(|p| zygotes.contains(p)))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "the killed front end's sandbox still runs: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // This process is a subreaper once a one-shot run happened in it (another test): the
    // killed front end's pid 1, dead of its parent-death signal, is then re-parented here.
    // Reaped, so that the tests that count this process's children see only their own.
    // (No sandbox of this process is alive in this test: every child by that name is it.)
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let adopted: Vec<(i32, char)> = children()
            .into_iter()
            .filter(|(_, _, name)| name == "cordon-zygote")
            .map(|(pid, state, _)| (pid, state))
            .collect();
        if adopted.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "the killed front end's pid 1 does not end: {adopted:?}"
        );
        for (pid, state) in adopted {
            if state == 'Z' {
                // SAFETY: a null status pointer is allowed; `pid` is an exited child of ours.
                unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL) };
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runs_cancelled_or_timed_out_at_random_points_leave_nothing_and_the_sandbox_serves_on() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = reusing(dir.path(), "rw");
    let marker = format!("543{}", std::process::id());
    let line = format!("sleep {marker} & sleep {marker}; wait");
    let mut seed = u64::from(std::process::id());
    let mut kids = None;
    for i in 0..40 {
        let ran = match i % 3 {
            0 => {
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
                let (ran, _) = run_io(&sandbox, dir.path(), command(dir.path(), &line), io);
                killer.join().expect("killer");
                ran
            }
            1 => {
                let mut c = command(dir.path(), &line);
                c.timeout = Some(Duration::from_millis(lcg(&mut seed) % 40 + 1));
                run_io(&sandbox, dir.path(), c, Io::default()).0
            }
            _ => run(&sandbox, dir.path(), "true").0,
        };
        assert_eq!(ran.path, RunPath::Reused, "run {i}");
        ran.exit.expect("the run, killed or not, is answered");
        assert_eq!(
            pids_with(&marker),
            Vec::<i32>::new(),
            "run {i} left processes"
        );
        // One child, the sandbox's pid 1, the same all along: no zombie, no second sandbox.
        let now = children();
        assert_eq!(now.len(), 1, "run {i}: {now:?}");
        assert_eq!(kids.get_or_insert_with(|| now.clone()), &now, "run {i}");
    }
}

#[test]
fn a_run_that_finds_the_sandbox_busy_is_built_one_shot_and_says_so() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let sandbox = Arc::new(reusing(dir.path(), "rw"));
    let marker = format!("432{}", std::process::id());
    let s = sandbox.clone();
    let d = dir.path().to_path_buf();
    let line = format!("sleep 2; echo {marker}");
    let long = std::thread::spawn(move || run(&s, &d, &line));
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&format!("sleep 2; echo {marker}")).is_empty() {
        assert!(Instant::now() < until, "the first run did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ran, out) = run(&sandbox, dir.path(), "echo meanwhile");
    assert_eq!(
        ran.path,
        RunPath::OneShotInstead("the session's sandbox is busy with another run".into())
    );
    assert_eq!(exit_code(&ran), 0, "{out}");
    assert_eq!(out, "meanwhile\n");
    let (ran, out) = long.join().expect("the first run");
    assert_eq!(ran.path, RunPath::Reused);
    assert_eq!(out, format!("{marker}\n"));
}
