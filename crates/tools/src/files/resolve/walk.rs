//! Resolution beneath a directory without `openat2`: one path component at a time, each
//! opened relative to the directory descriptor before it with `O_NOFOLLOW`. This is how the
//! file tools resolve paths on macOS, which has no `openat2`; it is built and tested on Linux
//! too, against the same cases as `openat2`.
//!
//! What it guarantees, for `BENEATH`:
//! - every component is looked up in a directory this walk opened, never by a path string
//!   from the start, so a directory swapped for a symlink during the walk is seen as a
//!   symlink (`O_NOFOLLOW` fails with ELOOP) and handled below, never followed blindly;
//! - symlinks are read (`readlinkat`) and resolved by the walk itself: an absolute target,
//!   or `..` above the starting directory (from the path or from a link), fails with EXDEV;
//!   more than 40 links fails with ELOOP; with `NO_SYMLINKS` any symlink fails with ELOOP;
//! - `..` returns to the directory descriptor the walk came from; it never asks the kernel
//!   for the parent of a directory that may have moved;
//! - the last component, unless a directory is wanted, is looked at with `fstatat` before
//!   it is opened: a device, fifo or socket is never opened (ENXIO), and what is opened
//!   (read-only, non-blocking, no controlling tty, not following a link) must be the very
//!   file that was looked at (same device and inode), or the walk is retried (EAGAIN);
//! - `NOFOLLOW` on the last component opens a symlink itself (`O_SYMLINK` on macOS).
//!
//! What it does not: a directory that is moved out of the root while the walk holds it
//! takes the rest of the walk with it, as with `openat2`. The caller therefore reads back
//! where the result really is (`F_GETPATH` on macOS) and checks that, as it does on Linux.
//! Unlike `O_PATH`, descriptors here are real opens: directories and files must be readable
//! to be resolved (a tool could not read them anyway).

use std::ffi::{OsStr, OsString};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// The `RESOLVE_*` flags of `openat2` this walk implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolveFlags(u8);

impl ResolveFlags {
    /// Stay beneath the starting directory (EXDEV otherwise).
    pub const BENEATH: ResolveFlags = ResolveFlags(1);
    /// No `/proc` magic links. There are none on macOS; on Linux a magic link reads as an
    /// absolute path or a non-path (`socket:[…]`), which `BENEATH` refuses or fails to find.
    pub const NO_MAGICLINKS: ResolveFlags = ResolveFlags(2);
    /// No symlinks at all (ELOOP).
    pub const NO_SYMLINKS: ResolveFlags = ResolveFlags(4);

