//! bwrap started as pid 1 of a PID namespace of cordon's own, so that nothing it starts can
//! outlive cordon.
//!
//! bwrap `--die-with-parent` ties its sandbox to bwrap: the child bwrap clones (pid 1 of
//! bwrap's PID namespace) sets its parent-death signal a moment after the clone. If cordon is
//! SIGKILLed during bwrap's start-up, bwrap dies of the parent-death signal cordon gave it, and
//! a child that had not set its own yet never gets one: it runs on, in a session of its own
//! (out of reach of a process-group kill), holding the command's pipes. Made pid 1 of a PID
//! namespace here, bwrap takes everything it starts with it when it dies, whenever that is:
//! the kernel kills every process of a PID namespace (nested ones included) when its pid 1
//! exits. bwrap itself gets its parent-death signal before it execs, checked against cordon's
//! pidfd (a cordon already gone is seen), so there is no window left.
//!
//! ```text
//!   cordon ── clone(NEWPID [|NEWUSER] | PIDFD) ──▶ pid 1: PDEATHSIG=SIGKILL, cordon alive?,
//!                                                  [user] setgroups deny, uid/gid maps,
//!                                                  setsid, stdio, controlling terminal,
//!                                                  vfork ▶ pid 2: close-on-exec, limits, cwd,
//!                                                  │       signal mask ─▶ execve(bwrap)
//!                                                  └ closes everything, reaps; bwrap gone:
//!                                                    its wait status to cordon, exit
//! ```
//!
//! bwrap is pid 2, not pid 1: pid 1 ignores every signal it has no handler for, and Ctrl-C on
//! the command's terminal (or a signal cordon forwards to the group) must end bwrap as it
//! always did.
//!
//! Everything after `clone` is raw system calls on data allocated before it (the child of a
//! multithreaded process may not allocate or take locks). A step that fails is reported (its
//! index, the errno) on a close-on-exec pipe, whose end-of-file without a record means the
//! exec happened.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::nsclone::{self, Cloned, Exec, Identity, RawIdentity, Untied};
use super::Spec;
use crate::Error;

/// pid 1 started, bwrap executing.
pub(super) struct Started {
    pub pid: libc::pid_t,
    pub pidfd: OwnedFd,
    /// bwrap's wait status, written by pid 1 before it exits ([`status`]).
    pub status: OwnedFd,
}

/// bwrap's wait status as pid 1 reported it, once pid 1 has exited (`None`: it did not get to
/// report, e.g. it was killed).
pub(super) fn status(fd: &OwnedFd) -> Option<i32> {
    let _ = rustix::fs::fcntl_setfl(fd, rustix::fs::OFlags::NONBLOCK);
    let mut b = [0u8; 4];
    matches!(rustix::io::read(fd, &mut b), Ok(4)).then(|| i32::from_ne_bytes(b))
}

/// Why bwrap was not started as pid 1.
pub(super) enum Attempt {
    /// The kernel refused the PID (and user) namespace: start bwrap the ordinary way.
    Unavailable(io::Error),
    /// The start failed (the program, a descriptor, a limit): the run fails.
    Failed(Error),
}

/// The child's steps; the index is what it reports.
const STEPS: [&str; 16] = [
    "parent-death signal",
    "setgroups deny",
    "gid_map",
    "uid_map",
    "setsid",
    "standard streams",
    "controlling terminal",
    "closing inherited file descriptors",
    "resource limits",
    "working directory",
    "signal mask",
    "fork",
    "a mount namespace of its own",
    "a /proc of the PID namespace",
    "the sandbox's own /dev (a tmpfs and a devpts in pid 1's mount namespace)",
    "the working directory entered is not the checked one",
];

/// The step of the check after bwrap's chdir (see [`crate::run::cwd_is`]).
const CWD_STEP: u8 = 15;

/// The step index of the exec itself.
const EXEC: u8 = 255;
/// A record: the step, then the errno.
const REC: usize = 5;

