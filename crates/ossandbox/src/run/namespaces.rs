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
//!     │ ─── "go" (release) ─▶│   [Io::release] cordon waits for it (the decision's record
//!     │                     │   syncing) while init does the above; "go" on a pipe once it
//!     │                     │   returned Ok, else init is SIGKILLed before the fork below
//!     │                     │   vfork ─▶ command (pid 2, or 3 under the supervisor, init's
//!     │                     │           thread 2): setsid, rlimits, caps dropped,
//!     │                     │           no_new_privs, landlock_restrict_self, seccomp, execve
//!     │                     │   [Plan::inotify] a thread of init's own (the inotify supervisor,
//!     │                     │           `super::inotify`) joins the command's Landlock domain and
//!     │                     │           vforks the command, which inherits that domain; the
//!     │                     │           thread then drops its capabilities and answers the
//!     │                     │           command's inotify_add_watch calls
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
//! `N` the namespaces could not be made (the caller refuses the run, or falls back to seccomp
//! argument filters where the probe said no: `lib.rs::without_namespaces`),
//! `S` a confinement step failed, `E` every exec failed, `X` the command's wait status.
//!
//! The clone itself, the maps and the tie to cordon are [`super::nsclone`]'s, shared with
//! bwrap's pid 1. Everything after `clone` is raw syscalls on data prepared here, in the
//! parent: the child of a multithreaded process may not allocate or take locks. That code is
//! [`init`], [`supervisor`] and
//! [`command`] (with `record`, `write_file`, [`super::drop_capabilities`],
//! [`crate::seccomp::install`] and the raw functions of [`crate::proxy`]); each unsafe block
//! there says what memory the call touches, who owns the descriptor, and how a failure ends
//! the run before the command starts. The command reaches neither cordon
//! (another PID namespace) nor init in a harmful way: init's main thread is outside the Landlock
//! domain, so Landlock's scoping refuses its signals and its ptrace-class /proc files (its
//! supervisor thread, inside, is not dumpable: `super::inotify`), and seccomp refuses
//! `prlimit64` on any process but the caller.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use super::nsclone::{self, write_file, Cloned, Exec, Identity, RawIdentity, Untied};
use super::{Outcome, Spec};
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
    /// Landlock rules for the fresh /proc, and for the devpts instance on /dev/pts when
    /// [`Plan::pts`] (rules belong to inodes: init adds them once it mounted these).
    pub proc_rules: Vec<ProcRule>,
    /// Init mounts a devpts instance of the command's own on /dev/pts (see [`own_devpts`]).
    pub pts: bool,
    /// The protected paths' mounts ([`crate::protect::Plan`]: its anchors, then its covers),
    /// made by init in the command's mount namespace before the command exists. Landlock
    /// forbids a restricted task every mount, umount and pivot_root, so the command cannot
    /// undo them. Any failure refuses the run.
    pub protect: Vec<crate::protect::Mount>,
    /// Init makes the whole mount tree read-only (`mount_setattr(/, AT_RECURSIVE,
    /// MOUNT_ATTR_RDONLY)`) and gives write back only to these, each as it was (see
    /// [`read_only_tree`]); the fresh /proc is made read-only too. `None`: the tree is left
    /// as it is.
    pub read_only: Option<Vec<Writable>>,
    /// The command's `inotify_add_watch` calls go to a supervisor in its Landlock domain,
    /// which adds only the watches the command could read (see `super::inotify`).
    pub inotify: bool,
}

/// A writable root of the policy (a real path, no link on the way), and the device and inode
/// cordon saw there: init refuses the run if it finds another directory at that path.
#[derive(Debug, Clone)]
pub struct Writable {
    pub path: std::path::PathBuf,
    pub dev: u64,
    pub ino: u64,
    /// Where the command sees it, when not at `path`: the run's private TMPDIR at `/tmp`, as
    /// bwrap shows it (see `lib.rs::private_tmp_at_tmp`).
    pub at: Option<std::path::PathBuf>,
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
    Start(Error),
}

/// Steps whose failure the child reports; the index is the record's step byte.
const STEPS: [&str; 36] = [
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
    "signal mask",
    "waiting for cordon's go",
    "opening a protected path without following links",
    "mounting over a protected path",
    "checking that the protected path shows its mount",
    "making the mount tree read-only",
    "giving a writable root its write access back",
    "keeping the fresh /proc read-only",
    "mounting a devpts instance of the command's own on /dev/pts",
    "the inotify supervisor's socket pair",
    "starting the inotify supervisor's thread",
    "installing the inotify filter with a listener",
    "handing the inotify filter's listener to its supervisor",
    "making the inotify supervisor not dumpable",
    "the working directory entered is not the checked one",
];

/// The step of the check after the command's chdir (see [`crate::run::cwd_is`]).
const CWD_STEP: u8 = 35;

/// The step of [`own_devpts`].
const PTS_STEP: u8 = 29;

/// The read-only tree's steps (see [`read_only_tree`]); a `W` record before the `S` one names
/// the writable root (its index in [`Plan::writable`]).
const TREE_STEP: u8 = 26;

/// The first of the protected-path steps (see [`protect`]); a `P` record before the `S` one
/// names the mount (its index in [`Plan::protect`]).
const PROTECT_STEP: u8 = 23;

const REC: usize = 6;

fn cstring(b: &[u8]) -> Result<CString, Error> {
    CString::new(b).map_err(|_| {
        Error::Io(io::Error::other(
            "a NUL byte in the command line, environment or a path",
        ))
    })
}

