//! issue 12 class 8 (and 3/5 without namespaces): what a run leaves behind, and what cordon's
//! supervision does when it is signalled or killed — end to end, with the real `cordon`, as
//! root and as an unprivileged user (`cordon-test`), on the Landlock and bwrap backends.
//!
//! * SIGTERM to cordon reaches the whole tree (a `setsid` daemon and a command ignoring
//!   SIGTERM included), which is killed after a short grace period; cordon exits 143.
//! * SIGKILL to cordon leaves nothing running, not even a `setsid` daemon.
//! * Orphans that exit are reaped while the command runs (no zombies pile up).
//! * The Landlock backend caps the number of live tasks (its PID namespace's pid_max).
//! * Where namespaces cannot be made (simulated by a seccomp filter on cordon that refuses
//!   `clone` with CLONE_NEWPID, as a kernel with unprivileged user namespaces disabled or
//!   `user.max_pid_namespaces = 0` does), the Landlock backend falls back to seccomp argument
//!   filters: other processes and SysV IPC stay out of reach, and the test pins what that
//!   fallback cannot hide (/proc shows host processes and sockets), as README and doctor say.
//!
//! Processes are recognised by a unique fractional `sleep` argument (`sleep 300.<marker>`).

// Landlock, seccomp, bubblewrap and PID namespaces are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_beside, is_root, BinDir};
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Root,
    User,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    Landlock,
    /// Landlock with namespaces refused to cordon: the seccomp fallback.
    LandlockNoNamespaces,
    Bwrap,
}

// ---------------------------------------------------------------------------------------------
// binaries, user, fixture

struct Bins {
    dir: PathBuf,
    cordon: PathBuf,
    attack: PathBuf,
}

static BINS: OnceLock<Bins> = OnceLock::new();

/// `cordon` and `cordon-attack`, copied into a world-readable directory (the repository may
/// sit where the unprivileged user cannot enter), which is also the policy's `bin` root.
fn bins() -> &'static Bins {
    BINS.get_or_init(|| {
        let attack_src = PathBuf::from(env!("CARGO_BIN_EXE_cordon-attack"));
        let dir = BinDir::new("leftovers");
        Bins {
            cordon: dir.copy(&cordon_beside(&attack_src), "cordon", 0o755),
            attack: dir.copy(&attack_src, "cordon-attack", 0o755),
            dir: dir.path().to_path_buf(),
        }
    })
}

