//! Race-free resolution of tool paths beneath the policy's named roots.
//!
//! Every root directory is opened once (an `O_PATH` descriptor, no symlink on the way); a
//! path is then opened *beneath* that descriptor with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)`: the kernel resolves every component, follows symlinks only while
//! they stay inside the root, refuses `..` above it and `/proc` magic links, and reports an
//! escape as `EXDEV`. No path string is ever canonicalised and reopened: what is checked is
//! the descriptor that is then used. Where the location of a descriptor matters (which root
//! it lies in, protected paths, suffixes), it is read back from the descriptor itself
//! (`/proc/self/fd/N`).
//!
//! On macOS, which has no `openat2`, `O_PATH` or `/proc`, the same lookups are made by
//! [`walk`]: component by component beneath the root's descriptor with `O_NOFOLLOW`, links
//! resolved by the walk under the same rules (its docs say exactly what it guarantees), and
//! a device, fifo or socket never opened. Descriptors are then real read-only opens
//! ([`INSPECT`]), and a descriptor's location is read back with `fcntl(F_GETPATH)`. For a
//! file with several hard links, macOS may report any of its names: the file is then
//! judged by that name (which is where it also lives), or refused when that name lies
//! outside every root.

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use cordon_policy::{Mode, PathRoot, Policy};
#[cfg(target_os = "linux")]
use rustix::fs::ResolveFlags;
use rustix::fs::{Mode as FileMode, OFlags, Stat, CWD};
use rustix::io::Errno;

#[cfg(any(test, not(target_os = "linux")))]
pub mod walk;
#[cfg(not(target_os = "linux"))]
use walk::ResolveFlags;

/// Open a file only to look at it: `O_PATH` on Linux (nothing is opened, devices included);
/// on macOS a read-only open made by [`walk`], which never opens devices, fifos or sockets.
#[cfg(target_os = "linux")]
pub const INSPECT: OFlags = OFlags::PATH;
/// Open a file only to look at it: `O_PATH` on Linux (nothing is opened, devices included);
/// on macOS a read-only open made by [`walk`], which never opens devices, fifos or sockets.
#[cfg(not(target_os = "linux"))]
pub const INSPECT: OFlags = OFlags::empty();

/// Why a path is refused: a built-in check's tag (e.g. `path`) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The check that refused (`path`, `mode`, `suffix`, …).
    pub tag: &'static str,
    /// Why, for a person.
    pub reason: String,
}

impl Refusal {
    pub(crate) fn new(tag: &'static str, reason: impl Into<String>) -> Refusal {
        Refusal {
            tag,
            reason: reason.into(),
        }
    }
}

/// Resolution failed.
#[derive(Debug)]
pub enum ResolveError {
    /// Refused by a check (escape, loop, NUL, …): a `deny`.
    Refused(Refusal),
    /// Some component does not exist.
    NotFound,
    /// Some component is not a directory.
    NotDir,
    /// Another error from the kernel.
    Io(std::io::Error),
}

impl From<Refusal> for ResolveError {
    fn from(r: Refusal) -> Self {
        ResolveError::Refused(r)
    }
}

/// A named root with its open directory.
#[derive(Debug)]
pub struct Root {
    /// The policy's settings for it.
    pub config: PathRoot,
    fd: OwnedFd,
}