/// Runs `spec` in new namespaces under `c`; see the module docs. `release` (taken once
/// called) is waited for while init builds the namespaces: init forks the command only after
/// cordon's "go" byte on a pipe, which cordon writes once it returned `Ok`.
pub fn run(
    c: Confinement,
    spec: &Spec,
    plan: &Plan,
    release: &mut Option<super::Release>,
) -> Result<Outcome, Attempt> {
    let parent = |e: io::Error| Attempt::Start(Error::Io(e));
    let start = |e: Error| Attempt::Start(e);

    // Everything the children need, allocated now.
    let exec = Exec::new(spec).map_err(start)?;
    let candidates = exec_candidates(spec).map_err(start)?;
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
        .collect::<Result<_, Error>>()
        .map_err(start)?;
    let protect: Vec<(CString, crate::protect::Cover)> = plan
        .protect
        .iter()
        .map(|m| Ok((cstring(m.at.as_os_str().as_bytes())?, m.cover)))
        .collect::<Result<_, Error>>()
        .map_err(start)?;
    let writable: Vec<(CString, u64, u64, CString)> = plan
        .read_only
        .iter()
        .flatten()
        .map(|w| {
            let path = cstring(w.path.as_os_str().as_bytes())?;
            let at = match &w.at {
                Some(at) => cstring(at.as_os_str().as_bytes())?,
                None => path.clone(),
            };
            Ok((path, w.dev, w.ino, at))
        })
        .collect::<Result<_, Error>>()
        .map_err(start)?;
    // Init's descriptors for the writable roots (destination, clone), kept here: nothing is
    // allocated after the clone.
    let held: Vec<std::cell::Cell<RawFd>> = vec![std::cell::Cell::new(-1); 2 * writable.len()];
    let pid_max = format!("{TASK_CAP}\n");
    // The command's stack while it shares init's memory (init → command is a vfork, see
    // `init`), allocated here: nothing is allocated after the clone.
    let mut command_stack = vec![0u8; COMMAND_STACK];
    // The inotify supervisor's stack (a thread of init's, see `init`), allocated here too.
    let mut supervisor_stack = vec![0u8; if plan.inotify { SUPERVISOR_STACK } else { 0 }];
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
    let inotify_prog = crate::seccomp::inotify_program();
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
    // Read by init before the command starts: the forwarded ports' listeners, after the proxy's.
    let proxy_forwards: Vec<u16> = proxy
        .as_ref()
        .map(|(_, h, _)| h.forwards.clone())
        .unwrap_or_default();

    // Forwarded signals are read from a signalfd; init waits for them (and SIGCHLD) with
    // sigtimedwait, so it needs no handlers; the command unblocks everything before exec.
    let sigfd = super::blocked_signalfd(&FORWARDED).map_err(parent)?;
    let (report_r, report_w) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| parent(e.into()))?;
    // Non-blocking (the read end only; init's write end is a description of its own):
    // records are read as they come, and a namespace that would not die in time cannot hold
    // us here either.
    rustix::fs::fcntl_setfl(&report_r, rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| parent(e.into()))?;
    let report = report_w.as_raw_fd();
    // The maps of the user namespace, and cordon's pidfd init checks.
    let id = Identity::new(plan.user).map_err(parent)?;
    // The pipe init waits on before it forks the command (only when there is a release).
    let go = match release {
        Some(_) => Some(
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                .map_err(|e| parent(e.into()))?,
        ),
        None => None,
    };
    let go_fd = go.as_ref().map_or(-1, |(r, _)| r.as_raw_fd());

    let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWNS;
    if plan.user {
        flags |= libc::CLONE_NEWUSER;
    }
    if plan.net {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: the child only calls `init`, which makes raw system calls on data allocated
    // before the clone and never returns.
    let (pid, pidfd) = match unsafe { nsclone::clone(flags) } {
        Ok(Cloned::Parent { pid, pidfd }) => (pid, pidfd),
        Err(e) if nsclone::refused(&e) => return Err(Attempt::Unavailable(e)),
        Err(e) => return Err(parent(e)),
        // Init. Never returns.
        // SAFETY: we are the child of the clone above, pid 1 of the new namespaces, and
        // every pointer in InitData (argv/envp arrays, CStrings, slices) points at data
        // allocated before the clone and never freed in this copy of the address space.
        Ok(Cloned::Child) => unsafe {
            init(&InitData {
                report,
                id: id.raw(),
                pid_max: pid_max.as_bytes(),
                proc_rules: &proc_rules,
                protect: &protect,
                read_only: plan.read_only.is_some(),
                pts: plan.pts,
                writable: &writable,
                held: &held,
                ruleset,
                rlimits,
                drop_caps: drop_caps_all,
                last_cap,
                programs,
                inotify: plan.inotify.then_some(&inotify_prog),
                candidates: &candidates,
                exec: &exec,
                stdio,
                controlling_tty,
                proxy_fd,
                proxy_port,
                proxy_forwards: &proxy_forwards,
                go_fd,
                command_stack: command_stack.as_mut_ptr_range().end,
                supervisor_stack: supervisor_stack.as_mut_ptr_range().end,
                command_pid: AtomicI32::new(0),
                command_end: AtomicI32::new(-1),
            })
        },
    };
    drop(report_w);
    // Only init may hold the namespace's end: a closed pair is how cordon learns it failed.
    let proxy = proxy.map(|((mine, theirs), handoff, _)| {
        drop(theirs);
        (mine, handoff)
    });
    drop(id);
    drop(c.landlock);
    let go = go.map(|(r, w)| {
        drop(r);
        w
    });

    reap_finished_inits();
    super::reap_bwrap_inits();
    // The release while init builds the namespaces (mounts /proc, adds its rules, makes the
    // proxy's listener); refused, init is killed before it forked the command.
    if let (Some(r), Some(go)) = (release.take(), &go) {
        let released = r.wait();
        if released.is_ok() {
            // A write that fails finds nobody to read it: the child is gone before the
            // command (its own report says why), and nothing waits for this byte.
            let _ = rustix::io::write(go, b"G");
        }
        if let Err(e) = released {
            // Init is not reaped yet, so its pid is still its own; killing init ends the
            // whole namespace before the command could start.
            send(&pidfd, libc::SIGKILL);
            let mut st = 0;
            // SAFETY: waitpid writes one int into `st`; `pid` is our unreaped init, just
            // SIGKILLed, so this returns once it is gone.
            unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
            return Err(start(e));
        }
    }
    drop(go);
    // The listener first: init starts the command only after cordon said "go", which it says
    // only once the proxy has its listener. Any failure kills the namespace before that.
    let mut handoff_error = None;
    if let Some((mine, handoff)) = &proxy {
        if let Err(e) = crate::proxy::hand_over(mine, handoff) {
            // Init is not reaped yet, so its pid is still its own; killing init ends the
            // whole namespace before the command could start.
            send(&pidfd, libc::SIGKILL);
            handoff_error = Some(e);
        }
    }
    drop(proxy);
    let mut bytes = Vec::new();
    let cancel = spec.cancel.as_ref().map(|f| f.as_raw_fd());
    let outcome = supervise(
        pid,
        pidfd,
        &sigfd,
        &report_r,
        &mut bytes,
        spec.timeout,
        cancel,
    );
    let _ = io::Read::read_to_end(&mut std::fs::File::from(report_r), &mut bytes);
    let mut exec_errno = None;
    let mut status = None;
    let mut protecting = None;
    let mut giving_back = None;
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
            b'P' => protecting = plan.protect.get(value as usize),
            b'W' => giving_back = plan.read_only.iter().flatten().nth(value as usize),
            b'S' => {
                let e = io::Error::from_raw_os_error(value);
                if rec[1] == PTS_STEP {
                    return Err(start(Error::other(format!(
                        "cannot give the command a devpts instance of its own on /dev/pts (without it a pty the command makes would be the host's, allocated from every terminal's pool): {step}: {e}; the run is refused"
                    ))));
                }
                if rec[1] == CWD_STEP {
                    return Err(start(crate::run::cwd_changed(&spec.cwd)));
                }
                if rec[1] >= TREE_STEP {
                    return Err(start(Error::other(match giving_back.filter(|_| rec[1] == TREE_STEP + 1) {
                        Some(w) => format!(
                            "cannot give {} its write access back in the command's read-only mount tree: {step}: {e}; the run is refused",
                            w.path.display()
                        ),
                        None => format!(
                            "cannot make the command's mount tree read-only (what keeps root's command from changing system files' modes, owners and times): {step}: {e}; the run is refused"
                        ),
                    })));
                }
                return Err(start(match protecting.filter(|_| rec[1] >= PROTECT_STEP) {
                    Some(m) => Error::other(format!(
                        "cannot keep {} read-only in the command's mount namespace ({}): {step}: {e}; the run is refused",
                        m.at.display(),
                        m.why
                    )),
                    None => Error::Setup(step, e),
                }));
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
            Error::NotFound(name)
        } else {
            Error::NotExecutable(name, io::Error::from_raw_os_error(e))
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
    /// is over. Init's own exit (tearing the namespaces down, ~1 ms) goes on meanwhile, while
    /// cordon scans what the run left; it is waited for only before the run's private TMPDIR
    /// is removed ([`await_finished_inits`]).
    Reported,
}

/// Inits that reported but had not exited yet when their run returned, with their pidfds.
static UNREAPED: std::sync::Mutex<Vec<(libc::pid_t, OwnedFd)>> = std::sync::Mutex::new(Vec::new());

/// At most this long for [`await_finished_inits`]: init exits right after its report, so only
/// a machine so loaded that it barely runs it comes near this.
const INIT_EXIT_WAIT: Duration = Duration::from_secs(1);

/// Reaps the inits of earlier runs that have exited since (a long-lived cordon, such as the
/// MCP server, must not collect zombies).
pub(crate) fn reap_finished_inits() {
    let mut pending = UNREAPED.lock().unwrap_or_else(|e| e.into_inner());
    pending.retain(|(pid, _)| {
        let mut st = 0;
        // SAFETY: waitpid writes one int into `st` on this frame and never blocks (WNOHANG).
        // `pid` is an init of ours not yet reaped, so the id cannot have been reused.
        unsafe { libc::waitpid(*pid, &mut st, libc::WNOHANG | libc::__WALL) == 0 }
    });
}

/// Waits (at most [`INIT_EXIT_WAIT`]) until the inits that reported have exited, then reaps
/// them: called before a run's private TMPDIR is removed.
///
/// Init gives the TMPDIR its write access back with a mount on the directory itself
/// ([`read_only_tree`]). While init's mount namespace lives, removing the directory from
/// cordon's namespace makes the kernel take that mount away from init's first, and freeing a
/// mount waits for an RCU grace period (`synchronize_rcu_expedited` in `namespace_unlock`):
/// 2–16 ms on a loaded two-CPU VM, on every Landlock run whose scan ended before init's
/// teardown did, and on cordon's way out. Init's own exit frees the same mounts with the same
/// wait, but beside cordon's after-run scan; once it has exited (its pidfd is readable only
/// after its namespaces are released) the directory is a plain one again. A namespace that
/// is still there after the wait (an init the machine did not run in time) costs only that
/// wait: the removal works either way.
pub(crate) fn await_finished_inits() {
    let pending = UNREAPED.lock().unwrap_or_else(|e| e.into_inner());
    if pending.is_empty() {
        return;
    }
    let deadline = Instant::now() + INIT_EXIT_WAIT;
    for (_, pidfd) in pending.iter() {
        loop {
            let mut fd = libc::pollfd {
                fd: pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let wait_ms = super::poll_timeout(Instant::now(), Some(deadline));
            // SAFETY: poll reads and writes the one pollfd on this frame; `pidfd` is open
            // (owned by `pending`, which the lock keeps).
            let n = unsafe { libc::poll(&mut fd, 1, wait_ms) };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
    }
    drop(pending);
    reap_finished_inits();
}

/// Has init written its final record (the command's wait status)?
fn has_status(bytes: &[u8]) -> bool {
    bytes.chunks_exact(REC).any(|r| r[0] == b'X')
}

/// Waits for init's final record or its exit, forwarding signals and collecting records into
/// `bytes`; every wait after a kill is bounded.
fn supervise(
    pid: libc::pid_t,
    pidfd: OwnedFd,
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
                send(&pidfd, libc::SIGKILL);
                killed = Some(why);
                kill_by = Some(kill_deadline(now));
                continue;
            }
        }
        let wait_ms = super::poll_timeout(now, next);
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
        // SAFETY: poll reads and writes the 4 pollfds of `fds` on this frame; `pidfd`, `sigfd`
        // and `report` are open (borrowed for this call), the cancel entry is the caller's
        // open descriptor, and a -1 entry is skipped. (Not rustix's poll: its PollFd cannot
        // hold the -1.)
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 4, wait_ms) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            send(&pidfd, libc::SIGKILL);
            killed.get_or_insert(Ended::KilledAfter(libc::SIGKILL));
            kill_by.get_or_insert(kill_deadline(Instant::now()));
            continue;
        }
        if fds[1].revents & libc::POLLIN != 0 {
            // Read even after the kill, so that the descriptor does not stay readable.
            if let Some(sig) = super::read_signal(sigfd).filter(|_| killed.is_none()) {
                send(&pidfd, sig);
                grace.get_or_insert((Instant::now() + GRACE, sig));
            }
        }
        if fds[3].revents & (libc::POLLIN | libc::POLLHUP) != 0 && killed.is_none() {
            send(&pidfd, libc::SIGKILL);
            killed = Some(Ended::Cancelled);
            kill_by = Some(kill_deadline(Instant::now()));
            continue;
        }
        if fds[2].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
            let mut buf = [0u8; 64];
            let r = rustix::io::read(report, &mut buf).map_or(-1, |n| n as isize);
            if r > 0 {
                bytes.extend_from_slice(&buf[..r as usize]);
            } else if r == 0 {
                report_open = false;
            }
            if killed.is_none() && has_status(bytes) {
                let mut st = 0;
                // SAFETY: waitpid writes one int into `st`; WNOHANG; `pid` is our unreaped
                // init.
                if unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) } == 0 {
                    UNREAPED
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((pid, pidfd));
                }
                return Ended::Reported;
            }
        }
        if fds[0].revents & libc::POLLIN != 0 {
            break;
        }
    }
    let mut st = 0;
    // SAFETY: as above.
    let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) };
    if r == 0 {
        UNREAPED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((pid, pidfd));
    }
    match killed {
        Some(k) => k,
        None if r == pid => Ended::Init(st),
        None => Ended::KilledAfter(libc::SIGKILL),
    }
}

