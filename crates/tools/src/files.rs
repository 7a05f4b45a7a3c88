//! The file tools: `read_file`, `write_file`, `edit_file`, `list_dir` and `delete_file`
//! over the policy's named roots (`[sandbox.paths.NAME]`).
//!
//! ## Paths
//!
//! A tool path is **`ROOT/relative/path`**, where `ROOT` is a root's *name*:
//! `notes/a.txt` is `a.txt` in the root named `notes`, and `notes` alone is that root's
//! directory. An absolute path is accepted when it lies inside a root's directory (the
//! deepest such root is used). Paths are never relative to the current directory. Keys,
//! summaries and the normalised arguments of an assessment use the *real* location in
//! `ROOT/rel` form, read back from the opened descriptor: `notes/x/../a.txt` and a symlink
//! `notes/link.txt -> a.txt` are both reported as `notes/a.txt` when that is what they open.
//!
//! ## What is refused (a `deny` concern, with the check's tag as the rule `builtin:TAG`)
//!
//! - `path`: empty paths, NUL bytes, an unknown root name, absolute paths outside every
//!   root, `..` that climbs above the root, symlinks that lead outside it (anywhere on the
//!   way), symlink loops and `/proc` magic links. Resolution is done by the kernel beneath
//!   the root's directory descriptor (`openat2` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_MAGICLINKS`, see [`resolve`]; on macOS a component-by-component walk with
//!   the same rules, [`resolve::walk`]), so a directory swapped for a symlink during the call
//!   cannot redirect it;
//! - `file_type`: devices, fifos and sockets (checked on an `O_PATH` descriptor, which
//!   never opens the device itself; on macOS checked before anything is opened);
//! - `mode`: writes (write, edit, delete) to a read-only root;
//! - `protected`: writes to a `sandbox.protected` path inside a writable root;
//! - `policy_file`: writes (write, edit, delete) to cordon's own files, wherever they are: the
//!   policy file and its `cordon.rules.toml`, the audit log (with its head and lock files, the
//!   after-run scans' `scans/` beside it and, unless a writable root is there, its directory),
//!   the trust store and the session store
//!   ([`crate::assess::policy_files`]);
//! - `suffix`: files whose name does not end with one of the root's `suffixes` (for a read
//!   through a symlink, the name of the file actually read counts);
//! - `symlink`: writing or editing through a symlink as the last component (deleting a
//!   symlink removes the link only, and is allowed);
//! - `size`: reading or editing a file over [`Limits::max_read`] (10 MiB), writing content
//!   over [`Limits::max_write`] (10 MiB).
//!
//! ## What is not refused: facts for the engine
//!
//! Otherwise the assessment hands the approval engine facts ([`FileAccess`]): the root that
//! holds the real location, whether the call writes, and a persistence-surface hit. The
//! engine decides (`cordon_approval::Engine::explain`, as for the shell): a key no rule
//! matches gets the root's `read_approval` / `write_approval` as an `ask` (rule
//! `builtin:read_approval` / `builtin:write_approval`), else the mode's `allow` (rule
//! `default`); a write on the surface asks at least (rule `builtin:surface`), never allowed by
//! the root's mode alone; then session grants, the doom loop and the mode, as `exec` and
//! `cordon check` both see them.
//!
//! Settings come from the deepest root that holds the real location, so a read-only root
//! nested in a writable one stays read-only whichever name reaches it.
//!
//! ## Hardlinks
//!
//! A hardlink inside a root to a file elsewhere *is* inside the root by path, and is read
//! like any file there — Landlock grants the same, as it checks paths, not inodes. Writes
//! never modify a file in place: they write a temporary file beside the target and rename
//! it over the target, so writing to a hardlink replaces the link and leaves the other
//! file untouched.
//!
//! ## Execution
//!
//! [`Tool::execute`] assesses the call again and uses the descriptors of that assessment:
//! it refuses a `deny`, and refuses when the file changed since the assessment it was given
//! (device, inode, size and change times are compared), so what runs is what was previewed.
//! Missing directories are created one by one without following symlinks; new files are
//! renamed into place with `RENAME_NOREPLACE`, so a file that appeared meanwhile is never
//! clobbered.

pub mod preview;
pub mod resolve;

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cordon_policy::verdict::{Decision, RuleRef};
use cordon_policy::{Action, Mode, Policy};
use rustix::fs::{AtFlags, FileType, Mode as FileMode, OFlags, RawMode, RenameFlags};
use rustix::io::Errno;
use serde_json::{json, Value};

use crate::assess::{Concern, Level};
use crate::tool::{
    string_args, string_schema, Assessment, FileAccess, Precondition, Presentation, Preview, Tool,
    ToolError,
};
use resolve::{file_type, type_name, Parent, Refusal, ResolveError, Roots, Target};

/// Size limits of the file tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest file read, edited or shown in a diff (bytes).
    pub max_read: u64,
    /// Largest content written (bytes).
    pub max_write: u64,
    /// Most entries `list_dir` returns.
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_read: 10 << 20,
            max_write: 10 << 20,
            max_entries: 10_000,
        }
    }
}

/// One file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `read_file {path}`
    Read,
    /// `write_file {path, content}`
    Write,
    /// `edit_file {path, old, new}`
    Edit,
    /// `list_dir {path}`
    List,
    /// `delete_file {path}`
    Delete,
    /// `attach_file {path}`: share a file with another agent. Assessed and carried out as a
    /// read of that path (the same roots, modes, suffixes and `read_approval`).
    Attach,
}

impl FileOp {
    /// Every file operation.
    pub const ALL: [FileOp; 6] = [
        FileOp::Read,
        FileOp::Write,
        FileOp::Edit,
        FileOp::List,
        FileOp::Delete,
        FileOp::Attach,
    ];