/// The unprivileged user's (uid, gid): `cordon-test`, created when missing, when the suite
/// runs as root; `None` (the current user) otherwise.
fn user_ids(mode: Mode) -> Option<(u32, u32)> {
    match mode {
        Mode::Root => {
            assert!(
                is_root(),
                "the root mode must run as root (CI runs as root)"
            );
            None
        }
        Mode::User if !is_root() => None,
        Mode::User => Some(cordon_e2e::test_user()),
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    ids: Option<(u32, u32)>,
    backend: Backend,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A marker no other process on the machine carries.
fn marker() -> String {
    format!(
        "{}{:04}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

impl Fixture {
    fn new(mode: Mode, backend: Backend) -> Fixture {
        let ids = user_ids(mode);
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-left-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        for d in ["ws", "tmp", "state", "policies"] {
            fs::create_dir(root.join(d)).unwrap();
            if let Some((uid, gid)) = ids.filter(|_| d != "policies") {
                std::os::unix::fs::lchown(root.join(d), Some(uid), Some(gid)).unwrap();
            }
        }
        let name = match backend {
            Backend::Bwrap => "bwrap",
            _ => "landlock",
        };
        fs::write(
            root.join("policies/cordon.toml"),
            format!(
                "version = 1\n[sandbox]\nbackend = \"{name}\"\nrequire_os_sandbox = true\n\
                 network = \"deny\"\n[sandbox.paths.workspace]\nroot = \"../ws\"\nmode = \"rw\"\n\
                 [sandbox.paths.bin]\nroot = \"{}\"\nmode = \"ro\"\n[shell]\ndefault = \"allow\"\n",
                bins().dir.display()
            ),
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            ws: root.join("ws"),
            root,
            ids,
            backend,
        }
    }

    /// `cordon exec -- argv…` in the workspace, as the mode's user; for
    /// `LandlockNoNamespaces`, under a seccomp filter that refuses it namespaces.
    fn cordon(&self, argv: &[OsString]) -> Command {
        let mut c = Command::new(&bins().cordon);
        c.arg("exec")
            .arg("--policy")
            .arg(self.root.join("policies/cordon.toml"))
            // `trap` is code the approval layer cannot check: allowed here, asks otherwise.
            .arg("--approve-all")
            .arg("--")
            .args(argv)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.ws)
            .env("TMPDIR", self.root.join("tmp"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            // The trust store outside the workspace too: under HOME it would be a protected
            // path in the writable root, which the Landlock backend refuses.
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        if self.backend == Backend::LandlockNoNamespaces {
            cordon_e2e::without_namespaces(&mut c);
        }
        c
    }

    fn attack(&self, name: &str, extra: &[OsString]) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![bins().attack.clone().into(), name.into()];
        v.extend(extra.iter().cloned());
        v
    }

    /// A process outside the sandbox, as the mode's user (`sleep 3600`).
    fn victim(&self) -> Victim {
        let mut c = Command::new("/bin/sleep");
        c.arg("3600")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        Victim(c.spawn().unwrap())
    }
}

/// What a container or LSM that allows the namespaces but not mounts answers: `mount` fails
/// (EPERM) in the namespace's init, after the `clone` succeeded.
fn no_mount_filter() -> seccompiler::BpfProgram {
    use seccompiler::{SeccompAction, SeccompFilter};
    let filter = SeccompFilter::new(
        [(libc::SYS_mount, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap();
    filter.try_into().unwrap()
}

struct Victim(Child);

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Spawns with output to files (a survivor holding a pipe must not keep us waiting) and waits,
/// SIGKILLing cordon after `limit`.
fn run_bounded(mut c: Command, dir: &Path, limit: Duration) -> (std::process::ExitStatus, String) {
    let out = dir.join("out.txt");
    c.stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(dir.join("err.txt")).unwrap());
    let mut child = c.spawn().unwrap();
    let status = wait_bounded(&mut child, limit);
    let text = fs::read_to_string(&out).unwrap_or_default()
        + &fs::read_to_string(dir.join("err.txt")).unwrap_or_default();
    (status, text)
}

fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() > end {
            let _ = child.kill();
            return child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pgrep(pattern: &str) -> Vec<i32> {
    let o = Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// A pgrep pattern for the `sleep` processes of a run (not cordon or the shell, whose command
/// lines hold the marker too).
fn sleeps(marker: &str) -> String {
    format!("^(/bin/)?sleep 30[0-9]\\.{marker}$")
}

/// Waits until `n` processes carry `marker` (the run is under way).
fn await_processes(marker: &str, n: usize) {
    let end = Instant::now() + Duration::from_secs(30);
    while pgrep(marker).len() < n {
        assert!(
            Instant::now() < end,
            "the command never started its processes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes still carrying `marker` once killed ones had time to go (bounded), SIGKILLed
/// so that a failing test leaves nothing behind either.
fn survivors(marker: &str) -> Vec<i32> {
    let end = Instant::now() + Duration::from_secs(15);
    let mut left = pgrep(marker);
    while !left.is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
        left = pgrep(marker);
    }
    for p in &left {
        // SAFETY: kill takes integers only; the pids come from pgrep for this test's unique
        // marker, looked up just now (a reused pid would be a process started in the last
        // moments with that marker in its command line).
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    left
}

// ---------------------------------------------------------------------------------------------
// the tests

macro_rules! each_backend {
    ($($f:ident,)*) => {
        mod landlock_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Landlock); } )* }
        mod landlock_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Landlock); } )* }
        mod fallback_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::LandlockNoNamespaces); } )* }
        mod fallback_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::LandlockNoNamespaces); } )* }
        mod bwrap_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Bwrap); } )* }
        mod bwrap_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Bwrap); } )* }
    };
}

each_backend! {
    setsid_daemon_dies_with_the_run,
    sigterm_kills_the_tree_and_exits_143,
    sigint_and_sighup_are_forwarded_too,
    orphans_are_reaped_while_the_command_runs,
}

