//! Enforcement for `sandbox.network = "proxy"`: the command can reach nothing but cordon's
//! proxy.
//!
//! The command runs in a network namespace of its own, where the only interface is loopback.
//! Before the command starts, cordon's own code *inside* that namespace makes the proxy's
//! listener and hands it out over a unix socket pair (`SCM_RIGHTS`); cordon passes it on to
//! the proxy ([`crate::run::ProxyHandoff`]), which accepts on it from outside: a socket keeps
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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A connected pair of unix sockets for the handoff: (cordon's end, the namespace's end).
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SEQPACKET: the descriptor and the "go" byte arrive as whole messages, and a closed
    // end reads as end-of-file.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair just returned these two descriptors, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `struct ifreq` with the flags member (the kernel reads 40 bytes).
#[repr(C)]
struct IfreqFlags {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Brings `lo` up in the caller's network namespace (raw). The kernel then gives it
/// 127.0.0.1/8 and, where IPv6 is enabled, ::1.
///
/// # Safety
/// System calls only; safe to call after fork.
pub unsafe fn loopback_up() -> bool {
    let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
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
    let ok = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr as *mut IfreqFlags) == 0 && {
        ifr.flags |= libc::IFF_UP as libc::c_short;
        libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr as *const IfreqFlags) == 0
    };
    let e = errno();
    libc::close(s);
    set_errno(e);
    ok
}

/// The proxy's listener on `port` on every address of the caller's network namespace, IPv6
/// and IPv4 alike (one dual-stack socket; 127.0.0.1 alone where the kernel has no IPv6).
/// Returns the descriptor (close-on-exec) or -1 with errno set (raw).
///
/// # Safety
/// System calls only; safe to call after fork.
pub unsafe fn listener(port: u16) -> RawFd {
    let mut fd = libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
    let ok = if fd >= 0 {
        let off: libc::c_int = 0;
        let mut addr: libc::sockaddr_in6 = std::mem::zeroed();
        addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        addr.sin6_port = port.to_be();
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
    } else if errno() == libc::EAFNOSUPPORT {
        fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = libc::INADDR_LOOPBACK.to_be();
        fd >= 0
            && libc::bind(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ) == 0
    } else {
        false
    };
    if ok && libc::listen(fd, libc::SOMAXCONN) == 0 {
        return fd;
    }
    let e = errno();
    if fd >= 0 {
        libc::close(fd);
    }
    set_errno(e);
    -1
}

/// Space for one descriptor's control message, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct OneFd([u8; 24]);

/// Sends `fd` over the unix socket `sock` (raw).
///
/// # Safety
/// System calls only; safe to call after fork.
pub unsafe fn send_fd(sock: RawFd, fd: RawFd) -> bool {
    let mut byte = [b'L'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = OneFd([0; 24]);
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
    libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) == 1
}

/// Waits for cordon's "go" (raw): true once cordon has handed the listener on.
///
/// # Safety
/// System calls only; safe to call after fork.
pub unsafe fn wait_go(sock: RawFd) -> bool {
    let mut b = 0u8;
    loop {
        let n = libc::read(sock, (&mut b as *mut u8).cast(), 1);
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
pub fn hand_over(sock: &OwnedFd, handoff: &crate::run::ProxyHandoff) -> io::Result<()> {
    let mut byte = [0u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = OneFd([0; 24]);
    // SAFETY: a zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of::<OneFd>() as _;
    let n = loop {
        // SAFETY: msg points at live buffers of the sizes it states.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        break n;
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CMSG_FIRSTHDR reads the msghdr recvmsg filled in; it returns null when there is
    // no control message, and the data of an SCM_RIGHTS message of this length is one fd.
    let fd = unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n != 1
            || byte[0] != b'L'
            || cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            || (*cmsg).cmsg_len as usize
                != libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize
            || msg.msg_flags & libc::MSG_CTRUNC != 0
        {
            return Err(io::Error::other(
                "the sandbox sent no listener for the proxy (its setup failed)",
            ));
        }
        OwnedFd::from_raw_fd(std::ptr::read_unaligned(
            libc::CMSG_DATA(cmsg).cast::<RawFd>(),
        ))
    };
    let listener = std::net::TcpListener::from(fd);
    // What the sandbox made must be what the proxy serves: a listening TCP socket on the
    // proxy's port.
    let port = listener.local_addr()?.port();
    if port != handoff.port {
        return Err(io::Error::other(format!(
            "the sandbox's listener is on port {port}, not the proxy's {}",
            handoff.port
        )));
    }
    handoff
        .listener
        .send(listener)
        .map_err(|_| io::Error::other("the proxy is gone; it did not take its listener"))?;
    // SAFETY: writes one byte from a live buffer.
    if unsafe {
        libc::send(
            sock.as_raw_fd(),
            b"G".as_ptr().cast(),
            1,
            libc::MSG_NOSIGNAL,
        )
    } != 1
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn errno() -> i32 {
    // SAFETY: errno is thread-local and always readable.
    unsafe { *libc::__errno_location() }
}

fn set_errno(e: i32) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = e }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_made_here_travels_over_the_pair() {
        let (mine, theirs) = pair().unwrap();
        // Port 0: any free port on the host; the namespaced runs use PROXY_PORT.
        let fd = unsafe { listener(0) };
        assert!(fd >= 0, "{}", io::Error::last_os_error());
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let port = std::net::TcpListener::from(fd.try_clone().unwrap())
            .local_addr()
            .unwrap()
            .port();
        assert!(unsafe { send_fd(theirs.as_raw_fd(), fd.as_raw_fd()) });
        let (tx, rx) = std::sync::mpsc::channel();
        let handoff = crate::run::ProxyHandoff { port, listener: tx };
        hand_over(&mine, &handoff).unwrap();
        assert!(unsafe { wait_go(theirs.as_raw_fd()) });
        let got = rx.recv().unwrap();
        assert_eq!(got.local_addr().unwrap().port(), port);
        // A closed peer is end-of-file, not a hang or a descriptor.
        drop(theirs);
        assert!(hand_over(&mine, &handoff).is_err());
    }
}
