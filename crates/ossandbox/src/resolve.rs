//! The path resolver: which inode a configured path names, when a sandboxed run could have
//! changed what the name points at since the last run.
//!
//! ```text
//!   /home/u/proj/vendor/lib       sandbox.paths.vendor, as the policy names it
//!   ├─ home, u, proj              outside every writable root: followed, as the kernel does
//!   └─ vendor, lib                their directory lies in the writable root /home/u/proj:
//!                                 opened with O_NOFOLLOW; a symlink here is a refusal
//! ```
//!
//! A run may write anything inside a writable root, so the next run must not grant whatever
//! that run left behind a name the policy uses (`docs` made a link to `/`, `vendor` to
//! `~/.ssh`). The walk opens one component at a time from its directory's descriptor
//! (`openat(O_PATH | O_NOFOLLOW)`; nothing is read). A symlink whose directory lies inside a
//! writable root is refused, naming the link, its target and the root. A symlink elsewhere
//! (`/bin`, the user's own link above a workspace) is followed component by component, so its
//! target is walked by the same rule. The walk ends with an `O_PATH` descriptor, which the
//! enforcement uses as it is: Landlock rules take descriptors, bwrap is given `--bind-fd N`
//! (and checks that what it mounted is that inode). Nothing re-resolves the name unchecked.
//!
//! Hard links: a read-only bind mount covers a name, not an inode. A protected file with a
//! second name in a writable root (made by an earlier, unprotected run) is written through
//! that name, so a protected regular file, or one inside a protected directory, with
//! `st_nlink > 1` is refused too, as is a symlink inside a protected directory that leads into
//! a writable root.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

use crate::profile::{Profile, Protected};
use crate::Error;

/// Symlinks followed in one walk before giving up, as the kernel's own limit (ELOOP).
const MAX_LINKS: usize = 40;

/// Entries of protected directories examined for hard links before refusing: a protected
/// directory is meant to be small (`.git/hooks`); one this large would slow every run.
pub const MAX_PROTECTED_ENTRIES: usize = 2_048;

/// A path found: its `O_PATH` descriptor, its real path, and what it is.
#[derive(Debug)]
pub struct Opened {
    pub fd: OwnedFd,
    pub real: PathBuf,
    pub stat: Stat,
}

/// What a walk found.
#[derive(Debug)]
pub enum Resolved {
    Found(Opened),
    /// The path does not exist; `at` is its first missing component (real path).
    Missing {
        at: PathBuf,
    },
}

/// The real paths of the profile's writable roots (the private TMPDIR included; device
/// nodes are not roots).
pub fn writable_roots(profile: &Profile) -> Vec<PathBuf> {
    profile
        .rules
        .iter()
        .filter(|r| r.access.write && !r.access.device)
        .map(|r| r.path.clone())
        .collect()
}

fn root_of<'a>(dir: &Path, writable: &'a [PathBuf]) -> Option<&'a PathBuf> {
    writable.iter().find(|w| dir.starts_with(w))
}

fn io(at: &Path, e: rustix::io::Errno) -> Error {
    Error::CannotOpen {
        at: at.to_path_buf(),
        error: e.into(),
    }
}

fn open_root() -> Result<OwnedFd, Error> {
    rustix::fs::open(
        "/",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(Path::new("/"), e))
}

