//! Running a child under a prepared confinement.
//!
//! Everything is built in the parent (Landlock ruleset fd, seccomp BPF, limits). After fork the
//! child only makes raw syscalls: new session, parent-death signal, close-on-exec for every
//! inherited fd beyond stdio, resource limits, capability drop (root), no_new_privs,
//! `landlock_restrict_self`, seccomp, then exec. cordon itself becomes a child subreaper, so
//! when the command exits or times out every descendant, even one that left the process
//! group, is killed and reaped: nothing outlives the run. Orphans are reaped as they exit, and
//! a signal cordon forwards is followed by SIGKILL after [`namespaces::GRACE`].
//!
//! This runner serves bwrap (which brings its own namespaces), unconfined runs, and the
//! Landlock backend where namespaces are refused; the Landlock backend otherwise runs in
//! namespaces of its own ([`namespaces`]).

use std::ffi::OsString;
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
#[cfg(target_os = "linux")]
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::process::Command;
use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;

#[cfg(target_os = "linux")]
use crate::seccomp::Program;

pub use crate::handoff::ProxyHandoff;
use crate::Error;

/// The runner for macOS (the Seatbelt backend's `sandbox-exec`).
#[cfg(target_os = "macos")]
pub mod macos;

/// The Landlock backend's PID, IPC, mount (and user, network) namespaces and their init.
#[cfg(target_os = "linux")]
pub mod namespaces;

/// The Landlock backend's inotify supervisor (a thread of its namespaces' init).
#[cfg(target_os = "linux")]
mod inotify;

/// bwrap as pid 1 of a PID namespace of cordon's own.
#[cfg(target_os = "linux")]
mod pid1;

/// The raw clone into new namespaces that `namespaces` and `pid1` share.
#[cfg(target_os = "linux")]
mod nsclone;

/// One bwrap sandbox for many runs (`Prepared::reuse_sandbox`).
#[cfg(target_os = "linux")]
pub(crate) mod zygote;
/// No bwrap elsewhere: nothing to reuse.
#[cfg(not(target_os = "linux"))]
pub(crate) mod zygote {
    #[derive(Debug)]
    pub(crate) enum Zygote {}
}

/// What the child is confined by, built in the parent.
#[cfg(target_os = "linux")]
#[derive(Debug, Default)]
pub struct Confinement {
    /// Landlock ruleset to enforce, if any.
    pub landlock: Option<OwnedFd>,
    /// seccomp programs to install, in order.
    pub seccomp: Vec<Program>,
    /// Resource limits as (RLIMIT_*, value).
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// Drop capabilities and set no_new_privs (off only for an unconfined run).
    pub confine: bool,
    /// Descriptors the child must inherit (bwrap's `--args`, seccomp and status fds, the
    /// Landlock ruleset and the inner stage's memfd); every other inherited descriptor beyond
    /// stdio is closed at exec.
    pub pass_fds: Vec<OwnedFd>,
    /// The read end of the inner stage's `ready` pipe (`crate::bwrap::with_ready`): no byte
    /// on it means bwrap (or the inner stage) failed before the command's exec, so bwrap's
    /// exit status is not the command's.
    pub setup_status: Option<OwnedFd>,
    /// `sandbox.network = "proxy"` under bwrap: cordon's end of the pair the inner stage
    /// sends the proxy's listener over, and where it goes (see [`crate::proxy`]).
    pub proxy: Option<(OwnedFd, ProxyHandoff)>,
    /// The child keeps its whole tree in a PID namespace of its own that dies with it (bwrap
    /// `--unshare-pid --die-with-parent`): nothing of it can be re-parented to cordon, so the
    /// run waits for its child alone and several such runs may share one process.
    pub own_pid_namespace: bool,
    /// What the command waits for ([`Spec::release`]): without [`Confinement::go`] it is
    /// waited for before the child is spawned; with it, right after (the child builds the
    /// sandbox meanwhile and waits for a byte on `go`'s other end before its command).
    pub release: Option<Release>,
    /// The write end of the pipe the child (bwrap's inner stage, `go FD`) waits on.
    pub go: Option<OwnedFd>,
    /// As root under bwrap: the directory bwrap binds the sandbox's own device nodes from
    /// ([`crate::bwrap::Invocation::devices`]). cordon's pid 1 mounts a tmpfs there in its own
    /// mount namespace and makes them on it; without that pid 1 they are made on disk.
    pub device_nodes: Option<PathBuf>,
}

/// Runs without their own PID namespace reap and kill every child of the process at their end
/// (orphans are re-parented to cordon, which cannot tell whose they were): such a run has the
/// process to itself (write), while runs in their own PID namespace share it (read).
#[cfg(target_os = "linux")]
static SUPERVISION: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// What a run waits for before its command starts ([`crate::Io::release`]): a function
/// called on the thread that runs the command, once the sandbox is being built (the
/// namespaces cloned, bwrap started); `Ok` lets the command start, `Err(why)` ends the run
/// before it did ([`Error::Refused`] with `why`), the sandbox torn down.
pub struct Release(Box<dyn FnOnce() -> Result<(), String> + Send>);

