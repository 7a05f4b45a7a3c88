//! cordon's inner stage for the bubblewrap backend: a tiny freestanding program that bwrap
//! runs inside the new namespaces, where it applies Landlock and execs the command.
//!
//! Landlock forbids mounts to a restricted process, so the ruleset cannot be applied before
//! bwrap builds the view; something must run between bwrap's setup and the command. cordon
//! builds the ruleset in the parent from host paths (bwrap's binds show the same inodes, and
//! Landlock rules belong to inodes); only what bwrap mounts fresh (`/proc`, `/dev`) is opened
//! here, in the sandbox's view. cordon embeds this program and passes it in a sealed memfd,
//! so no file on the host is trusted to be it.
//!
//! Why freestanding (no libc, raw system calls, its own `_start`): cordon copies it into a
//! memfd and bwrap execs it on every run, so its size and start-up are paid each time. A
//! static std build is 1.2 MB (~0.5 ms to copy); this is a few KB and needs nothing from the
//! sandbox's view, not even a dynamic loader (docs/benchmarks.md).
//!
//! Usage (cordon writes it; nobody else should):
//!
//! ```text
//! cordon-inner RULESET_FD COUNT [PATH DIR_RIGHTS FILE_RIGHTS]{COUNT} cwd DIR [proxy PORT FD [forward PORT]...] [go FD] [ready FD] -- PROG ARGS...
//! cordon-inner zygote SOCK
//! ```
//!
//! The second form serves many runs from one bwrap sandbox (see the zygote section below).
//!
//! Each PATH that exists gets a path-beneath rule with DIR_RIGHTS when it is a directory,
//! FILE_RIGHTS otherwise (a missing one is skipped, as on the host). `cwd DIR` is the
//! directory cordon checked: the working directory bwrap (or the zygote) entered must be it,
//! by the kernel's path, or the stage exits 125 (see `check_cwd`). With `proxy`
//! (`sandbox.network = "proxy"`), the proxy's listener is made on PORT in the sandbox's
//! network namespace (every address there, which is loopback only; IPv6 dual-stack, or
//! 127.0.0.1 without IPv6), sent to cordon over the unix socket FD (`SCM_RIGHTS`), and the
//! command starts only after cordon answers "go" (see cordon's `src/proxy.rs`); this happens
//! before Landlock applies, whose ruleset allows no bind. With `go FD`, the command starts
//! only once cordon writes "go" on FD (a pipe): cordon makes its decision's record durable
//! while bwrap and this stage build the sandbox, and end-of-file (cordon said no, or died)
//! exits 125 with the command never started. Then no_new_privs,
//! `landlock_restrict_self`, every descriptor above stdio close-on-exec, with `ready FD` the
//! byte `R` written on FD (a pipe: cordon's sign that the sandbox was built), and exec of PROG
//! (searched on `PATH` when it has no `/`). Any failure before exec exits 125 with one
//! `cordon: ` line; exec failures exit 127 (not found) or 126, like cordon itself.
//!
//! Built by `build.rs` with rustc alone (`no_std`, no crates, static, not PIE).
//!
//! Everything here is unsafe by nature (raw system calls on pointers from the kernel's entry
//! stack). Every unsafe block states its invariant; `unsafe_op_in_unsafe_fn` is denied on
//! every build, and the SAFETY comments are checked by clippy, which cargo does not run on
//! this file: `scripts/lint-inner.sh` (run by CI) does, and checks its formatting.
//!
//! The program is single-threaded and has no allocator: there is no other thread to race
//! with and nothing to corrupt but this stack; a failure exits 125 before the command runs.

#![no_std]
#![no_main]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::arch::{asm, global_asm};

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const WRITE: usize = 1;
    pub const CLOSE: usize = 3;
    pub const EXECVE: usize = 59;
    pub const EXIT_GROUP: usize = 231;
    pub const PRCTL: usize = 157;
    pub const OPENAT: usize = 257;
    pub const READ: usize = 0;
    pub const SOCKET: usize = 41;
    pub const SENDMSG: usize = 46;
    pub const BIND: usize = 49;
    pub const LISTEN: usize = 50;
    pub const SETSOCKOPT: usize = 54;
    pub const RECVMSG: usize = 47;
    pub const CLONE: usize = 56;
    pub const WAIT4: usize = 61;
    pub const KILL: usize = 62;
    pub const CHDIR: usize = 80;
    pub const GETCWD: usize = 79;
    pub const SETSID: usize = 112;
    pub const PPOLL: usize = 271;
    pub const DUP3: usize = 292;
    pub const NANOSLEEP: usize = 35;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const WRITE: usize = 64;
    pub const CLOSE: usize = 57;
    pub const EXECVE: usize = 221;
    pub const EXIT_GROUP: usize = 94;
    pub const PRCTL: usize = 167;
    pub const OPENAT: usize = 56;
    pub const READ: usize = 63;
    pub const SOCKET: usize = 198;
    pub const BIND: usize = 200;
    pub const LISTEN: usize = 201;
    pub const SETSOCKOPT: usize = 208;
    pub const SENDMSG: usize = 211;
    pub const RECVMSG: usize = 212;
    pub const CLONE: usize = 220;
    pub const WAIT4: usize = 260;
    pub const KILL: usize = 129;
    pub const CHDIR: usize = 49;
    pub const GETCWD: usize = 17;
    pub const SETSID: usize = 157;
    pub const PPOLL: usize = 73;
    pub const DUP3: usize = 24;
    pub const NANOSLEEP: usize = 101;
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the inner stage supports x86_64 and aarch64");

// Shared by both architectures (the syscall numbers added since Linux 5.1 are unified).
const CLOSE_RANGE: usize = 436;
const PIDFD_OPEN: usize = 434;
const LANDLOCK_ADD_RULE: usize = 445;
const LANDLOCK_RESTRICT_SELF: usize = 446;
const LANDLOCK_RULE_PATH_BENEATH: usize = 1;
const PR_SET_NO_NEW_PRIVS: usize = 38;
const PR_SET_DUMPABLE: usize = 4;
const CLOSE_RANGE_CLOEXEC: usize = 1 << 2;
const AT_FDCWD: isize = -100;
const O_PATH: usize = 0o10000000;
const O_DIRECTORY: usize = if cfg!(target_arch = "aarch64") {
    0o40000
} else {
    0o200000
};
const O_CLOEXEC: usize = 0o2000000;
const ENOENT: isize = 2;
const EACCES: isize = 13;
const ENOTDIR: isize = 20;

