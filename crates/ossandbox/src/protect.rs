//! The protected-path plan: which mounts keep `sandbox.protected` paths read-only inside the
//! writable roots. One plan, two executors: the bwrap backend renders it as bwrap's options
//! ([`crate::bwrap::invocation`]), the Landlock backend's init performs it with the mount API
//! in the command's own mount namespace ([`crate::run::namespaces`]).
//!
//! Per protected path: a read-only bind of the path onto itself; or, when a component on the
//! way is missing or a symlink, a read-only cover of that component (a symlink could point the
//! mount elsewhere, a missing path could be created): `/dev/null`, or a placeholder file of
//! cordon's made here (link-safely) and removed after the run; a hidden path is covered by an
//! empty read-only tmpfs (a directory) or `/dev/null` (a file). And every directory between
//! the writable root and a protected path is bound onto itself: a read-only mount cannot be
//! renamed, but a directory above it could, taking the mount along (`mv .git .git-old`, then
//! a fresh, unprotected `.git/hooks`); a mount point cannot be renamed either.

use std::path::{Path, PathBuf};

use crate::profile::{placeholder_content, PathRule, Protected};
use crate::Error;

/// One mount of the plan, onto `at` (an absolute path inside a writable root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cover {
    /// `at`, a directory above a protected path, bound onto itself, writable: a mount point
    /// cannot be renamed away.
    Anchor,
    /// `at` bound onto itself, read-only.
    ReadOnly,
    /// `/dev/null` bound over `at`, read-only.
    Null,
    /// An empty read-only tmpfs over `at` (a hidden directory).
    EmptyDir,
}

/// A mount of the plan and why it is there (the policy key, for audit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub at: PathBuf,
    pub cover: Cover,
    pub why: String,
}

/// The mounts for a profile's protected paths, and the placeholders made for them.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// [`Cover::Anchor`]s, parents first. A backend that mounts other paths inside the
    /// writable roots mounts these among them by depth.
    pub anchors: Vec<Mount>,
    /// The protected paths' own covers, in the profile's order, after every other mount.
    pub covers: Vec<Mount>,
    /// Files cordon created as mount points, removed after the run
    /// ([`remove_placeholder`]).
    pub placeholders: Vec<PathBuf>,
}

/// The writable roots a protected path is looked up in: each writable rule of `rules` whose
/// nearest enclosing rule is not writable too (a writable rule inside a writable one adds no
/// mount of its own in bwrap's view, so the directories between the outer root and the
/// protected path are all anchored).
pub fn writable_roots<'a>(rules: &[&'a PathRule]) -> Vec<&'a Path> {
    let redundant = |r: &PathRule| {
        rules
            .iter()
            .filter(|p| p.path != r.path && r.path.starts_with(&p.path))
            .max_by_key(|p| p.path.components().count())
            .is_some_and(|p| p.access.write == r.access.write)
    };
    rules
        .iter()
        .filter(|r| r.access.write && !redundant(r))
        .map(|r| r.path.as_path())
        .collect()
}

/// The deepest of `roots` that holds `path`.
fn root_of<'a>(roots: &[&'a Path], path: &Path) -> Option<&'a Path> {
    roots
        .iter()
        .copied()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.components().count())
}

/// The plan for `protected` inside `roots` (from [`writable_roots`]). Unless `dry_run`
/// (`cordon profile`: nothing is created on the host), a missing component is created now as
/// an empty file (or one with its [`placeholder_content`]) through [`cordon_fs::safe`], so
/// that it can be covered and removed afterwards; on an error the ones made so far are
/// removed.
pub fn plan(protected: &[Protected], roots: &[&Path], dry_run: bool) -> Result<Plan, Error> {
    let mut plan = Plan::default();
    let made = build(protected, roots, dry_run, &mut plan);
    if made.is_err() {
        for p in &plan.placeholders {
            remove_placeholder(p);
        }
    }
    made.map(|()| plan)
}