impl Release {
    pub fn new(f: impl FnOnce() -> Result<(), String> + Send + 'static) -> Release {
        Release(Box::new(f))
    }

    /// Waits for the release: `Ok` to start the command.
    pub(crate) fn wait(self) -> Result<(), Error> {
        (self.0)().map_err(Error::Refused)
    }
}

impl std::fmt::Debug for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Release")
    }
}

/// The command to run.
#[derive(Debug)]
pub struct Spec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The complete environment of the child (already scrubbed).
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Option<Duration>,
    /// The child's stdin, stdout and stderr when they are not cordon's own (see
    /// [`crate::stdio`]); the default inherits cordon's.
    pub stdio: ChildStdio,
    /// Cancels the run: once this descriptor (an eventfd or a pipe's read end) is readable,
    /// the whole tree is killed as on a timeout and the run ends [`Outcome::Cancelled`]. For a
    /// long-lived cordon (the MCP server) whose caller gave up on a call.
    pub cancel: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    /// Under `sandbox.network = "proxy"`: where the listener made inside the command's
    /// network namespace goes (required then, refused otherwise).
    pub proxy: Option<ProxyHandoff>,
    /// The command starts only once this returned `Ok` (see [`Release`]).
    pub release: Option<Release>,
}

/// A switch that cancels runs: [`Cancel::fd`] goes into [`Spec::cancel`], and
/// [`Cancel::cancel`] (from any thread) makes it readable, which kills the run's whole tree.
/// Clones share the switch.
#[derive(Debug, Clone)]
pub struct Cancel {
    read: std::sync::Arc<std::os::fd::OwnedFd>,
    #[cfg(not(target_os = "linux"))]
    write: std::sync::Arc<std::os::fd::OwnedFd>,
}

impl Cancel {
    /// A new switch, not yet cancelled: an eventfd (a pipe where there is none).
    pub fn new() -> io::Result<Cancel> {
        use std::os::fd::FromRawFd;
        #[cfg(target_os = "linux")]
        {
            // SAFETY: eventfd returns a new descriptor (checked) that only this value owns.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Cancel {
                // SAFETY: `fd` is a fresh descriptor nobody else owns.
                read: std::sync::Arc::new(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }),
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let mut fds = [0; 2];
            // SAFETY: pipe fills two new descriptors (checked) that only this value owns.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both are fresh descriptors nobody else owns.
            let (read, write) = unsafe {
                (
                    std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                    std::os::fd::OwnedFd::from_raw_fd(fds[1]),
                )
            };
            Ok(Cancel {
                read: std::sync::Arc::new(read),
                write: std::sync::Arc::new(write),
            })
        }
    }

    /// The descriptor a run watches ([`Spec::cancel`]).
    pub fn fd(&self) -> std::sync::Arc<std::os::fd::OwnedFd> {
        self.read.clone()
    }

    /// Cancels every run watching this switch (idempotent).
    pub fn cancel(&self) {
        use std::os::fd::AsRawFd;
        #[cfg(target_os = "linux")]
        let fd = self.read.as_raw_fd();
        #[cfg(not(target_os = "linux"))]
        let fd = self.write.as_raw_fd();
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64; a full counter (EAGAIN) is readable anyway.
        unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        use std::os::fd::AsRawFd;
        let mut p = libc::pollfd {
            fd: self.read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls one live descriptor without waiting.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }
}

/// Descriptors that replace cordon's stdin, stdout and stderr in the child.
#[derive(Debug, Clone, Default)]
pub struct ChildStdio {
    /// For descriptors 0, 1 and 2: what the child gets instead (`None`: cordon's own).
    pub fds: [Option<std::sync::Arc<std::os::fd::OwnedFd>>; 3],
    /// The descriptor (0, 1 or 2, a pty slave) the child makes its controlling terminal
    /// after `setsid`.
    pub controlling_tty: Option<i32>,
    /// Lets cordon take the operator's terminal from the run's relay for a while (to ask the
    /// operator something while the command runs); see [`crate::stdio::TerminalSwitch`].
    #[cfg(target_os = "linux")]
    pub terminal: Option<crate::stdio::TerminalSwitch>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Exited(i32),
    Signaled(i32),
    /// Killed (with every descendant) when the timeout expired.
    TimedOut,
    /// Killed (with every descendant) because [`Spec::cancel`] became readable.
    Cancelled,
}

impl Outcome {
    /// The exit status cordon reports, following coreutils `timeout`/`env`.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Exited(c) => c,
            Outcome::Signaled(s) => 128 + s,
            Outcome::TimedOut => 124,
            Outcome::Cancelled => 128 + libc::SIGKILL,
        }
    }
}

/// The signals a run forwards to the command's process group (and SIGCHLD, which the
/// supervisor reads too), all read from one signalfd by the thread that runs [`run`].
#[cfg(target_os = "linux")]
const FORWARDED: [libc::c_int; 5] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGCHLD,
];

/// The signal mask of the thread that made it, put back on drop ([`block_forwarded_signals`]).
#[cfg(target_os = "linux")]
pub struct SignalMask(libc::sigset_t);

