//! Appending records: one locked, single-`write`, fsynced line per decision.
//!
//! Every file the writer opens, creates or replaces beside the log (the log itself, its head
//! file, the head's temporary file, a torn tail moved aside) is reached by name through one
//! descriptor of the log's directory, opened once, and never through a symlink. The log may
//! lie in a directory a sandboxed command can write (a writable root): a link planted there
//! would otherwise make cordon, possibly running as root, truncate or overwrite whatever it
//! points to. A symlink where the log, its head or its directory should be is refused, not
//! followed or replaced; new files are created `O_EXCL` under names nobody can guess.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use super::record::{Record, FORMAT_VERSION, ZERO_HASH};
use super::util::{file_stamp, is_hash, new_id, random_hex, rfc3339, sha256_hex};
use super::verify::{parse_head, Head};
use crate::Error;

/// An open audit log. Several writers — threads with their own `AuditLog`, or processes —
/// may append to the same file at once: each append holds an exclusive `flock` on the log's
/// lock file (`FILE.lock`, beside it), waiting at most [`LOCK_DEADLINE`] for it.
///
/// The lock is not taken on the log itself: anyone who can open a file for reading can
/// `flock` it, and a sandboxed command that can read the log (a log under a read-only root)
/// could then block every later run. The lock file lies beside the log, where cordon hides
/// the log's directory from the sandbox (or, for a log directly in a writable root, the
/// files themselves); and a lock held anyway makes the append fail after the deadline (the
/// run is refused) rather than hang.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    /// The log's directory: everything beside the log is opened relative to it.
    dir: File,
    /// The log's file name in `dir`.
    name: OsString,
    file: File,
    /// `FILE.lock`, opened read-only: only ever locked, never written.
    lock: File,
    lock_deadline: std::time::Duration,
    session: String,
    /// Written into records that name no client (see [`AuditLog::with_client`]).
    client: Option<String>,
}

/// How long an append waits for the lock before giving up. Appends hold it for one
/// `write` and an `fdatasync`: a lock held longer is held by something else.
pub const LOCK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// The lock file beside the log (`FILE.lock`).
pub fn lock_path(log: &Path) -> PathBuf {
    sibling(log, ".lock")
}

/// What [`AuditLog::append`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The record's `seq`.
    pub seq: u64,
    /// SHA-256 (hex) of the line written (without its newline): the next record's `prev`.
    pub hash: String,
    /// Where a torn tail found before this record was moved, if one was.
    pub torn_moved_to: Option<PathBuf>,
}

/// The file beside the log that holds the last record's `seq` and hash (`FILE.head`).
pub fn head_path(log: &Path) -> PathBuf {
    sibling(log, ".head")
}

fn sibling(log: &Path, suffix: &str) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn with_suffix(name: &OsStr, suffix: &str) -> OsString {
    let mut s = name.to_os_string();
    s.push(suffix);
    s
}

/// Why a symlink beside the log is refused rather than followed.
const SYMLINK_REFUSED: &str = "it is a symlink, and cordon never writes through one beside the \
audit log (a command that could write this directory may have planted it to redirect cordon's \
writes); remove it, check what it points to, and run `cordon audit verify`";