    /// The tool's name.
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Read => "read_file",
            FileOp::Write => "write_file",
            FileOp::Edit => "edit_file",
            FileOp::List => "list_dir",
            FileOp::Delete => "delete_file",
            FileOp::Attach => "attach_file",
        }
    }

    /// Whether it changes files.
    pub fn writes(self) -> bool {
        matches!(self, FileOp::Write | FileOp::Edit | FileOp::Delete)
    }

    fn params(self) -> &'static [(&'static str, &'static str)] {
        const PATH: (&str, &str) = (
            "path",
            "ROOT/relative/path (ROOT is a root's name) or an absolute path inside a root",
        );
        match self {
            FileOp::Read | FileOp::Attach | FileOp::List | FileOp::Delete => &[PATH],
            FileOp::Write => &[PATH, ("content", "the file's new content")],
            FileOp::Edit => &[
                PATH,
                ("old", "text that occurs exactly once in the file"),
                ("new", "the text that replaces it"),
            ],
        }
    }

    fn description(self) -> &'static str {
        match self {
            FileOp::Read => "read a text file inside a root",
            FileOp::Write => "create or replace a file inside a root",
            FileOp::Edit => "replace text that occurs exactly once in a file",
            FileOp::List => "list a directory inside a root",
            FileOp::Delete => "delete a file inside a root",
            FileOp::Attach => {
                "share a file inside a root with another agent (assessed as a read of that path)"
            }
        }
    }
}

/// The state shared by the file tools of one policy: its roots, open, and the limits.
#[derive(Debug)]
pub struct FileTools {
    roots: Roots,
    limits: Limits,
    /// cordon's own files ([`crate::assess::policy_files`]), canonical where they exist.
    policy_files: Vec<std::path::PathBuf>,
    /// `sandbox.git = "protect"`: the kernel keeps git's configuration surface read-only, and
    /// so do the file tools.
    git_protected: bool,
    /// The operator's home (canonical), whose dotfiles are on the surface where a root holds it.
    home: Option<std::path::PathBuf>,
}

/// The file tools over `policy`'s roots, with the default limits.
pub fn file_tools(policy: &Policy) -> Result<Vec<Box<dyn Tool>>, ToolError> {
    Ok(FileTools::new(policy, Limits::default())?.tools())
}

impl FileTools {
    /// Opens `policy`'s roots.
    pub fn new(policy: &Policy, limits: Limits) -> Result<Arc<FileTools>, ToolError> {
        let roots = Roots::new(policy).map_err(|e| ToolError::Config(e.to_string()))?;
        let policy_files = crate::assess::policy_files(policy, |name| std::env::var_os(name))
            .into_iter()
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .collect();
        Ok(Arc::new(FileTools {
            roots,
            limits,
            policy_files,
            git_protected: policy.sandbox.git == cordon_policy::GitDir::Protect,
            home: std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .filter(|h| h.is_absolute())
                .and_then(|h| std::fs::canonicalize(h).ok()),
        }))
    }

    /// The open roots.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// One tool.
    pub fn tool(self: &Arc<Self>, op: FileOp) -> FileTool {
        FileTool {
            op,
            shared: Arc::clone(self),
        }
    }

    /// All the file tools.
    pub fn tools(self: &Arc<Self>) -> Vec<Box<dyn Tool>> {
        FileOp::ALL
            .iter()
            .map(|&op| Box::new(self.tool(op)) as Box<dyn Tool>)
            .collect()
    }
}

/// A file tool.
#[derive(Debug, Clone)]
pub struct FileTool {
    op: FileOp,
    shared: Arc<FileTools>,
}

/// How an assessment stops early.
enum Stop {
    Deny(Refusal),
    Fail(ToolError),
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Stop {
        Stop::Deny(r)
    }
}

impl From<ToolError> for Stop {
    fn from(e: ToolError) -> Stop {
        Stop::Fail(e)
    }
}

/// An assessment together with the descriptors to carry it out.
struct Plan {
    assessment: Assessment,
    run: Run,
}

enum Run {
    Denied,
    Read {
        bytes: Vec<u8>,
    },
    List {
        dir: OwnedFd,
        root: usize,
    },
    Write {
        parent: Parent,
        content: Vec<u8>,
        perms: Option<RawMode>,
        exists: bool,
    },
    Delete {
        dir: OwnedFd,
        name: OsString,
    },
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// A refusal as the assessment's `deny` concern (final in the engine, whatever the rules say).
fn refused(r: Refusal) -> Concern {
    Concern {
        level: Level::Deny,
        reason: r.reason,
        check: r.tag,
        found: None,
        lift: None,
    }
}

/// The refusal `execute` reports for a refused assessment.
fn denied_error(tool: &str, a: &Assessment) -> ToolError {
    ToolError::Denied {
        tool: tool.into(),
        decision: a.refusal().unwrap_or_else(|| Decision {
            action: Action::Deny,
            reason: "the call was refused".into(),
            rule: RuleRef::Builtin("path"),
        }),
    }
}

/// The fingerprint of a file: device, inode, type and mode, size, modification and change
/// times. Empty for "absent".
fn fingerprint(st: Option<&rustix::fs::Stat>) -> Precondition {
    Precondition(match st {
        None => Vec::new(),
        Some(st) => vec![
            st.st_dev as i128,
            st.st_ino as i128,
            st.st_mode as i128,
            st.st_size as i128,
            st.st_mtime as i128,
            st.st_mtime_nsec as i128,
            st.st_ctime as i128,
            st.st_ctime_nsec as i128,
        ],
    })
}

fn io_err(tool: &str, what: impl Into<String>, e: impl Into<std::io::Error>) -> ToolError {
    ToolError::Io {
        tool: tool.to_string(),
        what: what.into(),
        source: e.into(),
    }
}

/// Opens an `O_PATH` descriptor for reading, through `/proc/self/fd` (the same inode, no
/// path lookup), and checks it is still the same regular file.
#[cfg(target_os = "linux")]
fn reopen_read(fd: BorrowedFd<'_>, st: &rustix::fs::Stat) -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    let file = rustix::fs::open(
        format!("/proc/self/fd/{}", fd.as_raw_fd()),
        OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        FileMode::empty(),
    )?;
    let now = rustix::fs::fstat(&file)?;
    if now.st_dev != st.st_dev
        || now.st_ino != st.st_ino
        || file_type(&now) != FileType::RegularFile
    {
        return Err(std::io::Error::other(
            "the file was replaced while opening it",
        ));
    }
    Ok(File::from(file))
}

