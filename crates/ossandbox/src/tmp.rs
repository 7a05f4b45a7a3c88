//! The run's private TMPDIR (`/tmp` itself is shared with every process on the machine).
//!
//! Every private TMPDIR of a user lives in one directory of that user's, `$TMPDIR/cordon-<euid>`
//! ([`UserDir`]), so that finding the ones killed cordons left lists only cordon's own entries,
//! not the whole of a busy `/tmp` (thousands of entries: a quarter of `cordon exec`'s CPU time
//! when it was listed on every call).

use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use cordon_fs::safe::Dir;
use rustix::fs::{Mode, OFlags};

use crate::Error;

/// What the sweep removes; nothing else in the user's directory is touched.
const TMP_PREFIX: &str = "cordon-run-";

/// `base/cordon-<euid>`: made 0700 by this user, opened without following a link, and checked
/// on the descriptor (owner and mode) before anything is made in it. Another local user could
/// make it first (to watch or redirect cordon's runs): refused, naming it. A sandboxed command
/// cannot reach it under bwrap (its `/tmp` is its own TMPDIR) nor write in it under Landlock
/// (no rule grants it); it could `chmod` it under Landlock (metadata of the caller's own files
/// is not covered, see docs/backends.md), so a mode that is not 0700 on a directory of this
/// user's is put back rather than refused: what another user could have made in it meanwhile
/// is never used (the sweep removes only this user's directories, a run's name is new).
pub(crate) struct UserDir {
    dir: Dir,
}

/// Why [`UserDir::open`] failed: the place taken by someone else (another user's directory, a
/// link, a file), or anything else.
enum NotOpened {
    /// Not this user's to use; a run goes on in a fresh directory ([`UserDir::fresh`]).
    Taken(Error),
    Failed(Error),
}

impl From<NotOpened> for Error {
    fn from(e: NotOpened) -> Error {
        match e {
            NotOpened::Taken(e) | NotOpened::Failed(e) => e,
        }
    }
}

