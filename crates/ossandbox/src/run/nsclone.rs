//! The one way this crate makes namespaces with a raw `clone`, shared by the Landlock
//! backend's init ([`super::namespaces`]) and bwrap's pid 1 ([`super::pid1`]): the command
//! line as C strings, the user namespace's maps (the caller mapped to itself) and cordon's
//! pidfd, all made before the clone; the fork-like clone with `CLONE_PIDFD`; and the child's
//! first steps — the parent-death signal, the check that cordon is still there, the maps —
//! which run between clone and exec (raw system calls only, no allocation, no locks).
//!
//! The child's step indices 0–3 ([`STEP_DEATH_SIGNAL`] … [`STEP_UID_MAP`]) are the same in
//! both callers' step tables.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::Spec;
use crate::Error;

/// Step index: the parent-death signal.
pub(super) const STEP_DEATH_SIGNAL: u8 = 0;
/// Step index: `setgroups deny`.
pub(super) const STEP_SETGROUPS: u8 = 1;
/// Step index: the gid map.
pub(super) const STEP_GID_MAP: u8 = 2;
/// Step index: the uid map.
pub(super) const STEP_UID_MAP: u8 = 3;

fn cstring(b: &[u8]) -> Result<CString, Error> {
    CString::new(b).map_err(|_| {
        Error::Io(io::Error::other(
            "a NUL byte in the command line, environment or a path",
        ))
    })
}

/// `spec`'s program, arguments, environment and working directory as C strings, with the
/// null-terminated pointer arrays execve reads (pointing into the strings, which stay put).
pub(super) struct Exec {
    pub program: CString,
    pub cwd: CString,
    _argv: Vec<CString>,
    _envp: Vec<CString>,
    argv_p: Vec<*const libc::c_char>,
    envp_p: Vec<*const libc::c_char>,
}

impl Exec {
    pub fn new(spec: &Spec) -> Result<Exec, Error> {
        let argv: Vec<CString> = std::iter::once(spec.program.as_os_str())
            .chain(spec.args.iter().map(|a| a.as_os_str()))
            .map(|a| cstring(a.as_bytes()))
            .collect::<Result<_, _>>()?;
        let envp: Vec<CString> = spec
            .env
            .iter()
            .map(|(k, v)| {
                let mut b = k.as_bytes().to_vec();
                b.push(b'=');
                b.extend_from_slice(v.as_bytes());
                cstring(&b)
            })
            .collect::<Result<_, _>>()?;
        let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        argv_p.push(std::ptr::null());
        let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|a| a.as_ptr()).collect();
        envp_p.push(std::ptr::null());
        Ok(Exec {
            program: cstring(spec.program.as_bytes())?,
            cwd: cstring(spec.cwd.as_os_str().as_bytes())?,
            _argv: argv,
            _envp: envp,
            argv_p,
            envp_p,
        })
    }

    /// execve's argv (null-terminated; valid while `self` lives).
    pub fn argv(&self) -> *const *const libc::c_char {
        self.argv_p.as_ptr()
    }

    /// execve's envp (null-terminated; valid while `self` lives).
    pub fn envp(&self) -> *const *const libc::c_char {
        self.envp_p.as_ptr()
    }
}

/// What the child of the clone needs to tie itself to cordon and map its user, made before
/// the clone: a user namespace (not root: root makes the others without one and keeps its
/// identity) mapping the caller's uid and gid to themselves, and cordon's own pidfd.
pub(super) struct Identity {
    pub user: bool,
    uid_map: String,
    gid_map: String,
    me: OwnedFd,
}

impl Identity {
    pub fn new(user: bool) -> io::Result<Identity> {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        // cordon's own pidfd: the child checks it after setting its parent-death signal,
        // which closes the window where cordon died before that.
        let me = rustix::process::pidfd_open(
            rustix::process::getpid(),
            rustix::process::PidfdFlags::empty(),
        )?;
        Ok(Identity {
            user,
            uid_map: format!("{uid} {uid} 1\n"),
            gid_map: format!("{gid} {gid} 1\n"),
            me,
        })
    }

    /// The borrowed, allocation-free view the child reads.
    pub fn raw(&self) -> RawIdentity<'_> {
        RawIdentity {
            user: self.user,
            uid_map: self.uid_map.as_bytes(),
            gid_map: self.gid_map.as_bytes(),
            me: self.me.as_raw_fd(),
        }
    }
}

/// [`Identity`] as the child reads it (no allocation).
#[derive(Clone, Copy)]
pub(super) struct RawIdentity<'a> {
    user: bool,
    uid_map: &'a [u8],
    gid_map: &'a [u8],
    me: RawFd,
}

impl RawIdentity<'_> {
    /// cordon's pidfd, which the child keeps until it no longer needs it.
    pub fn me(&self) -> RawFd {
        self.me
    }
}

