//! The one link-safe way cordon creates, replaces, moves or removes a file outside the sandbox.
//!
//! A sandboxed command can write its writable roots, and a process it left behind can keep
//! changing them after the run. Whatever cordon (perhaps as root) or the operator's `cordon
//! install` later writes there must not be redirected by a link the command planted:
//! `.claude/settings.json.cordon-backup -> /victim`, `.claude -> /outside`, a sessions
//! directory re-pointed at `~/.ssh`. So every such write starts from a directory the caller
//! trusts (an *anchor*: the current directory, HOME, the store's base — opened by its path, as
//! the operator named it) and walks the rest without following a link at any component:
//!
//! ```text
//!   Dir::anchor(HOME) ──openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)──▶ .claude/settings.json
//!                      (kernels before 5.6: one openat(O_NOFOLLOW) per component)
//! ```
//!
//! A link anywhere below the anchor is refused with an error that names it ([`SafeError::Link`]);
//! nothing is ever written, renamed or removed through one. Replacing a file is atomic (a
//! temporary file created exclusively beside it, synced, renamed over the name, the directory
//! synced), and a name that is a link is refused rather than silently replaced, so that the
//! operator learns that something planted it. What a writer killed before its rename leaves
//! beside the name is removed by the next write of that name.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};
use rustix::io::Errno;

/// Why a link-safe operation did not happen. Each names the path it is about.
#[derive(Debug, thiserror::Error)]
pub enum SafeError {
    /// A symbolic link where cordon walks: never followed.
    #[error("{0} is a symbolic link, and cordon never writes, moves or reads its own files through one (a sandboxed command could have planted it); check where it points, remove it, then try again")]
    Link(PathBuf),
    /// Something other than a directory where a directory must be.
    #[error("{0} is not a directory")]
    NotDir(PathBuf),
    /// Something other than a regular file where a file must be.
    #[error("{path} is not a regular file (a {kind}); cordon touches only regular files there")]
    NotFile { path: PathBuf, kind: &'static str },
    /// A path that is not a plain relative path below the anchor (absolute, `..`, empty).
    #[error("{0}: not a plain relative path below its directory")]
    BadPath(PathBuf),
    /// A file larger than the caller reads.
    #[error("{path} is larger than {max} bytes")]
    TooLarge { path: PathBuf, max: u64 },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SafeError {
    /// The underlying error kind (`NotFound` for a missing name, `AlreadyExists`, …).
    pub fn kind(&self) -> std::io::ErrorKind {
        match self {
            SafeError::Io { source, .. } => source.kind(),
            _ => std::io::ErrorKind::InvalidInput,
        }
    }

    /// Whether the name did not exist.
    pub fn is_not_found(&self) -> bool {
        self.kind() == std::io::ErrorKind::NotFound
    }
}

pub type Result<T> = std::result::Result<T, SafeError>;

/// An open directory and the path it was reached by (for messages only: every operation goes
/// through the descriptor).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

fn io_err(path: &Path, e: impl Into<std::io::Error>) -> SafeError {
    SafeError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// The components of a plain relative path (each a single name).
fn names(rel: &Path) -> Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return Err(SafeError::BadPath(rel.to_path_buf())),
        }
    }
    if out.is_empty() {
        return Err(SafeError::BadPath(rel.to_path_buf()));
    }
    Ok(out)
}

fn kind_of(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => "directory",
        FileType::Fifo => "FIFO",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Socket => "socket",
        FileType::Symlink => "symlink",
        FileType::RegularFile => "regular file",
        FileType::Unknown => "special file",
    }
}

