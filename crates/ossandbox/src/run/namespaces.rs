//! The Landlock backend's own namespaces, and the small init that keeps them.
//!
//! Landlock and seccomp confine what the command can open and call, but not whom it can reach:
//! in the host's PID and IPC namespaces it can `prlimit64`, renice or re-pin any process of its
//! user (cordon included), open the host's SysV segments, and leave daemons that outlive the
//! run. So the command runs in namespaces of its own, made with one `clone`:
//!
//! ```text
//!   cordon (host)                 clone(NEWPID|NEWIPC|NEWNS [|NEWUSER] [|NEWNET] | PIDFD)
//!     │ pidfd ──────────────▶ init (pid 1, cordon's code, no exec, not confined)
//!     │ report pipe ◀───────┤   PDEATHSIG=SIGKILL, cordon still alive?
//!     │                     │   [user] setgroups deny, gid_map, uid_map: caller ↦ itself
//!     │                     │   / made private (no mount reaches the host), fresh /proc,
//!     │                     │   kernel.pid_max of this namespace = the task cap,
//!     │                     │   Landlock rules for the fresh /proc (rules belong to inodes)
//!     │ ◀── listener ───────┤   [proxy] lo up, the proxy's listener made here and sent to
//!     │ ─── "go" ──────────▶│   cordon (SCM_RIGHTS); the command waits for "go" (crate::proxy)
//!     │                     │   fork ─▶ command (pid 2): setsid, rlimits, caps dropped,
//!     │                     │           no_new_privs, landlock_restrict_self, seccomp, execve
//!     │ SIGTERM/INT/HUP/QUIT ─▶ init: kill(-1, sig) — every process of the namespace
//!     │                     │   reaps every child as it exits (no zombies pile up)
//!     │                     └── the command exits: SIGKILL and reap the rest, report the
//!     │                         command's wait status (cordon is done), exit (the kernel
//!     │                         tears the namespaces down; cordon reaps init later)
//!     └── timeout, grace after a forwarded signal, or cordon's death: SIGKILL init, and the
//!         kernel kills the whole namespace. Nothing is found by walking /proc.
//! ```
//!
//! Report records (6 bytes: tag, step, errno or wait status as i32) on a close-on-exec pipe:
//! `N` the namespaces could not be made (the caller falls back to seccomp argument filters),
//! `S` a confinement step failed, `E` every exec failed, `X` the command's wait status.
//!
//! Everything after `clone` is raw syscalls on data prepared here, in the parent: the child of
//! a multithreaded process may not allocate or take locks. The command reaches neither cordon
//! (another PID namespace) nor init in a harmful way: init is outside the Landlock domain, so
//! Landlock's scoping refuses its signals and its ptrace-class /proc files, and seccomp refuses
//! `prlimit64` on any process but the caller.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use super::{Outcome, Spec, StartError};
use crate::seccomp::Program;
use crate::Error;

/// The most tasks (processes and threads) one run may have at once: the PID namespace's
/// `kernel.pid_max` (Linux 6.14 and later; older kernels keep the host's).
pub const TASK_CAP: u32 = 4096;

/// How long the tree has to exit after cordon forwarded SIGTERM/SIGINT/SIGHUP/SIGQUIT.
pub const GRACE: Duration = Duration::from_secs(2);

/// How long cordon waits for a SIGKILLed namespace to be gone.
const KILL_WAIT: Duration = Duration::from_secs(10);

/// A Landlock rule for a path in the fresh /proc, added by init after mounting it.
#[derive(Debug, Clone)]
pub struct ProcRule {
    pub path: std::path::PathBuf,
    pub dir_rights: u64,
    pub file_rights: u64,
}

/// What the namespaces hold and what init adds to the ruleset.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// A user namespace mapping the caller's uid and gid to themselves (not root: root makes
    /// the other namespaces without one and keeps its identity).
    pub user: bool,
    /// A new network namespace (the network is denied, or only through the proxy).
    pub net: bool,
    /// `sandbox.network = "proxy"`: init brings loopback up in the new network namespace and
    /// makes the proxy's listener on this port there before the command starts (see
    /// [`crate::proxy`]); the run needs the spec's [`super::ProxyHandoff`].
    pub proxy: Option<u16>,
    /// Landlock rules for the fresh /proc.
    pub proc_rules: Vec<ProcRule>,
}

