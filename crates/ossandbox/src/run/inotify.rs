//! The Landlock backend's inotify supervisor: Landlock has no right for inotify, so without it
//! a command could watch a directory outside its roots and learn the names made, opened or
//! changed there (issue 21, round 8). bwrap hides such paths; here the kernel asks us.
//!
//! ```text
//!   init (pid 1) ── thread ─▶ supervisor: no_new_privs, landlock_restrict_self (this thread
//!   │  main thread:            only), not dumpable, socket pair
//!   │  outside the domain,     vfork ─▶ the command: setsid, stdio, limits, caps dropped,
//!   │  reaps the command         │       seccomp (the deny list), then `inotify_program` with
//!   │  and reports               │       a new listener, sent to the supervisor over the pair
//!   │                            │       and closed; exec
//!   │                          caps dropped; answers every inotify_add_watch until no task
//!   │                          uses the filter, then the thread ends
//! ```
//!
//! For each call the supervisor reads the path once (`process_vm_readv`), opens it itself
//! (`O_PATH`, relative to the caller's `/proc/PID/cwd`, `O_NOFOLLOW` for `IN_DONT_FOLLOW`,
//! `O_DIRECTORY` for `IN_ONLYDIR`), and keeps only directories and regular files. The check
//! is the kernel's: the supervisor runs in the command's own Landlock domain with its
//! credentials, and opens that object again `O_RDONLY` through `/proc/thread-self/fd/N`; if that
//! open succeeds the command could read it too. Only then does it take the caller's inotify
//! descriptor (`pidfd_getfd`) and add the watch on `/proc/thread-self/fd/N` — the object it opened
//! and checked, never the caller's path again (a `CONTINUE` would let the kernel read the
//! path a second time, which the command could have changed since). Anything else is EACCES.
//!
//! Why a thread of init, and the command's parent: `process_vm_readv` and `pidfd_getfd` need
//! ptrace access, which Landlock grants only within the same domain or to an enclosing one,
//! and Yama (scope 1) only to an ancestor; every process of the command's tree descends from
//! init. A Landlock domain and credentials belong to a thread, so this one can be in the
//! command's domain with the command's credentials while init's main thread stays outside,
//! where Landlock's scoping keeps refusing the command's signals and ptrace-class /proc files
//! of pid 1. A thread, not a process of its own: no copy of init's address space (a copy of
//! cordon's) is made for it, and none for the command (a vfork). Why not dumpable: the
//! command, in the same domain with the same credentials, could otherwise write this memory
//! (init's) through `/proc/1/task/TID/mem` (the command's exec makes it dumpable again).
//! Should the supervisor be gone, a call pending or made later has no listener left, which
//! the kernel answers with ENOSYS: fail closed.

use std::os::fd::{AsRawFd, RawFd};

use rustix::fs::{Mode, OFlags};

/// `PIDFD_THREAD` (Linux 6.9, = O_EXCL): a pidfd for a thread, not only a process's leader
/// (not named by rustix or libc yet). An older kernel refuses it (EINVAL): there only a
/// process's main thread can be given a pidfd, and a watch from another thread fails closed.
const PIDFD_THREAD: u32 = libc::O_EXCL as u32;

/// The longest path the kernel takes (PATH_MAX, its NUL included).
const PATH_MAX: usize = 4096;

/// The calling thread's errno.
fn errno() -> i32 {
    // SAFETY: __errno_location returns a valid, aligned pointer to this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// `n` in decimal into `out`, returning the digits' length.
fn decimal(mut n: u32, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 10];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        out[i] = digits[len - 1 - i];
    }
    len
}

/// `/proc/<kind>/<n>` (kind "thread-self/fd" or a pid and "cwd") as a NUL-terminated string in
/// `buf`, on the stack.
fn proc_path<'b>(head: &[u8], n: u32, tail: &[u8], buf: &'b mut [u8; 64]) -> &'b std::ffi::CStr {
    let mut at = 0;
    for &b in head {
        buf[at] = b;
        at += 1;
    }
    at += decimal(n, &mut buf[at..]);
    for &b in tail {
        buf[at] = b;
        at += 1;
    }
    buf[at] = 0;
    // Only the bytes above, none of them NUL, then the NUL.
    std::ffi::CStr::from_bytes_with_nul(&buf[..=at]).unwrap_or(c"/")
}

