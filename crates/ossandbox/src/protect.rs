//! The protected-path plan: which mounts keep `sandbox.protected` paths read-only inside the
//! writable roots. One plan, two executors: the bwrap backend renders it as bwrap's options
//! ([`crate::bwrap::invocation`]), the Landlock backend's init performs it with the mount API
//! in the command's own mount namespace ([`crate::run::namespaces`]).
//!
//! Per protected path: a read-only bind of the path onto itself; or, when a component on the
//! way is missing or a symlink, a read-only cover of that component (a symlink could point the
//! mount elsewhere, a missing path could be created): `/dev/null`, or a placeholder file of
//! cordon's made here (link-safely) and removed by the last run that uses it ([`Placeholders`]);
//! a file standing where a directory on the way would be is covered as it stands; a hidden path
//! is covered by an
//! empty read-only tmpfs (a directory) or `/dev/null` (a file). And every directory between
//! the writable root and a protected path is bound onto itself: a read-only mount cannot be
//! renamed, but a directory above it could, taking the mount along (`mv .git .git-old`, then
//! a fresh, unprotected `.git/hooks`); a mount point cannot be renamed either.

use std::ffi::OsString;
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

/// The mounts for a profile's protected paths, and the placeholders they use.
#[derive(Debug, Default)]
pub struct Plan {
    /// [`Cover::Anchor`]s, parents first. A backend that mounts other paths inside the
    /// writable roots mounts these among them by depth.
    pub anchors: Vec<Mount>,
    /// The protected paths' own covers, in the profile's order, after every other mount.
    pub covers: Vec<Mount>,
    /// The placeholder files the covers are mounted on, held until the run's mounts are gone
    /// (drop it then).
    pub placeholders: Placeholders,
}

/// The placeholder files a run's covers are mounted on — made by this run, or found there
/// (another run's, still running or killed) — and a shared `flock` for each directory that
/// holds one, taken before the directory was looked at and kept for the run.
///
/// Why: a placeholder is a mount point in each run's own mount namespace, and unlinking it in
/// the host's namespace detaches every mount on it, in every namespace. A run that removed
/// its placeholders while another run over the same directory had them mounted would take
/// that run's cover away: its command could then create the protected path. So a placeholder
/// is removed only by the last run out: on drop, every lock a run over the directory may hold
/// is asked for exclusively without waiting ([`Hold::release`]); all granted, no other run
/// holds the directory and its placeholders (made or found) are removed; one refused, another
/// run is still using them and removes them when it ends. A run that starts meanwhile waits
/// for the remover's lock (a matter of an unlink), then sees the names as they are. The same
/// rule removes the placeholders a SIGKILLed cordon left: the next run finds them and, last
/// out, removes them.
///
/// Where a run's lock is: see [`lock_file`]. In short, a file in a private directory of the
/// directory owner's in `/run/lock`, which no command reaches and no other user can open or
/// plant; else (a run of a third user's, no usable `/run/lock`) the directory itself.
#[derive(Debug, Default)]
pub struct Placeholders {
    made: Vec<PathBuf>,
    found: Vec<PathBuf>,
    held: Vec<Hold>,
}

/// A run's shared lock on a directory that holds placeholders ([`Placeholders`]).
#[derive(Debug)]
struct Hold {
    dir: PathBuf,
    /// The directory, opened when the lock was taken (its identity names the lock file, and
    /// it is itself one of the locks a remover must get).
    opened: cordon_fs::safe::Dir,
    lock: cordon_fs::lock::FileLock,
}

/// How long a run waits for a directory whose placeholders another run is removing.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Placeholders {
    /// The placeholders this run made.
    #[cfg(test)]
    pub(crate) fn made(&self) -> &[PathBuf] {
        &self.made
    }

    /// The placeholders this run found there (another run's).
    #[cfg(test)]
    pub(crate) fn found(&self) -> &[PathBuf] {
        &self.found
    }

    /// Holds `dir` (the directory a placeholder is, or is to be, in) shared for the run.
    fn hold(&mut self, dir: &Path) -> Result<(), Error> {
        if self.held.iter().any(|h| h.dir == dir) {
            // Once per directory: a second description of ours would make our own exclusive
            // request at the end fail.
            return Ok(());
        }
        let why = |e: &dyn std::fmt::Display| {
            Error::other(format!(
                "cannot take the lock on {} that keeps the placeholders of cordon's runs over it from being removed while a run uses them: {e}; the run is refused",
                dir.display()
            ))
        };
        let opened = cordon_fs::safe::Dir::open_absolute(dir).map_err(|e| why(&e))?;
        let file = match lock_file(&opened).map_err(|e| why(&e))? {
            Some(file) => file,
            None => dir_lock(&opened).map_err(|e| why(&e))?,
        };
        let lock = cordon_fs::lock::FileLock::shared(file, LOCK_WAIT).map_err(|e| why(&e))?;
        self.held.push(Hold {
            dir: dir.to_path_buf(),
            opened,
            lock,
        });
        Ok(())
    }
}