/// Blocks the signals a run forwards ([`run`]) in the calling thread, and so in every thread
/// it starts from now on. A process-directed signal goes to any thread that does not block it:
/// call this before starting threads that live through a run (a proxy's runtime, deciding
/// threads), or a SIGTERM meant for the command could kill cordon itself, unforwarded. The
/// old mask comes back when the guard is dropped.
#[cfg(target_os = "linux")]
pub fn block_forwarded_signals() -> io::Result<SignalMask> {
    // SAFETY: sigset_t is a plain bit array; all-zero is a valid (empty) set. sigemptyset and
    // sigaddset write only into `set` (on this frame) with valid signal numbers;
    // pthread_sigmask reads `set` and writes the previous mask into `old`, a live local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(SignalMask(old))
    }
}

#[cfg(target_os = "linux")]
impl Drop for SignalMask {
    fn drop(&mut self) {
        // SAFETY: `self.0` is the mask pthread_sigmask returned in `block_forwarded_signals`
        // (a valid sigset); a null old-mask pointer is allowed. It fails only for an invalid
        // `how`, which SIG_SETMASK is not.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// Steps the child performs; the index is what it reports on failure.
#[cfg(target_os = "linux")]
const STEPS: [&str; 10] = [
    "setsid",
    "parent-death signal",
    "closing inherited file descriptors",
    "resource limits",
    "dropping capabilities",
    "no_new_privs",
    "landlock_restrict_self",
    "seccomp",
    "signal mask",
    "the working directory",
];

/// The step of [`STEPS`] whose failure is [`cwd_changed`].
#[cfg(target_os = "linux")]
const CWD_STEP: u8 = 9;

/// Whether this process's working directory is `expected` by the kernel's path of it: the
/// check every child makes right after its `chdir` to the gate's checked, canonical cwd.
/// `chdir` resolves the path again, later than the check; a component swapped meanwhile for
/// a link (by an earlier run still going) would start the command elsewhere, out of the
/// roots. The kernel's path of the directory entered has no links in it, so a link on the way
/// shows as another path, and a directory unreachable from this root (a mount namespace's) as
/// "(unreachable)…". One system call and a buffer on this frame, nothing allocated: for a
/// child between fork (or clone) and exec.
#[cfg(target_os = "linux")]
pub(crate) fn cwd_is(expected: &std::ffi::CStr) -> bool {
    let mut buf = [0u8; libc::PATH_MAX as usize];
    // SAFETY: getcwd writes at most `buf.len()` bytes into `buf`, on this frame. The raw
    // system call (glibc's wrapper may allocate when it fails with ERANGE).
    let n = unsafe { libc::syscall(libc::SYS_getcwd, buf.as_mut_ptr(), buf.len()) };
    // The length counts the NUL.
    n > 0 && buf[..n as usize - 1] == *expected.to_bytes()
}

/// The refusal when a child's working directory is not the checked one (see [`cwd_is`]).
#[cfg(target_os = "linux")]
pub(crate) fn cwd_changed(cwd: &std::path::Path) -> Error {
    Error::other(format!(
        "the working directory {} changed after cordon checked it (a component on its path was replaced, e.g. by a link): refusing to run there; run the command again",
        cwd.display()
    ))
}

/// Runs `spec` under `confinement` and waits for it, forwarding SIGINT/SIGTERM/SIGHUP/SIGQUIT
/// to the child's process group.
#[cfg(target_os = "linux")]
pub fn run(confinement: Confinement, spec: &Spec) -> Result<Outcome, Error> {
    run_noting(confinement, spec, &mut Vec::new())
}

/// [`run`], adding to `gaps` what it could not give: with
/// [`Confinement::own_pid_namespace`] (bwrap), the child is started as pid 1 of a PID
/// namespace of cordon's own, whose end takes every process it started with it, however
/// cordon ends (see [`pid1`]); where the kernel refuses that namespace the child is started
/// the ordinary way, and that is a gap.
#[cfg(target_os = "linux")]
pub fn run_noting(
    confinement: Confinement,
    spec: &Spec,
    gaps: &mut Vec<String>,
) -> Result<Outcome, Error> {
    let own_ns = confinement.own_pid_namespace;
    // Poisoning carries no data here: a panicked run still released its children.
    let _shared;
    let _exclusive;
    if own_ns {
        _shared = SUPERVISION.read().unwrap_or_else(|e| e.into_inner());
        reap_bwrap_inits();
        namespaces::reap_finished_inits();
    } else {
        _exclusive = SUPERVISION.write().unwrap_or_else(|e| e.into_inner());
    }
    // Orphaned descendants re-parent to us, so we can kill and reap all of them at the end.
    // Without it, one that left the process group would outlive the run: refuse to start.
    // (rustix's `set_child_subreaper` takes a pid for what is a boolean; the raw call says it.)
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag, no pointers; it changes only this
    // process's attribute, which stays set for later runs (harmless: they all reap).
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        let e = io::Error::last_os_error();
        return Err(Error::Io(io::Error::new(
            e.kind(),
            format!("cannot become a child subreaper, so nothing the command leaves behind could be reaped: {e}"),
        )));
    }

    // Block the signals we forward and read them from a signalfd; the child unblocks them.
    // Blocking affects this thread only; the child restores an empty mask before exec
    // (step 8). The descriptor is closed when the run returns.
    let sigfd = blocked_signalfd(&FORWARDED).map_err(Error::Io)?;

    // The child writes the index of a failed setup step here before reporting the errno.
    let (status_r, status_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| Error::Io(e.into()))?;

    let confine = confinement.confine;
    let drop_caps = confine && has_capabilities();
    let last_cap = last_capability();
    let parent_pid = rustix::process::getpid().as_raw_pid();
    let landlock_fd = confinement.landlock.as_ref().map(|f| f.as_raw_fd());
    let programs = confinement.seccomp;
    let rlimits = confinement.rlimits;
    let report_fd = status_w.as_raw_fd();
    let pass: Vec<RawFd> = confinement.pass_fds.iter().map(|f| f.as_raw_fd()).collect();

    // Without a child that waits for "go", the command is not spawned before the release.
    let mut release = confinement.release;
    if confinement.go.is_none() {
        if let Some(r) = release.take() {
            r.wait()?;
        }
    }
    let mut started = None;
    if own_ns {
        match pid1::spawn(spec, &pass, &rlimits, confinement.device_nodes.as_deref()) {
            Ok(s) => started = Some(s),
            Err(pid1::Attempt::Failed(e)) => return Err(e),
            Err(pid1::Attempt::Unavailable(e)) => {
                gaps.push(format!(
                    "no PID namespace of cordon's own around bwrap ({e}): should cordon itself be SIGKILLed while bwrap starts, bwrap's sandbox can outlive it"
                ));
                if confinement.device_nodes.is_some() {
                    gaps.push(
                        "the sandbox's own /dev is made on disk, without a devpts instance of its own (that needs cordon's pid 1's mount namespace): no pseudo-terminals inside".into(),
                    );
                }
            }
        }
    }
    if let (None, Some(dir)) = (&started, &confinement.device_nodes) {
        crate::bwrap::make_device_nodes(dir)?;
    }
    let mut pid1_status = None;
    let (pid, child, clone_pidfd) = match started {
        Some(s) => {
            drop(status_w);
            pid1_status = Some(s.status);
            (s.pid, None, Some(s.pidfd))
        }
        None => {
            let mut cmd = Command::new(&spec.program);
            cmd.args(&spec.args)
                .env_clear()
                .envs(spec.env.iter().map(|(k, v)| (k, v)))
                .current_dir(&spec.cwd);
            for (n, fd) in spec.stdio.fds.iter().enumerate() {
                let Some(fd) = fd else { continue };
                let fd = fd.try_clone().map_err(Error::Io)?;
                match n {
                    0 => cmd.stdin(fd),
                    1 => cmd.stdout(fd),
                    _ => cmd.stderr(fd),
                };
            }
            let controlling_tty = spec.stdio.controlling_tty;
            let cwd = std::ffi::CString::new(spec.cwd.as_os_str().as_encoded_bytes())
                .map_err(|_| Error::other("a NUL byte in the working directory's path"))?;
            let child_setup = move || -> io::Result<()> {
                // Only raw syscalls below: no allocation, no locks (we are in a forked child).
                let fail = |step: u8| -> io::Error {
                    // Reads errno: no allocation (an io::Error of an OS code is a plain integer).
                    let err = io::Error::last_os_error();
                    // SAFETY: write reads one byte from `step` on this frame. `report_fd` is the
                    // pipe's write end: `status_w` keeps it open in the parent until spawn returns,
                    // and this forked child has its own copy (close-on-exec). A failed write only
                    // loses the step's name; the error still stops the exec.
                    unsafe { libc::write(report_fd, &step as *const u8 as *const libc::c_void, 1) };
                    err
                };
                // std's chdir to `spec.cwd` came before this closure: the directory entered
                // must be the checked one (no errno of its own: ENOENT stands for it).
                if !cwd_is(&cwd) {
                    // SAFETY: errno is this thread's; writing it is what failing calls do.
                    unsafe { *libc::__errno_location() = libc::ENOENT };
                    return Err(fail(CWD_STEP));
                }
                // SAFETY: this runs in the child between fork and exec of a possibly multithreaded
                // process, so only async-signal-safe system calls, no allocation and no locks: setsid,
                // ioctl(TIOCSCTTY), prctl, getppid, close_range, fcntl, setrlimit, capset (via
                // `drop_capabilities`), landlock_restrict_self, seccomp (`seccomp::install`),
                // sigemptyset/sigprocmask and signal. The captured `pass`, `rlimits` and `programs`
                // were built in the parent and are only iterated; `lim` and `empty` live on this
                // frame; every pointer handed to the kernel points at one of those. `controlling_tty`
                // is one of 0-2, which std has set up before this runs; `pass` and `landlock_fd` are
                // held open by the parent's OwnedFds until after spawn, so the child's copies are
                // valid. Every confinement step is checked: on failure the step is reported and an
                // error returned, on which std ends the child without exec and spawn fails (fail
                // closed: the command never runs half-confined).
                // The SIGPIPE reset is unchecked: signal(2) fails only for an invalid signal number.
                unsafe {
                    if libc::setsid() < 0 {
                        return Err(fail(0));
                    }
                    if let Some(fd) = controlling_tty {
                        if libc::ioctl(fd, libc::TIOCSCTTY, 0) != 0 {
                            return Err(fail(0));
                        }
                    }
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
                        || libc::getppid() != parent_pid
                    {
                        return Err(fail(1));
                    }
                    // Close-on-exec rather than close: std reports exec errors over its own CLOEXEC pipe.
                    if libc::syscall(
                        libc::SYS_close_range,
                        3u32,
                        u32::MAX,
                        libc::CLOSE_RANGE_CLOEXEC,
                    ) != 0
                    {
                        return Err(fail(2));
                    }
                    for &fd in &pass {
                        if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                            return Err(fail(2));
                        }
                    }
                    for &(resource, value) in &rlimits {
                        let lim = libc::rlimit {
                            rlim_cur: value,
                            rlim_max: value,
                        };
                        if libc::setrlimit(resource, &lim) != 0 {
                            return Err(fail(3));
                        }
                    }
                    if drop_caps && !drop_capabilities(last_cap) {
                        return Err(fail(4));
                    }
                    if confine && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(fail(5));
                    }
                    if let Some(fd) = landlock_fd {
                        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                            return Err(fail(6));
                        }
                    }
                    if let Err(errno) = crate::seccomp::install(&programs) {
                        *libc::__errno_location() = errno;
                        return Err(fail(7));
                    }
                    let mut empty: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut empty);
                    if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                        return Err(fail(8));
                    }
                    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                    libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
                }
                Ok(())
            };
            // SAFETY: `child_setup` makes only async-signal-safe, allocation-free calls (see inside
            // it), as pre_exec requires of code running between fork and exec.
            unsafe { cmd.pre_exec(child_setup) };

            let spawned = cmd.spawn();
            drop(status_w);
            let child = match spawned {
                Ok(c) => c,
                Err(e) => {
                    let mut step = [0u8; 1];
                    let n = rustix::io::read(&status_r, &mut step);
                    let name = spec.program.to_string_lossy().into_owned();
                    return Err(if matches!(n, Ok(1)) && step[0] == CWD_STEP {
                        cwd_changed(&spec.cwd)
                    } else if matches!(n, Ok(1)) {
                        Error::Setup(STEPS.get(step[0] as usize).copied().unwrap_or("setup"), e)
                    } else if e.kind() == io::ErrorKind::NotFound {
                        Error::NotFound(name)
                    } else {
                        Error::NotExecutable(name, e)
                    });
                }
            };
            (child.id() as libc::pid_t, Some(child), None)
        }
    };
    drop(confinement.landlock);
    drop(confinement.pass_fds);
    // The release while the child builds the sandbox (bwrap's mounts): the inner stage waits
    // for "go" before the command. Refused, the sandbox is torn down before the command ran.
    if let (Some(r), Some(go)) = (release.take(), &confinement.go) {
        let released = r.wait();
        if released.is_ok() {
            // A write that fails finds nobody to read it: the child is gone before the
            // command (its own report says why), and nothing waits for this byte.
            let _ = rustix::io::write(go, b"G");
        }
        if let Err(e) = released {
            kill_all_descendants(pid);
            wait_for(pid);
            if !own_ns {
                reap_all();
            }
            return Err(e);
        }
    }
    drop(confinement.go);
    // The listener before anything else: the inner stage starts the command only after
    // cordon's "go". Without it the sandbox is torn down and the run never starts.
    if let Some((mine, handoff)) = &confinement.proxy {
        if let Err(e) = crate::proxy::hand_over(mine, handoff) {
            kill_all_descendants(pid);
            wait_for(pid);
            // In its own PID namespace the tree died with its child; other runs' children
            // are not ours to reap.
            if !own_ns {
                reap_all();
            }
            return Err(Error::Setup(
                "handing the proxy its listener",
                io::Error::other(format!(
                    "{e} (a message from bubblewrap or the inner stage is above)"
                )),
            ));
        }
    }

    let opened = match clone_pidfd {
        Some(fd) => Ok(fd),
        None => rustix::process::pidfd_open(
            rustix::process::Pid::from_raw(pid).ok_or_else(|| Error::other("no child pid"))?,
            rustix::process::PidfdFlags::empty(),
        ),
    };
    let pidfd = match opened {
        Ok(fd) => fd,
        Err(e) => {
            let e = io::Error::from(e);
            // Without a pidfd we could not enforce the timeout or forward signals: stop here.
            kill_all_descendants(pid);
            if !own_ns {
                reap_all();
            } else {
                wait_for(pid);
            }
            return Err(Error::Io(e));
        }
    };

    // Without cordon's pid 1 (its namespace refused), bwrap is cordon's child and its init
    // (the sandbox's pid 1) is re-parented to cordon, a subreaper, when bwrap exits. Its pid is
    // taken from bwrap's children when the inner stage says the sandbox is ready: bwrap is
    // waiting for that init then, and it is bwrap's only child. (With cordon's pid 1 the init
    // goes with pid 1's namespace.)
    let mut ready = false;
    let mut bwrap_init: Option<libc::pid_t> = None;
    let mut ready_fd = match (&confinement.setup_status, own_ns && pid1_status.is_none()) {
        (Some(fd), true) => fd.as_raw_fd(),
        _ => -1,
    };
    if let Some(fd) = &confinement.setup_status {
        let _ = rustix::fs::fcntl_setfl(fd, rustix::fs::OFlags::NONBLOCK);
    }

    let deadline = spec.timeout.map(|t| Instant::now() + t);
    let mut timed_out = false;
    // A forwarded SIGINT/SIGTERM/SIGHUP/SIGQUIT: the tree gets a grace period, then SIGKILL.
    let mut grace: Option<(Instant, i32)> = None;
    let mut killed_after = None;
    // The child's wait status once reaped (SIGCHLD may reap it with the orphans).
    let mut status: Option<i32> = None;
    let mut cancelled = false;
    let cancel_fd = spec.cancel.as_ref().map_or(-1, |f| f.as_raw_fd());

    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| d <= now) {
            timed_out = true;
            break;
        }
        if let Some((at, sig)) = grace.filter(|g| g.0 <= now) {
            let _ = at;
            killed_after = Some(sig);
            break;
        }
        let next = [deadline, grace.map(|g| g.0)].into_iter().flatten().min();
        let wait_ms = poll_timeout(now, next);
        let mut fds = [
            libc::pollfd {
                fd: pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sigfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                // -1 (no cancel input) is skipped by poll.
                fd: cancel_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                // -1 unless bwrap's init must be found (see `bwrap_init`).
                fd: ready_fd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll reads and writes the 4 pollfds of `fds` on this frame; `pidfd` and
        // `sigfd` are open (owned here), the cancel entry is the caller's open descriptor or
        // -1, the ready entry `setup_status`'s (owned by `confinement`, alive) or -1; poll
        // skips -1. (Not rustix's poll: its PollFd cannot hold the -1.)
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 4, wait_ms) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if fds[1].revents & libc::POLLIN != 0 {
            if let Some(sig) = read_signal(&sigfd) {
                if sig == libc::SIGCHLD {
                    // Orphans re-parented to us are reaped as they exit, not at the end (none
                    // can be, in a PID namespace: another run's children are not ours to reap).
                    if !own_ns {
                        status = status.or(reap_exited(pid));
                    }
                } else {
                    // SAFETY: kill takes no pointers. -pid is the child's process group
                    // (it called setsid), and the child is not reaped yet (the loop ends in
                    // the iteration that reaps it), so the id is still the child's.
                    unsafe { libc::kill(-pid, sig) };
                    grace.get_or_insert((Instant::now() + namespaces::GRACE, sig));
                }
            }
        }
        if fds[3].revents != 0 {
            ready_fd = -1;
            if let Some(fd) = &confinement.setup_status {
                ready = read_ready(fd);
                if ready {
                    bwrap_init = children_of(pid).first().copied();
                }
            }
        }
        if fds[2].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
            cancelled = true;
            break;
        }
        if status.is_some() || fds[0].revents & libc::POLLIN != 0 {
            break;
        }
    }

    if timed_out || cancelled || killed_after.is_some() {
        // Killed before it could wait for them, the child's own children (bwrap's init of the
        // PID namespace) re-parent to cordon, a subreaper: they are ours to reap.
        let mut orphans = if own_ns { children_of(pid) } else { Vec::new() };
        kill_all_descendants(pid);
        if status.is_none() {
            wait_for(pid);
        }
        if !own_ns {
            reap_all();
        }
        // An init bwrap made after the look at its children: found when the sandbox was ready.
        if let Some(init) = bwrap_init.filter(|i| !orphans.contains(i)) {
            orphans.push(init);
        }
        reap_orphans(&orphans);
        return Ok(match killed_after {
            Some(sig) => Outcome::Signaled(sig),
            None if cancelled => Outcome::Cancelled,
            None => Outcome::TimedOut,
        });
    }
    let status = match status {
        Some(st) => st,
        None => {
            let mut st = 0;
            // SAFETY: waitpid writes one int into `st` on this frame. (libc, not rustix: the
            // child may be a clone-created task, which needs __WALL.)
            if unsafe { libc::waitpid(pid, &mut st, libc::__WALL) } != pid {
                return Err(Error::Io(io::Error::last_os_error()));
            }
            st
        }
    };
    // Started as pid 1's child, bwrap's own status is what pid 1 reported.
    let status = pid1_status
        .as_ref()
        .and_then(pid1::status)
        .unwrap_or(status);
    drop(child);
    kill_all_descendants(pid);
    if !own_ns {
        reap_all();
    }
    if let Some(fd) = confinement.setup_status {
        // Read without waiting: the byte is written before the command's exec, and the
        // command has ended; bwrap's init may still hold the pipe's other end.
        ready = ready || read_ready(&fd);
        // bwrap returns as soon as its PID namespace's init reports the command's status,
        // without waiting for that init, which then exits (or dies of its parent-death
        // signal) and is re-parented to cordon, a subreaper: reaped here, or a long-lived
        // cordon collects one zombie per run. Its pid cannot have been reused meanwhile: the
        // zombie holds it until it is reaped, and only cordon can reap it now.
        // Not waited for (its teardown takes a moment the run need not pay): reaped now if
        // it is gone already, else by the next run ([`reap_bwrap_inits`]), so at most one
        // waits at a time.
        if let Some(init) = bwrap_init {
            let mut pending = BWRAP_INITS.lock().unwrap_or_else(|e| e.into_inner());
            pending.push(init);
            reap_pending(&mut pending);
        }
        // The inner stage says "ready" only once the sandbox is built, right before the
        // command's exec; without it, the status is bwrap's own failure (e.g. a mount it could
        // not make) or the inner stage's, not the command's — unless cordon forwarded a
        // signal, which ends bwrap as well, or bwrap was killed by a signal (Ctrl-C on the
        // command's terminal reaches its process group), which is reported as that signal.
        if !ready && grace.is_none() && !libc::WIFSIGNALED(status) {
            return Err(Error::Setup(
                "bwrap",
                io::Error::other(
                    "bubblewrap or cordon's inner stage could not build the sandbox (its message is above)",
                ),
            ));
        }
    }
    Ok(if libc::WIFEXITED(status) {
        Outcome::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Outcome::Signaled(libc::WTERMSIG(status))
    } else {
        Outcome::Exited(1)
    })
}