// The kernel's entry: the stack holds argc, argv[], NULL, envp[], NULL.
#[cfg(target_arch = "x86_64")]
global_asm!(
    ".globl _start",
    "_start:",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {main}",
    "ud2",
    main = sym start,
);
#[cfg(target_arch = "aarch64")]
global_asm!(
    ".globl _start",
    "_start:",
    "mov x0, sp",
    "bl {main}",
    "brk #0",
    main = sym start,
);

/// A system call with up to four arguments, the fifth zero (prctl checks it); a negative
/// result is -errno.
///
/// # Safety
/// As `syscall5`.
unsafe fn syscall(n: usize, a: usize, b: usize, c: usize, d: usize) -> isize {
    // SAFETY: the caller upholds syscall5's contract for these arguments.
    unsafe { syscall5(n, a, b, c, d, 0) }
}
/// A system call with five arguments (setsockopt).
///
/// # Safety
/// Every argument the kernel reads as a pointer must point at live memory of the size and
/// layout system call `n` expects (writable where it writes), and the call must not break
/// an invariant of this program (no munmap of its own memory, no exit without meaning to).
#[cfg(target_arch = "x86_64")]
unsafe fn syscall5(n: usize, a: usize, b: usize, c: usize, d: usize, e: usize) -> isize {
    let r: isize;
    // SAFETY: the x86_64 Linux syscall convention: number in rax, arguments in rdi, rsi,
    // rdx, r10, r8; the kernel returns in rax and clobbers rcx and r11, declared here. It
    // does not touch the stack (nostack). What the call does with memory is the caller's.
    unsafe {
        asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a, in("rsi") b,
             in("rdx") c, in("r10") d, in("r8") e, lateout("rcx") _, lateout("r11") _,
             options(nostack));
    }
    r
}
/// A system call with five arguments (setsockopt).
///
/// # Safety
/// As the x86_64 version.
#[cfg(target_arch = "aarch64")]
unsafe fn syscall5(n: usize, a: usize, b: usize, c: usize, d: usize, e: usize) -> isize {
    let r: isize;
    // SAFETY: the aarch64 Linux syscall convention: number in x8, arguments in x0..x4, result
    // in x0; the kernel preserves every other register. What the call does with memory is
    // the caller's.
    unsafe {
        asm!("svc 0", in("x8") n, inlateout("x0") a as isize => r, in("x1") b, in("x2") c,
             in("x3") d, in("x4") e, options(nostack));
    }
    r
}

fn write_err(bytes: &[u8]) {
    // SAFETY: write reads `bytes.len()` bytes from a live slice; fd 2 may be closed, which
    // only makes the message go nowhere (the exit code still says what happened).
    unsafe { syscall(nr::WRITE, 2, bytes.as_ptr() as usize, bytes.len(), 0) };
}

fn exit(code: usize) -> ! {
    loop {
        // exit_group does not return.
        // SAFETY: exit_group takes no pointers and ends the process, which is what we mean.
        unsafe { syscall(nr::EXIT_GROUP, code, 0, 0, 0) };
    }
}

/// Prints `cordon: <parts...>` and exits with `code`.
fn fail(code: usize, parts: &[&[u8]]) -> ! {
    write_err(b"cordon: ");
    for p in parts {
        write_err(p);
    }
    write_err(b"\n");
    exit(code)
}

fn errno_text(e: isize) -> &'static [u8] {
    match e {
        1 => b"Operation not permitted",
        2 => b"No such file or directory",
        7 => b"Argument list too long",
        8 => b"Exec format error",
        9 => b"Bad file descriptor",
        12 => b"Cannot allocate memory",
        13 => b"Permission denied",
        20 => b"Not a directory",
        22 => b"Invalid argument",
        26 => b"Text file busy",
        32 => b"Broken pipe",
        36 => b"File name too long",
        38 => b"Function not implemented",
        40 => b"Too many levels of symbolic links",
        77 => b"File descriptor in bad state",
        97 => b"Address family not supported by protocol",
        98 => b"Address already in use",
        99 => b"Cannot assign requested address",
        _ => b"system error",
    }
}

fn setup_fail(what: &[u8], detail: &[u8], errno: isize) -> ! {
    fail(
        125,
        &[b"inner stage: ", what, detail, b": ", errno_text(errno)],
    )
}

/// A NUL-terminated C string as a byte slice (without the NUL).
///
/// # Safety
/// `p` must point at a NUL-terminated string that is neither freed nor written for `'a`
/// (the argument and environment strings on the entry stack are, for the whole program).
unsafe fn c_str<'a>(p: *const u8) -> &'a [u8] {
    let mut n = 0;
    // Volatile: a plain loop becomes a call to strlen, which does not exist here.
    // SAFETY: every byte up to and including the NUL is inside the caller's string.
    while unsafe { core::ptr::read_volatile(p.add(n)) } != 0 {
        n += 1;
    }
    // SAFETY: `p..p+n` are the string's bytes, initialised and unchanged for `'a`.
    unsafe { core::slice::from_raw_parts(p, n) }
}

fn number(arg: Option<*const u8>, what: &[u8]) -> usize {
    let Some(p) = arg else {
        fail(125, &[b"inner stage: expected ", what]);
    };
    // SAFETY: `arg` yields only pointers from argv below argc: NUL-terminated strings on the
    // entry stack, never written.
    let s = unsafe { c_str(p) };
    let mut v: usize = 0;
    if s.is_empty() {
        fail(125, &[b"inner stage: expected ", what]);
    }
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            fail(125, &[b"inner stage: expected ", what]);
        }
        v = match v.checked_mul(10).and_then(|v| v.checked_add(d as usize)) {
            Some(v) => v,
            None => fail(125, &[b"inner stage: expected ", what]),
        };
    }
    v
}