thread_local! {
    /// Tests: take the `O_NOFOLLOW` walk, as on a kernel without openat2.
    static WALK_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How old a dead writer's temporary file must be before [`Dir::sweep_temps`] removes it.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(10);

/// How many directories deep [`Dir::remove_tree`] holds open at once.
const REMOVE_DEPTH: usize = 32;

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl Dir {
    /// A directory the caller trusts, opened by its path as given (links in it followed: the
    /// operator named it, or it is cordon's own choice like HOME or the current directory).
    pub fn anchor(path: &Path) -> Result<Dir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOTDIR => SafeError::NotDir(path.to_path_buf()),
            e => io_err(path, e),
        })?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// A directory the caller trusts the way to, but not the directory itself: a link at its
    /// last component is refused (a store's own directory, which cordon created).
    pub fn anchor_nofollow(path: &Path) -> Result<Dir> {
        let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty()).map_err(|e| match e {
            Errno::LOOP => SafeError::Link(path.to_path_buf()),
            Errno::NOTDIR => match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => SafeError::Link(path.to_path_buf()),
                _ => SafeError::NotDir(path.to_path_buf()),
            },
            e => io_err(path, e),
        })?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// An absolute path opened from `/` without following a link at any component: for a
    /// directory inside a writable root, where no component can be trusted (the roots
    /// themselves are canonical).
    pub fn open_absolute(path: &Path) -> Result<Dir> {
        if !path.is_absolute() {
            return Err(SafeError::BadPath(path.to_path_buf()));
        }
        let root = Dir::anchor(Path::new("/"))?;
        match path.strip_prefix("/") {
            Ok(rel) if rel.as_os_str().is_empty() => Ok(root),
            Ok(rel) => root.dir(rel),
            Err(_) => Err(SafeError::BadPath(path.to_path_buf())),
        }
    }

    /// The path this directory was reached by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its metadata (owner, mode) as the descriptor sees it.
    pub fn stat(&self) -> Result<Stat> {
        rustix::fs::fstat(&self.fd).map_err(|e| io_err(&self.path, e))
    }

    /// Opens `rel` beneath this directory with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`), never
    /// following a link at any component: `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)`,
    /// else (kernels before 5.6, or a seccomp filter that refuses openat2) one
    /// `openat(O_NOFOLLOW)` per component.
    fn open_beneath(&self, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd> {
        let parts = names(rel)?;
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        #[cfg(target_os = "linux")]
        if !WALK_ONLY.with(std::cell::Cell::get) {
            use rustix::fs::ResolveFlags;
            let how =
                ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            let rel: PathBuf = parts.iter().collect();
            match rustix::fs::openat2(&self.fd, &rel, flags, mode, how) {
                Ok(fd) => return Ok(fd),
                Err(Errno::NOSYS | Errno::PERM | Errno::INVAL) => {}
                Err(e) => return Err(self.diagnose(&parts, e)),
            }
        }
        // The walk: every directory on the way opened O_NOFOLLOW from the one before.
        let (last, dirs) = parts.split_last().expect("names() is never empty");
        let mut cur: Option<OwnedFd> = None;
        for (i, name) in dirs.iter().enumerate() {
            let at = cur.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
            match rustix::fs::openat(at, *name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => cur = Some(fd),
                Err(e) => return Err(self.diagnose(&parts[..=i], e)),
            }
        }
        let at = cur.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
        rustix::fs::openat(at, *last, flags, mode).map_err(|e| self.diagnose(&parts, e))
    }

    /// Turns a failed open of `parts` into an error naming the component at fault: the first
    /// link or non-directory on the way.
    fn diagnose(&self, parts: &[&OsStr], e: Errno) -> SafeError {
        let mut at = self.path.clone();
        let mut rel = PathBuf::new();
        for (i, name) in parts.iter().enumerate() {
            at.push(name);
            rel.push(name);
            match rustix::fs::statat(&self.fd, &rel, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                    return SafeError::Link(at)
                }
                Ok(st)
                    if i + 1 < parts.len()
                        && FileType::from_raw_mode(st.st_mode) != FileType::Directory =>
                {
                    return SafeError::NotDir(at)
                }
                Ok(_) => {}
                // statat itself follows no link on the way either: a link there fails it too.
                Err(_) => break,
            }
        }
        match e {
            Errno::LOOP | Errno::XDEV => SafeError::Link(at),
            e => io_err(&at, e),
        }
    }

    /// The directory `rel` below this one, never through a link.
    pub fn dir(&self, rel: &Path) -> Result<Dir> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Dir {
            fd,
            path: self.path.join(rel),
        })
    }

    /// The directory `rel` below this one, each missing component created with `mode` (never
    /// through a link; an existing component that is a link is refused).
    pub fn create_dirs(&self, rel: &Path, mode: u32) -> Result<Dir> {
        let parts = names(rel)?;
        let mut cur = Dir {
            fd: self.fd.try_clone().map_err(|e| io_err(&self.path, e))?,
            path: self.path.clone(),
        };
        for name in parts {
            match rustix::fs::mkdirat(&cur.fd, name, Mode::from_raw_mode(mode)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(io_err(&cur.path.join(name), e)),
            }
            cur = cur.dir(Path::new(name))?;
        }
        Ok(cur)
    }

    /// The parent directory of `rel` (opened without links) and its last name.
    fn parent_of<'a>(&self, rel: &'a Path) -> Result<(Dir, &'a OsStr)> {
        let parts = names(rel)?;
        let name = *parts.last().expect("never empty");
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => self.dir(p)?,
            None => Dir {
                fd: self.fd.try_clone().map_err(|e| io_err(&self.path, e))?,
                path: self.path.clone(),
            },
        };
        Ok((dir, name))
    }

    /// What `rel` is, without following a link at it or on the way; `None` when it is missing.
    pub fn stat_at(&self, rel: &Path) -> Result<Option<Stat>> {
        let (dir, name) = self.parent_of(rel)?;
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io_err(&self.path.join(rel), e)),
        }
    }

    /// The regular file `rel`, opened read-only (never through a link, never blocking on a
    /// FIFO); `None` when it is missing.
    pub fn open_file(&self, rel: &Path) -> Result<Option<std::fs::File>> {
        let fd = match self.open_beneath(
            rel,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| io_err(&self.path.join(rel), e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(SafeError::NotFile {
                path: self.path.join(rel),
                kind: kind_of(&st),
            });
        }
        Ok(Some(std::fs::File::from(fd)))
    }

    /// The content of the regular file `rel` (at most `max` bytes); `None` when it is missing.
    pub fn read(&self, rel: &Path, max: u64) -> Result<Option<Vec<u8>>> {
        let Some(file) = self.open_file(rel)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_err(&self.path.join(rel), e))?;
        if bytes.len() as u64 > max {
            return Err(SafeError::TooLarge {
                path: self.path.join(rel),
                max,
            });
        }
        Ok(Some(bytes))
    }

    /// Replaces (or creates) the regular file `rel` with `bytes`, atomically: a temporary file
    /// (`mode`, created exclusively beside it), synced, renamed over the name, the directory
    /// synced. A name that is a link (or anything but a regular file) is refused.
    pub fn write(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<()> {
        self.replace(rel, bytes, mode, true)
    }

    /// [`Dir::write`] without its two syncs: for a file whose loss in a crash costs only time
    /// (a cache), whose reader tells a torn one apart.
    pub fn write_unsynced(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<()> {
        self.replace(rel, bytes, mode, false)
    }

    fn replace(&self, rel: &Path, bytes: &[u8], mode: u32, sync: bool) -> Result<()> {
        let (dir, name) = self.parent_of(rel)?;
        let shown = self.path.join(rel);
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(SafeError::Link(shown))
            }
            Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile => {
                return Err(SafeError::NotFile {
                    path: shown,
                    kind: kind_of(&st),
                })
            }
            Ok(_) | Err(Errno::NOENT) => {}
            Err(e) => return Err(io_err(&shown, e)),
        }
        let tmp = dir.create_temp(name, bytes, mode, sync)?;
        // renameat replaces the name itself, whatever it has become meanwhile, and never
        // follows a link there.
        if let Err(e) = rustix::fs::renameat(&dir.fd, &tmp, &dir.fd, name) {
            let _ = rustix::fs::unlinkat(&dir.fd, &tmp, AtFlags::empty());
            return Err(io_err(&shown, e));
        }
        dir.sweep_temps(name);
        if !sync {
            return Ok(());
        }
        rustix::fs::fsync(&dir.fd).map_err(|e| io_err(&dir.path, e))
    }

    /// The regular file `rel` opened to append (created with `mode` when missing), never
    /// through a link at any component: for a log that grows by appends under a lock (the
    /// audit log's writer).
    pub fn open_append(&self, rel: &Path, mode: u32) -> Result<std::fs::File> {
        let fd = self.open_beneath(
            rel,
            OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::from_raw_mode(mode),
        )?;
        let st = rustix::fs::fstat(&fd).map_err(|e| io_err(&self.path.join(rel), e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(SafeError::NotFile {
                path: self.path.join(rel),
                kind: kind_of(&st),
            });
        }
        Ok(std::fs::File::from(fd))
    }

    /// The regular file `rel` opened to read and append (created with `mode` when missing and
    /// `create`), never through a link at any component: for a file cordon reads back and
    /// grows under a lock (the audit log, the remembered rules).
    pub fn open_read_append(&self, rel: &Path, mode: u32, create: bool) -> Result<std::fs::File> {
        let mut flags = OFlags::RDWR | OFlags::APPEND | OFlags::NONBLOCK | OFlags::NOCTTY;
        if create {
            flags |= OFlags::CREATE;
        }
        let fd = self.open_beneath(rel, flags, Mode::from_raw_mode(mode))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| io_err(&self.path.join(rel), e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(SafeError::NotFile {
                path: self.path.join(rel),
                kind: kind_of(&st),
            });
        }
        Ok(std::fs::File::from(fd))
    }

    /// Creates the regular file `rel` with `bytes`; refuses when the name exists (a link
    /// included). Returns the open file (for an owner or lock the caller sets).
    pub fn create_new(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<std::fs::File> {
        self.create_new_with(rel, bytes, mode, true)
    }

    /// Creates the regular file `rel` with `bytes`, whole or not at all: written and synced
    /// under a temporary name beside it, then renamed onto the name without replacing anything
    /// (`RENAME_NOREPLACE`: refused when the name exists, a link included), the directory
    /// synced. For a file a person then acts on (the policy `cordon init` writes): a writer
    /// killed in the middle of [`Dir::create_new`] leaves an empty or partial file that then
    /// holds the name; here it leaves only a temporary file, which the next write beside it
    /// sweeps.
    pub fn create_whole(&self, rel: &Path, bytes: &[u8], mode: u32) -> Result<()> {
        let (dir, name) = self.parent_of(rel)?;
        let shown = self.path.join(rel);
        let tmp = dir.create_temp(name, bytes, mode, true)?;
        if let Err(e) =
            rustix::fs::renameat_with(&dir.fd, &tmp, &dir.fd, name, RenameFlags::NOREPLACE)
        {
            let _ = rustix::fs::unlinkat(&dir.fd, &tmp, AtFlags::empty());
            return Err(match e {
                Errno::EXIST if self.is_link(rel) => SafeError::Link(shown),
                e => io_err(&shown, e),
            });
        }
        dir.sweep_temps(name);
        rustix::fs::fsync(&dir.fd).map_err(|e| io_err(&dir.path, e))
    }

    /// [`Dir::create_new`] without its sync: for a file the caller locks before it writes and
    /// syncs its content (a journal entry created empty).
    pub fn create_new_unsynced(
        &self,
        rel: &Path,
        bytes: &[u8],
        mode: u32,
    ) -> Result<std::fs::File> {
        self.create_new_with(rel, bytes, mode, false)
    }

    fn create_new_with(
        &self,
        rel: &Path,
        bytes: &[u8],
        mode: u32,
        sync: bool,
    ) -> Result<std::fs::File> {
        let (dir, name) = self.parent_of(rel)?;
        let fd = rustix::fs::openat(
            &dir.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(|e| match e {
            Errno::EXIST if self.is_link(rel) => SafeError::Link(self.path.join(rel)),
            e => io_err(&self.path.join(rel), e),
        })?;
        let mut file = std::fs::File::from(fd);
        if let Err(e) = file
            .write_all(bytes)
            .and_then(|()| if sync { file.sync_all() } else { Ok(()) })
        {
            // Made by this call (O_EXCL) and cut short (a full disk): a partial file would
            // hold space, or pass for whole. unlinkat removes the name, never a link's target.
            let _ = rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty());
            return Err(io_err(&self.path.join(rel), e));
        }
        Ok(file)
    }

    fn is_link(&self, rel: &Path) -> bool {
        matches!(self.stat_at(rel), Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    }

    /// A temporary file beside `name` holding `bytes` (synced when `sync`); its name.
    fn create_temp(&self, name: &OsStr, bytes: &[u8], mode: u32, sync: bool) -> Result<OsString> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        for n in 0..100u32 {
            let mut tmp = OsString::from(".");
            tmp.push(name);
            tmp.push(format!(".{}.{stamp:x}.{n}.cordon-tmp", std::process::id()));
            match self.create_new_with(Path::new(&tmp), bytes, mode, sync) {
                Ok(_) => return Ok(tmp),
                Err(SafeError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io_err(
            &self.path.join(name),
            std::io::Error::other("no free temporary name beside it"),
        ))
    }

    /// Removes what a writer of `name` killed between its temporary file and the rename left
    /// beside it (`.NAME.PID.STAMP.N.cordon-tmp`, [`Self::create_temp`]): a file whose writer
    /// is gone and that is older than [`STALE_TEMP`] (a writer in another PID namespace looks
    /// gone; in ten seconds it has renamed its file). Best effort: a write that succeeded
    /// stays a success; the next write beside it tries again.
    fn sweep_temps(&self, name: &OsStr) {
        let Ok(entries) = self.entries() else {
            return;
        };
        let mut prefix = b".".to_vec();
        prefix.extend_from_slice(name.as_bytes());
        prefix.push(b'.');
        let now = std::time::SystemTime::now();
        for (entry, is_dir) in entries {
            let Some(rest) = entry
                .as_bytes()
                .strip_prefix(prefix.as_slice())
                .and_then(|r| r.strip_suffix(b".cordon-tmp"))
            else {
                continue;
            };
            let pid = rest.split(|&b| b == b'.').next().unwrap_or_default();
            let alive = !pid.is_empty()
                && std::str::from_utf8(pid).is_ok_and(|p| Path::new("/proc").join(p).exists());
            let old = rustix::fs::statat(&self.fd, &entry, AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
                .and_then(|st| {
                    let mtime = std::time::UNIX_EPOCH
                        + std::time::Duration::new(st.st_mtime as u64, st.st_mtime_nsec as u32);
                    now.duration_since(mtime).ok()
                })
                .is_some_and(|age| age > STALE_TEMP);
            if !is_dir && !alive && old {
                let _ = rustix::fs::unlinkat(&self.fd, &entry, AtFlags::empty());
            }
        }
    }

    /// Removes the file (or link, never what it points to) `rel`; `false` when it was missing.
    pub fn remove(&self, rel: &Path) -> Result<bool> {
        let (dir, name) = self.parent_of(rel)?;
        match rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io_err(&self.path.join(rel), e)),
        }
    }

    /// Renames `from` to `to` within this directory's tree, never over an existing name
    /// (`RENAME_NOREPLACE`; the error's kind is `AlreadyExists` then). The entry itself is
    /// moved, whatever it is (a link too: it is moved, not followed).
    pub fn rename_noreplace(&self, from: &Path, to: &Path) -> Result<()> {
        let (fdir, fname) = self.parent_of(from)?;
        let (tdir, tname) = self.parent_of(to)?;
        rustix::fs::renameat_with(&fdir.fd, fname, &tdir.fd, tname, RenameFlags::NOREPLACE)
            .map_err(|e| io_err(&self.path.join(from), e))
    }

    /// The names in this directory (not `.` and `..`), each with whether it is a directory
    /// (as `lstat` sees it: a link to one is not).
    pub fn entries(&self) -> Result<Vec<(OsString, bool)>> {
        let fd = rustix::fs::openat(&self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| io_err(&self.path, e))?;
        let mut dir = rustix::fs::Dir::read_from(&fd).map_err(|e| io_err(&self.path, e))?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| io_err(&self.path, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsString::from_vec(name.to_vec());
            let is_dir = match entry.file_type() {
                FileType::Unknown => rustix::fs::statat(&self.fd, &name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory),
                t => t == FileType::Directory,
            };
            out.push((name, is_dir));
        }
        Ok(out)
    }

    /// Removes `rel` and everything below it, never following a link (a link is removed as
    /// itself). Directories the caller owns but cannot read or enter (mode 000, left so by a
    /// command to survive the sweep) are made 0700 first, through a descriptor of that very
    /// directory, so no link swapped in meanwhile is changed instead.
    ///
    /// The depth is the command's choice (`mkdirat` from the last directory's descriptor knows
    /// no path length limit), so the walk holds at most [`REMOVE_DEPTH`] directories open and
    /// as many stack frames: a directory deeper than that is moved up to `rel` itself (a rename
    /// inside the tree being removed) and taken in a later pass. One descriptor and one frame
    /// per level ran out of descriptors (the tree stayed) or overflowed a thread's stack.
    pub fn remove_tree(&self, rel: &Path) -> Result<()> {
        let (dir, name) = self.parent_of(rel)?;
        dir.remove_entry(name)
    }

    fn remove_entry(&self, name: &OsStr) -> Result<()> {
        let shown = self.path.join(name);
        let st = match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(io_err(&shown, e)),
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(io_err(&shown, e)),
            };
        }
        let top = self.open_to_empty(name, &st)?;
        let mut moved_up = 0u64;
        loop {
            let before = moved_up;
            top.empty(&top, 1, &mut moved_up)?;
            if moved_up == before {
                break;
            }
        }
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(io_err(&shown, e)),
        }
    }

    /// The directory `name` (whose `lstat` is `st`), opened and made listable and writable.
    fn open_to_empty(&self, name: &OsStr, st: &Stat) -> Result<Dir> {
        let sub = match self.dir(Path::new(name)) {
            Ok(d) => d,
            Err(SafeError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                self.make_accessible(name)?;
                return self.dir(Path::new(name));
            }
            Err(e) => return Err(e),
        };
        // A directory that is readable but not writable or searchable keeps its entries.
        if st.st_mode & 0o700 != 0o700 {
            self.make_accessible(name)?;
        }
        Ok(sub)
    }

    /// Removes everything in this directory, `depth` levels below `top`; a directory deeper
    /// than [`REMOVE_DEPTH`] is renamed into `top` (counted in `moved_up`) instead.
    fn empty(&self, top: &Dir, depth: usize, moved_up: &mut u64) -> Result<()> {
        for (entry, _) in self.entries()? {
            let shown = self.path.join(&entry);
            let st = match rustix::fs::statat(&self.fd, &entry, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(io_err(&shown, e)),
            };
            if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
                match rustix::fs::unlinkat(&self.fd, &entry, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => continue,
                    Err(e) => return Err(io_err(&shown, e)),
                }
            }
            if depth >= REMOVE_DEPTH {
                // Moving a directory rewrites its `..`: it must be writable.
                if st.st_mode & 0o700 != 0o700 {
                    self.make_accessible(&entry)?;
                }
                self.move_up(&entry, top, moved_up)?;
                continue;
            }
            let sub = self.open_to_empty(&entry, &st)?;
            sub.empty(top, depth + 1, moved_up)?;
            drop(sub);
            match rustix::fs::unlinkat(&self.fd, &entry, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io_err(&shown, e)),
            }
        }
        Ok(())
    }

    /// Renames the directory `name` into `top` under a name not taken there (never over one).
    fn move_up(&self, name: &OsStr, top: &Dir, moved_up: &mut u64) -> Result<()> {
        loop {
            *moved_up += 1;
            let to = format!(".cordon-removing.{}", *moved_up);
            match rustix::fs::renameat_with(
                &self.fd,
                name,
                &top.fd,
                to.as_str(),
                RenameFlags::NOREPLACE,
            ) {
                Ok(()) => return Ok(()),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(io_err(&self.path.join(name), e)),
            }
        }
    }

    /// `chmod 0700` of the directory `name`, through an `O_PATH` descriptor of it (opened
    /// without following a link) and its `/proc/self/fd` entry, which names exactly that inode.
    fn make_accessible(&self, name: &OsStr) -> Result<()> {
        let shown = self.path.join(name);
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => SafeError::Link(shown.clone()),
            e => io_err(&shown, e),
        })?;
        let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
        rustix::fs::chmod(proc.as_str(), Mode::from_raw_mode(0o700)).map_err(|e| io_err(&shown, e))
    }
}

