//! The operator's trust in files cordon finds on its own: a `./cordon.toml` found by
//! discovery, and the remembered rules (`cordon.rules.toml`) beside a policy.
//!
//! Such a file may lie in a directory a sandboxed command could write (under the embedded
//! default the current directory is writable), so its presence proves nothing: a command
//! could leave a policy with `backend = "none"` for the next run. cordon uses it only when
//! the operator trusted its exact content — the model of direnv's `allow` and git's
//! `safe.directory`. Trust is pinned to the file's canonical path and the SHA-256 of its
//! content, and kept where no sandboxed command can write:
//!
//! ```text
//! $XDG_CONFIG_HOME/cordon/        (else $HOME/.config/cordon/)   0700, the caller's or root's
//! └── trusted/                                                    0700
//!     └── <sha256 of the canonical path>.toml                     0600, one per file:
//!           version, path, sha256 and a copy of the content (to show what changed)
//! ```
//!
//! Every profile protects the store in use where a writable root holds it (read-only on
//! bubblewrap; Landlock, which cannot keep a subpath read-only, refuses to run). Entries are
//! written atomically (a temporary file, fsync, rename) through directory descriptors, never
//! following a symlink; a store directory or entry that belongs to another user or that others
//! may write is refused. Files are read with [`read_file`]: `O_NOFOLLOW` for what cordon found
//! itself, `O_NONBLOCK`, regular files only and at most [`MAX_FILE_SIZE`], so that neither a
//! link nor a FIFO nor a device planted under the name can redirect or hang a run.

use std::ffi::OsString;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::PolicyError;

/// The largest policy or rules file cordon reads (1 MiB): a policy is a few kilobytes.
pub const MAX_FILE_SIZE: u64 = 1 << 20;
/// A store entry holds a copy of the content, escaped.
const MAX_ENTRY_SIZE: u64 = 8 * MAX_FILE_SIZE;
/// How much of a diff a refusal shows.
const MAX_DIFF_LINES: usize = 200;
const MAX_DIFF_BYTES: usize = 16 << 10;

/// How a kernel profile names the trust store's directory among its protected paths.
pub const PROTECTED_ORIGIN: &str = "cordon's trust store (it lies in a writable root)";

/// A file read by [`read_file`]: its canonical path (of the inode that was read) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    pub path: PathBuf,
    pub text: String,
}

impl FileText {
    /// The SHA-256 of the text, in lowercase hex.
    pub fn sha256(&self) -> String {
        sha256_hex(self.text.as_bytes())
    }
}

/// Whether [`read_file`] follows a symlink at the file's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// A file cordon found itself (the command could have planted or re-pointed a link).
    Never,
    /// A file the operator named (`--policy FILE`).
    Links,
}

/// Reads a policy or rules file: a regular file (checked before opening, so a device or FIFO
/// is never opened, and again on the open descriptor), at most [`MAX_FILE_SIZE`], UTF-8,
/// opened `O_NONBLOCK | O_NOCTTY | O_CLOEXEC`, plus `O_NOFOLLOW` for [`Follow::Never`].
pub fn read_file(path: &Path, follow: Follow) -> Result<FileText, PolicyError> {
    let fail = |message: String| PolicyError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::other(message),
    };
    let io = |source| PolicyError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = match follow {
        Follow::Never => std::fs::symlink_metadata(path),
        Follow::Links => std::fs::metadata(path),
    }
    .map_err(io)?;
    if meta.file_type().is_symlink() {
        return Err(fail(
            "it is a symlink, and cordon never follows one to a file it finds on its own (a sandboxed command could re-point it); replace the link by the file, or name the file with --policy".into(),
        ));
    }
    if !meta.is_file() {
        return Err(fail(format!(
            "not a regular file (a {}); cordon reads policies only from regular files",
            kind(&meta.file_type())
        )));
    }
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if follow == Follow::Never {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                fail("it is a symlink (it became one while cordon read it); cordon never follows one to a file it finds on its own".into())
            } else {
                io(e)
            }
        })?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(fail(format!(
            "not a regular file (a {}); cordon reads policies only from regular files",
            kind(&meta.file_type())
        )));
    }
    let text = read_bounded(&file, MAX_FILE_SIZE).map_err(fail)?;
    Ok(FileText {
        path: real_path_of(&file, path),
        text,
    })
}