fn build(
    protected: &[Protected],
    roots: &[&Path],
    dry_run: bool,
    plan: &mut Plan,
) -> Result<(), Error> {
    let mut anchors: Vec<PathBuf> = Vec::new();
    for p in protected {
        let Some(root) = root_of(roots, &p.path) else {
            continue;
        };
        let mut cur = root.to_path_buf();
        let rel: Vec<_> = p
            .path
            .strip_prefix(root)
            .map(|r| r.components().collect())
            .unwrap_or_default();
        for c in rel.iter().take(rel.len().saturating_sub(1)) {
            cur.push(c);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.is_dir() => anchors.push(cur.clone()),
                _ => break,
            }
        }
    }
    anchors.sort_by_key(|a| (a.components().count(), a.clone()));
    anchors.dedup();
    plan.anchors = anchors
        .into_iter()
        .map(|at| Mount {
            at,
            cover: Cover::Anchor,
            why: "sandbox.protected: the directory above a protected path, kept from being renamed away".into(),
        })
        .collect();

    for p in protected {
        let root = root_of(roots, &p.path).ok_or_else(|| {
            Error::other(format!(
                "protected path {} is not inside a writable root",
                p.path.display()
            ))
        })?;
        let mount = match first_unsafe_component(root, &p.path) {
            None if p.hidden() => {
                if std::fs::symlink_metadata(&p.path).is_ok_and(|m| m.is_dir()) {
                    Mount {
                        at: p.path.clone(),
                        cover: Cover::EmptyDir,
                        why: format!("{}: hidden (an empty read-only tmpfs)", p.origin),
                    }
                } else {
                    Mount {
                        at: p.path.clone(),
                        cover: Cover::Null,
                        why: format!("{}: hidden (/dev/null in its place)", p.origin),
                    }
                }
            }
            None => Mount {
                at: p.path.clone(),
                cover: Cover::ReadOnly,
                why: p.origin.clone(),
            },
            Some((at, missing)) => {
                let content = placeholder_content(&at).filter(|_| missing);
                if missing && !dry_run {
                    // The mount point would otherwise be created through the writable root;
                    // made here so that we know to remove it afterwards. Through
                    // cordon_fs::safe: never through a link on the way (a concurrent run of
                    // `cordon mcp` could have re-pointed a directory since the check).
                    let (Some(dir), Some(name)) = (at.parent(), at.file_name()) else {
                        return Err(Error::other(format!(
                            "cannot create a placeholder for protected {}: no parent",
                            at.display()
                        )));
                    };
                    cordon_fs::safe::Dir::open_absolute(dir)
                        .and_then(|d| {
                            d.create_new(Path::new(name), content.unwrap_or_default(), 0o644)
                        })
                        .map_err(|e| {
                            Error::other(format!(
                                "cannot create a placeholder for protected {}: {e}",
                                at.display()
                            ))
                        })?;
                    plan.placeholders.push(at.clone());
                }
                let why = if missing {
                    format!("{}: missing, so its first missing component is covered and cannot be created", p.origin)
                } else {
                    format!(
                        "{}: a symlink on the way is covered so it cannot redirect the mount",
                        p.origin
                    )
                };
                Mount {
                    at,
                    // A placeholder with content is its own source: git must read it.
                    cover: if content.is_some() {
                        Cover::ReadOnly
                    } else {
                        Cover::Null
                    },
                    why,
                }
            }
        };
        plan.covers.push(mount);
    }
    Ok(())
}

/// The first component of `path` below `root` that is a symlink or does not exist, and
/// whether it is missing. `None` when the whole path exists without symlinks.
fn first_unsafe_component(root: &Path, path: &Path) -> Option<(PathBuf, bool)> {
    let rel = path.strip_prefix(root).ok()?;
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Err(_) => return Some((cur, true)),
            Ok(m) if m.file_type().is_symlink() => return Some((cur, false)),
            Ok(_) => {}
        }
    }
    None
}

/// Removes the placeholder cordon made at `path`, if it still is one (an empty regular file,
/// or one holding exactly its [`placeholder_content`]): through [`cordon_fs::safe`] (its
/// directory opened from `/` without following a link), so a link a concurrent run put on
/// the way (`.git -> /etc`) cannot make cordon delete a file elsewhere.
pub fn remove_placeholder(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let Ok(dir) = cordon_fs::safe::Dir::open_absolute(dir) else {
        return;
    };
    let want = placeholder_content(path).unwrap_or_default();
    let still = dir
        .read(Path::new(name), want.len() as u64)
        .ok()
        .flatten()
        .is_some_and(|b| b == want);
    if still {
        let _ = dir.remove(Path::new(name));
    }
}

#[cfg(test)]
pub(crate) fn is_placeholder(path: &Path) -> bool {
    let want = placeholder_content(path).unwrap_or_default();
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == want.len() as u64)
        && (want.is_empty() || std::fs::read(path).is_ok_and(|b| b == want))
}