/// The directory `path`, its missing components created with `mode` from the nearest one that
/// exists: what exists is the operator's (opened as named, links followed), what cordon makes
/// is walked without following a link, so one planted meanwhile is refused by name.
pub fn create_path(path: &Path, mode: u32) -> Result<Dir> {
    let mut anchor = path;
    while std::fs::symlink_metadata(anchor).is_err() {
        match anchor.parent() {
            Some(up) if !up.as_os_str().is_empty() => anchor = up,
            _ => return Err(SafeError::BadPath(path.to_path_buf())),
        }
    }
    let root = Dir::anchor(anchor)?;
    match path.strip_prefix(anchor) {
        Ok(rest) if !rest.as_os_str().is_empty() => root.create_dirs(rest, mode),
        _ => Ok(root),
    }
}

/// Writes `bytes` to `rel` below the trusted directory `anchor` (creating missing directories
/// 0700), never through a link below the anchor. The one-call form of [`Dir::write`].
pub fn write(anchor: &Path, rel: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let root = Dir::anchor(anchor)?;
    let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => root.create_dirs(p, 0o700)?,
        None => root,
    };
    let name = rel
        .file_name()
        .ok_or_else(|| SafeError::BadPath(rel.to_path_buf()))?;
    dir.write(Path::new(name), bytes, mode)
}

