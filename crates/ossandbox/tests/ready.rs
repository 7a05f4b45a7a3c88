//! How the bwrap backend tells bwrap's own failure from the command's status, and what cordon's
//! pid 1 around bwrap no longer does for it.
//!
//! The inner stage writes one byte on a pipe of cordon's right before the command's exec
//! (`bwrap::with_ready`); bwrap's `--json-status-fd` is not used (its report reads
//! `/proc/CHILD/ns/*`, for which cordon's pid 1 had to take a mount namespace and mount a fresh
//! /proc on every run). So: a command that exits 1 (bwrap's own failure code) keeps its status;
//! bwrap failing to build the view is a setup error (125), the command never ran; and, on the
//! machine's own /proc (where pid 3, the pid bwrap's child has in pid 1's namespace, is a kernel
//! thread: bwrap opens `/proc/3/ns` whatever its options), pid 1 mounts no /proc — as an
//! unprivileged user it shares cordon's mount namespace, as root it has one only for the
//! sandbox's /dev. Elsewhere (a container's /proc) pid 1 mounts one; cli
//! `nested_sandbox.rs` runs bwrap inside Codex's and a hand-made outer sandbox.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cordon_ossandbox::{prepare, Command, Io, Machine, Outcome};
use cordon_policy::{Backend, Policy};

fn sandbox(dir: &Path, extra: &str) -> cordon_ossandbox::Prepared {
    let policy = Policy::parse(
        &format!("version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n{extra}"),
        "cordon.toml",
        dir,
    )
    .expect("policy");
    prepare(&policy, &Machine::probe(), Backend::Bwrap)
        .unwrap_or_else(|e| panic!("bwrap must be usable here: {e}"))
}

fn sh(ws: &Path, script: &str) -> Command {
    Command {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: ws.to_path_buf(),
        timeout: Some(Duration::from_secs(120)),
    }
}

/// This process's children (all threads'), from /proc.
fn children() -> Vec<u32> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The mounts on /proc in a mount table.
fn proc_mounts(mountinfo: &str) -> usize {
    mountinfo
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some("/proc"))
        .count()
}

/// The two tests run one at a time: `cordons_pid_1_mounts_no_proc` finds cordon's pid 1 as
/// the child of this process whose child is bwrap, and the other test's runs are such children
/// too (one that had already exited was taken for it in CI: "pid 1's mount ns: NotFound").
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_commands_status_is_told_from_bwraps_failure() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir ws");
    let s = sandbox(dir.path(), "");
    // bwrap exits 1 when it fails: a command's own 1 must stay the command's.
    for code in [0, 1, 7, 125] {
        let ran = s
            .run(sh(&ws, &format!("exit {code}")), Io::default())
            .expect("run");
        assert_eq!(
            ran.exit.as_ref().map_err(|e| e.to_string()),
            Ok(&Outcome::Exited(code)),
            "exit {code}"
        );
    }
    // A view bwrap cannot build (too few descriptors for its own setup): cordon's failure,
    // and the command never ran.
    let s = sandbox(dir.path(), "[sandbox.limits]\nopen_files = 4\n");
    let marker = ws.join("ran");
    let ran = s
        .run(
            sh(&ws, &format!("touch {}", marker.display())),
            Io::default(),
        )
        .expect("run");
    let e = ran.exit.expect_err("bwrap cannot build this sandbox");
    assert!(e.to_string().contains("could not build the sandbox"), "{e}");
    assert_eq!(e.exit_code(), 125, "{e}");
    assert!(!marker.exists(), "the command never ran");
}

/// Whether pid 3 of this /proc is a kernel thread (flag PF_KTHREAD), as in the machine's own.
fn pid_3_is_a_kernel_thread() -> bool {
    std::fs::read_to_string("/proc/3/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            rest.split_whitespace().nth(6)?.parse::<u64>().ok()
        })
        .is_some_and(|f| f & 0x0020_0000 != 0)
}

#[test]
fn cordons_pid_1_mounts_no_proc() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        pid_3_is_a_kernel_thread(),
        "this test needs the machine's own /proc (pid 3 a kernel thread); run it outside a container"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir ws");
    let s = sandbox(dir.path(), "");
    let go: PathBuf = ws.join("go");
    let started = ws.join("started");
    let script =
        "touch started; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done";
    let (pid1_ns, pid1_mounts) = std::thread::scope(|scope| {
        let run = scope.spawn(|| s.run(sh(&ws, script), Io::default()));
        let until = Instant::now() + Duration::from_secs(120);
        while !started.exists() {
            assert!(Instant::now() < until, "the command never started");
            assert!(
                !run.is_finished(),
                "the run ended before the command started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // cordon's pid 1: the child of this process whose child is bwrap.
        let pid1 = children()
            .into_iter()
            .find(|&p| {
                std::fs::read_to_string(format!("/proc/{p}/task/{p}/children"))
                    .unwrap_or_default()
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok())
                    .any(|c| comm(c) == "bwrap")
            })
            .expect("cordon's pid 1, bwrap's parent, is a child of this process");
        let ns = std::fs::read_link(format!("/proc/{pid1}/ns/mnt"));
        let mounts = std::fs::read_to_string(format!("/proc/{pid1}/mountinfo"));
        // The command is let go before any assertion, so that a failure does not wait out
        // its two minutes.
        std::fs::write(&go, "").expect("go");
        let ns = ns.expect("pid 1's mount ns");
        let mounts = mounts.expect("pid 1's mounts");
        let ran = run.join().expect("no panic").expect("run");
        assert_eq!(
            ran.exit.as_ref().map_err(|e| e.to_string()),
            Ok(&Outcome::Exited(0))
        );
        (ns, mounts)
    });
    let own_mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert_eq!(
        proc_mounts(&pid1_mounts),
        proc_mounts(&own_mounts),
        "pid 1 mounted no /proc of its own:\n{pid1_mounts}"
    );
    let own_ns = std::fs::read_link("/proc/self/ns/mnt").expect("own mount ns");
    if rustix::process::geteuid().is_root() {
        // Its own, for the sandbox's /dev (a tmpfs and a devpts on it; tests/device_nodes.rs),
        // and nothing else.
        assert_ne!(pid1_ns, own_ns);
        let extra: Vec<&str> = pid1_mounts
            .lines()
            .filter(|l| !own_mounts.contains(l.split(' ').nth(4).unwrap_or("")))
            .collect();
        let is = |l: &str, at: &str, fs: &str| {
            l.split(' ').nth(4).is_some_and(|p| p.ends_with(at)) && l.contains(fs)
        };
        assert!(
            extra.len() == 2
                && is(extra[0], "/.cordon-dev", " - tmpfs ")
                && is(extra[1], "/.cordon-dev/pts", " - devpts "),
            "{extra:?}"
        );
    } else {
        assert_eq!(pid1_ns, own_ns, "no mount namespace of pid 1's own");
    }
}