/// A `setsid` daemon (with its own session and process group) left by a command that exits.
fn setsid_daemon_dies_with_the_run(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let m = marker();
    // Without job control the background job is no group leader, so setsid execs sleep in
    // the same process: `$!` is the daemon, and the command checks it runs before exiting.
    let script = format!(
        "setsid sleep 300.{m} > /dev/null 2>&1 < /dev/null & sleep 0.3; kill -0 $! && echo started"
    );
    let (status, out) = run_bounded(
        fx.cordon(&os(&["/bin/sh", "-c", &script])),
        &fx.root,
        Duration::from_secs(60),
    );
    let left = survivors(&sleeps(&m));
    assert!(
        status.code() == Some(0) && out.starts_with("started"),
        "[{mode:?} {backend:?}] {status}: {out}"
    );
    assert!(
        left.is_empty(),
        "[{mode:?} {backend:?}] a setsid daemon outlived the run: {left:?}"
    );
}

/// A command that ignores SIGTERM and a `setsid` daemon: SIGTERM to cordon ends both, within
/// the grace period, and cordon exits 128 + 15 (never 125).
fn sigterm_kills_the_tree_and_exits_143(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let m = marker();
    let script = format!("trap '' TERM; setsid sleep 300.{m} & sleep 301.{m} & wait");
    let mut c = fx.cordon(&os(&["/bin/sh", "-c", &script]));
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    await_processes(&sleeps(&m), 2);
    // SAFETY: kill takes integers only; `child` is ours and not yet waited for, so its pid
    // cannot have been reused.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
    let left = survivors(&format!("\\.{m}"));
    assert_eq!(
        status.code(),
        Some(143),
        "[{mode:?} {backend:?}] {status}: {err}"
    );
    assert!(
        left.is_empty(),
        "[{mode:?} {backend:?}] processes survived SIGTERM to cordon: {left:?}"
    );
}

/// SIGINT and SIGHUP reach the command (a plain `sleep`) the same way.
fn sigint_and_sighup_are_forwarded_too(mode: Mode, backend: Backend) {
    for sig in [libc::SIGINT, libc::SIGHUP] {
        let fx = Fixture::new(mode, backend);
        let m = marker();
        let mut c = fx.cordon(&os(&["/bin/sleep", &format!("300.{m}")]));
        c.stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        await_processes(&sleeps(&m), 1);
        // SAFETY: kill takes integers only; `child` is ours and not yet waited for, so its pid
        // cannot have been reused.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = wait_bounded(&mut child, Duration::from_secs(60));
        let left = survivors(&format!("\\.{m}"));
        assert_eq!(
            status.code(),
            Some(128 + sig),
            "[{mode:?} {backend:?}] signal {sig}: {status}"
        );
        assert!(
            left.is_empty(),
            "[{mode:?} {backend:?}] survivors: {left:?}"
        );
    }
}

/// Finished orphans do not stay zombies until the end of the run.
fn orphans_are_reaped_while_the_command_runs(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let (status, out) = run_bounded(
        fx.cordon(&fx.attack("zombie-orphans", &os(&["--count", "20"]))),
        &fx.root,
        Duration::from_secs(60),
    );
    assert!(
        status.code() == Some(0) && out.starts_with("OK: "),
        "[{mode:?} {backend:?}] {status}: {out}"
    );
}

/// SIGKILL to cordon: the command and a `setsid` daemon die with it. (Without namespaces only
/// the direct child has a parent-death signal, which README and doctor say: not tested there.)
fn sigkill_of_cordon_leaves_nothing(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let m = marker();
    let script = format!("setsid sleep 300.{m} & sleep 301.{m} & wait");
    let mut c = fx.cordon(&os(&["/bin/sh", "-c", &script]));
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    await_processes(&sleeps(&m), 2);
    // SAFETY: kill takes integers only; `child` is ours and not yet waited for, so its pid
    // cannot have been reused.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let left = survivors(&sleeps(&m));
    assert!(
        left.is_empty(),
        "[{mode:?} {backend:?}] processes survived SIGKILL of cordon: {left:?}"
    );
}

mod sigkill {
    use super::*;
    #[test]
    fn landlock_as_root() {
        sigkill_of_cordon_leaves_nothing(Mode::Root, Backend::Landlock);
    }
    #[test]
    fn landlock_as_user() {
        sigkill_of_cordon_leaves_nothing(Mode::User, Backend::Landlock);
    }
    #[test]
    fn bwrap_as_root() {
        sigkill_of_cordon_leaves_nothing(Mode::Root, Backend::Bwrap);
    }
    #[test]
    fn bwrap_as_user() {
        sigkill_of_cordon_leaves_nothing(Mode::User, Backend::Bwrap);
    }
}

