//! Where an absolute path really is, resolved name by name as the kernel would, asking the
//! kernel about each name once for every path resolved through the same [`Links`]: the many
//! paths cordon resolves per call (the PATH entries, the system directories) share their first
//! components (`/usr`, `/lib`, `$HOME`), which `std::fs::canonicalize` (glibc's realpath) asks
//! about again for each path.
//!
//! ```
//! let mut links = cordon_fs::links::Links::default();
//! let real = links.canonical(std::path::Path::new("/")).unwrap();
//! assert_eq!(real, std::path::Path::new("/"));
//! ```

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The kernel's limit on links followed in one lookup.
const MAX_LINKS: usize = 40;

/// What one name is, as `readlink` says.
#[derive(Debug, Clone)]
enum Name {
    /// Not a symlink.
    Plain,
    /// A symlink to this.
    Link(PathBuf),
    /// Missing, or not to be looked up (not a directory on the way, no permission).
    Missing,
}

/// The names asked so far (one `readlink` each).
#[derive(Debug, Default)]
pub struct Links {
    names: HashMap<PathBuf, Name>,
}

impl Links {
    fn name(&mut self, at: &Path) -> Name {
        if let Some(n) = self.names.get(at) {
            return n.clone();
        }
        let n = match std::fs::read_link(at) {
            Ok(target) => Name::Link(target),
            // EINVAL: it exists and is not a link.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Name::Plain,
            Err(_) => Name::Missing,
        };
        self.names.insert(at.to_path_buf(), n.clone());
        n
    }

    /// The canonical path of an existing absolute `path`, as `std::fs::canonicalize` gives it;
    /// `None` when a part is missing or the links loop. A relative path is canonicalized by
    /// the standard library.
    pub fn canonical(&mut self, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            return std::fs::canonicalize(path).ok();
        }
        self.walk(path, false)
    }

    /// Where absolute `path` really is: each symlink on the way followed (also a dangling
    /// one, whose target a write would create), `..` taken after the links before it, as the
    /// kernel resolves it. Parts that do not exist (and links past the kernel's limit) are
    /// kept as written.
    pub fn real(&mut self, path: &Path) -> PathBuf {
        self.walk(path, true).unwrap_or_else(|| path.to_path_buf())
    }

    fn walk(&mut self, path: &Path, keep_missing: bool) -> Option<PathBuf> {
        let push = |todo: &mut Vec<OsString>, p: &Path| {
            for c in p.components().rev() {
                match c {
                    Component::Normal(n) => todo.push(n.to_os_string()),
                    Component::ParentDir => todo.push("..".into()),
                    _ => {}
                }
            }
        };
        let mut todo = Vec::new();
        push(&mut todo, path);
        let mut out = PathBuf::from("/");
        let mut followed = 0;
        while let Some(c) = todo.pop() {
            if c == ".." {
                out.pop();
                continue;
            }
            let next = out.join(&c);
            match self.name(&next) {
                Name::Link(target) if followed < MAX_LINKS => {
                    followed += 1;
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    push(&mut todo, &target);
                }
                Name::Plain => out = next,
                Name::Link(_) | Name::Missing if keep_missing => out = next,
                Name::Link(_) | Name::Missing => return None,
            }
        }
        Some(out)
    }
}

/// A path's text without empty and `.` components, `..` taken lexically: a relative path keeps
/// the `..`s it starts with (`../x`), an absolute one drops those above `/`; an empty relative
/// result is `.`. The rules' view of a path spelled in a shell line (rm's readings, find's
/// start paths), where [`lexical`] would drop a relative path's leading `..`.
///
/// ```
/// use cordon_fs::links::lexical_text;
/// assert_eq!(lexical_text("//usr/./lib/.."), "/usr");
/// assert_eq!(lexical_text("./../a//b/"), "../a/b");
/// assert_eq!(lexical_text("a/.."), ".");
/// ```
pub fn lexical_text(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// `path` with `.` removed and `..` taken by name (the path need not exist), as Node's
/// `path.resolve` and the shell's `cd` read it; links are not looked at ([`Links::real`] is
/// what the kernel makes of a path).
///
/// ```
/// use std::path::Path;
/// assert_eq!(cordon_fs::links::lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
/// ```
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