/// What the child needs, allocated before the clone.
struct Data<'a> {
    report: RawFd,
    /// Where pid 1 writes bwrap's wait status (4 bytes) before it exits.
    status: RawFd,
    id: RawIdentity<'a>,
    stdio: [RawFd; 3],
    controlling_tty: i32,
    pass: &'a [RawFd],
    rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    exec: &'a Exec,
    /// The top of the stack bwrap's process runs on until its exec ([`BWRAP_STACK`] bytes).
    bwrap_stack: *mut u8,
    /// Where to make the sandbox's own device nodes (as root), on a tmpfs of pid 1's.
    devices: Option<&'a DeviceNodes>,
    /// Mount a /proc of this PID namespace (in a mount namespace of pid 1's) for bwrap
    /// ([`bwrap_needs_own_proc`]).
    own_proc: bool,
}

/// The pid bwrap's child has in pid 1's namespace: pid 1, bwrap (2), its child (3).
const BWRAP_CHILD: &str = "/proc/3/stat";

/// Whether bwrap needs a /proc of pid 1's PID namespace. bubblewrap opens `/proc/CHILD/ns`
/// right after its clone, always (not only for `--info-fd`/`--json-status-fd`; cordon uses
/// neither) and fails when that directory is missing; what it finds there it only prints for
/// those options. bwrap sees cordon's /proc, where CHILD (3) is another process or none. On
/// the machine's own /proc, pid 3 is a kernel thread (`kthreadd`'s, flag PF_KTHREAD), which
/// never exits: bwrap opens its directory and goes on, and pid 1 needs no mount namespace and
/// no /proc (~2–3 ms of CPU per run, docs/benchmarks.md). Anywhere else (a container's or an
/// outer sandbox's /proc, where pid 3 may be missing or may exit meanwhile) pid 1 mounts a
/// /proc of its own namespace, where pid 3 is bwrap's child.
fn bwrap_needs_own_proc() -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let Ok(stat) = std::fs::read_to_string(BWRAP_CHILD) else {
        return true;
    };
    // The fields after the command name (which may hold spaces and parentheses): state,
    // ppid, pgrp, session, tty_nr, tpgid, flags.
    let flags = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(6))
        .and_then(|f| f.parse::<u64>().ok());
    flags.is_none_or(|f| f & PF_KTHREAD == 0)
}

/// The sandbox's own device nodes as pid 1 makes them: a tmpfs mounted on `dir` in pid 1's
/// mount namespace (a slave of the host's: nothing mounted there reaches the host, and it goes
/// with the namespace), each node made on it. bwrap, started in that namespace, binds them
/// over its `/dev`'s (`crate::bwrap::Invocation::devices`). An inode on tmpfs costs a few
/// microseconds; on the disk's /tmp, 0.2–1 ms each on this machine (docs/benchmarks.md).
struct DeviceNodes {
    dir: std::ffi::CString,
    nodes: Vec<(std::ffi::CString, libc::dev_t)>,
    /// `crate::bwrap::DEVICE_DIRS`, then `crate::bwrap::DEVICE_LINKS` as (target, path).
    dirs: Vec<std::ffi::CString>,
    links: Vec<(std::ffi::CString, std::ffi::CString)>,
    /// Where the devpts instance goes (`pts`).
    pts: std::ffi::CString,
}

