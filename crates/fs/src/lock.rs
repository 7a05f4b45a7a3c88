//! The one `flock`: blocking, with a deadline, and a refusal that names the real holder.
//!
//! ```text
//!   try LOCK_NB on the caller's descriptor ── granted ──▶ Lock (borrows it)
//!          │ held by someone
//!          ▼
//!   reopen the same file (/proc/self/fd/N: a new open file description)
//!   a waiter thread blocks in flock() on it ── granted ──▶ hands the descriptor over ──▶ Lock
//!          │ deadline passes first
//!          ▼
//!   Error::TimedOut { holders from /proc/locks }   (a late grant finds nobody to hand to:
//!                                                    the waiter closes it, the lock goes)
//! ```
//!
//! Why not poll `LOCK_NB` with sleeps (what cordon did before): a poller that sleeps loses
//! every release that happens while it sleeps to whoever asks next, so under 32 writers some
//! waited past their deadline while the lock changed hands hundreds of times — and the
//! refusal then blamed "another process holding it", which did not exist. A waiter blocked in
//! the kernel is woken by the release itself: nobody sleeps through one. (The kernel wakes
//! all waiters of a released `flock` and the first to run wins; it keeps no queue. With
//! holds of a millisecond that is fair enough: the harness in crates/approval/tests measures
//! the longest wait at 32 writers.)
//!
//! Why the wait runs on its own descriptor: a blocking `flock` cannot be cancelled, and a
//! grant that arrives after the caller gave up must not land on the caller's descriptor (a
//! later lock there would be released by the stray one). The waiter's own open file
//! description holds a late grant, and closing it releases it.
//!
//! When the deadline passes, the error names what holds the lock, read from `/proc/locks`
//! (pid, its command line) — or says that nobody holds it now, which means it changed hands
//! too often, not that someone holds it.

use std::fmt;

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;
use rustix::io::Errno;

/// Shared (readers) or exclusive (writers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

impl Mode {
    fn ops(self) -> (FlockOperation, FlockOperation) {
        match self {
            Mode::Shared => (
                FlockOperation::NonBlockingLockShared,
                FlockOperation::LockShared,
            ),
            Mode::Exclusive => (
                FlockOperation::NonBlockingLockExclusive,
                FlockOperation::LockExclusive,
            ),
        }
    }
}

/// A process that holds (or waits for) a lock, as `/proc/locks` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command line (spaces between the words), or why it is not known.
    pub command: String,
    /// Whether it holds the lock (else it is waiting for it).
    pub holds: bool,
}

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The deadline passed. `holders` is who held the lock then (empty: nobody did, it was
    /// changing hands).
    #[error("{}", timed_out(*waited, holders))]
    TimedOut {
        waited: Duration,
        holders: Vec<Holder>,
    },
    /// `flock` itself failed (not a regular lockable file, out of memory for locks, …).
    #[error("{0}")]
    Io(#[from] io::Error),
}

fn timed_out(waited: Duration, holders: &[Holder]) -> String {
    let held: Vec<&Holder> = holders.iter().filter(|h| h.holds).collect();
    let waiting = holders.len() - held.len();
    let secs = waited.as_secs_f64();
    match held.as_slice() {
        [] => format!(
            "gave up after waiting {secs:.1} s for the lock; nobody holds it now ({waiting} \
             other waiter(s)): it changed hands too often to reach us, not held by a stuck \
             process; retry, or lower the number of parallel writers"
        ),
        hs => {
            let who: Vec<String> = hs
                .iter()
                .map(|h| format!("pid {} ({})", h.pid, h.command))
                .collect();
            format!(
                "gave up after waiting {secs:.1} s for the lock: it is held by {} ({waiting} \
                 other waiter(s)); a cordon writer holds it for milliseconds, so that process \
                 is stuck or is not cordon: end it or find out why it holds the lock",
                who.join(", ")
            )
        }
    }
}

/// A held lock, released on drop (by unlocking the caller's descriptor, or by closing the
/// waiter's own).
#[derive(Debug)]
pub struct Lock<'a> {
    held: Held<'a>,
}

#[derive(Debug)]
enum Held<'a> {
    Borrowed(BorrowedFd<'a>),
    Own(#[allow(dead_code)] OwnedFd), // closing it releases the lock
    /// Moved out by [`Lock::keep`].
    Gone,
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        if let Held::Borrowed(fd) = self.held {
            // Fails only for a descriptor that is not open, which the borrow rules out; the
            // lock also goes when the last descriptor of the file description closes.
            let _ = rustix::fs::flock(fd, FlockOperation::Unlock);
        }
    }
}

