//! Writable roots that would hand the command the system itself, refused before any backend
//! is chosen.
//!
//! A writable root is granted whole: on Landlock everything beneath it, on bwrap a read-write
//! bind that later, deeper mounts cannot fully take back. Run from `/proc`, the default
//! policy's `root = "."` would make `/proc/sys` writable (`kernel.core_pattern`: code
//! execution as root outside the sandbox); run from `/etc`, `/usr/share`, `/run` or `/home`, it
//! would let the command rewrite system configuration, programs, other users' homes or
//! sockets. So a writable root that is, lies under or contains a system directory is refused,
//! after canonicalisation (`/var/run` is `/run`, `/lib` may be `/usr/lib`) and through bind
//! mounts (a directory that shows `/etc` elsewhere is `/etc`). Scratch space (`/var/tmp`)
//! stays allowed, and so do projects under `/home/USER` or `/root`: only those directories
//! themselves are refused.

use std::path::{Path, PathBuf};

use crate::profile::{Profile, PRIVATE_TMP_ORIGIN};
use crate::Error;

/// System directories no writable root may be, lie under or contain.
pub const SYSTEM_DIRS: &[&str] = &[
    "/proc", "/sys", "/dev", "/etc", "/boot", "/run", "/usr", "/bin", "/sbin", "/lib", "/lib32",
    "/lib64", "/libx32", "/var", "/nix",
];

/// Directories that may not be a writable root themselves, though a project beneath them may.
pub const HOME_DIRS: &[&str] = &["/root", "/home"];

/// Beneath a system directory, but scratch space anyone may use as a workspace.
pub const SCRATCH_DIRS: &[&str] = &["/var/tmp"];

/// How a writable root meets a system directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Danger {
    /// The writable root (canonical).
    pub root: PathBuf,
    /// The policy key that made it writable.
    pub origin: String,
    /// The system directory it meets.
    pub system: PathBuf,
    /// `is`, `lies under`, `contains`, or the same through a bind mount.
    pub how: String,
}

impl std::fmt::Display for Danger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the writable root {} ({}) {} the system directory {}: the command could change the system there; run cordon from a project directory (e.g. under /home/USER, /root or /var/tmp), or name the directories to write in sandbox.paths",
            self.root.display(),
            self.origin,
            self.how,
            self.system.display()
        )
    }
}

/// What kind of system directory: refused whole, or only itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The directory, everything beneath it, and everything holding it.
    Whole,
    /// The directory itself and everything holding it; a project beneath it is fine.
    Itself,
}

/// Where a workspace may lie although a system directory holds it: scratch space, and the
/// home directories where a system keeps them under `/var` (Fedora's atomic editions link
/// `/home` to `/var/home` and `/root` to `/var/roothome`).
fn exceptions(canon: &mut Canon) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SCRATCH_DIRS.iter().map(PathBuf::from).collect();
    for h in HOME_DIRS {
        if let Some(real) = canon.canonical(Path::new(h)) {
            if real != Path::new(h) {
                out.push(real);
            }
        }
    }
    out
}

/// Each name asked of the kernel once per check, for the many system directories, which
/// share their first components (`/usr`, `/lib`).
type Canon = cordon_fs::links::Links;

/// How `root` meets `system`, comparing paths component by component; `scratch` are the
/// allowed exceptions beneath system directories.
fn relation(root: &Path, system: &Path, kind: Kind, scratch: &[&Path]) -> Option<&'static str> {
    if system.starts_with(root) {
        return Some(if root == system { "is" } else { "contains" });
    }
    if kind == Kind::Whole
        && root.starts_with(system)
        && !scratch.iter().any(|s| root.starts_with(s))
    {
        return Some("lies under");
    }
    None
}