/// At most `max` bytes of UTF-8 text from `file`.
fn read_bounded(file: &File, max: u64) -> Result<String, String> {
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "larger than {} KiB; cordon reads no bigger policy or rules file",
            max >> 10
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else if t.is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

/// The canonical path of the open `file` (named `given`), as the kernel knows it.
pub fn real_path_of(file: &File, given: &Path) -> PathBuf {
    #[cfg(target_os = "linux")]
    if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        if p.is_absolute() {
            return p;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
    std::fs::canonicalize(given).unwrap_or_else(|_| given.to_path_buf())
}

/// The canonical path of a file that may not exist (or not be readable): its directory made
/// canonical, its name as it is.
pub fn canonical_name(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(abs.clone()),
        _ => abs,
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The places a trust store of this user may be, from the environment `var` gives, the one in
/// use first: `$XDG_CONFIG_HOME/cordon`, else (and also) `$HOME/.config/cordon`. A relative or
/// empty value is ignored, as the XDG base directory specification says, and so is one with a
/// `..` component (the path cordon writes would differ from the one the sandbox protects).
pub fn store_dirs(var: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let absolute = |name: &str| {
        var(name).map(PathBuf::from).filter(|p| {
            p.is_absolute()
                && p.components()
                    .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        })
    };
    let mut dirs = Vec::new();
    for dir in [
        absolute("XDG_CONFIG_HOME").map(|c| c.join("cordon")),
        absolute("HOME").map(|h| h.join(".config/cordon")),
    ]
    .into_iter()
    .flatten()
    {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// Which kind of file a trust entry is for (how refusals name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinned {
    /// A `./cordon.toml` found by discovery.
    Policy,
    /// Remembered rules beside a policy.
    Rules,
    /// A named session's grants (`cordon exec --session NAME`): cordon pins each save, so a
    /// session file a command forged (where it could write the sessions directory) is refused.
    Session,
}

/// Why a file cordon found is not used.
#[derive(Debug)]
pub enum Reason {
    /// No trust was ever given for this path.
    NotTrusted,
    /// Trust was given for other content: its SHA-256 then and now, and a unified diff from the
    /// trusted copy to the file (bounded).
    Changed {
        was: String,
        now: String,
        diff: String,
    },
    /// Neither XDG_CONFIG_HOME nor HOME is usable: there is nowhere trust could be kept.
    NoStore,
    /// The store could not be read safely.
    Store(String),
}

/// A refusal of a file cordon found on its own: one line naming the file, why, and the
/// command that trusts it; for a changed file also [`Untrusted::diff`].
#[derive(Debug)]
pub struct Untrusted {
    pub path: PathBuf,
    pub what: Pinned,
    pub reason: Reason,
}

impl Untrusted {
    /// What changed since the last trust (a unified diff), for a changed file.
    pub fn diff(&self) -> Option<&str> {
        match &self.reason {
            Reason::Changed { diff, .. } => Some(diff),
            _ => None,
        }
    }
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        let cmd = format!("cordon policy trust {}", shell_quote(&self.path));
        if self.what == Pinned::Session {
            let why = match &self.reason {
                Reason::NotTrusted | Reason::Changed { .. } => {
                    "it is not as cordon saved it (a sandboxed command could have written it)".to_string()
                }
                Reason::NoStore => "there is no trust store to check it against (neither XDG_CONFIG_HOME nor HOME is an absolute path)".to_string(),
                Reason::Store(e) => format!("cannot check it: {e}"),
            };
            return write!(
                f,
                "session file {p}: {why}; delete it to start the session afresh"
            );
        }
        let (found, written) = match self.what {
            Pinned::Policy => (
                "a policy cordon finds in the current directory is used only after you trusted its exact content",
                "a sandboxed command could have written it",
            ),
            Pinned::Rules | Pinned::Session => (
                "remembered rules are used only as cordon wrote them or as you trusted them",
                "a sandboxed command could have written them",
            ),
        };
        match &self.reason {
            Reason::NotTrusted => {
                let alt = match self.what {
                    Pinned::Policy => "or name a policy with --policy",
                    Pinned::Rules | Pinned::Session => "or delete the file",
                };
                write!(
                    f,
                    "{p}: not trusted: {found} ({written}); read it, then run `{cmd}`, {alt}"
                )
            }
            Reason::Changed { was, now, .. } => write!(
                f,
                "{p}: changed since you trusted it (sha256 {}… then, {}… now; {written}); review the differences below, then run `{cmd}`",
                &was[..12.min(was.len())],
                &now[..12.min(now.len())]
            ),
            Reason::NoStore => write!(
                f,
                "{p}: cannot tell whether you trusted it: there is no trust store (neither XDG_CONFIG_HOME nor HOME is an absolute path); set one, then run `{cmd}`, or name a policy with --policy"
            ),
            Reason::Store(e) => write!(
                f,
                "{p}: cannot tell whether you trusted it: {e}; fix that, then run `{cmd}`"
            ),
        }
    }
}

/// `path` as one shell word.
fn shell_quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A unified diff from `old` to `new`, at most [`MAX_DIFF_LINES`] lines and
/// [`MAX_DIFF_BYTES`] bytes (then a line saying how much was left out).
fn bounded_diff(old: &str, new: &str) -> String {
    let full = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("trusted", "now")
        .to_string();
    let mut out = String::new();
    let total = full.lines().count();
    for (shown, line) in full.lines().enumerate() {
        if shown == MAX_DIFF_LINES || out.len() + line.len() > MAX_DIFF_BYTES {
            out.push_str(&format!(
                "… ({} more line(s) of the diff left out)\n",
                total - shown
            ));
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// One trust entry, as stored.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    version: u32,
    path: String,
    sha256: String,
    content: String,
}

/// A trust store: one directory of entries, outside the sandbox's reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    dir: Option<PathBuf>,
}

impl TrustStore {
    /// The store in use for this process's environment (see [`store_dirs`]).
    pub fn from_env() -> TrustStore {
        TrustStore::from_vars(|name| std::env::var_os(name))
    }

    /// The store in use for the environment `var` gives.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> TrustStore {
        TrustStore {
            dir: store_dirs(var).into_iter().next(),
        }
    }

    /// A store in `dir` (which holds `trusted/`).
    pub fn at(dir: impl Into<PathBuf>) -> TrustStore {
        TrustStore {
            dir: Some(dir.into()),
        }
    }

    /// Its directory; `None` when the environment names none.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// `Ok` when the operator trusted exactly `file`'s content at its path.
    pub fn check(&self, file: &FileText, what: Pinned) -> Result<(), PolicyError> {
        let refuse = |reason| {
            PolicyError::Untrusted(Box::new(Untrusted {
                path: file.path.clone(),
                what,
                reason,
            }))
        };
        if self.dir.is_none() {
            return Err(refuse(Reason::NoStore));
        }
        match self.entry(&file.path) {
            Err(e) => Err(refuse(Reason::Store(e))),
            Ok(None) => Err(refuse(Reason::NotTrusted)),
            Ok(Some(entry)) => {
                let now = file.sha256();
                if entry.sha256 == now {
                    Ok(())
                } else {
                    Err(refuse(Reason::Changed {
                        diff: bounded_diff(&entry.content, &file.text),
                        was: entry.sha256,
                        now,
                    }))
                }
            }
        }
    }

    /// Trusts `file`'s content at its path, replacing any earlier trust for that path (an
    /// entry that cannot be read is replaced too: the operator's word is the new one). Returns
    /// the SHA-256 that was trusted before, when it differs.
    pub fn trust(&self, file: &FileText) -> Result<Option<String>, PolicyError> {
        let before = self.entry(&file.path).ok().flatten().map(|e| e.sha256);
        let dir = self
            .open(true)
            .map_err(store)?
            .ok_or_else(|| store("the trust store could not be created".into()))?;
        let text = entry_text(&file.path, &file.text).map_err(store)?;
        dir.write(Path::new(&key(&file.path)), text.as_bytes(), 0o600)
            .map_err(|e| store(format!("trust store {}: {e}", self.describe())))?;
        Ok(before.filter(|b| *b != file.sha256()))
    }

    /// Forgets the trust given for `path` (canonical). `true` when there was one.
    pub fn untrust(&self, path: &Path) -> Result<bool, PolicyError> {
        let Some(dir) = self.open(false).map_err(store)? else {
            return Ok(false);
        };
        // The name itself goes, never what a link there points to.
        dir.remove(Path::new(&key(path)))
            .map_err(|e| store(format!("trust store {}: {e}", self.describe())))
    }

    /// Creates the store's directories when missing (mode 0700), so that a sandbox can keep an
    /// existing directory read-only; checks them as [`TrustStore::check`] does.
    pub fn ensure(&self) -> Result<(), PolicyError> {
        self.open(true).map(|_| ()).map_err(store)
    }

    fn describe(&self) -> String {
        self.dir
            .as_ref()
            .map(|d| d.join("trusted").display().to_string())
            .unwrap_or_default()
    }

    /// The entry for `path`, checked: it names `path` and its copy hashes to its SHA-256.
    fn entry(&self, path: &Path) -> Result<Option<Entry>, String> {
        let Some(dir) = self.open(false)? else {
            return Ok(None);
        };
        let name = key(path);
        let bad = |why: String| format!("trust store entry {}/{name}: {why}", self.describe());
        let file = match dir.open_file(Path::new(&name)) {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(None),
            Err(cordon_fs::safe::SafeError::Link(_)) => {
                return Err(bad("it is a symlink, which cordon never writes".into()))
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        let meta = file.metadata().map_err(|e| bad(e.to_string()))?;
        owner_and_mode(&meta).map_err(bad)?;
        let text = read_bounded(&file, MAX_ENTRY_SIZE).map_err(bad)?;
        let entry: Entry = toml::from_str(&text).map_err(|e| bad(e.message().to_string()))?;
        if entry.version != 1 {
            return Err(bad(format!("unknown version {}", entry.version)));
        }
        if Path::new(&entry.path) != path {
            return Err(bad(format!(
                "it is for {}, not for {}",
                entry.path,
                path.display()
            )));
        }
        if sha256_hex(entry.content.as_bytes()) != entry.sha256 {
            return Err(bad("its copy does not match its hash".into()));
        }
        Ok(Some(entry))
    }

    /// Opens `trusted/` (creating the directories when `create`), checking each directory of
    /// the store: no symlink, the caller's (or root's), not writable by others. `None` when it
    /// does not exist and `create` is false. Everything below goes through [`cordon_fs::safe`].
    fn open(&self, create: bool) -> Result<Option<cordon_fs::safe::Dir>, String> {
        use cordon_fs::safe::{Dir, SafeError};
        let Some(base) = &self.dir else {
            return Err(
                "there is no trust store: neither XDG_CONFIG_HOME nor HOME is an absolute path"
                    .into(),
            );
        };
        let err = |at: &Path, why: String| format!("trust store {}: {why}", at.display());
        let not_a_dir = |e: SafeError| match e {
            SafeError::Link(_) | SafeError::NotDir(_) => {
                "not a directory (a symlink there is never followed)".to_string()
            }
            e => e.to_string(),
        };
        owned_by_caller(base).map_err(|e| err(base, e))?;
        if create {
            // The way to the store's parent is the operator's (created when missing); the
            // store's own `cordon/trusted` is cordon's: never created through a link (one
            // planted at `cordon` by a run that had it in reach would get `trusted` made in its
            // target).
            let parent = base.parent().filter(|p| !p.as_os_str().is_empty());
            let name = base.file_name();
            let (Some(parent), Some(name)) = (parent, name) else {
                return Err(err(base, "not a directory path".into()));
            };
            cordon_fs::safe::create_path(parent, 0o700)
                .and_then(|p| p.create_dirs(&Path::new(name).join("trusted"), 0o700))
                .map_err(|e| err(base, format!("cannot create it: {e}")))?;
        }
        let base_dir = match Dir::anchor_nofollow(base) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(err(base, not_a_dir(e))),
        };
        dir_ok(&base_dir).map_err(|e| err(base, e))?;
        let trusted = base.join("trusted");
        let dir = match base_dir.dir(Path::new("trusted")) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(err(&trusted, not_a_dir(e))),
        };
        dir_ok(&dir).map_err(|e| err(&trusted, e))?;
        Ok(Some(dir))
    }
}

/// A store operation's refusal. The helpers below build its words as text, because
/// [`TrustStore::check`] puts the same words into an [`Untrusted`] reason instead.
fn store(why: String) -> PolicyError {
    PolicyError::Store { why }
}

fn dir_ok(dir: &cordon_fs::safe::Dir) -> Result<(), String> {
    let st = dir.stat().map_err(|e| e.to_string())?;
    // st_mode is u16 on macOS.
    #[allow(clippy::unnecessary_cast)]
    let mode = st.st_mode as u32;
    owner_mode(st.st_uid, mode)
}

/// A store directory or entry must belong to the caller (or root) and not be writable by
/// group or others: anyone else who can write it can trust files in the caller's name.
fn owner_and_mode(meta: &std::fs::Metadata) -> Result<(), String> {
    owner_mode(meta.uid(), meta.mode())
}

/// Whether a file owned by `uid` belongs to the caller or to root, as far as this process can
/// tell. In a user namespace (an agent host's sandbox, a rootless container) the files of
/// every owner it does not map show as the overflow uid (65534): root's `/`, `/tmp` and
/// `/home` among them, and root cannot be told from another unmapped user there. That uid is
/// accepted inside a user namespace: nobody in it can use an unmapped owner's rights (no
/// capability covers an unmapped inode), so what it could do to such a directory its mode
/// allows to everyone. Outside one, 65534 is an ordinary, foreign uid.
pub fn caller_or_root(uid: u32) -> bool {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    uid == euid || uid == 0 || (uid == overflow_uid() && in_user_namespace())
}

/// The uid the kernel shows for an owner this user namespace does not map.
fn overflow_uid() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/overflowuid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65534)
}

/// Whether this process runs in a user namespace other than the machine's, whose map is the
/// identity over every uid; an unreadable map (macOS) counts as the machine's.
fn in_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() != ["0", "0", "4294967295"])
}