    /// Both sets of flags.
    pub const fn union(self, other: ResolveFlags) -> ResolveFlags {
        ResolveFlags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: ResolveFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ResolveFlags {
    type Output = ResolveFlags;
    fn bitor(self, other: ResolveFlags) -> ResolveFlags {
        self.union(other)
    }
}

/// The flags a caller may pass: what kind of object is wanted, never an access mode. The
/// walk opens everything read-only (see the module docs).
#[cfg(target_os = "linux")]
const ACCEPTED: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
#[cfg(not(target_os = "linux"))]
const ACCEPTED: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How a symlink itself is opened.
#[cfg(target_os = "linux")]
const LINK_ITSELF: OFlags = OFlags::PATH.union(OFlags::NOFOLLOW);
#[cfg(not(target_os = "linux"))]
const LINK_ITSELF: OFlags = OFlags::SYMLINK
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const FILE: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// Linux's limit on symlinks in one lookup.
const MAX_LINKS: usize = 40;

/// Opens `rel` beneath `dir` (or from `/` for an absolute path without `BENEATH`), as
/// `openat2(dir, rel, flags, resolve)` would with `O_PATH` (see the module docs).
pub fn open(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    if !ACCEPTED.contains(flags) {
        return Err(Errno::INVAL);
    }
    let beneath = resolve.contains(ResolveFlags::BENEATH);
    let no_symlinks = resolve.contains(ResolveFlags::NO_SYMLINKS);
    let want_dir = flags.contains(OFlags::DIRECTORY);
    let nofollow = flags.contains(OFlags::NOFOLLOW);

    // The directories walked so far; the first is where the walk started.
    let mut stack: Vec<OwnedFd> = Vec::new();
    let start = |absolute: bool| -> Result<OwnedFd, Errno> {
        if absolute {
            rustix::fs::open("/", DIR, Mode::empty())
        } else {
            rustix::fs::openat(dir, ".", DIR, Mode::empty())
        }
    };
    // As openat2 without AT_EMPTY_PATH.
    if rel.as_os_str().is_empty() {
        return Err(Errno::NOENT);
    }
    if rel.is_absolute() && beneath {
        return Err(Errno::XDEV);
    }
    stack.push(start(rel.is_absolute())?);

    // Components still to walk, the next one last.
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, rel)?;
    let mut links = 0;
    while let Some(name) = todo.pop() {
        let last = todo.is_empty();
        let cur = stack.last().expect("the walk always holds its start");
        if name == "." {
            continue;
        }
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
            } else if beneath {
                return Err(Errno::XDEV);
            }
            // `..` of `/` is `/`.
            continue;
        }
        let st = rustix::fs::statat(cur, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)?;
        let ft = FileType::from_raw_mode(st.st_mode);
        if ft == FileType::Symlink {
            if no_symlinks {
                return Err(Errno::LOOP);
            }
            if last && nofollow {
                if want_dir {
                    return Err(Errno::NOTDIR);
                }
                return open_checked(cur, &name, LINK_ITSELF | OFlags::CLOEXEC, &st);
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(Errno::LOOP);
            }
            let target = rustix::fs::readlinkat(cur, name.as_os_str(), Vec::new())?;
            let target = OsString::from_vec(target.into_bytes());
            if target.is_empty() {
                return Err(Errno::NOENT);
            }
            let target = Path::new(&target);
            if target.is_absolute() {
                if beneath {
                    return Err(Errno::XDEV);
                }
                stack.clear();
                stack.push(start(true)?);
            }
            push_components(&mut todo, target)?;
            continue;
        }
        if !last || want_dir {
            if ft != FileType::Directory {
                return Err(Errno::NOTDIR);
            }
            let fd = open_checked(cur, &name, DIR, &st)?;
            if last {
                return Ok(fd);
            }
            stack.push(fd);
            continue;
        }
        return match ft {
            FileType::RegularFile | FileType::Directory => open_checked(cur, &name, FILE, &st),
            // Never opened: opening a device or fifo can have effects of its own.
            _ => Err(Errno::NXIO),
        };
    }
    // The path ended in a directory (empty, `.`, `..`, or a link to a directory).
    let cur = stack.last().expect("the walk always holds its start");
    rustix::fs::openat(cur, ".", DIR, Mode::empty())
}

/// Pushes the components of `path` onto `todo` so that the first is popped first. `.` is
/// kept, and a trailing `/` becomes a `.`: either makes the component before it one that
/// must be a directory (`file/.` and `file/` fail with ENOTDIR, as in the kernel).
fn push_components(todo: &mut Vec<OsString>, path: &Path) -> Result<(), Errno> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err(Errno::INVAL);
    }
    let mut names: Vec<OsString> = bytes
        .split(|b| *b == b'/')
        .filter(|s| !s.is_empty())
        .map(|s| OsStr::from_bytes(s).to_os_string())
        .collect();
    if bytes.ends_with(b"/") && !names.is_empty() {
        names.push(OsString::from("."));
    }
    todo.extend(names.into_iter().rev());
    Ok(())
}

