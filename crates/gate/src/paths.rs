//! Names that a sandboxed command could re-point, and places that belong to someone else.

use std::path::{Path, PathBuf};

use cordon_ossandbox::Profile;

/// The first symlink on `path` as written (the path itself or a directory on the way) whose
/// directory lies in one of the profile's writable roots, with that root: the sandboxed command
/// can replace such a link between runs.
pub(crate) fn symlink_in_writable_root(
    path: &Path,
    profile: &Profile,
) -> Option<(PathBuf, PathBuf)> {
    let path = std::path::absolute(path).ok()?;
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        let is_link = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        let dir = at.parent().and_then(|d| std::fs::canonicalize(d).ok())?;
        if let Some(root) = profile
            .rules
            .iter()
            .find(|r| r.access.write && !r.access.device && dir.starts_with(&r.path))
        {
            return Some((at, root.path.clone()));
        }
    }
    None
}

/// Checks that every part of `path` that exists (symlinks as themselves) belongs to the user
/// running cordon or to root. The default log follows HOME and XDG_STATE_HOME, which `sudo -E`
/// carries over to root: root would create directories in another user's home (taking their
/// `~/.local` over) and follow links that user planted there to anywhere on the machine.
pub(crate) fn owned_by_caller(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            // Root's files show as the overflow uid in a user namespace that does not map
            // root (see `caller_or_root`).
            Ok(m) if cordon_policy::trust::caller_or_root(m.uid()) => {}
            Ok(m) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{} belongs to uid {}, not to uid {euid} running cordon (is HOME another user's, as with sudo -E?)",
                        at.display(),
                        m.uid()
                    ),
                ))
            }
            Err(_) => break, // missing from here on: cordon creates it, as this user
        }
    }
    Ok(())
}
