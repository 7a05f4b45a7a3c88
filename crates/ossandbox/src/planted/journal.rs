//! The after-run scan's moves, journaled so that a cordon killed (or out of disk space) in
//! the middle of one leaves a state the next run finishes.
//!
//! Moving a changed file aside and writing its earlier content back are two steps in the
//! root; a cordon killed between them used to leave the name empty, the earlier content lost
//! (it was only in memory) and the finding unrecorded. So before it moves anything, the scan
//! writes an entry beside the after-run markers (`LOGDIR/scans/journal-…`, a directory the
//! profile keeps from every run, as it keeps the audit log):
//!
//! ```text
//!  journal-UNIQUE   path, what and why, the moved file's (dev, ino), the earlier content
//!                   (with its mode and owner) when it gets it back, the staging name
//! ```
//!
//! created empty and locked (a [`ProcessLock`]: held by this process alone, so no child keeps
//! it looking live) before its text is written and synced. Then
//! [`Entry::finish`] does the move and the restore, and the entry goes. The same `finish` is
//! what the next run does with an entry whose lock is free (its cordon is gone), from any
//! state a kill leaves:
//!
//! | killed                          | on disk                                   | recovery                         |
//! |---------------------------------|-------------------------------------------|----------------------------------|
//! | before the entry is whole       | nothing moved, an entry that does not parse | removed; the dead-run scan moves the file aside (no earlier content) |
//! | before the move                 | the name holds the run's file (its ino)   | moved aside, earlier content back|
//! | between the move and the restore| the name empty, the run's file aside      | found aside by its ino, restored |
//! | while staging the content       | a partial staging file                    | removed, staged again, restored  |
//! | after the restore               | the name holds the earlier content        | seen as done, the entry removed  |
//!
//! The earlier content is written under a staging name beside the file and renamed onto the
//! name without replacing anything, so the name never holds half of it. Recovery never
//! overwrites: a name the operator has since filled with other content is left alone, and the
//! entry is kept under `kept-…` with the earlier content, which the warning names. An entry is
//! acted on only when it is a regular file this user wrote (not a link, not writable by
//! others) and its path, or the roots of the run that made it, meet the recovering run's
//! roots.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cordon_fs::lock::ProcessLock;
use cordon_fs::safe::Dir;

use super::{Change, Finding, Handling, What};

const HEAD: &str = "cordon scan journal v1";

/// Where the scan's moves are journaled: the after-run markers' directory.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    /// The writable roots of the run whose moves go here.
    roots: Vec<PathBuf>,
}

/// The content a moved file gets back, with its earlier mode and owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Earlier {
    pub content: Vec<u8>,
    pub mode: u32,
    pub owner: (u32, u32),
}

/// One move (and restore) of the scan, from its journal entry or about to be journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Move {
    /// The writable roots of the run whose scan moves it: a run over roots that meet them
    /// finishes it (its path may lie beyond them, at a watched link's target).
    pub roots: Vec<PathBuf>,
    pub path: PathBuf,
    pub what: What,
    pub why: String,
    pub change: Change,
    /// The (dev, ino) of the file the run left at `path`, the one to move aside.
    pub id: (u64, u64),
    /// The name (beside `path`) the earlier content is written under before it is renamed
    /// onto `path`.
    pub staging: OsString,
    pub earlier: Option<Earlier>,
}

/// A journal entry in place, locked by this process while its move is done.
pub(crate) struct Entry {
    dir: Dir,
    name: PathBuf,
    _lock: ProcessLock,
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    hex::decode(s).ok()
}

impl Move {
    fn text(&self) -> String {
        let change = self.change.word();
        let mut t = format!(
            "{HEAD}\npath {}\nwhat {}\nwhy {}\nchange {change}\nid {} {}\nstaging {}\n",
            hex::encode(self.path.as_os_str().as_bytes()),
            self.what.tag(),
            hex::encode(self.why.as_bytes()),
            self.id.0,
            self.id.1,
            hex::encode(self.staging.as_bytes()),
        );
        for r in &self.roots {
            t.push_str(&format!("root {}\n", hex::encode(r.as_os_str().as_bytes())));
        }
        if let Some(e) = &self.earlier {
            t.push_str(&format!(
                "earlier {:o} {} {} {}\n",
                e.mode,
                e.owner.0,
                e.owner.1,
                hex::encode(&e.content)
            ));
        }
        t
    }