/// On macOS the descriptor is already open for reading ([`resolve::INSPECT`]): a duplicate,
/// read from the start, after checking it is still the same regular file.
#[cfg(not(target_os = "linux"))]
fn reopen_read(fd: BorrowedFd<'_>, st: &rustix::fs::Stat) -> std::io::Result<File> {
    let file = rustix::io::dup(fd)?;
    let now = rustix::fs::fstat(&file)?;
    if now.st_dev != st.st_dev
        || now.st_ino != st.st_ino
        || file_type(&now) != FileType::RegularFile
    {
        return Err(std::io::Error::other(
            "the file was replaced while opening it",
        ));
    }
    rustix::fs::seek(&file, rustix::fs::SeekFrom::Start(0))?;
    Ok(File::from(file))
}

impl FileTool {
    /// The operation.
    pub fn op(&self) -> FileOp {
        self.op
    }

    fn roots(&self) -> &Roots {
        &self.shared.roots
    }

    fn fail(&self, message: impl Into<String>) -> Stop {
        Stop::Fail(ToolError::Failed {
            tool: self.op.name().into(),
            message: message.into(),
        })
    }

    fn resolve_stop(&self, e: ResolveError, display: &str) -> Stop {
        match e {
            ResolveError::Refused(r) => Stop::Deny(r),
            ResolveError::NotFound => self.fail(format!("`{display}` does not exist")),
            ResolveError::NotDir => self.fail(format!(
                "`{display}`: a component on the way is not a directory"
            )),
            ResolveError::Io(e) => {
                Stop::Fail(io_err(self.op.name(), format!("open `{display}`"), e))
            }
        }
    }

    /// Validates `args` and builds the plan.
    fn plan(&self, args: &Value, want_preview: bool) -> Result<Plan, ToolError> {
        let name = self.op.name();
        let params: Vec<&str> = self.op.params().iter().map(|(k, _)| *k).collect();
        let a = string_args(name, args, &params, &[])?;
        let path = a["path"];
        let target = match self.roots().parse(path) {
            Ok(t) => t,
            Err(r) => return Ok(self.denied(path, args, r)),
        };
        let result = match self.op {
            FileOp::Read | FileOp::Attach => self.plan_read(&target, want_preview),
            FileOp::List => self.plan_list(&target),
            FileOp::Write | FileOp::Edit | FileOp::Delete => {
                self.plan_write(&target, &a, want_preview)
            }
        };
        match result {
            Ok(p) => Ok(p),
            Err(Stop::Deny(r)) => Ok(self.denied(&target.display, args, r)),
            Err(Stop::Fail(e)) => Err(e),
        }
    }

    fn denied(&self, shown: &str, args: &Value, r: Refusal) -> Plan {
        let name = self.op.name();
        Plan {
            assessment: Assessment::new(name, args.clone(), vec![name.into(), shown.into()])
                .with_concern(refused(r))
                .with_presentation(Presentation::summary(format!("{name} {shown}"))),
            run: Run::Denied,
        }
    }

    /// What the engine decides from: the root that holds the path (by name), whether the call
    /// writes, and a persistence-surface hit.
    fn access(&self, root: usize, surface: Option<String>) -> FileAccess {
        FileAccess {
            root: self.roots().roots()[root].config.name.clone(),
            writes: self.op.writes(),
            surface,
        }
    }