// struct landlock_path_beneath_attr is packed in the kernel's UAPI.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds a path-beneath rule for `path` (skipped when it does not exist) to `ruleset`; any
/// other failure exits 125.
///
/// # Safety
/// `path` must be a NUL-terminated string live for the call (an argv entry). `ruleset` is a
/// number from the command line: if it is not a Landlock ruleset, the kernel refuses the rule
/// (EBADF/EBADFD) and the program exits 125.
unsafe fn add_rule(ruleset: usize, path: *const u8, dir_rights: u64, file_rights: u64) {
    // SAFETY: openat reads the NUL-terminated `path` (the caller's contract); O_PATH opens
    // nothing for reading and follows the sandbox's view.
    let open =
        |flags: usize| unsafe { syscall(nr::OPENAT, AT_FDCWD as usize, path as usize, flags, 0) };
    // The type from which open succeeds: no stat structure, whose layout differs per arch.
    let (fd, rights) = match open(O_PATH | O_CLOEXEC | O_DIRECTORY) {
        fd if fd >= 0 => (fd, dir_rights),
        e if e == -ENOTDIR => (open(O_PATH | O_CLOEXEC), file_rights),
        e => (e, 0),
    };
    if fd == -ENOENT {
        return;
    }
    if fd < 0 {
        // SAFETY: `path` is NUL-terminated and live (the caller's contract).
        setup_fail(b"opening ", unsafe { c_str(path) }, -fd);
    }
    let attr = PathBeneath {
        allowed_access: rights,
        parent_fd: fd as i32,
    };
    // SAFETY: landlock_add_rule reads one packed `landlock_path_beneath_attr` (12 bytes,
    // `PathBeneath` is its exact layout) from this frame; `fd` is the O_PATH descriptor
    // just opened, which the kernel only references while adding the rule.
    let r = unsafe {
        syscall(
            LANDLOCK_ADD_RULE,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneath as usize,
            0,
        )
    };
    if r < 0 {
        // SAFETY: as above.
        setup_fail(b"adding ", unsafe { c_str(path) }, -r);
    }
    // SAFETY: `fd` is ours (opened above) and not used again; a failed close leaves an
    // O_PATH descriptor that close_range marks close-on-exec before the command runs.
    unsafe { syscall(nr::CLOSE, fd as usize, 0, 0, 0) };
}

/// `PATH`'s value from the environment, or the default `execvp` uses.
///
/// # Safety
/// `envp` must be the entry stack's environment: a null-terminated array of NUL-terminated
/// strings that live (unchanged) for the whole program, hence `'static`.
unsafe fn path_var(envp: *const *const u8) -> &'static [u8] {
    let mut e = envp;
    // SAFETY: `e` walks the array up to and including its null terminator, never past it.
    while !unsafe { *e }.is_null() {
        // SAFETY: a non-null entry is a NUL-terminated string living for the program.
        let s: &'static [u8] = unsafe { c_str(*e) };
        if let Some(v) = s.strip_prefix(b"PATH=") {
            return v;
        }
        // SAFETY: this entry was not the terminator, so the next one is in the array.
        e = unsafe { e.add(1) };
    }
    b"/bin:/usr/bin"
}

/// execvp: the program as given when it names a path, else each `PATH` directory in turn.
/// Never returns: the command runs, or the program exits 127 (not found) or 126.
///
/// # Safety
/// `argv` must be a null-terminated array of NUL-terminated strings with a non-null first
/// entry, and `envp` the entry stack's environment, both live for the program.
unsafe fn exec(argv: *const *const u8, envp: *const *const u8) -> ! {
    // SAFETY: argv[0] exists and is a string (the caller's contract).
    let prog = unsafe { *argv };
    // SAFETY: as above.
    let name = unsafe { c_str(prog) };
    // SAFETY: execve reads the NUL-terminated path `p` (argv[0] or `buf` below, both live
    // across the call) and the caller's argv/envp arrays; it returns only on failure.
    let run =
        |p: *const u8| unsafe { syscall(nr::EXECVE, p as usize, argv as usize, envp as usize, 0) };
    let mut denied = 0;
    if name.contains(&b'/') {
        denied = -run(prog);
    } else if !name.is_empty() {
        let mut buf = [0u8; 4096];
        // SAFETY: `envp` is the entry stack's environment (the caller's contract).
        for dir in unsafe { path_var(envp) }.split(|&c| c == b':') {
            let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
            let len = dir.len() + 1 + name.len();
            if len >= buf.len() {
                continue;
            }
            buf[..dir.len()].copy_from_slice(dir);
            buf[dir.len()] = b'/';
            buf[dir.len() + 1..len].copy_from_slice(name);
            buf[len] = 0;
            let e = -run(buf.as_ptr());
            // Like execvp: keep looking past missing entries, remember a refusal.
            if e == EACCES || (e != ENOENT && e != ENOTDIR && denied == 0) {
                denied = e;
            }
        }
        if denied == 0 {
            denied = ENOENT;
        }
    } else {
        denied = ENOENT;
    }
    if denied == ENOENT || denied == ENOTDIR {
        fail(127, &[name, b": command not found"]);
    }
    fail(126, &[name, b": cannot execute: ", errno_text(denied)])
}

const AF_INET: usize = 2;
const AF_INET6: usize = 10;
const SOCK_STREAM: usize = 1;
const SOCK_CLOEXEC: usize = O_CLOEXEC;
const IPPROTO_IPV6: usize = 41;
const IPV6_V6ONLY: usize = 26;
const SOMAXCONN: usize = 4096;
const MSG_NOSIGNAL: usize = 0x4000;
const SOL_SOCKET: i32 = 1;
const SCM_RIGHTS: i32 = 1;
const EAFNOSUPPORT: isize = 97;
const EINTR: isize = 4;

#[repr(C)]
struct SockaddrIn6 {
    family: u16,
    port: u16,
    flowinfo: u32,
    addr: [u8; 16],
    scope_id: u32,
}

#[repr(C)]
struct SockaddrIn {
    family: u16,
    port: u16,
    addr: [u8; 4],
    zero: [u8; 8],
}

#[repr(C)]
struct Iovec {
    base: *mut u8,
    len: usize,
}

#[repr(C)]
struct Msghdr {
    name: *mut u8,
    namelen: u32,
    iov: *mut Iovec,
    iovlen: usize,
    control: *mut u8,
    controllen: usize,
    flags: i32,
}

/// `struct cmsghdr` followed by one descriptor: CMSG_SPACE(sizeof(int)) on 64-bit.
#[repr(C)]
struct OneFd {
    len: usize,
    level: i32,
    kind: i32,
    fd: i32,
    pad: i32,
}

