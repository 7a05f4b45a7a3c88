//! End-to-end tests of the whole of cordon.
//!
//! The package holds two things:
//!
//! * `cordon-attack` (`src/bin/cordon-attack.rs`), one binary with one subcommand per attack.
//!   Run under `cordon exec`, each attack prints one line and exits: `BLOCKED: …` (exit 0)
//!   when the kernel refused it, `ESCAPED: …` (exit 1) when it worked, `ERROR: …` (exit 2)
//!   when the attack could not be set up. `legit-*` subcommands do ordinary work that must
//!   keep working inside the sandbox (`OK: …`, exit 0). `cordon-attack list` names them all.
//! * `cordon-netrun` (`src/bin/cordon-netrun/main.rs`) runs one command under a
//!   `network = "proxy"` policy through cordon's OS sandbox API and stands in for the proxy:
//!   it receives the listener made in the command's network namespace and answers every
//!   connection with one line (`tests/net_escape.rs`).
//! * `tests/escape.rs`, the escape suite: every attack runs under `cordon exec` with the
//!   Landlock backend and must be blocked, once as root and once as an unprivileged user;
//!   where it makes sense the same attack also runs unconfined (a control) and must escape,
//!   which proves each check can fail. It also checks `cordon exec`'s exit codes, timeout
//!   clean-up and fail-closed start-up.
//!
//! The library holds what the test files share.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Mutex, OnceLock};

/// A child's status and output, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The unprivileged test user's `(uid, gid)`: `cordon-test`, a system user without a home or a
/// login shell, created on first use when missing (that needs root; CI runs as root). Test
/// processes running in parallel may race to create it: the loser finds it made.
pub fn test_user() -> (u32, u32) {
    use std::process::Command;
    static IDS: OnceLock<(u32, u32)> = OnceLock::new();
    *IDS.get_or_init(|| {
        let id = |flag: &str| -> Option<u32> {
            let o = Command::new("id")
                .args([flag, "cordon-test"])
                .output()
                .ok()?;
            if !o.status.success() {
                return None;
            }
            String::from_utf8(o.stdout).ok()?.trim().parse().ok()
        };
        if id("-u").is_none() {
            let st = Command::new("useradd")
                .args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    "cordon-test",
                ])
                .status()
                .expect("run useradd (package passwd)");
            assert!(
                st.success() || id("-u").is_some(),
                "useradd cordon-test failed: {st}"
            );
        }
        (
            id("-u").expect("user cordon-test"),
            id("-g").expect("group cordon-test"),
        )
    })
}

/// What a kernel without usable namespaces answers: `clone` with CLONE_NEWPID fails (EPERM),
/// and clone3 (whose flags a filter cannot read) is not there (ENOSYS, so that libc falls back
/// to `clone` for threads, as on such a kernel: EPERM would fail every new thread). Two
/// filters, since one seccompiler filter has one action for every match.
#[cfg(target_os = "linux")]
pub fn no_namespaces_filters() -> Vec<seccompiler::BpfProgram> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    let newpid = libc::CLONE_NEWPID as u64;
    let arch = || std::env::consts::ARCH.try_into().unwrap();
    let clone = SeccompFilter::new(
        [(
            libc::SYS_clone,
            vec![SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(newpid),
                newpid,
            )
            .unwrap()])
            .unwrap()],
        )]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch(),
    )
    .unwrap();
    let clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch(),
    )
    .unwrap();
    vec![clone.try_into().unwrap(), clone3.try_into().unwrap()]
}

/// Runs `c` as on a kernel without usable namespaces: the child installs
/// [`no_namespaces_filters`] before exec.
#[cfg(target_os = "linux")]
pub fn without_namespaces(c: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let filters = no_namespaces_filters();
    // SAFETY: the closure runs in the forked child before exec. seccompiler::apply_filter
    // makes only the prctl and seccomp system calls on a program built before the fork,
    // without allocating; only its error path allocates (`to_string`), which after fork could
    // hang on a lock another thread held, and a hung child fails the test by its timeout,
    // never passes it.
    unsafe {
        c.pre_exec(move || {
            for filter in &filters {
                seccompiler::apply_filter(filter)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
            }
            Ok(())
        });
    }
}

/// Gives `p` and everything below it (links as themselves, never what they point to) to
/// `uid:gid`: a fixture made by root for the unprivileged test user.
pub fn chown_tree(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
    if std::fs::symlink_metadata(p).unwrap().is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path(), uid, gid);
        }
    }
}

/// Is the test process root?
pub fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The `cordon` binary cargo built next to `beside` (another binary of the workspace).
pub fn cordon_beside(beside: &Path) -> PathBuf {
    let cordon = beside.with_file_name("cordon");
    assert!(
        cordon.is_file(),
        "{} does not exist: build it first with `cargo test --workspace` (or `cargo build \
         -p cordon-cli`), which puts `cordon` next to the test binaries",
        cordon.display()
    );
    cordon
}