impl Root {
    /// The root directory's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A tool path, parsed: which root it starts from and the rest, relative to it.
#[derive(Debug, Clone)]
pub struct Target {
    /// Index of the root in [`Roots::roots`].
    pub root: usize,
    /// The path below the root (only normal and `..` components); empty for the root itself.
    pub rel: PathBuf,
    /// `ROOT/rel` as given, `.` removed.
    pub display: String,
}

/// The policy's roots, open.
#[derive(Debug)]
pub struct Roots {
    roots: Vec<Root>,
    /// Absolute protected paths (relative entries joined to every read-write root).
    protected: Vec<PathBuf>,
    /// `/proc/self/fd`, open, and the process it belongs to: reading a descriptor's path
    /// back through it skips two lookups per call.
    proc_fd: Option<(OwnedFd, u32)>,
}

/// Flags for every lookup beneath a root.
pub const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

impl Roots {
    /// Opens every root of `policy`. A root that cannot be opened (gone, replaced by a
    /// symlink since the policy was loaded) is an error.
    pub fn new(policy: &Policy) -> std::io::Result<Roots> {
        let mut roots = Vec::new();
        for config in &policy.sandbox.paths {
            // The policy's roots are canonical: refuse any symlink on the way, so a root
            // swapped for a symlink after loading is not followed.
            let fd = open_retry(
                CWD,
                &config.root,
                INSPECT | OFlags::DIRECTORY | OFlags::CLOEXEC,
                ResolveFlags::NO_SYMLINKS,
            )
            .map_err(|e| {
                std::io::Error::new(
                    std::io::Error::from(e).kind(),
                    format!(
                        "cannot open root `{}` ({}): {e}",
                        config.name,
                        config.root.display()
                    ),
                )
            })?;
            roots.push(Root {
                config: config.clone(),
                fd,
            });
        }
        let mut protected = Vec::new();
        for p in &policy.sandbox.protected {
            let abs: Vec<PathBuf> = if p.is_absolute() {
                vec![p.clone()]
            } else {
                roots
                    .iter()
                    .filter(|r| r.config.mode == Mode::ReadWrite)
                    .map(|r| r.config.root.join(p))
                    .collect()
            };
            for a in abs {
                // Symlinks inside a protected path's parents are resolved once here, so the
                // check below compares real locations with real locations.
                protected.push(std::fs::canonicalize(&a).unwrap_or(a));
            }
        }
        #[cfg(target_os = "linux")]
        let proc_fd = rustix::fs::open(
            "/proc/self/fd",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            FileMode::empty(),
        )
        .ok()
        .map(|fd| (fd, std::process::id()));
        #[cfg(not(target_os = "linux"))]
        let proc_fd = None;
        Ok(Roots {
            roots,
            protected,
            proc_fd,
        })
    }

    /// The roots, in the policy's (name) order.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The root's names, for messages.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.roots.iter().map(|r| r.config.name.as_str()).collect();
        if names.is_empty() {
            "none: the policy declares no [sandbox.paths]".into()
        } else {
            names.join(", ")
        }
    }