/// A listener on `port` (every address of the namespace: loopback only), sent over `sock`.
/// Any failure exits 125: the command never starts without the listeners cordon serves.
///
/// # Safety
/// None beyond the system calls' own: every pointer passed is to this frame. `sock` is a
/// number from the command line; if it is not cordon's socket the send fails and the program
/// exits 125.
unsafe fn listen_and_send(port: u16, sock: usize) {
    // SAFETY: socket takes no pointers.
    let mut fd = unsafe { syscall(nr::SOCKET, AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0, 0) };
    if fd >= 0 {
        let off: i32 = 0;
        // SAFETY: setsockopt reads 4 bytes (one int) from `off` on this frame.
        let r = unsafe {
            syscall5(
                nr::SETSOCKOPT,
                fd as usize,
                IPPROTO_IPV6,
                IPV6_V6ONLY,
                &off as *const i32 as usize,
                4,
            )
        };
        if r < 0 {
            setup_fail(b"the proxy's listener: ", b"IPV6_V6ONLY", -r);
        }
        // [::]:port; the namespace has only loopback.
        let addr = SockaddrIn6 {
            family: AF_INET6 as u16,
            port: port.to_be(),
            flowinfo: 0,
            addr: [0; 16],
            scope_id: 0,
        };
        // SAFETY: bind reads 28 bytes, the size of `SockaddrIn6` (the kernel's repr(C)
        // `sockaddr_in6`), from this frame.
        let r = unsafe {
            syscall(
                nr::BIND,
                fd as usize,
                &addr as *const SockaddrIn6 as usize,
                28,
                0,
            )
        };
        if r < 0 {
            setup_fail(b"the proxy's listener: ", b"bind", -r);
        }
    } else if fd == -EAFNOSUPPORT {
        // SAFETY: socket takes no pointers.
        fd = unsafe { syscall(nr::SOCKET, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, 0) };
        if fd < 0 {
            setup_fail(b"the proxy's listener: ", b"socket", -fd);
        }
        let addr = SockaddrIn {
            family: AF_INET as u16,
            port: port.to_be(),
            addr: [127, 0, 0, 1],
            zero: [0; 8],
        };
        // SAFETY: bind reads 16 bytes, the size of `SockaddrIn` (`sockaddr_in`), from this
        // frame.
        let r = unsafe {
            syscall(
                nr::BIND,
                fd as usize,
                &addr as *const SockaddrIn as usize,
                16,
                0,
            )
        };
        if r < 0 {
            setup_fail(b"the proxy's listener: ", b"bind", -r);
        }
    } else {
        setup_fail(b"the proxy's listener: ", b"socket", -fd);
    }
    // SAFETY: listen takes no pointers.
    let r = unsafe { syscall(nr::LISTEN, fd as usize, SOMAXCONN, 0, 0) };
    if r < 0 {
        setup_fail(b"the proxy's listener: ", b"listen", -r);
    }
    let mut byte = [b'L'];
    let mut iov = Iovec {
        base: byte.as_mut_ptr(),
        len: 1,
    };
    let mut control = OneFd {
        len: 20, // CMSG_LEN(sizeof(int))
        level: SOL_SOCKET,
        kind: SCM_RIGHTS,
        fd: fd as i32,
        pad: 0,
    };
    let msg = Msghdr {
        name: core::ptr::null_mut(),
        namelen: 0,
        iov: &mut iov,
        iovlen: 1,
        control: &mut control as *mut OneFd as *mut u8,
        controllen: 24,
        flags: 0,
    };
    // SAFETY: sendmsg reads `msg` (the 64-bit `struct msghdr` layout: this program builds
    // for x86_64 and aarch64 only), the one-byte iovec and the 24-byte control message
    // (cmsghdr + one int, CMSG_SPACE(4) on 64-bit), all on this frame; the kernel takes its
    // own reference to `fd`.
    let r = unsafe {
        syscall(
            nr::SENDMSG,
            sock,
            &msg as *const Msghdr as usize,
            MSG_NOSIGNAL,
            0,
        )
    };
    if r != 1 {
        setup_fail(b"handing the proxy's listener to cordon", b"", -r);
    }
    // SAFETY: `fd` is ours and not used again (cordon holds its own reference now).
    unsafe { syscall(nr::CLOSE, fd as usize, 0, 0, 0) };
}

/// The most `forward PORT` arguments read (`[network.forward]` entries).
const MAX_FORWARDS: usize = 64;

/// The proxy's listener on `port` and one per forwarded port, each sent over `sock`; returns
/// once cordon said "go". Any failure exits 125: the command never starts without the
/// listeners cordon's proxy serves.
///
/// # Safety
/// As [`listen_and_send`].
unsafe fn proxy_listener(port: u16, forwards: &[u16], sock: usize) {
    // SAFETY: as this function's.
    unsafe { listen_and_send(port, sock) };
    for &p in forwards {
        // SAFETY: as this function's.
        unsafe { listen_and_send(p, sock) };
    }
    // cordon answers "go" once the proxy holds the listener; end-of-file means it failed.
    // SAFETY: no preconditions beyond its system calls' own.
    unsafe {
        wait_go(
            sock,
            b"inner stage: cordon did not take the proxy's listener",
        )
    };
}

/// Waits for cordon's "go" byte on `fd` and closes it; anything else (end-of-file: cordon
/// said no, or is gone) exits 125 with `why`, before the command starts.
///
/// # Safety
/// None beyond its system calls' own (read and close on a descriptor number, a byte on this
/// frame).
unsafe fn wait_go(fd: usize, why: &[u8]) {
    let mut go = 0u8;
    loop {
        // SAFETY: read writes at most one byte into `go` on this frame.
        let r = unsafe { syscall(nr::READ, fd, &mut go as *mut u8 as usize, 1, 0) };
        if r == -EINTR {
            continue;
        }
        // SAFETY: `go` is a live, initialised local (volatile: the kernel wrote it).
        if r != 1 || unsafe { core::ptr::read_volatile(&go) } != b'G' {
            fail(125, &[why]);
        }
        break;
    }
    // SAFETY: `fd` is not used again; if the close fails, close_range below still keeps
    // it from the command.
    unsafe { syscall(nr::CLOSE, fd, 0, 0, 0) };
}