impl Hold {
    /// This run's lock made exclusive, with every other lock a run over the directory may
    /// hold (the lock file in each of the owner's areas, and the directory itself), all
    /// without waiting: `None` when one is held (another run still uses the directory) or
    /// cannot be had — then the placeholders stay for the last run out.
    fn release(self) -> Option<Vec<cordon_fs::lock::FileLock>> {
        use cordon_fs::lock::FileLock;
        let Hold { opened, lock, .. } = self;
        let own = FileLock::try_exclusive(lock.into_file().ok()?).ok()?.ok()?;
        let id = |f: &std::fs::File| rustix::fs::fstat(f).ok().map(|st| (st.st_dev, st.st_ino));
        let own_id = id(own.file())?;
        let mut others = every_lock_file(&opened).ok()?;
        others.push(dir_lock(&opened).ok()?);
        let mut got = vec![own];
        for file in others {
            if id(&file)? == own_id {
                continue;
            }
            got.push(FileLock::try_exclusive(file).ok()?.ok()?);
        }
        Some(got)
    }
}

/// Where the placeholder locks live: the system's directory for lock files (root's, sticky,
/// writable by every user), which no profile grants and bwrap does not mount.
pub const LOCKS: &str = "/run/lock";

/// The name of an owner's area in [`LOCKS`]: this, the owner's uid, `-`, and a name unique to
/// its making.
const AREA: &str = "cordon-locks-";

/// [`LOCKS`], when it is root's sticky directory writable by every user.
fn locks_dir() -> Option<cordon_fs::safe::Dir> {
    cordon_fs::safe::Dir::anchor_nofollow(Path::new(LOCKS))
        .ok()
        .filter(|l| {
            l.stat().is_ok_and(|st| {
                st.st_uid == 0 && st.st_mode & 0o1000 != 0 && st.st_mode & 0o002 != 0
            })
        })
}

/// The directory `dir` itself as a lock (the fallback: a command that can open the directory
/// can lock it too).
fn dir_lock(dir: &cordon_fs::safe::Dir) -> Result<std::fs::File, Error> {
    use std::os::fd::AsFd;
    dir.as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .map_err(|e| Error::other(e.to_string()))
}

/// The areas of `owner` in `locks`: directories named `cordon-locks-OWNER-…`, owned by
/// `owner`, with no permission for group or others, opened without following a link. Only
/// `owner` and root can make such a directory, so another user's entry there (made to stop
/// these runs, whatever its name) is none of them and is passed over.
fn areas(locks: &cordon_fs::safe::Dir, owner: u32) -> Result<Vec<cordon_fs::safe::Dir>, Error> {
    use std::os::unix::ffi::OsStrExt;
    let prefix = format!("{AREA}{owner}-");
    let mut names: Vec<OsString> = locks
        .entries()
        .map_err(|e| Error::other(e.to_string()))?
        .into_iter()
        .filter(|(n, is_dir)| *is_dir && n.as_bytes().starts_with(prefix.as_bytes()))
        .map(|(n, _)| n)
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .filter_map(|n| locks.dir(Path::new(&n)).ok())
        .filter(|d| {
            d.stat()
                .is_ok_and(|st| st.st_uid == owner && st.st_mode & 0o077 == 0)
        })
        .collect())
}