/// Receives the listener the command sends over `sock` (raw): -1 if it sent none (it failed
/// before, and reported why).
///
/// # Safety
/// `sock` must be open. System calls only, on stack memory.
unsafe fn receive_listener(sock: RawFd) -> RawFd {
    let mut byte = [0u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    #[repr(C, align(8))]
    struct OneFd([u8; 24]);
    let mut control = OneFd([0; 24]);
    // SAFETY: msghdr is plain integers and pointers; all-zero is valid, filled in below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of::<OneFd>() as _;
    loop {
        // SAFETY: recvmsg writes at most 1 byte into `byte` and 24 into `control`, both on
        // this frame; close-on-exec for the descriptor it installs.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n != 1 {
            return -1;
        }
        break;
    }
    // SAFETY: CMSG_FIRSTHDR reads `msg`'s control fields; a non-null header lies whole
    // inside `control`, and its data (one int when it is SCM_RIGHTS of that length) too.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            || (*cmsg).cmsg_len != libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize
        {
            return -1;
        }
        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>())
    }
}

/// Reads the NUL-terminated path at `addr` in `pid`'s memory into `buf` (page by page: a
/// string that ends just before an unmapped page is still read whole). The errno the kernel
/// would give: EFAULT for unreadable memory, ENAMETOOLONG without a NUL in PATH_MAX bytes;
/// another errno of process_vm_readv as it is.
fn read_path(pid: libc::pid_t, addr: u64, buf: &mut [u8; PATH_MAX]) -> Result<usize, i32> {
    let mut off = 0usize;
    while off < PATH_MAX {
        let at = addr.wrapping_add(off as u64);
        let chunk = (4096 - (at % 4096) as usize).min(PATH_MAX - off);
        let local = libc::iovec {
            iov_base: buf[off..].as_mut_ptr().cast(),
            iov_len: chunk,
        };
        let remote = libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: chunk,
        };
        // SAFETY: process_vm_readv writes at most `chunk` bytes into `buf[off..]` (which
        // holds PATH_MAX - off ≥ chunk) and reads only the other process's memory.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            // Unreadable memory is the caller's EFAULT; anything else (EPERM: no ptrace access,
            // ESRCH: gone) is said as it is.
            let e = errno();
            return Err(if n == 0 || e == libc::EFAULT {
                libc::EFAULT
            } else {
                e
            });
        }
        let n = n as usize;
        if let Some(nul) = buf[off..off + n].iter().position(|&b| b == 0) {
            return Ok(off + nul);
        }
        off += n;
    }
    Err(libc::ENAMETOOLONG)
}