/// Which side of the clone this is.
pub(super) enum Cloned {
    /// The new process, pid 1 of its PID namespace: it must never return past its caller.
    Child,
    /// cordon, with the child's pid and pidfd.
    Parent { pid: libc::pid_t, pidfd: OwnedFd },
}

/// A fork-like clone (no `CLONE_VM`, no new stack) into new namespaces (`flags`), with a
/// pidfd for the child and `SIGCHLD` on its exit. An error whose [`refused`] is true means
/// the kernel refused the namespaces (run without them, or refuse the run).
///
/// # Safety
/// The child continues in a copy of this address space, where another thread of cordon may
/// have held a lock: in [`Cloned::Child`] the caller makes raw system calls only (no
/// allocation, no locks, no stdio) on data it allocated before, and `_exit`s or execs, never
/// returning into cordon's code. glibc's fork handlers do not run and its cached thread id is
/// stale there.
pub(super) unsafe fn clone(flags: libc::c_int) -> io::Result<Cloned> {
    let mut pidfd: libc::c_int = -1;
    // SAFETY: see the function's contract. CLONE_PIDFD stores the pidfd at arg 3 (parent_tid)
    // on x86_64 and aarch64 alike, into `pidfd` on this frame.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::CLONE_PIDFD | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            &mut pidfd as *mut libc::c_int,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        return Ok(Cloned::Child);
    }
    // SAFETY: the clone succeeded with CLONE_PIDFD, so the kernel stored a new pidfd for the
    // child in `pidfd`; nothing else owns it (the child's copy of the variable is its own
    // memory, never read).
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    Ok(Cloned::Parent {
        pid: pid as libc::pid_t,
        pidfd,
    })
}

/// Whether a failed [`clone`] means the kernel refused the namespaces (unprivileged user
/// namespaces disabled, a namespace limit of 0, an LSM), not a failure of cordon's own.
pub(super) fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::ENOSPC | libc::EINVAL | libc::EUSERS | libc::ENOSYS)
    )
}

/// How the child's first steps failed.
pub(super) enum Untied {
    /// This step failed (errno set).
    Step(u8),
    /// cordon is gone already (or its pidfd cannot be polled): stop, fail closed.
    CordonGone,
}

/// In the child, first: dies with cordon (parent-death signal, then cordon's pidfd checked,
/// which closes the window where cordon died before the signal was set).
///
/// # Safety
/// Only in the child of [`clone`]; raw system calls on this frame only.
pub(super) unsafe fn tie_to_cordon(id: &RawIdentity) -> Result<(), Untied> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number, no pointers.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(Untied::Step(STEP_DEATH_SIGNAL));
    }
    let mut alive = libc::pollfd {
        fd: id.me,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll reads and writes one pollfd on this frame without waiting; `me` is
    // cordon's pidfd, open in the child. Readable (or an error) means cordon is gone.
    if unsafe { libc::poll(&mut alive, 1, 0) } != 0 {
        return Err(Untied::CordonGone);
    }
    Ok(())
}

/// In the child, in a new user namespace: `setgroups deny`, then the gid and uid maps (the
/// caller to itself). Nothing without a user namespace. `Err(step)` with errno set.
///
/// # Safety
/// Only in the child of [`clone`]; raw system calls only.
pub(super) unsafe fn map_user(id: &RawIdentity) -> Result<(), u8> {
    if !id.user {
        return Ok(());
    }
    if !write_file(c"/proc/self/setgroups", b"deny") {
        return Err(STEP_SETGROUPS);
    }
    if !write_file(c"/proc/self/gid_map", id.gid_map) {
        return Err(STEP_GID_MAP);
    }
    if !write_file(c"/proc/self/uid_map", id.uid_map) {
        return Err(STEP_UID_MAP);
    }
    Ok(())
}

/// Mounts a fresh `proc` on `/proc` (nosuid, nodev, noexec): the new PID namespace's, in a
/// mount namespace whose mounts were made private first. One system call, no allocation:
/// safe between clone and exec. `false` when the kernel refused.
pub(super) fn mount_proc() -> bool {
    // SAFETY: mount reads three static C string literals; data is null.
    unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) == 0
    }
}

/// Writes `bytes` to an existing file (a /proc control file). System calls only (open,
/// write, close), no allocation: safe between clone and exec.
pub(super) fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> bool {
    // SAFETY: open reads the NUL-terminated `path`; the descriptor is ours and closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    // SAFETY: write reads `bytes.len()` bytes from the live slice; `fd` is the file opened
    // above, closed once, right after.
    unsafe {
        let ok = libc::write(fd, bytes.as_ptr().cast(), bytes.len()) == bytes.len() as isize;
        libc::close(fd);
        ok
    }
}