/// A new area of `owner` in `locks` (mode 0700; root's run hands the one it made over).
fn make_area(locks: &cordon_fs::safe::Dir, owner: u32) -> Result<cordon_fs::safe::Dir, Error> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for n in 0..16 {
        let name = format!("{AREA}{owner}-{}-{stamp:x}-{n}", std::process::id());
        match rustix::fs::mkdirat(locks, name.as_str(), rustix::fs::Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(Error::other(format!("{LOCKS}/{name}: {e}"))),
        }
        let area = locks
            .dir(Path::new(&name))
            .map_err(|e| Error::other(e.to_string()))?;
        let st = area.stat().map_err(|e| Error::other(e.to_string()))?;
        if st.st_uid != owner {
            rustix::fs::fchown(&area, Some(rustix::fs::Uid::from_raw(owner)), None).map_err(
                |e| Error::other(format!("cannot give {LOCKS}/{name} to uid {owner}: {e}")),
            )?;
        }
        return Ok(area);
    }
    Err(Error::other(format!(
        "{LOCKS}: no free name for an area of uid {owner}"
    )))
}

/// The lock file of the directory `at` (its device and inode) in `area`, made (mode 0600,
/// the owner's) when missing, never through a link.
fn area_file(area: &cordon_fs::safe::Dir, at: &rustix::fs::Stat) -> Result<std::fs::File, Error> {
    let name = format!("{}-{}", at.st_dev, at.st_ino);
    let rel = Path::new(&name);
    let shown =
        |e: &dyn std::fmt::Display| Error::other(format!("{}/{name}: {e}", area.path().display()));
    let file = match area.open_file(rel).map_err(|e| shown(&e))? {
        Some(f) => f,
        None => match area.create_new(rel, b"", 0o600) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => area
                .open_file(rel)
                .map_err(|e| shown(&e))?
                .ok_or_else(|| shown(&"came and went"))?,
            Err(e) => return Err(shown(&e)),
        },
    };
    let st = rustix::fs::fstat(&file).map_err(|e| shown(&e))?;
    if st.st_uid != at.st_uid {
        rustix::fs::fchown(&file, Some(rustix::fs::Uid::from_raw(at.st_uid)), None)
            .map_err(|e| shown(&format!("cannot give it to the directory's owner: {e}")))?;
    }
    Ok(file)
}

/// The lock file a run over the directory `dir` takes: `DEV-INO` (the directory's identity)
/// in an area of the directory's owner in [`LOCKS`] — a directory `cordon-locks-OWNER-…`,
/// the owner's, mode 0700, made by the first run that needs one. `None` where there is none
/// to use: [`LOCKS`] is not root's sticky directory (missing, as inside some outer
/// sandboxes), or the caller is neither root nor the owner (a user's run that found root's
/// placeholder in a directory root made in that user's workspace); the lock is then the
/// directory itself ([`dir_lock`]): correct, but a command or another user that can open the
/// directory can make such a run wait and refuse.
///
/// - Out of the commands' reach: no profile grants [`LOCKS`], bwrap does not mount it. (On
///   the directory, a command's exclusive `flock` made every run that started meanwhile wait
///   10 s and refuse.)
/// - Out of other users' reach: only the owner and root can make a directory the owner owns,
///   and only they can open what is in it. Before, the files lay in [`LOCKS`] itself under a
///   name anyone could work out, 0644: another user could make the name first (the owner's
///   runs were refused, "belongs to uid …") or `flock` the file (they waited 10 s and were
///   refused).
/// - Two runs that find no area at once each make one: a run takes its lock in one area, and
///   the last run out must get the lock in every area ([`Hold::release`]), so that is safe.
///   Areas and lock files are never removed (a tmpfs, cleared at boot).
fn lock_file(dir: &cordon_fs::safe::Dir) -> Result<Option<std::fs::File>, Error> {
    let at = dir.stat().map_err(|e| Error::other(e.to_string()))?;
    let me = rustix::process::geteuid().as_raw();
    let Some(locks) = locks_dir().filter(|_| me == 0 || me == at.st_uid) else {
        return Ok(None);
    };
    let area = match areas(&locks, at.st_uid)?.into_iter().next() {
        Some(a) => a,
        None => make_area(&locks, at.st_uid)?,
    };
    area_file(&area, &at).map(Some)
}