impl DeviceNodes {
    fn new(dir: &std::path::Path) -> Result<DeviceNodes, Error> {
        use std::os::unix::ffi::OsStrExt;
        use std::path::Path;
        let c = |p: &std::path::Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_err(|_| Error::other(format!("a NUL byte in {}", p.display())))
        };
        Ok(DeviceNodes {
            dir: c(dir)?,
            nodes: crate::bwrap::DEVICE_NODES
                .iter()
                .map(|(name, major, minor)| {
                    Ok((c(&dir.join(name))?, libc::makedev(*major, *minor)))
                })
                .collect::<Result<_, Error>>()?,
            dirs: crate::bwrap::DEVICE_DIRS
                .iter()
                .map(|name| c(&dir.join(name)))
                .collect::<Result<_, Error>>()?,
            links: crate::bwrap::DEVICE_LINKS
                .iter()
                .map(|(name, target)| Ok((c(Path::new(target))?, c(&dir.join(name))?)))
                .collect::<Result<_, Error>>()?,
            pts: c(&dir.join("pts"))?,
        })
    }
}

/// The stack of pid 2 between pid 1's vfork and bwrap's exec: [`exec_bwrap`] uses a few
/// kilobytes. Allocated (not touched: no page is faulted in until used) before the clone.
const BWRAP_STACK: usize = 256 * 1024;