/// The Landlock backend's PID namespace holds at most `TASK_CAP` (4096) tasks: a command that
/// tries to keep 4200 processes alive is refused by fork (each of them dies with it).
fn task_count_is_capped(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Landlock);
    let (status, out) = run_bounded(
        fx.cordon(&fx.attack("task-hopper", &os(&["--count", "4200"]))),
        &fx.root,
        Duration::from_secs(120),
    );
    assert!(
        status.code() == Some(0) && out.starts_with("OK: fork refused"),
        "[{mode:?}] {status}: {out}"
    );
}

mod task_cap {
    #[test]
    fn landlock_as_root() {
        super::task_count_is_capped(super::Mode::Root);
    }
    #[test]
    fn landlock_as_user() {
        super::task_count_is_capped(super::Mode::User);
    }
}

/// Without namespaces, seccomp keeps other processes and the host's SysV IPC out of reach; the
/// same attacks are in the escape suite (with their controls) for the namespaced backends.
fn fallback_blocks_host_processes_and_sysv(mode: Mode) {
    let fx = Fixture::new(mode, Backend::LandlockNoNamespaces);
    let mut victim = fx.victim();
    let vpid = victim.0.id().to_string();
    let ipc = HostIpc::new();
    let mut cases: Vec<(&str, Vec<OsString>)> = [
        "prlimit-victim",
        "setpriority-victim",
        "sched-setaffinity-victim",
        "sched-setscheduler-victim",
        "ioprio-set-victim",
        "oom-score-adj-victim",
    ]
    .into_iter()
    .map(|a| (a, os(&["--victim", &vpid])))
    .collect();
    cases.push(("prlimit-parent", vec![]));
    for a in [
        "sysv-shm-id",
        "sysv-shm-key",
        "sysv-msgq",
        "sysv-msgq-id",
        "sysv-sem",
    ] {
        cases.push((a, ipc.args()));
    }
    for (attack, args) in cases {
        let (status, out) = run_bounded(
            fx.cordon(&fx.attack(attack, &args)),
            &fx.root,
            Duration::from_secs(60),
        );
        assert!(
            status.code() == Some(0) && out.starts_with("BLOCKED: "),
            "[{mode:?}] {attack} without namespaces: {status}: {out}"
        );
    }
    // What the fallback cannot hide (README, doctor): the host's processes and sockets in /proc.
    let (status, out) = run_bounded(
        fx.cordon(&fx.attack("proc-list-host", &os(&["--victim", &vpid]))),
        &fx.root,
        Duration::from_secs(60),
    );
    assert!(
        status.code() == Some(1) && out.starts_with("ESCAPED: "),
        "[{mode:?}] the fallback was expected to show host processes (update README and doctor if \
         it no longer does): {status}: {out}"
    );
    assert!(
        matches!(victim.0.try_wait(), Ok(None)),
        "[{mode:?}] the process outside the sandbox died"
    );
}

mod fallback {
    #[test]
    fn blocks_host_processes_and_sysv_as_root() {
        super::fallback_blocks_host_processes_and_sysv(super::Mode::Root);
    }
    #[test]
    fn blocks_host_processes_and_sysv_as_user() {
        super::fallback_blocks_host_processes_and_sysv(super::Mode::User);
    }
}

/// A SysV segment and queue of the host, open to everyone (0666), removed on drop.
struct HostIpc {
    shm: i32,
    msq: i32,
    sem: i32,
    shm_key: i32,
    msq_key: i32,
    sem_key: i32,
}

