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
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::{AtFlags, Mode, OFlags};
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
    /// Where the head is kept for this file.
    head_at: HeadAt,
    /// `FILE.lock`, opened read-only: only ever locked, never written. Reopened when the
    /// name no longer is this file.
    lock: std::sync::Arc<File>,
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

/// The log's file name: one that is not `..` or empty.
fn log_name(path: &Path) -> Result<OsString, Error> {
    match path.file_name() {
        Some(n) => Ok(n.to_os_string()),
        None => Err(Error::Io {
            path: path.to_path_buf(),
            what: "not a file name",
            source: io::Error::from(io::ErrorKind::InvalidInput),
        }),
    }
}

/// A link-safe walk's refusal (it names the link or the non-directory) as the log's error.
fn safe_error(path: &Path, what: &'static str, e: cordon_fs::safe::SafeError) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        what,
        source: io::Error::new(e.kind(), e.to_string()),
    }
}

/// A descriptor of `dir` for the writer's `*at` calls.
fn dir_file(dir: &cordon_fs::safe::Dir) -> io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(dir.as_fd().try_clone_to_owned()?))
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
pub(crate) fn read_head_at(dir: &File, name: &OsStr) -> Option<io::Result<Head>> {
    let f = match open_at(dir, name, OFlags::RDONLY | OFlags::NONBLOCK, 0) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(e)),
    };
    Some(read_head_file(f))
}

/// The content of an open head file: a regular file of a few dozen bytes.
pub(crate) fn read_head_file(f: File) -> io::Result<Head> {
    const MAX: u64 = 4096;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    f.take(MAX + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {MAX} bytes"),
        ));
    }
    parse_head(&text)
}

