//! Enforcement for `sandbox.network = "proxy"`: the command can reach nothing but cordon's
//! proxy.
//!
//! The command runs in a network namespace of its own, where the only interface is loopback.
//! Before the command starts, cordon's own code *inside* that namespace makes the proxy's
//! listener and hands it out over a unix socket pair (`SCM_RIGHTS`); cordon passes it on to
//! the proxy ([`crate::handoff::ProxyHandoff`]), which accepts on it from outside: a socket keeps
//! the namespace it was made in. No process forwards bytes, and the command's first connect
//! already finds the listener (the kernel queues it until the proxy accepts).
//!
//! ```text
//!   cordon (host netns)                    inside the command's netns (cordon's code, before
//!     │                                    the command: Landlock backend's init, or bwrap's
//!     │                                    inner stage)
//!     │  socketpair ───────────────────▶   lo up (Landlock backend; bwrap does it itself)
//!     │                                    socket(AF_INET6), bind [::]:PORT, V6ONLY off
//!     │  ◀── SCM_RIGHTS: the listener ──   (IPv4-only kernel: 127.0.0.1:PORT), listen
//!     │  listener → ProxyHandoff channel
//!     │  "go" byte ───────────────────▶    close the pair, then start the command
//!     ▼  the proxy accepts on it           the command: connect 127.0.0.1:PORT or [::1]:PORT
//! ```
//!
//! The wildcard address is loopback-only because the namespace has no other interface, and the
//! command cannot add one: its capabilities are dropped and seccomp refuses netlink sockets.
//! Landlock (ABI 4) narrows TCP further: connect to the proxy's port only, bind to none. UDP
//! (DNS included) has no route out of the namespace at all. Where no network namespace can be
//! made, `network = "proxy"` is refused rather than run with a proxy the command could go
//! around.
//!
//! The functions marked "raw" run in a child forked from a multithreaded process: only system
//! calls, no allocation, no locks.

use std::io;
use std::os::fd::{OwnedFd, RawFd};

/// A connected pair of unix sockets for the handoff: (cordon's end, the namespace's end).
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    // SEQPACKET: the descriptor and the "go" byte arrive as whole messages, and a closed
    // end reads as end-of-file.
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// `struct ifreq` with the flags member (the kernel reads 40 bytes).
#[repr(C)]
struct IfreqFlags {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Brings `lo` up in the caller's network namespace (raw). The kernel then gives it
/// 127.0.0.1/8 and, where IPv6 is enabled, ::1. False (errno set) if it could not; the caller
/// then refuses to start the command.
///
/// # Safety
/// None beyond the call itself: it makes system calls only (socket, ioctl, close) on stack
/// memory, so it may run in a child between fork/clone and exec. It is `unsafe` to mark it as
/// part of that raw path.
pub unsafe fn loopback_up() -> bool {
    // SAFETY: socket takes no pointers; the descriptor it returns is ours alone and closed
    // below on every path.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if s < 0 {
        return false;
    }
    let mut ifr = IfreqFlags {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        _pad: [0; 22],
    };
    ifr.name[0] = b'l' as libc::c_char;
    ifr.name[1] = b'o' as libc::c_char;
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write a `struct ifreq`; `IfreqFlags` is its
    // repr(C) layout with the flags member, padded to the full 40 bytes the kernel copies, and
    // lives on this stack frame for both calls. The name is NUL-terminated (zeroed rest).
    let ok = unsafe {
        libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr as *mut IfreqFlags) == 0 && {
            ifr.flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr as *const IfreqFlags) == 0
        }
    };
    let e = errno();
    // SAFETY: `s` is the socket made above, closed once, here.
    unsafe { libc::close(s) };
    set_errno(e);
    ok
}

