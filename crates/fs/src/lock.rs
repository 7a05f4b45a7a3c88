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
//!
//! A `flock` belongs to an open file description, and every process that holds a descriptor
//! of it holds the lock: a child forked by another thread, between its fork and its exec (the
//! descriptor is close-on-exec, but until the exec it is there), or a clone of cordon that
//! never execs (the Landlock backend's init, bwrap's pid 1, until they close what they
//! copied). Two consequences, handled here once:
//!
//! - **Exclusion** ([`exclusive`], [`shared`], [`FileLock`]): a lock is released by an explicit
//!   `LOCK_UN`, never only by closing the descriptor — a child's copy of the description would
//!   keep it held until the child's exec, and make every other writer wait and the refusal
//!   name the child as the holder.
//! - **Liveness** ("is the process that made this still there?", a run's after-run marker):
//!   a `flock` cannot answer it, since a child's copy keeps a dead or finished run's lock
//!   held, and the run looks alive. [`ProcessLock`] is a POSIX record lock (`F_SETLK` on the
//!   whole file) instead: owned by the process (its descriptor table), not inherited by a
//!   fork or a clone without `CLONE_FILES`, released when the process exits, whatever its
//!   children hold. Its two traps are handled by a registry of the files this process holds:
//!   record locks never conflict within one process (a second run of the same `cordon mcp`
//!   would take a live sibling's lock), and closing *any* descriptor of the file releases the
//!   process's lock (so a descriptor of a held file given to [`ProcessLock::try_take`] is
//!   kept until the lock goes; the file must not be opened elsewhere in the process).

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
        // Unlocked explicitly, the waiter's descriptor too, before it closes: a child forked
        // meanwhile holds a copy of the description until its exec, and closing ours alone
        // would leave the lock held by it (see the module's documentation). Fails only for a
        // descriptor that is not open, which the borrow and the ownership rule out.
        match &self.held {
            Held::Borrowed(fd) => unlock(*fd),
            Held::Own(fd) => unlock(fd.as_fd()),
            Held::Gone => {}
        }
    }
}

fn unlock(fd: BorrowedFd<'_>) {
    let _ = rustix::fs::flock(fd, FlockOperation::Unlock);
}

/// A lock that owns its file: held until this is dropped (for a lock held over an object's
/// whole life, e.g. a run's directory or a session).
#[derive(Debug)]
pub struct FileLock {
    file: std::fs::File,
    /// The waiter's descriptor, when the lock was granted after a wait: the lock is on it.
    _waiter: Option<OwnedFd>,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // As `Lock`'s: explicitly, so that a child's copy of the description does not keep it.
        match &self._waiter {
            Some(fd) => unlock(fd.as_fd()),
            None => unlock(self.file.as_fd()),
        }
    }
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

    /// A shared lock on `file`, kept with it, waiting at most `deadline`.
    pub fn shared(file: std::fs::File, deadline: Duration) -> Result<FileLock, Error> {
        let waiter = take(file.as_fd(), Mode::Shared, deadline)?.keep();
        Ok(FileLock {
            file,
            _waiter: waiter,
        })
    }

    /// Releases the lock (explicitly, as a drop does) and gives the file back, unlocked: to
    /// ask for another mode on the same open file description.
    pub fn into_file(self) -> io::Result<std::fs::File> {
        // A second descriptor of the same description: the lock goes with the explicit
        // unlock of the drop, not with a close, so the copy holds nothing.
        let file = self.file.try_clone()?;
        drop(self);
        Ok(file)
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
    parse_proc_locks(&text, "FLOCK", &id)
        .into_iter()
        .map(|(pid, holds)| Holder {
            pid,
            command: command_of(pid),
            holds,
        })
        .collect()
}