/// Opens `name` in `dir` and checks it is the file `expected` describes (device and inode):
/// EAGAIN when it was replaced between the look and the open (the caller retries), ELOOP
/// when a symlink took its place.
fn open_checked(
    dir: &OwnedFd,
    name: &OsStr,
    flags: OFlags,
    expected: &rustix::fs::Stat,
) -> Result<OwnedFd, Errno> {
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP) | Err(Errno::NOTDIR) | Err(Errno::NXIO) | Err(Errno::OPNOTSUPP) => {
            return Err(Errno::AGAIN)
        }
        Err(e) => return Err(e),
    };
    let now = rustix::fs::fstat(&fd)?;
    if now.st_dev != expected.st_dev || now.st_ino != expected.st_ino {
        return Err(Errno::AGAIN);
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

    /// root/ with files, directories, links inside and out, a loop and a fifo; `outside.txt`
    /// beside it.
    fn tree() -> (tempfile::TempDir, OwnedFd) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("root");
        std::fs::create_dir_all(r.join("a/c")).unwrap();
        std::fs::write(r.join("a/b.txt"), "b").unwrap();
        std::fs::write(r.join("a/c/d.txt"), "d").unwrap();
        std::fs::write(d.path().join("outside.txt"), "secret").unwrap();
        for (link, to) in [
            ("link_in", "a/b.txt"),
            ("link_dir", "a"),
            ("link_up", "../outside.txt"),
            ("link_abs", "/etc/passwd"),
            ("loop1", "loop2"),
            ("loop2", "loop1"),
            ("a/back", ".."),
            ("a/back2", "../.."),
            ("dangling", "nothing"),
        ] {
            std::os::unix::fs::symlink(to, r.join(link)).unwrap();
        }
        #[cfg(target_os = "linux")]
        rustix::fs::mknodat(
            rustix::fs::CWD,
            r.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        #[cfg(not(target_os = "linux"))]
        assert!(std::process::Command::new("mkfifo")
            .arg(r.join("fifo"))
            .status()
            .unwrap()
            .success());
        let fd = rustix::fs::open(&r, DIR, Mode::empty()).unwrap();
        (d, fd)
    }

    fn id(fd: &OwnedFd) -> (u64, u64) {
        let st = rustix::fs::fstat(fd).unwrap();
        (st.st_dev as u64, st.st_ino as u64)
    }

    #[test]
    fn escapes_loops_and_specials() {
        let (_d, root) = tree();
        let open = |p: &str, flags: OFlags| open(root.as_fd(), Path::new(p), flags, BENEATH);
        let none = OFlags::empty();
        for p in [
            "..",
            "a/../..",
            "link_up",
            "link_abs",
            "a/back2",
            "a/back/..",
            "/etc",
        ] {
            assert_eq!(open(p, none).unwrap_err(), Errno::XDEV, "{p}");
        }
        assert_eq!(open("loop1", none).unwrap_err(), Errno::LOOP);
        assert_eq!(open("dangling", none).unwrap_err(), Errno::NOENT);
        assert_eq!(open("fifo", none).unwrap_err(), Errno::NXIO, "never opened");
        assert_eq!(open("a/b.txt/x", none).unwrap_err(), Errno::NOTDIR);
        assert_eq!(
            open("a/b.txt", OFlags::DIRECTORY).unwrap_err(),
            Errno::NOTDIR
        );
        // Inside the root, links are followed.
        let b = open("a/b.txt", none).unwrap();
        assert_eq!(id(&open("link_in", none).unwrap()), id(&b));
        assert_eq!(id(&open("link_dir/c/../b.txt", none).unwrap()), id(&b));
        assert_eq!(id(&open("a/back/a/b.txt", none).unwrap()), id(&b));
        assert_eq!(id(&open(".", none).unwrap()), id(&root));
        assert_eq!(open("", none).unwrap_err(), Errno::NOENT, "as openat2");
        assert_eq!(id(&open("a/..", OFlags::DIRECTORY).unwrap()), id(&root));
        // NOFOLLOW: the link itself; NO_SYMLINKS: no link at all.
        let link = open("link_in", OFlags::NOFOLLOW).unwrap();
        assert_ne!(id(&link), id(&b));
        let no_links = |p: &str| {
            super::open(
                root.as_fd(),
                Path::new(p),
                OFlags::DIRECTORY,
                BENEATH | ResolveFlags::NO_SYMLINKS,
            )
        };
        assert_eq!(no_links("link_dir").unwrap_err(), Errno::LOOP);
        assert!(no_links("a/c").is_ok());
        // Access modes are never taken from the caller.
        assert_eq!(open("a/b.txt", OFlags::WRONLY).unwrap_err(), Errno::INVAL);
        assert_eq!(open("a/b.txt", OFlags::CREATE).unwrap_err(), Errno::INVAL);
    }

    #[test]
    fn a_replaced_file_is_noticed() {
        let (_d, root) = tree();
        let a = rustix::fs::openat(&root, "a", DIR, Mode::empty()).unwrap();
        let other = rustix::fs::statat(&a, "c", AtFlags::SYMLINK_NOFOLLOW).unwrap();
        assert_eq!(
            open_checked(&a, OsStr::new("b.txt"), FILE, &other).unwrap_err(),
            Errno::AGAIN
        );
    }

    /// Every path made of up to three of these names, with each flag set, resolves to the
    /// same file as `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, or fails with the
    /// same errno; the one difference is a fifo, which the walk does not open (ENXIO).
    #[cfg(target_os = "linux")]
    #[test]
    fn agrees_with_openat2() {
        let (_d, root) = tree();
        let names = [
            "a", "c", "b.txt", "d.txt", "link_in", "link_dir", "link_up", "link_abs", "loop1",
            "fifo", "back", "back2", "dangling", "..", ".",
        ];
        // Every sequence of one to three names.
        let mut paths: Vec<String> = vec![String::new()];
        let mut last: Vec<String> = vec![String::new()];
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|p| names.iter().map(move |n| format!("{p}/{n}")))
                .collect();
            paths.extend(last.iter().map(|p| p[1..].to_string()));
        }
        assert_eq!(paths.len(), 1 + 15 + 15 * 15 + 15 * 15 * 15);
        // Trailing slashes, doubled slashes, absolute paths.
        paths.extend(
            [
                "a/",
                "a/b.txt/",
                "link_in/",
                "link_dir/",
                "fifo/",
                "link_up/",
                "a//c",
                "/a",
                "a/c/",
            ]
            .map(String::from),
        );
        let mut compared = 0;
        for p in &paths {
            for extra in [OFlags::empty(), OFlags::DIRECTORY, OFlags::NOFOLLOW] {
                let flags = OFlags::PATH | OFlags::CLOEXEC | extra;
                // The kernel answers EAGAIN to a `..` under RESOLVE_BENEATH when anything on
                // the machine was renamed meanwhile (often, on a busy machine: CI saw it); as
                // `open_retry` does, it is asked again.
                let mut tries = 0;
                let kernel = loop {
                    match rustix::fs::openat2(
                        &root,
                        p.as_str(),
                        flags,
                        Mode::empty(),
                        rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_MAGICLINKS,
                    ) {
                        Err(Errno::AGAIN) if tries < 10_000 => tries += 1,
                        r => break r,
                    }
                };
                let walked = open(root.as_fd(), Path::new(p), flags, BENEATH);
                match (&kernel, &walked) {
                    (Ok(k), Ok(w)) => assert_eq!(id(k), id(w), "{p:?} {extra:?}"),
                    (Ok(k), Err(Errno::NXIO)) => {
                        let st = rustix::fs::fstat(k).unwrap();
                        assert_eq!(FileType::from_raw_mode(st.st_mode), FileType::Fifo, "{p:?}");
                    }
                    (Err(k), Err(w)) => assert_eq!(k, w, "{p:?} {extra:?}"),
                    _ => panic!("{p:?} {extra:?}: openat2 {kernel:?}, walk {walked:?}"),
                }
                compared += 1;
            }
        }
        assert!(compared > 9000);
    }
}