/// What the child is confined by (built in the parent).
pub struct Confinement {
    pub landlock: OwnedFd,
    pub seccomp: Vec<Program>,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
}

/// Why a namespaced run did not happen.
#[derive(Debug)]
pub enum Attempt {
    /// The kernel refused the namespaces (unprivileged user namespaces disabled, a
    /// namespace limit of 0, an LSM): run without them.
    Unavailable(io::Error),
    /// The run itself failed to start.
    Start(StartError),
}

/// Steps whose failure the child reports; the index is the record's step byte.
const STEPS: [&str; 21] = [
    "parent-death signal",
    "setgroups deny",
    "gid_map",
    "uid_map",
    "making mounts private",
    "mounting /proc",
    "a Landlock rule for /proc",
    "fork",
    "setsid",
    "closing inherited file descriptors",
    "working directory",
    "resource limits",
    "dropping capabilities",
    "no_new_privs",
    "landlock_restrict_self",
    "seccomp",
    "standard streams",
    "controlling terminal",
    "bringing up loopback in the network namespace",
    "the proxy's listener in the network namespace",
    "handing the proxy's listener to cordon",
];

const REC: usize = 6;

fn cstring(b: &[u8]) -> Result<CString, StartError> {
    CString::new(b).map_err(|_| {
        StartError::Parent(Error::Io(io::Error::other(
            "a NUL byte in the command line, environment or a path",
        )))
    })
}