fn owner_mode(uid: u32, mode: u32) -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if !caller_or_root(uid) {
        return Err(format!(
            "it belongs to uid {uid}, not to uid {euid} running cordon (is HOME another user's, as with sudo -E?)"
        ));
    }
    if mode & 0o022 != 0 {
        return Err(format!(
            "group or others may write it (mode {:o}); make it 0700 (a directory) or 0600",
            mode & 0o7777
        ));
    }
    Ok(())
}

/// Every part of `path` that exists (symlinks as themselves) belongs to the caller or to root.
/// The store follows HOME and XDG_CONFIG_HOME, which `sudo -E` carries over to root: root would
/// otherwise trust what another user's files say, and create directories in their home.
fn owned_by_caller(path: &Path) -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if caller_or_root(m.uid()) => {}
            Ok(m) => {
                return Err(format!(
                    "{} belongs to uid {}, not to uid {euid} running cordon (is HOME another user's, as with sudo -E?)",
                    at.display(),
                    m.uid()
                ))
            }
            Err(_) => break,
        }
    }
    Ok(())
}

/// The entry's file name: the SHA-256 of the canonical path.
fn key(path: &Path) -> String {
    format!("{}.toml", sha256_hex(path.as_os_str().as_bytes()))
}

fn entry_text(path: &Path, content: &str) -> Result<String, String> {
    let path = path.to_str().ok_or_else(|| {
        format!(
            "{}: the path is not UTF-8, so its trust cannot be recorded; rename the directory",
            path.display()
        )
    })?;
    Ok(format!(
        "# Written by cordon: the operator trusted this exact content of this file.\n\
         # Do not edit; `cordon policy trust FILE` replaces it, `cordon policy untrust FILE`\n\
         # removes it.\nversion = 1\npath = {}\nsha256 = \"{}\"\ncontent = {}\n",
        toml_string(path),
        sha256_hex(content.as_bytes()),
        toml_string(content)
    ))
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &Path, text: &str) -> FileText {
        std::fs::write(path, text).unwrap();
        read_file(path, Follow::Never).unwrap()
    }

    #[test]
    fn trust_is_pinned_to_path_and_content() {
        let d = tempfile::tempdir().unwrap();
        let store = TrustStore::at(d.path().join("config/cordon"));
        let a = file(&d.path().join("a.toml"), "version = 1\n");
        let err = store.check(&a, Pinned::Policy).unwrap_err();
        assert!(err.to_string().contains("not trusted"), "{err}");
        assert_eq!(store.trust(&a).unwrap(), None);
        store.check(&a, Pinned::Policy).unwrap();
        // Same content elsewhere: not trusted.
        let b = file(&d.path().join("b.toml"), "version = 1\n");
        assert!(store.check(&b, Pinned::Policy).is_err());
        // Changed content: refused with a diff.
        let a2 = file(&d.path().join("a.toml"), "version = 1\n[sandbox]\n");
        let err = store.check(&a2, Pinned::Policy).unwrap_err();
        assert!(err.to_string().contains("changed since"), "{err}");
        let PolicyError::Untrusted(u) = &err else {
            panic!("{err}")
        };
        assert!(u.diff().unwrap().lines().any(|l| l == "+[sandbox]"));
        assert_eq!(store.trust(&a2).unwrap(), Some(a.sha256()));
        store.check(&a2, Pinned::Policy).unwrap();
        assert!(store.untrust(&a2.path).unwrap());
        assert!(!store.untrust(&a2.path).unwrap());
        assert!(store.check(&a2, Pinned::Policy).is_err());
    }

    /// Issue 21, class 1: creating the store never follows a link planted at its own
    /// directory (a run that had `~/.config/cordon` in reach): refused by name, and nothing is
    /// made in the link's target.
    #[test]
    fn creating_the_store_never_follows_a_link_at_it() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::create_dir(d.path().join("cfg")).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("cfg/cordon")).unwrap();
        let store = TrustStore::at(d.path().join("cfg/cordon"));
        let err = store.ensure().unwrap_err().to_string();
        assert!(
            err.contains(&d.path().join("cfg/cordon").display().to_string())
                && err.contains("symbolic link"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0, "{err}");
        // Missing directories on the way are made; the store is then usable.
        let store = TrustStore::at(d.path().join("new/deep/cordon"));
        store.ensure().unwrap();
        assert!(d.path().join("new/deep/cordon/trusted").is_dir());
    }

    #[test]
    fn store_files_are_private() {
        let d = tempfile::tempdir().unwrap();
        let store = TrustStore::at(d.path().join("cordon"));
        let a = file(&d.path().join("a.toml"), "version = 1\n");
        store.trust(&a).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&d.path().join("cordon")), 0o700);
        assert_eq!(mode(&d.path().join("cordon/trusted")), 0o700);
        let entry = d.path().join("cordon/trusted").join(key(&a.path));
        assert_eq!(mode(&entry), 0o600);
        // Writable by others: refused.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o622)).unwrap();
        let err = store.check(&a, Pinned::Policy).unwrap_err().to_string();
        assert!(err.contains("group or others may write"), "{err}");
        // A link as the entry: refused, never followed; trusting again refuses it by name too
        // (issue 21: cordon's writes refuse a planted link rather than replace it unseen), and
        // works once the link is gone.
        std::fs::remove_file(&entry).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        std::os::unix::fs::symlink(&victim, &entry).unwrap();
        let err = store.check(&a, Pinned::Policy).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        let err = store.trust(&a).unwrap_err().to_string();
        assert!(
            err.contains(&entry.display().to_string()) && err.contains("symbolic link"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert!(
            store.untrust(&a.path).unwrap(),
            "the link itself is removed"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        store.trust(&a).unwrap();
        store.check(&a, Pinned::Policy).unwrap();
        // A link as the store's directory: refused.
        std::fs::remove_file(&entry).unwrap();
        std::fs::rename(d.path().join("cordon"), d.path().join("real")).unwrap();
        std::os::unix::fs::symlink(d.path().join("real"), d.path().join("cordon")).unwrap();
        let err = store.trust(&a).unwrap_err().to_string();
        assert!(
            err.contains(&d.path().join("cordon").display().to_string())
                && err.contains("symbolic link"),
            "{err}"
        );
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("cordon.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        for follow in [Follow::Never, Follow::Links] {
            let err = read_file(&fifo, follow).unwrap_err().to_string();
            assert!(err.contains("not a regular file (a FIFO)"), "{err}");
        }
        let err = read_file(Path::new("/dev/zero"), Follow::Links)
            .unwrap_err()
            .to_string();
        assert!(err.contains("character device"), "{err}");
        let link = d.path().join("link.toml");
        std::fs::write(d.path().join("real.toml"), "version = 1\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("real.toml"), &link).unwrap();
        let err = read_file(&link, Follow::Never).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        assert!(read_file(&link, Follow::Links).is_ok());
        let big = d.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_FILE_SIZE as usize + 1]).unwrap();
        let err = read_file(&big, Follow::Never).unwrap_err().to_string();
        assert!(err.contains("larger than 1024 KiB"), "{err}");
    }

    #[test]
    fn diffs_are_bounded() {
        let old: String = (0..1000).map(|i| format!("a{i}\n")).collect();
        let new: String = (0..1000).map(|i| format!("b{i}\n")).collect();
        let d = bounded_diff(&old, &new);
        assert!(d.lines().count() <= MAX_DIFF_LINES + 1);
        assert!(d.len() <= MAX_DIFF_BYTES + 100);
        assert!(d.lines().last().unwrap().contains("left out"), "{d}");
    }

    #[test]
    fn store_places_follow_xdg_then_home() {
        let vars = |x: Option<&str>, h: Option<&str>| {
            let (x, h) = (x.map(OsString::from), h.map(OsString::from));
            store_dirs(move |n| match n {
                "XDG_CONFIG_HOME" => x.clone(),
                "HOME" => h.clone(),
                _ => None,
            })
        };
        assert_eq!(
            vars(Some("/x"), Some("/h")),
            [
                PathBuf::from("/x/cordon"),
                PathBuf::from("/h/.config/cordon")
            ]
        );
        assert_eq!(
            vars(Some("rel"), Some("/h")),
            [PathBuf::from("/h/.config/cordon")]
        );
        assert_eq!(vars(Some("/a/../b"), None), Vec::<PathBuf>::new());
        assert_eq!(
            vars(Some("/h/.config"), Some("/h")),
            [PathBuf::from("/h/.config/cordon")]
        );
    }
}
