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
//! cordon-inner RULESET_FD COUNT [PATH DIR_RIGHTS FILE_RIGHTS]{COUNT} [proxy PORT FD [forward PORT]...] [go FD] -- PROG ARGS...
//! ```
//!
//! Each PATH that exists gets a path-beneath rule with DIR_RIGHTS when it is a directory,
//! FILE_RIGHTS otherwise (a missing one is skipped, as on the host). With `proxy`
//! (`sandbox.network = "proxy"`), the proxy's listener is made on PORT in the sandbox's
//! network namespace (every address there, which is loopback only; IPv6 dual-stack, or
//! 127.0.0.1 without IPv6), sent to cordon over the unix socket FD (`SCM_RIGHTS`), and the
//! command starts only after cordon answers "go" (see cordon's `src/proxy.rs`); this happens
//! before Landlock applies, whose ruleset allows no bind. With `go FD`, the command starts
//! only once cordon writes "go" on FD (a pipe): cordon makes its decision's record durable
//! while bwrap and this stage build the sandbox, and end-of-file (cordon said no, or died)
//! exits 125 with the command never started. Then no_new_privs,
//! `landlock_restrict_self`, every descriptor above stdio close-on-exec, and exec of PROG
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
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the inner stage supports x86_64 and aarch64");

// Shared by both architectures (the syscall numbers added since Linux 5.1 are unified).
const CLOSE_RANGE: usize = 436;
const LANDLOCK_ADD_RULE: usize = 445;
const LANDLOCK_RESTRICT_SELF: usize = 446;
const LANDLOCK_RULE_PATH_BENEATH: usize = 1;
const PR_SET_NO_NEW_PRIVS: usize = 38;
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
    // SAFETY: `i < argc` (checked above), so argv+i is a non-empty null-terminated array of
    // argument strings; `envp` is the entry stack's environment.
    unsafe { exec(argv.add(i), envp) }
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
