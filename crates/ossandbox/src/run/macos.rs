//! Running a child on macOS: `sandbox-exec` for the Seatbelt backend (see
//! [`crate::seatbelt::invocation`]), or the command itself for an unconfined run.
//!
//! The confinement is Seatbelt's, applied by `sandbox-exec` and inherited by every
//! descendant; this runner adds what the Linux runner ([`super::run`]) adds, with the tools
//! macOS has (no signalfd, pidfd, parent-death signal, child subreaper or close_range):
//!
//! - the child starts a new session, so it and its descendants form one process group;
//! - resource limits are set in the child before exec (`RLIMIT_CORE = 0` always);
//! - inherited descriptors beyond stdio, listed from `/dev/fd` in the parent, are marked
//!   close-on-exec in the child (descriptors cordon's own threads open later are
//!   close-on-exec already: Rust opens everything with `O_CLOEXEC`);
//! - cordon waits on a kqueue: the child's exit (`EVFILT_PROC`), SIGINT/SIGTERM/SIGHUP/SIGQUIT
//!   (`EVFILT_SIGNAL`, forwarded to the child's group) and the timeout, after which the whole
//!   group is killed (exit 124). When the child exits, what is left of its group is killed.
//!
//! What macOS does not allow here, stated rather than papered over: a descendant that starts
//! a session of its own leaves the group and outlives the run, and if cordon itself is killed
//! with SIGKILL the child keeps running. Both stay inside the Seatbelt sandbox.
//!
//! Type-checked for macOS (`scripts/check-macos.sh`); not run by cordon's tests, which run on
//! Linux.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::time::Instant;

use super::{Outcome, Spec};
use crate::{Error, RlimitResource};

/// Signals cordon passes on to the child's process group.
const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Steps the child performs; the index is what it reports on failure.
const STEPS: [&str; 4] = [
    "setsid",
    "resource limits",
    "closing inherited file descriptors",
    "signal mask",
];

/// Runs `spec` with `rlimits` and waits for it (see the module docs).
pub fn run(spec: &Spec, rlimits: &[(RlimitResource, u64)]) -> Result<Outcome, Error> {
    let parent = Error::Io;
    let inherited = inherited_fds().map_err(|e| {
        parent(io::Error::new(
            e.kind(),
            format!("cannot list inherited descriptors in /dev/fd: {e}"),
        ))
    })?;
    let kq = Kqueue::new().map_err(parent)?;
    // Registered before they are ignored: kqueue records a signal whatever its disposition,
    // so none is lost, and an ignored one does not end cordon before it reaches the child.
    for s in FORWARDED {
        kq.add(s as usize, libc::EVFILT_SIGNAL, 0).map_err(parent)?;
    }
    let _restore = IgnoredSignals::ignore();

    let (status_r, status_w) = pipe().map_err(parent)?;
    let report_fd = status_w.as_raw_fd();
    let limits: Vec<(RlimitResource, u64)> = rlimits.to_vec();
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd);
    let child_setup = move || -> io::Result<()> {
        // Only raw syscalls below: no allocation, no locks (we are in a forked child).
        let fail = |step: u8| -> io::Error {
            let err = io::Error::last_os_error();
            // SAFETY: write reads one byte from `step` on this frame; `report_fd` is the
            // pipe's write end, kept open by `status_w` in the parent until after spawn (the
            // child has its own copy). A failed write only loses the step name.
            unsafe { libc::write(report_fd, &step as *const u8 as *const libc::c_void, 1) };
            err
        };
        // SAFETY: this closure runs in the forked child before exec (pre_exec), so it makes
        // only async-signal-safe calls (setsid, setrlimit, fcntl, signal, sigemptyset,
        // sigprocmask) and allocates nothing: `limits` and `inherited` were built in the
        // parent and are only iterated; `lim` and `empty` live on this frame. Any failure
        // returns an error, so std reports it and never execs the command.
        unsafe {
            if libc::setsid() < 0 {
                return Err(fail(0));
            }
            for &(resource, value) in &limits {
                let lim = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                if libc::setrlimit(resource, &lim) != 0 {
                    return Err(fail(1));
                }
            }
            for &fd in &inherited {
                // EBADF: a descriptor that was closed since it was listed.
                if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0
                    && *libc::__error() != libc::EBADF
                {
                    return Err(fail(2));
                }
            }
            // Ignored dispositions survive exec; the child gets the defaults back.
            for s in FORWARDED {
                libc::signal(s, libc::SIG_DFL);
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            let mut empty: libc::sigset_t = 0;
            libc::sigemptyset(&mut empty);
            if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                return Err(fail(3));
            }
        }
        Ok(())
    };
    // SAFETY: `child_setup` is async-signal-safe and allocation-free (see inside it).
    unsafe { cmd.pre_exec(child_setup) };

    let spawned = cmd.spawn();
    drop(status_w);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let mut step = [0u8; 1];
            // SAFETY: read writes at most one byte into `step`; `status_r` is open and ours.
            let n = unsafe {
                libc::read(
                    status_r.as_raw_fd(),
                    step.as_mut_ptr() as *mut libc::c_void,
                    1,
                )
            };
            let name = spec.program.to_string_lossy().into_owned();
            return Err(if n == 1 {
                Error::Setup(STEPS.get(step[0] as usize).copied().unwrap_or("setup"), e)
            } else if e.kind() == io::ErrorKind::NotFound {
                Error::NotFound(name)
            } else {
                Error::NotExecutable(name, e)
            });
        }
    };
    let pid = child.id() as libc::pid_t;

    // ESRCH: the child has exited already; its status is collected below.
    let running = match kq.add(pid as usize, libc::EVFILT_PROC, libc::NOTE_EXIT) {
        Ok(()) => true,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => false,
        Err(e) => {
            // Without the exit event we could not enforce the timeout: stop here.
            // SAFETY: kill takes no pointers; -pid is the child's own process group (setsid),
            // not yet reaped, so the id cannot have been reused.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            return Err(parent(e));
        }
    };
    let deadline = spec.timeout.map(|t| Instant::now() + t);
    let waited = if running {
        wait(&kq, pid, deadline)
    } else {
        Ok(Waited::Exited)
    };
    match waited {
        Ok(Waited::Exited) => {}
        Ok(Waited::TimedOut) => {
            // SAFETY: as above: the unreaped child's group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            return Ok(Outcome::TimedOut);
        }
        // Unsupervised, the timeout could not be kept: stop the command.
        Err(e) => {
            // SAFETY: as above: the unreaped child's group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            return Err(parent(e));
        }
    }
    let status = child.wait().map_err(parent)?;
    // What is left of the group goes with it (the group id is the child's pid: setsid).
    // SAFETY: kill takes no pointers. The leader is reaped now, but a group id is not reused
    // while any member lives; an empty group makes the kill fail with ESRCH, unless the id was
    // reused since by a new session leader (a narrow race macOS offers no pidfd to close).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => Outcome::Exited(c),
        (None, Some(s)) => Outcome::Signaled(s),
        _ => Outcome::Exited(1),
    })
}