    /// The persistence surface (`cordon_policy::surface`): a write, edit or delete there makes
    /// a program of the operator's run something later, outside any sandbox, so the root's
    /// mode alone never allows it. Refused where the kernel keeps it read-only too (git's
    /// configuration under `sandbox.git = "protect"`) and for cordon's own files; otherwise
    /// the hit (why) is a fact the engine asks about at least.
    fn surface(
        &self,
        root: usize,
        real: &std::path::Path,
        t: &Target,
        key: &str,
    ) -> Result<Option<String>, Stop> {
        use cordon_policy::surface::{
            classify, classify_home, classify_home_real, folded, home_dotted, in_moved_home,
            linked_from_surface, looks_like_git_dir, named_at_startup, named_by_configuration,
            named_by_environment, named_by_envrc, named_by_git_config, named_dotenv, Kind,
        };
        let dir = &self.roots().roots()[root].config.root;
        let Ok(rel) = real.strip_prefix(dir) else {
            return Ok(None);
        };
        // The path as named too: through a link on the way (`.claude -> cfg`), the host still
        // reads `.claude/settings.json`; and so after a `..` (`m/../.claude/settings.json`).
        // Each as written and as a file system that ignores case reads it (`.ENVRC` is
        // `.envrc` on macOS and in an ext4 casefold directory).
        let on_surface_at = |base: &std::path::Path, rel: &std::path::Path| {
            [Some(rel.to_path_buf()), folded(rel)]
                .into_iter()
                .flatten()
                .find_map(|rel| classify(&rel, &|d| looks_like_git_dir(&base.join(d))))
        };
        let on_surface = |rel: &std::path::Path| on_surface_at(dir, rel);
        // The names above the root count as much as those in it: in the root `/p/.claude`,
        // `settings.json` is Claude Code's settings; in `/p/.git/hooks` or a bare repository
        // above, each file is git's (the after-run scan's `surface::within_root`). So the
        // whole path is classified too, from `/`.
        let above_root = || {
            let slash = std::path::Path::new("/");
            on_surface_at(slash, real.strip_prefix(slash).ok()?)
        };
        let named = (t.root == root)
            .then(|| as_named(dir, &t.rel))
            .flatten()
            .and_then(|named| on_surface(&named));
        // At the home: by where each entry really is, through the operator's own links
        // (`~/.config -> dotfiles/config`).
        let at_home = self.shared.home.as_deref().and_then(|h| {
            real.strip_prefix(h)
                .ok()
                .and_then(|rel| {
                    classify_home(rel)
                        .or_else(|| classify_home(&folded(rel)?))
                        // Where the root holds the home (not a project kept under a dot-name
                        // of it, `~/.dotfiles`, which the operator made a root of its own).
                        .or_else(|| h.starts_with(dir).then(|| home_dotted(rel)).flatten())
                })
                .or_else(|| classify_home_real(h, real, dir))
        });
        // What the surface points at: a link of it resolving here (`.envrc -> envrc.shared`),
        // the directory `core.hooksPath` names, a file git's configuration includes, what an
        // `.envrc` above loads, a file a configuration of the surface names.
        let home = self.shared.home.as_deref();
        let Some(hit) = on_surface(rel)
            .or_else(|| completes_git_dir(dir, rel))
            .or(named)
            .or_else(above_root)
            .or(at_home)
            .or_else(|| in_moved_home(real, &|v| std::env::var_os(v)))
            .or_else(|| named_by_environment(real, &|v| std::env::var_os(v)))
            .or_else(|| named_at_startup(real, home))
            .or_else(|| linked_from_surface(real))
            .or_else(|| named_by_git_config(real, home, &|v| std::env::var_os(v)))
            .or_else(|| named_by_envrc(real, home))
            .or_else(|| named_dotenv(real, home, &|v| std::env::var_os(v)))
            .or_else(|| named_by_configuration(real, home))
        else {
            return Ok(None);
        };
        match hit.kind {
            Kind::Cordon => Err(Stop::Deny(Refusal::new(
                "policy_file",
                format!(
                    "`{key}` is a cordon file ({}): a person edits it, not the agent",
                    hit.why
                ),
            ))),
            // The kernel keeps only the root's own `.git` read-only, or the root when it is a
            // git directory itself (`profile::git_protected`); a nested or bare repository's
            // configuration is the after-run scan's, and the refusal says so rather than
            // claim a protection the kernel does not apply.
            Kind::Git if self.shared.git_protected => Err(Stop::Deny(Refusal::new(
                "protected",
                if rel.starts_with(".git")
                    || dir.file_name().is_some_and(|n| n == ".git")
                    || looks_like_git_dir(dir)
                {
                    format!(
                        "`{key}` is inside a git directory and sandbox.git = \"protect\" keeps it read-only ({})",
                        hit.why
                    )
                } else {
                    format!(
                        "`{key}` is git's configuration of a nested or bare repository, which sandbox.git = \"protect\" keeps from the agent's file tools ({}); the kernel keeps only the root's own .git read-only, and the after-run scan undoes a command's change here",
                        hit.why
                    )
                },
            ))),
            _ => Ok(Some(hit.why.to_string())),
        }
    }

    /// Reads and listings of cordon's own files are refused too (docs/mcp.md): the policy says
    /// what the agent may not do, the log what it did, the stores what was trusted.
    /// A regular file with more than one link is compared with cordon's own files by inode
    /// too (`st`): a hard link elsewhere in a root (`ln cordon.toml notes.txt`) is the same
    /// file under a name the path check does not know.
    fn check_own(
        &self,
        real: &std::path::Path,
        key: &str,
        st: Option<&rustix::fs::Stat>,
    ) -> Result<(), Stop> {
        use std::os::unix::fs::MetadataExt;
        let same_file = |p: &std::path::PathBuf| {
            st.filter(|st| st.st_nlink > 1 && file_type(st) == FileType::RegularFile)
                .is_some_and(|st| {
                    std::fs::metadata(p)
                        .is_ok_and(|m| m.is_file() && m.dev() == st.st_dev && m.ino() == st.st_ino)
                })
        };
        match self
            .shared
            .policy_files
            .iter()
            .find(|p| real.starts_with(p) || same_file(p))
        {
            Some(p) => Err(Stop::Deny(Refusal::new(
                "policy_file",
                format!(
                    "`{key}` is cordon's own file `{}` (the policy, its rules, the audit log, the trust or session store)",
                    p.display()
                ),
            ))),
            None => Ok(()),
        }
    }

    fn check_suffix(
        &self,
        root: usize,
        key: &str,
        file_name: &std::ffi::OsStr,
    ) -> Result<(), Stop> {
        let cfg = &self.roots().roots()[root].config;
        if cfg.suffixes.is_empty() {
            return Ok(());
        }
        let n = file_name.to_string_lossy();
        if cfg.suffixes.iter().any(|s| n.ends_with(s.as_str())) {
            return Ok(());
        }
        Err(Stop::Deny(Refusal::new(
            "suffix",
            format!(
                "`{key}` does not end with a suffix the root `{}` allows ({})",
                cfg.name,
                cfg.suffixes.join(", ")
            ),
        )))
    }

    fn check_size(&self, what: &str, key: &str, size: u64, max: u64) -> Result<(), Stop> {
        if size > max {
            return Err(Stop::Deny(Refusal::new(
                "size",
                format!("{what} `{key}` is {size} bytes; the limit is {max} bytes"),
            )));
        }
        Ok(())
    }