impl HostIpc {
    fn new() -> HostIpc {
        let base = ((std::process::id() as i32 & 0xffff) << 12)
            | (COUNTER.fetch_add(1, Ordering::Relaxed) as i32 & 0x7ff);
        let (shm_key, msq_key) = (0x1000_0000 | base, 0x0800_0000 | base);
        // SAFETY: shmget, msgget and semget take integers only; each result is checked before
        // it is kept.
        unsafe {
            let shm = libc::shmget(shm_key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(shm >= 0, "shmget: {}", std::io::Error::last_os_error());
            let msq = libc::msgget(msq_key, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(msq >= 0, "msgget: {}", std::io::Error::last_os_error());
            let sem_key = 0x0400_0000 | base;
            let sem = libc::semget(sem_key, 1, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(sem >= 0, "semget: {}", std::io::Error::last_os_error());
            HostIpc {
                shm,
                msq,
                sem,
                shm_key,
                msq_key,
                sem_key,
            }
        }
    }

    fn args(&self) -> Vec<OsString> {
        [
            ("--shm-id", self.shm),
            ("--shm-key", self.shm_key),
            ("--msq-id", self.msq),
            ("--msq-key", self.msq_key),
            ("--sem-key", self.sem_key),
        ]
        .iter()
        .flat_map(|(k, v)| [OsString::from(k), OsString::from(v.to_string())])
        .collect()
    }
}

impl Drop for HostIpc {
    fn drop(&mut self) {
        // SAFETY: the IPC_RMID calls take the ids `new` created (checked) and a null buffer,
        // which IPC_RMID ignores. Failure leaves an object a later run's IPC_EXCL keys never
        // collide with.
        unsafe {
            libc::shmctl(self.shm, libc::IPC_RMID, std::ptr::null_mut());
            libc::msgctl(self.msq, libc::IPC_RMID, std::ptr::null_mut());
            libc::semctl(self.sem, 0, libc::IPC_RMID);
        }
    }
}

/// `cordon doctor` proves the namespaces with a live probe, and says what the Landlock backend
/// loses where the kernel refuses them.
fn doctor_reports_the_namespaces(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Landlock);
    let doctor = |fallback: bool| -> String {
        let mut c = Command::new(&bins().cordon);
        c.arg("doctor").current_dir(&fx.ws).stdin(Stdio::null());
        if let Some((uid, gid)) = fx.ids {
            c.uid(uid).gid(gid);
        }
        if fallback {
            cordon_e2e::without_namespaces(&mut c);
        }
        let out = c.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = doctor(false);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("namespaces") && l.contains(" ok ")),
        "[{mode:?}] {text}"
    );
    assert!(text.contains("+ own PID, IPC, mount"), "[{mode:?}] {text}");
    assert!(
        text.contains("+ a devpts instance of the command's own on /dev/pts"),
        "[{mode:?}] {text}"
    );
    let text = doctor(true);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("namespaces") && l.contains(" no ")),
        "[{mode:?}] {text}"
    );
    assert!(
        text.contains("falls back to seccomp") && text.contains("hide other processes"),
        "[{mode:?}] {text}"
    );
    // Without them no devpts of the command's own either: the host's is never granted.
    assert!(
        text.contains("let a program open a new pty itself")
            && text.contains("/dev/pts holds every terminal of the machine and is never granted")
            && !text.contains("+ a devpts instance of the command's own"),
        "[{mode:?}] {text}"
    );
}

mod doctor {
    #[test]
    fn reports_the_namespaces_as_root() {
        super::doctor_reports_the_namespaces(super::Mode::Root);
    }
    #[test]
    fn reports_the_namespaces_as_user() {
        super::doctor_reports_the_namespaces(super::Mode::User);
    }
}

/// The private TMPDIR is 0700; killed with cordon, it is removed by the next run.
fn killed_runs_tmpdir_is_swept_by_the_next(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let m = marker();
    // cordon keeps its private TMPDIRs in $TMPDIR/cordon-<uid> (0700, made by the first run).
    let uid = fx.ids.map_or(0, |(uid, _)| uid);
    let tmp = fx.root.join("tmp").join(format!("cordon-{uid}"));
    let script =
        format!("stat -c %a \"$TMPDIR\" > mode.txt; echo x > \"$TMPDIR/left\"; sleep 300.{m}");
    let mut c = fx.cordon(&os(&["/bin/sh", "-c", &script]));
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    await_processes(&sleeps(&m), 1);
    // SAFETY: kill takes integers only; `child` is ours and not yet waited for, so its pid
    // cannot have been reused.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    assert!(survivors(&sleeps(&m)).is_empty());
    assert_eq!(
        fs::read_to_string(fx.ws.join("mode.txt")).unwrap().trim(),
        "700",
        "[{mode:?} {backend:?}] TMPDIR mode"
    );
    let runs = || -> Vec<String> {
        fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        runs().len(),
        1,
        "[{mode:?} {backend:?}] the killed run's TMPDIR: {:?}",
        runs()
    );
    let (status, out) = run_bounded(
        fx.cordon(&os(&["/bin/true"])),
        &fx.root,
        Duration::from_secs(60),
    );
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(
        runs().is_empty(),
        "[{mode:?} {backend:?}] left behind: {:?}",
        runs()
    );
}