/// Exits 125 unless the working directory bwrap's `--chdir` (or the zygote) entered is, by
/// its path in this view, `expected`: the directory cordon checked. `chdir` resolves the path
/// again, here, after the check; a component swapped meanwhile for a link (by an earlier run
/// still going) would start the command elsewhere. The kernel's path of the directory
/// entered has no links in it, so a link anywhere on the way shows as a different path.
fn check_cwd(expected: &[u8]) {
    const PATH_MAX: usize = 4096;
    let mut buf = [0u8; PATH_MAX];
    // SAFETY: getcwd writes at most PATH_MAX bytes into `buf`, on this frame.
    let n = unsafe { syscall(nr::GETCWD, buf.as_mut_ptr() as usize, PATH_MAX, 0, 0) };
    if n < 0 {
        setup_fail(b"reading the working directory", b"", -n);
    }
    // The length counts the NUL; an unreachable directory reads "(unreachable)/…", which no
    // checked path equals.
    let got = &buf[..(n as usize).saturating_sub(1)];
    if got != expected {
        fail(
            125,
            &[
                b"the working directory ",
                expected,
                b" changed after cordon checked it (the run entered ",
                got,
                b"): refusing to run there; run the command again",
            ],
        );
    }
}

/// The program's entry, called from `_start` with the kernel's initial stack pointer.
///
/// # Safety
/// `sp` must point at the System V entry stack: argc, argv[argc] and its null terminator,
/// then envp and its null terminator, all strings NUL-terminated. Only `_start` calls it.
unsafe extern "C" fn start(sp: *const usize) -> ! {
    // SAFETY: the entry stack begins with argc.
    let argc = unsafe { *sp };
    // SAFETY: argv follows argc, and envp follows argv's argc entries and its terminator,
    // all inside the entry stack.
    let argv = unsafe { sp.add(1) } as *const *const u8;
    // SAFETY: as above.
    let envp = unsafe { argv.add(argc + 1) };
    let mut i = 1;
    // SAFETY: `i < argc`, so argv[i] is one of the argument pointers.
    let arg = |i: usize| (i < argc).then(|| unsafe { *argv.add(i) });
    // `zygote SOCK`: serve runs over SOCK until cordon closes it (see [`zygote`]).
    // SAFETY: argv strings are NUL-terminated and live for the program.
    if arg(1).map(|p| unsafe { c_str(p) }) == Some(b"zygote") {
        let sock = number(arg(2), b"the zygote's socket");
        // SAFETY: called once, here, on the only thread.
        unsafe { zygote(sock) }
    }
    let ruleset = number(arg(i), b"the ruleset descriptor");
    let count = number(arg(i + 1), b"the number of rules");
    i += 2;
    for _ in 0..count {
        let Some(path) = arg(i) else {
            fail(125, &[b"inner stage: expected a path"]);
        };
        let dir_rights = number(arg(i + 1), b"directory rights") as u64;
        let file_rights = number(arg(i + 2), b"file rights") as u64;
        // SAFETY: `path` is an argv string, live for the program.
        unsafe { add_rule(ruleset, path, dir_rights, file_rights) };
        i += 3;
    }
    // `cwd PATH`: the directory cordon checked (canonical, inside the policy's roots).
    // SAFETY: argv strings are NUL-terminated and live for the program.
    if arg(i).map(|p| unsafe { c_str(p) }) != Some(b"cwd") {
        fail(125, &[b"inner stage: expected the checked cwd"]);
    }
    let Some(cwd) = arg(i + 1) else {
        fail(125, &[b"inner stage: expected the checked cwd"]);
    };
    // SAFETY: `cwd` is an argv string, live for the program.
    check_cwd(unsafe { c_str(cwd) });
    i += 2;
    // SAFETY: argv strings are NUL-terminated and live for the program.
    if arg(i).map(|p| unsafe { c_str(p) }) == Some(b"proxy") {
        let port = number(arg(i + 1), b"the proxy's port");
        let sock = number(arg(i + 2), b"the proxy's handoff descriptor");
        if port == 0 || port > u16::MAX as usize {
            fail(125, &[b"inner stage: expected the proxy's port"]);
        }
        i += 3;
        let mut forwards = [0u16; MAX_FORWARDS];
        let mut n = 0;
        // SAFETY: argv strings are NUL-terminated and live for the program.
        while arg(i).map(|p| unsafe { c_str(p) }) == Some(b"forward") {
            let p = number(arg(i + 1), b"a forwarded port");
            if p == 0 || p > u16::MAX as usize || n == MAX_FORWARDS {
                fail(125, &[b"inner stage: expected a forwarded port"]);
            }
            forwards[n] = p as u16;
            n += 1;
            i += 2;
        }
        // SAFETY: no preconditions beyond its system calls' own.
        unsafe { proxy_listener(port as u16, &forwards[..n], sock) };
    }
    // `go FD`: cordon says when the command may start (its decision's record is durable);
    // the sandbox above is built meanwhile. End-of-file means it must not: exit 125.
    // SAFETY: as above.
    if arg(i).map(|p| unsafe { c_str(p) }) == Some(b"go") {
        let fd = number(arg(i + 1), b"the go descriptor");
        i += 2;
        // SAFETY: no preconditions beyond its system calls' own.
        unsafe { wait_go(fd, b"inner stage: cordon did not release the command") };
    }
    // `ready FD`: told to cordon once the sandbox is built, right before the exec (below).
    let mut ready = None;
    // SAFETY: as above.
    if arg(i).map(|p| unsafe { c_str(p) }) == Some(b"ready") {
        ready = Some(number(arg(i + 1), b"the ready descriptor"));
        i += 2;
    }
    // SAFETY: as above.
    if arg(i).map(|p| unsafe { c_str(p) }) != Some(b"--") {
        fail(125, &[b"inner stage: expected `--` before the command"]);
    }
    i += 1;
    if i >= argc {
        fail(125, &[b"inner stage: no command"]);
    }
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) takes no pointers; the unused arguments are 0 as
    // the kernel requires. Failure exits 125.
    if unsafe { syscall(nr::PRCTL, PR_SET_NO_NEW_PRIVS, 1, 0, 0) } < 0 {
        fail(125, &[b"inner stage: no_new_privs failed"]);
    }
    // SAFETY: landlock_restrict_self takes a descriptor and flags 0, no pointers. Failure
    // exits 125: the command never runs without the ruleset.
    let r = unsafe { syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0, 0, 0) };
    if r < 0 {
        setup_fail(b"landlock_restrict_self", b"", -r);
    }
    // Nothing of cordon's (the ruleset, this program's memfd) reaches the command.
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only marks descriptors; it takes no
    // pointers and closes nothing this program still uses before exec.
    let r = unsafe { syscall(CLOSE_RANGE, 3, u32::MAX as usize, CLOSE_RANGE_CLOEXEC, 0) };
    if r < 0 {
        setup_fail(b"close_range", b"", -r);
    }
    // The sandbox is built (bwrap's mounts, seccomp, Landlock): cordon takes this byte as the
    // sign that what bwrap reports after it is the command's status, not bwrap's own failure
    // (it replaces bwrap's `--json-status-fd`, which reads /proc/CHILD/ns and so needs a /proc
    // of the PID namespace bwrap runs in). Not written, the command does not run: exit 125.
    if let Some(fd) = ready {
        let r = loop {
            // SAFETY: write reads one byte from a static on this program's image.
            let r = unsafe { syscall(nr::WRITE, fd, b"R".as_ptr() as usize, 1, 0) };
            if r != -EINTR {
                break r;
            }
        };
        if r != 1 {
            setup_fail(b"telling cordon the sandbox is ready", b"", -r);
        }
        // SAFETY: `fd` is not used again; it is close-on-exec (close_range above) anyway.
        unsafe { syscall(nr::CLOSE, fd, 0, 0, 0) };
    }
    // SAFETY: `i < argc` (checked above), so argv+i is a non-empty null-terminated array of
    // argument strings; `envp` is the entry stack's environment.
    unsafe { exec(argv.add(i), envp) }
}