    /// Reads a whole regular file (at most `max_read` bytes) through its `O_PATH`
    /// descriptor; fails when it changed while being read. Returns the bytes and the stat
    /// after reading.
    fn read_whole(
        &self,
        fd: BorrowedFd<'_>,
        st: &rustix::fs::Stat,
        key: &str,
    ) -> Result<(Vec<u8>, rustix::fs::Stat), Stop> {
        let name = self.op.name();
        let file = reopen_read(fd, st)
            .map_err(|e| Stop::Fail(io_err(name, format!("open `{key}`"), e)))?;
        let mut bytes = Vec::with_capacity(st.st_size.max(0) as usize);
        file.take(self.shared.limits.max_read + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Stop::Fail(io_err(name, format!("read `{key}`"), e)))?;
        let after = rustix::fs::fstat(fd)
            .map_err(|e| Stop::Fail(io_err(name, format!("stat `{key}`"), e)))?;
        if fingerprint(Some(st)) != fingerprint(Some(&after))
            || bytes.len() as u64 != after.st_size as u64
        {
            return Err(self.fail(format!(
                "`{key}` changed while it was being read; try again"
            )));
        }
        Ok((bytes, after))
    }

    fn plan_read(&self, t: &Target, want_preview: bool) -> Result<Plan, Stop> {
        let fd = match self.roots().open(t, resolve::INSPECT) {
            Ok(fd) => fd,
            Err(ResolveError::NotFound) => {
                // A refusal by policy comes before "does not exist".
                if let Some(n) = t.rel.file_name() {
                    self.check_suffix(t.root, &t.display, n)?;
                }
                return Err(self.resolve_stop(ResolveError::NotFound, &t.display));
            }
            Err(e) => return Err(self.resolve_stop(e, &t.display)),
        };
        let st =
            rustix::fs::fstat(&fd).map_err(|e| Stop::Fail(io_err(self.op.name(), "stat", e)))?;
        let (root, real) = self.roots().locate(fd.as_fd())?;
        let key = self.roots().key(root, &real)?;
        self.check_own(&real, &key, Some(&st))?;
        match file_type(&st) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err(self.fail(format!("`{key}` is a directory; use list_dir")))
            }
            other => {
                return Err(Stop::Deny(Refusal::new(
                    "file_type",
                    format!(
                        "`{key}` is a {}; the file tools only touch regular files",
                        type_name(other)
                    ),
                )))
            }
        }
        self.check_suffix(root, &key, real.file_name().unwrap_or_default())?;
        self.check_size("file", &key, st.st_size as u64, self.shared.limits.max_read)?;
        let (bytes, after) = self.read_whole(fd.as_fd(), &st, &key)?;
        let presentation = if want_preview {
            preview::content(format!("read {key} ({} bytes)", bytes.len()), &bytes)
        } else {
            Presentation::summary(format!("read {key}"))
        };
        let mut a = Assessment::new(
            self.op.name(),
            json!({ "path": key }),
            vec![self.op.name().into(), key.clone()],
        )
        .with_access(self.access(root, None))
        .with_presentation(presentation);
        a.precondition = Some(fingerprint(Some(&after)));
        Ok(Plan {
            assessment: a,
            run: Run::Read { bytes },
        })
    }

    fn plan_list(&self, t: &Target) -> Result<Plan, Stop> {
        let fd = match self.roots().open(t, resolve::INSPECT | OFlags::DIRECTORY) {
            Ok(fd) => fd,
            Err(ResolveError::NotDir) => {
                return Err(self.fail(format!("`{}` is not a directory", t.display)))
            }
            Err(e) => return Err(self.resolve_stop(e, &t.display)),
        };
        let (root, real) = self.roots().locate(fd.as_fd())?;
        let key = self.roots().key(root, &real)?;
        self.check_own(&real, &key, None)?;
        let a = Assessment::new(
            self.op.name(),
            json!({ "path": key }),
            vec![self.op.name().into(), key.clone()],
        )
        .with_access(self.access(root, None))
        .with_presentation(Presentation::summary(format!("list {key}")));
        Ok(Plan {
            assessment: a,
            run: Run::List { dir: fd, root },
        })
    }

    fn plan_write(
        &self,
        t: &Target,
        a: &std::collections::BTreeMap<&str, &str>,
        want_preview: bool,
    ) -> Result<Plan, Stop> {
        let name = self.op.name();
        let parent = self.roots().parent(t).map_err(|e| match e {
            ResolveError::NotFound => self.fail(format!("`{}`: no such directory", t.display)),
            e => self.resolve_stop(e, &t.display),
        })?;
        if self.op != FileOp::Write && !parent.missing.is_empty() {
            return Err(self.fail(format!("`{}` does not exist", t.display)));
        }
        let real_dir = self.roots().fd_path(parent.dir.as_fd())?;
        let mut real = real_dir;
        for m in &parent.missing {
            real.push(m);
        }
        real.push(&parent.name);
        let root = self.roots().owner(&real).ok_or_else(|| {
            Refusal::new(
                "path",
                format!("`{}` is outside every root", real.display()),
            )
        })?;
        let key = self.roots().key(root, &real)?;
        let cfg = &self.roots().roots()[root].config;
        if cfg.mode == Mode::ReadOnly {
            return Err(Stop::Deny(Refusal::new(
                "mode",
                format!("`{key}` is in the read-only root `{}`", cfg.name),
            )));
        }
        // cordon's own files, whatever the roots say: a call must never grant itself rules or
        // rewrite the record of what it did.
        if let Some(p) = self
            .shared
            .policy_files
            .iter()
            .find(|p| real.starts_with(p))
        {
            return Err(Stop::Deny(Refusal::new(
                "policy_file",
                format!(
                    "`{key}` is cordon's own file `{}` (the policy, its rules, the audit log, the trust or session store)",
                    p.display()
                ),
            )));
        }
        if let Some(p) = self.roots().protected(&real) {
            return Err(Stop::Deny(Refusal::new(
                "protected",
                format!(
                    "`{key}` is inside the protected path `{}`, which stays read-only",
                    p.display()
                ),
            )));
        }
        // The file itself, never followed.
        let existing = if parent.missing.is_empty() {
            match resolve::open_beneath(
                parent.dir.as_fd(),
                std::path::Path::new(&parent.name),
                resolve::INSPECT | OFlags::NOFOLLOW,
                &key,
            ) {
                Ok(fd) => {
                    let st =
                        rustix::fs::fstat(&fd).map_err(|e| Stop::Fail(io_err(name, "stat", e)))?;
                    Some((fd, st))
                }
                Err(ResolveError::NotFound) => None,
                Err(e) => return Err(self.resolve_stop(e, &key)),
            }
        } else {
            None
        };
        let ft = existing.as_ref().map(|(_, st)| file_type(st));
        match ft {
            None | Some(FileType::RegularFile) => {}
            Some(FileType::Symlink) if self.op == FileOp::Delete => {}
            Some(FileType::Symlink) => {
                return Err(Stop::Deny(Refusal::new(
                    "symlink",
                    format!("`{key}` is a symlink; {name} does not write through symlinks: use the path it points to"),
                )))
            }
            Some(FileType::Directory) => {
                return Err(self.fail(format!("`{key}` is a directory, not a file")))
            }
            Some(other) => {
                return Err(Stop::Deny(Refusal::new(
                    "file_type",
                    format!("`{key}` is a {}; the file tools only touch regular files", type_name(other)),
                )))
            }
        }
        self.check_suffix(root, &key, &parent.name)?;
        let limits = self.shared.limits;
        let old: Option<(Vec<u8>, rustix::fs::Stat)> = match &existing {
            Some((fd, st)) if ft == Some(FileType::RegularFile) => {
                if st.st_size as u64 > limits.max_read {
                    if self.op == FileOp::Write {
                        None // too large to diff; the summary says how large
                    } else {
                        self.check_size("file", &key, st.st_size as u64, limits.max_read)?;
                        None
                    }
                } else {
                    Some(self.read_whole(fd.as_fd(), st, &key)?)
                }
            }
            _ => None,
        };
        let precondition = match (&old, &existing) {
            (Some((_, after)), _) => fingerprint(Some(after)),
            (None, Some((_, st))) => fingerprint(Some(st)),
            (None, None) => fingerprint(None),
        };
        let perms = existing.as_ref().map(|(_, st)| st.st_mode & 0o777);
        let surface = self.surface(root, &real, t, &key)?;
        let args_out;
        let presentation;
        let run;
        match self.op {
            FileOp::Write => {
                let content = a["content"].as_bytes().to_vec();
                self.check_size("content for", &key, content.len() as u64, limits.max_write)?;
                presentation = match (&existing, &old) {
                    (None, _) => {
                        let dirs = if parent.missing.is_empty() {
                            String::new()
                        } else {
                            format!(
                                ", creating {} director{}",
                                parent.missing.len(),
                                if parent.missing.len() == 1 {
                                    "y"
                                } else {
                                    "ies"
                                }
                            )
                        };
                        preview::content(
                            format!("create {key} ({} bytes{dirs})", content.len()),
                            &content,
                        )
                    }
                    (Some(_), Some((old, _))) => preview::change("overwrite", &key, old, &content),
                    (Some((_, st)), None) => preview::content(
                        format!(
                            "overwrite {key} (replaces {} bytes with {} bytes)",
                            st.st_size,
                            content.len()
                        ),
                        &content,
                    ),
                };
                args_out = json!({"path": key, "content": a["content"]});
                run = Run::Write {
                    parent,
                    content,
                    perms,
                    exists: existing.is_some(),
                };
            }
            FileOp::Edit => {
                let Some((old_bytes, _)) = &old else {
                    return Err(self.fail(format!("`{key}` does not exist")));
                };
                let Ok(text) = std::str::from_utf8(old_bytes) else {
                    return Err(self.fail(format!(
                        "`{key}` is not UTF-8 text; edit_file edits text files"
                    )));
                };
                let (from, to) = (a["old"], a["new"]);
                if from.is_empty() {
                    return Err(Stop::Fail(ToolError::InvalidArguments {
                        tool: name.into(),
                        message: "`old` must not be empty".into(),
                    }));
                }
                let n = occurrences(text, from);
                if n != 1 {
                    let how = if n == 0 {
                        "does not occur".to_string()
                    } else {
                        format!("occurs {n} times")
                    };
                    return Err(self.fail(format!(
                        "`old` {how} in `{key}`; it must occur exactly once (include more surrounding text to make it unique)"
                    )));
                }
                let new_text = text.replacen(from, to, 1);
                self.check_size("the edited", &key, new_text.len() as u64, limits.max_write)?;
                presentation = if want_preview {
                    preview::change("edit", &key, old_bytes, new_text.as_bytes())
                } else {
                    Presentation::summary(format!("edit {key}"))
                };
                args_out = json!({"path": key, "old": from, "new": to});
                run = Run::Write {
                    parent,
                    content: new_text.into_bytes(),
                    perms,
                    exists: true,
                };
            }
            FileOp::Delete => {
                let Some((_, st)) = &existing else {
                    return Err(self.fail(format!("`{key}` does not exist")));
                };
                presentation = if ft == Some(FileType::Symlink) {
                    let to =
                        rustix::fs::readlinkat(&parent.dir, parent.name.as_os_str(), Vec::new())
                            .map(|c| c.to_string_lossy().into_owned())
                            .unwrap_or_default();
                    Presentation {
                        summary: format!("delete the symlink {key} (the link only)"),
                        preview: Preview::Text {
                            text: format!("{key} -> {to}"),
                        },
                        full: None,
                    }
                } else {
                    match &old {
                        Some((bytes, _)) if want_preview => {
                            preview::content(format!("delete {key} ({} bytes)", bytes.len()), bytes)
                        }
                        _ => Presentation::summary(format!("delete {key} ({} bytes)", st.st_size)),
                    }
                };
                args_out = json!({"path": key});
                run = Run::Delete {
                    dir: parent.dir,
                    name: parent.name,
                };
            }
            FileOp::Read | FileOp::Attach | FileOp::List => unreachable!("not a write"),
        }
        let mut assessment = Assessment::new(name, args_out, vec![name.into(), key])
            .with_access(self.access(root, surface))
            .with_presentation(presentation);
        assessment.precondition = Some(precondition);
        Ok(Plan { assessment, run })
    }

    fn execute_plan(&self, plan: Plan) -> Result<Value, ToolError> {
        let name = self.op.name();
        let key = plan.assessment.keys.get(1).cloned().unwrap_or_default();
        match plan.run {
            Run::Denied => Err(denied_error(name, &plan.assessment)),
            Run::Read { bytes } => Ok(match String::from_utf8(bytes) {
                Ok(text) => json!({"path": key, "size": text.len(), "content": text}),
                Err(e) => {
                    let bytes = e.into_bytes();
                    json!({"path": key, "size": bytes.len(), "binary": true, "kind": preview::binary_kind(&bytes)})
                }
            }),
            Run::List { dir, root } => self.list(&key, dir, root),
            Run::Write {
                parent,
                content,
                perms,
                exists,
            } => {
                let expected = plan.assessment.precondition.unwrap_or(fingerprint(None));
                self.write(&key, &parent, &content, perms, exists, &expected)?;
                Ok(json!({"path": key, "bytes": content.len(), "created": !exists}))
            }
            Run::Delete { dir, name: file } => {
                let expected = plan.assessment.precondition.unwrap_or(fingerprint(None));
                if self.current(&dir, &file, &key)? != expected {
                    return Err(ToolError::Changed {
                        tool: name.into(),
                        what: key,
                    });
                }
                rustix::fs::unlinkat(&dir, file.as_os_str(), AtFlags::empty())
                    .map_err(|e| io_err(name, format!("delete `{key}`"), e))?;
                Ok(json!({"path": key, "deleted": true}))
            }
        }
    }

    /// The fingerprint of `name` in `dir` now (not following a symlink).
    fn current(
        &self,
        dir: &OwnedFd,
        file: &OsString,
        key: &str,
    ) -> Result<Precondition, ToolError> {
        match rustix::fs::statat(dir, file.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(fingerprint(Some(&st))),
            Err(Errno::NOENT) => Ok(fingerprint(None)),
            Err(e) => Err(io_err(self.op.name(), format!("stat `{key}`"), e)),
        }
    }

    fn write(
        &self,
        key: &str,
        parent: &Parent,
        content: &[u8],
        perms: Option<RawMode>,
        exists: bool,
        expected: &Precondition,
    ) -> Result<(), ToolError> {
        let name = self.op.name();
        let dir = parent
            .create_dirs()
            .map_err(|e| io_err(name, format!("create the directories of `{key}`"), e))?;
        let tmp = format!(
            ".cordon-{}-{}.tmp",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let fd = rustix::fs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            FileMode::from_raw_mode(perms.unwrap_or(0o666)),
        )
        .map_err(|e| io_err(name, format!("create a temporary file beside `{key}`"), e))?;
        let cleanup = |e: ToolError| {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
            e
        };
        let mut file = File::from(fd);
        if let Some(p) = perms {
            // Keep the old file's permission bits (never set-id bits: they are masked out).
            rustix::fs::fchmod(file.as_fd(), FileMode::from_raw_mode(p))
                .map_err(|e| cleanup(io_err(name, format!("set the mode of `{key}`"), e)))?;
        }
        file.write_all(content)
            .and_then(|()| file.sync_all())
            .map_err(|e| cleanup(io_err(name, format!("write `{key}`"), e)))?;
        drop(file);
        if self.current(&dir, &parent.name, key).map_err(cleanup)? != *expected {
            return Err(cleanup(ToolError::Changed {
                tool: name.into(),
                what: key.into(),
            }));
        }
        let flags = if exists {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        rustix::fs::renameat_with(&dir, tmp.as_str(), &dir, parent.name.as_os_str(), flags).map_err(
            |e| match e {
                Errno::EXIST => cleanup(ToolError::Changed {
                    tool: name.into(),
                    what: key.into(),
                }),
                e => cleanup(io_err(name, format!("rename into `{key}`"), e)),
            },
        )
    }

    fn list(&self, key: &str, dir: OwnedFd, root: usize) -> Result<Value, ToolError> {
        let name = self.op.name();
        let rd = rustix::fs::openat(
            &dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            FileMode::empty(),
        )
        .map_err(|e| io_err(name, format!("open `{key}`"), e))?;
        let suffixes = &self.roots().roots()[root].config.suffixes;
        let mut entries = Vec::new();
        let mut hidden = 0usize;
        let mut truncated = false;
        let iter = rustix::fs::Dir::read_from(&rd)
            .map_err(|e| io_err(name, format!("read `{key}`"), e))?;
        for entry in iter {
            let entry = entry.map_err(|e| io_err(name, format!("read `{key}`"), e))?;
            let (n, utf8) = entry_name(entry.file_name().to_bytes());
            if n == "." || n == ".." {
                continue;
            }
            let st = rustix::fs::statat(&rd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW).ok();
            let ft = st.as_ref().map_or(entry.file_type(), file_type);
            if ft != FileType::Directory
                && !suffixes.is_empty()
                && !suffixes.iter().any(|s| n.ends_with(s.as_str()))
            {
                hidden += 1;
                continue;
            }
            if entries.len() >= self.shared.limits.max_entries {
                truncated = true;
                break;
            }
            let kind = match ft {
                FileType::RegularFile => "file",
                FileType::Directory => "dir",
                FileType::Symlink => "symlink",
                _ => "other",
            };
            let mut e = json!({"name": n, "type": kind});
            if !utf8 {
                e["not_utf8"] = json!(true);
            }
            if ft == FileType::RegularFile {
                if let Some(st) = &st {
                    e["size"] = json!(st.st_size);
                }
            }
            entries.push(e);
        }
        // By name, then a UTF-8 name before the escaped one spelled the same.
        entries.sort_by(|a, b| {
            (a["name"].as_str(), a["not_utf8"].as_bool())
                .cmp(&(b["name"].as_str(), b["not_utf8"].as_bool()))
        });
        Ok(
            json!({"path": key, "entries": entries, "hidden_by_suffix": hidden, "truncated": truncated}),
        )
    }
}

