//! The command's stdin, stdout and stderr: never the operator's own terminal or files.
//!
//! An inherited descriptor is a handle on an object, not only on its data. Through fd 1 of
//! `cordon exec -- cmd > log.txt` the command could `ftruncate`, `fchmod`, `fsetxattr` or
//! punch holes in `log.txt`, a file the operator's shell opened, possibly outside every root;
//! through an inherited terminal it could `fchmod` the operator's terminal to 0666 or leave
//! its modes changed after the run. So cordon keeps those objects and gives the command
//! stand-ins, copying between them in one relay thread:
//!
//! ```text
//!  the operator's side                 cordon                      the command
//!  terminal (fd 0/1/2) ⇄ (raw mode) ⇄ relay ⇄ pty master ═ new pty ═ slave: fd 0/1/2, ctty
//!  file, device, socket, FIFO (fd 0) ─ relay ─▶ pipe ───────────────▶ fd 0
//!  file, device, socket, FIFO (fd 1/2) ◀ relay ◀ pipe ◀────────────── fd 1 / fd 2
//!  anonymous pipe (fd 0/1/2) ───────── passed as is ────────────────▶ fd 0/1/2
//! ```
//!
//! An anonymous pipe passes as is: it has no name, so `fchmod` changes nothing anyone else
//! can reach (its mode only guards reopening through `/proc/PID/fd`, which needs ptrace
//! rights over the holder anyway), `ftruncate` fails with EINVAL, pipefs keeps no xattrs,
//! and the pipe is gone with its last holder. A named FIFO is relayed: its mode is on disk.
//! stdout and stderr that share one open file (`> log 2>&1`) share one pipe, so their
//! interleaving stays exactly as the command wrote it.
//!
//! A terminal is handled like sudo's `use_pty`: the command gets a new pty as its
//! controlling terminal (set between fork and exec, see [`crate::run`]), with the
//! operator's terminal modes and window size; while cordon is the terminal's foreground
//! process the operator's terminal is in raw mode, so Ctrl-C and Ctrl-D reach the command
//! through its own pty's line discipline, and the size follows SIGWINCH. The modes are put
//! back when the run ends, on a panic, and on a signal that would kill cordon. Ctrl-Z is
//! passed as a byte: cordon offers no job control. The terminal is read only for an
//! interactive run (stdout a terminal too); `TerminalInput` says what happens in pipelines and
//! redirections.
//!
//! What the command writes to the terminal passes through [`crate::termout`]'s filter: text and
//! what draws reach the operator's terminal, sequences that control it (clipboard, queries
//! answered as typed input, titles, links, modes that outlive the run) do not, and what the
//! command left on is undone when the run ends. A file, a pipe or a socket gets every byte.
//!
//! The terminal can be lent for a while ([`TerminalSwitch`]): cordon asks the operator about a
//! connection the command's program opened (`sandbox.network = "proxy"` with `ask`) while the
//! command runs. The relay then leaves the terminal alone — nothing read from it, nothing of the
//! command's written anywhere (its output waits in its pty and pipes, so that no reader of a
//! file, socket or FIFO it writes to can print over the question) — with the terminal's own
//! modes back, and takes it back (raw again) when the question is answered.
//!
//! When the run ends (the command and every descendant killed and reaped), the relay copies
//! what is still buffered and stops after at most [`DRAIN`] even if a descendant that escaped
//! the kill still holds a pipe. stdin read ahead from a regular file is given back: the
//! file's offset is moved back over what the command did not read.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::termout::Filter;

/// How long the relay keeps copying after the run ended, at most.
pub const DRAIN: Duration = Duration::from_secs(2);

/// `statfs.f_type` of pipefs: an anonymous pipe.
const PIPEFS_MAGIC: i64 = 0x5049_5045;

/// What one of the operator's descriptors 0, 1, 2 is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Closed: the command gets it closed too.
    Absent,
    Terminal,
    /// An anonymous pipe: passed as is.
    Pipe,
    /// A regular file, a named FIFO, a device, a socket: relayed.
    Object,
}

fn kind(fd: RawFd) -> Kind {
    // SAFETY: `st` and `fs` are zeroed plain-C structs on our stack (all-zero is a valid
    // value of each) that fstat/fstatfs only write into; isatty touches no memory. `fd` may
    // be closed or any kind of file: the calls then fail, which is answered as `Absent`.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Kind::Absent;
        }
        if libc::isatty(fd) == 1 {
            return Kind::Terminal;
        }
        if st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            let mut fs: libc::statfs = std::mem::zeroed();
            if libc::fstatfs(fd, &mut fs) == 0 && fs.f_type as i64 == PIPEFS_MAGIC {
                return Kind::Pipe;
            }
        }
        Kind::Object
    }
}

fn is_regular(fd: RawFd) -> bool {
    // SAFETY: `st` is a zeroed `stat` on our stack that fstat only writes into; a bad `fd`
    // makes fstat fail, answered as "not regular".
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
    }
}