/// The proxy's listener on `port` on every address of the caller's network namespace, IPv6
/// and IPv4 alike (one dual-stack socket; 127.0.0.1 alone where the kernel has no IPv6).
/// Returns the descriptor (close-on-exec; the caller owns it) or -1 with errno set (raw), in
/// which case nothing is left open.
///
/// # Safety
/// None beyond the call itself: system calls only, on stack memory, no allocation, so it may
/// run between fork/clone and exec. The caller takes ownership of the descriptor returned.
pub unsafe fn listener(port: u16) -> RawFd {
    // SAFETY: socket takes no pointers; the descriptor is closed below unless returned.
    let mut fd = unsafe { libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    let ok = if fd >= 0 {
        let off: libc::c_int = 0;
        // SAFETY: sockaddr_in6 is plain integers; all-zero is a valid value (the unspecified
        // address [::], port 0).
        let mut addr: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
        addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        addr.sin6_port = port.to_be();
        // SAFETY: setsockopt reads one c_int from `off` and bind one sockaddr_in6 from
        // `addr`, both on this stack frame, with their exact sizes passed; `fd` is our socket.
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                (&off as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            ) == 0
                && libc::bind(
                    fd,
                    (&addr as *const libc::sockaddr_in6).cast(),
                    std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                ) == 0
        }
    } else if errno() == libc::EAFNOSUPPORT {
        // SAFETY: as the first socket call.
        fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        // SAFETY: sockaddr_in is plain integers; all-zero is a valid value.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = libc::INADDR_LOOPBACK.to_be();
        fd >= 0
            // SAFETY: bind reads one sockaddr_in from this stack frame, its size passed.
            && unsafe {
                libc::bind(
                    fd,
                    (&addr as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            } == 0
    } else {
        false
    };
    // SAFETY: listen takes no pointers; `fd` is the bound socket made above.
    if ok && unsafe { libc::listen(fd, libc::SOMAXCONN) } == 0 {
        return fd;
    }
    let e = errno();
    if fd >= 0 {
        // SAFETY: `fd` is ours and not returned: closed once, here (fail closed: no listener).
        unsafe { libc::close(fd) };
    }
    set_errno(e);
    -1
}

/// Space for one descriptor's control message, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct OneFd([u8; 24]);

/// Sends `fd` over the unix socket `sock` (raw). False (errno set) if it was not sent.
///
/// # Safety
/// `sock` and `fd` must be open descriptors for the duration of the call (the kernel
/// duplicates `fd` into the message; the caller keeps its own). System calls only, on stack
/// memory, so it may run between fork/clone and exec.
pub unsafe fn send_fd(sock: RawFd, fd: RawFd) -> bool {
    let mut byte = [b'L'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = OneFd([0; 24]);
    // SAFETY: msghdr is plain integers and pointers; all-zero (null pointers, zero lengths)
    // is a valid value, filled in below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    // SAFETY: CMSG_SPACE is arithmetic on its argument.
    msg.msg_controllen = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as _;
    // SAFETY: `msg.msg_control` points at `control`, 24 bytes aligned to 8: CMSG_SPACE of one
    // int (24 bytes on 64-bit, 16 on 32-bit) fits, so CMSG_FIRSTHDR
    // returns a non-null pointer to a whole, aligned cmsghdr inside it, and CMSG_DATA points
    // at the 4 bytes after it (written unaligned, as the macro promises no alignment). `iov`,
    // `byte` and `control` live on this frame until sendmsg returns; sendmsg only reads them.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) == 1
    }
}

/// Waits for cordon's "go" (raw): true once cordon has handed the listener on. False on
/// end-of-file (errno EPIPE: cordon gave up), an error, or any byte but 'G'; the caller then
/// does not start the command.
///
/// # Safety
/// `sock` must be an open descriptor for the duration of the call. System calls only, on
/// stack memory, so it may run between fork/clone and exec.
pub unsafe fn wait_go(sock: RawFd) -> bool {
    let mut b = 0u8;
    loop {
        // SAFETY: read writes at most 1 byte into `b`, on this stack frame.
        let n = unsafe { libc::read(sock, (&mut b as *mut u8).cast(), 1) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n == 0 {
            set_errno(libc::EPIPE);
        }
        return n == 1 && b == b'G';
    }
}

/// cordon's side of the handoff: receives the listener made in the namespace, passes it to
/// the proxy through `handoff`, and tells the namespace to start the command. An error means
/// the command must not start (the caller kills what it began).
pub fn hand_over(sock: &OwnedFd, handoff: &crate::handoff::ProxyHandoff) -> io::Result<()> {
    // The proxy's listener, then one per forwarded port, in that order; then "go".
    for port in std::iter::once(handoff.port).chain(handoff.forwards.iter().copied()) {
        let listener = receive_listener(sock, port)?;
        handoff
            .listener
            .send(listener)
            .map_err(|_| io::Error::other("the proxy is gone; it did not take its listener"))?;
    }
    let sent = rustix::net::send(sock, b"G", rustix::net::SendFlags::NOSIGNAL)?;
    if sent != 1 {
        return Err(io::Error::other("the \"go\" byte was not sent"));
    }
    Ok(())
}

/// One listener from the namespace, which must be a listening TCP socket on `port`.
fn receive_listener(sock: &OwnedFd, expected: u16) -> io::Result<std::net::TcpListener> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags};
    let mut byte = [0u8];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = loop {
        match rustix::net::recvmsg(
            sock,
            &mut [io::IoSliceMut::new(&mut byte)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Err(rustix::io::Errno::INTR) => continue,
            r => break r?,
        }
    };
    // Exactly one message, one byte 'L', one descriptor, nothing cut off; anything else
    // (descriptors beyond the first included) is closed when `control` drops.
    let mut fds = Vec::new();
    let mut other = false;
    for message in control.drain() {
        match message {
            RecvAncillaryMessage::ScmRights(rights) => fds.extend(rights),
            _ => other = true,
        }
    }
    let mut fds = fds.into_iter();
    let fd = match (fds.next(), fds.next()) {
        (Some(fd), None)
            if got.bytes == 1
                && byte[0] == b'L'
                && !other
                && !got.flags.contains(ReturnFlags::CTRUNC) =>
        {
            fd
        }
        _ => {
            return Err(io::Error::other(
                "the sandbox sent no listener for the proxy (its setup failed)",
            ))
        }
    };
    let listener = std::net::TcpListener::from(fd);
    // What the sandbox made must be what the proxy serves: a listening TCP socket on the
    // proxy's port.
    let port = listener.local_addr()?.port();
    if port != expected {
        return Err(io::Error::other(format!(
            "the sandbox's listener is on port {port}, not {expected}"
        )));
    }
    Ok(listener)
}

/// The calling thread's errno (async-signal-safe: a load from thread-local storage).
fn errno() -> i32 {
    // SAFETY: __errno_location returns a valid, aligned pointer to the calling thread's errno,
    // live as long as the thread.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's errno, so a raw function's caller sees the first failure's
/// cause rather than that of the cleanup after it.
fn set_errno(e: i32) {
    // SAFETY: as in `errno`; the thread's own errno is ours to write.
    unsafe { *libc::__errno_location() = e }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd};

    #[test]
    fn a_listener_made_here_travels_over_the_pair() {
        let (mine, theirs) = pair().unwrap();
        // Port 0: any free port on the host; the namespaced runs use PROXY_PORT.
        // SAFETY: no preconditions; we take the descriptor it returns.
        let fd = unsafe { listener(0) };
        assert!(fd >= 0, "{}", io::Error::last_os_error());
        // SAFETY: `listener` returned a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let port = std::net::TcpListener::from(fd.try_clone().unwrap())
            .local_addr()
            .unwrap()
            .port();
        // SAFETY: both descriptors are owned by live OwnedFds across the call.
        assert!(unsafe { send_fd(theirs.as_raw_fd(), fd.as_raw_fd()) });
        let (tx, rx) = std::sync::mpsc::channel();
        let handoff = crate::handoff::ProxyHandoff {
            port,
            listener: tx,
            forwards: Vec::new(),
        };
        hand_over(&mine, &handoff).unwrap();
        // SAFETY: `theirs` stays open across the call.
        assert!(unsafe { wait_go(theirs.as_raw_fd()) });
        let got = rx.recv().unwrap();
        assert_eq!(got.local_addr().unwrap().port(), port);
        // A closed peer is end-of-file, not a hang or a descriptor.
        drop(theirs);
        assert!(hand_over(&mine, &handoff).is_err());
    }
}