/// Sends `sig` to init through its pidfd (never to a reused pid). Unchecked: it fails only
/// when init is gone already (ESRCH), which is what a kill wants.
fn send(pidfd: &OwnedFd, sig: i32) {
    // SAFETY: pidfd_send_signal with a null siginfo (the kernel fills in a SI_USER one) and
    // flags 0 reads no memory; `pidfd` is open (borrowed). (libc, not rustix: the signals
    // forwarded arrive as numbers from the signalfd.)
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
fn exec_candidates(spec: &Spec) -> Result<Vec<CString>, Error> {
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
    /// The user namespace's maps and cordon's pidfd.
    id: RawIdentity<'a>,
    pid_max: &'a [u8],
    proc_rules: &'a [(CString, u64, u64)],
    /// The protected paths' mounts, in order.
    protect: &'a [(CString, crate::protect::Cover)],
    /// [`Plan::read_only`]: the tree read-only but for `writable` (path, device, inode).
    read_only: bool,
    /// [`Plan::pts`].
    pts: bool,
    writable: &'a [(CString, u64, u64, CString)],
    /// Two slots per writable root, for [`read_only_tree`]'s descriptors.
    held: &'a [std::cell::Cell<RawFd>],
    ruleset: RawFd,
    rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    drop_caps: bool,
    last_cap: u32,
    programs: &'a [Program],
    /// [`Plan::inotify`]: the program whose listener goes to the supervisor.
    inotify: Option<&'a Program>,
    candidates: &'a [CString],
    /// The command line, environment and working directory.
    exec: &'a Exec,
    /// What the command gets as descriptors 0, 1, 2 (-1: init's own, which are cordon's).
    stdio: [RawFd; 3],
    /// The descriptor (0, 1 or 2, a pty slave) the command makes its controlling terminal.
    controlling_tty: RawFd,
    /// The namespace's end of the proxy's handoff pair (-1: not `network = "proxy"`).
    proxy_fd: RawFd,
    /// The proxy's port in the namespace.
    proxy_port: u16,
    /// `[network.forward]`'s ports: a listener each, sent after the proxy's.
    proxy_forwards: &'a [u16],
    /// The pipe init reads cordon's "go" from before it forks the command (-1: none).
    go_fd: RawFd,
    /// The top of the stack the command runs on until its exec ([`COMMAND_STACK`] bytes).
    command_stack: *mut u8,
    /// [`Plan::inotify`]: the top of the supervisor thread's stack ([`SUPERVISOR_STACK`]
    /// bytes).
    supervisor_stack: *mut u8,
    /// The command's pid, written by the kernel at its clone (`CLONE_PARENT_SETTID`) before it
    /// runs, whichever of init's threads made it: init's main thread reaps it and reports its
    /// status. 0 until then.
    command_pid: AtomicI32,
    /// [`Plan::inotify`]: the command's end of the socket pair it sends its listener to the
    /// supervisor over, made by the supervisor before the vfork.
    command_end: AtomicI32,
}

/// The command's stack between init's vfork and its exec: `command` uses a few kilobytes
/// (the seccomp filters and the exec candidates are read from `InitData`, not copied).
const COMMAND_STACK: usize = 256 * 1024;
/// The inotify supervisor thread's stack: its frames hold two PATH_MAX buffers at most.
const SUPERVISOR_STACK: usize = 256 * 1024;

/// `p` opened `O_PATH` for a mount, following no link anywhere on the way (a link planted
/// since cordon's check is a refusal, never a redirection of the mount).
fn open_unfollowed(p: &std::ffi::CStr) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
    openat2(
        CWD,
        p,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
}

/// A detached copy of the mount tree at `fd`, submounts included.
fn clone_tree(fd: std::os::fd::BorrowedFd) -> rustix::io::Result<OwnedFd> {
    use rustix::mount::{open_tree, OpenTreeFlags};
    open_tree(
        fd,
        c"",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_EMPTY_PATH
            | OpenTreeFlags::AT_RECURSIVE,
    )
}

/// `mount_setattr(dirfd, path, flags)` making the mounts it names read-only (rustix has no
/// mount_setattr); the errno on failure.
///
/// # Safety
/// One system call reading `path` and a `struct mount_attr` from this frame; no allocation.
unsafe fn set_read_only(
    dirfd: RawFd,
    path: &std::ffi::CStr,
    flags: libc::c_int,
) -> Result<(), i32> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: libc::MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads the C string and one `struct mount_attr` (its exact layout,
    // size passed) from this frame. It changes mounts of this mount namespace only.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Why [`move_and_check`] failed: the move itself, or the check that `at` shows the mount.
enum Moved {
    Move(i32),
    Check(i32),
}

/// Moves the detached `tree` onto `dst`; then `at`, opened again without following links,
/// must show that very mount (its mount id): a rename between the open and the mount is a
/// refusal (EXDEV).
fn move_and_check(
    tree: std::os::fd::BorrowedFd,
    dst: std::os::fd::BorrowedFd,
    at: &std::ffi::CStr,
) -> Result<(), Moved> {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    use rustix::mount::{move_mount, MoveMountFlags};
    use std::os::fd::AsFd;
    move_mount(
        tree,
        c"",
        dst,
        c"",
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
    )
    .map_err(|e| Moved::Move(e.raw_os_error()))?;
    let check = |e: rustix::io::Errno| Moved::Check(e.raw_os_error());
    let shown = open_unfollowed(at).map_err(check)?;
    let id = |fd: std::os::fd::BorrowedFd| {
        statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID).map(|s| s.stx_mnt_id)
    };
    if id(shown.as_fd()).map_err(check)? != id(tree).map_err(check)? {
        return Err(Moved::Check(libc::EXDEV));
    }
    Ok(())
}

/// One mount of the protected-path plan onto `at`, from descriptors only: `at` is opened
/// without following any link (a link planted since cordon's check refuses the run, it cannot
/// redirect the mount), the mount is made on that descriptor with the mount API (`open_tree`
/// or `fsmount`, `mount_setattr`, `move_mount`), and `at`, opened again the same way, must
/// then show that very mount (a rename between the open and the mount refuses the run).
/// Returns the failed step and errno.
///
/// # Safety
/// Raw system calls only (rustix's, on `CStr`s: no allocation, no lock), so it may run in
/// init between clone and exec. Every descriptor it opens is closed before it returns.
unsafe fn protect(at: &std::ffi::CStr, cover: crate::protect::Cover) -> Result<(), (u8, i32)> {
    use crate::protect::Cover;
    use rustix::mount::{
        fsconfig_create, fsmount, fsopen, FsMountFlags, FsOpenFlags, MountAttrFlags,
    };
    use std::os::fd::AsFd;
    let at_step = |step: u8| move |e: rustix::io::Errno| (step, e.raw_os_error());
    let (open_step, mount_step, check_step) = (PROTECT_STEP, PROTECT_STEP + 1, PROTECT_STEP + 2);
    let dst = open_unfollowed(at).map_err(at_step(open_step))?;
    let tree = match cover {
        // Onto itself: the same inode, so the profile's Landlock rules still apply to it.
        Cover::Anchor | Cover::ReadOnly => clone_tree(dst.as_fd()),
        Cover::Null => open_unfollowed(c"/dev/null").and_then(|null| clone_tree(null.as_fd())),
        Cover::EmptyDir => fsopen(c"tmpfs", FsOpenFlags::FSOPEN_CLOEXEC).and_then(|fs| {
            fsconfig_create(&fs)?;
            fsmount(
                &fs,
                FsMountFlags::FSMOUNT_CLOEXEC,
                MountAttrFlags::MOUNT_ATTR_RDONLY
                    | MountAttrFlags::MOUNT_ATTR_NOSUID
                    | MountAttrFlags::MOUNT_ATTR_NODEV
                    | MountAttrFlags::MOUNT_ATTR_NOEXEC,
            )
        }),
    }
    .map_err(at_step(mount_step))?;
    if matches!(cover, Cover::ReadOnly | Cover::Null) {
        // SAFETY: `tree` is the detached mount above, read-only as a whole.
        unsafe {
            set_read_only(
                std::os::fd::AsRawFd::as_raw_fd(&tree),
                c"",
                libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            )
        }
        .map_err(|e| (mount_step, e))?;
    }
    move_and_check(tree.as_fd(), dst.as_fd(), at).map_err(|m| match m {
        Moved::Move(e) => (mount_step, e),
        Moved::Check(e) => (check_step, e),
    })
}

/// A devpts instance of the command's own on `/dev/pts`, with the options bwrap's `--dev`
/// gives its own (`ptmxmode=0666,mode=620`; a mount made with the mount API is always a new
/// instance). The host's `/dev/ptmx` then opens this instance: since Linux 4.7 the kernel
/// takes the devpts mounted at `pts` beside the `ptmx` node that was opened (and where
/// `/dev/ptmx` is a link to `pts/ptmx`, it names this instance's node). So a pty the command
/// makes is its own, counted in its own instance, and its slave can be opened (`script`,
/// `ssh -t`, `expect` work); the host's terminals are not in the command's view at all. Not
/// read-only: nothing of the host is in it. `/dev/pts` is opened without following links and
/// must show the mount afterwards (mount id). Returns the errno.
///
/// # Safety
/// Raw system calls only (rustix's, on `CStr`s: no allocation, no lock), so it may run in
/// init between clone and exec. Every descriptor it opens is closed before it returns.
unsafe fn own_devpts() -> Result<(), i32> {
    use rustix::mount::{
        fsconfig_create, fsconfig_set_string, fsmount, fsopen, FsMountFlags, FsOpenFlags,
        MountAttrFlags,
    };
    use std::os::fd::AsFd;
    let errno = |e: rustix::io::Errno| e.raw_os_error();
    let dst = open_unfollowed(c"/dev/pts").map_err(errno)?;
    let fs = fsopen(c"devpts", FsOpenFlags::FSOPEN_CLOEXEC).map_err(errno)?;
    fsconfig_set_string(&fs, c"ptmxmode", c"0666").map_err(errno)?;
    fsconfig_set_string(&fs, c"mode", c"620").map_err(errno)?;
    // A run's ptys come from the pool every devpts instance but the host's shares (the host's
    // own keeps `kernel.pty.reserve`): a cap per run, so one run cannot take them all.
    fsconfig_set_string(&fs, c"max", crate::profile::PTY_MAX).map_err(errno)?;
    fsconfig_create(&fs).map_err(errno)?;
    let tree = fsmount(
        &fs,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NOSUID | MountAttrFlags::MOUNT_ATTR_NOEXEC,
    )
    .map_err(errno)?;
    move_and_check(tree.as_fd(), dst.as_fd(), c"/dev/pts")
        .map_err(|(Moved::Move(e) | Moved::Check(e))| e)
}

/// The whole mount tree read-only in one step, then write given back to each of `writable`
/// (path, device, inode) as it was: each root is opened without following links (and must be
/// the directory cordon saw), cloned with its submounts *before* the tree turns read-only (so
/// each mount keeps its own flags: a read-only mount inside a writable root stays read-only,
/// and nothing is cleared that the kernel locked), then the clone is moved back onto the root
/// and the root, opened again, must show it (mount id). A root that no longer exists is
/// skipped: nothing can be written there. Device nodes still work on a read-only mount; their
/// modes, owners and times cannot change (EROFS), nor can any system file's.
/// Returns the failed step, errno and the root's index (-1: none).
///
/// # Safety
/// Raw system calls only, on `CStr`s and `held`'s cells (two per root): no allocation, no
/// lock, so it may run in init between clone and exec. Descriptors left open on failure die
/// with init, which `_exit`s.
unsafe fn read_only_tree(
    writable: &[(CString, u64, u64, CString)],
    held: &[std::cell::Cell<RawFd>],
) -> Result<(), (u8, i32, i32)> {
    use rustix::fs::fstat;
    use std::os::fd::{AsFd, BorrowedFd, IntoRawFd};
    let (tree_step, back_step) = (TREE_STEP, TREE_STEP + 1);
    let fail = |i: usize| move |e: rustix::io::Errno| (back_step, e.raw_os_error(), i as i32);
    for (i, (path, dev, ino, at)) in writable.iter().enumerate() {
        let dst = match open_unfollowed(path) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => continue,
            Err(e) => return Err(fail(i)(e)),
        };
        let st = fstat(&dst).map_err(fail(i))?;
        if st.st_dev != *dev || st.st_ino != *ino {
            return Err((back_step, libc::EXDEV, i as i32));
        }
        let clone = clone_tree(dst.as_fd()).map_err(fail(i))?;
        // Shown elsewhere (the private TMPDIR at /tmp): the clone goes there instead, a
        // directory opened the same way (a link there is a refusal).
        let dst = if at.as_c_str() == path.as_c_str() {
            dst
        } else {
            open_unfollowed(at).map_err(fail(i))?
        };
        held[2 * i].set(dst.into_raw_fd());
        held[2 * i + 1].set(clone.into_raw_fd());
    }
    // SAFETY: the whole tree from "/", in this mount namespace (its mounts are private).
    unsafe { set_read_only(libc::AT_FDCWD, c"/", libc::AT_RECURSIVE) }
        .map_err(|e| (tree_step, e, -1))?;
    for (i, (_, _, _, at)) in writable.iter().enumerate() {
        let (dst, clone) = (held[2 * i].get(), held[2 * i + 1].get());
        if dst < 0 {
            continue;
        }
        // SAFETY: both were opened above and are closed only below, once.
        let (dst, clone) = unsafe { (BorrowedFd::borrow_raw(dst), BorrowedFd::borrow_raw(clone)) };
        move_and_check(clone, dst, at)
            .map_err(|(Moved::Move(e) | Moved::Check(e))| (back_step, e, i as i32))?;
        // SAFETY: ours, closed once, here.
        unsafe {
            libc::close(held[2 * i].get());
            libc::close(held[2 * i + 1].get());
        }
    }
    Ok(())
}