/// Blocks `signals` in the calling thread (the child unblocks them before exec) and opens a
/// non-blocking, close-on-exec signalfd that reads them: the runs' loops forward what
/// arrives. (No safe wrapper: rustix keeps sigprocmask and signalfd out of its public API.)
#[cfg(target_os = "linux")]
fn blocked_signalfd(signals: &[libc::c_int]) -> io::Result<OwnedFd> {
    // SAFETY: sigset_t is a plain bit array; all-zero is a valid (empty) set.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: sigemptyset/sigaddset write only into `set` (on this frame) and take valid
    // signal numbers; sigprocmask reads it and writes no old set (null). Blocking affects
    // this thread only.
    unsafe {
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: signalfd(-1, …) reads the set from this frame and returns a new descriptor.
    let fd = cvt(unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) })?;
    // SAFETY: `fd` was just returned by signalfd (checked non-negative) and nothing else
    // holds it: the OwnedFd is its sole owner.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The next signal waiting on `sigfd` ([`blocked_signalfd`], non-blocking), if any.
#[cfg(target_os = "linux")]
fn read_signal(sigfd: &OwnedFd) -> Option<i32> {
    // SAFETY: signalfd_siginfo is plain integers; all-zero is a valid value.
    let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    // SAFETY: read writes at most `size` bytes into `info`, exactly its size; a signalfd
    // returns whole records only. `sigfd` is open (borrowed for this call).
    let r = unsafe {
        libc::read(
            sigfd.as_raw_fd(),
            &mut info as *mut _ as *mut libc::c_void,
            size,
        )
    };
    (r == size as isize).then_some(info.ssi_signo as i32)
}

