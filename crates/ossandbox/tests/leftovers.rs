//! A long-lived process runs many commands with one prepared sandbox (the MCP server does):
//! nothing of any run stays behind as a process of its own, running or a zombie, however the
//! run ends — exited, timed out, or cancelled at a random point of its start-up or its run.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Cancel, Command, Io, Machine, Prepared};
use cordon_policy::{Backend, Policy};

/// This process's children (every thread's), with their state letter and name from /proc.
fn children() -> Vec<(i32, char, String)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        let Ok(s) = std::fs::read_to_string(t.path().join("children")) else {
            continue;
        };
        for pid in s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // "pid (comm) S …": the state follows the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                .unwrap_or('?');
            let comm = stat
                .split_once('(')
                .and_then(|(_, r)| r.rsplit_once(')'))
                .map_or(String::new(), |(c, _)| c.to_string());
            out.push((pid, state, comm));
        }
    }
    out
}

fn prepared(backend: Backend) -> (tempfile::TempDir, Prepared) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ws")).expect("mkdir ws");
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "cordon.toml",
        dir.path(),
    )
    .expect("policy");
    let p = prepare(&policy, &Machine::probe(), backend)
        .unwrap_or_else(|e| panic!("{backend:?} must be usable here: {e}"));
    (dir, p)
}

fn command(dir: &std::path::Path, line: &str) -> Command {
    Command {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), line.into()],
        cwd: dir.join("ws"),
        timeout: None,
    }
}

/// A small pseudo-random sequence (no dependency): the points at which runs are cancelled.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
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
        ran.expect("the run").exit.expect("the command started");
    }
    // A zombie is reaped by the run that made it, before it returns; a process still dying of
    // its parent-death signal may take a moment (bounded: a loaded machine is slow). The one
    // exception: the namespace's init (on Landlock a clone of this thread, so of its name; on
    // bwrap, bwrap's) is not waited for once the command's status is in — its teardown is
    // reaped by the next run — so at most the last run's may be there.
    let me = std::fs::read_to_string("/proc/thread-self/comm").expect("comm");
    let init = match backend {
        Backend::Landlock => me.trim(),
        _ => "bwrap",
    };
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let mut left = children();
        if left.len() == 1 && left[0].2 == init {
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