/// The `cordon` binary cargo built next to `beside`, copied once per test process into a
/// [`BinDir`] (`/tmp/cordon-e2e-cordon-PID`): the repository may sit where the unprivileged
/// test user cannot enter. Made once, as a copy written while another test thread forks would
/// fail to start with ETXTBSY. Test files that need no other binary beside it take this copy.
pub fn cordon_copied(beside: &Path) -> &'static Path {
    static BIN: OnceLock<(BinDir, PathBuf)> = OnceLock::new();
    &BIN.get_or_init(|| {
        let dir = BinDir::new("cordon");
        let p = dir.copy(&cordon_beside(beside), "cordon", 0o755);
        (dir, p)
    })
    .1
}

/// A fresh tree for `cordon exec` of shell scripts, `/tmp/cordon-e2e-TAG-…/{ws,policies,state,
/// home,tmp}` (world-readable; all but `policies` the unprivileged user's where `ids` is set),
/// with `policies/cordon.toml`: `backend`, the OS sandbox required, the network denied, `ws`
/// writable, every shell command allowed, the audit log in `state`. The directory (removed on
/// drop) and its path.
pub fn shell_workspace(
    tag: &str,
    backend: &str,
    ids: Option<(u32, u32)>,
) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("cordon-e2e-{tag}-"))
        .tempdir_in("/tmp")
        .unwrap();
    let root = tmp.path().to_path_buf();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    for d in ["ws", "policies", "state", "home", "tmp"] {
        fs::create_dir(root.join(d)).unwrap();
    }
    fs::write(
        root.join("policies/cordon.toml"),
        format!(
            "version = 1\n\
             [sandbox]\nbackend = \"{backend}\"\nrequire_os_sandbox = true\nnetwork = \"deny\"\n\
             [sandbox.paths.workspace]\nroot = \"../ws\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"../state/audit.jsonl\"\n"
        ),
    )
    .unwrap();
    if let Some((uid, gid)) = ids {
        for d in ["ws", "state", "home", "tmp"] {
            chown_tree(&root.join(d), uid, gid);
        }
    }
    (tmp, root)
}

/// `cordon exec --approve-all -- /bin/sh -c SCRIPT` under the policy of a
/// [`shell_workspace`] at `root`, in its `ws`, with only PATH, HOME, LANG and TMPDIR set (HOME
/// and TMPDIR the tree's), as the user of `ids`.
pub fn shell_exec(
    cordon: &Path,
    root: &Path,
    ids: Option<(u32, u32)>,
    script: &str,
) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(cordon);
    c.arg("exec")
        .arg("--policy")
        .arg(root.join("policies/cordon.toml"))
        .arg("--approve-all")
        .args(["--", "/bin/sh", "-c", script])
        .current_dir(root.join("ws"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", root.join("home"))
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", root.join("tmp"))
        .stdin(std::process::Stdio::null());
    if let Some((uid, gid)) = ids {
        c.uid(uid).gid(gid);
    }
    c
}

/// Directories of [`BinDir`]s, removed when the test process exits.
static BIN_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_bin_dirs() {
    if let Ok(dirs) = BIN_DIRS.lock() {
        for d in dirs.iter() {
            let _ = fs::remove_dir_all(d);
        }
    }
}

/// A world-readable directory for copies of the test binaries (the repository may sit where
/// the unprivileged test user cannot enter), also a policy's `bin` root:
/// `/tmp/cordon-e2e-TAG-PID`, removed when the test process exits. Directories of earlier
/// runs that were killed (their pid is gone) are removed first.
pub struct BinDir(PathBuf);

impl BinDir {
    pub fn new(tag: &str) -> BinDir {
        let prefix = format!("cordon-e2e-{tag}-");
        if let Ok(rd) = fs::read_dir("/tmp") {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name
                    .strip_prefix(&prefix)
                    .and_then(|p| p.parse::<i32>().ok())
                {
                    // SAFETY: kill with signal 0 only asks whether `pid` exists; it takes
                    // integers and sends nothing.
                    let dead = unsafe { libc::kill(pid, 0) } != 0
                        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
                    if dead {
                        let _ = fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        let dir = PathBuf::from(format!("/tmp/{prefix}{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let mut dirs = BIN_DIRS.lock().unwrap_or_else(|p| p.into_inner());
        if dirs.is_empty() {
            // SAFETY: `remove_bin_dirs` is an `extern "C" fn()` that lives for the whole
            // program, the only thing atexit needs; it only removes this process's own
            // temporary directories. A failed registration only leaves the copies behind.
            unsafe { libc::atexit(remove_bin_dirs) };
        }
        dirs.push(dir.clone());
        BinDir(dir)
    }

    /// Copies `src` in as `name` with `mode`; its path. The copy is written by a `cp` of its
    /// own, never by this process: the tests of a binary run in parallel, and a child another
    /// test thread forked while this process had the copy open for writing keeps that
    /// descriptor until its exec, so under load the copy's first run failed with ETXTBSY
    /// ("Text file busy", credentials_escape). No child of this process can hold `cp`'s.
    pub fn copy(&self, src: &Path, name: &str, mode: u32) -> PathBuf {
        let dst = self.0.join(name);
        let st = std::process::Command::new("cp")
            .arg("--")
            .arg(src)
            .arg(&dst)
            .status()
            .unwrap_or_else(|e| panic!("cp {}: {e}", src.display()));
        assert!(st.success(), "cp {} {}: {st}", src.display(), dst.display());
        fs::set_permissions(&dst, fs::Permissions::from_mode(mode)).unwrap();
        dst
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}