    fn parse(text: &str) -> Option<Move> {
        let mut lines = text.lines();
        if lines.next()? != HEAD {
            return None;
        }
        let (mut path, mut what, mut why, mut change, mut id, mut staging, mut earlier) =
            (None, None, None, None, None, None, None);
        let mut roots = Vec::new();
        for l in lines {
            match l.split_once(' ')? {
                ("root", h) => roots.push(PathBuf::from(OsString::from_vec(unhex(h)?))),
                ("path", h) => path = Some(PathBuf::from(OsString::from_vec(unhex(h)?))),
                ("what", t) => what = Some(What::from_tag(t)?),
                ("why", h) => why = Some(String::from_utf8(unhex(h)?).ok()?),
                ("change", "appeared") => change = Some(Change::Appeared),
                ("change", "changed") => change = Some(Change::Changed),
                ("id", s) => {
                    let (d, i) = s.split_once(' ')?;
                    id = Some((d.parse().ok()?, i.parse().ok()?));
                }
                ("staging", h) => staging = Some(OsString::from_vec(unhex(h)?)),
                ("earlier", s) => {
                    let mut f = s.split(' ');
                    earlier = Some(Earlier {
                        mode: u32::from_str_radix(f.next()?, 8).ok()?,
                        owner: (f.next()?.parse().ok()?, f.next()?.parse().ok()?),
                        content: unhex(f.next()?)?,
                    });
                }
                _ => return None,
            }
        }
        let staging = staging?;
        // One plain name beside the file, nothing that walks elsewhere.
        if staging.is_empty() || staging.as_bytes().contains(&b'/') || staging == ".." {
            return None;
        }
        let path = path?;
        if !path.is_absolute() {
            return None;
        }
        Some(Move {
            roots,
            path,
            what: what?,
            why: why?,
            change: change?,
            id: id?,
            staging,
            earlier,
        })
    }