/// Starts `spec` (bwrap, an absolute path) as pid 1 of a new PID namespace (and a user
/// namespace mapping the caller to itself when not root), inheriting `pass` and limited by
/// `rlimits`.
pub(super) fn spawn(
    spec: &Spec,
    pass: &[RawFd],
    rlimits: &[(libc::__rlimit_resource_t, u64)],
    devices: Option<&std::path::Path>,
) -> Result<Started, Attempt> {
    let failed = |e: io::Error| Attempt::Failed(Error::Io(e));
    let exec = Exec::new(spec).map_err(Attempt::Failed)?;
    let devices = devices
        .map(DeviceNodes::new)
        .transpose()
        .map_err(Attempt::Failed)?;
    let user = !rustix::process::geteuid().is_root();
    let stdio = spec
        .stdio
        .fds
        .each_ref()
        .map(|f| f.as_ref().map_or(-1, |f| f.as_raw_fd()));
    let (report_r, report_w) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| failed(e.into()))?;
    let (status_r, status_w) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| failed(e.into()))?;
    let id = Identity::new(user).map_err(failed)?;
    // Allocated here: nothing is allocated after the clone.
    let mut bwrap_stack = vec![0u8; BWRAP_STACK];
    let data = Data {
        report: report_w.as_raw_fd(),
        status: status_w.as_raw_fd(),
        id: id.raw(),
        stdio,
        controlling_tty: spec.stdio.controlling_tty.unwrap_or(-1),
        pass,
        rlimits,
        exec: &exec,
        // SAFETY: one past the end of the allocation (the stack's top; it grows down).
        bwrap_stack: unsafe { bwrap_stack.as_mut_ptr().add(BWRAP_STACK) },
        devices: devices.as_ref(),
        own_proc: bwrap_needs_own_proc(),
    };
    let mut flags = libc::CLONE_NEWPID;
    if user {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: the child only calls `child`, which makes raw system calls on `data` (built
    // before the clone; nothing in its copy of the address space frees it) and never returns.
    let (pid, pidfd) = match unsafe { nsclone::clone(flags) } {
        Ok(Cloned::Child) => {
            // SAFETY: this is the child of the clone above, with `data` as `child` requires.
            unsafe { child(&data) }
        }
        Ok(Cloned::Parent { pid, pidfd }) => (pid, pidfd),
        Err(e) if nsclone::refused(&e) => return Err(Attempt::Unavailable(e)),
        Err(e) => return Err(failed(e)),
    };
    drop(report_w);
    drop(status_w);
    drop(id);
    // End-of-file without a record: the exec happened (the pipe is close-on-exec).
    let mut rec = [0u8; REC];
    let mut got = 0;
    while got < REC {
        match rustix::io::read(&report_r, &mut rec[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
    }
    if got == 0 {
        return Ok(Started {
            pid,
            pidfd,
            status: status_r,
        });
    }
    // The child reported a failure and exits: reap it.
    // SAFETY: a null status pointer is allowed; `pid` is our unreaped child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL) };
    let errno = i32::from_ne_bytes([rec[1], rec[2], rec[3], rec[4]]);
    let e = io::Error::from_raw_os_error(errno);
    let name = spec.program.to_string_lossy().into_owned();
    Err(match rec[0] {
        EXEC if errno == libc::ENOENT || errno == libc::ENOTDIR => {
            Attempt::Failed(Error::NotFound(name))
        }
        EXEC => Attempt::Failed(Error::NotExecutable(name, e)),
        // The user namespace's maps: the namespace is not usable here. No mount namespace or
        // /proc of its own (an outer sandbox that covers parts of /proc refuses a new one):
        // bwrap could not open its child's /proc entry.
        1..=3 | 12 | 13 => Attempt::Unavailable(e),
        CWD_STEP => Attempt::Failed(crate::run::cwd_changed(&spec.cwd)),
        step => Attempt::Failed(Error::Setup(
            STEPS.get(step as usize).copied().unwrap_or("setup"),
            e,
        )),
    })
}

/// Reports `step` with this thread's errno on `report` and ends the process with 125: how the
/// children of [`spawn`] fail. Raw system calls only, nothing allocated.
///
/// # Safety
/// `report` is open; call only in a child of `spawn`'s clone (no destructors may run there).
unsafe fn report_and_exit(report: RawFd, step: u8) -> ! {
    // SAFETY: __errno_location returns this thread's errno; write reads REC bytes from `rec` on
    // this frame into `report`. _exit ends the process at once, without running cordon's
    // destructors in this copy.
    unsafe {
        let v = (*libc::__errno_location()).to_ne_bytes();
        let rec = [step, v[0], v[1], v[2], v[3]];
        libc::write(report, rec.as_ptr().cast(), REC);
        libc::_exit(125)
    }
}

/// The child: pid 1 of the new PID namespace until it execs bwrap. Raw syscalls only.
///
/// # Safety
/// Call only in the child of `spawn`'s clone, with `d` built before the clone: every pointer
/// in it stays valid because nothing in this copy of the address space frees it, and the
/// descriptors in it were open at the clone. Nothing here may allocate or take a lock.
unsafe fn child(d: &Data) -> ! {
    // SAFETY: `d.report` is the report pipe's write end, open until exec (this function's
    // contract).
    let fail = |step: u8| -> ! { unsafe { report_and_exit(d.report, step) } };
    // Checked: without it, the namespace could outlive cordon.
    // SAFETY: the child of `spawn`'s clone (this function's contract).
    match unsafe { nsclone::tie_to_cordon(&d.id) } {
        Ok(()) => {}
        Err(Untied::Step(step)) => fail(step),
        // SAFETY: as in `fail`.
        Err(Untied::CordonGone) => unsafe { libc::_exit(125) },
    }
    // SAFETY: as above.
    if let Err(step) = unsafe { nsclone::map_user(&d.id) } {
        fail(step);
    }
    // A mount namespace of pid 1's (a slave of the host's: nothing mounted here reaches the
    // host) only for what needs one: a /proc of this PID namespace for bwrap where cordon's
    // does not do ([`bwrap_needs_own_proc`]), and, as root, the sandbox's own /dev. Not for
    // bwrap's status: cordon's inner stage reports that the sandbox was built
    // (`crate::bwrap::with_ready`), not bwrap's `--json-status-fd`.
    if d.own_proc || d.devices.is_some() {
        // SAFETY: unshare takes flags only; mount takes NUL-terminated static strings or nulls.
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_SLAVE,
                    std::ptr::null(),
                ) != 0
            {
                fail(12);
            }
        }
    }
    if d.own_proc && !nsclone::mount_proc() {
        fail(13);
    }
    if let Some(dev) = d.devices {
        // As root, the sandbox's own /dev, on a tmpfs in pid 1's mount namespace.
        // SAFETY: mount, umask, mknod, mkdir and symlink take NUL-terminated strings built
        // before the clone (`DeviceNodes::new`), static strings, nulls or integers;
        // iterating a slice allocates nothing.
        unsafe {
            if libc::mount(
                c"tmpfs".as_ptr(),
                dev.dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"mode=0755,size=4k,nr_inodes=32".as_ptr().cast(),
            ) != 0
            {
                fail(14);
            }
            // The umask must not narrow what every program expects of these nodes; bwrap
            // inherits pid 1's, so it is put back.
            let umask = libc::umask(0);
            for (path, rdev) in &dev.nodes {
                if libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, *rdev) != 0 {
                    fail(14);
                }
            }
            for path in &dev.dirs {
                if libc::mkdir(path.as_ptr(), 0o755) != 0 {
                    fail(14);
                }
            }
            for (target, path) in &dev.links {
                if libc::symlink(target.as_ptr(), path.as_ptr()) != 0 {
                    fail(14);
                }
            }
            libc::umask(umask);
            // A devpts instance of the sandbox's own, with the options bwrap's `--dev` gives
            // its own: the command's pseudo-terminals are not the host's.
            if libc::mount(
                c"devpts".as_ptr(),
                dev.pts.as_ptr(),
                c"devpts".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"newinstance,ptmxmode=0666,mode=620".as_ptr().cast(),
            ) != 0
            {
                fail(14);
            }
        }
    }
    // SAFETY: setsid takes no arguments.
    if unsafe { libc::setsid() } < 0 {
        fail(4);
    }
    for (n, &fd) in d.stdio.iter().enumerate() {
        // The sources are above 2 (Rust's runtime keeps 0-2 open), so no dup2 overwrites
        // another's source. SAFETY: dup2 takes two descriptor numbers, no pointers.
        if fd >= 0 && unsafe { libc::dup2(fd, n as RawFd) } < 0 {
            fail(5);
        }
    }
    // SAFETY: ioctl(TIOCSCTTY) takes an integer argument; the descriptor is one of 0-2.
    if d.controlling_tty >= 0 && unsafe { libc::ioctl(d.controlling_tty, libc::TIOCSCTTY, 0) } != 0
    {
        fail(6);
    }
    // bwrap runs as pid 2, in this session and process group: a signal the terminal or
    // cordon sends the group ends it as it would end bwrap anywhere (pid 1 ignores every
    // signal it has no handler for), and pid 1 follows it out, taking the namespace along.
    // Started as a vfork (posix_spawn's way): it shares pid 1's memory on a stack of its own
    // until its exec, and pid 1 waits meanwhile, so no copy of pid 1's address space (a copy
    // of cordon's, page tables and copy-on-write faults) is made for it. Only its memory is
    // shared: its descriptors, working directory, limits and signal handlers are its own (no
    // CLONE_FILES, CLONE_FS, CLONE_THREAD, CLONE_SIGHAND), as after a fork. What it writes in
    // memory is its own stack, and errno (pid 1's, unread until pid 1's next failed call).
    // SAFETY: clone (glibc's wrapper) runs `bwrap_entry` on the stack whose top
    // `d.bwrap_stack` is (allocated before pid 1's clone, unused by anyone else; the wrapper
    // aligns the stack pointer itself), with `d` as its argument, valid until it execs or
    // exits — pid 1 is suspended until then (CLONE_VFORK).
    let bwrap = unsafe {
        libc::clone(
            bwrap_entry,
            d.bwrap_stack.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            d as *const Data as *mut libc::c_void,
        )
    };
    if bwrap < 0 {
        fail(11);
    }
    // SAFETY: as in `wait_and_report`'s contract: pid 1, `bwrap` its child.
    unsafe { wait_and_report(d, bwrap) }
}