/// Is `fd` the null device (`< /dev/null`)?
fn is_dev_null(fd: RawFd) -> bool {
    // SAFETY: `st` is a zeroed `stat` on our stack that fstat only writes into; a bad `fd`
    // makes fstat fail, answered as "not the null device".
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && st.st_rdev == libc::makedev(1, 3)
    }
}

/// Are `a` and `b` the same open file (one `open`, e.g. `> log 2>&1`)?
fn same_open_file(a: RawFd, b: RawFd) -> bool {
    // SAFETY: kcmp takes only integers (our own pid twice, two descriptor numbers) and
    // touches no memory of ours; a failure (no kcmp in the kernel, a closed fd) answers
    // "not the same file", which only costs a second pipe.
    unsafe {
        let pid = libc::getpid();
        libc::syscall(libc::SYS_kcmp, pid, pid, 0 /* KCMP_FILE */, a, b) == 0
    }
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A close-on-exec duplicate of `fd` (the same open file).
fn dup(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl with integer arguments only; touches no memory.
    let n = cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) })?;
    // SAFETY: `n` (checked non-negative) is a descriptor F_DUPFD_CLOEXEC just created; no
    // other owner refers to it, so wrapping it once gives it exactly one owner.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut p = [0; 2];
    // SAFETY: `p` is a live array of the two c_ints pipe2 writes.
    cvt(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 succeeded, so both are new descriptors nothing else owns; each is
    // wrapped once.
    Ok(unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) })
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl with integer arguments only; touches no memory. (Only ever called on a
    // descriptor of ours, never one of the operator's: O_NONBLOCK would change their open
    // file for everyone sharing it.)
    unsafe {
        let fl = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// A new pty, master and slave, with `host`'s modes and window size. `raw_host`: the host
/// terminal will be raw, so output processing (ONLCR…) happens once, in the new pty;
/// otherwise the host does it and the new pty passes output as is.
fn open_pty(host: RawFd, raw_host: bool) -> io::Result<(OwnedFd, OwnedFd)> {
    // SAFETY: posix_openpt, grantpt, unlockpt and ioctl(TIOCGPTPEER) take integers only;
    // each result is checked before use. `m` and `s` are descriptors these calls just
    // created, each wrapped in an OwnedFd once (so closed on every early return). `t` is a
    // zeroed termios on our stack (a valid value) that tcgetattr fills and tcsetattr reads.
    // TIOCGPTPEER opens the slave from the master without a path lookup, so no /dev/pts
    // name can be raced.
    unsafe {
        let m = cvt(libc::posix_openpt(
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        ))?;
        let master = OwnedFd::from_raw_fd(m);
        cvt(libc::grantpt(m))?;
        cvt(libc::unlockpt(m))?;
        let s = cvt(libc::ioctl(
            m,
            libc::TIOCGPTPEER,
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        ))?;
        let slave = OwnedFd::from_raw_fd(s);
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(host, &mut t) == 0 {
            // No job control under cordon: a suspended command would hang the run.
            t.c_cc[libc::VSUSP] = 0; // _POSIX_VDISABLE
            if !raw_host {
                t.c_oflag &= !libc::OPOST;
            }
            cvt(libc::tcsetattr(s, libc::TCSANOW, &t))?;
        }
        copy_window_size(host, m);
        Ok((master, slave))
    }
}

fn copy_window_size(from: RawFd, to: RawFd) {
    // SAFETY: `ws` is a zeroed winsize on our stack, written by TIOCGWINSZ and read by
    // TIOCSWINSZ, the argument types both requests expect. Best effort: a failed copy
    // leaves the new pty at its default size.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(from, libc::TIOCGWINSZ, &mut ws) == 0 {
            libc::ioctl(to, libc::TIOCSWINSZ, &ws);
        }
    }
}

// The operator's terminal while it is raw, for the signal handler that restores it.
static RAW_FD: AtomicI32 = AtomicI32::new(-1);
static RAW_SAVED: AtomicPtr<libc::termios> = AtomicPtr::new(std::ptr::null_mut());

/// Signals that would kill cordon with the terminal raw. SIGINT, SIGTERM, SIGHUP and
/// SIGQUIT are blocked and forwarded during the run (see [`crate::run::run`]); the handler
/// covers them before that.
const FATAL: [libc::c_int; 11] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGXCPU,
    libc::SIGPWR,
];