    /// The move and the restore, from whatever state an earlier attempt left (see the
    /// module's documentation). `entry`: the journal entry, which holds the earlier content;
    /// what becomes of it is the second value.
    pub(crate) fn finish(&self, entry: Option<&Path>) -> (Handling, Left) {
        let (Some(parent), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            let why = "could not move it aside: no parent directory".into();
            return (Handling::Reported(why), Left::Done);
        };
        // Through fs::safe: the directory opened from `/` one component at a time without
        // following a link, so a process of the run that outlived it cannot turn a directory
        // on the way into a link that sends cordon (perhaps root) renaming or writing
        // elsewhere.
        let dir = match Dir::open_absolute(parent) {
            Ok(d) => d,
            Err(e) => {
                let why = format!("could not move it aside: {e}");
                return (Handling::Reported(why), Left::Done);
            }
        };
        let name = Path::new(name);
        let staging = Path::new(&self.staging);
        let ino = |rel: &Path| {
            dir.stat_at(rel)
                .ok()
                .flatten()
                .map(|st| (st.st_dev, st.st_ino))
        };
        // 1. The run's file aside: still at its name, or already moved by the earlier attempt.
        let aside = if ino(name) == Some(self.id) {
            match move_aside(&dir, name) {
                Ok(to) => Some(to),
                Err(why) => return (Handling::Reported(why), Left::Done),
            }
        } else {
            find_aside(&dir, name, self.id)
        };
        if killed(Step::Moved) {
            return (Handling::Reported("killed (a test)".into()), Left::Retry);
        }
        let to = aside.map(|a| parent.join(a));
        if let Some(to) = &to {
            super::remember(to);
        }
        let moved = match &to {
            Some(to) => format!("the run's version moved aside to {}; ", to.display()),
            None => String::new(),
        };
        // 2. The earlier content back, never over a name that holds something else.
        let Some(was) = &self.earlier else {
            return match to {
                Some(to) => (Handling::Quarantined(to), Left::Done),
                None => (
                    Handling::Reported(
                        "moved aside by an earlier attempt, and no longer beside it".into(),
                    ),
                    Left::Done,
                ),
            };
        };
        let restored = |to: Option<PathBuf>| match to {
            Some(to) => (Handling::Restored(to), Left::Done),
            None => (
                Handling::Reported(
                    "the earlier content restored; the run's version is no longer beside it".into(),
                ),
                Left::Done,
            ),
        };
        match dir.read(name, was.content.len() as u64) {
            Ok(Some(now)) if now == was.content => {
                // Restored by the earlier attempt (or the operator put it back).
                let _ = remove_staging(&dir, staging);
                super::remember_restored(&self.path, &was.content);
                return restored(to);
            }
            Err(e) if e.is_not_found() => {}
            Ok(None) => {}
            _ => {
                // The operator's newer file (or another run's): not clobbered.
                let _ = remove_staging(&dir, staging);
                let keep = match entry.map(kept_path) {
                    Some(k) => format!("; the earlier content is kept in {}", k.display()),
                    None => "; the earlier content is lost".into(),
                };
                return (
                    Handling::Reported(format!(
                        "{moved}its name now holds another file, left as it is{keep}"
                    )),
                    Left::Keep,
                );
            }
        }
        match stage(&dir, staging, was).and_then(|()| {
            dir.rename_noreplace(staging, name)
                .map_err(std::io::Error::other)
        }) {
            Ok(()) => {
                if killed(Step::Restored) {
                    return (Handling::Reported("killed (a test)".into()), Left::Retry);
                }
                super::remember_restored(&self.path, &was.content);
                restored(to)
            }
            Err(e) => {
                let _ = remove_staging(&dir, staging);
                if let (None, Some(to)) = (entry, &to) {
                    // Not journaled either (a full disk): what the run kept beside its
                    // marker holds it, and the marker says so ([`Handling::Unrestored`]).
                    return (Handling::Unrestored(to.clone(), e.to_string()), Left::Retry);
                }
                let keep = match entry {
                    Some(k) => format!(
                        "; the earlier content is kept in {}, and the next run over this root writes it back",
                        k.display()
                    ),
                    None => "; the earlier content is lost".into(),
                };
                (
                    Handling::Reported(format!(
                        "{moved}the earlier content could not be written back ({e}){keep}"
                    )),
                    Left::Retry,
                )
            }
        }
    }
}

/// What becomes of a journal entry after [`Move::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Left {
    /// Done: removed.
    Done,
    /// The earlier content could not be written back: left for the next run to retry.
    Retry,
    /// The name holds another file: kept under `kept-…` (never acted on again), for the
    /// operator.
    Keep,
}

/// The steps of a move a test kills cordon after (see [`killed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Step {
    /// The entry is in place, nothing moved.
    Journaled,
    /// The run's file moved aside, the name empty.
    Moved,
    /// Part of the earlier content written under the staging name.
    Staging,
    /// The earlier content back under its name, the entry still there.
    Restored,
}

#[cfg(test)]
thread_local! {
    /// Where the test running on this thread kills the move.
    pub(crate) static KILL_AT: std::cell::Cell<Option<Step>> = const { std::cell::Cell::new(None) };
}

/// Whether a test kills the move at `step`: it stops there, its journal entry left as a
/// SIGKILL leaves it (unlocked once dropped, still under its name). Never in the shipped
/// binary: compiled only for tests.
#[cfg(test)]
pub(crate) fn killed(step: Step) -> bool {
    KILL_AT.with(|k| k.get() == Some(step))
}

#[cfg(not(test))]
#[inline(always)]
pub(crate) fn killed(_: Step) -> bool {
    false
}

/// Where an entry is kept when its earlier content cannot go back (see [`Left::Keep`]).
fn kept_path(entry: &Path) -> PathBuf {
    let n = entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    entry.with_file_name(format!("kept-{}", n.strip_prefix("journal-").unwrap_or(&n)))
}