/// poll's timeout from `now` to `next` in milliseconds, rounded up (poll may not return
/// before it has passed); -1, no timeout, without one.
#[cfg(target_os = "linux")]
fn poll_timeout(now: Instant, next: Option<Instant>) -> i32 {
    next.map_or(-1, |at| {
        at.saturating_duration_since(now)
            .as_millis()
            .min(i32::MAX as u128 - 1) as i32
            + 1
    })
}

/// Waits for (and reaps) the child `pid`; an error (it was reaped already) leaves nothing to do.
#[cfg(target_os = "linux")]
fn wait_for(pid: libc::pid_t) {
    // SAFETY: a null status pointer is allowed (nothing is written). `pid` is our child, not
    // reaped before this (or waitpid fails with ECHILD, ignored).
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL) };
}

/// Reaps every exited child without blocking; returns the wait status of `main` if it was
/// among them.
#[cfg(target_os = "linux")]
fn reap_exited(main: libc::pid_t) -> Option<i32> {
    let mut found = None;
    loop {
        let mut st = 0;
        // SAFETY: waitpid writes one int into `st` on this frame; it never blocks (WNOHANG).
        let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL) };
        if r <= 0 {
            return found;
        }
        if r == main {
            found = Some(st);
        }
    }
}

/// bwrap namespace inits re-parented to cordon and not reaped yet (see the end of [`run`]).
#[cfg(target_os = "linux")]
static BWRAP_INITS: std::sync::Mutex<Vec<libc::pid_t>> = std::sync::Mutex::new(Vec::new());