impl UserDir {
    fn open(base: &Path) -> Result<UserDir, NotOpened> {
        use NotOpened::{Failed, Taken};
        let me = rustix::process::geteuid().as_raw();
        let shown = base.join(user_dir_name(me));
        let parent = Dir::anchor(base).map_err(|e| {
            Failed(Error::other(format!(
                "cannot open TMPDIR {}: {e}",
                base.display()
            )))
        })?;
        let st = parent
            .stat()
            .map_err(|e| Failed(Error::other(e.to_string())))?;
        // In a directory others may write and without the sticky bit, another user could
        // rename cordon's directory away and put theirs in its place between this check and the
        // run's use of the path.
        if st.st_mode & 0o022 != 0 && st.st_mode & 0o1000 == 0 {
            return Err(Failed(Error::Refused(format!(
                "TMPDIR {} is writable by other users and not sticky: they could replace cordon's {} in it; point TMPDIR at a directory only you can write, or /tmp",
                base.display(),
                shown.display()
            ))));
        }
        let name = Path::new(shown.file_name().expect("a name"));
        let not_ours = |uid: u32| {
            Taken(Error::Refused(format!(
                "{} belongs to uid {uid}, not to this user (uid {me}): another user made it, and could watch or redirect cordon's runs in it; remove it (as root) or point TMPDIR elsewhere",
                shown.display()
            )))
        };
        let dir = parent.create_dirs(name, 0o700).map_err(|e| {
            // Why it could not be opened: what is there, as it is (no link followed).
            match parent.stat_at(name) {
                Ok(Some(st)) if st.st_uid != me && me != 0 => not_ours(st.st_uid),
                Ok(Some(st)) if st.st_mode & 0o170000 != 0o040000 => Taken(Error::Refused(format!(
                    "{} is not a directory cordon made (it is a link or a file: {e}); remove it: cordon keeps its private TMPDIRs there",
                    shown.display()
                ))),
                _ => Failed(Error::other(format!("cannot make {}: {e}", shown.display()))),
            }
        })?;
        let st = dir
            .stat()
            .map_err(|e| Failed(Error::other(e.to_string())))?;
        if st.st_uid != me {
            return Err(not_ours(st.st_uid));
        }
        if st.st_mode & 0o7777 != 0o700 {
            rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o700)).map_err(|e| {
                Failed(Error::other(format!(
                    "cannot make {} 0700: {e}",
                    shown.display()
                )))
            })?;
        }
        Ok(UserDir { dir })
    }

    /// Where [`UserDir::open`]'s place is taken (another user made `cordon-<euid>` first, or
    /// put a link or a file there): a directory of a new name beside it, `cordon-<euid>-<random>`,
    /// made 0700 by this user and used for this run only (removed with its run). Refusing instead
    /// would let any local user stop every other user's cordon by making one directory; the
    /// taken name itself is never used. What a killed run leaves in such a directory is not
    /// swept (the warning says so).
    fn fresh(base: &Path) -> Result<UserDir, Error> {
        let me = rustix::process::geteuid().as_raw();
        let parent = Dir::anchor(base)
            .map_err(|e| Error::other(format!("cannot open TMPDIR {}: {e}", base.display())))?;
        for _ in 0..16 {
            let name = format!("{}-{:016x}", user_dir_name(me), random());
            match rustix::fs::mkdirat(&parent, name.as_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => {
                    return Err(Error::other(format!(
                        "cannot make a private directory in {}: {e}",
                        base.display()
                    )))
                }
            }
            let dir = parent.create_dirs(Path::new(&name), 0o700).map_err(|e| {
                Error::other(format!("cannot open {}: {e}", base.join(&name).display()))
            })?;
            let st = dir.stat().map_err(|e| Error::other(e.to_string()))?;
            if st.st_uid != me {
                return Err(Error::Refused(format!(
                    "{} was taken by uid {} as it was made; point TMPDIR at a directory only you can write",
                    base.join(&name).display(),
                    st.st_uid
                )));
            }
            if st.st_mode & 0o7777 != 0o700 {
                rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o700))
                    .map_err(|e| Error::other(e.to_string()))?;
            }
            return Ok(UserDir { dir });
        }
        Err(Error::other(format!(
            "cannot make a private directory in {}: 16 new names in a row were taken",
            base.display()
        )))
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The [`UserDir`]'s name: `cordon-<euid>`, and, in a user namespace that maps `euid` to
/// another uid of its parent, `cordon-<euid>-<parent's uid>`. Root of a rootless container (0
/// mapped to, say, 1000) is not the machine's root: sharing the machine's root's `cordon-0`
/// would be refused (that directory is not its own, and inside it shows as owned by the
/// overflow uid), so it gets `cordon-0-1000`; a sandbox that maps a user to its parent's root
/// likewise does not take root's.
fn user_dir_name(euid: u32) -> String {
    match outside_uid(euid) {
        outside if outside == euid => format!("cordon-{euid}"),
        outside => format!("cordon-{euid}-{outside}"),
    }
}

/// `uid` as the parent user namespace knows it (`/proc/self/uid_map`; the same number in the
/// machine's own namespace). Unreadable or unmapped: `uid` itself.
fn outside_uid(uid: u32) -> u32 {
    let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else {
        return uid;
    };
    map.lines()
        .find_map(|l| {
            let mut f = l.split_whitespace().map(|w| w.parse::<u64>().ok());
            let (inside, outside, count) = (f.next()??, f.next()??, f.next()??);
            let at = u64::from(uid).checked_sub(inside).filter(|&d| d < count)?;
            u32::try_from(outside + at).ok()
        })
        .unwrap_or(uid)
}