/// Walks the absolute `path` (see the module docs), refusing a symlink whose directory lies
/// in one of `writable` (real paths).
pub fn resolve(path: &Path, writable: &[PathBuf]) -> Result<Resolved, Error> {
    let names = |p: &Path| -> Vec<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    if !path.is_absolute() {
        return Err(Error::CannotOpen {
            at: path.to_path_buf(),
            error: std::io::Error::other("not an absolute path"),
        });
    }
    let mut rest: VecDeque<OsString> = names(path).into();
    let mut dir = open_root()?;
    let mut real = PathBuf::from("/");
    let mut links = 0;
    let mut stat = rustix::fs::fstat(&dir).map_err(|e| io(&real, e))?;
    while let Some(name) = rest.pop_front() {
        if name == ".." {
            dir = rustix::fs::openat(
                &dir,
                "..",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| io(&real, e))?;
            // Where `..` really led (a directory in a writable root may have moved since it
            // was opened), as the kernel names it.
            use std::os::fd::AsRawFd;
            real = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
                .ok()
                .filter(|p| p.is_absolute())
                .ok_or_else(|| io(&real, rustix::io::Errno::NOENT))?;
            stat = rustix::fs::fstat(&dir).map_err(|e| io(&real, e))?;
            continue;
        }
        let next = real.join(&name);
        let fd = match rustix::fs::openat(
            &dir,
            name.as_os_str(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => {
                return Ok(Resolved::Missing { at: next })
            }
            Err(e) => return Err(io(&next, e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| io(&next, e))?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
            let target = rustix::fs::readlinkat(&dir, name.as_os_str(), Vec::new())
                .map_err(|e| io(&next, e))?;
            let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
            if let Some(root) = root_of(&real, writable) {
                return Err(Error::PlantedLink {
                    link: next,
                    target,
                    root: root.clone(),
                });
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(io(&next, rustix::io::Errno::LOOP));
            }
            if target.is_absolute() {
                dir = open_root()?;
                real = PathBuf::from("/");
            }
            for n in names(&target).into_iter().rev() {
                rest.push_front(n);
            }
            continue;
        }
        dir = fd;
        real = next;
        stat = st;
    }
    Ok(Resolved::Found(Opened {
        fd: dir,
        real,
        stat,
    }))
}

/// The roots and `extra_read` paths as `policy` names them (as written, before any link is
/// followed), each with its policy key: what [`check_named`] checks.
pub(crate) fn named(policy: &cordon_policy::Policy) -> Vec<(PathBuf, String)> {
    let sb = &policy.sandbox;
    sb.paths
        .iter()
        .map(|r| (r.written.clone(), format!("sandbox.paths.{}", r.name)))
        .chain(
            sb.extra_read_written
                .iter()
                .map(|p| (p.clone(), "sandbox.extra_read".to_string())),
        )
        .collect()
}

/// Checks the roots and `extra_read` paths as the policy names them (`named`, each with its
/// key), and the protected paths (see [`check_protected`]): a symlink that a run could have
/// planted on the way is a refusal (exit 125) naming the path, the link and the writable root
/// it lies in.
pub(crate) fn check_named(named: &[(PathBuf, String)], profile: &Profile) -> Result<(), Error> {
    let writable = writable_roots(profile);
    // The policy file and the audit log named through a link in a writable root are refused
    // by `cordon exec` itself, before it opens either.
    for (path, key) in named {
        match resolve(path, &writable) {
            Ok(_) => {}
            Err(e @ Error::PlantedLink { .. }) => {
                return Err(Error::Refused(format!(
                    "{key} {}: {e}; refusing to follow it (put the real directory or file back, or name the real path in the policy)",
                    path.display()
                )))
            }
            Err(e) => {
                return Err(Error::Refused(format!(
                    "{key} {}: {e}; cannot check that no sandboxed run changed it",
                    path.display()
                )))
            }
        }
    }
    check_protected(profile)
}

/// Checks each protected path right where enforcement will look: no symlink a run could have
/// planted on the way to it, and no second name for it or for a file inside it (a hard link
/// elsewhere in a writable root, which the read-only mount does not cover). A protected path
/// that does not exist is fine: bwrap covers its first missing component.
pub fn check_protected(profile: &Profile) -> Result<(), Error> {
    let writable = writable_roots(profile);
    let kept: Vec<PathBuf> = profile.protected.iter().map(|p| p.path.clone()).collect();
    let mut budget = MAX_PROTECTED_ENTRIES;
    for p in &profile.protected {
        let opened = match resolve(&p.path, &writable) {
            Ok(Resolved::Found(o)) => o,
            Ok(Resolved::Missing { .. }) => continue,
            Err(e @ Error::PlantedLink { .. }) => {
                return Err(Error::Refused(format!(
                    "{} ({}) is protected, but {e}; remove the link and put the real file or directory back",
                    p.path.display(),
                    p.origin
                )))
            }
            Err(e) => {
                return Err(Error::Refused(format!(
                    "{} ({}) is protected, but {e}",
                    p.path.display(),
                    p.origin
                )))
            }
        };
        inspect(
            p,
            &opened.fd,
            &opened.real,
            opened.stat,
            &writable,
            &kept,
            &mut budget,
        )?;
    }
    Ok(())
}

/// One protected entry (and, for a directory, everything beneath it, within `budget`); `fd`
/// opens `real` when it is a directory, and is not used otherwise. `kept`: every protected
/// path of the profile.
fn inspect(
    p: &Protected,
    fd: &OwnedFd,
    real: &Path,
    stat: Stat,
    writable: &[PathBuf],
    kept: &[PathBuf],
    budget: &mut usize,
) -> Result<(), Error> {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile if stat.st_nlink > 1 => Err(Error::Refused(format!(
            "{file} is protected ({origin}) but has {n} names (a hard link): through another name in a writable root a sandboxed run writes it past the read-only mount; check its content, then break the link: cp -p '{file}' '{file}.copy' && mv '{file}.copy' '{file}' (the other names: find / -xdev -samefile '{file}')",
            file = real.display(),
            origin = p.origin,
            n = stat.st_nlink,
        ))),
        FileType::Directory => {
            let dir = rustix::fs::openat(
                fd,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| cannot_check(p, real, e))?;
            let entries = rustix::fs::Dir::new(dir).map_err(|e| cannot_check(p, real, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| cannot_check(p, real, e))?;
                let name = OsStr::from_bytes(entry.file_name().to_bytes());
                if name == "." || name == ".." {
                    continue;
                }
                if *budget == 0 {
                    return Err(Error::Refused(format!(
                        "{} ({}) is protected, but its protected paths hold more than {MAX_PROTECTED_ENTRIES} entries, too many to check for hard links on every run; protect smaller paths",
                        p.path.display(),
                        p.origin
                    )));
                }
                *budget -= 1;
                let at = real.join(name);
                // One fstatat per entry (a protected directory may be walked on every run);
                // only subdirectories are opened.
                let st = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| cannot_check(p, &at, e))?;
                match FileType::from_raw_mode(st.st_mode) {
                    FileType::Symlink => {
                        let target = rustix::fs::readlinkat(fd, name, Vec::new())
                            .map_err(|e| cannot_check(p, &at, e))?;
                        let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
                        let lands = crate::profile::canonical(&real.join(&target), &|q| {
                            std::fs::canonicalize(q)
                        });
                        // A link whose target is protected too, reached with no other link
                        // on the way (`.git/hooks/pre-commit -> ../../scripts/pre-commit`,
                        // the target kept read-only by `sandbox.git = "protect"`, the
                        // directories to it anchored): the run cannot change what it runs.
                        let kept_target = kept.contains(&lands)
                            && cordon_fs::links::lexical(&real.join(&target)) == lands;
                        if let Some(root) = root_of(&lands, writable).filter(|_| !kept_target) {
                            return Err(Error::Refused(format!(
                                "{} lies in the protected {} ({}) but is a symlink to {}, inside the writable root {}: a sandboxed run could change what it points at; replace the link with the file",
                                at.display(),
                                p.path.display(),
                                p.origin,
                                target.display().to_string().escape_debug(),
                                root.display()
                            )));
                        }
                    }
                    // A writable root nested in a protected directory stays writable: its
                    // files are the run's anyway.
                    FileType::Directory if writable.contains(&at) => {}
                    // A git directory's objects (a submodule's in `.git/modules`, protected
                    // whole for its config and hooks): git's data, content-addressed, which the
                    // command may write in the root's own `.git/objects` under `protect` too. A
                    // local clone (`git submodule add ../lib`) hard-links them; refusing those
                    // links refused every such repository, and walking them spent the budget.
                    // The read-only mount still covers them under this name.
                    FileType::Directory
                        if name == "objects"
                            && cordon_policy::surface::is_git_dir_by(|n| {
                                rustix::fs::statat(fd, n, AtFlags::SYMLINK_NOFOLLOW).is_ok()
                            }) => {}
                    FileType::Directory => {
                        let child = rustix::fs::openat(
                            fd,
                            name,
                            OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC,
                            Mode::empty(),
                        )
                        .map_err(|e| cannot_check(p, &at, e))?;
                        inspect(p, &child, &at, st, writable, kept, budget)?;
                    }
                    _ => inspect(p, fd, &at, st, writable, kept, budget)?,
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn cannot_check(p: &Protected, at: &Path, e: rustix::io::Errno) -> Error {
    Error::Refused(format!(
        "{} ({}) is protected, but {} cannot be checked for hard links: {}",
        p.path.display(),
        p.origin,
        at.display(),
        std::io::Error::from(e)
    ))
}

/// Opens a path for enforcement: the walk when it lies in a writable root (its real path, as
/// the profile holds it, must still have no link there), else one `open` that follows links
/// as the kernel does (system paths; none of their components lies in a writable root).
pub fn open_for_rule(path: &Path, writable: &[PathBuf]) -> Result<OwnedFd, Error> {
    if root_of(path, writable).is_none() {
        return rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| io(path, e));
    }
    match resolve(path, writable)? {
        Resolved::Found(o) => Ok(o.fd),
        Resolved::Missing { at } => Err(Error::CannotOpen {
            at,
            error: std::io::ErrorKind::NotFound.into(),
        }),
    }
}

/// Whether `fd` is a directory.
pub fn is_dir(fd: impl AsFd) -> bool {
    rustix::fs::fstat(fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, PathRule};
    use cordon_policy::{Limits, Network};
    use std::os::unix::fs::symlink;

    fn real(p: &Path) -> PathBuf {
        std::fs::canonicalize(p).unwrap()
    }

    /// The message of a refusal; any other result fails the test.
    fn refused(r: Result<(), Error>) -> String {
        match r {
            Err(Error::Refused(m)) => m,
            other => panic!("not a refusal: {other:?}"),
        }
    }

    fn found(r: Result<Resolved, Error>) -> PathBuf {
        match r {
            Ok(Resolved::Found(o)) => o.real,
            other => panic!("{other:?}"),
        }
    }

    fn profile(rw: &[&Path], protected: &[&Path]) -> Profile {
        Profile {
            rules: rw
                .iter()
                .map(|p| PathRule {
                    path: real(p),
                    access: Access {
                        write: true,
                        exec: false,
                        device: false,
                    },
                    origin: "t".into(),
                })
                .collect(),
            protected: protected
                .iter()
                .map(|p| Protected {
                    path: p.to_path_buf(),
                    origin: "sandbox.protected".into(),
                })
                .collect(),
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
    }

    #[test]
    fn links_outside_writable_roots_are_followed() {
        let d = tempfile::tempdir().unwrap();
        let base = real(d.path());
        std::fs::create_dir_all(base.join("target/sub")).unwrap();
        symlink(base.join("target"), base.join("abs")).unwrap();
        symlink("target", base.join("rel")).unwrap();
        symlink("../target/sub", base.join("target/up")).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir(&ws).unwrap();
        let writable = [ws.clone()];
        assert_eq!(
            found(resolve(&base.join("abs/sub"), &writable)),
            base.join("target/sub")
        );
        assert_eq!(
            found(resolve(&base.join("rel/up"), &writable)),
            base.join("target/sub")
        );
        assert_eq!(
            found(resolve(Path::new("/bin"), &writable)),
            real(Path::new("/bin"))
        );
        // The workspace itself named through a link above it: the user's own link.
        symlink(&ws, base.join("wslink")).unwrap();
        assert_eq!(found(resolve(&base.join("wslink"), &writable)), ws);
    }

    #[test]
    fn a_link_inside_a_writable_root_is_refused_wherever_it_is_on_the_path() {
        let d = tempfile::tempdir().unwrap();
        let base = real(d.path());
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("a")).unwrap();
        std::fs::create_dir_all(base.join("outside/c")).unwrap();
        symlink(base.join("outside"), ws.join("a/b")).unwrap();
        symlink("/", ws.join("docs")).unwrap();
        let writable = [ws.clone()];
        for (path, link) in [
            (ws.join("a/b/c"), ws.join("a/b")),
            (ws.join("docs"), ws.join("docs")),
            (ws.join("docs/etc"), ws.join("docs")),
        ] {
            match resolve(&path, &writable) {
                Err(Error::PlantedLink { link: l, root, .. }) => {
                    assert_eq!((l, root), (link, ws.clone()), "{}", path.display())
                }
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        // Reached through a link outside the root, the walk still refuses the inner one.
        symlink(&ws, base.join("wslink")).unwrap();
        assert!(matches!(
            resolve(&base.join("wslink/a/b/c"), &writable),
            Err(Error::PlantedLink { .. })
        ));
        // The same path with no writable root around it is followed.
        assert_eq!(
            found(resolve(&ws.join("a/b/c"), &[])),
            base.join("outside/c")
        );
    }

    #[test]
    fn missing_paths_name_their_first_missing_component() {
        let d = tempfile::tempdir().unwrap();
        let base = real(d.path());
        std::fs::write(base.join("file"), "").unwrap();
        match resolve(&base.join("no/such"), std::slice::from_ref(&base)) {
            Ok(Resolved::Missing { at }) => assert_eq!(at, base.join("no")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            resolve(&base.join("file/x"), std::slice::from_ref(&base)),
            Ok(Resolved::Missing { .. })
        ));
    }

    #[test]
    fn link_loops_end() {
        let d = tempfile::tempdir().unwrap();
        let base = real(d.path());
        symlink(base.join("b"), base.join("a")).unwrap();
        symlink(base.join("a"), base.join("b")).unwrap();
        match resolve(&base.join("a"), &[]) {
            Err(Error::CannotOpen { error, .. }) => {
                assert_eq!(error.raw_os_error(), Some(libc::ELOOP))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn protected_hard_links_and_links_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let ws = real(d.path());
        std::fs::create_dir_all(ws.join(".git/hooks/deep")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join(".git/hooks/deep/pre-commit"), "#!/bin/sh\n").unwrap();
        let p = profile(&[&ws], &[&ws.join(".git/config"), &ws.join(".git/hooks")]);
        check_protected(&p).unwrap();

        std::fs::hard_link(ws.join(".git/config"), ws.join("x")).unwrap();
        let e = refused(check_protected(&p));
        assert!(e.contains(".git/config") && e.contains("2 names"), "{e}");
        let file = ws.join(".git/config").display().to_string();
        assert!(e.contains(&format!("cp -p '{file}' '{file}.copy'")), "{e}");
        std::fs::remove_file(ws.join("x")).unwrap();

        std::fs::hard_link(ws.join(".git/hooks/deep/pre-commit"), ws.join("y")).unwrap();
        let e = refused(check_protected(&p));
        assert!(e.contains("deep/pre-commit"), "{e}");
        std::fs::remove_file(ws.join("y")).unwrap();

        // A link inside the protected directory into the workspace; one to the system is fine.
        symlink("/bin/true", ws.join(".git/hooks/ok")).unwrap();
        check_protected(&p).unwrap();
        symlink("../../evil", ws.join(".git/hooks/post-checkout")).unwrap();
        let e = refused(check_protected(&p));
        assert!(e.contains("post-checkout"), "{e}");
        std::fs::remove_file(ws.join(".git/hooks/post-checkout")).unwrap();

        // The protected file itself replaced by a link, and its parent renamed and linked.
        std::fs::rename(ws.join(".git/config"), ws.join("mine")).unwrap();
        symlink(ws.join("mine"), ws.join(".git/config")).unwrap();
        let e = refused(check_protected(&p));
        assert!(e.contains("is a symlink"), "{e}");
        std::fs::remove_file(ws.join(".git/config")).unwrap();
        // Missing: fine (bwrap covers it).
        check_protected(&p).unwrap();
        std::fs::rename(ws.join(".git"), ws.join(".git-old")).unwrap();
        check_protected(&p).unwrap();
        symlink(".git-old", ws.join(".git")).unwrap();
        let e = refused(check_protected(&p));
        assert!(e.contains("remove the link and put the real file"), "{e}");
    }

    #[test]
    fn the_policys_roots_and_extra_read_are_checked_as_written() {
        let d = tempfile::tempdir().unwrap();
        let base = real(d.path());
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("docs")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(ws.join("notes"), "").unwrap();
        let text = "version = 1\n[sandbox]\nextra_read = [\"ws/notes\"]\n[sandbox.paths.w]\nroot = \"ws\"\nmode = \"rw\"\n[sandbox.paths.docs]\nroot = \"ws/docs\"\n";
        let check_now = || {
            let policy = cordon_policy::Policy::parse(text, "p.toml", &base).unwrap();
            check_named(&named(&policy), &Profile::from_policy(&policy))
        };
        check_now().unwrap();
        std::fs::remove_dir(ws.join("docs")).unwrap();
        symlink(base.join("outside"), ws.join("docs")).unwrap();
        let e = refused(check_now());
        assert!(
            e.starts_with(&format!("sandbox.paths.docs {}", ws.join("docs").display())),
            "{e}"
        );
        assert!(
            e.contains(&format!("writable root {}", ws.display())),
            "{e}"
        );
        std::fs::remove_file(ws.join("docs")).unwrap();
        std::fs::create_dir(ws.join("docs")).unwrap();
        std::fs::remove_file(ws.join("notes")).unwrap();
        symlink("/etc/hostname", ws.join("notes")).unwrap();
        let e = refused(check_now());
        assert!(e.starts_with("sandbox.extra_read"), "{e}");
    }

    #[test]
    fn a_huge_protected_directory_is_refused_not_walked_forever() {
        let d = tempfile::tempdir().unwrap();
        let ws = real(d.path());
        std::fs::create_dir(ws.join("big")).unwrap();
        for i in 0..MAX_PROTECTED_ENTRIES + 1 {
            std::fs::write(ws.join(format!("big/{i}")), "").unwrap();
        }
        let p = profile(&[&ws], &[&ws.join("big")]);
        let e = refused(check_protected(&p));
        assert!(e.contains("too many"), "{e}");
    }

    #[test]
    fn rules_open_only_through_no_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let ws = real(d.path());
        std::fs::create_dir(ws.join("docs")).unwrap();
        let writable = [ws.clone()];
        let fd = open_for_rule(&ws.join("docs"), &writable).unwrap();
        assert!(is_dir(&fd));
        assert!(open_for_rule(Path::new("/usr"), &writable).is_ok());
        std::fs::remove_dir(ws.join("docs")).unwrap();
        symlink("/", ws.join("docs")).unwrap();
        assert!(matches!(
            open_for_rule(&ws.join("docs"), &writable),
            Err(Error::PlantedLink { .. })
        ));
    }
}