/// A lock that owns its file: held until this is dropped (for a lock held over an object's
/// whole life, e.g. a run's directory or a session).
#[derive(Debug)]
pub struct FileLock {
    file: std::fs::File,
    /// The waiter's descriptor, when the lock was granted after a wait: the lock is on it.
    _waiter: Option<OwnedFd>,
}

impl FileLock {
    /// An exclusive lock on `file`, kept with it, waiting at most `deadline`.
    pub fn exclusive(file: std::fs::File, deadline: Duration) -> Result<FileLock, Error> {
        let waiter = take(file.as_fd(), Mode::Exclusive, deadline)?.keep();
        Ok(FileLock {
            file,
            _waiter: waiter,
        })
    }

    /// The lock if nobody holds it, without waiting: `Err(file)` back when someone does.
    pub fn try_exclusive(file: std::fs::File) -> io::Result<Result<FileLock, std::fs::File>> {
        let got = try_exclusive(&file)?.map(Lock::keep).is_some();
        Ok(if got {
            Ok(FileLock {
                file,
                _waiter: None,
            })
        } else {
            Err(file)
        })
    }

    /// The locked file.
    pub fn file(&self) -> &std::fs::File {
        &self.file
    }
}

impl Lock<'_> {
    /// Keeps the lock past this guard: on the caller's descriptor until it is closed (`None`),
    /// or on the waiter's descriptor, returned.
    fn keep(self) -> Option<OwnedFd> {
        let mut this = std::mem::ManuallyDrop::new(self);
        match std::mem::replace(&mut this.held, Held::Gone) {
            Held::Own(fd) => Some(fd),
            Held::Borrowed(_) | Held::Gone => None,
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            e @ Error::TimedOut { .. } => io::Error::new(io::ErrorKind::TimedOut, e.to_string()),
        }
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pid {} ({})", self.pid, self.command)
    }
}

/// An exclusive lock on `file`, waiting at most `deadline`.
pub fn exclusive(file: &impl AsFd, deadline: Duration) -> Result<Lock<'_>, Error> {
    take(file.as_fd(), Mode::Exclusive, deadline)
}

/// A shared lock on `file`, waiting at most `deadline`.
pub fn shared(file: &impl AsFd, deadline: Duration) -> Result<Lock<'_>, Error> {
    take(file.as_fd(), Mode::Shared, deadline)
}

/// The lock if nobody holds a conflicting one, without waiting (`None` when someone does).
pub fn try_exclusive(file: &impl AsFd) -> io::Result<Option<Lock<'_>>> {
    let fd = file.as_fd();
    loop {
        match rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {
                return Ok(Some(Lock {
                    held: Held::Borrowed(fd),
                }))
            }
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Takes `mode` on `fd`, waiting at most `deadline`.
pub fn take(fd: BorrowedFd<'_>, mode: Mode, deadline: Duration) -> Result<Lock<'_>, Error> {
    let (nonblocking, blocking) = mode.ops();
    loop {
        match rustix::fs::flock(fd, nonblocking) {
            Ok(()) => {
                return Ok(Lock {
                    held: Held::Borrowed(fd),
                })
            }
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) => break,
            Err(e) => return Err(Error::Io(e.into())),
        }
    }
    let start = Instant::now();
    let own = reopen(fd)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<OwnedFd>>(1);
    std::thread::Builder::new()
        .name("cordon-lock-wait".into())
        .spawn(move || {
            let got = loop {
                match rustix::fs::flock(&own, blocking) {
                    Err(Errno::INTR) => continue,
                    other => break other,
                }
            };
            // When the caller gave up, the send fails and `own` is closed: a late grant is
            // released at once.
            let _ = tx.send(got.map(|()| own).map_err(io::Error::from));
        })
        .map_err(Error::Io)?;
    match rx.recv_timeout(deadline) {
        Ok(Ok(own)) => Ok(Lock {
            held: Held::Own(own),
        }),
        Ok(Err(e)) => Err(Error::Io(e)),
        Err(_) => {
            drop(rx);
            Err(Error::TimedOut {
                waited: start.elapsed(),
                holders: holders_of(fd),
            })
        }
    }
}

/// A new open file description of the file `fd` is open on: its own `flock`s, independent of
/// `fd`'s. Through `/proc/self/fd`, which reopens the very file (not whatever its name points
/// to now).
fn reopen(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC;
    rustix::fs::open(path.as_str(), flags, rustix::fs::Mode::empty()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot reopen the lock file to wait for it ({e}; is /proc mounted?)"),
        )
    })
}