/// The run's private TMPDIR: `cordon-run-<random>` in the [`UserDir`], created 0700, locked
/// with `flock` for as long as this cordon lives, removed on drop. A cordon that is killed
/// cannot remove it, but its lock goes with it: a later [`sweep`] removes every `cordon-run-*`
/// directory whose lock it can take. Race-free: a sweep may take the lock of a directory made
/// a moment ago, before its maker did, and remove it; the maker then finds its directory gone
/// (cannot open it, cannot lock it, or holds the lock of a directory with no name left) and
/// makes another. Once the maker holds the lock of a directory that still has its name, no
/// sweep removes it. (The lock's descriptor is close-on-exec: the command never holds it.)
pub(crate) struct PrivateTmp {
    path: PathBuf,
    _lock: cordon_fs::lock::FileLock,
    /// The [`UserDir::fresh`] directory this run made because the usual one was taken:
    /// removed after the run's own.
    fresh: Option<PathBuf>,
}

impl PrivateTmp {
    /// A new private directory in `base`'s [`UserDir`]. Does not sweep: [`sweep`] runs once per
    /// prepared sandbox, not once per run.
    pub(crate) fn create(base: &Path) -> Result<PrivateTmp, Error> {
        let (user, fresh) = match UserDir::open(base) {
            Ok(user) => (user, false),
            Err(NotOpened::Taken(why)) => {
                let user = UserDir::fresh(base)?;
                eprintln!(
                    "cordon: warning: {why}; this run's private TMPDIR is in {} instead (a killed run's is not cleaned up there)",
                    user.path().display()
                );
                (user, true)
            }
            Err(NotOpened::Failed(e)) => return Err(e),
        };
        let failed = |e: std::io::Error| {
            Error::other(format!(
                "cannot create the private TMPDIR in {}: {e}",
                user.path().display()
            ))
        };
        for _ in 0..16 {
            let name = format!("{TMP_PREFIX}{:016x}", random());
            match rustix::fs::mkdirat(&user.dir, name.as_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(failed(e.into())),
            }
            let fd: OwnedFd = match rustix::fs::openat(
                &user.dir,
                name.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                // Swept already.
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => return Err(failed(e.into())),
            };
            let Ok(lock) = cordon_fs::lock::FileLock::try_exclusive(std::fs::File::from(fd))
                .map_err(failed)?
            else {
                // A sweep holds it: it is going.
                continue;
            };
            // The umask may have taken bits of 0700 away (a 0077 umask keeps it).
            let st = rustix::fs::fstat(lock.file()).map_err(|e| failed(e.into()))?;
            if st.st_nlink == 0 {
                // A sweep took the lock first and removed it.
                continue;
            }
            if st.st_mode & 0o7777 != 0o700 {
                rustix::fs::fchmod(lock.file(), Mode::from_raw_mode(0o700))
                    .map_err(|e| failed(e.into()))?;
            }
            return Ok(PrivateTmp {
                path: user.path().join(name),
                _lock: lock,
                fresh: fresh.then(|| user.path().to_path_buf()),
            });
        }
        Err(failed(std::io::Error::other(
            "16 new names in a row were taken or swept at once",
        )))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        // On the Landlock backend the directory is a mount point in the run's namespace until
        // its init has exited: removed before that, the kernel's unmount there waits for an
        // RCU grace period on cordon's way out (see `await_finished_inits`).
        #[cfg(target_os = "linux")]
        crate::run::namespaces::await_finished_inits();
        warn_unless_removed(&self.path);
        if let Some(fresh) = &self.fresh {
            warn_unless_removed(fresh);
        }
    }
}