/// The vfork'd bwrap's entry (see `child`): `arg` is pid 1's `Data`.
extern "C" fn bwrap_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `&Data` pid 1 passed to clone, alive (pid 1 is suspended until
    // this process execs or exits, and `exec_bwrap` does one or the other, never returning).
    unsafe { exec_bwrap(&*(arg as *const Data)) }
}

/// pid 2, sharing pid 1's memory until it execs bwrap: its descriptors, limits, working
/// directory and signal mask, then the exec. Raw system calls only.
///
/// # Safety
/// Call only as the vfork'd child of [`child`], with `d` as there.
unsafe fn exec_bwrap(d: &Data) -> ! {
    // SAFETY: `d.report` is the report pipe's write end, open until exec (this function's
    // contract).
    let fail = |step: u8| -> ! { unsafe { report_and_exit(d.report, step) } };
    // Close-on-exec for everything beyond stdio, then cleared for what bwrap must inherit.
    // SAFETY: close_range takes no pointers; it only marks this process's descriptors.
    if unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } != 0
    {
        fail(7);
    }
    for &fd in d.pass {
        // SAFETY: fcntl(F_SETFD) takes an integer; `fd` was open at the clone.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            fail(7);
        }
    }
    for &(resource, value) in d.rlimits {
        let lim = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: setrlimit reads one rlimit on this frame.
        if unsafe { libc::setrlimit(resource, &lim) } != 0 {
            fail(8);
        }
    }
    // SAFETY: chdir reads the NUL-terminated `cwd` (a CString in `d.exec`).
    if unsafe { libc::chdir(d.exec.cwd.as_ptr()) } != 0 {
        fail(9);
    }
    // bwrap starts where the gate checked (its `--chdir` is checked again by the inner stage).
    if !crate::run::cwd_is(&d.exec.cwd) {
        // SAFETY: errno is this thread's; writing it is what failing calls do.
        unsafe { *libc::__errno_location() = libc::ENOENT };
        fail(CWD_STEP);
    }
    // SAFETY: sigset_t is a plain bit array; sigemptyset writes only into `empty` on this
    // frame, sigprocmask reads it. signal(SIGPIPE, SIG_DFL) fails only for a bad number; the
    // handler table is this process's own (no CLONE_SIGHAND).
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
            fail(10);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
    // SAFETY: execve reads the NUL-terminated program path and the null-terminated argv and
    // envp arrays, all built before the clone. It returns only on failure.
    unsafe { libc::execve(d.exec.program.as_ptr(), d.exec.argv(), d.exec.envp()) };
    fail(EXEC)
}