/// Runs `spec` in new namespaces under `c`; see the module docs.
pub fn run(c: Confinement, spec: &Spec, plan: &Plan) -> Result<Outcome, Attempt> {
    let parent = |e: io::Error| Attempt::Start(StartError::Parent(Error::Io(e)));
    let start = |e: StartError| Attempt::Start(e);

    // Everything the children need, allocated now.
    let argv: Vec<CString> = std::iter::once(spec.program.as_os_str())
        .chain(spec.args.iter().map(|a| a.as_os_str()))
        .map(|a| cstring(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(start)?;
    let envp: Vec<CString> = spec
        .env
        .iter()
        .map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            cstring(&b)
        })
        .collect::<Result<_, _>>()
        .map_err(start)?;
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|a| a.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    let candidates = exec_candidates(spec).map_err(start)?;
    let cwd = cstring(spec.cwd.as_os_str().as_bytes()).map_err(start)?;
    let uid = unsafe { libc::getuid() };
    let gid = unsafe { libc::getgid() };
    let uid_map = format!("{uid} {uid} 1\n");
    let gid_map = format!("{gid} {gid} 1\n");
    let proc_rules: Vec<(CString, u64, u64)> = plan
        .proc_rules
        .iter()
        .map(|r| {
            Ok((
                cstring(r.path.as_os_str().as_bytes())?,
                r.dir_rights,
                r.file_rights,
            ))
        })
        .collect::<Result<_, StartError>>()
        .map_err(start)?;
    let pid_max = format!("{TASK_CAP}\n");
    let drop_caps_all = plan.user || super::has_capabilities();
    let last_cap = super::last_capability();
    let ruleset = c.landlock.as_raw_fd();
    // The command's own pty or pipes (crate::stdio), never the operator's terminal or files.
    let stdio = spec
        .stdio
        .fds
        .each_ref()
        .map(|f| f.as_ref().map_or(-1, |f| f.as_raw_fd()));
    let controlling_tty = spec.stdio.controlling_tty.unwrap_or(-1);
    let programs = &c.seccomp;
    let rlimits = &c.rlimits;
    // sandbox.network = "proxy": the pair the listener comes back over.
    let proxy = match (plan.proxy, &spec.proxy) {
        (None, _) => None,
        (Some(port), Some(handoff)) if plan.net && handoff.port == port => {
            Some((crate::proxy::pair().map_err(parent)?, handoff, port))
        }
        (Some(_), _) => {
            return Err(parent(io::Error::other(
                "sandbox.network = \"proxy\" needs the proxy's handoff on its port and a network namespace",
            )))
        }
    };
    let proxy_fd = proxy
        .as_ref()
        .map_or(-1, |((_, theirs), _, _)| theirs.as_raw_fd());
    let proxy_port = proxy.as_ref().map_or(0, |(_, _, port)| *port);

    // Forwarded signals are read from a signalfd; init waits for them (and SIGCHLD) with
    // sigtimedwait, so it needs no handlers; the command unblocks everything before exec.
    let mut forwarded: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut forwarded);
        for s in FORWARDED {
            libc::sigaddset(&mut forwarded, s);
        }
        if libc::sigprocmask(libc::SIG_BLOCK, &forwarded, std::ptr::null_mut()) != 0 {
            return Err(parent(io::Error::last_os_error()));
        }
    }
    let sigfd =
        cvt(unsafe { libc::signalfd(-1, &forwarded, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) })
            .map_err(parent)?;
    let sigfd = unsafe { OwnedFd::from_raw_fd(sigfd) };
    let (report_r, report_w) = pipe().map_err(parent)?;
    let report = report_w.as_raw_fd();
    // cordon's own pidfd: init checks it after setting its parent-death signal, which closes
    // the window where cordon died before that.
    let me = cvt(unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) } as i32)
        .map_err(parent)?;
    let me = unsafe { OwnedFd::from_raw_fd(me) };
    let me_fd = me.as_raw_fd();

    let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWNS | libc::CLONE_PIDFD;
    if plan.user {
        flags |= libc::CLONE_NEWUSER;
    }
    if plan.net {
        flags |= libc::CLONE_NEWNET;
    }
    let mut pidfd: libc::c_int = -1;
    // clone without a new stack behaves like fork; CLONE_PIDFD stores the pidfd at arg 3
    // (parent_tid) on x86_64 and aarch64 alike.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            &mut pidfd as *mut libc::c_int,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EPERM | libc::ENOSPC | libc::EINVAL | libc::EUSERS | libc::ENOSYS) => {
                Attempt::Unavailable(e)
            }
            _ => parent(e),
        });
    }
    if pid == 0 {
        // Init. Never returns.
        unsafe {
            init(&InitData {
                report,
                me_fd,
                user: plan.user,
                uid_map: uid_map.as_bytes(),
                gid_map: gid_map.as_bytes(),
                pid_max: pid_max.as_bytes(),
                proc_rules: &proc_rules,
                ruleset,
                cwd: &cwd,
                rlimits,
                drop_caps: drop_caps_all,
                last_cap,
                programs,
                candidates: &candidates,
                argv: argv_p.as_ptr(),
                envp: envp_p.as_ptr(),
                stdio,
                controlling_tty,
                proxy_fd,
                proxy_port,
            })
        }
    }
    drop(report_w);
    // Only init may hold the namespace's end: a closed pair is how cordon learns it failed.
    let proxy = proxy.map(|((mine, theirs), handoff, _)| {
        drop(theirs);
        (mine, handoff)
    });
    drop(me);
    drop(c.landlock);
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let pid = pid as libc::pid_t;

    reap_finished_inits();
    // The listener first: init starts the command only after cordon said "go", which it says
    // only once the proxy has its listener. Any failure kills the namespace before that.
    let mut handoff_error = None;
    if let Some((mine, handoff)) = &proxy {
        if let Err(e) = crate::proxy::hand_over(mine, handoff) {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            handoff_error = Some(e);
        }
    }
    drop(proxy);
    // Non-blocking: records are read as they come, and a namespace that would not die in
    // time cannot hold us here either.
    unsafe { libc::fcntl(report_r.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let mut bytes = Vec::new();
    let cancel = spec.cancel.as_ref().map(|f| f.as_raw_fd());
    let outcome = supervise(
        pid,
        &pidfd,
        &sigfd,
        &report_r,
        &mut bytes,
        spec.timeout,
        cancel,
    );
    let _ = io::Read::read_to_end(&mut std::fs::File::from(report_r), &mut bytes);
    let mut exec_errno = None;
    let mut status = None;
    for rec in bytes.chunks_exact(REC) {
        let value = i32::from_ne_bytes([rec[2], rec[3], rec[4], rec[5]]);
        let step = STEPS.get(rec[1] as usize).copied().unwrap_or("setup");
        match rec[0] {
            b'N' => {
                return Err(Attempt::Unavailable(io::Error::other(format!(
                    "{step}: {}",
                    io::Error::from_raw_os_error(value)
                ))))
            }
            b'S' => {
                return Err(start(StartError::Setup(
                    step,
                    io::Error::from_raw_os_error(value),
                )))
            }
            b'E' => exec_errno = Some(value),
            b'X' => status = Some(value),
            _ => {}
        }
    }
    if let Some(e) = handoff_error {
        return Err(parent(io::Error::other(format!(
            "cannot hand the proxy its listener in the command's network namespace: {e}"
        ))));
    }
    if let Some(e) = exec_errno {
        let name = spec.program.to_string_lossy().into_owned();
        return Err(start(if e == libc::ENOENT || e == libc::ENOTDIR {
            StartError::NotFound(name)
        } else {
            StartError::NotExecutable(name, io::Error::from_raw_os_error(e))
        }));
    }
    Ok(match (outcome, status) {
        (Ended::TimedOut, _) => Outcome::TimedOut,
        (Ended::Cancelled, _) => Outcome::Cancelled,
        (_, Some(st)) => decode(st),
        (Ended::KilledAfter(sig), None) => Outcome::Signaled(sig),
        (Ended::Init(st), None) => decode(st),
        (Ended::Reported, None) => Outcome::Exited(1),
    })
}

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

fn decode(st: i32) -> Outcome {
    if libc::WIFEXITED(st) {
        Outcome::Exited(libc::WEXITSTATUS(st))
    } else if libc::WIFSIGNALED(st) {
        Outcome::Signaled(libc::WTERMSIG(st))
    } else {
        Outcome::Exited(1)
    }
}

/// How the supervision loop ended.
enum Ended {
    /// Init exited with this wait status.
    Init(i32),
    /// The timeout expired and the namespace was killed.
    TimedOut,
    /// The cancel input became readable and the namespace was killed.
    Cancelled,
    /// A forwarded signal's grace period expired and the namespace was killed.
    KilledAfter(i32),
    /// Init reported the command's status, having killed and reaped everything else: the run
    /// is over. Init's own exit (tearing the namespaces down, ~1 ms) is not waited for; it is
    /// reaped later ([`reap_finished_inits`]).
    Reported,
}

/// Inits that reported but had not exited yet when their run returned.
static UNREAPED: std::sync::Mutex<Vec<libc::pid_t>> = std::sync::Mutex::new(Vec::new());

/// Reaps the inits of earlier runs that have exited since (a long-lived cordon, such as the
/// MCP server, must not collect zombies).
fn reap_finished_inits() {
    let mut pending = UNREAPED.lock().unwrap_or_else(|e| e.into_inner());
    pending.retain(|&pid| {
        let mut st = 0;
        unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) == 0 }
    });
}