/// Reaps the inits of earlier bwrap runs that are gone by now.
#[cfg(target_os = "linux")]
pub(crate) fn reap_bwrap_inits() {
    reap_pending(&mut BWRAP_INITS.lock().unwrap_or_else(|e| e.into_inner()));
}

/// Keeps the pids of `pending` that have not exited yet; reaps the rest (or forgets them when
/// they are not cordon's: bwrap reaped its init itself).
#[cfg(target_os = "linux")]
fn reap_pending(pending: &mut Vec<libc::pid_t>) {
    pending.retain(|&pid| {
        // SAFETY: a null status pointer is allowed (nothing is written); never blocks.
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) };
        r == 0
    });
}

/// Whether the inner stage wrote its "ready" byte on `fd` (non-blocking: no byte yet, or
/// end-of-file, is `false`).
#[cfg(target_os = "linux")]
fn read_ready(fd: &OwnedFd) -> bool {
    let mut b = [0u8; 1];
    loop {
        match rustix::io::read(fd, &mut b) {
            Err(rustix::io::Errno::INTR) => continue,
            r => return matches!(r, Ok(1)) && b[0] == b'R',
        }
    }
}

/// `pid`'s children, from /proc.
#[cfg(target_os = "linux")]
fn children_of(pid: libc::pid_t) -> Vec<libc::pid_t> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Reaps `pids`, re-parented to cordon when their parent was killed; they die of their
/// parent-death signal (bwrap `--die-with-parent`; never signalled here: a pid that was reaped
/// meanwhile may be reused). A pid that is not cordon's child is skipped (waitpid only reaps
/// cordon's own). Bounded: a task stuck in the kernel is left.
#[cfg(target_os = "linux")]
fn reap_orphans(pids: &[libc::pid_t]) {
    let until = Instant::now() + Duration::from_secs(10);
    for &p in pids {
        loop {
            // SAFETY: a null status pointer is allowed (nothing is written); no blocking.
            let r = unsafe { libc::waitpid(p, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) };
            if r != 0 || Instant::now() >= until {
                break; // reaped, or not ours (ECHILD)
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// SIGKILL the child's process group.
#[cfg(target_os = "linux")]
fn kill_all_descendants(pgid: libc::pid_t) {
    // Those that left the group are re-parented to us: `reap_all` finds and kills them. A
    // group that is gone already (ESRCH) is what we want.
    if let Some(pgid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// Kills and reaps children until none is left. Killing one may re-parent its own children
/// to us (we are a subreaper), so list again after every reap.
#[cfg(target_os = "linux")]
fn reap_all() {
    // The common case, nothing left at all, costs one syscall and no /proc reads.
    // SAFETY: a null status pointer is allowed (nothing is written); no blocking.
    let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) };
    if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
        return;
    }
    loop {
        // Our own unreaped children: their ids cannot have been reused.
        for pid in direct_children()
            .into_iter()
            .filter_map(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        // SAFETY: a null status pointer is allowed (nothing is written).
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return; // ECHILD: nothing left.
        }
    }
}

/// Our direct children, from /proc/self/task/*/children.
#[cfg(target_os = "linux")]
fn direct_children() -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(
                    s.split_whitespace()
                        .filter_map(|p| p.parse::<libc::pid_t>().ok()),
                );
            }
        }
    }
    out
}