/// A directory entry's name as `list_dir` gives it, and whether it is UTF-8. A name that is
/// not (a path is a JSON string here: no file tool can name it) is shown with each byte that
/// is not UTF-8 as `\xHH`, and flagged (`not_utf8`): lossily, `a\xff` and `a\xfe` were both
/// `a\u{fffd}`, two entries of one name, and one spelled like a UTF-8 name was that name.
fn entry_name(bytes: &[u8]) -> (String, bool) {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return (s.to_string(), true);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    (out, false)
}

/// How many times `needle` occurs in `hay`, overlapping occurrences included (`aa` occurs
/// twice in `aaa`: replacing "the" occurrence would be ambiguous).
pub fn occurrences(hay: &str, needle: &str) -> usize {
    let mut n = 0;
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        n += 1;
        let at = from + i;
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
        if from > hay.len() {
            break;
        }
    }
    n
}

impl Tool for FileTool {
    fn name(&self) -> &str {
        self.op.name()
    }

    fn description(&self) -> &str {
        self.op.description()
    }

    fn schema(&self) -> Value {
        string_schema(self.op.params(), &[])
    }

    fn assess(&self, args: &Value) -> Result<Assessment, ToolError> {
        Ok(self.plan(args, true)?.assessment)
    }

    fn execute(&self, assessment: &Assessment) -> Result<Value, ToolError> {
        let name = self.op.name();
        if assessment.refusal().is_some() {
            return Err(denied_error(name, assessment));
        }
        let plan = self.plan(&assessment.args, false)?;
        if plan.assessment.refusal().is_some() {
            return Err(denied_error(name, &plan.assessment));
        }
        if plan.assessment.keys != assessment.keys
            || plan.assessment.precondition != assessment.precondition
        {
            return Err(ToolError::Changed {
                tool: name.into(),
                what: assessment.keys.get(1).cloned().unwrap_or_default(),
            });
        }
        self.execute_plan(plan)
    }
}