/// Has init written its final record (the command's wait status)?
fn has_status(bytes: &[u8]) -> bool {
    bytes.chunks_exact(REC).any(|r| r[0] == b'X')
}

/// Waits for init's final record or its exit, forwarding signals and collecting records into
/// `bytes`; every wait after a kill is bounded.
fn supervise(
    pid: libc::pid_t,
    pidfd: &OwnedFd,
    sigfd: &OwnedFd,
    report: &OwnedFd,
    bytes: &mut Vec<u8>,
    timeout: Option<Duration>,
    cancel: Option<RawFd>,
) -> Ended {
    let mut report_open = true;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut grace: Option<(Instant, i32)> = None;
    let mut killed: Option<Ended> = None;
    let kill_deadline = |now: Instant| now + KILL_WAIT;
    let mut kill_by = None;
    loop {
        let now = Instant::now();
        let next = [
            deadline.filter(|_| killed.is_none()),
            grace.map(|g| g.0).filter(|_| killed.is_none()),
            kill_by,
        ]
        .into_iter()
        .flatten()
        .min();
        if let Some(at) = next {
            if at <= now {
                if kill_by.is_some_and(|k| k <= now) {
                    // The namespace did not die in time (a task stuck in the kernel): stop
                    // waiting; the tree is SIGKILLed and dies with init.
                    break;
                }
                let why = if deadline.is_some_and(|d| d <= now) {
                    Ended::TimedOut
                } else {
                    Ended::KilledAfter(grace.map(|g| g.1).unwrap_or(libc::SIGKILL))
                };
                send(pidfd, libc::SIGKILL);
                killed = Some(why);
                kill_by = Some(kill_deadline(now));
                continue;
            }
        }
        let wait_ms = next.map_or(-1, |at| {
            at.saturating_duration_since(now)
                .as_millis()
                .min(i32::MAX as u128 - 1) as i32
                + 1
        });
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
                // A negative fd is skipped by poll: the pipe has reached its end.
                fd: if report_open { report.as_raw_fd() } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                // Watched until the kill: then only the namespace's end matters.
                fd: cancel.filter(|_| killed.is_none()).unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 4, wait_ms) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            send(pidfd, libc::SIGKILL);
            killed.get_or_insert(Ended::KilledAfter(libc::SIGKILL));
            kill_by.get_or_insert(kill_deadline(Instant::now()));
            continue;
        }
        if fds[1].revents & libc::POLLIN != 0 {
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            let r = unsafe {
                libc::read(
                    sigfd.as_raw_fd(),
                    &mut info as *mut _ as *mut libc::c_void,
                    size,
                )
            };
            if r == size as isize && killed.is_none() {
                let sig = info.ssi_signo as i32;
                send(pidfd, sig);
                grace.get_or_insert((Instant::now() + GRACE, sig));
            }
        }
        if fds[3].revents & (libc::POLLIN | libc::POLLHUP) != 0 && killed.is_none() {
            send(pidfd, libc::SIGKILL);
            killed = Some(Ended::Cancelled);
            kill_by = Some(kill_deadline(Instant::now()));
            continue;
        }
        if fds[2].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
            let mut buf = [0u8; 64];
            let r = unsafe { libc::read(report.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if r > 0 {
                bytes.extend_from_slice(&buf[..r as usize]);
            } else if r == 0 {
                report_open = false;
            }
            if killed.is_none() && has_status(bytes) {
                let mut st = 0;
                if unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) } == 0 {
                    UNREAPED.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
                }
                return Ended::Reported;
            }
        }
        if fds[0].revents & libc::POLLIN != 0 {
            break;
        }
    }
    let mut st = 0;
    let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) };
    if r == 0 {
        UNREAPED.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    }
    match killed {
        Some(k) => k,
        None if r == pid => Ended::Init(st),
        None => Ended::KilledAfter(libc::SIGKILL),
    }
}