/// cordon's private TMPDIRs live in `$TMPDIR/cordon-<uid>`: when another user made that first
/// (to watch or redirect the runs), or it is a link, that place is never used — nothing is made
/// in it or through it — and the run goes on in a fresh directory of its own beside it, with one
/// warning line naming the taken place (refusing would let any local user stop everyone's
/// cordon with one `mkdir`); the fresh directory goes with the run. Setting it up needs root in
/// both modes (a directory of another user's).
fn users_tmp_directory_not_its_own_is_never_used(mode: Mode, backend: Backend) {
    assert!(
        is_root(),
        "this test makes a directory of another user's: run the suite as root (CI does)"
    );
    let fx = Fixture::new(mode, backend);
    let uid = fx.ids.map_or(0, |(uid, _)| uid);
    let other = match fx.ids {
        Some(_) => 0,
        None => cordon_e2e::test_user().0,
    };
    let user_dir = fx.root.join("tmp").join(format!("cordon-{uid}"));
    let elsewhere = fx.root.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    if let Some((uid, gid)) = fx.ids {
        std::os::unix::fs::lchown(&elsewhere, Some(uid), Some(gid)).unwrap();
    }
    for planted in ["another user's", "a link"] {
        let _ = fs::remove_dir(&user_dir).or_else(|_| fs::remove_file(&user_dir));
        if planted == "a link" {
            std::os::unix::fs::symlink(&elsewhere, &user_dir).unwrap();
            if let Some((uid, gid)) = fx.ids {
                std::os::unix::fs::lchown(&user_dir, Some(uid), Some(gid)).unwrap();
            }
        } else {
            fs::create_dir(&user_dir).unwrap();
            fs::set_permissions(&user_dir, fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::lchown(&user_dir, Some(other), Some(other)).unwrap();
        }
        let (status, out) = run_bounded(
            fx.cordon(&os(&["/bin/sh", "-c", "echo ran > ran.txt"])),
            &fx.root,
            Duration::from_secs(60),
        );
        let err = fs::read_to_string(fx.root.join("err.txt")).unwrap();
        let what = format!("[{mode:?} {backend:?} {planted}]");
        assert_eq!(status.code(), Some(0), "{what} {out} {err}");
        assert_eq!(
            fs::read_to_string(fx.ws.join("ran.txt")).unwrap_or_default(),
            "ran\n",
            "{what} the command did not run: {err}"
        );
        let _ = fs::remove_file(fx.ws.join("ran.txt"));
        let line = err
            .lines()
            .find(|l| l.contains(&user_dir.display().to_string()))
            .unwrap_or_else(|| panic!("{what} no line names {}: {err}", user_dir.display()));
        let why = if planted == "a link" {
            "not a directory cordon made"
        } else {
            "another user made it"
        };
        assert!(
            line.contains(why) && line.contains("warning"),
            "{what} {line}"
        );
        assert_eq!(
            fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{what} made something through the link"
        );
        if planted != "a link" {
            assert_eq!(
                fs::read_dir(&user_dir).unwrap().count(),
                0,
                "{what} made something in another user's directory"
            );
        }
        // The fresh directory went with its run.
        let fresh: Vec<_> = fs::read_dir(fx.root.join("tmp"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("cordon-{uid}-")))
            .collect();
        assert!(fresh.is_empty(), "{what} left behind: {fresh:?}");
    }
}

mod tmpdir_not_its_own {
    use super::*;
    #[test]
    fn landlock_as_root() {
        users_tmp_directory_not_its_own_is_never_used(Mode::Root, Backend::Landlock);
    }
    #[test]
    fn landlock_as_user() {
        users_tmp_directory_not_its_own_is_never_used(Mode::User, Backend::Landlock);
    }
    #[test]
    fn bwrap_as_root() {
        users_tmp_directory_not_its_own_is_never_used(Mode::Root, Backend::Bwrap);
    }
    #[test]
    fn bwrap_as_user() {
        users_tmp_directory_not_its_own_is_never_used(Mode::User, Backend::Bwrap);
    }
}

mod tmpdir {
    use super::*;
    #[test]
    fn landlock_as_root() {
        killed_runs_tmpdir_is_swept_by_the_next(Mode::Root, Backend::Landlock);
    }
    #[test]
    fn landlock_as_user() {
        killed_runs_tmpdir_is_swept_by_the_next(Mode::User, Backend::Landlock);
    }
    #[test]
    fn bwrap_as_root() {
        killed_runs_tmpdir_is_swept_by_the_next(Mode::Root, Backend::Bwrap);
    }
    #[test]
    fn bwrap_as_user() {
        killed_runs_tmpdir_is_swept_by_the_next(Mode::User, Backend::Bwrap);
    }
}

/// Namespaces made, but /proc cannot be mounted in them: init reports it before the command
/// starts, and the run falls back to seccomp (the host's processes show in /proc, which proves
/// the fallback ran; prlimit64 on them is still refused).
fn fallback_when_mount_is_refused(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Landlock);
    let mut victim = fx.victim();
    let vpid = victim.0.id().to_string();
    let with_filter = |attack: &str| {
        let mut c = fx.cordon(&fx.attack(attack, &os(&["--victim", &vpid])));
        let filter = no_mount_filter();
        // SAFETY: the closure runs in the forked child before exec. seccompiler::apply_filter
        // makes only the prctl and seccomp system calls on a program built before the fork,
        // without allocating; only its error path allocates (`to_string`), which after fork
        // could hang on a lock another thread held, and a hung child fails the test by its
        // timeout, never passes it.
        unsafe {
            c.pre_exec(move || {
                seccompiler::apply_filter(&filter).map_err(|e| std::io::Error::other(e.to_string()))
            });
        }
        run_bounded(c, &fx.root, Duration::from_secs(60))
    };
    let (status, out) = with_filter("proc-list-host");
    assert!(
        status.code() == Some(1) && out.starts_with("ESCAPED: "),
        "[{mode:?}] expected the fallback (host /proc): {status}: {out}"
    );
    let (status, out) = with_filter("prlimit-victim");
    assert!(
        status.code() == Some(0) && out.starts_with("BLOCKED: "),
        "[{mode:?}] {status}: {out}"
    );
    assert!(matches!(victim.0.try_wait(), Ok(None)));
}