/// pid 1 after starting bwrap: holds nothing of the run (the command's pipes would not see
/// end-of-file while it held them), reaps every child, and once bwrap is gone reports its wait
/// status and exits, which ends the namespace.
///
/// # Safety
/// Call only as pid 1 of `spawn`'s namespace, right after starting bwrap (`bwrap`), with `d`
/// as in [`child`]. Raw system calls only.
unsafe fn wait_and_report(d: &Data, bwrap: libc::pid_t) -> ! {
    // SAFETY: close_range takes no pointers: everything but the status pipe's write end goes
    // (0-2 included: the command's pipes and pty).
    unsafe {
        if d.status > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (d.status - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (d.status + 1) as u32, u32::MAX, 0u32);
    }
    loop {
        let mut st = 0;
        // SAFETY: waitpid writes one int into `st` on this frame.
        let r = unsafe { libc::waitpid(-1, &mut st, libc::__WALL) };
        if r == bwrap {
            let b = st.to_ne_bytes();
            // SAFETY: write reads 4 bytes from `b` on this frame; `status` is open. _exit ends
            // pid 1, and with it the namespace.
            unsafe {
                libc::write(d.status, b.as_ptr().cast(), 4);
                libc::_exit(0)
            }
        }
        // SAFETY: __errno_location returns this thread's errno.
        if r < 0 && unsafe { *libc::__errno_location() } != libc::EINTR {
            // SAFETY: as above.
            unsafe { libc::_exit(125) }
        }
    }
}
