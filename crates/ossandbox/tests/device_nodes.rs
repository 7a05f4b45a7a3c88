//! The bwrap backend's device nodes. As root the sandbox gets nodes of its own (so that root's
//! chmod/chown inside cannot reach the host's): cordon's pid 1 makes them on a tmpfs in its own
//! mount namespace, not on the disk, and the command still sees working nodes with mode 0666
//! and the caller's umask. An unprivileged user keeps bwrap's binds of the host's nodes.
//! (That the host's nodes keep their metadata is pinned in tests/tests/roots_escape.rs.)
//! As root the whole /dev is that tmpfs, bound once (no bwrap `--dev`, no bind per node): it
//! has what bwrap's `--dev` has — the links, /dev/shm, a devpts of its own where a pty opens.

#![cfg(target_os = "linux")]

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use cordon_ossandbox::{prepare, Command, Io, Machine, Outcome};
use cordon_policy::{Backend, Policy};

/// What the command reports about its /dev, one line per node: `name mode major:minor dev
/// ino fstype`, then its umask.
const REPORT: &str = r#"for n in null zero full random urandom tty; do
  printf '%s %s %s %s %s\n' "$n" "$(stat -c '%a %t:%T %d %i' /dev/$n)" "$(stat -f -c %T /dev/$n)"
done > report
head -c 4 /dev/zero | od -An -tx1 | tr -d ' \n' >> report; echo >> report
umask >> report
echo "$(stat -f -c %T /dev/pts) $(readlink /dev/fd /dev/stdin /dev/stdout /dev/stderr /dev/core /dev/ptmx | tr '\n' ' ')$([ -d /dev/shm ] && echo shm)" >> report
python3 -c 'import os; m, s = os.openpty(); print(os.ttyname(s))' >> report
{ touch /tmp/.cordon-dev/x 2>/dev/null && echo writable || echo covered; } >> report
n=0; while read -r _ _ _ _ at _; do case $at in /dev|/dev/*) n=$((n+1));; esac; done < /proc/self/mountinfo; echo $n >> report"#;

/// The nodes and their devices (`crate::bwrap::DEVICE_NODES`).
const NODES: &[(&str, u32, u32)] = &[
    ("null", 1, 3),
    ("zero", 1, 5),
    ("full", 1, 7),
    ("random", 1, 8),
    ("urandom", 1, 9),
    ("tty", 5, 0),
];

#[test]
fn the_sandboxs_device_nodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("mkdir ws");
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "cordon.toml",
        dir.path(),
    )
    .expect("policy");
    let sandbox = prepare(&policy, &Machine::probe(), Backend::Bwrap)
        .unwrap_or_else(|e| panic!("bwrap must be usable here: {e}"));
    // SAFETY: umask takes and returns a mode; this test's threads create no files meanwhile.
    let umask = unsafe { libc::umask(0o027) };
    let ran = sandbox.run(
        Command {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), REPORT.into()],
            cwd: ws.clone(),
            timeout: Some(Duration::from_secs(120)),
        },
        Io::default(),
    );
    // SAFETY: as above.
    unsafe { libc::umask(umask) };
    let ran = ran.expect("run");
    let report = std::fs::read_to_string(ws.join("report")).unwrap_or_default();
    assert_eq!(
        ran.exit.as_ref().map_err(|e| e.to_string()),
        Ok(&Outcome::Exited(0)),
        "{report}"
    );
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 12, "{report}");
    assert_eq!(
        lines[10], "covered",
        "the run's directory, /tmp inside, does not show the sandbox's /dev writable\n{report}"
    );
    assert_eq!(
        lines[8], "devpts /proc/self/fd /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 /proc/kcore pts/ptmx shm",
        "/dev as bwrap's --dev makes it\n{report}"
    );
    assert_eq!(
        lines[9], "/dev/pts/0",
        "a pty of the sandbox's own devpts\n{report}"
    );
    assert_eq!(lines[6], "00000000", "/dev/zero reads zeros\n{report}");
    assert_eq!(
        lines[7], "0027",
        "the command keeps the caller's umask\n{report}"
    );
    let root = rustix::process::geteuid().is_root();
    let disk = std::fs::metadata(std::env::temp_dir())
        .expect("TMPDIR")
        .dev();
    for (line, (name, major, minor)) in lines.iter().zip(NODES) {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 6, "{line}");
        assert_eq!(f[0], *name);
        assert_eq!(f[1], "666", "{line}");
        assert_eq!(f[2], format!("{major:x}:{minor:x}"), "{line}");
        let host = std::fs::metadata(format!("/dev/{name}")).expect("host node");
        let same_as_host = f[3] == host.dev().to_string() && f[4] == host.ino().to_string();
        if root {
            assert!(
                !same_as_host,
                "as root the sandbox has its own /dev/{name}: {line}"
            );
            assert_eq!(f[5], "tmpfs", "made on a tmpfs, not on the disk: {line}");
            assert_ne!(
                f[3],
                disk.to_string(),
                "not on TMPDIR's file system: {line}"
            );
        } else {
            assert!(
                same_as_host,
                "an unprivileged user keeps bwrap's bind: {line}"
            );
        }
    }
    // Mounts below /dev: as root, /dev itself and its devpts (one bind of cordon's tmpfs); as
    // an unprivileged user bwrap's --dev: its tmpfs, six node binds, devpts.
    let dev_mounts: usize = lines[11].parse().expect("a count");
    assert_eq!(dev_mounts, if root { 2 } else { 8 }, "{report}");
    // The tmpfs lived in pid 1's mount namespace only: nothing of it is mounted here.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert!(!mounts.contains(".cordon-dev"), "{mounts}");
}