/// The vfork'd command's entry (see `init`): `arg` is init's `InitData`.
extern "C" fn command_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `&InitData` init passed to clone, alive (init is suspended until
    // this process execs or exits, and `command` does one or the other, never returning).
    unsafe { command(&*(arg as *const InitData)) }
}

/// Starts the command as a vfork (posix_spawn's way) from the calling thread of init, and
/// closes init's copies of its standard streams; false if the clone failed (errno set). The
/// command's pid is in `d.command_pid` from the clone on.
///
/// The command shares init's memory on a stack of its own until its exec, and the calling
/// thread waits meanwhile, so no copy of init's address space (a copy of cordon's) is made for
/// it. Only its memory is shared: its descriptors, working directory, limits, credentials,
/// Landlock domain, seccomp filters and signal handlers are its own (no CLONE_FILES, CLONE_FS,
/// CLONE_THREAD, CLONE_SIGHAND), as after a fork; it inherits the calling thread's
/// credentials and domain. What it writes in memory is its own stack, and errno (init's,
/// unread until init's next failed call).
///
/// # Safety
/// Only in init or its supervisor thread, with `d` as `init` received it; once per run.
unsafe fn spawn_command(d: &InitData) -> bool {
    // SAFETY: clone (glibc's wrapper) runs `command_entry` on the stack whose top
    // `d.command_stack` is (allocated before init's clone, unused by anyone else; the
    // wrapper aligns the stack pointer itself), with `d` as its argument, valid until it
    // execs or exits — the calling thread is suspended until then (CLONE_VFORK). The kernel
    // writes the child's pid into `d.command_pid` (an AtomicI32 in `d`, shared memory)
    // before the child runs (CLONE_PARENT_SETTID).
    let cmd = unsafe {
        libc::clone(
            command_entry,
            d.command_stack.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT_SETTID | libc::SIGCHLD,
            d as *const InitData as *mut libc::c_void,
            d.command_pid.as_ptr(),
        )
    };
    if cmd < 0 {
        return false;
    }
    // The command has its descriptors; init's copies would keep the relay from seeing the end
    // of the command's output (a pty reads EIO only once every slave is closed).
    for &fd in &d.stdio {
        if fd >= 0 {
            // SAFETY: init's copy of a descriptor only the command uses now; closed once.
            unsafe { libc::close(fd) };
        }
    }
    true
}