// ---- The zygote (`cordon-inner zygote SOCK`) ------------------------------------------------
//
// A long-lived front end (`cordon mcp`) starts bwrap once with this program as its command and
// hands it each run over SOCK (a SOCK_SEQPACKET unix socket, cordon's other end): one request,
// one run at a time. A request is one message:
//
//   b'X', argc: u32, envc: u32, CWD\0, ARGV[0]\0 … ARGV[argc-1]\0, ENV[0]\0 … ENV[envc-1]\0
//
// with the run's stdin, stdout and stderr attached (SCM_RIGHTS, three descriptors). ARGV is
// this same program in its one-shot form (`/proc/self/fd/N RULESET COUNT … -- PROG ARGS`),
// so every per-run layer (the inside rules, no_new_privs, landlock_restrict_self, close-on-exec
// of everything beyond stdio, the exec) is the one-shot run's own code, applied fresh in each
// run's process. The zygote forks; the child takes the three descriptors as 0, 1 and 2, starts
// a session of its own (as bwrap's `--new-session`), enters CWD and execs ARGV[0]. cordon may
// send b'K' while the run lasts: the run is killed. When the run's process has exited, every
// other process of the sandbox's PID namespace but its init (bwrap's) and the zygote is killed
// (`kill(-1, SIGKILL)` until none is left: what a one-shot run gets from its whole namespace
// dying), and only then is the answer sent: b'S' and the wait status (4 bytes, native order),
// or b'F' and an errno when the fork failed. End-of-file on SOCK (cordon is done, or gone):
// everything is killed and the zygote exits, which ends the sandbox.

/// The largest request read (what cordon sends stays below a socket buffer's size).
const REQUEST_MAX: usize = 256 * 1024;
/// The most argument and environment strings a request may carry, together.
const STRINGS_MAX: usize = 16 * 1024;

// In .bss: zero pages from the kernel, nothing to initialise (a stack array would be memset
// byte by byte on every request).
static mut REQUEST: [u8; REQUEST_MAX] = [0; REQUEST_MAX];
static mut POINTERS: [usize; STRINGS_MAX + 2] = [0; STRINGS_MAX + 2];

const SIGKILL: usize = 9;
const SIGCHLD: usize = 17;
const ESRCH: isize = 3;
const MSG_TRUNC: i32 = 0x20;
const MSG_CTRUNC: i32 = 0x8;
const MSG_CMSG_CLOEXEC: usize = 0x4000_0000;
const POLLIN: i16 = 1;

/// `struct cmsghdr` followed by three descriptors: CMSG_SPACE(3 * sizeof(int)) on 64-bit.
#[repr(C)]
struct ThreeFds {
    len: usize,
    level: i32,
    kind: i32,
    fds: [i32; 3],
    pad: i32,
}

#[repr(C)]
struct Pollfd {
    fd: i32,
    events: i16,
    revents: i16,
}

#[repr(C)]
struct Timespec {
    sec: isize,
    nsec: isize,
}

/// Sends `bytes` to cordon; a failure means cordon is gone: everything ends.
fn answer(sock: usize, bytes: &[u8]) {
    // SAFETY: write reads `bytes.len()` bytes from a live slice.
    let r = unsafe { syscall(nr::WRITE, sock, bytes.as_ptr() as usize, bytes.len(), 0) };
    if r != bytes.len() as isize {
        kill_all();
        exit(0);
    }
}

/// Kills every process of the sandbox but its init and the zygote, and waits until there is
/// none left (bwrap's init reaps them; a zombie still counts). A run whose processes cannot be
/// ended within about 20 s ends the zygote instead: cordon sees the end of its socket and
/// refuses the call, and the sandbox dies with the zygote.
fn kill_all() {
    let pause = Timespec {
        sec: 0,
        nsec: 1_000_000,
    };
    for _ in 0..20_000 {
        // SAFETY: kill takes no pointers; -1 is every process of this PID namespace the
        // zygote may signal, except the namespace's init and the zygote itself.
        if unsafe { syscall(nr::KILL, usize::MAX, SIGKILL, 0, 0) } == -ESRCH {
            return;
        }
        // SAFETY: nanosleep reads `pause` on this frame and writes no remainder (null).
        unsafe { syscall(nr::NANOSLEEP, &pause as *const Timespec as usize, 0, 0, 0) };
    }
    fail(
        125,
        &[b"zygote: a run's processes did not end; ending the sandbox"],
    )
}

/// Kills and reaps the run's process `child` (a zombie child of ours would count as a process
/// left), then everything else of the run.
fn end_run(child: usize) {
    // SAFETY: kill takes no pointers; `child` is our unreaped child.
    unsafe { syscall(nr::KILL, child, SIGKILL, 0, 0) };
    // SAFETY: wait4 with null status and rusage pointers writes nothing.
    while unsafe { syscall(nr::WAIT4, child, 0, 0, 0) } == -EINTR {}
    kill_all();
}