fn send(pidfd: &OwnedFd, sig: i32) {
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
}

/// The paths execve tries, in order: the program itself when it names a path, else each
/// `PATH` entry of the child's environment (glibc's default when unset), like execvp.
fn exec_candidates(spec: &Spec) -> Result<Vec<CString>, StartError> {
    let prog = spec.program.as_bytes();
    if prog.contains(&b'/') {
        return Ok(vec![cstring(prog)?]);
    }
    let path = spec
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str())
        .unwrap_or(OsStr::new("/bin:/usr/bin"));
    path.as_bytes()
        .split(|b| *b == b':')
        .map(|dir| {
            let mut p = if dir.is_empty() {
                b".".to_vec()
            } else {
                dir.to_vec()
            };
            p.push(b'/');
            p.extend_from_slice(prog);
            cstring(&p)
        })
        .collect()
}

struct InitData<'a> {
    report: RawFd,
    me_fd: RawFd,
    user: bool,
    uid_map: &'a [u8],
    gid_map: &'a [u8],
    pid_max: &'a [u8],
    proc_rules: &'a [(CString, u64, u64)],
    ruleset: RawFd,
    cwd: &'a CString,
    rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    drop_caps: bool,
    last_cap: u32,
    programs: &'a [Program],
    candidates: &'a [CString],
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    /// What the command gets as descriptors 0, 1, 2 (-1: init's own, which are cordon's).
    stdio: [RawFd; 3],
    /// The descriptor (0, 1 or 2, a pty slave) the command makes its controlling terminal.
    controlling_tty: RawFd,
    /// The namespace's end of the proxy's handoff pair (-1: not `network = "proxy"`).
    proxy_fd: RawFd,
    /// The proxy's port in the namespace.
    proxy_port: u16,
}

