//! Appending records: one locked, single-`write`, fsynced line per decision.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::record::{Record, FORMAT_VERSION, ZERO_HASH};
use super::util::{file_stamp, is_hash, new_id, random_hex, rfc3339, sha256_hex};
use super::verify::read_head;
use super::Error;

/// An open audit log. Several writers — threads with their own `AuditLog`, or processes —
/// may append to the same file at once: each append holds an exclusive `flock` on it.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: File,
    session: String,
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

impl AuditLog {
    /// Opens (creating, mode 0600, with its parent directories) the log at `path`, for a new
    /// session with a random id.
    pub fn open(path: impl AsRef<Path>) -> Result<AuditLog, Error> {
        let path = path.as_ref().to_path_buf();
        let io = |what: &'static str| {
            let path = path.clone();
            move |source| Error::Io { path, what, source }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io("cannot create its directory"))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(io("cannot open"))?;
        let meta = file.metadata().map_err(io("cannot stat"))?;
        if !meta.is_file() {
            return Err(io("not a regular file")(io::Error::from(
                io::ErrorKind::InvalidInput,
            )));
        }
        let session = new_id().map_err(Error::Random)?;
        Ok(AuditLog {
            path,
            file,
            session,
        })
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
        let _lock = Flock::exclusive(&self.file).map_err(self.io("cannot lock"))?;
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

    /// Copies the torn tail `start..len` to `FILE.torn-STAMP-RAND` (fsynced), then truncates
    /// it away.
    fn move_torn_tail(&self, start: u64, len: u64) -> Result<PathBuf, Error> {
        let torn = self.read_at(start, (len - start) as usize)?;
        let rand = random_hex(4).map_err(Error::Random)?;
        let to = sibling(
            &self.path,
            &format!(".torn-{}-{rand}", file_stamp(SystemTime::now())),
        );
        let save = || -> io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&to)?;
            f.write_all(&torn)?;
            f.sync_all()
        };
        save().map_err(self.io("cannot save the torn tail aside"))?;
        self.file
            .set_len(start)
            .and_then(|()| self.file.sync_data())
            .map_err(self.io("cannot truncate the torn tail"))?;
        Ok(to)
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
        let head = match read_head(&head_file) {
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

    /// Replaces `FILE.head` with `{"v":1,"seq":N,"hash":"…"}`: written to a temporary file,
    /// fsynced, renamed over, and the directory fsynced.
    fn write_head(&self, seq: u64, hash: &str) -> Result<(), Error> {
        let head = head_path(&self.path);
        let tmp = sibling(&self.path, ".head.tmp");
        let text = format!("{{\"v\":{FORMAT_VERSION},\"seq\":{seq},\"hash\":\"{hash}\"}}\n");
        let write = || -> io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_data()?;
            std::fs::rename(&tmp, &head)?;
            if let Some(dir) = head.parent().filter(|d| !d.as_os_str().is_empty()) {
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(self.io("cannot update the head file"))
    }
}

/// An exclusive or shared `flock` on a file, released on drop.
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    pub(crate) fn exclusive(file: &'a File) -> io::Result<Flock<'a>> {
        Flock::take(file, libc::LOCK_EX)
    }

    pub(crate) fn shared(file: &'a File) -> io::Result<Flock<'a>> {
        Flock::take(file, libc::LOCK_SH)
    }

    fn take(file: &'a File, op: libc::c_int) -> io::Result<Flock<'a>> {
        loop {
            // SAFETY: flock on a file descriptor we own for the lifetime of the guard.
            if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
                return Ok(Flock(file));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: as above; unlocking cannot invalidate anything.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}