/// The zygote's loop; never returns (exits when cordon closes the socket).
///
/// # Safety
/// Call once, from `start`, single-threaded: it owns `REQUEST` and `POINTERS`.
unsafe fn zygote(sock: usize) -> ! {
    // Not dumpable: no core of it, and /proc/PID/mem and the like are root's alone (a run's
    // Landlock domain already keeps it from ptracing the zygote, which has none).
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) takes no pointers.
    if unsafe { syscall(nr::PRCTL, PR_SET_DUMPABLE, 0, 0, 0) } < 0 {
        fail(125, &[b"zygote: PR_SET_DUMPABLE failed"]);
    }
    answer(sock, b"R");
    loop {
        let buf = core::ptr::addr_of_mut!(REQUEST) as *mut u8;
        let mut iov = Iovec {
            base: buf,
            len: REQUEST_MAX,
        };
        let mut control = ThreeFds {
            len: 0,
            level: 0,
            kind: 0,
            fds: [-1; 3],
            pad: 0,
        };
        let mut msg = Msghdr {
            name: core::ptr::null_mut(),
            namelen: 0,
            iov: &mut iov,
            iovlen: 1,
            control: &mut control as *mut ThreeFds as *mut u8,
            controllen: core::mem::size_of::<ThreeFds>(),
            flags: 0,
        };
        // SAFETY: recvmsg writes at most REQUEST_MAX bytes into `REQUEST` (this function owns
        // it), the control message into `control` (its size given) and the flags into `msg`,
        // all live for the call. Received descriptors are close-on-exec.
        let n = unsafe {
            syscall(
                nr::RECVMSG,
                sock,
                &mut msg as *mut Msghdr as usize,
                MSG_CMSG_CLOEXEC,
                0,
            )
        };
        if n == -EINTR {
            continue;
        }
        if n <= 0 {
            // cordon is done (or gone): the sandbox ends with this process.
            kill_all();
            exit(0);
        }
        // SAFETY: the kernel wrote these fields during recvmsg (volatile: no compiler
        // assumption about memory the kernel changed).
        let (flags, clen, level, kind, fds) = unsafe {
            (
                core::ptr::read_volatile(&msg.flags),
                core::ptr::read_volatile(&msg.controllen),
                core::ptr::read_volatile(&control.level),
                core::ptr::read_volatile(&control.kind),
                core::ptr::read_volatile(&control.fds),
            )
        };
        if flags & (MSG_TRUNC | MSG_CTRUNC) != 0
            || clen < 28
            || level != SOL_SOCKET
            || kind != SCM_RIGHTS
            || fds.iter().any(|&f| f < 3)
        {
            fail(125, &[b"zygote: a malformed request; ending the sandbox"]);
        }
        // SAFETY: clone with SIGCHLD alone is fork: no pointers (the stack and TLS arguments
        // are 0, which keeps the caller's). The child continues below on its copy.
        let child = unsafe { syscall(nr::CLONE, SIGCHLD, 0, 0, 0) };
        if child == 0 {
            // SAFETY: `n` bytes of REQUEST are the request (the child's copy; nothing else
            // touches it), `fds` the descriptors that came with it.
            unsafe { start_run(n as usize, fds) };
        }
        for f in fds {
            // SAFETY: the received descriptors are the zygote's and not used again here.
            unsafe { syscall(nr::CLOSE, f as usize, 0, 0, 0) };
        }
        if child < 0 {
            let e = (-child) as i32;
            let mut a = [b'F', 0, 0, 0, 0];
            a[1..].copy_from_slice(&e.to_ne_bytes());
            answer(sock, &a);
            continue;
        }
        let status = supervise(sock, child as usize);
        let mut a = [b'S', 0, 0, 0, 0];
        a[1..].copy_from_slice(&status.to_ne_bytes());
        answer(sock, &a);
    }
}