extern "C" fn restore_and_die(sig: libc::c_int) {
    let fd = RAW_FD.load(Ordering::SeqCst);
    let saved = RAW_SAVED.load(Ordering::SeqCst);
    // SAFETY: this runs as a signal handler, so it only calls async-signal-safe functions
    // (tcsetattr, signal, sigemptyset, sigaddset, pthread_sigmask, raise) and reads two
    // atomics. `saved`, when not null, points to a termios `RawMode::enter` leaked with
    // `Box::into_raw` and never frees, so it is valid for the rest of the process. `set` is
    // a zeroed sigset on the handler's stack, initialised by sigemptyset. Nothing can be
    // done about a failure here: the default action (raised last) ends cordon either way.
    unsafe {
        if fd >= 0 && !saved.is_null() {
            libc::tcsetattr(fd, libc::TCSANOW, saved);
        }
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// The operator's terminal in raw mode; the saved modes come back on drop.
struct RawMode {
    tty: OwnedFd,
    saved: libc::termios,
    handlers: Vec<(libc::c_int, libc::sigaction)>,
}

impl RawMode {
    fn enter(fd: RawFd) -> io::Result<RawMode> {
        let tty = dup(fd)?;
        // SAFETY: `saved`, `old`, `sa` and `raw` are zeroed plain-C structs on our stack (all
        // zero is a valid termios and sigaction) that the calls write or read. `saved` is
        // copied into a Box leaked for the signal handler (never freed, so always valid for
        // it). The handler is an `extern "C" fn(c_int)` installed without SA_SIGINFO, the form
        // the kernel calls, and only makes async-signal-safe calls. A handler is installed only
        // where the disposition is SIG_DFL (the signal would kill cordon anyway), so no
        // handler of anyone else's is replaced. `tty` is our own duplicate of fd 0, open for
        // the life of `RawMode`.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            cvt(libc::tcgetattr(tty.as_raw_fd(), &mut saved))?;
            RAW_SAVED.store(Box::into_raw(Box::new(saved)), Ordering::SeqCst);
            RAW_FD.store(tty.as_raw_fd(), Ordering::SeqCst);
            let mut handlers = Vec::new();
            for sig in FATAL {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = restore_and_die as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                if libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0 {
                    handlers.push((sig, old));
                }
            }
            let mut raw = saved;
            libc::cfmakeraw(&mut raw);
            let mode = RawMode {
                tty,
                saved,
                handlers,
            };
            cvt(libc::tcsetattr(mode.tty.as_raw_fd(), libc::TCSADRAIN, &raw))?;
            Ok(mode)
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: `self.saved` is the termios tcgetattr returned in `enter` and each `old` the
        // sigaction the kernel returned there, both valid values; `self.tty` is still open.
        // Failures leave nothing to undo: the terminal stays raw only if it is gone.
        unsafe {
            libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSADRAIN, &self.saved);
            RAW_FD.store(-1, Ordering::SeqCst);
            for (sig, old) in &self.handlers {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}

/// What the command's stdin is when cordon's is a terminal. An interactive run (stdout a
/// terminal too): the command's own pty, fed with what is typed. In a pipeline (`cordon exec
/// -- cmd | less`) the terminal belongs to the program reading at its end, and every key
/// cordon took would be lost to it: cordon does not read the terminal, and the command's pty
/// reads end-of-file. With stdout redirected (`> out`): a pipe fed with the terminal's lines,
/// the terminal staying in its own (cooked) mode, which echoes and edits them; Ctrl-D ends
/// them. In the background, cordon never reads the terminal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TerminalInput {
    Pty,
    Nothing,
    Lines,
}

/// Copies the operator's input to the command: from one of the operator's descriptors
/// (blocking, never changed) to a pipe or the pty master (ours, non-blocking).
struct Input {
    from: OwnedFd,
    to: Option<OwnedFd>,
    /// Our copy of the pipe's read end, to count what the command left unread.
    pipe_read: Option<OwnedFd>,
    /// `from` is a regular file: give back what was read ahead when the run ends.
    seekable: bool,
    /// `from` is the operator's terminal: left alone while it is lent.
    terminal: bool,
    buf: Vec<u8>,
    at: usize,
    eof: bool,
}

/// Copies the command's output to the operator: from a pipe or the pty master (ours,
/// non-blocking) to one of the operator's descriptors.
struct Output {
    from: Option<OwnedFd>,
    to: OwnedFd,
    /// `from` is a pipe and `to` a regular file: move the data with splice(2), without
    /// copying it through cordon (cleared when the kernel refuses, e.g. for `O_APPEND`).
    splice: bool,
    /// `to` is the operator's terminal: only what draws passes ([`crate::termout`]).
    terminal: Option<Filter>,
}

/// The relay for one run: started before the command, finished after it.
pub struct Relay {
    stop: Option<OwnedFd>,
    /// The relay thread, and word from it when it is done.
    thread: Option<(std::thread::JoinHandle<()>, std::sync::mpsc::Receiver<()>)>,
    raw: Option<RawMode>,
    old_mask: Option<libc::sigset_t>,
    /// Lends the terminal; taken back for good when the run ends.
    switch: Option<TerminalSwitch>,
}

/// Lends the operator's terminal to another thread while a run's relay uses it (see the module
/// docs): give a clone to the run ([`crate::ChildStdio::terminal`]) and call [`TerminalSwitch::lend`]
/// from any thread. One borrower at a time; without a relay that uses the terminal (none
/// started yet, or the run is over, or the run's stdio never touches the terminal), lending
/// waits for nobody and changes nothing.
#[derive(Clone, Default)]
pub struct TerminalSwitch(Arc<Switch>);

impl std::fmt::Debug for TerminalSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TerminalSwitch")
    }
}

#[derive(Default)]
struct Switch {
    /// Held for as long as the terminal is lent: one borrower at a time, and the run's end
    /// waits for the borrower before it puts the terminal back.
    borrower: Mutex<()>,
    state: Mutex<SwitchState>,
    changed: Condvar,
}

#[derive(Default)]
struct SwitchState {
    /// The relay's control pipe (write end), while a relay that uses the terminal runs.
    control: Option<OwnedFd>,
    /// The relay has let go of the terminal.
    lent: bool,
    /// The run is over: the relay must not put the terminal in raw mode again.
    ended: bool,
}

/// The operator's terminal, lent ([`TerminalSwitch::lend`]); given back on drop.
pub struct Lent<'a> {
    switch: &'a Switch,
    _one: MutexGuard<'a, ()>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TerminalSwitch {
    pub fn new() -> TerminalSwitch {
        TerminalSwitch::default()
    }

    /// The run is over: whoever has the terminal should give it back (what they asked about
    /// can no longer happen), and nothing more can be lent.
    pub fn is_over(&self) -> bool {
        locked(&self.0.state).ended
    }

    /// Takes the terminal from the run's relay: returns once the relay reads and writes it no
    /// more and its modes are the operator's own again. Give it back by dropping the guard.
    pub fn lend(&self) -> Lent<'_> {
        let one = locked(&self.0.borrower);
        let mut st = locked(&self.0.state);
        let asked = match &st.control {
            Some(c) => write(c.as_raw_fd(), b"p").is_ok(),
            None => false,
        };
        // The relay answers, or ends (and drops the control pipe) without answering.
        while asked && !st.lent && st.control.is_some() {
            st = self.0.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        drop(st);
        Lent {
            switch: &self.0,
            _one: one,
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let mut st = locked(&self.switch.state);
        if st.lent {
            st.lent = false;
            if let Some(c) = &st.control {
                let _ = write(c.as_raw_fd(), b"r");
            }
        }
    }
}

/// What the relay thread needs to lend the terminal: the control pipe's read end, the shared
/// state, and the terminal with its modes (when the relay made it raw).
struct Lending {
    control: OwnedFd,
    switch: Arc<Switch>,
    modes: Option<Modes>,
}

/// The operator's terminal (our duplicate) with its own modes and the raw modes of the run.
struct Modes {
    tty: OwnedFd,
    saved: libc::termios,
    raw: libc::termios,
}

impl Modes {
    fn set(&self, t: &libc::termios) {
        // SAFETY: `t` is a termios tcgetattr returned (or cfmakeraw made from one), a valid
        // value; `self.tty` is open. A failure leaves the modes as they were: nothing to undo.
        unsafe { libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSADRAIN, t) };
    }
}