mod fallback_after_clone {
    #[test]
    fn mount_refused_as_root() {
        super::fallback_when_mount_is_refused(super::Mode::Root);
    }
    #[test]
    fn mount_refused_as_user() {
        super::fallback_when_mount_is_refused(super::Mode::User);
    }
}

/// Where nothing in this machine's settings refuses the namespaces (the probe `auto` and
/// `cordon profile` go by says yes) but the kernel refuses them at run time, the Landlock run
/// is refused (125): it never runs without the read-only mount tree and the namespaces that
/// `profile` and `doctor` report. A real refusal: cordon starts in the deepest PID namespace
/// the kernel allows (32 levels), so init's `clone(CLONE_NEWPID)` fails with ENOSPC — no
/// seccomp filter, no_new_privs or user namespace the probe could see.
fn refused_when_the_clone_fails_where_the_probe_said_yes(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Landlock);
    let inner = fx.cordon(&os(&["/usr/bin/touch", "started"]));
    // Nest PID namespaces while the kernel makes another one, then exec the argv.
    let nest = r#"if /usr/bin/unshare -p -f /bin/true 2>/dev/null; then exec /usr/bin/unshare -p -f /bin/sh -c "$0" "$0" "$@"; fi; exec "$@""#;
    let mut c = Command::new("/bin/sh");
    c.args(["-c", nest, nest]);
    if let Some((uid, gid)) = fx.ids {
        c.arg("/usr/bin/setpriv")
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={gid}"))
            .args(["--clear-groups", "--"]);
    }
    c.arg(inner.get_program())
        .args(inner.get_args())
        .current_dir(&fx.ws)
        .env_clear()
        .stdin(Stdio::null());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let (status, out) = run_bounded(c, &fx.root, Duration::from_secs(120));
    assert_eq!(status.code(), Some(125), "[{mode:?}] {out}");
    assert!(
        out.contains("could not make the command's own namespaces"),
        "[{mode:?}] {out}"
    );
    assert!(
        !fx.ws.join("started").exists(),
        "[{mode:?}] the command ran: {out}"
    );
}

mod refused_after_clone {
    #[test]
    fn where_the_probe_said_yes_as_root() {
        super::refused_when_the_clone_fails_where_the_probe_said_yes(super::Mode::Root);
    }
    #[test]
    fn where_the_probe_said_yes_as_user() {
        super::refused_when_the_clone_fails_where_the_probe_said_yes(super::Mode::User);
    }
}