/// The supervisor thread's entry (see `init`): `arg` is init's `InitData`.
extern "C" fn supervisor_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `&InitData` init passed to clone, alive as long as the process.
    unsafe { supervisor(&*(arg as *const InitData)) }
}

/// The inotify supervisor, a thread of init (see `super::inotify`): joins the command's
/// Landlock domain, starts the command (which inherits that domain: the same one, so the
/// supervisor's open is the command's check, and its ptrace-class calls on the command are
/// allowed), drops its capabilities (the command's credentials), and answers the command's
/// `inotify_add_watch` calls until no task uses the filter; then this thread ends (init's
/// main thread reaps the command and reports).
///
/// # Safety
/// Only as the thread `init` starts, with `d` as `init` received it. Raw system calls only;
/// a failure records the step and ends init, so the run, with `_exit` (the whole process).
unsafe fn supervisor(d: &InitData) -> libc::c_int {
    let fail = |step: u8| -> ! {
        // SAFETY: `d.report` is the report pipe's write end, open (kept by init).
        unsafe { record(d.report, b'S', step, errno()) };
        // SAFETY: _exit (exit_group) ends init with all its threads; the namespace with it.
        unsafe { libc::_exit(125) }
    };
    // This thread's own credentials only: no_new_privs and the Landlock domain are per
    // thread (no LANDLOCK_RESTRICT_SELF_TSYNC), so init's main thread stays outside.
    // SAFETY: PR_SET_NO_NEW_PRIVS takes an integer flag; the unused arguments are 0.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        fail(13);
    }
    // SAFETY: landlock_restrict_self takes the ruleset descriptor (open, made by cordon) and
    // flags 0; no pointers.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, d.ruleset, 0u32) } != 0 {
        fail(14);
    }
    let mut pair = [-1; 2];
    // SAFETY: socketpair writes two ints into `pair` on this frame.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        fail(30);
    }
    d.command_end.store(pair[0], Ordering::Release);
    // Not dumpable before the command exists, so that no moment exists where the command
    // runs its own code and this memory (init's: dumpability belongs to the address space) is
    // open to it through /proc/1/task/TID/mem (the command's exec makes it dumpable again).
    // SAFETY: PR_SET_DUMPABLE takes an integer; no pointers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        fail(34);
    }
    // The command, from this thread: its credentials and domain are this thread's. It still
    // has this thread's capabilities, for its resource limits (raising one needs
    // CAP_SYS_RESOURCE), and drops them itself before its exec.
    // SAFETY: `d` is init's (this function's contract).
    if !unsafe { spawn_command(d) } {
        fail(7);
    }
    // Now the command's capabilities (none): only then is the open below the command's check.
    // Before this, nothing was answered, and the command could not trace this thread (its
    // capabilities were not a subset of the command's). One capset, not the command's whole
    // drop: this thread never execs, so its bounding set is never used.
    // SAFETY: one system call on stack memory, this thread's credentials only.
    if d.drop_caps && !unsafe { super::clear_capabilities() } {
        fail(12);
    }
    // Nothing of init's but the pair's end: this descriptor table is this thread's own (no
    // CLONE_FILES), so none of init's descriptors (cordon's standard streams, the report
    // pipe, the ruleset) is in a table of the command's domain.
    // SAFETY: close_range takes no pointers; it closes this thread's copies only.
    unsafe {
        if pair[1] > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (pair[1] - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (pair[1] + 1) as u32, u32::MAX, 0u32);
    }
    // SAFETY: `pair[1]` is open, this thread's to use and close; raw calls on its stack.
    unsafe { super::inotify::serve(pair[1]) };
    0
}

/// Writes one report record to init's end of the report pipe (raw); true if all of it went.
///
/// # Safety
/// `fd` must be the report pipe's write end, open for the call. System calls only, on stack
/// memory, so it may run between clone and exec.
unsafe fn record(fd: RawFd, tag: u8, step: u8, value: i32) -> bool {
    let v = value.to_ne_bytes();
    let rec = [tag, step, v[0], v[1], v[2], v[3]];
    // SAFETY: write reads REC (6) bytes from `rec` on this frame; `fd` is open (the caller's
    // contract). A record is shorter than PIPE_BUF, so it arrives whole or not at all.
    unsafe { libc::write(fd, rec.as_ptr().cast(), REC) == REC as isize }
}

