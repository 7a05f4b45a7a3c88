//! What the sandbox's process tests share: finding the processes a run made in the host's
//! /proc, a `/bin/sh -c` command, and a small pseudo-random sequence.
#![allow(dead_code)] // each test file uses a different subset

use std::path::Path;

use cordon_ossandbox::Command;

/// Host pids, other than this test process, whose command line contains `marker` (any
/// state, zombies included).
pub fn pids_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == std::process::id() as i32 {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// This process's children (every thread's): pid, state letter, name.
pub fn children() -> Vec<(i32, char, String)> {
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

/// `/bin/sh -c LINE` in `DIR/ws`, with no timeout.
pub fn command(dir: &Path, line: &str) -> Command {
    Command {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), line.into()],
        cwd: dir.join("ws"),
        timeout: None,
    }
}

/// A small pseudo-random sequence (no dependency): the points at which runs are cancelled.
pub fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}