unsafe fn record(fd: RawFd, tag: u8, step: u8, value: i32) {
    let v = value.to_ne_bytes();
    let rec = [tag, step, v[0], v[1], v[2], v[3]];
    libc::write(fd, rec.as_ptr().cast(), REC);
}

fn errno() -> i32 {
    unsafe { *libc::__errno_location() }
}

/// Writes `bytes` to an existing file (a /proc control file).
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> bool {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let ok = libc::write(fd, bytes.as_ptr().cast(), bytes.len()) == bytes.len() as isize;
    libc::close(fd);
    ok
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// pid 1 of the new namespaces. Raw syscalls only.
unsafe fn init(d: &InitData) -> ! {
    let fail = |tag: u8, step: u8| -> ! {
        record(d.report, tag, step, errno());
        libc::_exit(125)
    };
    let ns_fail = |step: u8| -> ! { fail(b'N', step) };
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
        ns_fail(0);
    }
    let mut alive = libc::pollfd {
        fd: d.me_fd,
        events: libc::POLLIN,
        revents: 0,
    };
    if libc::poll(&mut alive, 1, 0) != 0 {
        libc::_exit(125); // cordon is gone already
    }
    // clone copied every descriptor cordon had, the relay's ends of the command's pipes among
    // them: a stdin pipe's write end kept open here would keep the command from ever seeing
    // end-of-file. Keep only what init and the command need.
    let mut keep = [
        d.report, d.me_fd, d.ruleset, d.stdio[0], d.stdio[1], d.stdio[2], d.proxy_fd,
    ];
    keep.sort_unstable();
    let mut next: RawFd = 3;
    for fd in keep {
        if fd < next {
            continue;
        }
        if fd > next
            && libc::syscall(libc::SYS_close_range, next as u32, (fd - 1) as u32, 0u32) != 0
        {
            fail(b'S', 9);
        }
        next = fd + 1;
    }
    if libc::syscall(libc::SYS_close_range, next as u32, u32::MAX, 0u32) != 0 {
        fail(b'S', 9);
    }
    if d.user {
        if !write_file(c"/proc/self/setgroups", b"deny") {
            ns_fail(1);
        }
        if !write_file(c"/proc/self/gid_map", d.gid_map) {
            ns_fail(2);
        }
        if !write_file(c"/proc/self/uid_map", d.uid_map) {
            ns_fail(3);
        }
    }
    // Without this, as root, the /proc mount below would propagate to the host's mounts.
    if libc::mount(
        std::ptr::null(),
        c"/".as_ptr(),
        std::ptr::null(),
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ) != 0
    {
        ns_fail(4);
    }
    if libc::mount(
        c"proc".as_ptr(),
        c"/proc".as_ptr(),
        c"proc".as_ptr(),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        std::ptr::null(),
    ) != 0
    {
        ns_fail(5);
    }
    // The task cap; kernels before 6.14 have one global pid_max and refuse (the policy's
    // `processes` limit still applies there).
    let _ = write_file(c"/proc/sys/kernel/pid_max", d.pid_max);
    for (path, dir_rights, file_rights) in d.proc_rules {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            if errno() == libc::ENOENT {
                continue;
            }
            fail(b'S', 6);
        }
        let mut st: libc::stat = std::mem::zeroed();
        let is_dir = libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        let attr = PathBeneath {
            allowed_access: if is_dir { *dir_rights } else { *file_rights },
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            d.ruleset,
            1u32, // LANDLOCK_RULE_PATH_BENEATH
            &attr as *const PathBeneath,
            0u32,
        );
        libc::close(fd);
        if r != 0 {
            fail(b'S', 6);
        }
    }

    // sandbox.network = "proxy": loopback up, the listener made here (so it lives in this
    // namespace) and handed to cordon; the command starts only after cordon's "go".
    if d.proxy_fd >= 0 {
        if !crate::proxy::loopback_up() {
            fail(b'S', 18);
        }
        let listener = crate::proxy::listener(d.proxy_port);
        if listener < 0 {
            fail(b'S', 19);
        }
        if !crate::proxy::send_fd(d.proxy_fd, listener) {
            fail(b'S', 20);
        }
        libc::close(listener);
        if !crate::proxy::wait_go(d.proxy_fd) {
            fail(b'S', 20);
        }
        libc::close(d.proxy_fd);
    }

    // SIGCHLD joins the forwarded signals (blocked since before clone) in the set init waits on.
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    for s in FORWARDED {
        libc::sigaddset(&mut set, s);
    }
    libc::sigaddset(&mut set, libc::SIGCHLD);
    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());

    let cmd = libc::syscall(
        libc::SYS_clone,
        libc::SIGCHLD as libc::c_ulong,
        0usize,
        0usize,
        0usize,
        0usize,
    );
    if cmd < 0 {
        fail(b'S', 7);
    }
    if cmd == 0 {
        command(d);
    }
    let cmd = cmd as libc::pid_t;
    // The command has its descriptors; init's copies would keep the relay from seeing the end
    // of the command's output (a pty reads EIO only once every slave is closed).
    for &fd in &d.stdio {
        if fd >= 0 {
            libc::close(fd);
        }
    }
    loop {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let sig = libc::syscall(
            libc::SYS_rt_sigtimedwait,
            &set as *const libc::sigset_t,
            &mut info as *mut libc::siginfo_t,
            std::ptr::null::<libc::timespec>(),
            8usize, // the kernel's sigset size
        ) as i32;
        if sig > 0 && sig != libc::SIGCHLD {
            // Every process of the namespace but init itself.
            libc::kill(-1, sig);
            continue;
        }
        loop {
            let mut st = 0;
            let r = libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL);
            if r == cmd {
                // Kill and reap what is left before reporting: once cordon reads the record,
                // the run is over (init's own exit then only tears the namespaces down).
                libc::kill(-1, libc::SIGKILL);
                let mut other = 0;
                while libc::waitpid(-1, &mut other, libc::__WALL) > 0 || errno() == libc::EINTR {}
                record(d.report, b'X', 0, st);
                libc::_exit(0);
            }
            if r <= 0 {
                break;
            }
        }
    }
}