/// A name for a run's directory: unique enough (a taken one is skipped); it need not be
/// secret, nobody but this user (and root) can make entries in the [`UserDir`].
fn random() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// Removes the private TMPDIRs of this user's cordons that are gone (their lock is free).
/// Lists only the [`UserDir`] (a few entries) on the caller's thread; removing what it found,
/// which can be a large tree, goes to a thread of its own when one can be started.
pub(crate) fn sweep(base: &Path) {
    let Ok(user) = UserDir::open(base) else {
        // The run that follows refuses with the reason.
        return;
    };
    let Ok(entries) = user.dir.entries() else {
        return;
    };
    let left: Vec<_> = entries
        .into_iter()
        .filter(|(name, is_dir)| {
            *is_dir && name.as_encoded_bytes().starts_with(TMP_PREFIX.as_bytes())
        })
        .map(|(name, _)| name)
        .collect();
    if left.is_empty() {
        return;
    }
    let work = std::sync::Arc::new((user, left));
    let sweep_all = |work: &(UserDir, Vec<std::ffi::OsString>)| {
        for name in &work.1 {
            sweep_one(&work.0, name);
        }
    };
    let spawned = {
        #[cfg(target_os = "linux")]
        let _mask = crate::run::block_forwarded_signals();
        std::thread::Builder::new()
            .name("cordon-tmp-sweep".into())
            .spawn({
                let work = work.clone();
                move || sweep_all(&work)
            })
    };
    if spawned.is_err() {
        sweep_all(&work);
    }
}

/// Removes `name` if it is a directory of this user's whose lock is free.
fn sweep_one(user: &UserDir, name: &OsStr) {
    let Ok(fd) = rustix::fs::openat(
        &user.dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    if rustix::fs::fstat(&fd).map_or(true, |st| st.st_uid != me) {
        return;
    }
    // Released when the lock is dropped, after the removal.
    if let Ok(Ok(_gone)) = cordon_fs::lock::FileLock::try_exclusive(std::fs::File::from(fd)) {
        if let Err(e) = user.dir.remove_tree(Path::new(name)) {
            eprintln!(
                "cordon: warning: {}",
                not_removed(&user.path().join(name), &e)
            );
        }
    }
}

/// Removes a private TMPDIR through [`cordon_fs::safe`]: never following a link the command
/// left inside, and opening up (0700, through a descriptor of that very directory) what it
/// left unreadable or unsearchable (`chmod 000 dir`), which `remove_dir_all` gives up on.
fn remove(path: &Path) -> Result<(), cordon_fs::safe::SafeError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    Dir::anchor(parent).and_then(|d| d.remove_tree(Path::new(name)))
}

/// [`remove`], saying on stderr what stayed: a run's files must not outlive it unseen.
fn warn_unless_removed(path: &Path) {
    if let Err(e) = remove(path) {
        eprintln!("cordon: warning: {}", not_removed(path, &e));
    }
}