/// The quarantine name of `name`, stamp aside: `NAME.cordon-quarantine`, with a leading dot
/// where `NAME` has none. A shell's glob skips dot-names: the operator's startup files that
/// source every file of a directory (`for rc in ~/.bashrc.d/*; do . "$rc"; done`, Fedora's
/// `.bashrc`) ran `x.sh.cordon-quarantine` at the next shell as they would have run `x.sh`.
fn aside_name(name: &Path) -> OsString {
    let name = name.as_os_str();
    let mut aside = OsString::new();
    if !name.as_bytes().starts_with(b".") {
        aside.push(".");
    }
    aside.push(name);
    aside.push(".cordon-quarantine");
    aside
}

/// Renames `name` aside (never over an existing name): the plain quarantine name first
/// ([`aside_name`]); when it is taken, names the command could not have planted in advance
/// (the clock's nanoseconds now). Returns the new name.
fn move_aside(dir: &Dir, name: &Path) -> Result<OsString, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for n in 0..100 {
        let mut aside = aside_name(name);
        if n > 0 {
            aside.push(format!("-{stamp:x}-{n}"));
        }
        match dir.rename_noreplace(name, Path::new(&aside)) {
            Ok(()) => return Ok(aside),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("could not move it aside: {e}")),
        }
    }
    Err("could not move it aside: every quarantine name is taken".into())
}

/// The quarantine name beside `name` that holds the file `id`, moved there by an earlier
/// attempt (by this cordon, [`aside_name`], or by one before it, which added no dot).
fn find_aside(dir: &Dir, name: &Path, id: (u64, u64)) -> Option<OsString> {
    let prefix = aside_name(name);
    let mut undotted = name.as_os_str().as_bytes().to_vec();
    undotted.extend_from_slice(b".cordon-quarantine");
    dir.entries().ok()?.into_iter().find_map(|(n, _)| {
        let b = n.as_bytes();
        ((b.starts_with(prefix.as_bytes()) || b.starts_with(&undotted))
            && dir
                .stat_at(Path::new(&n))
                .ok()
                .flatten()
                .is_some_and(|st| (st.st_dev, st.st_ino) == id))
        .then_some(n)
    })
}

/// Writes the earlier content under `staging` (a partial one from an earlier attempt
/// removed first), with the earlier owner (cordon may run as root in a user's repository;
/// only root can give a file away, and anyone else created it as themselves) and mode, which
/// the umask would have narrowed; set-id bits are not restored.
pub(crate) fn stage(dir: &Dir, staging: &Path, was: &Earlier) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    remove_staging(dir, staging)?;
    if killed(Step::Staging) {
        // Half of it written, as a kill in the middle of the write leaves it.
        let half = &was.content[..was.content.len() / 2];
        dir.create_new(staging, half, 0o600)
            .map_err(std::io::Error::other)?;
        return Err(std::io::Error::other("killed (a test)"));
    }
    let f = dir
        .create_new(staging, &was.content, 0o600)
        .map_err(std::io::Error::other)?;
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::fchown(&f, Some(was.owner.0), Some(was.owner.1))?;
    }
    f.set_permissions(std::fs::Permissions::from_mode(was.mode & 0o1777))
}

/// Removes a staging file an earlier attempt left (a regular file only: the name is cordon's,
/// chosen with the clock's nanoseconds, but what else is there stays).
fn remove_staging(dir: &Dir, staging: &Path) -> std::io::Result<()> {
    match dir.stat_at(staging).map_err(std::io::Error::other)? {
        Some(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode)
                == rustix::fs::FileType::RegularFile =>
        {
            dir.remove(staging)
                .map(|_| ())
                .map_err(std::io::Error::other)
        }
        Some(_) => Err(std::io::Error::other(format!(
            "{} is not a file cordon staged",
            dir.path().join(staging).display()
        ))),
        None => Ok(()),
    }
}

/// A name unique to this process and moment.
fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{stamp:x}-{n}", std::process::id())
}

impl Journal {
    /// How an entry's name begins.
    pub const PREFIX: &'static str = "journal-";

    /// What a staging name adds to the name it is for ([`Journal::staging_name`]).
    pub(crate) const STAGING: &'static str = ".cordon-restore-";