#[cfg(target_os = "linux")]
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Empties the bounding set so an exec as uid 0 regains nothing, then clears the ambient,
/// effective, permitted and inheritable sets. Raw syscalls only (runs after fork). False (errno
/// set) at the first step that fails; the caller then refuses to exec.
///
/// # Safety
/// None beyond the calls' own: system calls on stack memory, no allocation, so it may run
/// between fork/clone and exec. It is irreversible for the calling process: call it only in
/// the child that will exec the command.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn drop_capabilities(last_cap: u32) -> bool {
    for cap in 0..=last_cap {
        // SAFETY: PR_CAPBSET_DROP takes a capability number, no pointers.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0 {
            return false;
        }
    }
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointers; the unused arguments must be 0.
    if unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    } != 0
    {
        return false;
    }
    // SAFETY: as `clear_capabilities` says.
    unsafe { clear_capabilities() }
}

/// Clears the calling thread's effective, permitted and inheritable sets (the ambient set
/// goes with them: the kernel keeps it within permitted and inheritable) with one `capset`.
/// What every capability check and ptrace relation reads; the bounding set matters only at an
/// exec. False (errno set) if it failed.
///
/// # Safety
/// None beyond the call's own: one system call on stack memory. Irreversible for the thread.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn clear_capabilities() -> bool {
    let header = CapHeader {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: capset reads the v3 header and two CapData (the kernel's repr(C)
    // `__user_cap_data_struct`, two of them for version 3) from this frame.
    unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) == 0 }
}

/// Do we hold any capability (root, or a binary with file capabilities)? Then the child must
/// shed them; an unprivileged caller has none to drop and could not drop the bounding set.
#[cfg(target_os = "linux")]
pub(crate) fn has_capabilities() -> bool {
    // Unknown counts as yes (fail closed): the child then tries to drop them, and a failure
    // there refuses the run.
    match rustix::thread::capabilities(None) {
        Ok(c) => !c.effective.is_empty() || !c.permitted.is_empty(),
        Err(_) => true,
    }
}

/// The highest capability number this kernel knows.
#[cfg(target_os = "linux")]
pub(crate) fn last_capability() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

#[cfg(target_os = "linux")]
fn cvt(r: i32) -> io::Result<i32> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}