/// `(pid, holds)` of each line of `kind` (`FLOCK`, `POSIX`) of `/proc/locks` on the file
/// `MAJ:MIN:INO`. Lines look like `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; a
/// waiter's has `->` after the number.
fn parse_proc_locks(text: &str, kind: &str, id: &str) -> Vec<(u32, bool)> {
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
        if words.len() < 5 || words[0] != kind || words[4] != id {
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

/// A lock held by this process alone (see the module's documentation): an exclusive POSIX
/// record lock on the whole file, which no process this one forks or clones holds, and which
/// goes when this process exits or this is dropped. For liveness: whether the process that
/// made a file still runs (and has not let go of it), asked by another process or another
/// thread of this one.
#[derive(Debug)]
pub struct ProcessLock {
    /// `None` only inside `drop`.
    file: Option<std::fs::File>,
    key: Key,
}

/// A file, as (device, inode).
type Key = (u64, u64);

/// The files this process holds a [`ProcessLock`] on, with the descriptors of them handed to
/// [`ProcessLock::try_take`] while they were held (kept: closing one would release the lock).
struct Registry(Vec<(Key, Vec<std::fs::File>)>);

static HELD: std::sync::Mutex<Registry> = std::sync::Mutex::new(Registry(Vec::new()));

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    // Nothing here panics while holding it; a poisoned registry is still right.
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn key_of(st: &rustix::fs::Stat) -> Key {
    // The field types differ between targets (u64 here, narrower on some 32-bit ones).
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    (st.st_dev as u64, st.st_ino as u64)
}

impl ProcessLock {
    /// The lock on `file` (open for writing: a record write lock needs it) if no process
    /// holds it, this one included; `Ok(None)` when one does. `file` is taken either way: if
    /// this process holds the lock, it is kept open until the lock goes, since closing it
    /// would release the lock.
    pub fn try_take(file: std::fs::File) -> io::Result<Option<ProcessLock>> {
        let key = key_of(&rustix::fs::fstat(&file)?);
        let mut held = registry();
        if let Some((_, parked)) = held.0.iter_mut().find(|(k, _)| *k == key) {
            parked.push(file);
            return Ok(None);
        }
        loop {
            match rustix::fs::fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(Errno::INTR) => continue,
                // F_SETLK's "held by another process".
                Err(Errno::ACCESS | Errno::AGAIN) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        held.0.push((key, Vec::new()));
        Ok(Some(ProcessLock {
            file: Some(file),
            key,
        }))
    }

    /// Whether this process holds a [`ProcessLock`] on the file `st` describes: a caller that
    /// asks before opening the file (`statat` of its name) need not open it at all.
    pub fn held_here(st: &rustix::fs::Stat) -> bool {
        let key = key_of(st);
        registry().0.iter().any(|(k, _)| *k == key)
    }

    /// The locked file. Read and write through it; never `dup` it (closing the copy would
    /// release the lock).
    pub fn file(&self) -> &std::fs::File {
        self.file.as_ref().expect("taken only in drop")
    }
}

impl Drop for ProcessLock {
    fn drop(&mut self) {
        // All under the registry's lock: once it is free there, a thread of this process may
        // take it, and a descriptor of ours closed after that would release its lock.
        let mut held = registry();
        let file = self.file.take();
        if let Some(f) = &file {
            let _ = rustix::fs::fcntl_lock(f, FlockOperation::Unlock);
        }
        drop(file);
        if let Some(i) = held.0.iter().position(|(k, _)| *k == self.key) {
            held.0.swap_remove(i);
        }
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
            parse_proc_locks(text, "FLOCK", "fd:01:5678"),
            [(1234, true), (1240, false)]
        );
        assert_eq!(parse_proc_locks(text, "POSIX", "fd:01:5678"), [(99, true)]);
    }

    /// Who holds a lock of `kind` on `f`'s file, as the kernel says (`/proc/locks`).
    fn kernel_holders(f: &File, kind: &str) -> Vec<u32> {
        let st = rustix::fs::fstat(f).unwrap();
        let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        let id = format!("{major:02x}:{minor:02x}:{}", st.st_ino);
        let text = std::fs::read_to_string("/proc/locks").unwrap();
        parse_proc_locks(&text, kind, &id)
            .into_iter()
            .filter(|&(_, holds)| holds)
            .map(|(pid, _)| pid)
            .collect()
    }

    /// A child process that holds a copy of `f`'s descriptor (inherited: close-on-exec cleared
    /// for the spawn) until it is killed: what a child forked by another thread holds between
    /// its fork and its exec, or a clone of cordon that never execs. Not a `dup` handed to the
    /// child: closing the parent's dup would release a record lock by itself.
    fn child_holding(f: impl AsFd) -> std::process::Child {
        use rustix::io::{fcntl_setfd, FdFlags};
        fcntl_setfd(&f, FdFlags::empty()).unwrap();
        let child = std::process::Command::new("sleep")
            .arg("600")
            .stdin(std::process::Stdio::null())
            .spawn();
        fcntl_setfd(&f, FdFlags::CLOEXEC).unwrap();
        let child = child.unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f.as_fd());
        assert!(
            std::fs::read_link(format!("/proc/{}/fd/{fd}", child.id())).is_ok(),
            "the child holds the descriptor"
        );
        child
    }

    /// A released exclusion lock is free at once, although a child still holds a copy of the
    /// descriptor it was taken on (before: released only by the close, so the child kept it).
    #[test]
    fn a_released_lock_is_free_although_a_child_holds_its_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        let held = FileLock::exclusive(a, Duration::from_secs(5)).unwrap();
        let mut child = child_holding(held.file());
        drop(held);
        let b = File::open(&path).unwrap();
        let got = try_exclusive(&b).unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            got,
            "the lock stayed held by a child's copy of its descriptor"
        );
    }

    /// The same for a lock granted after a wait, which is held on the waiter's own descriptor
    /// (before: released by closing it, which a child's copy outlived).
    #[test]
    fn a_lock_granted_after_a_wait_is_released_although_a_child_holds_its_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        let b = File::open(&path).unwrap();
        let held = exclusive(&a, Duration::from_secs(5)).unwrap();
        let waited = std::thread::scope(|s| {
            let waiter = s.spawn(|| exclusive(&b, Duration::from_secs(120)).unwrap());
            // Released once the waiter waits in the kernel (its line in /proc/locks).
            let until = Instant::now() + Duration::from_secs(60);
            loop {
                let st = rustix::fs::fstat(&a).unwrap();
                let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
                let id = format!("{major:02x}:{minor:02x}:{}", st.st_ino);
                let text = std::fs::read_to_string("/proc/locks").unwrap();
                if parse_proc_locks(&text, "FLOCK", &id)
                    .iter()
                    .any(|&(_, h)| !h)
                {
                    break;
                }
                assert!(Instant::now() < until, "the waiter never waited");
                std::thread::sleep(Duration::from_millis(10));
            }
            drop(held);
            waiter.join().unwrap()
        });
        let Held::Own(fd) = &waited.held else {
            panic!("granted after a wait: held on the waiter's descriptor")
        };
        let mut child = child_holding(fd);
        drop(waited);
        let c = File::open(&path).unwrap();
        let got = try_exclusive(&c).unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            got,
            "the lock stayed held by a child's copy of the waiter's descriptor"
        );
    }

    /// A process lock is this process's alone: a child holding a copy of its descriptor holds
    /// nothing, and once dropped nobody holds it (the kernel's own list says so).
    #[test]
    fn a_process_lock_is_not_held_by_a_child_holding_its_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let lock = ProcessLock::try_take(File::create(&path).unwrap())
            .unwrap()
            .expect("free");
        let probe = File::open(&path).unwrap();
        let me = std::process::id();
        let mut child = child_holding(lock.file());
        let held = kernel_holders(&probe, "POSIX");
        drop(lock);
        let after = kernel_holders(&probe, "POSIX");
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(held, [me], "held by this process alone");
        assert_eq!(after, [0u32; 0], "released although a child holds a copy");
        // `probe` (not given to the lock) is closed only now: nothing was held by then.
    }

    /// Within one process the lock is exclusive too (record locks never conflict inside a
    /// process: the registry does it), and a descriptor of the held file handed over while it
    /// is held does not release it when the attempt fails.
    #[test]
    fn a_process_lock_excludes_this_process_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .unwrap()
        };
        let first = ProcessLock::try_take(open()).unwrap().expect("free");
        assert!(ProcessLock::held_here(
            &rustix::fs::fstat(first.file()).unwrap()
        ));
        let again = std::thread::scope(|s| s.spawn(|| ProcessLock::try_take(open())).join());
        assert!(
            again.unwrap().unwrap().is_none(),
            "held by a thread of ours"
        );
        // The failed attempt's descriptor is kept: the kernel still has our lock.
        let probe = open();
        assert_eq!(kernel_holders(&probe, "POSIX"), [std::process::id()]);
        drop(first);
        assert!(kernel_holders(&probe, "POSIX").is_empty());
        assert!(!ProcessLock::held_here(&rustix::fs::fstat(&probe).unwrap()));
        let second = ProcessLock::try_take(open()).unwrap();
        assert!(second.is_some(), "free again once dropped");
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