/// Reads `rel` below the trusted directory `anchor` (at most `max` bytes), never through a
/// link below the anchor; `None` when it is missing.
pub fn read(anchor: &Path, rel: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    match Dir::anchor(anchor) {
        Ok(d) => d.read(rel, max),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads the file `path` as the operator's tools read their configuration — links followed —
/// but never blocking: opened `O_NONBLOCK`, so a FIFO or a device a run left at the name
/// (`mkfifo .envrc`, `mkfifo sub/.git`) neither hangs cordon's decision nor its after-run
/// scan. `None` when it is missing; [`SafeError::NotFile`] when it is not a regular file (a
/// directory included); at most `max` bytes, [`SafeError::TooLarge`] beyond.
pub fn read_followed(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) | Err(Errno::NOTDIR) => return Ok(None),
        Err(e) => return Err(io_err(path, e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(SafeError::NotFile {
            path: path.to_path_buf(),
            kind: kind_of(&st),
        });
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_err(path, e))?;
    if bytes.len() as u64 > max {
        return Err(SafeError::TooLarge {
            path: path.to_path_buf(),
            max,
        });
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A FIFO at a configuration's name is refused at once, not waited on (before, `mkfifo
    /// sub/.git` hung every file-tool decision below `sub` for good).
    #[test]
    fn reading_a_configuration_never_blocks_on_a_fifo() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join(".envrc");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o644)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let at = fifo.clone();
        std::thread::spawn(move || tx.send(read_followed(&at, 10).map_err(|e| e.to_string())));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("reading a FIFO blocked");
        assert!(got.unwrap_err().contains("not a regular file"));
        std::fs::write(t.path().join("f"), "abc").unwrap();
        symlink("f", t.path().join("l")).unwrap();
        assert_eq!(
            read_followed(&t.path().join("l"), 10).unwrap().unwrap(),
            b"abc"
        );
        assert_eq!(read_followed(&t.path().join("missing"), 10).unwrap(), None);
        assert!(matches!(
            read_followed(&t.path().join("f"), 2),
            Err(SafeError::TooLarge { .. })
        ));
        assert!(matches!(
            read_followed(t.path(), 2),
            Err(SafeError::NotFile { .. })
        ));
    }

    fn tree() -> (tempfile::TempDir, Dir) {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::anchor(t.path()).unwrap();
        (t, d)
    }

    /// A file created whole: never over a name (a file, a link, a dangling one: the target
    /// untouched), nothing left beside it, a dead writer's stale temporary file swept.
    #[test]
    fn a_file_created_whole_replaces_nothing_and_leaves_nothing_beside_it() {
        let (t, d) = tree();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let stale = t.path().join(".p.toml.999999999.1a.0.cordon-tmp");
        std::fs::write(&stale, "").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        d.create_whole(Path::new("p.toml"), b"version = 1\n", 0o640)
            .unwrap();
        let p = t.path().join("p.toml");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "version = 1\n");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o7,
            0,
            "no wider than asked"
        );
        let names: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["p.toml"], "{names:?}");
        let e = d
            .create_whole(Path::new("p.toml"), b"x", 0o644)
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        std::fs::write(t.path().join("target"), "keep").unwrap();
        symlink("target", t.path().join("l")).unwrap();
        symlink("gone", t.path().join("dangling")).unwrap();
        for l in ["l", "dangling"] {
            let e = d.create_whole(Path::new(l), b"x", 0o644).unwrap_err();
            assert!(matches!(e, SafeError::Link(_)), "{l}: {e}");
        }
        assert_eq!(
            std::fs::read_to_string(t.path().join("target")).unwrap(),
            "keep"
        );
        assert!(!t.path().join("gone").exists());
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 4);
    }

    #[test]
    fn writes_replace_atomically_and_create_directories() {
        let (t, d) = tree();
        write(t.path(), Path::new("a/b/c.json"), b"one", 0o600).unwrap();
        write(t.path(), Path::new("a/b/c.json"), b"two", 0o600).unwrap();
        assert_eq!(std::fs::read(t.path().join("a/b/c.json")).unwrap(), b"two");
        assert_eq!(
            d.read(Path::new("a/b/c.json"), 10).unwrap().unwrap(),
            b"two"
        );
        assert_eq!(d.read(Path::new("a/missing"), 10).unwrap(), None);
        let leftovers: Vec<_> = std::fs::read_dir(t.path().join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left");
        assert!(matches!(
            d.read(Path::new("a/b/c.json"), 2),
            Err(SafeError::TooLarge { .. })
        ));
    }

    /// A writer killed between its temporary file and the rename leaves the file; the next
    /// write of that name removes it once its writer is gone and it is old — and leaves a live
    /// writer's, a fresh one, another name's, and a link by a temporary name alone.
    #[test]
    fn a_dead_writers_temporary_file_is_removed_by_the_next_write() {
        let (t, d) = tree();
        let dead = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            let pid = c.id();
            c.wait().unwrap();
            pid
        };
        let me = std::process::id();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let plant = |name: &str, age: Option<std::time::SystemTime>| {
            let p = t.path().join(name);
            let f = std::fs::File::create(&p).unwrap();
            if let Some(a) = age {
                f.set_modified(a).unwrap();
            }
            p
        };
        let stale = plant(&format!(".c.json.{dead}.1a2b.0.cordon-tmp"), Some(old));
        let stale2 = plant(&format!(".c.json.{dead}.1a2c.3.cordon-tmp"), Some(old));
        let live = plant(&format!(".c.json.{me}.1a2b.0.cordon-tmp"), Some(old));
        let fresh = plant(&format!(".c.json.{dead}.1a2d.0.cordon-tmp"), None);
        let other = plant(&format!(".d.json.{dead}.1a2b.0.cordon-tmp"), Some(old));
        let victim = plant("victim", None);
        let link = t
            .path()
            .join(format!(".c.json.{dead}.ffff.0.cordon-tmp-link"));
        symlink(&victim, &link).unwrap();
        d.write_unsynced(Path::new("c.json"), b"x", 0o600).unwrap();
        assert!(
            !stale.exists() && !stale2.exists(),
            "the dead writer's files stay"
        );
        for kept in [&live, &fresh, &other, &victim, &link] {
            assert!(
                kept.symlink_metadata().is_ok(),
                "{} removed",
                kept.display()
            );
        }
        write(t.path(), Path::new("d.json"), b"x", 0o600).unwrap();
        assert!(
            !other.exists(),
            "d.json's write leaves its dead writer's file"
        );
    }

    /// A link at each component of the path: refused, named, and its target untouched — with
    /// openat2 and with the walk kernels without it take.
    #[test]
    fn a_link_at_any_component_is_refused_and_named() {
        for walk in [false, true] {
            WALK_ONLY.with(|w| w.set(walk));
            links_at_each_component();
        }
    }

    fn links_at_each_component() {
        for at in 0..3 {
            let (t, d) = tree();
            let outside = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(outside.path().join("b")).unwrap();
            std::fs::write(outside.path().join("victim"), "untouched").unwrap();
            std::fs::write(outside.path().join("b/c.json"), "untouched").unwrap();
            let parts = ["a", "b", "c.json"];
            let mut real = t.path().to_path_buf();
            for p in &parts[..at] {
                real.push(p);
                std::fs::create_dir(&real).unwrap();
            }
            let link = real.join(parts[at]);
            let target = if at == 2 {
                outside.path().join("victim")
            } else {
                outside.path().to_path_buf()
            };
            symlink(&target, &link).unwrap();
            let rel = Path::new("a/b/c.json");
            for (what, r) in [
                ("write", write(t.path(), rel, b"evil", 0o600).map(|_| ())),
                ("append", d.open_append(rel, 0o600).map(|_| ())),
                ("read", d.read(rel, 100).map(|_| ())),
                ("create", d.create_new(rel, b"evil", 0o600).map(|_| ())),
            ] {
                match r {
                    Err(SafeError::Link(p)) => assert_eq!(p, link, "{what} at {at}"),
                    other => panic!("{what} with a link at component {at}: {other:?}"),
                }
            }
            assert_eq!(
                std::fs::read_to_string(outside.path().join("victim")).unwrap(),
                "untouched"
            );
            assert_eq!(
                std::fs::read_to_string(outside.path().join("b/c.json")).unwrap(),
                "untouched"
            );
            let msg = write(t.path(), rel, b"x", 0o600).unwrap_err().to_string();
            assert!(
                msg.contains(&link.display().to_string()) && msg.contains("symbolic link"),
                "{msg}"
            );
        }
    }

    #[test]
    fn dotdot_and_absolute_paths_are_refused() {
        let (_t, d) = tree();
        for bad in ["../x", "/etc/passwd", "a/../../x", ""] {
            assert!(
                matches!(
                    d.write(Path::new(bad), b"x", 0o600),
                    Err(SafeError::BadPath(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn rename_never_replaces_and_moves_a_link_as_itself() {
        let (t, d) = tree();
        std::fs::write(t.path().join("a"), "a").unwrap();
        std::fs::write(t.path().join("b"), "b").unwrap();
        let e = d
            .rename_noreplace(Path::new("a"), Path::new("b"))
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        symlink("/etc/passwd", t.path().join("l")).unwrap();
        d.rename_noreplace(Path::new("l"), Path::new("m")).unwrap();
        assert!(std::fs::symlink_metadata(t.path().join("m"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn remove_tree_takes_unreadable_directories_and_never_follows_links() {
        let (t, d) = tree();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "keep").unwrap();
        let top = t.path().join("top");
        std::fs::create_dir_all(top.join("locked/deeper")).unwrap();
        std::fs::write(top.join("locked/deeper/f"), "f").unwrap();
        symlink(outside.path(), top.join("link")).unwrap();
        std::fs::set_permissions(
            top.join("locked/deeper"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        std::fs::set_permissions(top.join("locked"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        d.remove_tree(Path::new("top")).unwrap();
        assert!(!top.exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("keep")).unwrap(),
            "keep"
        );
    }
}