/// The command: pid 2 of the namespace. Raw syscalls only, then execve.
unsafe fn command(d: &InitData) -> ! {
    let fail = |step: u8| -> ! {
        record(d.report, b'S', step, errno());
        libc::_exit(125)
    };
    if libc::setsid() < 0 {
        fail(8);
    }
    // Two steps, so that a source that happens to be 0, 1 or 2 (cordon's own stdin closed) is
    // not overwritten before it is used: first above stdio, then into place.
    let mut moved = [-1; 3];
    for (n, &fd) in d.stdio.iter().enumerate() {
        if fd >= 0 {
            moved[n] = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
            if moved[n] < 0 {
                fail(16);
            }
        }
    }
    for (n, &fd) in moved.iter().enumerate() {
        if fd >= 0 && libc::dup2(fd, n as libc::c_int) < 0 {
            fail(16);
        }
    }
    if d.controlling_tty >= 0 && libc::ioctl(d.controlling_tty, libc::TIOCSCTTY, 0) != 0 {
        fail(17);
    }
    if libc::syscall(
        libc::SYS_close_range,
        3u32,
        u32::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    ) != 0
    {
        fail(9);
    }
    if libc::chdir(d.cwd.as_ptr()) != 0 {
        fail(10);
    }
    for &(resource, value) in d.rlimits {
        let lim = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        if libc::setrlimit(resource, &lim) != 0 {
            fail(11);
        }
    }
    if d.drop_caps && !super::drop_capabilities(d.last_cap) {
        fail(12);
    }
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        fail(13);
    }
    if libc::syscall(libc::SYS_landlock_restrict_self, d.ruleset, 0u32) != 0 {
        fail(14);
    }
    if let Err(e) = crate::seccomp::install(d.programs) {
        *libc::__errno_location() = e;
        fail(15);
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    // Like execvp: a missing candidate tries the next; a refused one is remembered.
    let mut err = libc::ENOENT;
    let mut denied = false;
    for path in d.candidates {
        libc::execve(path.as_ptr(), d.argv, d.envp);
        match errno() {
            libc::ENOENT | libc::ENOTDIR => {}
            libc::EACCES => denied = true,
            e => {
                err = e;
                break;
            }
        }
    }
    if denied && (err == libc::ENOENT) {
        err = libc::EACCES;
    }
    record(d.report, b'E', 0, err);
    libc::_exit(127)
}