impl Relay {
    /// Chooses the command's stdin, stdout and stderr (into `fds`, and the one it makes its
    /// controlling terminal into `controlling_tty`: the run's `ChildStdio`) and starts
    /// copying. A descriptor the caller already chose (e.g. a pipe the gate captures output
    /// from) is left as it is, like an anonymous pipe of cordon's own. `switch` lets cordon
    /// take the operator's terminal from the relay for a while.
    pub fn start(
        fds: &mut [Option<Arc<OwnedFd>>; 3],
        controlling_tty: &mut Option<i32>,
        switch: Option<TerminalSwitch>,
    ) -> io::Result<Relay> {
        let kinds = [0, 1, 2].map(|f: RawFd| match fds[f as usize] {
            Some(_) => Kind::Pipe,
            None => kind(f),
        });
        // SAFETY: tcgetpgrp and getpgrp take integers only and touch no memory; if fd 0 has
        // no foreground group tcgetpgrp returns -1, never equal to our group.
        let foreground =
            kinds[0] == Kind::Terminal && unsafe { libc::tcgetpgrp(0) == libc::getpgrp() };
        let stdin_tty = (kinds[0] == Kind::Terminal).then(|| match kinds[1] {
            Kind::Terminal => TerminalInput::Pty,
            Kind::Pipe => TerminalInput::Nothing,
            _ if foreground => TerminalInput::Lines,
            _ => TerminalInput::Nothing,
        });
        let terminals: Vec<RawFd> = (0..3)
            .filter(|&f| kinds[f as usize] == Kind::Terminal)
            .filter(|&f| f != 0 || stdin_tty != Some(TerminalInput::Lines))
            .collect();
        let mut input = None;
        let mut outputs = Vec::new();
        let mut raw = None;
        let mut master_for_winch = None;

        if let Some(&first) = terminals.first() {
            let foreground = foreground && stdin_tty == Some(TerminalInput::Pty);
            let (master, slave) = open_pty(first, foreground)?;
            set_nonblocking(master.as_raw_fd())?;
            if stdin_tty == Some(TerminalInput::Nothing) || kinds[0] != Kind::Terminal {
                // Its terminal has no input (cordon does not read the operator's terminal, or
                // stdin is not a terminal and the pty is only for output): a read ends at
                // once, with end-of-file, rather than waiting for keys that never come.
                // SAFETY: `t` is a zeroed termios on our stack (a valid value) tcgetattr fills;
                // write reads one byte from `eof`, a live local u8. A failed write leaves a
                // command that reads its terminal waiting until the run ends, nothing worse.
                unsafe {
                    let mut t: libc::termios = std::mem::zeroed();
                    if libc::tcgetattr(slave.as_raw_fd(), &mut t) == 0 {
                        let eof = t.c_cc[libc::VEOF];
                        libc::write(master.as_raw_fd(), (&eof as *const u8).cast(), 1);
                    }
                }
            }
            let slave = Arc::new(slave);
            for &f in &terminals {
                fds[f as usize] = Some(slave.clone());
            }
            *controlling_tty = Some(first);
            // The command's terminal output goes to the operator's terminal: stdout's,
            // else stderr's, else stdin's.
            let out_to = [1, 2, 0]
                .into_iter()
                .find(|&f| kinds[f as usize] == Kind::Terminal)
                .unwrap_or(first);
            outputs.push(Output {
                from: Some(dup(master.as_raw_fd())?),
                to: dup(out_to)?,
                splice: false,
                terminal: Some(Filter::for_locale()),
            });
            if foreground {
                raw = Some(RawMode::enter(0)?);
                input = Some(Input {
                    from: dup(0)?,
                    to: Some(dup(master.as_raw_fd())?),
                    pipe_read: None,
                    seekable: false,
                    terminal: true,
                    buf: Vec::new(),
                    at: 0,
                    eof: false,
                });
            }
            master_for_winch = Some((dup(first)?, master));
        }
        let lines = stdin_tty == Some(TerminalInput::Lines);
        if kinds[0] == Kind::Object && is_dev_null(0) {
            // Nothing to read: a pipe already at EOF, without a thread to feed it.
            let (r, _) = pipe()?;
            fds[0] = Some(Arc::new(r));
        } else if kinds[0] == Kind::Object || lines {
            let (r, w) = pipe()?;
            set_nonblocking(w.as_raw_fd())?;
            // SAFETY: `st` is a zeroed `stat` on our stack that fstat only writes into; a
            // failure answers "not seekable", which only skips giving back read-ahead.
            let seekable = unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                libc::fstat(0, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
            };
            input = Some(Input {
                from: dup(0)?,
                to: Some(w),
                pipe_read: Some(dup(r.as_raw_fd())?),
                seekable,
                terminal: lines,
                buf: Vec::new(),
                at: 0,
                eof: false,
            });
            fds[0] = Some(Arc::new(r));
        }
        let shared = kinds[1] == Kind::Object && kinds[2] == Kind::Object && same_open_file(1, 2);
        for f in [1, 2] {
            if kinds[f] != Kind::Object {
                continue;
            }
            if f == 2 && shared {
                fds[2] = fds[1].clone();
                continue;
            }
            let (r, w) = pipe()?;
            set_nonblocking(r.as_raw_fd())?;
            outputs.push(Output {
                from: Some(r),
                to: dup(f as RawFd)?,
                splice: is_regular(f as RawFd),
                terminal: None,
            });
            fds[f] = Some(Arc::new(w));
        }

        if input.is_none() && outputs.is_empty() {
            // Nothing to copy (anonymous pipes, or closed descriptors): no thread.
            // The switch still learns when the run is over (a question withdrawn).
            return Ok(Relay {
                stop: None,
                thread: None,
                raw,
                old_mask: None,
                switch,
            });
        }
        // While the terminal is lent, every output of the command waits (a socket's or a named
        // FIFO's reader could print to the terminal too), and so does input from the terminal.
        let lending = match &switch {
            Some(sw) => {
                let (r, w) = pipe()?;
                set_nonblocking(r.as_raw_fd())?;
                let modes = match &raw {
                    Some(m) => {
                        let mut t = m.saved;
                        // SAFETY: `t` is a termios tcgetattr returned (a valid value) that
                        // cfmakeraw changes in place.
                        unsafe { libc::cfmakeraw(&mut t) };
                        Some(Modes {
                            tty: dup(m.tty.as_raw_fd())?,
                            saved: m.saved,
                            raw: t,
                        })
                    }
                    None => None,
                };
                let mut st = locked(&sw.0.state);
                *st = SwitchState {
                    control: Some(w),
                    lent: false,
                    ended: false,
                };
                Some(Lending {
                    control: r,
                    switch: sw.0.clone(),
                    modes,
                })
            }
            None => None,
        };
        // SIGWINCH is read from a signalfd in the relay thread: block it here, before the
        // thread starts, so that no thread takes it (the command's mask is reset at exec).
        let mut old_mask = None;
        let winch = match &master_for_winch {
            Some(_) => {
                // SAFETY: `set` and `old` are zeroed sigsets on our stack, `set` initialised by
                // sigemptyset before use; pthread_sigmask writes the previous mask into `old`.
                // signalfd reads `set`; its new descriptor (checked) is wrapped once.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, libc::SIGWINCH);
                    let mut old: libc::sigset_t = std::mem::zeroed();
                    if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    old_mask = Some(old);
                    let fd = cvt(libc::signalfd(
                        -1,
                        &set,
                        libc::SFD_CLOEXEC | libc::SFD_NONBLOCK,
                    ))?;
                    Some(OwnedFd::from_raw_fd(fd))
                }
            }
            None => None,
        };
        let (stop_r, stop_w) = pipe()?;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("cordon-relay".into())
            .spawn(move || {
                // The signals cordon forwards to the command's tree (and SIGCHLD) are read by
                // the supervising thread from a signalfd. Were they open here, the kernel could
                // deliver one to this thread instead: a SIGTERM would kill cordon unforwarded,
                // and the supervisor, woken by poll, would block in read on a signal gone.
                // SAFETY: `set` is a zeroed sigset on this thread's stack, initialised by
                // sigemptyset; pthread_sigmask changes this thread's mask only. It fails only
                // for an invalid `how`, which SIG_BLOCK is not.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    for s in [
                        libc::SIGINT,
                        libc::SIGTERM,
                        libc::SIGHUP,
                        libc::SIGQUIT,
                        libc::SIGCHLD,
                    ] {
                        libc::sigaddset(&mut set, s);
                    }
                    libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                }
                let winch = winch.zip(master_for_winch);
                let switch = lending.as_ref().map(|l| l.switch.clone());
                relay(stop_r, input, outputs, winch, lending);
                if let Some(sw) = switch {
                    // Nobody waits for this relay to let go of the terminal any more.
                    let mut st = locked(&sw.state);
                    st.control = None;
                    st.lent = false;
                    sw.changed.notify_all();
                }
                let _ = done_tx.send(());
            })?;
        Ok(Relay {
            stop: Some(stop_w),
            thread: Some((thread, done_rx)),
            raw,
            old_mask,
            switch,
        })
    }

    /// Ends the relay once the run is over: copies what is left (for at most [`DRAIN`]) and
    /// puts the operator's terminal back as it was.
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        // A question on the terminal is withdrawn (its borrower sees `is_over`) and waited for
        // (it holds the lock until it gives the terminal back), and no new one starts: the
        // relay must not take the terminal back, raw, after this.
        let switch = self.switch.take();
        if let Some(sw) = &switch {
            locked(&sw.0.state).ended = true;
        }
        let _one = switch.as_ref().map(|sw| {
            let one = locked(&sw.0.borrower);
            locked(&sw.0.state).control = None;
            one
        });
        drop(self.stop.take());
        if let Some((thread, done)) = self.thread.take() {
            // A write to the operator's side that never completes (a FIFO or socket nobody
            // reads) must not keep cordon: after the drain and a grace second, the thread is
            // left behind and ends with the process.
            if done.recv_timeout(DRAIN + Duration::from_secs(1)).is_ok() {
                let _ = thread.join();
            }
        }
        drop(self.raw.take());
        if let Some(old) = self.old_mask.take() {
            // SAFETY: `old` is the mask pthread_sigmask returned in `start` on this same
            // thread (a valid sigset); a null old-mask pointer is allowed.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.end();
    }
}

