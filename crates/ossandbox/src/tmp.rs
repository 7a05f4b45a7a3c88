//! The run's private TMPDIR (`/tmp` itself is shared with every process on the machine).

use std::path::{Path, PathBuf};

use rustix::fs::RenameFlags;

/// The run's private TMPDIR: created 0700, locked with `flock` for as long as
/// this cordon lives, removed on drop. A cordon that is killed cannot remove it, but its lock
/// goes with it: a later [`sweep`] removes every `cordon-run-*` directory of this user whose
/// lock it can take. Race-free: the directory is made under a name the sweep ignores, locked,
/// and only then renamed into the swept pattern, so a sweep never sees a live run's directory
/// unlocked. (The lock's descriptor is close-on-exec: the command never holds it.)
pub(crate) struct PrivateTmp {
    path: PathBuf,
    _lock: cordon_fs::lock::FileLock,
}

/// What the sweep removes; `NEW_PREFIX` is what it never touches.
const TMP_PREFIX: &str = "cordon-run-";
const TMP_NEW_PREFIX: &str = ".cordon-new-";

impl PrivateTmp {
    /// A new private directory in `base`. Does not sweep: [`sweep`] runs once per prepared
    /// sandbox, not once per run (reading a busy `/tmp` is the slow part).
    pub(crate) fn create(base: &Path) -> std::io::Result<PrivateTmp> {
        // 0700 from the start (tempfile's default follows the umask: 0755 to every user).
        let fresh = tempfile::Builder::new()
            .prefix(TMP_NEW_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(base)?;
        let lock = cordon_fs::lock::FileLock::try_exclusive(std::fs::File::open(fresh.path())?)?
            .map_err(|_| {
                std::io::Error::other("a fresh private TMPDIR is locked by another process")
            })?;
        let name = fresh
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(TMP_NEW_PREFIX))
            .map(|suffix| format!("{TMP_PREFIX}{suffix}"))
            .ok_or_else(|| std::io::Error::other("unexpected temporary directory name"))?;
        let path = base.join(name);
        // Never over an existing entry: RENAME_NOREPLACE.
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            fresh.path(),
            rustix::fs::CWD,
            &path,
            RenameFlags::NOREPLACE,
        )?;
        let _ = fresh.keep();
        Ok(PrivateTmp { path, _lock: lock })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Removes the private TMPDIRs of this user's cordons that are gone (their lock is free).
pub(crate) fn sweep(base: &Path) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for e in entries.flatten() {
        if !e
            .file_name()
            .as_encoded_bytes()
            .starts_with(TMP_PREFIX.as_bytes())
        {
            continue;
        }
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let Ok(dir) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(&path)
        else {
            continue;
        };
        // Released when `dir` is closed below.
        if let Ok(Ok(_gone)) = cordon_fs::lock::FileLock::try_exclusive(dir) {
            remove(&path);
        }
    }
}

/// Removes a private TMPDIR through [`cordon_fs::safe`]: never following a link the command
/// left inside, and opening up (0700, through a descriptor of that very directory) what it
/// left unreadable or unsearchable (`chmod 000 dir`), which `remove_dir_all` gives up on.
fn remove(path: &Path) {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let _ = cordon_fs::safe::Dir::anchor(parent).and_then(|d| d.remove_tree(Path::new(name)));
}