/// What a live probe found: can the Landlock backend make its namespaces here?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// Namespaces, private mounts and a fresh /proc work; `task_cap` says whether this
    /// kernel took the namespace's own pid_max (Linux 6.14 and later); `proxy` is `None`
    /// when loopback came up in the new network namespace and the proxy's listener was made
    /// there (what `sandbox.network = "proxy"` needs), else the step that failed.
    Available {
        user: bool,
        task_cap: bool,
        proxy: Option<&'static str>,
    },
    /// The kernel refused at this step, with this error.
    Unavailable(String),
}

/// Makes the namespaces a run would make (as the caller: with a user namespace unless root)
/// in a throw-away child, mounts /proc there and sets its pid_max, then brings loopback up
/// and makes the proxy's listener as `sandbox.network = "proxy"` does.
pub fn probe() -> Probe {
    let user = unsafe { libc::geteuid() } != 0;
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1\n");
    let gid_map = format!("{gid} {gid} 1\n");
    let cap = format!("{TASK_CAP}\n");
    let mut flags =
        libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWNS | libc::CLONE_NEWNET;
    if user {
        flags |= libc::CLONE_NEWUSER;
    }
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Probe::Unavailable(format!("clone: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        // Exit code: 0 ok with pid_max, 1 ok without, +2 loopback or +4 the listener failed
        // (the proxy); 10 + step on failure.
        unsafe {
            let step = if user && !write_file(c"/proc/self/setgroups", b"deny") {
                1
            } else if user && !write_file(c"/proc/self/gid_map", gid_map.as_bytes()) {
                2
            } else if user && !write_file(c"/proc/self/uid_map", uid_map.as_bytes()) {
                3
            } else if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                4
            } else if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
            {
                5
            } else {
                let mut code = if write_file(c"/proc/sys/kernel/pid_max", cap.as_bytes()) {
                    0
                } else {
                    1
                };
                if !crate::proxy::loopback_up() {
                    code |= 2;
                } else if crate::proxy::listener(crate::PROXY_PORT) < 0 {
                    code |= 4;
                }
                libc::_exit(code);
            };
            libc::_exit(10 + step);
        }
    }
    let mut st = 0;
    if unsafe { libc::waitpid(pid as libc::pid_t, &mut st, 0) } != pid as libc::pid_t
        || !libc::WIFEXITED(st)
    {
        return Probe::Unavailable("the probe child did not exit normally".into());
    }
    match libc::WEXITSTATUS(st) {
        code @ 0..=7 => Probe::Available {
            user,
            task_cap: code & 1 == 0,
            proxy: match code & 6 {
                0 => None,
                2 => Some(STEPS[18]),
                _ => Some(STEPS[19]),
            },
        },
        n => Probe::Unavailable(format!(
            "the kernel refused {}",
            STEPS.get(n as usize - 10).copied().unwrap_or("a step")
        )),
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn cvt(r: i32) -> io::Result<i32> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(program: &str, path: Option<&str>) -> Spec {
        Spec {
            program: program.into(),
            args: vec![],
            cwd: "/".into(),
            env: path
                .map(|p| vec![("PATH".into(), p.into())])
                .unwrap_or_default(),
            timeout: None,
            stdio: Default::default(),
            cancel: None,
            proxy: None,
        }
    }

    #[test]
    fn exec_candidates_follow_execvp() {
        let names = |s: &Spec| -> Vec<String> {
            exec_candidates(s)
                .unwrap()
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(&spec("./x", Some("/bin"))), ["./x"]);
        assert_eq!(names(&spec("/usr/bin/x", None)), ["/usr/bin/x"]);
        assert_eq!(names(&spec("x", Some("/a::/b"))), ["/a/x", "./x", "/b/x"]);
        assert_eq!(names(&spec("x", None)), ["/bin/x", "/usr/bin/x"]);
        assert!(exec_candidates(&spec("a\0b", None)).is_err());
    }

    #[test]
    fn this_machine_makes_the_namespaces() {
        // The development and CI machines allow them (as root, and to users); the escape
        // suite's Landlock runs depend on it.
        assert!(matches!(probe(), Probe::Available { .. }), "{:?}", probe());
    }
}