/// The relay thread: copies until the run's end (see [`copy`]), then undoes on the operator's
/// terminal the modes the command left on.
fn relay(
    stop: OwnedFd,
    input: Option<Input>,
    mut outputs: Vec<Output>,
    winch: Option<(OwnedFd, (OwnedFd, OwnedFd))>,
    lending: Option<Lending>,
) {
    copy(stop, input, &mut outputs, winch, lending);
    for o in &outputs {
        if let Some(f) = &o.terminal {
            let _ = write_all(o.to.as_raw_fd(), &f.finish());
        }
    }
}

/// One poll loop over every stream until `stop` closes, then a bounded drain of the outputs.
fn copy(
    stop: OwnedFd,
    mut input: Option<Input>,
    outputs: &mut [Output],
    winch: Option<(OwnedFd, (OwnedFd, OwnedFd))>,
    mut lending: Option<Lending>,
) {
    const CHUNK: usize = 64 * 1024;
    let mut deadline: Option<Instant> = None;
    let mut buf = vec![0u8; CHUNK];
    // What of a chunk may reach the terminal, for an output that goes there.
    let mut shown = Vec::with_capacity(CHUNK);
    // The terminal is lent: its streams are left alone, and the drain waits for it.
    let mut lent = false;
    loop {
        let stopping = deadline.is_some();
        if stopping && outputs.iter().all(|o| o.from.is_none()) {
            return;
        }
        // Indices into `fds`: what each entry is.
        #[derive(Clone, Copy)]
        enum Slot {
            Stop,
            Control,
            Winch,
            InRead,
            InWrite,
            Out(usize),
        }
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(8);
        let mut slots: Vec<Slot> = Vec::with_capacity(8);
        let mut add = |fd: RawFd, events: libc::c_short, slot: Slot| {
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            slots.push(slot);
        };
        // First, so that a lend or a give-back is seen before the run's end.
        if let Some(l) = &lending {
            add(l.control.as_raw_fd(), libc::POLLIN, Slot::Control);
        }
        if !stopping {
            add(stop.as_raw_fd(), libc::POLLIN, Slot::Stop);
            if let Some((sfd, _)) = &winch {
                add(sfd.as_raw_fd(), libc::POLLIN, Slot::Winch);
            }
            if let Some(i) = input.as_ref().filter(|i| !(lent && i.terminal)) {
                match (&i.to, i.at < i.buf.len()) {
                    (Some(to), true) => add(to.as_raw_fd(), libc::POLLOUT, Slot::InWrite),
                    (Some(_), false) if !i.eof => {
                        add(i.from.as_raw_fd(), libc::POLLIN, Slot::InRead)
                    }
                    _ => {}
                }
            }
        }
        for (n, o) in outputs.iter().enumerate() {
            if let Some(f) = o.from.as_ref().filter(|_| !lent) {
                add(f.as_raw_fd(), libc::POLLIN, Slot::Out(n));
            }
        }
        let timeout = match deadline {
            // What the command wrote to the terminal is drained once the terminal is back.
            _ if lent => -1,
            None => -1,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return;
                }
                left.as_millis().min(i32::MAX as u128) as i32 + 1
            }
        };
        // SAFETY: `fds` is a live Vec of initialised pollfds and the count passed is its
        // length; poll writes only their `revents`.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        for (pfd, slot) in fds.iter().zip(slots.iter().copied()) {
            if pfd.revents == 0 {
                continue;
            }
            match slot {
                Slot::Control => {
                    let Some(l) = &lending else { continue };
                    let mut cmd = [0u8; 16];
                    let n = match read(l.control.as_raw_fd(), &mut cmd) {
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(_) => 0,
                    };
                    if n == 0 {
                        // The run is over ([`Relay::end`] dropped the other end): nothing is
                        // lent any more, and the terminal stays as the end puts it.
                        lent = false;
                        lending = None;
                        continue;
                    }
                    for &c in &cmd[..n] {
                        let mut st = locked(&l.switch.state);
                        match c {
                            b'p' => {
                                if let Some(m) = &l.modes {
                                    m.set(&m.saved);
                                }
                                lent = true;
                                st.lent = true;
                                l.switch.changed.notify_all();
                            }
                            _ => {
                                if let (Some(m), false) = (&l.modes, st.ended) {
                                    m.set(&m.raw);
                                }
                                lent = false;
                                if stopping {
                                    deadline = Some(Instant::now() + DRAIN);
                                }
                            }
                        }
                    }
                }
                Slot::Stop => {
                    deadline = Some(Instant::now() + DRAIN);
                    if let Some(i) = input.take() {
                        give_back(i);
                    }
                }
                Slot::Winch => {
                    if let Some((sfd, (host, master))) = &winch {
                        let mut info = [0u8; 128];
                        // SAFETY: `info` is a live 128-byte local and read is told its length;
                        // a signalfd record is 128 bytes, so whole records fit. The fd is
                        // non-blocking: the loop ends at EAGAIN.
                        while unsafe {
                            libc::read(sfd.as_raw_fd(), info.as_mut_ptr().cast(), info.len())
                        } > 0
                        {}
                        copy_window_size(host.as_raw_fd(), master.as_raw_fd());
                    }
                }
                Slot::InRead => {
                    // None once the stop just seen took it; left alone once a lend just seen
                    // took the terminal (a key typed now is the borrower's).
                    let Some(i) = input.as_mut().filter(|i| !(lent && i.terminal)) else {
                        continue;
                    };
                    match read(i.from.as_raw_fd(), &mut buf) {
                        Ok(0) | Err(_) => {
                            // End of the operator's input: the command sees EOF on a pipe
                            // (a terminal's EOF is Ctrl-D, a byte like any other).
                            i.eof = true;
                            if i.pipe_read.is_some() {
                                i.to = None;
                            }
                        }
                        Ok(n) => {
                            i.buf.clear();
                            i.buf.extend_from_slice(&buf[..n]);
                            i.at = 0;
                        }
                    }
                }
                Slot::InWrite => {
                    let Some(i) = input.as_mut() else { continue };
                    let Some(to) = i.to.as_ref().map(|t| t.as_raw_fd()) else {
                        continue;
                    };
                    match write(to, &i.buf[i.at..]) {
                        Ok(n) => i.at += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(_) => {
                            // The command's side is gone: stop reading the operator's input.
                            i.to = None;
                            i.buf.clear();
                            i.at = 0;
                        }
                    }
                }
                Slot::Out(n) => {
                    let o = &mut outputs[n];
                    if lent {
                        continue; // lent since the poll: written after it is given back
                    }
                    let Some(from) = &o.from else { continue };
                    if o.splice {
                        match splice_all(from.as_raw_fd(), o.to.as_raw_fd()) {
                            Spliced::Drained => continue,
                            Spliced::End => {
                                o.from = None;
                                continue;
                            }
                            Spliced::Refused => o.splice = false,
                        }
                    }
                    loop {
                        match read(from.as_raw_fd(), &mut buf) {
                            Ok(0) => {
                                o.from = None;
                                break;
                            }
                            Ok(k) => {
                                let out = match &mut o.terminal {
                                    Some(f) => {
                                        shown.clear();
                                        f.feed(&buf[..k], &mut shown);
                                        &shown[..]
                                    }
                                    None => &buf[..k],
                                };
                                if write_all(o.to.as_raw_fd(), out).is_err() {
                                    // The operator's side is gone: closing our end gives the
                                    // command EPIPE, as writing there directly would have.
                                    o.from = None;
                                    break;
                                }
                            }
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            // EIO: the pty's last slave closed.
                            Err(_) => {
                                o.from = None;
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The run is over: close the command's input and, for a regular file, move its offset back
/// over what was read ahead but never consumed, as if the command had read it directly.
fn give_back(i: Input) {
    if !i.seekable {
        return;
    }
    let mut queued: libc::c_int = 0;
    if let Some(r) = &i.pipe_read {
        // SAFETY: FIONREAD writes one c_int, and `queued` is a live c_int local.
        if unsafe { libc::ioctl(r.as_raw_fd(), libc::FIONREAD, &mut queued) } != 0 {
            queued = 0;
        }
    }
    let unread = (i.buf.len() - i.at) as i64 + i64::from(queued.max(0));
    if unread > 0 {
        // SAFETY: lseek takes integers only and touches no memory. It moves our duplicate of
        // the operator's stdin, a regular file we were reading (so seekable). Best effort: on
        // failure the operator's offset stays after the read-ahead, as with any reader that
        // buffers.
        unsafe { libc::lseek(i.from.as_raw_fd(), -unread, libc::SEEK_CUR) };
    }
}

enum Spliced {
    /// The pipe is empty for now.
    Drained,
    /// No writer is left, or the operator's side failed: this stream is over.
    End,
    /// The kernel cannot splice to this file (`O_APPEND`…): copy instead.
    Refused,
}

/// Moves everything the pipe `from` holds to the file `to`.
fn splice_all(from: RawFd, to: RawFd) -> Spliced {
    loop {
        // SAFETY: splice takes two descriptors and null offset pointers (allowed: use and
        // advance the files' own offsets); it touches no memory of ours.
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                1 << 20,
                libc::SPLICE_F_NONBLOCK,
            )
        };
        if n > 0 {
            continue;
        }
        if n == 0 {
            return Spliced::End;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) => return Spliced::Drained,
            Some(libc::EINVAL) => return Spliced::Refused,
            _ => return Spliced::End,
        }
    }
}

fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is a live, writable slice and read is told its exact length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is a live slice and write is told its exact length; it only reads.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Writes all of `buf` to one of the operator's descriptors. It is blocking unless the
/// operator made it non-blocking; then we wait for room rather than drop output.
fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match write(fd, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: `p` is one initialised pollfd local and the count is 1. The result
                // does not matter: the write is retried either way.
                unsafe { libc::poll(&mut p, 1, 100) };
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn only_anonymous_pipes_pass_as_is() {
        let (r, w) = pipe().unwrap();
        assert_eq!(kind(r.as_raw_fd()), Kind::Pipe);
        assert_eq!(kind(w.as_raw_fd()), Kind::Pipe);
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("log")).unwrap();
        assert_eq!(kind(file.as_raw_fd()), Kind::Object);
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(kind(null.as_raw_fd()), Kind::Object);
        let (a, _b) = UnixStream::pair().unwrap();
        assert_eq!(kind(a.as_raw_fd()), Kind::Object);
        // A named FIFO's mode is on disk: relayed.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a live NUL-terminated path; mkfifo only reads it.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        assert_eq!(kind(f.as_raw_fd()), Kind::Object);
        let (m, s) = open_pty(null.as_raw_fd(), false).unwrap();
        assert_eq!(kind(s.as_raw_fd()), Kind::Terminal);
        assert_eq!(kind(m.as_raw_fd()), Kind::Terminal);
    }

    #[test]
    fn one_open_file_is_recognised_through_its_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let a = std::fs::File::create(dir.path().join("log")).unwrap();
        let b = dup(a.as_raw_fd()).unwrap();
        let c = std::fs::File::create(dir.path().join("log")).unwrap();
        assert!(same_open_file(a.as_raw_fd(), b.as_raw_fd()));
        assert!(!same_open_file(a.as_raw_fd(), c.as_raw_fd()));
    }
}