/// Every lock file of the directory `dir` a run over it may hold: one in each of its owner's
/// areas, made where missing (a run that starts meanwhile finds it there, and waits). `Err`
/// where the caller cannot reach them all (neither root nor the owner): it cannot be the last
/// run out.
fn every_lock_file(dir: &cordon_fs::safe::Dir) -> Result<Vec<std::fs::File>, Error> {
    let at = dir.stat().map_err(|e| Error::other(e.to_string()))?;
    let me = rustix::process::geteuid().as_raw();
    let Some(locks) = locks_dir() else {
        return Ok(Vec::new());
    };
    if me != 0 && me != at.st_uid {
        return Err(Error::other(format!(
            "the areas of uid {} in {LOCKS} are not this user's",
            at.st_uid
        )));
    }
    areas(&locks, at.st_uid)?
        .iter()
        .map(|a| area_file(a, &at))
        .collect()
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        for hold in std::mem::take(&mut self.held) {
            let dir = hold.dir.clone();
            // Not granted: another run holds the directory and removes them when it ends.
            let Some(_last) = hold.release() else {
                continue;
            };
            for p in self.made.iter().chain(&self.found) {
                if p.parent() == Some(dir.as_path()) {
                    // Only what is still a placeholder, never through a link.
                    remove_placeholder(p);
                }
            }
        }
    }
}

/// The writable roots a protected path is looked up in: each writable rule of `rules` whose
/// nearest enclosing rule is not writable too (a writable rule inside a writable one adds no
/// mount of its own in bwrap's view, so the directories between the outer root and the
/// protected path are all anchored).
pub fn writable_roots<'a>(rules: &[&'a PathRule]) -> Vec<&'a Path> {
    rules
        .iter()
        .filter(|r| r.access.write && !redundant(rules, r))
        .map(|r| r.path.as_path())
        .collect()
}

/// Whether `r`'s nearest enclosing rule in `rules` already mounts it the same way (/usr/bin
/// under /usr, a writable directory inside a writable root): bwrap's view needs no mount of
/// its own for it.
pub fn redundant(rules: &[&PathRule], r: &PathRule) -> bool {
    rules
        .iter()
        .filter(|p| p.path != r.path && r.path.starts_with(&p.path))
        .max_by_key(|p| p.path.components().count())
        .is_some_and(|p| p.access.write == r.access.write)
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
    // On an error the plan is dropped: what it made is removed as at the end of a run.
    build(protected, roots, dry_run, &mut plan)?;
    Ok(plan)
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
        let place = if dry_run {
            first_unsafe_component(root, &p.path)
        } else {
            settle(root, &p.path, &mut plan.placeholders)?
        };
        let mount = match place {
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
            Some((at, Unsafe::InTheWay)) => Mount {
                at,
                cover: Cover::ReadOnly,
                why: format!(
                    "{}: a file stands where a directory on the way would be (a placeholder of another run, or one a killed run left), so it is kept as it is and nothing can be created under it",
                    p.origin
                ),
            },
            Some((at, state)) => {
                let missing = state == Unsafe::Missing;
                let content = placeholder_content(&at).filter(|_| missing);
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
        // One cover per place: a placeholder this run made for one path (`.git`, missing) is
        // in the way of the next (`.git/hooks`).
        if !plan.covers.iter().any(|m| m.at == mount.at) {
            plan.covers.push(mount);
        }
    }
    Ok(())
}

/// Hidden per-user configuration a program dies on: files in the operator's home that the
/// command's programs read on every start and treat an unreadable one as fatal. On the
/// Landlock backend such a file exists but reading it is refused (EACCES), where bwrap does
/// not show the home at all (ENOENT). git 2.47 checks `access(R_OK)` first, which Landlock
/// does not refuse, then dies on the failed open ("unknown error occurred while reading the
/// configuration files", exit 128) for its global config: `$GIT_CONFIG_GLOBAL` when set,
/// else `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config` (`~/.config/git/config` when that is
/// unset or empty); and `git status`, `add` and `commit` die on its default excludes file,
/// `$XDG_CONFIG_HOME/git/ignore` ("cannot use … as an exclude file"). Its `attributes` there
/// only makes every `git add` and `diff` warn ("unable to access"): covered too, so git's
/// output is what it is on bwrap. Each such file is covered by `/dev/null`, read-only, in the command's mount namespace:
/// git reads an empty configuration, as it finds none on bwrap, and the file's content stays
/// unreadable.
///
/// Only a file that exists (a regular file or a link: the link's own name is covered, never
/// followed), is not under any rule that lets the command read it (there git reads it, and a
/// writable root's files are the command's anyway), at an absolute path whose directory has
/// no link on the way (resolved here; the init opens the name without following any link).
/// `env` is the command's environment.
pub fn hidden_user_config(rules: &[PathRule], env: &[(OsString, OsString)]) -> Vec<Mount> {
    let var = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_os_str())
            .filter(|v| !v.is_empty())
    };
    let home = var("HOME").map(Path::new);
    let xdg = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")))
        .map(|x| x.join("git"));
    let mut files: Vec<PathBuf> = match var("GIT_CONFIG_GLOBAL") {
        Some(global) => vec![PathBuf::from(global)],
        None => home
            .map(|h| h.join(".gitconfig"))
            .into_iter()
            .chain(xdg.as_ref().map(|x| x.join("config")))
            .collect(),
    };
    // The default core.excludesFile and core.attributesFile, whatever the global
    // configuration.
    files.extend(
        xdg.into_iter()
            .flat_map(|x| [x.join("ignore"), x.join("attributes")]),
    );
    let readable = |p: &Path| rules.iter().any(|r| p.starts_with(&r.path));
    let mut mounts: Vec<Mount> = Vec::new();
    for file in files {
        let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
            continue;
        };
        if !file.is_absolute() || readable(&file) {
            continue;
        }
        // The directory's real path (the operator's own home, outside every writable root,
        // so the command cannot change it); the name itself is never followed.
        let Ok(dir) = std::fs::canonicalize(dir) else {
            continue;
        };
        let at = dir.join(name);
        let exists =
            std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_file() || m.file_type().is_symlink());
        if !exists || readable(&at) || mounts.iter().any(|m| m.at == at) {
            continue;
        }
        mounts.push(Mount {
            at,
            cover: Cover::Null,
            why: "hidden per-user config a program dies on: git refuses to run when its global configuration or excludes file is unreadable (and warns on every add and diff when its attributes file is), so /dev/null, read-only, stands in its place (an empty file, as if absent, which it is on bwrap)".into(),
        });
    }
    mounts
}