/// `rel` (below the root `dir`, normal and `..` components) as the names a program would
/// use to reach it, with each `..` taken where the kernel takes it (the real parent of what
/// precedes it), relative to `dir`: `m/../mise/config.toml` is `mise/config.toml` whatever
/// link `m` or `mise` is. `None` where a `..` leads out of the root.
fn as_named(dir: &std::path::Path, rel: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let parts: Vec<Component> = rel.components().collect();
    let (head, tail) = match parts.iter().rposition(|c| *c == Component::ParentDir) {
        None => (std::path::PathBuf::new(), &parts[..]),
        Some(i) => {
            let up: std::path::PathBuf = parts[..=i].iter().collect();
            let real = std::fs::canonicalize(dir.join(up)).ok()?;
            (real.strip_prefix(dir).ok()?.to_path_buf(), &parts[i + 1..])
        }
    };
    tail.iter().try_fold(head, |mut named, c| match c {
        Component::Normal(n) => {
            named.push(n);
            Some(named)
        }
        _ => None,
    })
}

/// A write that completes a repository: its `HEAD`, `commondir`, or a file under its
/// `objects` or `refs`, in a directory that already holds git's configuration (`config`,
/// `hooks`, `commondir`, …) and lacks only what this write creates. The configuration was written while the directory
/// was not yet a repository, so no check saw it as one: written in that order (`ev/config`,
/// `ev/objects/x`, `ev/refs/x`, then `ev/HEAD`) the writes would make a repository whose
/// config git runs (a `git log` in it runs its `core.pager`), each of them allowed alone.
/// Such a write is on the surface as the configuration itself would be.
fn completes_git_dir(
    root: &std::path::Path,
    rel: &std::path::Path,
) -> Option<cordon_policy::surface::Hit> {
    use cordon_policy::surface::{Hit, Kind, GIT_CONFIG};
    use std::path::Component;
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    (0..parts.len()).find_map(|i| {
        let made = parts[i].to_str()?;
        if !matches!(made, "HEAD" | "objects" | "refs" | "commondir") {
            return None;
        }
        let dir: std::path::PathBuf = root.join(parts[..i].iter().collect::<std::path::PathBuf>());
        let has = |n: &str| n == made || std::fs::symlink_metadata(dir.join(n)).is_ok();
        let complete = cordon_policy::surface::is_git_dir_by(has);
        // A `commondir` is configuration itself: git reads the config where it points.
        let configured = GIT_CONFIG.iter().any(|(name, _)| has(name));
        (complete && configured).then_some(Hit {
            kind: Kind::Git,
            why: "it completes a repository (HEAD, objects, refs) around git configuration written while the directory was not one, which git then runs",
        })
    })
}