/// Is the notification `id` still pending (its caller alive, waiting in the call)?
fn still_valid(listener: RawFd, id: u64) -> bool {
    // SAFETY: the ioctl reads one u64 from this frame.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

/// The answer to one `inotify_add_watch` call: the watch descriptor, or the errno.
fn answer(listener: RawFd, req: &libc::seccomp_notif) -> Result<i32, i32> {
    let e = |e: rustix::io::Errno| e.raw_os_error();
    if req.data.nr as libc::c_long != libc::SYS_inotify_add_watch {
        return Err(libc::ENOSYS);
    }
    // The calling thread (file watchers often run in a thread of their own): its id is what
    // the kernel gives, and /proc/TID and process_vm_readv take it as well.
    let pid = req.pid as libc::pid_t;
    let target = rustix::process::Pid::from_raw(pid).ok_or(libc::ESRCH)?;
    let pidfd = match rustix::process::pidfd_open(
        target,
        rustix::process::PidfdFlags::from_bits_retain(PIDFD_THREAD),
    ) {
        // A kernel before 6.9: a process's main thread still gets its pidfd.
        Err(rustix::io::Errno::INVAL) => {
            rustix::process::pidfd_open(target, rustix::process::PidfdFlags::empty())
        }
        r => r,
    }
    .map_err(e)?;
    let mut path = [0u8; PATH_MAX];
    let len = read_path(pid, req.data.args[1], &mut path)?;
    let path = std::ffi::CStr::from_bytes_with_nul(&path[..=len]).map_err(|_| libc::EFAULT)?;
    let mask = req.data.args[2] as u32;
    // The caller's view: its working directory (its root is the supervisor's: chroot,
    // pivot_root and new mount namespaces are refused it).
    let mut cwd_buf = [0u8; 64];
    let cwd = rustix::fs::open(
        proc_path(b"/proc/", pid as u32, b"/cwd", &mut cwd_buf),
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(e)?;
    let mut flags = OFlags::PATH | OFlags::CLOEXEC;
    if mask & libc::IN_DONT_FOLLOW != 0 {
        flags |= OFlags::NOFOLLOW;
    }
    if mask & libc::IN_ONLYDIR != 0 {
        flags |= OFlags::DIRECTORY;
    }
    let object = rustix::fs::openat(&cwd, path, flags, Mode::empty()).map_err(e)?;
    let kind = rustix::fs::fstat(&object).map_err(e)?.st_mode & libc::S_IFMT;
    if kind != libc::S_IFDIR && kind != libc::S_IFREG {
        return Err(libc::EACCES);
    }
    let mut self_buf = [0u8; 64];
    let by_fd = proc_path(
        // This thread's own descriptor table (not init's: no CLONE_FILES).
        b"/proc/thread-self/fd/",
        object.as_raw_fd() as u32,
        b"",
        &mut self_buf,
    );
    // The check: this process is in the command's Landlock domain with its credentials, so
    // the kernel lets this open through exactly when it would let the command read the
    // object. Non-blocking and no controlling terminal: a regular file or a directory only,
    // but nothing is left to chance.
    let mut check = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    if kind == libc::S_IFDIR {
        check |= OFlags::DIRECTORY;
    }
    drop(rustix::fs::open(by_fd, check, Mode::empty()).map_err(|_| libc::EACCES)?);
    // Every use of the pid above (its memory, its cwd) was of this caller: it is still
    // waiting in the call, so the pid was not reused; from here on only the pidfd is used.
    if !still_valid(listener, req.id) {
        return Err(libc::ESRCH);
    }
    let inotify = rustix::process::pidfd_getfd(
        &pidfd,
        req.data.args[0] as RawFd,
        rustix::process::PidfdGetfdFlags::empty(),
    )
    .map_err(e)?;
    // The watch on the object opened and checked above; IN_DONT_FOLLOW was applied by that
    // open (here it would watch the /proc link itself).
    let watch = rustix::fs::inotify::WatchFlags::from_bits_retain(mask & !libc::IN_DONT_FOLLOW);
    rustix::fs::inotify::add_watch(&inotify, by_fd, watch).map_err(e)
}

/// Receives the command's listener over `sock` (then closed) and answers every call it
/// notifies until no task uses the filter any more (or none was sent); then returns, and the
/// calling thread ends. Init's main thread reaps the command and reports its status.
///
/// # Safety
/// Call only in init's supervisor thread (`namespaces::supervisor`), with `sock` the socket
/// pair's end the command sends the listener over, this thread's to close. Raw system calls
/// and rustix on stack memory only (no allocation: this is a copy of a multithreaded process).
/// Closes nothing else: this thread shares init's descriptors.
pub(super) unsafe fn serve(sock: RawFd) {
    // SAFETY: `sock` is open (the caller's contract).
    let listener = unsafe { receive_listener(sock) };
    // SAFETY: ours, closed once.
    unsafe { libc::close(sock) };
    if listener < 0 {
        return;
    }
    loop {
        let mut fd = libc::pollfd {
            fd: listener,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll reads and writes the one pollfd on this frame; the listener is open.
        let n = unsafe { libc::poll(&mut fd, 1, -1) };
        if n < 0 {
            // EINTR is the only failure poll has here, and no signal is handled in init: none
            // interrupts it. Anything else stops the answers, which fails the calls closed.
            if errno() == libc::EINTR {
                continue;
            }
            break;
        }
        if fd.revents & libc::POLLIN != 0 {
            serve_one(listener);
        } else if fd.revents != 0 {
            // No task is left under the filter.
            break;
        }
    }
    // SAFETY: ours, closed once.
    unsafe { libc::close(listener) };
}

/// Receives one notification and answers it (a caller killed meanwhile is skipped).
fn serve_one(listener: RawFd) {
    // SAFETY: seccomp_notif is plain integers; the kernel wants it zeroed.
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one seccomp_notif into `req`, on this frame.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } != 0 {
        // ENOENT: the caller was killed before we read it; EINTR: read again next time.
        return;
    }
    let result = answer(listener, &req);
    // SAFETY: seccomp_notif_resp is plain integers; all-zero is valid.
    let mut resp: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
    resp.id = req.id;
    match result {
        Ok(wd) => resp.val = wd as i64,
        Err(e) => resp.error = -e,
    }
    if !still_valid(listener, req.id) {
        return;
    }
    // SAFETY: the ioctl reads one seccomp_notif_resp from this frame. A failure is a caller
    // killed since: nothing waits for the answer.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
}