/// Waits for the run's process `child` to exit, killing it on cordon's b'K'; then kills what
/// it left (see [`kill_all`]) and returns its wait status.
fn supervise(sock: usize, child: usize) -> i32 {
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let pidfd = unsafe { syscall(PIDFD_OPEN, child, 0, 0, 0) };
    if pidfd < 0 {
        // Without it the zygote cannot watch cordon and the run at once: the run is killed
        // and the sandbox ends (cordon refuses the call and starts another next time).
        end_run(child);
        fail(125, &[b"zygote: pidfd_open: ", errno_text(-pidfd)]);
    }
    let mut watch_cordon = true;
    loop {
        let mut fds = [
            Pollfd {
                fd: pidfd as i32,
                events: POLLIN,
                revents: 0,
            },
            Pollfd {
                fd: if watch_cordon { sock as i32 } else { -1 },
                events: POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: ppoll reads and writes the two `Pollfd`s on this frame; no timeout (null),
        // no signal mask (null).
        let r = unsafe { syscall(nr::PPOLL, fds.as_mut_ptr() as usize, 2, 0, 0) };
        if r == -EINTR {
            continue;
        }
        if r < 0 {
            end_run(child);
            fail(125, &[b"zygote: ppoll: ", errno_text(-r)]);
        }
        // SAFETY: the kernel wrote `revents` during ppoll.
        let (run_done, cordon_said) = unsafe {
            (
                core::ptr::read_volatile(&fds[0].revents) != 0,
                core::ptr::read_volatile(&fds[1].revents) != 0,
            )
        };
        if run_done {
            let mut status: i32 = 0;
            // SAFETY: wait4 writes one int into `status` on this frame; no rusage (null).
            let w = unsafe { syscall(nr::WAIT4, child, &mut status as *mut i32 as usize, 0, 0) };
            if w == -EINTR {
                continue;
            }
            // SAFETY: `pidfd` is ours and not used again.
            unsafe { syscall(nr::CLOSE, pidfd as usize, 0, 0, 0) };
            kill_all();
            // SAFETY: wait4 wrote it.
            return unsafe { core::ptr::read_volatile(&status) };
        }
        if cordon_said {
            let mut b = 0u8;
            // SAFETY: read writes at most one byte into `b` on this frame.
            let r = unsafe { syscall(nr::READ, sock, &mut b as *mut u8 as usize, 1, 0) };
            if r == -EINTR {
                continue;
            }
            if r <= 0 {
                // End-of-file: cordon is gone, and so is everything.
                end_run(child);
                exit(0);
            }
            // b'K' (or anything): the run is killed; its exit (seen above next) is the
            // answer, after what it left is killed too. cordon sends nothing more for it.
            // SAFETY: kill takes no pointers; `child` is our unreaped child.
            unsafe { syscall(nr::KILL, child, SIGKILL, 0, 0) };
            watch_cordon = false;
        }
    }
}

/// The run's process, between the zygote's fork and the exec of the one-shot inner stage.
///
/// # Safety
/// Only in the zygote's child, with `n` bytes of `REQUEST` received and `fds` the three
/// descriptors that came with them.
unsafe fn start_run(n: usize, fds: [i32; 3]) -> ! {
    let buf = core::ptr::addr_of!(REQUEST) as *const u8;
    // SAFETY: `n <= REQUEST_MAX` bytes were written by recvmsg; REQUEST is this process's own
    // copy and is only read from here on.
    let req = unsafe { core::slice::from_raw_parts(buf, n) };
    if n < 9 || req[0] != b'X' {
        fail(125, &[b"zygote: a malformed request"]);
    }
    let argc = u32::from_ne_bytes([req[1], req[2], req[3], req[4]]) as usize;
    let envc = u32::from_ne_bytes([req[5], req[6], req[7], req[8]]) as usize;
    if argc == 0 || argc + envc > STRINGS_MAX {
        fail(125, &[b"zygote: a malformed request"]);
    }
    let ptrs = core::ptr::addr_of_mut!(POINTERS) as *mut usize;
    // The strings: CWD, then argc arguments, then envc variables, each NUL-terminated inside
    // the message. Pointers go into POINTERS: argv (argc, null), envp (envc, null).
    let mut at = 9;
    let mut next = || -> usize {
        let start = at;
        while at < n && req[at] != 0 {
            at += 1;
        }
        if at >= n {
            fail(125, &[b"zygote: a malformed request"]);
        }
        at += 1;
        buf as usize + start
    };
    let cwd = next();
    for k in 0..argc {
        // SAFETY: `k < argc <= STRINGS_MAX`, inside POINTERS.
        unsafe { *ptrs.add(k) = next() };
    }
    // SAFETY: `argc + 1 + envc + 1 <= STRINGS_MAX + 2`.
    unsafe { *ptrs.add(argc) = 0 };
    for k in 0..envc {
        // SAFETY: as above.
        unsafe { *ptrs.add(argc + 1 + k) = next() };
    }
    // SAFETY: as above.
    unsafe { *ptrs.add(argc + 1 + envc) = 0 };
    for (target, &f) in fds.iter().enumerate() {
        // SAFETY: dup3 takes two descriptor numbers and flags 0 (not close-on-exec: these are
        // the run's stdio).
        let r = unsafe { syscall(nr::DUP3, f as usize, target, 0, 0) };
        if r < 0 {
            setup_fail(b"zygote: ", b"the run's standard streams", -r);
        }
        // SAFETY: the received descriptor is not used again (its copy is 0, 1 or 2).
        unsafe { syscall(nr::CLOSE, f as usize, 0, 0, 0) };
    }
    // SAFETY: setsid takes no arguments. A session of the run's own, as bwrap's
    // `--new-session` gives a one-shot run: no controlling terminal to push input into.
    let r = unsafe { syscall(nr::SETSID, 0, 0, 0, 0) };
    if r < 0 {
        setup_fail(b"zygote: ", b"setsid", -r);
    }
    // SAFETY: chdir reads the NUL-terminated string at `cwd`, inside the request.
    let r = unsafe { syscall(nr::CHDIR, cwd, 0, 0, 0) };
    if r < 0 {
        // SAFETY: as above.
        setup_fail(b"zygote: entering ", unsafe { c_str(cwd as *const u8) }, -r);
    }
    let argv = ptrs as *const *const u8;
    // SAFETY: argv[0..argc] are NUL-terminated strings in the request followed by a null, and
    // so is envp; execve reads them and returns only on failure.
    let r = unsafe {
        syscall(
            nr::EXECVE,
            *argv as usize,
            argv as usize,
            ptrs.add(argc + 1) as usize,
            0,
        )
    };
    setup_fail(b"zygote: executing the inner stage", b"", -r)
}

// The prebuilt `core` refers to the unwinding personality routine; with panic = abort nothing
// ever unwinds, so it is never called.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    fail(125, &[b"inner stage: internal error"])
}

// The compiler may call these for copies and comparisons; without libc they are ours.
// Volatile accesses keep LLVM from turning the loops back into calls to themselves.

/// # Safety
/// `src` readable and `dst` writable for `n` bytes, not overlapping.
#[no_mangle]
unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    for i in 0..n {
        // SAFETY: `i < n`, inside both ranges (the caller's contract).
        unsafe { core::ptr::write_volatile(dst.add(i), core::ptr::read_volatile(src.add(i))) };
    }
    dst
}
/// # Safety
/// `src` readable and `dst` writable for `n` bytes; they may overlap.
#[no_mangle]
unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) < (src as usize) {
        // SAFETY: copying forwards is correct when `dst` is below `src`, even overlapping:
        // each byte is read before the copy reaches it (volatile, one byte at a time).
        unsafe { memcpy(dst, src, n) }
    } else {
        for i in (0..n).rev() {
            // SAFETY: `i < n`, inside both ranges; backwards, for `dst` above `src`.
            unsafe { core::ptr::write_volatile(dst.add(i), core::ptr::read_volatile(src.add(i))) };
        }
        dst
    }
}
/// # Safety
/// `dst` writable for `n` bytes.
#[no_mangle]
unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    for i in 0..n {
        // SAFETY: `i < n`, inside the caller's range.
        unsafe { core::ptr::write_volatile(dst.add(i), c as u8) };
    }
    dst
}
/// # Safety
/// `a` and `b` readable for `n` bytes.
#[no_mangle]
unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: `i < n`, inside both ranges.
        let (x, y) = unsafe {
            (
                core::ptr::read_volatile(a.add(i)),
                core::ptr::read_volatile(b.add(i)),
            )
        };
        if x != y {
            return x as i32 - y as i32;
        }
    }
    0
}
/// # Safety
/// As memcmp.
#[no_mangle]
unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is memcmp's.
    unsafe { memcmp(a, b, n) }
}