enum Waited {
    Exited,
    TimedOut,
}

/// Waits on `kq` until the child exits or `deadline` passes, forwarding the signals the
/// kqueue reports to the child's process group.
fn wait(kq: &Kqueue, pid: libc::pid_t, deadline: Option<Instant>) -> io::Result<Waited> {
    loop {
        let timeout = match deadline {
            None => None,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Waited::TimedOut);
                }
                Some(libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                })
            }
        };
        // SAFETY: kevent is plain integers and a pointer; all-zero is a valid value.
        let mut events: [libc::kevent; 8] = unsafe { std::mem::zeroed() };
        // SAFETY: no changes in; up to `events.len()` events written into `events`; the
        // timeout, when given, lives on this frame; the kqueue is open (`kq` borrows it).
        let n = unsafe {
            libc::kevent(
                kq.0.as_raw_fd(),
                std::ptr::null(),
                0,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                timeout
                    .as_ref()
                    .map_or(std::ptr::null(), |t| t as *const libc::timespec),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut exited = false;
        for ev in &events[..n as usize] {
            if ev.filter == libc::EVFILT_SIGNAL {
                // SAFETY: kill takes no pointers; the child (group leader) is not reaped
                // while this loop runs, so the group id is still the child's.
                unsafe { libc::kill(-pid, ev.ident as libc::c_int) };
            } else if ev.filter == libc::EVFILT_PROC {
                exited = true;
            }
        }
        if exited {
            return Ok(Waited::Exited);
        }
    }
}

/// The descriptors this process holds beyond stdio.
fn inherited_fds() -> io::Result<Vec<RawFd>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/dev/fd")? {
        let name = entry?.file_name();
        if let Some(fd) = name.to_str().and_then(|n| n.parse::<RawFd>().ok()) {
            if fd > 2 {
                out.push(fd);
            }
        }
    }
    Ok(out)
}

/// A kqueue (not inherited across fork, by definition).
struct Kqueue(OwnedFd);

impl Kqueue {
    fn new() -> io::Result<Kqueue> {
        // SAFETY: kqueue takes no arguments.
        let fd = unsafe { libc::kqueue() };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is the new kqueue, owned by nothing else: the OwnedFd takes it.
        Ok(Kqueue(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn add(&self, ident: usize, filter: i16, fflags: u32) -> io::Result<()> {
        let change = libc::kevent {
            ident,
            filter,
            flags: libc::EV_ADD,
            fflags,
            data: 0,
            udata: std::ptr::null_mut(),
        };
        // SAFETY: one change read from `change` on this frame, no events out, no timeout; the
        // kqueue is open (owned by `self`).
        let r = unsafe {
            libc::kevent(
                self.0.as_raw_fd(),
                &change,
                1,
                std::ptr::null_mut(),
                0,
                std::ptr::null(),
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

/// The forwarded signals set to SIG_IGN for the run; the old dispositions come back on drop.
struct IgnoredSignals([libc::sighandler_t; 4]);

impl IgnoredSignals {
    fn ignore() -> IgnoredSignals {
        // SAFETY: SIG_IGN installs no handler code; the old disposition is kept to restore.
        IgnoredSignals(FORWARDED.map(|s| unsafe { libc::signal(s, libc::SIG_IGN) }))
    }
}

impl Drop for IgnoredSignals {
    fn drop(&mut self) {
        for (s, old) in FORWARDED.iter().zip(self.0) {
            if old != libc::SIG_ERR {
                // SAFETY: `old` is the disposition `signal` returned for this signal, so
                // restoring it reinstates a handler that was valid before.
                unsafe { libc::signal(*s, old) };
            }
        }
    }
}

/// A pipe, both ends close-on-exec. macOS has no pipe2; no other cordon thread starts a
/// process, so nothing can inherit the ends between the two calls.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe writes two descriptors into `fds`, an array of two.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the two new descriptors belong to nothing else; the OwnedFds take them.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [&r, &w] {
        // SAFETY: fcntl(F_SETFD) takes no pointers; `fd` is open (borrowed).
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((r, w))
}