fn symlink_refused() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, SYMLINK_REFUSED)
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode)`: `name` is one path
/// component, so nothing on the way can be a symlink either. A symlink at `name` fails
/// (ELOOP, reported as [`SYMLINK_REFUSED`]), even with `O_CREAT`.
pub(crate) fn open_at(dir: &File, name: &OsStr, flags: OFlags, mode: u32) -> io::Result<File> {
    let name = one_name(name)?;
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    loop {
        match rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => return Ok(File::from(fd)),
            Err(Errno::INTR) => continue,
            Err(Errno::LOOP) => return Err(symlink_refused()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// `name` if it is one non-empty path component without NUL (the kernel reads it as a C
/// string: a NUL would silently cut it short).
fn one_name(name: &OsStr) -> io::Result<&OsStr> {
    let b = name.as_bytes();
    if b.is_empty() || b.contains(&b'/') || b.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single file name",
        ));
    }
    Ok(name)
}

/// renameat replaces the name `to` itself, whatever it is; it never follows a symlink there.
fn rename_at(dir: &File, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (one_name(from)?, one_name(to)?);
    Ok(rustix::fs::renameat(dir, from, dir, to)?)
}

/// Best effort: removes our own temporary file. unlinkat removes the name, never what a
/// symlink points to.
fn unlink_at(dir: &File, name: &OsStr) {
    if let Ok(name) = one_name(name) {
        // Cleanup after a failure already reported: a name left behind is harmless.
        let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
    }
}

/// Opens `dir` for `*at` calls, refusing a symlink in its last component: whoever can
/// replace the log's directory with a link would choose where cordon writes.
fn open_dir(dir: &Path) -> io::Result<File> {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
    {
        Ok(f) => Ok(f),
        // O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR (Linux) or ELOOP.
        Err(_) if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) => {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symlink, and cordon never follows one to the audit log's directory \
                 (whoever can replace the directory with a link chooses where cordon writes); \
                 name the real directory in approval.audit_log",
            ))
        }
        Err(e) => Err(e),
    }
}

/// The head file beside the log, read through the directory without following a symlink:
/// `None` when there is none. Only a small regular file is read.
pub(crate) fn read_head_at(dir: &File, name: &OsStr) -> Option<Result<Head, String>> {
    let f = match open_at(dir, name, OFlags::RDONLY | OFlags::NONBLOCK, 0) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(e.to_string())),
    };
    Some(read_head_file(f))
}

/// The content of an open head file: a regular file of a few dozen bytes.
pub(crate) fn read_head_file(f: File) -> Result<Head, String> {
    const MAX: u64 = 4096;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut text = String::new();
    f.take(MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX {
        return Err(format!("larger than {MAX} bytes"));
    }
    parse_head(&text)
}

impl AuditLog {
    /// Opens (creating, mode 0600, with its missing parent directories, mode 0700) the log at
    /// `path`, for a new session with a random id. Refuses a log, or a log directory, that is
    /// a symlink, and a log that is not a regular file with exactly one name.
    pub fn open(path: impl AsRef<Path>) -> Result<AuditLog, Error> {
        let path = path.as_ref().to_path_buf();
        let io = |what: &'static str| {
            let path = path.clone();
            move |source| Error::Io { path, what, source }
        };
        let Some(name) = path.file_name().map(OsStr::to_os_string) else {
            return Err(io("not a file name")(io::Error::from(
                io::ErrorKind::InvalidInput,
            )));
        };
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => {
                // 0700: the records hold every command line and its arguments.
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(io("cannot create its directory"))?;
                dir
            }
            None => Path::new("."),
        };
        let dir = open_dir(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            what: "cannot open the audit log's directory",
            source,
        })?;
        // O_NONBLOCK: a fifo planted at the name must not hang cordon; it is refused below.
        let file = open_at(
            &dir,
            &name,
            OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::NONBLOCK,
            0o600,
        )
        .map_err(io("cannot open"))?;
        let meta = file.metadata().map_err(io("cannot stat"))?;
        if !meta.is_file() {
            return Err(io("not a regular file")(io::Error::from(
                io::ErrorKind::InvalidInput,
            )));
        }
        // A second name could be a hard link planted to make the log some other file.
        if meta.nlink() != 1 {
            return Err(io("refusing a log with more than one name")(
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "it has {} hard links; another name may be a file the log was linked to",
                        meta.nlink()
                    ),
                ),
            ));
        }
        let lock = open_at(
            &dir,
            &with_suffix(&name, ".lock"),
            OFlags::RDONLY | OFlags::CREATE | OFlags::NONBLOCK,
            0o600,
        )
        .map_err(io("cannot open its lock file"))?;
        if !lock
            .metadata()
            .map_err(io("cannot stat its lock file"))?
            .is_file()
        {
            return Err(io("its lock file is not a regular file")(io::Error::from(
                io::ErrorKind::InvalidInput,
            )));
        }
        let session = new_id().map_err(Error::Random)?;
        Ok(AuditLog {
            path,
            dir,
            name,
            file,
            lock,
            lock_deadline: LOCK_DEADLINE,
            session,
            client: None,
        })
    }

    /// Waits at most `deadline` for the lock (instead of [`LOCK_DEADLINE`]).
    pub fn with_lock_deadline(mut self, deadline: std::time::Duration) -> AuditLog {
        self.lock_deadline = deadline;
        self
    }

    /// Names the agent host or MCP client in every record that names none.
    pub fn with_client(mut self, client: impl Into<String>) -> AuditLog {
        self.client = Some(client.into());
        self
    }

    /// Uses `session` as this log's session id instead of the random one.
    pub fn with_session(mut self, session: impl Into<String>) -> AuditLog {
        self.session = session.into();
        self
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id written into records that do not set one.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Appends `record` and makes it durable before returning: under an exclusive `flock`,
    /// reads the last complete record and checks it against `FILE.head` (refusing with
    /// [`Error::Inconsistent`] when they disagree beyond what a crash explains, or when the
    /// last line is not a valid record), moves a torn tail aside (see the module docs), writes
    /// the whole line with one `write` call, `fdatasync`s, then updates `FILE.head`.
    ///
    /// The caller's `v`, `time`, `seq` and `prev` are replaced; an empty `session` or
    /// `request` is filled in. On any error nothing new is left in the file: a partly written
    /// line is truncated away.
    pub fn append(&mut self, record: &Record) -> Result<Appended, Error> {
        let _lock = Flock::exclusive_within(&self.lock, self.lock_deadline)
            .map_err(self.io("cannot lock (FILE.lock)"))?;
        let len = self.file.metadata().map_err(self.io("cannot stat"))?.len();
        // Check everything before changing anything.
        let complete = self.complete_len(len)?;
        let (seq, prev, mut found) = self.link(complete)?;
        let torn = if complete < len {
            let to = self.move_torn_tail(complete, len)?;
            let after = match seq {
                0 => "at the start of the file".to_string(),
                n => format!("after seq {}", n - 1),
            };
            found.insert(
                0,
                format!(
                    "an interrupted write had left a torn tail of {} bytes (no newline) \
                     {after}; it was moved to {}",
                    len - complete,
                    to.display()
                ),
            );
            Some(to)
        } else {
            None
        };

        let mut rec = record.clone();
        rec.v = FORMAT_VERSION;
        rec.time = rfc3339(SystemTime::now());
        if rec.session.is_empty() {
            rec.session = self.session.clone();
        }
        if rec.request.is_empty() {
            rec.request = new_id().map_err(Error::Random)?;
        }
        if rec.client.is_none() {
            rec.client.clone_from(&self.client);
        }
        rec.seq = seq;
        rec.prev = prev;
        rec.repair = (!found.is_empty()).then(|| found.join("; "));
        let mut line = serde_json::to_string(&rec).map_err(|e| Error::Io {
            path: self.path.clone(),
            what: "cannot encode the record",
            source: io::Error::other(e),
        })?;
        let hash = sha256_hex(line.as_bytes());
        line.push('\n');
        self.write_line(complete, line.as_bytes())?;
        self.write_head(seq, &hash)?;
        Ok(Appended {
            seq,
            hash,
            torn_moved_to: torn,
        })
    }

    fn io(&self, what: &'static str) -> impl FnOnce(io::Error) -> Error {
        let path = self.path.clone();
        move |source| Error::Io { path, what, source }
    }

    /// One `write` of the whole line at the end (O_APPEND), then `fdatasync`. A short or
    /// failed write is truncated away so that the file ends where it did.
    fn write_line(&self, len: u64, line: &[u8]) -> Result<(), Error> {
        let written = loop {
            match (&self.file).write(line) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        let result = match written {
            Ok(n) if n == line.len() => self.file.sync_data(),
            Ok(n) => Err(io::Error::other(format!(
                "short write ({n} of {} bytes)",
                line.len()
            ))),
            Err(e) => Err(e),
        };
        result.map_err(|e| {
            let _ = self.file.set_len(len);
            let _ = self.file.sync_data();
            Error::Io {
                path: self.path.clone(),
                what: "cannot write the record",
                source: e,
            }
        })
    }

    /// The length of the file's complete lines: `len`, or less when the file does not end
    /// with a newline (a torn tail: the remains of an interrupted write).
    fn complete_len(&self, len: u64) -> Result<u64, Error> {
        if len == 0 || self.read_at(len - 1, 1)? == b"\n" {
            return Ok(len);
        }
        self.line_start(len)
    }

    /// Copies the torn tail `start..len` to `FILE.torn-STAMP-RAND` (a new file, fsynced with
    /// its directory), then truncates it away.
    fn move_torn_tail(&self, start: u64, len: u64) -> Result<PathBuf, Error> {
        let torn = self.read_at(start, (len - start) as usize)?;
        let rand = random_hex(8).map_err(Error::Random)?;
        let suffix = format!(".torn-{}-{rand}", file_stamp(SystemTime::now()));
        let name = with_suffix(&self.name, &suffix);
        let save = || -> io::Result<()> {
            let mut f = open_at(
                &self.dir,
                &name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
                0o600,
            )?;
            f.write_all(&torn)?;
            f.sync_all()?;
            self.dir.sync_all()
        };
        save().map_err(self.io("cannot save the torn tail aside"))?;
        self.file
            .set_len(start)
            .and_then(|()| self.file.sync_data())
            .map_err(self.io("cannot truncate the torn tail"))?;
        Ok(sibling(&self.path, &suffix))
    }

    /// The `seq` and `prev` for a record appended after the first `len` bytes (complete
    /// lines): links to the last line, which must be a valid record that agrees with the head
    /// file. Also returns what is worth noting in the new record (a head file one behind).
    fn link(&self, len: u64) -> Result<(u64, String, Vec<String>), Error> {
        let refuse = |why: String| Error::Inconsistent {
            path: self.path.clone(),
            why,
        };
        let head_file = head_path(&self.path);
        let head = match read_head_at(&self.dir, &with_suffix(&self.name, ".head")) {
            None => None,
            Some(Ok(h)) => Some(h),
            Some(Err(why)) => {
                return Err(refuse(format!(
                    "its head file {} is unreadable: {why}",
                    head_file.display()
                )))
            }
        };
        if len == 0 {
            return match head {
                None => Ok((0, ZERO_HASH.to_string(), Vec::new())),
                Some(h) => Err(refuse(format!(
                    "it is empty, but its head file records seq {}: records were deleted",
                    h.seq
                ))),
            };
        }
        let end = len - 1; // the newline
        let start = self.line_start(end)?;
        let line = self.read_at(start, (end - start) as usize)?;
        let corrupt = |why: String| refuse(format!("its last line is not a valid record ({why})"));
        let last: Record = serde_json::from_slice(&line).map_err(|e| corrupt(e.to_string()))?;
        if last.v != FORMAT_VERSION {
            return Err(corrupt(format!("format version {}", last.v)));
        }
        if !is_hash(&last.prev) {
            return Err(corrupt("its `prev` is not a SHA-256".into()));
        }
        let seq = last
            .seq
            .checked_add(1)
            .ok_or_else(|| corrupt("its `seq` is the largest possible".into()))?;
        let hash = sha256_hex(&line);
        let mut found = Vec::new();
        match head {
            Some(h) if h.hash == hash && h.seq == last.seq => {}
            Some(h) if h.hash == last.prev && h.seq.checked_add(1) == Some(last.seq) => {
                found.push(format!(
                    "the head file was one record behind: seq {} had been written without \
                     updating it (a crash between the two writes, or something other than \
                     cordon's writer appended it)",
                    last.seq
                ))
            }
            None if last.prev == ZERO_HASH && start == 0 => found.push(
                "the head file was missing after the first record (a crash between the two \
                 writes)"
                    .into(),
            ),
            None => {
                return Err(refuse(format!(
                    "its head file {} is missing, so the end of the log cannot be trusted",
                    head_file.display()
                )))
            }
            Some(h) => {
                return Err(refuse(format!(
                    "it does not match its head file (which records seq {}; the last record \
                     is seq {}): records at the end were deleted or changed",
                    h.seq, last.seq
                )))
            }
        }
        Ok((seq, hash, found))
    }

    /// Where the line containing byte `end - 1` starts (the byte after the previous newline
    /// before `end`, or 0).
    fn line_start(&self, end: u64) -> Result<u64, Error> {
        const CHUNK: u64 = 64 * 1024;
        let mut hi = end;
        while hi > 0 {
            let lo = hi.saturating_sub(CHUNK);
            let buf = self.read_at(lo, (hi - lo) as usize)?;
            if let Some(i) = buf.iter().rposition(|&b| b == b'\n') {
                return Ok(lo + i as u64 + 1);
            }
            hi = lo;
        }
        Ok(0)
    }

    fn read_at(&self, offset: u64, n: usize) -> Result<Vec<u8>, Error> {
        let mut buf = vec![0u8; n];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(self.io("cannot read"))?;
        Ok(buf)
    }

    /// Replaces `FILE.head` with `{"v":1,"seq":N,"hash":"…"}`: written to a new temporary
    /// file with a random name (`O_EXCL`, so nothing already there — a planted link, a stale
    /// temporary — is ever opened), fsynced, renamed over the head, and the directory fsynced.
    fn write_head(&self, seq: u64, hash: &str) -> Result<(), Error> {
        let head = with_suffix(&self.name, ".head");
        let rand = random_hex(8).map_err(Error::Random)?;
        let tmp = with_suffix(&self.name, &format!(".head.tmp-{rand}"));
        let text = format!("{{\"v\":{FORMAT_VERSION},\"seq\":{seq},\"hash\":\"{hash}\"}}\n");
        let f = open_at(
            &self.dir,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            0o600,
        )
        .map_err(self.io("cannot create the head file's temporary file"))?;
        let write = || -> io::Result<()> {
            (&f).write_all(text.as_bytes())?;
            f.sync_data()?;
            rename_at(&self.dir, &tmp, &head)?;
            self.dir.sync_all()
        };
        write().map_err(|e| {
            // Our own file, by a name only we know: removing it cannot touch anything else.
            unlink_at(&self.dir, &tmp);
            self.io("cannot update the head file")(e)
        })
    }
}

/// An exclusive or shared `flock` on a file, released on drop.
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    pub(crate) fn exclusive_within(
        file: &'a File,
        deadline: std::time::Duration,
    ) -> io::Result<Flock<'a>> {
        Flock::take(file, FlockOperation::NonBlockingLockExclusive, deadline)
    }

    pub(crate) fn shared_within(
        file: &'a File,
        deadline: std::time::Duration,
    ) -> io::Result<Flock<'a>> {
        Flock::take(file, FlockOperation::NonBlockingLockShared, deadline)
    }

    /// Polls a non-blocking `flock` (waits from 1 ms doubling to 50 ms) until it is granted
    /// or `deadline` has passed: a blocking `flock` could wait forever on a holder that never
    /// lets go.
    fn take(
        file: &'a File,
        op: FlockOperation,
        deadline: std::time::Duration,
    ) -> io::Result<Flock<'a>> {
        let start = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            match rustix::fs::flock(file, op) {
                Ok(()) => return Ok(Flock(file)),
                Err(Errno::INTR) => continue,
                Err(Errno::WOULDBLOCK) => {}
                Err(e) => return Err(e.into()),
            }
            let waited = start.elapsed();
            if waited >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "another process has held the lock for {:.1} s (a cordon run writes for milliseconds; find the holder with `fuser -v FILE.lock`); giving up",
                        waited.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(pause.min(deadline - waited));
            pause = (pause * 2).min(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // Unlocking a descriptor we hold a lock on fails only if it is not open, which the
        // borrow rules out; the lock also goes when the last descriptor of the file closes.
        let _ = rustix::fs::flock(self.0, FlockOperation::Unlock);
    }
}