/// The calling thread's errno (async-signal-safe: a load from thread-local storage).
fn errno() -> i32 {
    // SAFETY: __errno_location returns a valid, aligned pointer to this thread's errno.
    unsafe { *libc::__errno_location() }
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// pid 1 of the new namespaces. Raw syscalls only.
///
/// # Safety
/// Call only in the child of `run`'s clone (it becomes the namespaces' init, and `_exit`s
/// the process instead of returning), with `d` built before the clone: every pointer in it
/// (the argv and envp arrays, the CStrings, the slices) stays valid because nothing in this
/// copy of the address space frees it. The descriptors in `d` were open at the clone and are
/// this process's own copies. Nothing here may allocate or take a lock: another thread of
/// cordon may have held one at the clone.
unsafe fn init(d: &InitData) -> ! {
    let fail = |tag: u8, step: u8| -> ! {
        // SAFETY: `d.report` is the report pipe's write end, open (kept below).
        unsafe { record(d.report, tag, step, errno()) };
        // SAFETY: _exit ends this process at once, without running atexit handlers or
        // destructors (which belong to cordon, not to this copy).
        unsafe { libc::_exit(125) }
    };
    let ns_fail = |step: u8| -> ! { fail(b'N', step) };
    // Checked: without it, init could outlive cordon.
    // SAFETY: the child of `run`'s clone (this function's contract).
    match unsafe { nsclone::tie_to_cordon(&d.id) } {
        Ok(()) => {}
        Err(Untied::Step(step)) => ns_fail(step),
        // SAFETY: as in `fail`.
        Err(Untied::CordonGone) => unsafe { libc::_exit(125) },
    }
    // clone copied every descriptor cordon had, the relay's ends of the command's pipes among
    // them: a stdin pipe's write end kept open here would keep the command from ever seeing
    // end-of-file. Keep only what init and the command need.
    let mut keep = [
        d.report,
        d.id.me(),
        d.ruleset,
        d.stdio[0],
        d.stdio[1],
        d.stdio[2],
        d.proxy_fd,
        d.go_fd,
    ];
    keep.sort_unstable();
    let mut next: RawFd = 3;
    for fd in keep {
        if fd < next {
            continue;
        }
        if fd > next {
            // SAFETY: close_range takes no pointers; it closes only descriptors strictly
            // between the ones kept, all of them this process's copies that nothing here uses.
            let r =
                unsafe { libc::syscall(libc::SYS_close_range, next as u32, (fd - 1) as u32, 0u32) };
            if r != 0 {
                fail(b'S', 9);
            }
        }
        next = fd + 1;
    }
    // SAFETY: as above, everything above the highest kept descriptor.
    if unsafe { libc::syscall(libc::SYS_close_range, next as u32, u32::MAX, 0u32) } != 0 {
        fail(b'S', 9);
    }
    // SAFETY: as above.
    if let Err(step) = unsafe { nsclone::map_user(&d.id) } {
        ns_fail(step);
    }
    // Without this, as root, the /proc mount below would propagate to the host's mounts.
    // SAFETY: mount reads the NUL-terminated target "/" (a static C string literal); source,
    // type and data are null, as MS_PRIVATE requires. It changes this mount namespace only.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        ns_fail(4);
    }
    // Everything read-only but the writable roots, before the fresh /proc (made read-only
    // below, once init has set its pid_max).
    if d.read_only {
        // SAFETY: raw system calls on `d`'s CStrings and cells, and this frame.
        if let Err((step, e, i)) = unsafe { read_only_tree(d.writable, d.held) } {
            // SAFETY: `d.report` is open; the records say which root and why.
            unsafe {
                if i >= 0 {
                    record(d.report, b'W', 0, i);
                }
                *libc::__errno_location() = e;
            }
            fail(b'S', step);
        }
    }
    // The mounts above are private, so this /proc (of the new PID namespace) stays in it.
    if !nsclone::mount_proc() {
        ns_fail(5);
    }
    // The task cap; kernels before 6.14 have one global pid_max and refuse (the policy's
    // `processes` limit still applies there).
    let _ = write_file(c"/proc/sys/kernel/pid_max", d.pid_max);
    // Then the whole fresh /proc read-only (the kernel's settings and sysrq-trigger with it).
    // A mode or owner set on a /proc entry that is not a process's (kallsyms, irq/*, bus/*,
    // acpi/*) is the kernel's own, shared by every /proc mount: root, the owner, needs no
    // capability to chmod it 0666 for the whole host. Landlock has no right for that, and
    // its /proc rules grant reading only, so a read-only /proc takes nothing else away.
    if d.read_only {
        // SAFETY: raw system calls on a static C string and this frame's descriptors.
        if let Err((_, e)) = unsafe { protect(c"/proc", crate::protect::Cover::ReadOnly) } {
            // SAFETY: as above.
            unsafe { *libc::__errno_location() = e };
            fail(b'S', TREE_STEP + 2);
        }
    }
    // The command's own devpts, after the read-only tree (its ptys are its own, as under
    // bwrap's `--dev`) and before the rules (one is for it).
    if d.pts {
        // SAFETY: raw system calls on static C strings and this frame's descriptors.
        if let Err(e) = unsafe { own_devpts() } {
            // SAFETY: as above.
            unsafe { *libc::__errno_location() = e };
            fail(b'S', PTS_STEP);
        }
    }
    for (path, dir_rights, file_rights) in d.proc_rules {
        // SAFETY: open reads the NUL-terminated `path` (a CString in `d`); O_PATH opens
        // nothing for I/O. The descriptor is ours and closed below on every path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            if errno() == libc::ENOENT {
                continue;
            }
            fail(b'S', 6);
        }
        // SAFETY: stat is plain integers; all-zero is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one `struct stat` into `st` on this frame; `fd` is open. A
        // failure reads as "not a directory", which grants the (narrower) file rights.
        let is_dir =
            unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        let attr = PathBeneath {
            allowed_access: if is_dir { *dir_rights } else { *file_rights },
            parent_fd: fd,
        };
        // SAFETY: landlock_add_rule reads one packed `landlock_path_beneath_attr` (12 bytes,
        // `PathBeneath` is its exact layout) from this frame; `d.ruleset` is the ruleset
        // cordon made and kept open across the clone; `fd` is open until the close after.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                d.ruleset,
                1u32, // LANDLOCK_RULE_PATH_BENEATH
                &attr as *const PathBeneath,
                0u32,
            )
        };
        // SAFETY: `fd` is ours, closed once, here.
        unsafe { libc::close(fd) };
        if r != 0 {
            fail(b'S', 6);
        }
    }

    // The protected paths' mounts, in this mount namespace only (made private above), before
    // the command exists.
    for (i, (at, cover)) in d.protect.iter().enumerate() {
        // SAFETY: raw system calls on `at` (a CString in `d`) and this frame's descriptors.
        if let Err((step, e)) = unsafe { protect(at, *cover) } {
            // SAFETY: `d.report` is open; the records say which mount and why.
            unsafe {
                record(d.report, b'P', 0, i as i32);
                *libc::__errno_location() = e;
            }
            fail(b'S', step);
        }
    }

    // sandbox.network = "proxy": loopback up, the listener made here (so it lives in this
    // namespace) and handed to cordon; the command starts only after cordon's "go".
    if d.proxy_fd >= 0 {
        // SAFETY: raw system calls only (crate::proxy); a failure stops here.
        if !unsafe { crate::proxy::loopback_up() } {
            fail(b'S', 18);
        }
        // SAFETY: raw system calls only; we own the descriptor it returns.
        let listener = unsafe { crate::proxy::listener(d.proxy_port) };
        if listener < 0 {
            fail(b'S', 19);
        }
        // SAFETY: `d.proxy_fd` (kept open above) and `listener` are open descriptors.
        if !unsafe { crate::proxy::send_fd(d.proxy_fd, listener) } {
            fail(b'S', 20);
        }
        // SAFETY: our listener, closed once (cordon holds its own reference now). Even if
        // this failed, it is close-on-exec, and the command marks every descriptor so.
        unsafe { libc::close(listener) };
        // The forwarded ports' listeners, the same way (a slice read, no allocation).
        for &port in d.proxy_forwards {
            // SAFETY: as for the proxy's listener above.
            let listener = unsafe { crate::proxy::listener(port) };
            if listener < 0 {
                fail(b'S', 19);
            }
            // SAFETY: `d.proxy_fd` and `listener` are open descriptors.
            if !unsafe { crate::proxy::send_fd(d.proxy_fd, listener) } {
                fail(b'S', 20);
            }
            // SAFETY: our listener, closed once, as above.
            unsafe { libc::close(listener) };
        }
        // SAFETY: `d.proxy_fd` is open until the close below.
        if !unsafe { crate::proxy::wait_go(d.proxy_fd) } {
            fail(b'S', 20);
        }
        // SAFETY: the namespace's end of the pair, not used again (close-on-exec as well).
        unsafe { libc::close(d.proxy_fd) };
    }

    // Nothing of the command before cordon's "go" (its decision's record is durable).
    if d.go_fd >= 0 {
        // SAFETY: `d.go_fd` is open (kept above); a pipe's read end, read like the pair.
        if !unsafe { crate::proxy::wait_go(d.go_fd) } {
            fail(b'S', 22);
        }
        // SAFETY: the pipe's read end, not used again (close-on-exec as well).
        unsafe { libc::close(d.go_fd) };
    }

    // SIGCHLD joins the forwarded signals (blocked since before clone) in the set init waits on.
    // SAFETY: sigset_t is a plain bit array; all-zero is a valid (empty) set.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: sigemptyset/sigaddset write only into `set` (this frame) with valid signal
    // numbers; sigprocmask reads it, no old set. Checked: an unblocked SIGCHLD would be
    // discarded, and init would never learn that the command exited.
    unsafe {
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        libc::sigaddset(&mut set, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            fail(b'S', 21);
        }
    }

    if d.inotify.is_some() {
        // The inotify supervisor: a thread of init's (its memory and signal handling; no copy
        // of init's address space, which is a copy of cordon's), which joins the command's
        // Landlock domain and makes the command itself (see `supervisor`). Init's main thread
        // stays outside that domain, so Landlock's scoping keeps refusing the command's signals
        // and ptrace-class /proc files of pid 1.
        // SAFETY: clone (glibc's wrapper) runs `supervisor_entry` on the stack whose top
        // `d.supervisor_stack` is (allocated before init's clone, used by nobody else), with
        // `d` as its argument, which lives on this thread's stack for as long as the process
        // (init never returns from here). A thread of this process: CLONE_THREAD with the
        // CLONE_SIGHAND and CLONE_VM it needs; a copy of the descriptor table of its own (no
        // CLONE_FILES), which it closes down to what it uses, so that /proc/1/task/TID/fd
        // shows none of init's. Its thread-local storage is this thread's (no CLONE_SETTLS, no
        // glibc thread), so the two share errno: a failure may be reported with the other
        // thread's errno, which changes no outcome (every failure fails closed whatever errno
        // says).
        let t = unsafe {
            libc::clone(
                supervisor_entry,
                d.supervisor_stack.cast(),
                libc::CLONE_VM | libc::CLONE_SIGHAND | libc::CLONE_THREAD,
                d as *const InitData as *mut libc::c_void,
            )
        };
        if t < 0 {
            fail(b'S', 31);
        }
        // The command gets its streams from the supervisor's copies; init's would keep the
        // relay from seeing the end of its output.
        for &fd in &d.stdio {
            if fd >= 0 {
                // SAFETY: init's copy of a descriptor only the command uses; closed once.
                unsafe { libc::close(fd) };
            }
        }
    } else {
        // SAFETY: `d` is init's, as this function's contract says.
        if !unsafe { spawn_command(d) } {
            fail(b'S', 7);
        }
    }
    loop {
        // SAFETY: siginfo_t is plain data; all-zero is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: rt_sigtimedwait reads `set` and writes one siginfo_t into `info`, both on
        // this frame, with the kernel's sigset size (8 bytes); no timeout (null).
        let sig = unsafe {
            libc::syscall(
                libc::SYS_rt_sigtimedwait,
                &set as *const libc::sigset_t,
                &mut info as *mut libc::siginfo_t,
                std::ptr::null::<libc::timespec>(),
                8usize, // the kernel's sigset size
            )
        } as i32;
        if sig > 0 && sig != libc::SIGCHLD {
            // Every process of the namespace but init itself.
            // SAFETY: kill takes no pointers; -1 reaches only this PID namespace.
            unsafe { libc::kill(-1, sig) };
            continue;
        }
        loop {
            let mut st = 0;
            // SAFETY: waitpid writes one int into `st` on this frame; never blocks.
            let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL) };
            // Set before the command could run, so before any SIGCHLD of its (see
            // `InitData::command_pid`).
            if r > 0 && r == d.command_pid.load(Ordering::Acquire) {
                // Kill and reap what is left before reporting: once cordon reads the record,
                // the run is over (init's own exit then only tears the namespaces down).
                // SAFETY: kill takes no pointers; -1 reaches only this PID namespace.
                unsafe { libc::kill(-1, libc::SIGKILL) };
                let mut other = 0;
                // SAFETY: waitpid writes one int into `other` on this frame.
                while unsafe { libc::waitpid(-1, &mut other, libc::__WALL) } > 0
                    || errno() == libc::EINTR
                {}
                // SAFETY: `d.report` is open. If the record is lost, init's exit status
                // says so (125) rather than a success the command never had.
                let reported = unsafe { record(d.report, b'X', 0, st) };
                // SAFETY: as in `fail`.
                unsafe { libc::_exit(if reported { 0 } else { 125 }) };
            }
            if r <= 0 {
                break;
            }
        }
    }
}