/// What stands at the first component of a protected path that is not a plain directory on
/// the way (or the path itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unsafe {
    /// Nothing: a placeholder is made there (the plan's covers) and covered.
    Missing,
    /// A symlink: covered so that it cannot redirect the mount.
    Link,
    /// A file where a directory on the way would be (another run's placeholder, or one a
    /// killed run left): nothing can be created under it while it is covered as it is.
    InTheWay,
}

/// The first component of `path` below `root` that is a symlink, is missing, or is a file
/// with more of `path` below it. `None` when the whole path exists without symlinks.
fn first_unsafe_component(root: &Path, path: &Path) -> Option<(PathBuf, Unsafe)> {
    let rel = path.strip_prefix(root).ok()?;
    let mut cur = root.to_path_buf();
    let n = rel.components().count();
    for (i, c) in rel.components().enumerate() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Err(_) => return Some((cur, Unsafe::Missing)),
            Ok(m) if m.file_type().is_symlink() => return Some((cur, Unsafe::Link)),
            Ok(m) if !m.is_dir() && i + 1 < n => return Some((cur, Unsafe::InTheWay)),
            Ok(_) => {}
        }
    }
    None
}

/// [`first_unsafe_component`] for a run: where it is missing or a placeholder (another run's)
/// stands, the directory is held first ([`Placeholders`]) and the name looked at again under
/// the hold; a missing one is made a placeholder, a placeholder found is recorded (the last
/// run out removes it).
fn settle(
    root: &Path,
    path: &Path,
    held: &mut Placeholders,
) -> Result<Option<(PathBuf, Unsafe)>, Error> {
    // Twice at most: a name another run made between our look and our create is found the
    // second time.
    for _ in 0..2 {
        let place = first_unsafe_component(root, path);
        let at = match &place {
            Some((at, Unsafe::Missing | Unsafe::InTheWay)) => at.clone(),
            Some((_, Unsafe::Link)) => return Ok(place),
            None if is_placeholder(path) => path.to_path_buf(),
            None => return Ok(place),
        };
        let (Some(dir), Some(name)) = (at.parent(), at.file_name()) else {
            return Err(Error::other(format!(
                "cannot create a placeholder for protected {}: no parent",
                at.display()
            )));
        };
        let before = place.clone();
        held.hold(dir)?;
        // Under the hold: a run removing its placeholders has finished with this directory.
        let place = first_unsafe_component(root, path);
        if place != before {
            continue;
        }
        match &place {
            Some((at, Unsafe::Missing)) => {
                let content = placeholder_content(at);
                // The mount point would otherwise be created through the writable root;
                // made here so that we know to remove it afterwards. Through
                // cordon_fs::safe: never through a link on the way (a concurrent run of
                // `cordon mcp` could have re-pointed a directory since the check).
                let made = cordon_fs::safe::Dir::open_absolute(dir).and_then(|d| {
                    d.create_new(
                        Path::new(name),
                        content.unwrap_or_default(),
                        PLACEHOLDER_MODE,
                    )
                });
                match made {
                    Ok(_) => held.made.push(at.clone()),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => {
                        return Err(Error::other(format!(
                            "cannot create a placeholder for protected {}: {e}",
                            at.display()
                        )))
                    }
                }
            }
            // A placeholder in the way, or the protected path itself one: another run's (or a
            // killed run's), removed by the last run out.
            Some((_, Unsafe::InTheWay)) | None
                if is_placeholder(&at) && !held.made.contains(&at) =>
            {
                held.found.push(at.clone())
            }
            _ => {}
        }
        return Ok(place);
    }
    Err(Error::other(format!(
        "cannot cover protected {}: the names on its way kept changing while cordon looked (another run making and removing placeholders there); the run is refused, retry it",
        path.display()
    )))
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
    // Empty too: what decides the content can change while the run goes (the command made
    // `HEAD` and `refs` beside it), and either is cordon's.
    let still = dir
        .read(Path::new(name), want.len() as u64)
        .ok()
        .flatten()
        .is_some_and(|b| b == want || b.is_empty());
    if still {
        let _ = dir.remove(Path::new(name));
    }
}