/// The system directories as they stand on this machine: the lists above, every `/lib*`
/// entry of `/`, each also by its canonical path (`/lib` → `/usr/lib`).
fn system_dirs(canon: &mut Canon) -> Vec<(PathBuf, Kind)> {
    let mut out: Vec<(PathBuf, Kind)> = Vec::new();
    let mut add = |p: PathBuf, kind: Kind| {
        if let Some(real) = canon.canonical(&p) {
            if real != p {
                out.push((real, kind));
            }
        }
        out.push((p, kind));
    };
    for p in SYSTEM_DIRS {
        add(PathBuf::from(p), Kind::Whole);
    }
    if let Ok(dir) = std::fs::read_dir("/") {
        for e in dir.flatten() {
            if e.file_name().to_string_lossy().starts_with("lib") {
                add(e.path(), Kind::Whole);
            }
        }
    }
    for p in crate::profile::SYSTEM_EXEC {
        add(PathBuf::from(p), Kind::Whole);
    }
    for p in HOME_DIRS {
        add(PathBuf::from(p), Kind::Itself);
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Checks every writable root of `profile` (not the device nodes, nor the private TMPDIR,
/// which cordon creates fresh for the run) against this machine's system directories, by path
/// and, on Linux, by what the mounts show.
pub fn check(profile: &Profile) -> Result<(), Error> {
    let mut canon = Canon::default();
    let systems = system_dirs(&mut canon);
    let exceptions = exceptions(&mut canon);
    #[cfg(target_os = "linux")]
    let mounts = mounts::Table::read().map_err(|e| {
        Error::Refused(format!(
            "cannot read /proc/self/mountinfo to check the writable roots against the system directories: {e}"
        ))
    })?;
    for rule in profile
        .rules
        .iter()
        .filter(|r| r.access.write && !r.access.device && r.origin != PRIVATE_TMP_ORIGIN)
    {
        let danger = by_path(&rule.path, &systems, &exceptions);
        #[cfg(target_os = "linux")]
        let danger = danger.or_else(|| mounts.danger(&rule.path, &systems, &exceptions));
        if let Some((system, how)) = danger {
            return Err(Error::Refused(
                Danger {
                    root: rule.path.clone(),
                    origin: rule.origin.clone(),
                    system,
                    how,
                }
                .to_string(),
            ));
        }
    }
    Ok(())
}

/// The first system directory `root` meets by path, and how.
fn by_path(
    root: &Path,
    systems: &[(PathBuf, Kind)],
    exceptions: &[PathBuf],
) -> Option<(PathBuf, String)> {
    let scratch: Vec<&Path> = exceptions.iter().map(PathBuf::as_path).collect();
    systems.iter().find_map(|(s, kind)| {
        relation(root, s, *kind, &scratch).map(|how| (s.clone(), how.to_string()))
    })
}

/// The mount table, to see through bind mounts: a path's identity is its filesystem (the
/// device) and its path within that filesystem, which a bind mount does not change.
#[cfg(target_os = "linux")]
mod mounts {
    use super::{relation, Kind};
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::path::{Path, PathBuf};

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(super) struct Mount {
        /// `major:minor` of the filesystem.
        pub dev: String,
        /// The path within the filesystem that is mounted.
        pub root: PathBuf,
        /// Where it is mounted.
        pub point: PathBuf,
    }

    #[derive(Debug, Clone, Default)]
    pub(super) struct Table(pub Vec<Mount>);

    /// A mountinfo field: spaces, tabs, newlines and backslashes are written as `\ooo`.
    fn unescape(field: &str) -> PathBuf {
        let b = field.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 4 <= b.len() {
                let oct = &field[i + 1..i + 4];
                if let Ok(v) = u8::from_str_radix(oct, 8) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
            out.push(b[i]);
            i += 1;
        }
        PathBuf::from(OsString::from_vec(out))
    }

    impl Table {
        pub fn read() -> std::io::Result<Table> {
            Ok(Table::parse(&std::fs::read_to_string(
                "/proc/self/mountinfo",
            )?))
        }

        /// `ID PARENT MAJ:MIN ROOT POINT OPTIONS… - TYPE SOURCE SUPER`.
        pub fn parse(text: &str) -> Table {
            Table(
                text.lines()
                    .filter_map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        (f.len() >= 5).then(|| Mount {
                            dev: f[2].to_string(),
                            root: unescape(f[3]),
                            point: unescape(f[4]),
                        })
                    })
                    .collect(),
            )
        }

        /// The filesystem and the path within it that `path` (canonical) shows: through the
        /// mount with the deepest mount point above it (the last, when mounts are stacked).
        pub fn identity(&self, path: &Path) -> Option<(String, PathBuf)> {
            let m = self
                .0
                .iter()
                .filter(|m| path.starts_with(&m.point))
                .max_by_key(|m| m.point.components().count())
                .map(|best| {
                    // Of those stacked at the same point, the last mounted is on top.
                    self.0
                        .iter()
                        .rev()
                        .find(|m| m.point == best.point)
                        .unwrap_or(best)
                })?;
            let rel = path.strip_prefix(&m.point).ok()?;
            Some((m.dev.clone(), m.root.join(rel)))
        }

        /// How `root` meets a system directory through what the mounts show: `root` itself,
        /// or a mount beneath it (a writable root grants what is mounted inside it too).
        pub fn danger(
            &self,
            root: &Path,
            systems: &[(PathBuf, Kind)],
            exceptions: &[PathBuf],
        ) -> Option<(PathBuf, String)> {
            let sys: Vec<(PathBuf, Kind, (String, PathBuf))> = systems
                .iter()
                .filter_map(|(p, k)| self.identity(p).map(|id| (p.clone(), *k, id)))
                .collect();
            let scratch: Vec<(String, PathBuf)> =
                exceptions.iter().filter_map(|p| self.identity(p)).collect();
            let meets = |(dev, path): &(String, PathBuf)| {
                let scratch: Vec<&Path> = scratch
                    .iter()
                    .filter(|(d, _)| d == dev)
                    .map(|(_, p)| p.as_path())
                    .collect();
                sys.iter().find_map(|(p, kind, (sdev, spath))| {
                    (sdev == dev)
                        .then(|| relation(path, spath, *kind, &scratch))
                        .flatten()
                        .map(|how| (p.clone(), how))
                })
            };
            if let Some((p, how)) = self.identity(root).and_then(|id| meets(&id)) {
                return Some((p, format!("{how} (as a bind mount shows it)")));
            }
            for m in self
                .0
                .iter()
                .filter(|m| m.point != root && m.point.starts_with(root))
            {
                if let Some((p, how)) = meets(&(m.dev.clone(), m.root.clone())) {
                    return Some((
                        p,
                        format!("holds the mount {} which {how}", m.point.display()),
                    ));
                }
            }
            None
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        const INFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 254:0 /etc /srv/etc\\040copy rw,relatime - ext4 /dev/vda rw
41 27 0:21 / /mnt/proc rw,relatime - proc proc rw
42 27 254:0 /home/u/p /work rw,relatime - ext4 /dev/vda rw
43 27 254:0 /var/tmp/x /scratch rw,relatime - ext4 /dev/vda rw
44 42 254:0 /usr/share /work/share rw,relatime - ext4 /dev/vda rw
";

        fn systems() -> Vec<(PathBuf, Kind)> {
            ["/proc", "/etc", "/usr", "/var", "/dev"]
                .iter()
                .map(|p| (PathBuf::from(p), Kind::Whole))
                .chain([(PathBuf::from("/home"), Kind::Itself)])
                .collect()
        }

        #[test]
        fn identities_see_through_bind_mounts() {
            let t = Table::parse(INFO);
            assert_eq!(
                t.identity(Path::new("/srv/etc copy/passwd")),
                Some(("254:0".into(), PathBuf::from("/etc/passwd")))
            );
            assert_eq!(
                t.identity(Path::new("/mnt/proc/sys")),
                Some(("0:21".into(), PathBuf::from("/sys")))
            );
            assert_eq!(
                t.identity(Path::new("/tmp/ws")),
                Some(("254:0".into(), PathBuf::from("/tmp/ws")))
            );
        }

        #[test]
        fn binds_of_system_directories_are_dangers() {
            let t = Table::parse(INFO);
            let ex = [PathBuf::from("/var/tmp")];
            let danger = |root: &str| t.danger(Path::new(root), &systems(), &ex);
            let (p, how) = danger("/srv/etc copy").unwrap();
            assert_eq!(
                (p.as_path(), how.as_str()),
                (Path::new("/etc"), "is (as a bind mount shows it)")
            );
            let (p, how) = danger("/mnt/proc/sys").unwrap();
            assert_eq!(p, Path::new("/proc"), "{how}");
            // /work shows /home/u/p, a project: fine by itself, but it holds a bind of
            // /usr/share, which a writable root would grant too.
            let (p, how) = danger("/work").unwrap();
            assert_eq!(p, Path::new("/usr"), "{how}");
            assert!(how.starts_with("holds the mount /work/share"), "{how}");
            assert_eq!(danger("/work/src"), None);
            // Scratch space shown elsewhere stays scratch space.
            assert_eq!(danger("/scratch"), None);
            assert_eq!(danger("/tmp/ws"), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, PathRule};
    use cordon_policy::{Limits, Network};

    fn rw(path: &str, origin: &str) -> PathRule {
        PathRule {
            path: PathBuf::from(path),
            access: Access {
                write: true,
                exec: true,
                device: false,
            },
            origin: origin.into(),
        }
    }

    fn profile(rules: Vec<PathRule>) -> Profile {
        Profile {
            rules,
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
    }

    fn refused(path: &str) -> Option<String> {
        match check(&profile(vec![rw(path, "sandbox.paths.workspace (rw)")])) {
            Ok(()) => None,
            Err(Error::Refused(m)) => Some(m),
            Err(e) => panic!("not a refusal: {e:?}"),
        }
    }

    #[test]
    fn system_directories_and_what_holds_them_are_refused() {
        for (root, system, how) in [
            ("/proc", "/proc", "is"),
            ("/proc/sys", "/proc", "lies under"),
            ("/etc", "/etc", "is"),
            ("/usr/share", "/usr", "lies under"),
            ("/run", "/run", "is"),
            ("/dev/shm", "/dev", "lies under"),
            ("/sys/fs/cgroup", "/sys", "lies under"),
            ("/var", "/var", "is"),
            ("/var/lib/dpkg", "/var", "lies under"),
            ("/boot", "/boot", "is"),
            ("/home", "/home", "is"),
            ("/root", "/root", "is"),
            ("/", "/bin", "contains"),
        ] {
            let e = refused(root).unwrap_or_else(|| panic!("{root} was accepted"));
            assert!(
                e.starts_with(&format!(
                    "the writable root {root} (sandbox.paths.workspace (rw)) {how}"
                )),
                "{root}: {e}"
            );
            if root != "/" {
                assert!(e.contains(&format!("system directory {system}")), "{e}");
            }
            assert!(e.contains("run cordon from a project directory"), "{e}");
        }
    }

    #[test]
    fn projects_and_scratch_space_are_fine() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        for root in [
            real.to_str().unwrap(),
            "/var/tmp",
            "/var/tmp/project",
            "/home/user/project",
            "/home/user",
            "/root/project",
        ] {
            assert_eq!(refused(root), None, "{root}");
        }
    }

    #[test]
    fn homes_kept_under_var_are_homes() {
        // As on Fedora's atomic editions, where /home is a link to /var/home.
        let ex = [Path::new("/var/tmp"), Path::new("/var/home")];
        let r = |root: &str, system: &str, kind| {
            relation(Path::new(root), Path::new(system), kind, &ex)
        };
        assert_eq!(r("/var/home/u/project", "/var", Kind::Whole), None);
        assert_eq!(r("/var/home/u/project", "/var/home", Kind::Itself), None);
        assert_eq!(r("/var/home", "/var/home", Kind::Itself), Some("is"));
        assert_eq!(r("/var/lib/x", "/var", Kind::Whole), Some("lies under"));
        assert_eq!(r("/var", "/var/home", Kind::Itself), Some("contains"));
    }

    #[test]
    fn only_writable_roots_count() {
        let mut p = profile(vec![PathRule {
            path: PathBuf::from("/etc"),
            access: Access::READ,
            origin: "sandbox.extra_read".into(),
        }]);
        // Devices are granted writable by design; the private TMPDIR is cordon's own.
        p.rules.push(PathRule {
            path: PathBuf::from("/dev/null"),
            access: Access::DEVICE,
            origin: "sandbox.system_read (devices)".into(),
        });
        p.rules.push(rw("/run/user/0/cordon-x", PRIVATE_TMP_ORIGIN));
        check(&p).unwrap();
    }

    #[test]
    fn symlinked_system_directories_count_by_their_target() {
        // The profile's roots are canonical; where /lib is a link the target is refused too.
        if let Ok(real) = std::fs::canonicalize("/lib") {
            assert!(refused(real.to_str().unwrap()).is_some());
        }
        let systems = system_dirs(&mut Canon::default());
        assert!(systems.iter().any(|(p, _)| p == Path::new("/var")));
    }

    #[test]
    fn canonical_paths_are_realpaths() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        std::fs::write(base.join("a/f"), "").unwrap();
        symlink("a/b", base.join("rel")).unwrap();
        symlink(base.join("a"), base.join("abs")).unwrap();
        symlink("../../a/b/..", base.join("a/b/up")).unwrap();
        symlink("nowhere", base.join("dangling")).unwrap();
        symlink("loop", base.join("loop")).unwrap();
        symlink("/bin", base.join("bin")).unwrap();
        let mut canon = Canon::default();
        for p in [
            "",
            "a",
            "a/b",
            "a/f",
            "rel",
            "abs",
            "abs/b",
            "a/b/up",
            "a/b/up/f",
            "rel/..",
            "abs/../rel",
            "dangling",
            "loop",
            "missing",
            "a/f/x",
            "bin",
            "bin/sh",
            "a/./b",
        ] {
            let path = base.join(p);
            // Twice: the second answer comes from what the first asked.
            for _ in 0..2 {
                assert_eq!(
                    canon.canonical(&path),
                    std::fs::canonicalize(&path).ok(),
                    "{}",
                    path.display()
                );
            }
        }
        for p in [
            "/",
            "/usr/bin",
            "/lib",
            "/proc/self",
            "/nix/store",
            "/etc/../usr",
        ] {
            assert_eq!(
                canon.canonical(Path::new(p)),
                std::fs::canonicalize(p).ok(),
                "{p}"
            );
        }
    }
}