/// Who holds or waits for a `flock` on the file `fd` is open on, from `/proc/locks`.
pub fn holders_of(fd: BorrowedFd<'_>) -> Vec<Holder> {
    let Ok(st) = rustix::fs::fstat(fd) else {
        return Vec::new();
    };
    let dev = st.st_dev;
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let id = format!("{major:02x}:{minor:02x}:{}", st.st_ino);
    let Ok(text) = std::fs::read_to_string("/proc/locks") else {
        return Vec::new();
    };
    parse_proc_locks(&text, &id)
        .into_iter()
        .map(|(pid, holds)| Holder {
            pid,
            command: command_of(pid),
            holds,
        })
        .collect()
}

/// `(pid, holds)` of each `FLOCK` line of `/proc/locks` on the file `MAJ:MIN:INO`.
/// Lines look like `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; a waiter's has `->`
/// after the number.
fn parse_proc_locks(text: &str, id: &str) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        words.remove(0); // "N:"
        let holds = words.first() != Some(&"->");
        if !holds {
            words.remove(0);
        }
        // FLOCK ADVISORY WRITE PID DEV:INO START END
        if words.len() < 5 || words[0] != "FLOCK" || words[4] != id {
            continue;
        }
        if let Ok(pid) = words[3].parse() {
            out.push((pid, holds));
        }
    }
    out
}

/// A process's command line, or a word on why it is not known.
fn command_of(pid: u32) -> String {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(b) if !b.is_empty() => {
            let words: Vec<String> = b
                .split(|&c| c == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            let mut s = words.join(" ");
            if s.chars().count() > 120 {
                s = s.chars().take(119).collect::<String>() + "…";
            }
            s
        }
        Ok(_) => "no command line: a kernel thread or a zombie".into(),
        Err(_) => "exited: a process it passed the descriptor to still holds the lock".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::sync::{Arc, Barrier};

    #[test]
    fn proc_locks_lines_are_read() {
        let text = "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 1240 fd:01:5678 0 EOF\n\
                    2: POSIX  ADVISORY  WRITE 99 fd:01:5678 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 7 fd:01:9 0 EOF\n";
        assert_eq!(
            parse_proc_locks(text, "fd:01:5678"),
            [(1234, true), (1240, false)]
        );
    }

    #[test]
    fn a_held_lock_times_out_naming_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        let b = File::open(&path).unwrap();
        let held = exclusive(&a, Duration::from_secs(1)).unwrap();
        let t = Instant::now();
        let e = exclusive(&b, Duration::from_millis(300)).unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(300));
        let Error::TimedOut { holders, .. } = &e else {
            panic!("{e}")
        };
        let me = std::process::id();
        assert!(holders.iter().any(|h| h.holds && h.pid == me), "{e}");
        assert!(e.to_string().contains(&format!("pid {me}")), "{e}");
        // A shared lock is refused as well, then granted once the holder lets go.
        assert!(shared(&b, Duration::from_millis(50)).is_err());
        drop(held);
        let _s = shared(&b, Duration::from_secs(5)).unwrap();
        // The late grants of the waiters that gave up were released: a new exclusive lock
        // through the first descriptor is refused only because of `_s`.
        assert!(try_exclusive(&a).unwrap().is_none());
    }

    #[test]
    fn a_waiter_gets_the_lock_as_soon_as_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        let held = exclusive(&a, Duration::from_secs(1)).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let b2 = barrier.clone();
        let p2 = path.clone();
        let waiter = std::thread::spawn(move || {
            let b = File::open(&p2).unwrap();
            b2.wait();
            let t = Instant::now();
            let l = exclusive(&b, Duration::from_secs(60)).unwrap();
            drop(l);
            t.elapsed()
        });
        barrier.wait();
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited < Duration::from_secs(30), "{waited:?}");
    }

    #[test]
    fn nobody_holding_is_said() {
        let s = timed_out(Duration::from_secs(5), &[]);
        assert!(s.contains("nobody holds it now"), "{s}");
    }
}