/// The mode of a placeholder: read-only for everyone, never executable, and what tells one
/// apart from an operator's empty file (an empty `.envrc` is `0644`).
const PLACEHOLDER_MODE: u32 = 0o444;

/// Whether `path` is a placeholder as cordon makes them (a regular file of one name, mode
/// [`PLACEHOLDER_MODE`], empty or holding exactly its [`placeholder_content`]): what a run finds
/// of another's, what the after-run scan leaves in place (it carries nothing to run, and it may
/// be the mount point of another run's cover, which moving it would detach), and what is
/// removed. A command can make such a file too: it is as harmless as cordon's.
pub(crate) fn is_placeholder(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let want = placeholder_content(path).unwrap_or_default();
    // Empty, or its content (see `remove_placeholder`).
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        m.is_file()
            && m.nlink() == 1
            && m.mode() & 0o7777 == PLACEHOLDER_MODE
            && (m.len() == 0 || m.len() == want.len() as u64)
    }) && (want.is_empty() || std::fs::read(path).is_ok_and(|b| b.is_empty() || b == want))
}

/// Whether a regular file a snapshot saw at `path` with `mode` and `content` was a placeholder
/// ([`is_placeholder`], judged from what was seen, the file being gone now): its removal is
/// cordon's own (the last run out removes them), not a run's, and nothing to write back.
pub(crate) fn was_placeholder(path: &Path, mode: u32, content: Option<&[u8]>) -> bool {
    let want = placeholder_content(path).unwrap_or_default();
    mode & 0o7777 == PLACEHOLDER_MODE && content.is_some_and(|c| c.is_empty() || c == want)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placeholder lock of a directory (see `lock_file`): a file 0600 of the directory
    /// owner's in an area of the owner's in /run/lock (root's run makes both and hands them
    /// over); another user's entries named like an area of the owner's are passed over. A run
    /// of a third user's gets no lock file (it locks the directory), and cannot be the last
    /// out. Needs root (CI runs as root) to own files for others.
    #[test]
    fn placeholder_locks_are_in_an_area_of_the_owners_and_pass_over_another_users() {
        use std::os::unix::fs::MetadataExt;
        assert!(
            rustix::process::geteuid().is_root(),
            "this test must run as root (CI runs as root)"
        );
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let (owner, other) = (54_321, 54_322);
        std::os::unix::fs::chown(&dir, Some(owner), Some(owner)).unwrap();
        let m = std::fs::metadata(&dir).unwrap();
        let mine = |e: &std::fs::DirEntry| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{AREA}{owner}-"))
        };
        let clear = || {
            for e in std::fs::read_dir(LOCKS).unwrap().flatten().filter(mine) {
                std::fs::remove_dir_all(e.path())
                    .or_else(|_| std::fs::remove_file(e.path()))
                    .unwrap();
            }
        };
        clear();
        // Another user's, first in name order: a directory 0700 and a file.
        let planted = Path::new(LOCKS).join(format!("{AREA}{owner}-0"));
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(other), Some(other)).unwrap();
        let file = Path::new(LOCKS).join(format!("{AREA}{owner}-00"));
        std::fs::write(&file, "").unwrap();
        std::os::unix::fs::chown(&file, Some(other), Some(other)).unwrap();
        let opened = cordon_fs::safe::Dir::open_absolute(&dir).unwrap();
        let lock = lock_file(&opened)
            .unwrap()
            .expect("root reaches the owner's areas");
        let l = lock.metadata().unwrap();
        assert_eq!((l.uid(), l.mode() & 0o7777), (owner, 0o600));
        let areas: Vec<_> = std::fs::read_dir(LOCKS)
            .unwrap()
            .flatten()
            .filter(mine)
            .filter(|e| e.path() != planted && e.path() != file)
            .collect();
        assert_eq!(areas.len(), 1, "{areas:?}");
        let a = std::fs::symlink_metadata(areas[0].path()).unwrap();
        assert!(a.is_dir());
        assert_eq!((a.uid(), a.mode() & 0o7777), (owner, 0o700));
        let name = areas[0].path().join(format!("{}-{}", m.dev(), m.ino()));
        assert_eq!(std::fs::metadata(&name).unwrap().ino(), l.ino());
        // Found again, not made again; and every lock file is what the last run out takes.
        let again = lock_file(&opened).unwrap().unwrap();
        assert_eq!(again.metadata().unwrap().ino(), l.ino());
        assert_eq!(every_lock_file(&opened).unwrap().len(), 1);
        // A run of a third user's: no lock file, and not the last out.
        let at = dir.clone();
        let third = std::thread::spawn(move || {
            rustix::thread::set_thread_res_uid(
                rustix::process::Uid::from_raw(other),
                rustix::process::Uid::from_raw(other),
                rustix::process::Uid::ROOT,
            )
            .unwrap();
            let opened = cordon_fs::safe::Dir::open_absolute(&at).unwrap();
            (
                lock_file(&opened).unwrap().is_none(),
                every_lock_file(&opened).is_err(),
            )
        });
        assert_eq!(third.join().unwrap(), (true, true));
        clear();
    }

    fn protected(ws: &Path, rels: &[&str]) -> Vec<Protected> {
        rels.iter()
            .map(|r| Protected {
                path: ws.join(r),
                origin: "p".into(),
            })
            .collect()
    }

    /// Two runs' plans over one directory (as two overlapping runs make them): the first
    /// makes the placeholders, the second finds them; the first to end leaves them (the
    /// other still has its covers on them), the last removes them. The deeper path under a
    /// placeholder is covered at the placeholder, not refused.
    #[test]
    fn the_last_plan_out_removes_the_placeholders() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let paths = protected(&ws, &[".git/hooks", ".git/info/attributes"]);
        let roots = [ws.as_path()];
        let a = plan(&paths, &roots, false).unwrap();
        let (hooks, info) = (ws.join(".git/hooks"), ws.join(".git/info"));
        assert_eq!(a.placeholders.made(), [hooks.clone(), info.clone()]);
        assert!(is_placeholder(&hooks) && is_placeholder(&info));
        let b = plan(&paths, &roots, false).unwrap();
        assert!(b.placeholders.made().is_empty());
        assert_eq!(b.placeholders.found(), [hooks.clone(), info.clone()]);
        let covers: Vec<_> = b.covers.iter().map(|m| (m.at.clone(), m.cover)).collect();
        assert_eq!(
            covers,
            [
                (hooks.clone(), Cover::ReadOnly),
                (info.clone(), Cover::ReadOnly)
            ]
        );
        drop(a);
        assert!(
            hooks.is_file() && info.is_file(),
            "removed under the other run"
        );
        drop(b);
        assert!(
            !hooks.exists() && !info.exists(),
            "left by the last run out"
        );
    }

    /// The last run out takes every lock a run over the directory may hold: a shared lock on
    /// the directory itself (a third user's run, which cannot open the owner's areas) or on
    /// the lock file in a second area of the owner's (two runs that each made one at once)
    /// keeps the placeholder; let go, the next run out removes it.
    #[test]
    fn a_run_holding_any_of_the_directorys_locks_keeps_its_placeholders() {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test must run as root (CI runs as root)"
        );
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        // An owner of the test's own: its areas are the test's, and go with it.
        let owner = 54_323;
        std::os::unix::fs::chown(ws.join(".git"), Some(owner), Some(owner)).unwrap();
        let clear = || {
            for e in std::fs::read_dir(LOCKS).unwrap().flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{AREA}{owner}-"))
                {
                    std::fs::remove_dir_all(e.path()).unwrap();
                }
            }
        };
        clear();
        let git = cordon_fs::safe::Dir::open_absolute(&ws.join(".git")).unwrap();
        let paths = protected(&ws, &[".git/hooks"]);
        let roots = [ws.as_path()];
        let hooks = ws.join(".git/hooks");
        let second = (|| {
            let locks = locks_dir()?;
            let area = make_area(&locks, git.stat().ok()?.st_uid).ok()?;
            area_file(&area, &git.stat().ok()?).ok()
        })()
        .expect("/run/lock is usable here");
        for other in [dir_lock(&git).unwrap(), second] {
            let a = plan(&paths, &roots, false).unwrap();
            assert_eq!(a.placeholders.made(), std::slice::from_ref(&hooks));
            let held = cordon_fs::lock::shared(&other, LOCK_WAIT).unwrap();
            drop(a);
            assert!(is_placeholder(&hooks), "removed under another run's lock");
            drop(held);
            drop(plan(&paths, &roots, false).unwrap());
            assert!(!hooks.exists(), "left by the last run out");
        }
        clear();
    }

    /// The per-user git files covered: only those that exist and no rule reads; a link's
    /// own name; `GIT_CONFIG_GLOBAL` replaces both config files (not the excludes file).
    #[test]
    fn hidden_user_config_covers_only_unreadable_existing_files() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap().join("home");
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".gitconfig"), b"[user]").unwrap();
        std::fs::write(home.join("elsewhere"), b"[user]").unwrap();
        std::os::unix::fs::symlink("../../elsewhere", home.join(".config/git/config")).unwrap();
        let env = |vars: &[(&str, &Path)]| -> Vec<(OsString, OsString)> {
            vars.iter()
                .map(|(k, v)| (OsString::from(k), v.as_os_str().to_owned()))
                .collect()
        };
        let at = |rules: &[PathRule], env: &[(OsString, OsString)]| -> Vec<PathBuf> {
            hidden_user_config(rules, env)
                .into_iter()
                .inspect(|m| assert_eq!(m.cover, Cover::Null))
                .map(|m| m.at)
                .collect()
        };
        let home_env = env(&[("HOME", &home)]);
        // ignore and attributes are missing: nothing to cover there.
        assert_eq!(
            at(&[], &home_env),
            [home.join(".gitconfig"), home.join(".config/git/config")]
        );
        let rule = |p: &Path| PathRule {
            path: p.to_path_buf(),
            access: crate::profile::Access::READ,
            origin: "r".into(),
        };
        assert!(at(&[rule(&home)], &home_env).is_empty());
        assert_eq!(
            at(&[rule(&home.join(".config"))], &home_env),
            [home.join(".gitconfig")]
        );
        let xdg = home.join("xdg");
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        std::fs::write(xdg.join("git/ignore"), b"*.o").unwrap();
        let global = home.join("elsewhere");
        assert_eq!(
            at(
                &[],
                &env(&[
                    ("HOME", &home),
                    ("XDG_CONFIG_HOME", &xdg),
                    ("GIT_CONFIG_GLOBAL", &global)
                ])
            ),
            [global.clone(), xdg.join("git/ignore")]
        );
    }

    /// An empty file of the operator's (mode 0644) is not a placeholder: covered as it is,
    /// never removed.
    #[test]
    fn an_operators_empty_file_is_not_a_placeholder() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/config.worktree"), b"").unwrap();
        std::fs::set_permissions(
            ws.join(".git/config.worktree"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        let p = plan(
            &protected(&ws, &[".git/config.worktree"]),
            &[ws.as_path()],
            false,
        )
        .unwrap();
        assert!(p.placeholders.found().is_empty());
        drop(p);
        assert!(ws.join(".git/config.worktree").is_file());
    }
}
