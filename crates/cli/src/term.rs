//! The controlling terminal: is there one, raw single-key input, and text made safe to show.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Is there a person to ask? stdin must be a terminal and /dev/tty must open.
pub fn terminal_available() -> bool {
    // SAFETY: isatty on fd 0 has no memory effects.
    let stdin_is_tty = unsafe { libc::isatty(0) == 1 };
    stdin_is_tty && open_tty().is_ok()
}

pub fn open_tty() -> std::io::Result<File> {
    OpenOptions::new().read(true).write(true).open("/dev/tty")
}

pub use cordon_gate::clean;

/// The terminal's width in columns (80 when unknown), at least 40.
pub fn width(tty: &File) -> usize {
    // SAFETY: TIOCGWINSZ fills a winsize we own.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::ioctl(tty.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    if r == 0 && ws.ws_col > 0 {
        usize::from(ws.ws_col).max(40)
    } else {
        80
    }
}

/// The terminal in single-key mode (no line buffering, no echo, no signals from keys: Ctrl-C
/// arrives as a byte and is read as "no"). The old mode is restored when dropped, and by
/// [`Raw::cooked`] while a line or a pager needs it.
pub struct Raw<'a> {
    tty: &'a File,
    saved: libc::termios,
}

impl<'a> Raw<'a> {
    pub fn enter(tty: &'a File) -> std::io::Result<Raw<'a>> {
        // SAFETY: tcgetattr/tcsetattr on an open terminal with termios structs we own.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(tty.as_raw_fd(), &mut t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
        t.c_cc[libc::VMIN] = 1;
        t.c_cc[libc::VTIME] = 0;
        if unsafe { libc::tcsetattr(tty.as_raw_fd(), libc::TCSANOW, &t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Raw { tty, saved })
    }

    /// Runs `f` with the terminal's original (line) mode, then returns to single keys.
    pub fn cooked<T>(&mut self, f: impl FnOnce() -> T) -> std::io::Result<T> {
        let fd = self.tty.as_raw_fd();
        // SAFETY: as in `enter`.
        let mut raw: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut raw) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &self.saved) };
        let out = f();
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(out)
    }
}

impl Drop for Raw<'_> {
    fn drop(&mut self) {
        // SAFETY: restoring the mode saved in `enter`.
        unsafe { libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSANOW, &self.saved) };
    }
}

/// Drops whatever was typed but not yet read: keys pressed before the question was shown
/// must not answer it.
pub fn discard_typeahead(tty: &File) {
    // SAFETY: tcflush on an open terminal.
    unsafe { libc::tcflush(tty.as_raw_fd(), libc::TCIFLUSH) };
}

static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::Relaxed);
}

/// While alive, SIGINT, SIGTERM and SIGHUP do not kill cordon: they interrupt the wait and
/// are reported by [`Signals::take`], so the prompt restores the terminal and denies (and
/// the denial is recorded). The previous handlers come back when dropped.
pub struct Signals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl Signals {
    pub fn catch() -> Signals {
        SIGNALLED.store(0, Ordering::Relaxed);
        let mut old = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installing a handler that only stores to an atomic; no SA_RESTART, so a
            // blocked poll or read returns EINTR.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = note_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &sa, &mut prev) == 0 {
                    old.push((sig, prev));
                }
            }
        }
        Signals { old }
    }

    /// The signal that arrived since the last call, if any.
    pub fn take(&self) -> Option<i32> {
        match SIGNALLED.swap(0, Ordering::Relaxed) {
            0 => None,
            s => Some(s),
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for (sig, prev) in &self.old {
            // SAFETY: restoring the handler saved in `catch`.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}

/// What waiting for input gave.
pub enum Input {
    /// Bytes read (a key, or a whole line in line mode).
    Bytes(Vec<u8>),
    /// Nothing within the wait.
    Idle,
    /// The terminal closed.
    Closed,
}

/// Waits at most `wait` (and never past `deadline`) for input on `tty`.
pub fn read(tty: &mut File, wait: Duration, deadline: Instant) -> std::io::Result<Input> {
    let wait = wait.min(deadline.saturating_duration_since(Instant::now()));
    let mut pfd = libc::pollfd {
        fd: tty.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one pollfd we own.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::Interrupted {
            Ok(Input::Idle)
        } else {
            Err(e)
        };
    }
    if n == 0 {
        return Ok(Input::Idle);
    }
    if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
        && pfd.revents & libc::POLLIN == 0
    {
        return Ok(Input::Closed);
    }
    let mut buf = [0u8; 256];
    match tty.read(&mut buf) {
        Ok(0) => Ok(Input::Closed),
        Ok(n) => Ok(Input::Bytes(buf[..n].to_vec())),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(Input::Idle),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn clean_escapes_terminal_controls() {
        assert_eq!(clean("ls -la"), "ls -la");
        assert_eq!(clean("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(clean("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(clean("é…"), "é…");
    }
}