    /// The journal in `dir` (the after-run markers' directory, which no run reaches).
    pub fn beside(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
            roots: Vec::new(),
        }
    }

    /// This journal, for the moves of a run over `roots` (absolute, canonical).
    pub fn of(mut self, roots: &[PathBuf]) -> Journal {
        self.roots = roots.to_vec();
        self
    }

    /// The roots its moves are recorded under.
    pub(crate) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// A staging name for the earlier content of `name`.
    pub(crate) fn staging_name(name: &OsStr) -> OsString {
        let mut s = name.to_os_string();
        s.push(format!("{}{}", Journal::STAGING, unique()));
        s
    }

    /// Writes `m` durably and locked, before anything is moved. `Err`: it could not be (a full
    /// disk); the move is done anyway (the plant must go), and said.
    pub(crate) fn begin(&self, m: &Move) -> std::io::Result<Entry> {
        let dir = Dir::anchor(&self.dir)
            .or_else(|_| cordon_fs::safe::create_path(&self.dir, 0o700))
            .map_err(std::io::Error::other)?;
        let name = PathBuf::from(format!("{}{}", Journal::PREFIX, unique()));
        // Created empty and locked before anything is written: an entry is never unlocked
        // while its cordon lives, and one whose cordon died before its text was whole does
        // not parse (recovery removes it; nothing was moved yet).
        let file = dir
            .create_new_unsynced(&name, b"", 0o600)
            .map_err(std::io::Error::other)?;
        let lock = match ProcessLock::try_take(file) {
            Ok(Some(l)) => l,
            other => {
                let _ = dir.remove(&name);
                return Err(std::io::Error::other(format!(
                    "cannot lock the journal entry: {:?}",
                    other.err()
                )));
            }
        };
        let written = {
            use std::io::Write;
            let mut f = lock.file();
            f.write_all(m.text().as_bytes())
                .and_then(|()| f.sync_data())
        };
        if let Err(e) = written.and_then(|()| Ok(rustix::fs::fsync(&dir)?)) {
            let _ = dir.remove(&name);
            return Err(e);
        }
        Ok(Entry {
            dir,
            name,
            _lock: lock,
        })
    }

    /// Finishes the moves of scans whose cordon died (their entries unlocked) over paths in
    /// `roots`; each one a finding, as the dead scan would have reported it.
    pub fn recover(&self, roots: &[PathBuf]) -> Vec<Finding> {
        self.recover_acting(roots, true)
    }

    /// The entries [`Journal::recover`] would finish, each kept (under `kept-…`) and reported,
    /// nothing moved or written: for a journal in a directory that something other than
    /// cordon may have written (Codex's sandbox writes `LOGDIR/codex`). An entry is a path
    /// and content cordon writes there; forged, and acted on by a cordon that runs outside
    /// that sandbox (a Codex command the user let escalate), it wrote any file of the user's
    /// (`~/.bash_login`) or replaced one (`~/.bashrc`, its inode named by the entry).
    pub fn keep_unfinished(&self, roots: &[PathBuf]) -> Vec<Finding> {
        self.recover_acting(roots, false)
    }

    fn recover_acting(&self, roots: &[PathBuf], act: bool) -> Vec<Finding> {
        let Ok(dir) = Dir::anchor(&self.dir) else {
            return Vec::new(); // nothing was ever journaled
        };
        let Ok(names) = dir.entries() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (n, _) in names {
            if !n.as_bytes().starts_with(Journal::PREFIX.as_bytes()) {
                continue;
            }
            let rel = PathBuf::from(&n);
            let Some((lock, m)) = dead_entry(&dir, &rel) else {
                continue;
            };
            let meet = |a: &Path, b: &Path| a.starts_with(b) || b.starts_with(a);
            let ours = roots.iter().any(|r| m.path.starts_with(r))
                || m.roots.iter().any(|t| roots.iter().any(|r| meet(t, r)));
            if !ours {
                continue; // another root's: the next run over it finishes it
            }
            let (handling, left) = if act {
                m.finish(Some(&self.dir.join(&rel)))
            } else {
                let kept = kept_path(&self.dir.join(&rel));
                (
                    Handling::Reported(format!(
                        "its journal lies where a process outside cordon can write (the state apart of the runs inside Codex's sandbox), so cordon moved and wrote nothing from it; the entry is kept in {}: check the path, and write the earlier content back yourself if it is yours",
                        kept.display()
                    )),
                    Left::Keep,
                )
            };
            leave(&dir, &rel, left);
            drop(lock);
            out.push(Finding {
                path: m.path,
                what: m.what,
                change: m.change,
                why: m.why,
                handling,
            });
        }
        out
    }
}

