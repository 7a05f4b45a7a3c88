//! The controlling terminal: is there one, raw single-key input, and text made safe to show.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::termios::{
    tcgetattr, tcsetattr, LocalModes, OptionalActions, QueueSelector, SpecialCodeIndex, Termios,
};

/// Is there a person to ask? stdin must be a terminal and /dev/tty must open.
pub fn terminal_available() -> bool {
    rustix::termios::isatty(std::io::stdin()) && open_tty().is_ok()
}

/// Does the command's output (cordon's stdout or stderr) go into a pipe or FIFO? Its reader
/// (`| less`, `| tee log`) writes to the terminal on its own, where cordon cannot hold it
/// while a question is on the screen.
pub fn output_into_a_pipe() -> bool {
    let fifo = |fd: std::os::fd::BorrowedFd<'_>| {
        rustix::fs::fstat(fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
        })
    };
    use std::os::fd::AsFd;
    fifo(std::io::stdout().as_fd()) || fifo(std::io::stderr().as_fd())
}

pub fn open_tty() -> std::io::Result<File> {
    OpenOptions::new().read(true).write(true).open("/dev/tty")
}

pub use cordon_gate::clean;

/// The terminal's width in columns (80 when unknown), at least 40.
pub fn width(tty: &File) -> usize {
    match rustix::termios::tcgetwinsize(tty) {
        Ok(ws) if ws.ws_col > 0 => usize::from(ws.ws_col).max(40),
        _ => 80,
    }
}

/// The terminal in single-key mode (no line buffering, no echo, no signals from keys: Ctrl-C
/// arrives as a byte and is read as "no"). The old mode is restored when dropped, and by
/// [`Raw::cooked`] while a line or a pager needs it.
pub struct Raw<'a> {
    tty: &'a File,
    saved: Termios,
}

impl<'a> Raw<'a> {
    pub fn enter(tty: &'a File) -> std::io::Result<Raw<'a>> {
        let mut t = tcgetattr(tty)?;
        let saved = t.clone();
        t.local_modes &=
            !(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        t.special_codes[SpecialCodeIndex::VMIN] = 1;
        t.special_codes[SpecialCodeIndex::VTIME] = 0;
        tcsetattr(tty, OptionalActions::Now, &t)?;
        Ok(Raw { tty, saved })
    }

    /// Runs `f` with the terminal's original (line) mode, then returns to single keys.
    pub fn cooked<T>(&mut self, f: impl FnOnce() -> T) -> std::io::Result<T> {
        let raw = tcgetattr(self.tty)?;
        tcsetattr(self.tty, OptionalActions::Now, &self.saved)?;
        let out = f();
        tcsetattr(self.tty, OptionalActions::Now, &raw)?;
        Ok(out)
    }
}

impl Drop for Raw<'_> {
    fn drop(&mut self) {
        // Restoring the mode saved in `enter`. Nothing is left to do if the terminal is gone
        // (the only way this fails): there is no mode to restore.
        let _ = tcsetattr(self.tty, OptionalActions::Now, &self.saved);
    }
}

/// Drops whatever was typed but not yet read: keys pressed before the question was shown
/// must not answer it. An error means they may still be there: the caller must not ask.
pub fn discard_typeahead(tty: &File) -> std::io::Result<()> {
    Ok(rustix::termios::tcflush(tty, QueueSelector::IFlush)?)
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
            // SAFETY: `sa` and `prev` are zeroed plain-C structs on our stack (all-zero is a
            // valid `sigaction`: no flags, empty mask, SIG_DFL), alive across both calls.
            // `note_signal` is an `extern "C" fn(c_int)`, the one-argument form the kernel
            // calls without SA_SIGINFO, and it only stores to an atomic, which is
            // async-signal-safe. No SA_RESTART, so a blocked poll or read returns EINTR.
            // If sigaction fails the old disposition stays: the signal still ends cordon
            // before anything runs, so nothing is allowed by the failure.
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
            // SAFETY: `prev` is the disposition the kernel returned in `catch` for this very
            // signal, so it is a valid `sigaction`; a null old-action pointer is allowed.
            // Failure (impossible for a valid signal number) would leave our atomic-only
            // handler installed, which is harmless.
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
    // Only a wait past the year 292e9 does not fit; wait that long is then "forever".
    let timeout = Timespec::try_from(wait).ok();
    let timeout = timeout.as_ref();
    let mut pfd = [PollFd::new(&*tty, PollFlags::IN)];
    match rustix::event::poll(&mut pfd, timeout) {
        Ok(0) => return Ok(Input::Idle),
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok(Input::Idle),
        Err(e) => return Err(e.into()),
    }
    let revents = pfd[0].revents();
    if revents.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL)
        && !revents.contains(PollFlags::IN)
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
        // Text that is not ASCII is shown as it is where the terminal reads UTF-8 (the locale
        // the tests run in decides; both ways are tested in cordon_gate::text).
        let shown = if cordon_ossandbox::locale_is_utf8() {
            "é…"
        } else {
            "\\u{e9}\\u{2026}"
        };
        assert_eq!(clean("é…"), shown);
    }
}