    /// Parses a tool path. The rule: a relative path starts with a root's **name**
    /// (`notes/a.txt` is `a.txt` in the root named `notes`; `notes` alone is the root); an
    /// absolute path must lie (lexically) inside a root's directory, and the deepest such
    /// root is used. Paths are never relative to the current directory. `..` that climbs
    /// above the root is refused here already; everything else is left to the kernel.
    pub fn parse(&self, path: &str) -> Result<Target, Refusal> {
        if path.is_empty() {
            return Err(Refusal::new("path", "the path is empty"));
        }
        if path.contains('\0') {
            return Err(Refusal::new("path", "the path contains a NUL byte"));
        }
        let p = Path::new(path);
        let (root, rest): (usize, &Path) = if p.is_absolute() {
            let hit = self
                .roots
                .iter()
                .enumerate()
                .filter(|(_, r)| p.starts_with(&r.config.root))
                .max_by_key(|(_, r)| r.config.root.components().count());
            match hit {
                Some((i, r)) => (i, p.strip_prefix(&r.config.root).unwrap_or(Path::new(""))),
                None => {
                    return Err(Refusal::new(
                        "path",
                        format!(
                            "`{path}` is outside every root; write ROOT/relative/path with a root name ({})",
                            self.names()
                        ),
                    ))
                }
            }
        } else {
            let mut comps = p.components();
            let mut first = comps.next();
            while first == Some(Component::CurDir) {
                first = comps.next();
            }
            let name = match first {
                Some(Component::Normal(n)) => n.to_str().unwrap_or(""),
                Some(Component::ParentDir) => {
                    return Err(Refusal::new(
                        "path",
                        format!("`{path}` climbs out of every root with `..`"),
                    ))
                }
                _ => "",
            };
            match self.roots.iter().position(|r| r.config.name == name) {
                Some(i) => (i, comps.as_path()),
                None => {
                    return Err(Refusal::new(
                        "path",
                        format!(
                            "`{path}` does not start with a root name; paths are ROOT/relative/path (roots: {}) or absolute inside a root",
                            self.names()
                        ),
                    ))
                }
            }
        };
        let mut rel = PathBuf::new();
        let mut depth: usize = 0;
        for c in rest.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if depth == 0 {
                        return Err(Refusal::new(
                            "path",
                            format!(
                                "`{path}` climbs out of the root `{}` with `..`",
                                self.roots[root].config.name
                            ),
                        ));
                    }
                    depth -= 1;
                    rel.push("..");
                }
                Component::Normal(n) => {
                    depth += 1;
                    rel.push(n);
                }
                Component::RootDir | Component::Prefix(_) => {}
            }
        }
        let name = &self.roots[root].config.name;
        let display = if rel.as_os_str().is_empty() {
            name.clone()
        } else {
            format!("{name}/{}", rel.display())
        };
        Ok(Target { root, rel, display })
    }

    /// Opens `rel` beneath the root `t.root` with `flags` (plus `O_CLOEXEC`).
    pub fn open(&self, t: &Target, flags: OFlags) -> Result<OwnedFd, ResolveError> {
        open_beneath(self.roots[t.root].fd(), &t.rel, flags, &t.display)
    }

    /// Where an open descriptor really is: its absolute path, the deepest root that holds
    /// it, and the path relative to that root.
    pub fn locate(&self, fd: BorrowedFd<'_>) -> Result<(usize, PathBuf), Refusal> {
        let real = self.fd_path(fd)?;
        match self.owner(&real) {
            Some(i) => Ok((i, real)),
            None => Err(Refusal::new(
                "path",
                format!("`{}` is outside every root", real.display()),
            )),
        }
    }

    /// The absolute path of an open descriptor, as the kernel reports it.
    pub fn fd_path(&self, fd: BorrowedFd<'_>) -> Result<PathBuf, Refusal> {
        match &self.proc_fd {
            // Only in the process that opened it (after a fork it would be the parent's).
            Some((dir, pid)) if *pid == std::process::id() => {
                let name = fd.as_raw_fd().to_string();
                rustix::fs::readlinkat(dir, name.as_str(), Vec::with_capacity(128))
                    .map(|c| PathBuf::from(std::ffi::OsString::from_vec(c.into_bytes())))
                    .map_err(|e| {
                        Refusal::new(
                            "path",
                            format!("cannot verify where a path leads (/proc/self/fd: {e})"),
                        )
                    })
            }
            _ => fd_path(fd),
        }
    }

    /// The deepest root holding the absolute path `real`.
    pub fn owner(&self, real: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| real.starts_with(&r.config.root))
            .max_by_key(|(_, r)| r.config.root.components().count())
            .map(|(i, _)| i)
    }

    /// `ROOT/rel` for an absolute path inside the root `i`.
    pub fn key(&self, i: usize, real: &Path) -> Result<String, Refusal> {
        let r = &self.roots[i].config;
        let rel = real.strip_prefix(&r.root).unwrap_or(Path::new(""));
        let rel = rel.to_str().ok_or_else(|| {
            Refusal::new("path", format!("`{}` is not valid UTF-8", real.display()))
        })?;
        Ok(if rel.is_empty() {
            r.name.clone()
        } else {
            format!("{}/{rel}", r.name)
        })
    }

    /// Whether the absolute path lies in (or is) a protected path.
    pub fn protected(&self, real: &Path) -> Option<&Path> {
        self.protected
            .iter()
            .find(|p| real.starts_with(p))
            .map(PathBuf::as_path)
    }

    /// Resolves the parent of a file to be written: opens the deepest existing ancestor
    /// beneath the root and returns it with the directories still to be created and the
    /// file's name. The name itself is never resolved here (it may be a symlink).
    pub fn parent(&self, t: &Target) -> Result<Parent, ResolveError> {
        let comps: Vec<Component> = t.rel.components().collect();
        let Some(Component::Normal(name)) = comps.last() else {
            return Err(ResolveError::Refused(Refusal::new(
                "path",
                format!("`{}` names a directory, not a file", t.display),
            )));
        };
        let name = name.to_os_string();
        let parents = &comps[..comps.len() - 1];
        let dir_flags = INSPECT | OFlags::DIRECTORY;
        let mut split = parents.len();
        let dir = loop {
            let prefix: PathBuf = parents[..split].iter().collect();
            match open_beneath(self.roots[t.root].fd(), &prefix, dir_flags, &t.display) {
                Ok(fd) => break fd,
                Err(ResolveError::NotFound) if split > 0 => split -= 1,
                Err(e) => return Err(e),
            }
        };
        let mut missing = Vec::new();
        for c in &parents[split..] {
            match c {
                Component::Normal(n) => missing.push(n.to_os_string()),
                _ => return Err(ResolveError::NotFound),
            }
        }
        Ok(Parent { dir, missing, name })
    }
}