/// The command: pid 2 of the namespace (pid 3 under the inotify supervisor, which is init's
/// thread 2).
/// Raw syscalls only, then execve.
///
/// # Safety
/// Call only in the child of init's clone, with `d` as `init` received it (see there). On
/// any failure it reports the step and `_exit`s: the command is never exec'd without every
/// confinement step done.
unsafe fn command(d: &InitData) -> ! {
    let fail = |step: u8| -> ! {
        // SAFETY: `d.report` is the report pipe's write end, open (kept by init).
        unsafe { record(d.report, b'S', step, errno()) };
        // SAFETY: _exit ends this process without running cordon's handlers.
        unsafe { libc::_exit(125) }
    };
    // SAFETY: setsid takes no arguments.
    if unsafe { libc::setsid() } < 0 {
        fail(8);
    }
    // Two steps, so that a source that happens to be 0, 1 or 2 (cordon's own stdin closed) is
    // not overwritten before it is used: first above stdio, then into place.
    let mut moved = [-1; 3];
    for (n, &fd) in d.stdio.iter().enumerate() {
        if fd >= 0 {
            // SAFETY: F_DUPFD_CLOEXEC takes an integer; `fd` is open (init kept it).
            moved[n] = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
            if moved[n] < 0 {
                fail(16);
            }
        }
    }
    for (n, &fd) in moved.iter().enumerate() {
        // SAFETY: dup2 takes integers; `fd` is the duplicate made above.
        if fd >= 0 && unsafe { libc::dup2(fd, n as libc::c_int) } < 0 {
            fail(16);
        }
    }
    // SAFETY: TIOCSCTTY takes an integer argument (0: do not steal); the descriptor is the
    // pty slave just put in place.
    if d.controlling_tty >= 0 && unsafe { libc::ioctl(d.controlling_tty, libc::TIOCSCTTY, 0) } != 0
    {
        fail(17);
    }
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only marks descriptors, no pointers: none
    // of cordon's (the ruleset, the report pipe, the proxy's pair) reaches the command.
    if unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } != 0
    {
        fail(9);
    }
    // SAFETY: chdir reads the NUL-terminated `d.exec.cwd` (a CString in `d`).
    if unsafe { libc::chdir(d.exec.cwd.as_ptr()) } != 0 {
        fail(10);
    }
    // The path was resolved again, in this mount namespace, after the gate's check: the
    // directory entered must be the checked one (a link swapped in on the way is refused).
    if !crate::run::cwd_is(&d.exec.cwd) {
        // SAFETY: errno is this thread's; writing it is what failing calls do.
        unsafe { *libc::__errno_location() = libc::ENOENT };
        fail(CWD_STEP);
    }
    for &(resource, value) in d.rlimits {
        let lim = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: setrlimit reads one rlimit from this frame.
        if unsafe { libc::setrlimit(resource, &lim) } != 0 {
            fail(11);
        }
    }
    // SAFETY: raw system calls on stack memory; this is the process that will exec.
    if d.drop_caps && !unsafe { super::drop_capabilities(d.last_cap) } {
        fail(12);
    }
    // SAFETY: PR_SET_NO_NEW_PRIVS takes an integer flag; the unused arguments are 0.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        fail(13);
    }
    // Under the inotify supervisor this process is in its domain already (inherited at the
    // clone): the same domain, which restricting again would nest inside another.
    if d.inotify.is_none() {
        // SAFETY: landlock_restrict_self takes the ruleset descriptor (open, made by cordon)
        // and flags 0; no pointers.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, d.ruleset, 0u32) } != 0 {
            fail(14);
        }
    }
    // SAFETY: no_new_privs is set just above; the filters bind this process and the command.
    if let Err(e) = unsafe { crate::seccomp::install(d.programs) } {
        // SAFETY: this thread's errno, written so `fail` reports the kernel's refusal.
        unsafe { *libc::__errno_location() = e };
        fail(15);
    }
    if let Some(prog) = d.inotify {
        // After the deny list: its refusals outrank this program's notification.
        // SAFETY: as above; the listener is ours, sent on and closed before the exec.
        let listener = match unsafe { crate::seccomp::install_listener(prog) } {
            Ok(fd) => fd,
            Err(e) => {
                // SAFETY: as above.
                unsafe { *libc::__errno_location() = e };
                fail(32)
            }
        };
        // The pair's end the supervisor made before the clone (this process's copy).
        let ours = d.command_end.load(Ordering::Acquire);
        // SAFETY: both descriptors are open; ours, closed once right after.
        if !unsafe { crate::proxy::send_fd(ours, listener) } {
            fail(33);
        }
        // SAFETY: as above.
        unsafe {
            libc::close(listener);
            libc::close(ours);
        }
    }
    // SAFETY: sigset_t is a plain bit array; all-zero is a valid (empty) set.
    let mut empty: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: sigemptyset writes into `empty`, sigprocmask reads it (this frame); signal
    // installs the default disposition, no handler code. Checked: the command must not start
    // with the forwarded signals blocked. signal(2) fails only for an invalid number.
    unsafe {
        libc::sigemptyset(&mut empty);
        if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
            fail(21);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
    // Like execvp: a missing candidate tries the next; a refused one is remembered.
    let mut err = libc::ENOENT;
    let mut denied = false;
    for path in d.candidates {
        // SAFETY: execve reads the NUL-terminated `path` and the null-terminated argv/envp
        // arrays of CString pointers built before the clone; it returns only on failure.
        unsafe { libc::execve(path.as_ptr(), d.exec.argv(), d.exec.envp()) };
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
    // SAFETY: `d.report` is open (close-on-exec only).
    unsafe { record(d.report, b'E', 0, err) };
    // SAFETY: as in `fail`.
    unsafe { libc::_exit(127) }
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
    let user = !rustix::process::geteuid().is_root();
    let id = match Identity::new(user) {
        Ok(id) => id,
        Err(e) => return Probe::Unavailable(format!("cordon's own pidfd: {e}")),
    };
    let raw = id.raw();
    let cap = format!("{TASK_CAP}\n");
    let mut flags =
        libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWNS | libc::CLONE_NEWNET;
    if user {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: as `run`'s clone: a fork-like copy that only runs the block below and
    // `_exit`s.
    let pid = match unsafe { nsclone::clone(flags) } {
        Err(e) => return Probe::Unavailable(format!("clone: {e}")),
        Ok(Cloned::Parent { pid, .. }) => pid,
        Ok(Cloned::Child) => probe_child(&raw, &cap),
    };
    drop(id);
    let mut st = 0;
    // SAFETY: waitpid writes one int into `st` on this frame; the child is ours, unreaped.
    if unsafe { libc::waitpid(pid, &mut st, libc::__WALL) } != pid || !libc::WIFEXITED(st) {
        return Probe::Unavailable("the probe child did not exit normally".into());
    }
    probe_result(user, libc::WEXITSTATUS(st))
}

/// The probe's child: exits 0 ok with pid_max, 1 ok without, +2 loopback or +4 the listener
/// failed (the proxy); 10 + step on failure.
fn probe_child(id: &RawIdentity, cap: &str) -> ! {
    // SAFETY: the clone's child, which makes only raw system calls on data allocated
    // before the clone (the map strings) and static C strings, then `_exit`s: mount as in
    // `init`, the raw proxy functions, and `_exit` (no cordon handlers run). The
    // listener is left to the exit.
    unsafe {
        let step = if let Err(step) = nsclone::map_user(id) {
            step as i32
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

/// What the probe child's exit code says.
fn probe_result(user: bool, code: i32) -> Probe {
    match code {
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
            release: None,
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

    /// A run of `sh -c 'touch ran'` in `dir` under a Landlock ruleset that grants `dir` and
    /// the system, with `protect`'s mounts.
    fn run_protected(
        dir: &std::path::Path,
        protect: Vec<crate::protect::Mount>,
    ) -> Result<Outcome, Attempt> {
        run_planned(
            dir,
            Plan {
                protect,
                ..Plan::default()
            },
        )
    }

    /// The same run with `plan`'s mounts (its `user` set here).
    fn run_planned(dir: &std::path::Path, plan: Plan) -> Result<Outcome, Attempt> {
        use crate::profile::{Access, PathRule, Profile};
        let rule = |p: &str, write: bool| PathRule {
            path: p.into(),
            access: Access {
                write,
                exec: true,
                device: false,
            },
            origin: "test".into(),
        };
        let profile = Profile {
            rules: vec![
                rule("/usr", false),
                rule("/etc", false),
                rule(dir.to_str().unwrap(), true),
            ]
            .into_iter()
            .chain(["/bin", "/lib", "/lib64"].map(|p| rule(p, false)))
            .filter(|r| r.path.exists())
            .collect(),
            protected: vec![],
            network: cordon_policy::Network::Allow,
            limits: cordon_policy::Limits::default(),
            forwards: Vec::new(),
        };
        let abi = crate::landlock::kernel_abi();
        let c = Confinement {
            landlock: crate::landlock::prepare(&profile, abi).unwrap().fd,
            seccomp: crate::seccomp::compile(&crate::seccomp::rules(cordon_policy::Network::Allow))
                .unwrap(),
            rlimits: vec![],
        };
        let mut spec = spec("/bin/sh", None);
        spec.args = vec!["-c".into(), "touch ran".into()];
        spec.cwd = dir.to_path_buf();
        let plan = Plan {
            user: !rustix::process::geteuid().is_root(),
            ..plan
        };
        run(c, &spec, &plan, &mut None)
    }

    #[test]
    fn the_read_only_tree_gives_write_back_only_to_the_root_cordon_saw() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let seen = |p: &std::path::Path| {
            let m = std::fs::metadata(p).unwrap();
            Writable {
                path: p.to_path_buf(),
                dev: m.dev(),
                ino: m.ino(),
                at: None,
            }
        };
        let read_only = |w: Vec<Writable>| Plan {
            read_only: Some(w),
            ..Plan::default()
        };
        // The root given back: the command writes there, Landlock granting it too.
        assert!(matches!(
            run_planned(&dir, read_only(vec![seen(&dir)])),
            Ok(Outcome::Exited(0))
        ));
        assert!(dir.join("ran").exists());
        std::fs::remove_file(dir.join("ran")).unwrap();
        // Not given back: Landlock grants the write, the read-only mount refuses it.
        assert!(matches!(
            run_planned(&dir, read_only(vec![])),
            Ok(Outcome::Exited(1))
        ));
        assert!(!dir.join("ran").exists());
        // Another directory at the root's path by mount time (the one cordon saw renamed
        // away, a new one made): refused, naming the root, and the command never started.
        let other = dir.join("other");
        std::fs::create_dir(&other).unwrap();
        let mut stale = seen(&other);
        stale.ino = std::fs::metadata(&dir).unwrap().ino();
        match run_planned(&dir, read_only(vec![stale])) {
            Err(Attempt::Start(e)) => {
                let e = e.to_string();
                assert!(
                    e.contains(&format!(
                        "cannot give {} its write access back",
                        other.display()
                    )) && e.contains("the run is refused"),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(!dir.join("ran").exists());
    }

    #[test]
    fn a_protect_mount_that_cannot_be_made_refuses_the_run() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        // The control: without the mount the command runs.
        assert!(matches!(
            run_protected(&dir, vec![]),
            Ok(Outcome::Exited(0))
        ));
        assert!(dir.join("ran").exists());
        std::fs::remove_file(dir.join("ran")).unwrap();
        // A path that is gone by the time init mounts (the parent checked it before; a run
        // still going removed it since): refused, and the command never started.
        let gone = dir.join("gone");
        let mount = crate::protect::Mount {
            at: gone.clone(),
            cover: crate::protect::Cover::ReadOnly,
            why: "sandbox.protected".into(),
        };
        match run_protected(&dir, vec![mount.clone()]) {
            Err(Attempt::Start(e)) => {
                let e = e.to_string();
                assert!(
                    e.contains(&format!("cannot keep {} read-only", gone.display()))
                        && e.contains("opening a protected path without following links")
                        && e.contains("the run is refused"),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(!dir.join("ran").exists());
        // A link planted on the way since: not followed, refused the same way.
        std::fs::create_dir(dir.join("real")).unwrap();
        std::os::unix::fs::symlink("real", dir.join("link")).unwrap();
        let through = crate::protect::Mount {
            at: dir.join("link/x"),
            ..mount
        };
        std::fs::write(dir.join("real/x"), "").unwrap();
        assert!(matches!(
            run_protected(&dir, vec![through]),
            Err(Attempt::Start(_))
        ));
        assert!(!dir.join("ran").exists());
    }

    #[test]
    fn this_machine_makes_the_namespaces() {
        // The development and CI machines allow them (as root, and to users); the escape
        // suite's Landlock runs depend on it.
        assert!(matches!(probe(), Probe::Available { .. }), "{:?}", probe());
    }
}