/// Removes, keeps (renamed to `kept-…`) or leaves the entry `rel`.
fn leave(dir: &Dir, rel: &Path, left: Left) {
    match left {
        Left::Done => {
            let _ = dir.remove(rel);
        }
        Left::Retry => {}
        Left::Keep => {
            if let Some(kept) = rel.file_name().map(|n| kept_path(Path::new(n))) {
                let _ = dir.rename_noreplace(rel, &kept);
            }
        }
    }
}

/// The entry `rel` locked by this process and parsed, when its cordon is gone and it is one
/// this user wrote, a regular file no one else may write, still under its name.
fn dead_entry(dir: &Dir, rel: &Path) -> Option<(ProcessLock, Move)> {
    use rustix::fs::{FileType, Mode, OFlags};
    let st = dir.stat_at(rel).ok()??;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || ProcessLock::held_here(&st) {
        return None;
    }
    let fd = rustix::fs::openat(
        dir,
        rel,
        OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let file = std::fs::File::from(fd);
    let m = file.metadata().ok()?;
    if !m.is_file()
        || m.uid() != rustix::process::geteuid().as_raw()
        || m.mode() & 0o022 != 0
        || m.len() > 1 << 20
        || (m.dev(), m.ino()) != (st.st_dev, st.st_ino)
    {
        return None;
    }
    // An empty entry just created may be between its creation and its lock.
    let fresh = m.len() == 0
        && m.modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age < std::time::Duration::from_secs(60));
    let lock = ProcessLock::try_take(file).ok()??;
    let mut text = String::new();
    // Through the locked descriptor: opening the file again and closing it would release
    // this process's lock.
    std::io::Read::read_to_string(&mut lock.file(), &mut text).ok()?;
    match Move::parse(&text) {
        Some(m) => Some((lock, m)),
        None => {
            // Its cordon died while writing it, before it moved anything: nothing to finish.
            if !fresh {
                let _ = dir.remove(rel);
            }
            None
        }
    }
}

impl Entry {
    /// The move is done: the entry goes, or stays as [`Move::finish`] said.
    pub(crate) fn done(self, left: Left) {
        leave(&self.dir, &self.name, left);
    }

    /// Where the entry lies.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().join(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quarantine name has a leading dot (a shell's glob skips it); a move an earlier
    /// cordon made without one is still found, so its interrupted restore is finished.
    #[test]
    fn the_quarantine_name_is_dotted_and_an_undotted_one_is_still_found() {
        assert_eq!(aside_name(Path::new(".envrc")), ".envrc.cordon-quarantine");
        assert_eq!(aside_name(Path::new("x.sh")), ".x.sh.cordon-quarantine");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().canonicalize().unwrap();
        std::fs::write(p.join("x.sh.cordon-quarantine"), "by an earlier cordon").unwrap();
        std::fs::write(p.join(".y.sh.cordon-quarantine"), "by this one").unwrap();
        let id = |n: &str| {
            let m = std::fs::metadata(p.join(n)).unwrap();
            (m.dev(), m.ino())
        };
        let dir = Dir::open_absolute(&p).unwrap();
        assert_eq!(
            find_aside(&dir, Path::new("x.sh"), id("x.sh.cordon-quarantine")),
            Some("x.sh.cordon-quarantine".into())
        );
        assert_eq!(
            find_aside(&dir, Path::new("y.sh"), id(".y.sh.cordon-quarantine")),
            Some(".y.sh.cordon-quarantine".into())
        );
        assert_eq!(
            find_aside(&dir, Path::new("y.sh"), id("x.sh.cordon-quarantine")),
            None
        );
    }
}