impl AuditLog {
    /// Opens (creating, mode 0600, with its missing parent directories, mode 0700) the log at
    /// `path`, for a new session with a random id. Refuses a log, or a log directory, that is
    /// a symlink, and a log that is not a regular file with exactly one name.
    pub fn open(path: impl AsRef<Path>) -> Result<AuditLog, Error> {
        let path = path.as_ref().to_path_buf();
        let name = log_name(&path)?;
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // An existing directory: a link at its last component refused.
            Some(dir)
                if std::fs::symlink_metadata(dir)
                    .is_ok_and(|m| m.is_dir() || m.file_type().is_symlink()) =>
            {
                open_dir(dir).map_err(|source| Error::Io {
                    path: dir.to_path_buf(),
                    what: "cannot open the audit log's directory",
                    source,
                })?
            }
            // Missing directories are created (0700: the records hold every command line and
            // its arguments) from the nearest one that exists, each opened without following
            // a link: one planted meanwhile is refused, named, not followed.
            Some(dir) => {
                let mut anchor = dir;
                while let Some(up) = anchor.parent() {
                    anchor = up;
                    if anchor.as_os_str().is_empty() || std::fs::symlink_metadata(anchor).is_ok() {
                        break;
                    }
                }
                let anchor = if anchor.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    anchor
                };
                let rest = dir.strip_prefix(anchor).unwrap_or(dir);
                let made = cordon_fs::safe::Dir::anchor(anchor)
                    .and_then(|a| a.create_dirs(rest, 0o700))
                    .map_err(|e| safe_error(dir, "cannot create its directory", e))?;
                dir_file(&made).map_err(|source| Error::Io {
                    path: dir.to_path_buf(),
                    what: "cannot open the audit log's directory",
                    source,
                })?
            }
            None => open_dir(Path::new(".")).map_err(|source| Error::Io {
                path: PathBuf::from("."),
                what: "cannot open the audit log's directory",
                source,
            })?,
        };
        AuditLog::open_in(path, dir, name)
    }

    /// Opens (creating it and its missing directories, as [`AuditLog::open`] does) the log at
    /// `rel` beneath `anchor`, never following a link at any component below `anchor`: for a
    /// log inside a directory a sandboxed command can write (a writable root, `anchor`), where
    /// no component below it can be trusted. A link anywhere on the way is refused with an
    /// error that names it.
    pub fn open_beneath(anchor: &Path, rel: &Path) -> Result<AuditLog, Error> {
        let path = anchor.join(rel);
        let name = log_name(&path)?;
        let a = cordon_fs::safe::Dir::anchor(anchor)
            .map_err(|e| safe_error(anchor, "cannot open the audit log's directory", e))?;
        let dir = match rel.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => a
                .create_dirs(d, 0o700)
                .map_err(|e| safe_error(&path, "cannot create its directory", e))?,
            None => a,
        };
        let dir = dir_file(&dir).map_err(|source| Error::Io {
            path: path.clone(),
            what: "cannot open the audit log's directory",
            source,
        })?;
        AuditLog::open_in(path, dir, name)
    }

    /// The log `name` in the open directory `dir` (`path` for messages).
    fn open_in(path: PathBuf, dir: File, name: OsString) -> Result<AuditLog, Error> {
        let io = |what: &'static str| {
            let path = path.clone();
            move |source| Error::Io { path, what, source }
        };
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
        let lock = open_lock(&dir, &with_suffix(&name, ".lock"))
            .map_err(io("cannot open its lock file"))?;
        let session = new_id().map_err(Error::Random)?;
        Ok(AuditLog {
            path,
            dir,
            name,
            head_at: probe_head(&file),
            file,
            lock: std::sync::Arc::new(lock),
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

    /// Appends `record` and makes it durable before returning: under the exclusive lock,
    /// checks that the log's name is still this writer's file (reopening or recreating it,
    /// noted, when it was replaced or deleted), checks the last record against the head and
    /// repairs what a crash, kill or full disk can leave (a torn tail, a head behind or one
    /// ahead, no head on a new log — each said in the record's `repair`), writes the whole
    /// line with one `write` and the head into the log's own extended attribute, and makes
    /// both durable with **one** `fsync`. On any error the file and head are put back as they
    /// were (the line truncated away): a record that was not made durable is not in the log.
    ///
    /// The caller's `v`, `time`, `seq` and `prev` are replaced; an empty `session` or
    /// `request` is filled in.
    pub fn append(&mut self, record: &Record) -> Result<Appended, Error> {
        self.locked(|log| {
            let w = log.write_unsynced(record)?;
            log.finish(&w)?;
            Ok(w.appended)
        })
    }

    /// Runs `f` under the exclusive lock on `FILE.lock` — the lock file that is at that name
    /// now: one deleted or replaced since this writer opened it would be a lock nobody else
    /// takes.
    pub(crate) fn locked<T>(
        &mut self,
        f: impl FnOnce(&mut AuditLog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let lock_name = with_suffix(&self.name, ".lock");
        for _ in 0..8 {
            let file = self.lock.clone();
            let guard =
                cordon_fs::lock::exclusive(&*file, self.lock_deadline).map_err(|e| Error::Io {
                    path: lock_path(&self.path),
                    what: "cannot lock the audit log",
                    source: e.into(),
                })?;
            if same_file(&self.dir, &lock_name, &file) {
                let out = f(self);
                drop(guard);
                return out;
            }
            drop(guard);
            self.lock =
                std::sync::Arc::new(open_lock(&self.dir, &lock_name).map_err(|source| {
                    Error::Io {
                        path: lock_path(&self.path),
                        what: "cannot reopen its lock file (it was deleted or replaced)",
                        source,
                    }
                })?);
        }
        Err(Error::Io {
            path: lock_path(&self.path),
            what: "cannot lock the audit log",
            source: io::Error::other(
                "its lock file kept being replaced while cordon took it; something is \
                 deleting files beside the log",
            ),
        })
    }

    /// Under the lock: the identity check, the repairs, the line and the head — everything
    /// but the sync. The record is in the page cache, not yet durable: [`AuditLog::finish`]
    /// (or a group commit's one sync) makes it so, or [`AuditLog::undo`] takes it back.
    pub(crate) fn write_unsynced(&mut self, record: &Record) -> Result<Written, Error> {
        let mut found = Vec::new();
        if let Some(note) = self.check_identity()? {
            found.push(note);
        }
        let len = self.file.metadata().map_err(self.io("cannot stat"))?.len();
        // Check everything before changing anything.
        let complete = self.complete_len(len)?;
        let (head, legacy, garbled) = self.read_head()?;
        found.extend(garbled);
        let (seq, prev, linked) = self.link(complete, head.as_ref())?;
        found.extend(linked);
        if legacy && self.head_at == HeadAt::Xattr {
            found.push(format!(
                "the head moved from {} into the log's own extended attribute {HEAD_XATTR}, so \
                 one sync makes a record and its head durable",
                head_path(&self.path).display()
            ));
        }
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
        let repair = (!found.is_empty()).then(|| found.join("; "));
        if rec.repair.is_none() {
            rec.repair = repair.clone();
        } else if let Some(r) = &repair {
            rec.repair = Some(format!("{}; {r}", rec.repair.take().unwrap_or_default()));
        }
        let mut line = serde_json::to_string(&rec).map_err(|e| Error::Io {
            path: self.path.clone(),
            what: "cannot encode the record",
            source: io::Error::other(e),
        })?;
        let hash = sha256_hex(line.as_bytes());
        line.push('\n');
        let w = Written {
            complete,
            old_head: head,
            legacy,
            repaired: repair.is_some(),
            appended: Appended {
                seq,
                hash: hash.clone(),
                torn_moved_to: torn,
            },
        };
        self.write_line(complete, line.as_bytes())?;
        if self.head_at == HeadAt::Xattr {
            if let Err(e) = set_head_xattr(&self.file, seq, &hash) {
                self.undo(&w);
                return Err(self.io("cannot update the log's head")(e));
            }
        }
        Ok(w)
    }

    /// Makes a written record durable (one `fsync`: the line, the file's size and the head
    /// attribute), or takes it back and says why. For a log whose file system has no
    /// extended attributes, the head file is replaced after the sync, as before.
    pub(crate) fn finish(&self, w: &Written) -> Result<(), Error> {
        if let Err(e) = self.file.sync_all() {
            self.undo(w);
            return Err(self.io("cannot make the record durable (fsync)")(e));
        }
        if self.head_at == HeadAt::File {
            if let Err(e) = self.write_head(w.appended.seq, &w.appended.hash) {
                self.undo(w);
                return Err(e);
            }
        }
        if w.legacy || w.repaired {
            // Temporary files of killed head updates; the old head file once the head is in
            // the attribute.
            self.sweep_head_files(w.legacy && self.head_at == HeadAt::Xattr);
        }
        Ok(())
    }

    /// Takes back a record that was not made durable: the file cut back where it was, the
    /// head put back, both synced (best effort: this runs after an error already reported).
    pub(crate) fn undo(&self, w: &Written) {
        let _ = self.file.set_len(w.complete);
        if self.head_at == HeadAt::Xattr {
            let _ = match &w.old_head {
                Some(h) if !w.legacy => set_head_xattr(&self.file, h.seq, &h.hash),
                _ => rustix::fs::fremovexattr(&self.file, HEAD_XATTR).map_err(io::Error::from),
            };
        }
        let _ = self.file.sync_all();
    }

    /// Whether the log's name is still this writer's file. A log deleted while this writer
    /// had it open is created anew; one replaced by another file is reopened. Either is said
    /// in the next record, which the new file then holds.
    fn check_identity(&mut self) -> Result<Option<String>, Error> {
        if same_file(&self.dir, &self.name, &self.file) {
            return Ok(None);
        }
        let exists =
            rustix::fs::statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW);
        let (flags, note) = match exists {
            Ok(_) => (
                OFlags::RDWR | OFlags::APPEND | OFlags::NONBLOCK,
                format!(
                    "the log {} had been replaced by another file while a writer (session {}) \
                     had it open; this record continues the file now at that name",
                    self.path.display(),
                    self.session
                ),
            ),
            Err(Errno::NOENT) => (
                OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::EXCL | OFlags::NONBLOCK,
                format!(
                    "the log {} had been deleted while a writer (session {}) had it open: the \
                     records in the deleted file are gone with it, and a new log starts here",
                    self.path.display(),
                    self.session
                ),
            ),
            Err(e) => return Err(self.io("cannot stat")(e.into())),
        };
        let file = open_at(&self.dir, &self.name, flags, 0o600)
            .map_err(self.io("cannot reopen (it was deleted or replaced)"))?;
        let meta = file.metadata().map_err(self.io("cannot stat"))?;
        if !meta.is_file() || meta.nlink() != 1 {
            return Err(self.io("refusing what replaced the log")(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file with one name",
            )));
        }
        self.head_at = probe_head(&file);
        self.file = file;
        Ok(Some(note))
    }

    /// The head: the log's attribute, else (a log from before, or a file system without
    /// attributes) the head file beside it. Also whether it came from the head file, and a
    /// note when the attribute was unreadable: on the Landlock backend a sandboxed command
    /// can change the attributes of a file it owns and can name (Landlock has no right for
    /// `setxattr`), so a garbled attribute is treated as no head — the chain decides — rather
    /// than let it stop every later run.
    fn read_head(&self) -> Result<(Option<Head>, bool, Option<String>), Error> {
        let mut garbled = None;
        if self.head_at == HeadAt::Xattr {
            match get_head_xattr(&self.file) {
                Ok(Some(h)) => return Ok((Some(h), false, None)),
                Ok(None) => {}
                Err(e) => {
                    garbled = Some(format!(
                        "its head attribute {HEAD_XATTR} was unreadable ({e}): it was changed \
                         by something other than cordon's writer"
                    ))
                }
            }
        }
        match read_head_at(&self.dir, &with_suffix(&self.name, ".head")) {
            None => Ok((None, false, garbled)),
            Some(Ok(h)) => Ok((Some(h), true, garbled)),
            Some(Err(why)) => Err(Error::Inconsistent {
                path: self.path.clone(),
                why: format!(
                    "its head file {} is unreadable: {why}",
                    head_path(&self.path).display()
                ),
            }),
        }
    }

    /// Removes `FILE.head.tmp-*` (temporary files of killed head updates) and, once the head
    /// is in the attribute, the old head file. Under the lock: no writer has one in use.
    fn sweep_head_files(&self, legacy: bool) {
        let prefix = with_suffix(&self.name, ".head.tmp-");
        let Ok(dir) = self.dir.try_clone() else {
            return;
        };
        let Ok(entries) = rustix::fs::Dir::read_from(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = OsStr::from_bytes(e.file_name().to_bytes());
            if name.as_bytes().starts_with(prefix.as_bytes()) {
                unlink_at(&self.dir, name);
            }
        }
        if legacy {
            unlink_at(&self.dir, &with_suffix(&self.name, ".head"));
        }
    }

    fn io(&self, what: &'static str) -> impl FnOnce(io::Error) -> Error {
        let path = self.path.clone();
        move |source| Error::Io { path, what, source }
    }

    /// One `write` of the whole line at the end (O_APPEND); the sync comes after the head.
    /// A short or failed write (a full disk) is truncated away so that the file ends where it
    /// did, and the refusal says why (`No space left on device`).
    fn write_line(&self, len: u64, line: &[u8]) -> Result<(), Error> {
        // One `write` for the whole line; a short one (the disk filled up) is followed by a
        // second for the rest, whose error says why (ENOSPC, EFBIG, EDQUOT) — the refusal
        // must name the cause, not "short write". Either way the line is cut back on error.
        let mut done = 0;
        let result = loop {
            match (&self.file).write(&line[done..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => {
                    done += n;
                    if done == line.len() {
                        break Ok(());
                    }
                }
            }
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
    /// lines): links to the last line, which must be a valid record that agrees with the head.
    /// What a crash explains is repaired and returned as notes for the new record: a head
    /// behind (records written, the head not updated: kills between the two), one ahead (a
    /// record lost to a power failure before its sync returned: never handed out), missing
    /// on a new log. What no crash explains is refused.
    fn link(&self, len: u64, head: Option<&Head>) -> Result<(u64, String, Vec<String>), Error> {
        let refuse = |why: String| Error::Inconsistent {
            path: self.path.clone(),
            why,
        };
        let lost = |h: &Head| {
            format!(
                "the head named seq {} (hash {}), which is not in the log: that record was not \
                 durable when the machine stopped (its sync never returned, so its decision was \
                 never handed out)",
                h.seq, h.hash
            )
        };
        if len == 0 {
            return match head {
                None => Ok((0, ZERO_HASH.to_string(), Vec::new())),
                Some(h) if h.seq == 0 => Ok((0, ZERO_HASH.to_string(), vec![lost(h)])),
                Some(h) => Ok((
                    0,
                    ZERO_HASH.to_string(),
                    vec![format!(
                        "HEAD MISMATCH: the log was empty, but its head recorded seq {} (hash \
                         {}): the head was changed by something other than cordon's writer, or \
                         the log's records were deleted",
                        h.seq, h.hash
                    )],
                )),
            };
        }
        let end = len - 1; // the newline
        let start = self.line_start(end)?;
        let line = self.read_at(start, (end - start) as usize)?;
        let corrupt = |why: String| {
            refuse(format!(
                "its last line is not a valid record ({why}); run `cordon audit verify`, then \
                 move the log aside to start a new one"
            ))
        };
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
            Some(h) if h.seq == seq && h.hash != hash => found.push(lost(h)),
            Some(h) if h.seq < last.seq && self.chains_back(len, Some(h))? => {
                // Behind: the records after the one it names chain to it.
                found.push(format!(
                    "the head was {} record(s) behind: seq {}..={} had been written without \
                     updating it (cordon killed between writing a record and its head)",
                    last.seq - h.seq,
                    h.seq + 1,
                    last.seq
                ))
            }
            None => {
                if self.chains_back(len, None)? {
                    found.push(format!(
                        "the log had no head: its {} record(s) were written without one (a new \
                         log whose first appends were killed, a copy, or a file system that \
                         lost its attributes); the chain from seq 0 is whole",
                        seq
                    ))
                } else {
                    return Err(refuse(
                        "it has no head and its chain does not lead back to seq 0: records \
                         were changed or deleted (run `cordon audit verify`, then move the log \
                         aside to start a new one)"
                            .to_string(),
                    ));
                }
            }
            // No crash explains it. The records themselves decide: when their chain is whole
            // from seq 0, the head was changed (on Landlock a sandboxed command can change a
            // file's attributes) or records after the last were deleted — said loudly in the
            // new record, which `verify` shows, but no reason to stop every later run. A
            // broken chain is evidence that appending would bury: refused.
            Some(h) if self.chains_back(len, None)? => found.push(format!(
                "HEAD MISMATCH: the head recorded seq {} (hash {}), but the log ends at seq {} \
                 and its chain from seq 0 is whole: the head was changed by something other \
                 than cordon's writer, or records after seq {} were deleted",
                h.seq, h.hash, last.seq, last.seq
            )),
            Some(h) => {
                return Err(refuse(format!(
                    "it does not match its head (which records seq {}; the last record is seq \
                     {}) and its chain is broken: records were deleted or changed (run `cordon \
                     audit verify`, then move the log aside to start a new one)",
                    h.seq, last.seq
                )))
            }
        }
        Ok((seq, hash, found))
    }

    /// Whether the complete lines in `..len` chain back from the last one, each `prev` the
    /// hash of the line before and `seq` one less, to the record `head` names (to the start,
    /// seq 0, when `None`). Reads the whole file: only a repair gets here.
    fn chains_back(&self, len: u64, head: Option<&Head>) -> Result<bool, Error> {
        let bytes = self.read_at(0, len as usize)?;
        let lines: Vec<&[u8]> = bytes[..bytes.len() - 1].split(|&b| b == b'\n').collect();
        let mut want: Option<(u64, String)> = None;
        for line in lines.iter().rev() {
            let hash = sha256_hex(line);
            let Ok(r) = serde_json::from_slice::<Record>(line) else {
                return Ok(false);
            };
            if let Some((seq, h)) = &want {
                if *h != hash || *seq != r.seq {
                    return Ok(false);
                }
            }
            if let Some(h) = head {
                if h.hash == hash && h.seq == r.seq {
                    return Ok(true);
                }
            }
            if r.prev == ZERO_HASH {
                return Ok(head.is_none() && r.seq == 0);
            }
            let Some(prev_seq) = r.seq.checked_sub(1) else {
                return Ok(false);
            };
            want = Some((prev_seq, r.prev));
        }
        Ok(false)
    }

    /// Where the line containing byte `end - 1` starts (the byte after the previous newline
    /// before `end`, or 0).
    fn line_start(&self, end: u64) -> Result<u64, Error> {
        // A record is usually under 1 KiB: read 4 KiB back first, then larger steps.
        let mut chunk: u64 = 4096;
        let mut hi = end;
        while hi > 0 {
            let lo = hi.saturating_sub(chunk);
            chunk = (chunk * 4).min(1 << 20);
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

/// What [`AuditLog::write_unsynced`] wrote, to make durable or take back.
#[derive(Debug)]
pub(crate) struct Written {
    /// The file's length before (complete lines only).
    complete: u64,
    /// The head before, to put back.
    old_head: Option<Head>,
    /// Whether the head came from the old head file.
    legacy: bool,
    /// Whether the record repairs something.
    repaired: bool,
    pub(crate) appended: Appended,
}

/// Where a log keeps its head (the last record's `seq` and hash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadAt {
    /// In the log's own extended attribute [`HEAD_XATTR`]: the one `fsync` that makes a
    /// record durable makes its head durable too.
    Xattr,
    /// In `FILE.head`, replaced after each record (a file system without user extended
    /// attributes): two syncs more per record.
    File,
}

/// The extended attribute that holds a log's head: 41 bytes, `2`, the last record's `seq`
/// (64-bit little-endian), its SHA-256 (32 raw bytes). Small enough to stay inside an
/// ext4 inode (no block to allocate, so a full disk cannot refuse it).
pub const HEAD_XATTR: &str = "user.cordon.head";

/// Whether `file`'s file system keeps user extended attributes.
fn probe_head(file: &File) -> HeadAt {
    match rustix::fs::fgetxattr(file, HEAD_XATTR, &mut [0u8; 64][..]) {
        Err(Errno::NOTSUP) => HeadAt::File,
        _ => HeadAt::Xattr,
    }
}

/// The head in `file`'s attribute: `None` when it has none (or the file system keeps none).
pub(crate) fn get_head_xattr(file: &File) -> io::Result<Option<Head>> {
    let mut buf = [0u8; 64];
    match rustix::fs::fgetxattr(file, HEAD_XATTR, &mut buf[..]) {
        Ok(41) if buf[0] == b'2' => {
            let mut seq = [0u8; 8];
            seq.copy_from_slice(&buf[1..9]);
            Ok(Some(Head {
                seq: u64::from_le_bytes(seq),
                hash: super::util::hex(&buf[9..41]),
            }))
        }
        Ok(n) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{n} bytes that are not a cordon head"),
        )),
        Err(Errno::NODATA | Errno::NOTSUP) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn set_head_xattr(file: &File, seq: u64, hash: &str) -> io::Result<()> {
    let mut v = Vec::with_capacity(41);
    v.push(b'2');
    v.extend_from_slice(&seq.to_le_bytes());
    for i in 0..32 {
        let byte = hash
            .get(2 * i..2 * i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .ok_or_else(|| io::Error::other("not a SHA-256"))?;
        v.push(byte);
    }
    Ok(rustix::fs::fsetxattr(
        file,
        HEAD_XATTR,
        &v,
        rustix::fs::XattrFlags::empty(),
    )?)
}

/// Whether `name` in `dir` is (still) the file `file` is open on.
fn same_file(dir: &File, name: &OsStr, file: &File) -> bool {
    match (
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW),
        rustix::fs::fstat(file),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// `FILE.lock`, created when missing, read-only (only ever locked), a regular file.
fn open_lock(dir: &File, name: &OsStr) -> io::Result<File> {
    let lock = open_at(
        dir,
        name,
        OFlags::RDONLY | OFlags::CREATE | OFlags::NONBLOCK,
        0o600,
    )?;
    if !lock.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "its lock file is not a regular file",
        ));
    }
    Ok(lock)
}

/// A record [`SharedLog::write`] wrote that is not yet known durable: hand its decision out
/// only after [`SharedLog::durable`] returned `Ok` for it.
#[derive(Debug)]
#[must_use = "a record is not durable until SharedLog::durable returned Ok for it"]
pub struct Unsynced {
    appended: Appended,
    /// The group-commit ticket and the descriptor to sync through; `None` when the record was
    /// already synced under the lock (a repair, a head file).
    pending: Option<(u64, File)>,
}

/// An audit log shared by the threads of a long-lived front end (`cordon mcp`, the network
/// proxy's connection records), with **group commit**: each record is written under the lock
/// as [`AuditLog::append`] writes it, but the `fsync` that makes it durable is shared — one
/// thread syncs everything written so far while the others wait for it, so N concurrent
/// decisions cost about one sync, not N. Nobody's `append` returns before a sync that covers
/// its record has returned: nothing is handed out before it is durable.
///
/// A record that repairs something, and a log on a file system without attributes, are
/// synced alone under the lock, as [`AuditLog::append`] does.
#[derive(Debug)]
pub struct SharedLog {
    log: std::sync::Mutex<AuditLog>,
    /// Records written (tickets handed out), counted under `log`'s mutex.
    written: std::sync::atomic::AtomicU64,
    sync: std::sync::Mutex<Synced>,
    synced_cv: std::sync::Condvar,
    /// Group syncs made (see [`SharedLog::syncs`]).
    syncs: std::sync::atomic::AtomicU64,
}

/// How many failed group syncs [`Synced::failed`] keeps apart.
const MAX_FAILED_RANGES: usize = 64;

#[derive(Debug, Default)]
struct Synced {
    /// Every ticket up to this one is durable (or failed, below).
    synced: u64,
    /// A sync is under way.
    syncing: bool,
    /// Tickets in `(from, to]` whose sync failed, and why: every failure, not only the last,
    /// because a record's wait may come long after its write (the proxy's decision waits for
    /// the connect and its open record) and after later syncs failed or succeeded. Failures
    /// are rare; past [`MAX_FAILED_RANGES`] the oldest are merged into one wider range (a
    /// record synced between them is then refused too: fail closed).
    failed: Vec<(u64, u64, String)>,
    /// Said in the next record: records whose sync failed (their decisions were refused).
    note: Option<String>,
}

impl SharedLog {
    pub fn new(log: AuditLog) -> SharedLog {
        SharedLog {
            log: std::sync::Mutex::new(log),
            written: std::sync::atomic::AtomicU64::new(0),
            sync: std::sync::Mutex::new(Synced::default()),
            synced_cv: std::sync::Condvar::new(),
            syncs: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many group syncs this log has made (records synced alone under the lock — a
    /// repair, a head file — are not counted): with concurrent writers, fewer than records.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The log's path.
    pub fn path(&self) -> PathBuf {
        self.lock_log().path().to_path_buf()
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, AuditLog> {
        // A panic while writing leaves the file as the lock-protected code left it, which the
        // next write checks and repairs: the data is not poisoned.
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_sync(&self) -> std::sync::MutexGuard<'_, Synced> {
        self.sync.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `record` and returns once a sync that covers it has returned.
    pub fn append(&self, record: &Record) -> Result<Appended, Error> {
        let written = self.write(record)?;
        self.durable(written)
    }

    /// The first half of [`SharedLog::append`]: writes `record` under the lock, not yet
    /// synced. Its decision may be handed out only after [`SharedLog::durable`] returned `Ok`
    /// for it. A caller that holds a lock of its own while deciding (the engine's) writes
    /// under it and waits for the sync after letting it go, so that the decisions of other
    /// threads are written meanwhile and share the sync.
    pub fn write(&self, record: &Record) -> Result<Unsynced, Error> {
        use std::sync::atomic::Ordering;
        let mut rec = record.clone();
        if let Some(n) = self.lock_sync().note.take() {
            rec.repair = Some(n);
        }
        let mut log = self.lock_log();
        let (w, file) = log.locked(|l| {
            let w = l.write_unsynced(&rec)?;
            if l.head_at == HeadAt::File || w.repaired {
                l.finish(&w)?;
                return Ok((w, None));
            }
            // The descriptor this record went through, for the sync outside the lock.
            let file = l.file.try_clone().map_err(|e| {
                l.undo(&w);
                l.io("cannot duplicate the log's descriptor")(e)
            })?;
            Ok((w, Some(file)))
        })?;
        let pending = file.map(|file| (self.written.fetch_add(1, Ordering::SeqCst) + 1, file));
        Ok(Unsynced {
            appended: w.appended,
            pending,
        })
    }

    /// The second half of [`SharedLog::append`]: returns once a sync that covers `written`
    /// has returned — one thread syncs everything written so far while the others wait.
    pub fn durable(&self, written: Unsynced) -> Result<Appended, Error> {
        use std::sync::atomic::Ordering;
        let Unsynced { appended, pending } = written;
        let Some((ticket, file)) = pending else {
            return Ok(appended);
        };
        let mut st = self.lock_sync();
        loop {
            if let Some(why) = st.failed_for(ticket) {
                let why = why.to_string();
                drop(st);
                return Err(Error::Io {
                    path: self.path_hint(),
                    what: "cannot make the record durable (fsync)",
                    source: io::Error::other(why),
                });
            }
            if st.synced >= ticket {
                return Ok(appended);
            }
            if st.syncing {
                st = self.synced_cv.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            st.syncing = true;
            let target = self.written.load(Ordering::SeqCst);
            drop(st);
            // Covers every record written to the file before it, whichever descriptor.
            let result = file.sync_all();
            self.syncs.fetch_add(1, Ordering::Relaxed);
            st = self.lock_sync();
            st.syncing = false;
            if let Err(e) = result {
                st.note = Some(format!(
                    "the sync of the {} record(s) before this one failed ({e}): their decisions \
                     were refused, whatever they say",
                    target - st.synced
                ));
                let from = st.synced;
                st.fail(from, target, e.to_string());
            }
            st.synced = target;
            self.synced_cv.notify_all();
        }
    }

    fn path_hint(&self) -> PathBuf {
        self.lock_log().path().to_path_buf()
    }
}

impl Synced {
    /// Why `ticket`'s sync failed, if it did.
    fn failed_for(&self, ticket: u64) -> Option<&str> {
        self.failed
            .iter()
            .find(|(from, to, _)| ticket > *from && ticket <= *to)
            .map(|(_, _, why)| why.as_str())
    }

    /// Notes that the sync of tickets `(from, to]` failed.
    fn fail(&mut self, from: u64, to: u64, why: String) {
        if self.failed.len() >= MAX_FAILED_RANGES {
            let (a, _, first) = self.failed.remove(0);
            let (_, b, _) = self.failed.remove(0);
            self.failed.insert(0, (a, b, first));
        }
        self.failed.push((from, to, why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose wait comes after later syncs (one failed, one not) is still refused
    /// when its own sync failed; one that was synced is not.
    #[test]
    fn a_failed_sync_is_remembered_past_later_syncs() {
        let mut st = Synced::default();
        st.fail(0, 3, "EIO".into());
        st.synced = 3;
        st.synced = 5; // a later sync that worked: tickets 4 and 5
        st.fail(5, 7, "ENOSPC".into());
        st.synced = 7;
        assert_eq!(st.failed_for(2), Some("EIO"));
        assert_eq!(st.failed_for(4), None);
        assert_eq!(st.failed_for(6), Some("ENOSPC"));
        assert_eq!(st.failed_for(8), None);
        // Past the cap, the oldest ranges merge: still refused, never forgotten.
        for i in 0..(2 * MAX_FAILED_RANGES as u64) {
            st.fail(10 + 2 * i, 11 + 2 * i, "EIO".into());
        }
        assert!(st.failed.len() <= MAX_FAILED_RANGES);
        assert_eq!(st.failed_for(2), Some("EIO"));
        assert!(st.failed_for(11).is_some());
    }
}