/// The one line for a private TMPDIR that could not be removed. It names the directory (a name
/// cordon chose) and the error, never a name inside (the command's choice, which could hold
/// terminal escapes).
fn not_removed(path: &Path, e: &cordon_fs::safe::SafeError) -> String {
    let why = match e {
        cordon_fs::safe::SafeError::Io { source, .. } => source.to_string(),
        _ => "something in it is not what cordon can remove".into(),
    };
    format!(
        "could not remove {}, a run's private TMPDIR ({why}); the next run tries again, or remove it yourself (`chmod -R u+rwx` it, then `rm -rf` it)",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn runs_live_in_the_users_directory_0700() {
        let base = tempfile::tempdir().unwrap();
        let t = PrivateTmp::create(base.path()).unwrap();
        let me = rustix::process::geteuid().as_raw();
        let user = base.path().join(format!("cordon-{me}"));
        assert_eq!(t.path().parent(), Some(user.as_path()));
        for p in [&user, &t.path().to_path_buf()] {
            let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, 0o700, "{}", p.display());
        }
        let path = t.path().to_path_buf();
        drop(t);
        assert!(!path.exists());
        assert!(user.exists(), "the user's directory stays for the next run");
    }

    #[test]
    fn the_users_directory_is_named_by_the_uid_outside_its_user_namespace() {
        // In the machine's own namespace (where the suite runs) every uid maps to itself.
        let map = std::fs::read_to_string("/proc/self/uid_map").unwrap();
        assert_eq!(
            map.split_whitespace().collect::<Vec<_>>(),
            ["0", "0", "4294967295"]
        );
        for uid in [0, 1000, 65534] {
            assert_eq!(outside_uid(uid), uid);
            assert_eq!(user_dir_name(uid), format!("cordon-{uid}"));
        }
    }

    #[test]
    fn a_link_in_its_place_is_never_followed_and_the_run_goes_on_beside_it() {
        let base = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let me = rustix::process::geteuid().as_raw();
        let user = base.path().join(format!("cordon-{me}"));
        std::os::unix::fs::symlink(elsewhere.path(), &user).unwrap();
        let t = PrivateTmp::create(base.path()).expect("a fresh directory beside the link");
        // Nothing made through the link; the run's directory is in a new one of this user's.
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        let fresh = t.path().parent().unwrap().to_path_buf();
        assert_eq!(fresh.parent().unwrap(), base.path());
        let name = fresh.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with(&format!("cordon-{me}-")), "{name}");
        let meta = std::fs::symlink_metadata(&fresh).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
        assert!(std::fs::symlink_metadata(&user)
            .unwrap()
            .file_type()
            .is_symlink());
        // Gone with the run, the fresh directory included; the link is left as it was.
        drop(t);
        assert!(!fresh.exists(), "the fresh directory goes with its run");
        assert!(std::fs::symlink_metadata(&user)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_world_writable_base_without_the_sticky_bit_is_refused() {
        let base = tempfile::tempdir().unwrap();
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = PrivateTmp::create(base.path()).err().expect("refused");
        assert_eq!(e.kind(), crate::ErrorKind::Refused, "{e}");
        assert!(e.to_string().contains("not sticky"), "{e}");
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        PrivateTmp::create(base.path()).expect("sticky: fine");
    }

    #[test]
    fn a_mode_the_command_could_have_set_is_put_back() {
        let base = tempfile::tempdir().unwrap();
        let me = rustix::process::geteuid().as_raw();
        let user = base.path().join(format!("cordon-{me}"));
        std::fs::create_dir(&user).unwrap();
        std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o777)).unwrap();
        let _t = PrivateTmp::create(base.path()).unwrap();
        let mode = std::fs::metadata(&user).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700);
    }

    /// What the sweep cannot remove is said, naming the private TMPDIR and never a name in it.
    /// A command cannot make this happen (as root it has no CAP_LINUX_IMMUTABLE, and a user's
    /// tree is the user's to open up), so the test makes it from outside: as root an immutable
    /// file, as a user a parent it cannot write.
    #[test]
    fn what_cannot_be_removed_is_named_without_the_names_inside() {
        let base = tempfile::tempdir().unwrap();
        let t = PrivateTmp::create(base.path()).unwrap();
        let inside = t.path().join("x\x1b]0;owned\x07");
        std::fs::write(&inside, "x").unwrap();
        let root = rustix::process::geteuid().is_root();
        let user = t.path().parent().unwrap().to_path_buf();
        let chattr = |flag: &str| {
            let ok = std::process::Command::new("chattr")
                .arg(flag)
                .arg(&inside)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chattr {flag}");
        };
        if root {
            chattr("+i");
        } else {
            std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o500)).unwrap();
        }
        let e = remove(t.path()).unwrap_err();
        if root {
            chattr("-i");
        } else {
            std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let said = not_removed(t.path(), &e);
        assert!(
            said.starts_with(&format!(
                "could not remove {}, a run's private TMPDIR (",
                t.path().display()
            )),
            "{said}"
        );
        assert!(
            said.contains("Operation not permitted") || said.contains("Permission denied"),
            "{said}"
        );
        assert!(!said.contains('\x1b') && !said.contains("owned"), "{said}");
        drop(t);
    }
}