/// The parent directory of a file to be written.
#[derive(Debug)]
pub struct Parent {
    /// The deepest existing ancestor (`O_PATH`).
    pub dir: OwnedFd,
    /// Directories below it still to be created, in order.
    pub missing: Vec<OsString>,
    /// The file's name.
    pub name: OsString,
}

impl Parent {
    /// Creates the missing directories, each opened without following any symlink, and
    /// returns the descriptor of the file's directory.
    pub fn create_dirs(&self) -> std::io::Result<OwnedFd> {
        let mut dir = rustix::io::dup(&self.dir)?;
        for n in &self.missing {
            match rustix::fs::mkdirat(&dir, n.as_os_str(), FileMode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            // Someone may have raced a symlink into place: never follow one here.
            dir = open_retry(
                &dir,
                Path::new(n),
                INSPECT | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                BENEATH | ResolveFlags::NO_SYMLINKS,
            )?;
        }
        Ok(dir)
    }
}

/// `openat2` beneath `dir`, with the errors a tool needs to tell apart.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    display: &str,
) -> Result<OwnedFd, ResolveError> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match open_retry(dir, rel, flags | OFlags::CLOEXEC, BENEATH) {
        Ok(fd) => Ok(fd),
        Err(Errno::XDEV) => Err(ResolveError::Refused(Refusal::new(
            "path",
            format!("`{display}` leads outside its root (through a symlink or `..`)"),
        ))),
        Err(Errno::LOOP) => Err(ResolveError::Refused(Refusal::new(
            "path",
            format!("`{display}`: too many symlinks, a symlink loop, or a /proc magic link"),
        ))),
        Err(Errno::NOENT) => Err(ResolveError::NotFound),
        Err(Errno::NOTDIR) => Err(ResolveError::NotDir),
        // Only the macOS walk reports this: a device, fifo or socket, left unopened.
        Err(Errno::NXIO) => Err(ResolveError::Refused(Refusal::new(
            "file_type",
            format!(
                "`{display}` is a device, fifo or socket; the file tools only touch regular files"
            ),
        ))),
        Err(Errno::NOSYS) => Err(ResolveError::Refused(Refusal::new(
            "path",
            "this kernel has no openat2 (Linux 5.6+), so paths cannot be resolved safely",
        ))),
        Err(e) => Err(ResolveError::Io(e.into())),
    }
}

/// `openat2` (on macOS [`walk::open`]), retried on `EAGAIN` (the kernel's answer to a
/// concurrent rename during a `RESOLVE_BENEATH` lookup; the walk's to a file replaced
/// between looking at it and opening it).
fn open_retry<Fd: AsFd>(
    dir: Fd,
    rel: &Path,
    flags: OFlags,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let mut tries = 0;
    loop {
        #[cfg(target_os = "linux")]
        let r = rustix::fs::openat2(&dir, rel, flags, FileMode::empty(), resolve);
        #[cfg(not(target_os = "linux"))]
        let r = walk::open(dir.as_fd(), rel, flags, resolve);
        match r {
            Err(Errno::AGAIN) if tries < 128 => tries += 1,
            r => return r,
        }
    }
}

/// The absolute path of an open descriptor, read back from `/proc/self/fd`.
#[cfg(target_os = "linux")]
pub fn fd_path(fd: BorrowedFd<'_>) -> Result<PathBuf, Refusal> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|e| {
        Refusal::new(
            "path",
            format!("cannot verify where a path leads (/proc/self/fd: {e})"),
        )
    })
}

/// The absolute path of an open descriptor, as the kernel knows it now (`F_GETPATH`).
#[cfg(not(target_os = "linux"))]
pub fn fd_path(fd: BorrowedFd<'_>) -> Result<PathBuf, Refusal> {
    rustix::fs::getpath(fd)
        .map(|c| PathBuf::from(std::ffi::OsString::from_vec(c.into_bytes())))
        .map_err(|e| {
            Refusal::new(
                "path",
                format!("cannot verify where a path leads (F_GETPATH: {e})"),
            )
        })
}

/// The file type bits of a stat.
pub fn file_type(st: &Stat) -> rustix::fs::FileType {
    rustix::fs::FileType::from_raw_mode(st.st_mode)
}

/// What a file type is called in messages.
pub fn type_name(ft: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType as F;
    match ft {
        F::RegularFile => "regular file",
        F::Directory => "directory",
        F::Symlink => "symlink",
        F::Fifo => "fifo",
        F::Socket => "socket",
        F::CharacterDevice => "character device",
        F::BlockDevice => "block device",
        F::Unknown => "file of unknown type",
    }
}
