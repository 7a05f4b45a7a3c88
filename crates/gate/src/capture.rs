//! A run's output collected for a front end that is not a terminal (an MCP result): each
//! stream keeps its first `limit` bytes; the rest is read and dropped, so a command that
//! prints without end neither blocks on a full pipe nor fills cordon's memory.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cordon_ossandbox::ChildStdio;

/// How long the readers keep draining after the run ended: a process that outlived the run
/// (possible only without the backend's PID namespace) must not hold the call open.
const DRAIN_AFTER_END: Duration = Duration::from_millis(250);

pub(crate) struct Capture {
    done: Arc<AtomicBool>,
    readers: [JoinHandle<(Vec<u8>, bool)>; 2],
}

pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own; each is owned once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Capture {
    /// Gives the child an empty stdin and pipes for stdout and stderr, and starts reading.
    pub(crate) fn start(stdio: &mut ChildStdio, limit: usize) -> io::Result<Capture> {
        // stdin: a pipe whose write end is closed at once — end of file, nothing to read.
        let (stdin, _) = pipe()?;
        let (out_r, out_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        stdio.fds = [
            Some(Arc::new(stdin)),
            Some(Arc::new(out_w)),
            Some(Arc::new(err_w)),
        ];
        let done = Arc::new(AtomicBool::new(false));
        let reader = |fd: OwnedFd| {
            let done = done.clone();
            std::thread::Builder::new()
                .name("cordon-capture".into())
                .spawn(move || read_bounded(fd, limit, &done))
        };
        Ok(Capture {
            readers: [reader(out_r)?, reader(err_r)?],
            done,
        })
    }

    /// After the run: stdout, stderr, and whether anything was dropped.
    pub(crate) fn finish(self) -> (Vec<u8>, Vec<u8>, bool) {
        self.done.store(true, Ordering::Release);
        let [out, err] = self.readers;
        let (out, t1) = out.join().unwrap_or_default();
        let (err, t2) = err.join().unwrap_or_default();
        (out, err, t1 || t2)
    }
}

fn read_bounded(fd: OwnedFd, limit: usize, done: &AtomicBool) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 16 * 1024];
    let mut ended_at: Option<Instant> = None;
    loop {
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd we own.
        let ready = unsafe { libc::poll(&mut p, 1, 50) };
        if ready < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if ready == 0 {
            if done.load(Ordering::Acquire) {
                let at = *ended_at.get_or_insert_with(Instant::now);
                if at.elapsed() >= DRAIN_AFTER_END {
                    break;
                }
            }
            continue;
        }
        // SAFETY: reading into a buffer we own, at most its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if n == 0 {
            break; // every writer is gone
        }
        let n = n as usize;
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        truncated |= n > room;
    }
    (kept, truncated)
}
