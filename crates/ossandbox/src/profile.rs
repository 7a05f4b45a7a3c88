//! The kernel profile: what a confined child may touch, derived from the policy and nothing
//! else. Every backend consumes this one type, so they cannot disagree about the roots.

use std::path::{Path, PathBuf};

use cordon_policy::{GitDir, Limits, Mode, Network, Policy};

/// What a child may do beneath one path. Reading is always allowed on a listed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    /// Create, write, rename, delete, truncate (never create device nodes).
    pub write: bool,
    /// Execute programs found here.
    pub exec: bool,
    /// A device node (tty, pts): terminal ioctls are allowed on it.
    pub device: bool,
}

impl Access {
    pub const READ: Access = Access {
        write: false,
        exec: false,
        device: false,
    };
    pub const READ_EXEC: Access = Access {
        write: false,
        exec: true,
        device: false,
    };
    pub const DEVICE: Access = Access {
        write: true,
        exec: false,
        device: true,
    };

    /// A short tag for audit output: `ro`, `rx`, `rw`, `rwx`, `dev`.
    pub fn tag(self) -> &'static str {
        match (self.write, self.exec, self.device) {
            (_, _, true) => "dev",
            (false, false, _) => "ro",
            (false, true, _) => "rx",
            (true, false, _) => "rw",
            (true, true, _) => "rwx",
        }
    }
}

/// One path the child may access, and the policy key that put it there.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PathRule {
    /// Absolute and canonical.
    pub path: PathBuf,
    pub access: Access,
    /// The policy key that caused this rule, e.g. `sandbox.paths.workspace (rw)`.
    pub origin: String,
}

/// A path that must stay read-only although it lies inside a writable root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Protected {
    pub path: PathBuf,
    pub origin: String,
}

/// Ends the origin of a protected path the sandbox must not even see (e.g. the audit log's
/// directory): backends that can hide it (bwrap) do, the others keep it read-only or refuse.
pub const HIDDEN: &str = "; hidden from the sandbox";

impl Protected {
    /// Whether the sandbox must not see the path at all (see [`HIDDEN`]).
    pub fn hidden(&self) -> bool {
        self.origin.ends_with(HIDDEN)
    }
}

/// The port of cordon's network proxy inside the command's network namespace under
/// `sandbox.network = "proxy"`: the one TCP port the command may connect to (Landlock) and,
/// on macOS, the one `localhost` port Seatbelt lets it reach. Inside a namespace of the
/// command's own nothing else listens there, so a fixed port cannot collide.
pub const PROXY_PORT: u16 = 3128;

/// The typed kernel profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Sorted by path; a path may appear more than once with different origins.
    pub rules: Vec<PathRule>,
    /// Absolute paths that must stay read-only; sorted.
    pub protected: Vec<Protected>,
    pub network: Network,
    pub limits: Limits,
    /// `[network.forward]`'s ports: loopback ports inside the sandbox, besides the proxy's,
    /// that the command may connect to and cordon serves (`network = "proxy"` only).
    pub forwards: Vec<u16>,
}

/// The origin of the private TMPDIR's rule: a directory cordon creates fresh for each run.
pub const PRIVATE_TMP_ORIGIN: &str = "private TMPDIR (created for this run)";

/// Programs and the libraries they load: read-only and executable.
pub const SYSTEM_EXEC: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/nix/store",
];

/// Configuration that ordinary programs read when they start: the dynamic loader's cache,
/// users and groups (for `id`, `ls -l`), name resolution, time zones, locales, certificates,
/// terminal and shell defaults. Secrets (`/etc/shadow`, `/etc/ssh`, `/etc/ssl/private`,
/// `/etc/sudoers`) are deliberately absent: `/etc` is never granted whole.
pub const SYSTEM_READ: &[&str] = &[
    "/etc/alternatives",
    "/etc/bash.bashrc",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/debian_version",
    "/etc/default/locale",
    "/etc/environment",
    "/etc/gai.conf",
    "/etc/gitconfig",
    "/etc/group",
    "/etc/host.conf",
    "/etc/hostname",
    "/etc/hosts",
    "/etc/inputrc",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/localtime",
    "/etc/magic",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/os-release",
    "/etc/passwd",
    "/etc/pki/tls/certs",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/protocols",
    "/etc/resolv.conf",
    "/etc/services",
    "/etc/shells",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/terminfo",
    "/etc/timezone",
    // Process information. Landlock forbids ptrace-class access to processes outside the
    // sandbox, which covers /proc/PID/{environ,mem,fd,root,cwd,...} of the parent and the host.
    "/proc",
    // CPU topology, read by runtimes to size thread pools.
    "/sys/devices/system/cpu",
];

/// The most ptys a run's own devpts holds at once (its `max=`): the Landlock init's instance
/// (`run::namespaces::own_devpts`). Its ptys come from the pool every devpts instance but the
/// host's shares (the host's keeps `kernel.pty.reserve`), so one run cannot take them all.
pub const PTY_MAX: &std::ffi::CStr = c"256";

/// Device nodes programs use: read, write and (for terminals) ioctl. `/dev/pts` is granted
/// only where it is private (bwrap's devpts, the Landlock init's own instance); the Landlock
/// backend without its namespaces leaves it out, see [`crate::landlock::HOST_PTYS`].
pub const SYSTEM_DEVICES: &[&str] = &[
    "/dev/full",
    "/dev/null",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/random",
    "/dev/tty",
    "/dev/urandom",
    "/dev/zero",
];

/// What git reads in a git directory as configuration or code, relative to it, and why each
/// matters: a run that can write one of these makes the operator's next git command (outside
/// the sandbox) run a program of its choosing or read configuration from a place it filled.
/// Everything else git keeps there (objects, refs, logs, index, HEAD, packed-refs, the
/// `*_HEAD` files, rebase and sequencer state, `*.lock` files) is what git writes in normal
/// work. Under `sandbox.git = "protect"` these stay read-only (and cannot be created); the
/// after-run scan watches them under every policy.
pub const GIT_CONFIG_SURFACE: &[(&str, &str)] = cordon_policy::surface::GIT_CONFIG;

/// What a missing protected path inside a git directory is covered with: a file of cordon's
/// own (bound read-only onto itself), so that git reads it as empty — a read-only `/dev/null`
/// from the host is not granted by Landlock inside, and git warns on every command that it
/// cannot read it — and, for `commondir`, `.` (the git directory itself, which is what a
/// missing one means: git refuses an empty one, which would stop the sandboxed git and the
/// operator's while the run lasts). `None` elsewhere: a read-only `/dev/null`.
pub fn placeholder_content(path: &Path) -> Option<&'static [u8]> {
    // (A bare repository's, given as a root, too: its name is not `.git`.) Told by names no
    // placeholder makes, `HEAD` and `refs`: a test that counted `commondir` or `objects` (git's
    // own) changed its answer once the first placeholder was made, so a directory holding only
    // `HEAD` and `config` got a `/dev/null` cover for one name and a file for the next, and the
    // `commondir` made empty was then not recognised as cordon's and stayed (the next scan
    // took the directory for a bare repository the run had made).
    let stable_git_dir = |d: &Path| d.join("HEAD").exists() && d.join("refs").is_dir();
    let in_git_dir = path.parent().is_some_and(|p| {
        p.components().any(|c| c.as_os_str() == ".git") || p.ancestors().any(stable_git_dir)
    });
    if !in_git_dir {
        return None;
    }
    Some(match path.file_name() {
        Some(n) if n == "commondir" => b".\n",
        _ => b"",
    })
}

/// The protected paths `sandbox.git = "protect"` adds in the writable root `root` (named
/// `name`): the configuration surface of its `.git` directory; the `.git` file itself when it
/// is a gitdir file (a linked worktree's or a submodule's) or a symlink; `.git` as a missing
/// path (it cannot be created: a new repository brings its own config) when there is none.
fn git_protected(root: &Path, name: &str) -> Vec<Protected> {
    let dot_git = root.join(".git");
    let origin =
        |what: &str| format!("sandbox.git = \"protect\" (in sandbox.paths.{name}): {what}");
    // The root is a git directory itself (a bare repository, or `proj/.git` given as the
    // root; told as the scan and the file tools tell it, `surface::within_root`): its own
    // configuration surface, as a `.git` directory's. It has no `.git` of its own to cover.
    use cordon_policy::surface::{Kind, WithinKind};
    let within = cordon_policy::surface::within_root(root, None);
    let root_is_git_dir = within.iter().any(|w| w.what == WithinKind::GitDir);
    // The root lies inside a git directory's configuration surface (`proj/.git/hooks`,
    // `proj/.git/info`, `.git/modules`): the surface entry is the whole root, kept read-only
    // as it is in a root that holds the `.git` (a `rw` root there is read-only under
    // `protect`, said by this origin; `sandbox.git = "writable"` lets the command write it,
    // the scan watching it). Without it the kernel let the command write the hooks the
    // file tools refuse.
    let inside: Vec<Protected> = within
        .iter()
        .filter(|w| w.kind == Kind::Git && w.what == WithinKind::Dir)
        .map(|w| Protected {
            path: w.path.clone(),
            origin: origin(&format!(
                "the root lies in a git directory's configuration: {}",
                w.why
            )),
        })
        .collect();
    if !root_is_git_dir && !inside.is_empty() {
        return inside;
    }
    if root_is_git_dir {
        let mut out: Vec<Protected> = GIT_CONFIG_SURFACE
            .iter()
            .map(|(rel, why)| Protected {
                path: root.join(rel),
                origin: origin(&format!("the root is a git directory: {why}")),
            })
            .collect();
        out.extend(linked_from(root, root, &origin));
        return out;
    }
    match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => {
            let mut out: Vec<Protected> = GIT_CONFIG_SURFACE
                .iter()
                .map(|(rel, why)| Protected {
                    path: dot_git.join(rel),
                    origin: origin(why),
                })
                .collect();
            out.extend(linked_from(&dot_git, root, &origin));
            out
        }
        Ok(m) => {
            // The git directory git uses through it, and the common one that names (a linked
            // worktree's): where one lies in this root, its surface is kept read-only as a
            // `.git` directory's is — git reads its config and runs its hooks.
            let mut out = Vec::new();
            let mut gitdir = if m.file_type().is_symlink() {
                std::fs::canonicalize(&dot_git).ok()
            } else {
                named_gitdir(root, &dot_git)
            };
            let mut seen: Vec<PathBuf> = Vec::new();
            while let Some(dir) = gitdir.take() {
                if !dir.starts_with(root) || !dir.is_dir() || seen.contains(&dir) {
                    break;
                }
                out.extend(GIT_CONFIG_SURFACE.iter().map(|(rel, why)| Protected {
                    path: dir.join(rel),
                    origin: origin(&format!("the git directory .git names: {why}")),
                }));
                out.extend(linked_from(&dir, root, &origin));
                gitdir = named_gitdir(&dir, &dir.join("commondir"));
                seen.push(dir);
            }
            out.push(Protected {
                path: dot_git,
                origin: origin("a gitdir file (or link) naming the repository git uses"),
            });
            out
        }
        Err(_) => vec![Protected {
            path: dot_git,
            origin: origin("no repository here; a new one would bring its own config"),
        }],
    }
}

/// What the links inside the git directory `dir`'s surface directories (`hooks/pre-commit ->
/// ../../scripts/pre-commit`, the usual way a project shares its hooks) resolve to in `root`:
/// git runs or reads it as if it were there, so it is kept read-only as the link is — the
/// kernel as the file tools and the scan (`surface::links_below`, the one walk). A target that
/// does not exist yet is covered too (the command would create it). Where a directory cannot
/// be listed whole, its links are left to the file tools and the scan, which fail closed.
fn linked_from(dir: &Path, root: &Path, origin: &dyn Fn(&str) -> String) -> Vec<Protected> {
    let mut out: Vec<Protected> = Vec::new();
    for (rel, _) in GIT_CONFIG_SURFACE {
        let Some(links) = cordon_policy::surface::links_below(&dir.join(rel)) else {
            continue;
        };
        for link in links {
            let target = cordon_policy::surface::resolve(&link);
            if target.starts_with(root) && !out.iter().any(|p| p.path == target) {
                out.push(Protected {
                    origin: origin(&format!(
                        "{} links to it: git runs or reads it from there",
                        link.display()
                    )),
                    path: target,
                });
            }
        }
    }
    out
}

/// The directory a gitdir file (`gitdir: PATH`) or a `commondir` file (`PATH`) names,
/// relative to `base` where it is relative, canonical; `None` when the file cannot be read
/// (a missing `commondir`: no common directory) or names nothing that exists.
fn named_gitdir(base: &Path, file: &Path) -> Option<PathBuf> {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(4096)
        .read_to_end(&mut bytes)
        .ok()?;
    // As git reads them: an optional `gitdir: ` prefix (required in a gitdir file, absent in
    // commondir), trailing whitespace ignored.
    let text = bytes.strip_prefix(b"gitdir: ").unwrap_or(&bytes);
    let end = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let named = Path::new(std::ffi::OsStr::from_bytes(&text[..end]));
    if named.as_os_str().is_empty() {
        return None;
    }
    std::fs::canonicalize(base.join(named)).ok()
}

/// The canonical path of an existing file, asked of the kernel (see [`real_path_opened`]).
#[cfg(target_os = "linux")]
fn real_path(path: &Path) -> Option<PathBuf> {
    real_path_opened(path).map(|(real, _)| real)
}

/// Rule paths opened while a profile was made: each real path with the `O_PATH` descriptor
/// its canonical name was read from. The Landlock backend takes these for its rules
/// ([`crate::landlock::hold`]) instead of opening every system path a second time.
#[cfg(unix)]
pub(crate) type Opened = std::collections::HashMap<PathBuf, std::os::fd::OwnedFd>;

/// The canonical path of an existing file and an `O_PATH` descriptor of it, asked of the
/// kernel. A path of plain names (no `.`, `..`) that holds no symlink is its own canonical
/// form: one `openat2(RESOLVE_NO_SYMLINKS)` proves that (most system paths). Otherwise (a
/// link on the way, or a kernel without openat2) one `open(O_PATH)` that follows links and a
/// readlink of its /proc/self/fd entry, instead of realpath's walk per component (this runs
/// for every system path on every `cordon exec`).
#[cfg(target_os = "linux")]
fn real_path_opened(path: &Path) -> Option<(PathBuf, std::os::fd::OwnedFd)> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use std::os::fd::AsRawFd;
    let plain = path.is_absolute()
        && path
            .components()
            .skip(1)
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    // Every component a plain name and none a link: the path as the kernel names it. Any
    // error goes the way below, which decides: ELOOP (a link on the way), ENOSYS (before
    // Linux 5.6), EPERM or whatever errno a seccomp filter of an outer sandbox answers for
    // openat2 (ENOENT included: asked again rather than trusting an answer a filter made up).
    if plain {
        if let Ok(fd) = rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        ) {
            return Some((path.components().collect(), fd));
        }
    }
    let fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .filter(|p| p.is_absolute())
        .or_else(|| std::fs::canonicalize(path).ok())?;
    Some((real, fd))
}

/// Resolves a path the way the kernel will see it: `realpath` of the path, or, when it does
/// not exist (yet), of its deepest existing ancestor with the rest appended. `realpath` is
/// passed in so that the logic is testable anywhere; at run time it is
/// [`std::fs::canonicalize`] for Seatbelt, `real_path` for the profile. A path whose remainder contains `..` is returned unchanged.
pub fn canonical(path: &Path, realpath: &dyn Fn(&Path) -> std::io::Result<PathBuf>) -> PathBuf {
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(mut real) = realpath(cur) {
            for name in rest.iter().rev() {
                real.push(name);
            }
            return real;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether another policy's (or setting's) audit log exists at `log`: the log, its head or its
/// lock (a link counts, dangling too). Only then is there a trail to keep; a directory alone
/// (`~/.local/state/cordon` holding only `sessions/`, which a sandboxed command can make as
/// well) is not one, and protecting it would refuse every later Landlock run there.
fn another_log_exists(log: &Path) -> bool {
    [".head", ".lock", ""].iter().any(|suffix| {
        let mut p = log.as_os_str().to_os_string();
        p.push(suffix);
        std::fs::symlink_metadata(PathBuf::from(p)).is_ok()
    })
}

/// The canonical path of an existing file: `realpath(3)` (macOS has no O_PATH or /proc).
#[cfg(not(target_os = "linux"))]
fn real_path(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// macOS: the canonical path only (Seatbelt's rules take paths, not descriptors).
#[cfg(not(target_os = "linux"))]
fn real_path_opened(path: &Path) -> Option<(PathBuf, std::os::fd::OwnedFd)> {
    let real = real_path(path)?;
    let fd = std::fs::File::open(&real).ok()?;
    Some((real, fd.into()))
}

impl Profile {
    /// Derives the profile. Paths that do not exist on this machine are left out (a rule
    /// needs an inode); every kept path is canonical, so symlinked system paths such as
    /// `/bin` → `/usr/bin` or `/etc/resolv.conf` → `/run/...` grant their real target.
    pub fn from_policy(policy: &Policy) -> Profile {
        Profile::from_policy_opened(policy).0
    }

    /// [`Profile::from_policy`], with the rules' paths as they were opened to find their
    /// canonical names (see [`Opened`]).
    pub(crate) fn from_policy_opened(policy: &Policy) -> (Profile, Opened) {
        let sb = &policy.sandbox;
        let mut rules = Vec::new();
        let mut opened = Opened::new();
        let mut add = |path: &Path, access: Access, origin: String| {
            if let Some((real, fd)) = real_path_opened(path) {
                opened.entry(real.clone()).or_insert(fd);
                rules.push(PathRule {
                    path: real,
                    access,
                    origin,
                });
            }
        };
        if sb.system_read {
            for p in SYSTEM_EXEC {
                add(
                    Path::new(p),
                    Access::READ_EXEC,
                    "sandbox.system_read (programs)".into(),
                );
            }
            for p in SYSTEM_READ {
                add(
                    Path::new(p),
                    Access::READ,
                    "sandbox.system_read (configuration)".into(),
                );
            }
            for p in SYSTEM_DEVICES {
                add(
                    Path::new(p),
                    Access::DEVICE,
                    "sandbox.system_read (devices)".into(),
                );
            }
        }
        for p in &sb.extra_read {
            add(p, Access::READ, "sandbox.extra_read".into());
        }
        for root in &sb.paths {
            let access = Access {
                write: root.mode == Mode::ReadWrite,
                exec: root.exec,
                device: false,
            };
            let mode = if root.mode == Mode::ReadWrite {
                "rw"
            } else {
                "ro"
            };
            add(
                &root.root,
                access,
                format!("sandbox.paths.{} ({mode})", root.name),
            );
        }
        rules.sort();
        rules.dedup();

        // Protected paths: relative ones apply inside every writable root; a read-only root
        // nested in a writable one is protected too (the kernel must keep it read-only).
        let mut protected = Vec::new();
        let writable: Vec<_> = sb
            .paths
            .iter()
            .filter(|r| r.mode == Mode::ReadWrite)
            .collect();
        for p in &sb.protected {
            if p.is_absolute() {
                if writable.iter().any(|w| p.starts_with(&w.root)) {
                    protected.push(Protected {
                        path: p.clone(),
                        origin: "sandbox.protected".into(),
                    });
                }
            } else {
                for w in &writable {
                    protected.push(Protected {
                        path: w.root.join(p),
                        origin: format!("sandbox.protected (in sandbox.paths.{})", w.name),
                    });
                }
            }
        }
        if sb.git == GitDir::Protect {
            for w in &writable {
                protected.extend(git_protected(&w.root, &w.name));
            }
        }
        // The policy must stay out of the sandbox's reach: a command that can rewrite the
        // policy file, or the remembered rules beside it, grants itself the next call (or a
        // wider sandbox).
        if let Some(file) = policy.file() {
            let file = std::fs::canonicalize(&file).unwrap_or(file);
            let rules = file
                .parent()
                .unwrap_or(Path::new("/"))
                .join(cordon_policy::RULES_FILE_NAME);
            for (path, what) in [
                (file, "the policy file"),
                (rules, "the policy's remembered rules"),
            ] {
                if writable.iter().any(|w| path.starts_with(&w.root)) {
                    protected.push(Protected {
                        path,
                        origin: format!("{what}, inside a writable root"),
                    });
                }
            }
        }
        // The operator's trust store must stay out of the sandbox's reach: a command that can
        // write a trust entry makes the next run take the policy it left. The store in use is
        // protected wherever a writable root holds it; the other default place only where one
        // exists (left under another XDG_CONFIG_HOME), as for the other default audit logs.
        for (i, dir) in policy.trust_stores.iter().enumerate() {
            if i > 0 && !dir.exists() {
                continue;
            }
            let dir = canonical(dir, &|p| {
                real_path(p).ok_or_else(|| std::io::ErrorKind::NotFound.into())
            });
            // A writable root inside the store (a policy granting `~/.config/cordon/trusted`)
            // would hand it over as well: protected, such a policy is refused.
            if writable
                .iter()
                .any(|w| dir.starts_with(&w.root) || w.root.starts_with(&dir))
            {
                protected.push(Protected {
                    path: dir,
                    origin: cordon_policy::trust::PROTECTED_ORIGIN.into(),
                });
            }
        }
        // The audit trail must stay out of the sandbox's reach: a command that can rewrite
        // the log (or its head file) can rewrite the record of what it was allowed to do, and
        // one that can add names beside it can plant links where cordon's writer (outside the
        // sandbox, perhaps root) creates its files. So the log's whole directory is protected,
        // unless it is a writable root or holds one (that root would become read-only): then
        // only the log and its head are, and the writer's refusal to follow links is the guard.
        // The per-user default places other than this policy's log are protected the same way
        // where a log exists there (a run under another policy or setting left it), so that this
        // run cannot erase that trail; where none exists, there is nothing to keep.
        // The command must not read the trail either (every earlier command line and note),
        // nor hold the writer's lock (`FILE.lock`): all of it is hidden where the backend can.
        let own_log = policy.approval.audit_log.path().map(Path::to_path_buf);
        let logs = policy
            .approval
            .audit_log
            .path()
            .map(|p| (policy.approval.audit_log.key(), p))
            .into_iter()
            .chain(
                policy
                    .approval
                    .other_audit_logs
                    .iter()
                    .filter(|p| another_log_exists(p))
                    .map(|p| ("a default audit log of this user's", p.as_path())),
            );
        for (log_key, log) in logs {
            // Before the first run the log does not exist yet: resolve what does.
            // Its longest existing prefix made canonical, the rest as written: a log that does
            // not exist yet still compares with the canonical roots.
            let own = own_log.as_deref() == Some(log);
            let log = canonical(log, &|p| {
                real_path(p).ok_or_else(|| std::io::ErrorKind::NotFound.into())
            });
            if writable.iter().any(|w| log.starts_with(&w.root)) {
                let dir = log
                    .parent()
                    .filter(|d| !writable.iter().any(|w| w.root.starts_with(d)));
                match dir {
                    Some(dir) => protected.push(Protected {
                        path: dir.to_path_buf(),
                        origin: format!(
                            "{log_key} (its directory: the audit trail lies in a writable root){HIDDEN}"
                        ),
                    }),
                    None => {
                        let beside = |suffix: &str| {
                            let mut p = log.clone().into_os_string();
                            p.push(suffix);
                            PathBuf::from(p)
                        };
                        // The writer creates its lock before any run; another policy's log
                        // may predate it.
                        let lock = Some(beside(".lock")).filter(|l| own || l.exists());
                        // The after-run scans' markers and kept listings lie beside the log: a
                        // run that removed its own marker, its cordon then killed, was never
                        // scanned.
                        let scans = log.parent().map(|d| d.join(cordon_policy::SCANS_DIR));
                        for path in [log.clone(), beside(".head")]
                            .into_iter()
                            .chain(lock)
                            .chain(scans)
                        {
                            protected.push(Protected {
                                path,
                                origin: format!(
                                    "{log_key} (the audit trail lies in a writable root){HIDDEN}"
                                ),
                            });
                        }
                    }
                }
            }
        }
        for ro in sb.paths.iter().filter(|r| r.mode == Mode::ReadOnly) {
            if writable
                .iter()
                .any(|w| ro.root != w.root && ro.root.starts_with(&w.root))
            {
                protected.push(Protected {
                    path: ro.root.clone(),
                    origin: format!("sandbox.paths.{} (ro inside a rw root)", ro.name),
                });
            }
        }
        protected.sort();
        protected.dedup();

        let profile = Profile {
            rules,
            protected,
            network: sb.network,
            limits: sb.limits.clone(),
            forwards: policy.network.forwards.iter().map(|f| f.port).collect(),
        };
        (profile, opened)
    }

    /// Adds a per-run writable directory (the private TMPDIR), with [`PRIVATE_TMP_ORIGIN`].
    pub fn with_private_tmp(mut self, dir: &Path) -> Profile {
        self.rules.push(PathRule {
            path: dir.to_path_buf(),
            access: Access {
                write: true,
                exec: false,
                device: false,
            },
            origin: PRIVATE_TMP_ORIGIN.into(),
        });
        self.rules.sort();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str, dir: &Path) -> Policy {
        Policy::parse(text, "p.toml", dir).unwrap()
    }

    #[test]
    fn roots_and_system_paths() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("ro")).unwrap();
        let p = policy(
            "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[sandbox.paths.r]\nroot = \"ro\"\nexec = false\n",
            d.path(),
        );
        let prof = Profile::from_policy(&p);
        let real = std::fs::canonicalize(d.path()).unwrap();
        let w = prof.rules.iter().find(|r| r.path == real).unwrap();
        assert_eq!(
            w.access,
            Access {
                write: true,
                exec: true,
                device: false
            }
        );
        assert_eq!(w.origin, "sandbox.paths.w (rw)");
        let r = prof
            .rules
            .iter()
            .find(|r| r.path == real.join("ro"))
            .unwrap();
        assert_eq!(r.access, Access::READ);
        assert!(prof
            .rules
            .iter()
            .any(|r| r.path == Path::new("/usr") && r.access == Access::READ_EXEC));
        assert!(prof
            .rules
            .iter()
            .any(|r| r.path == Path::new("/etc/passwd")));
        assert!(!prof
            .rules
            .iter()
            .any(|r| r.path == Path::new("/etc") || r.path == Path::new("/")));
        assert!(!prof
            .rules
            .iter()
            .any(|r| r.path.starts_with("/etc/shadow") || r.path.starts_with("/etc/ssh")));
        // The read-only root inside the writable one must be protected.
        assert_eq!(prof.protected.len(), 1);
        assert_eq!(prof.protected[0].path, real.join("ro"));
    }

    #[test]
    fn system_read_off_grants_only_roots() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(
            "version = 1\n[sandbox]\nsystem_read = false\n[sandbox.paths.w]\nroot = \".\"\n",
            d.path(),
        );
        let prof = Profile::from_policy(&p);
        assert_eq!(prof.rules.len(), 1);
    }

    #[test]
    fn git_protect_covers_the_config_surface_of_each_roots_git_dir() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        for r in ["dir", "file", "none"] {
            std::fs::create_dir(real.join(r)).unwrap();
        }
        std::fs::create_dir(real.join("dir/.git")).unwrap();
        std::fs::write(real.join("file/.git"), "gitdir: ../x\n").unwrap();
        let text = |git: &str| {
            format!(
                "version = 1\n[sandbox]\n{git}\n[sandbox.paths.a]\nroot = \"dir\"\nmode = \"rw\"\n[sandbox.paths.b]\nroot = \"file\"\nmode = \"rw\"\n[sandbox.paths.c]\nroot = \"none\"\nmode = \"rw\"\n"
            )
        };
        let prof = Profile::from_policy(&policy(&text("git = \"protect\""), &real));
        let paths: Vec<_> = prof.protected.iter().map(|p| p.path.clone()).collect();
        let mut want: Vec<PathBuf> = GIT_CONFIG_SURFACE
            .iter()
            .map(|(rel, _)| real.join("dir/.git").join(rel))
            .collect();
        want.push(real.join("file/.git"));
        want.push(real.join("none/.git"));
        want.sort();
        assert_eq!(paths, want);
        assert!(prof.protected.iter().all(|p| p
            .origin
            .starts_with("sandbox.git = \"protect\" (in sandbox.paths.")));
        // The default: the .git directory is writable like the rest of the root.
        assert!(Profile::from_policy(&policy(&text(""), &real))
            .protected
            .is_empty());
    }

    #[test]
    fn relative_protected_paths_apply_in_every_writable_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::fs::create_dir(d.path().join("b")).unwrap();
        let p = policy(
            "version = 1\n[sandbox]\nprotected = [\".git/hooks\"]\n[sandbox.paths.a]\nroot = \"a\"\nmode = \"rw\"\n[sandbox.paths.b]\nroot = \"b\"\nmode = \"rw\"\n",
            d.path(),
        );
        let prof = Profile::from_policy(&p);
        let real = std::fs::canonicalize(d.path()).unwrap();
        let paths: Vec<_> = prof.protected.iter().map(|p| p.path.clone()).collect();
        assert_eq!(
            paths,
            vec![real.join("a/.git/hooks"), real.join("b/.git/hooks")]
        );
    }

    #[test]
    fn the_default_audit_log_in_a_writable_root_is_protected_too() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        let mut p = policy(
            "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n",
            d.path(),
        );
        // As when cordon runs from the home directory without XDG_STATE_HOME.
        p.approval.audit_log =
            cordon_policy::AuditLog::Default(d.path().join(".local/state/cordon/audit.jsonl"));
        let prof = Profile::from_policy(&p);
        assert_eq!(prof.protected.len(), 1);
        assert_eq!(prof.protected[0].path, real.join(".local/state/cordon"));
        assert!(
            prof.protected[0]
                .origin
                .starts_with("the default audit log"),
            "{}",
            prof.protected[0].origin
        );
        p.approval.audit_log = cordon_policy::AuditLog::Nowhere;
        assert!(Profile::from_policy(&p).protected.is_empty());
    }

    #[test]
    fn other_default_logs_in_a_writable_root_are_protected_where_they_exist() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        let mut p = policy(
            "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[approval]\naudit_log = \"/var/log/elsewhere.jsonl\"\n",
            d.path(),
        );
        // A run from HOME under a policy that records elsewhere: the default place in HOME.
        p.approval.other_audit_logs = vec![d.path().join(".local/state/cordon/audit.jsonl")];
        assert!(
            Profile::from_policy(&p).protected.is_empty(),
            "no log there"
        );
        // A directory holding only sessions is no log (red-team F4).
        std::fs::create_dir_all(d.path().join(".local/state/cordon/sessions")).unwrap();
        assert!(
            Profile::from_policy(&p).protected.is_empty(),
            "a sessions-only directory"
        );
        for name in ["audit.jsonl.lock", "audit.jsonl.head", "audit.jsonl"] {
            std::fs::write(d.path().join(".local/state/cordon").join(name), "").unwrap();
        }
        let prof = Profile::from_policy(&p);
        assert_eq!(prof.protected.len(), 1);
        assert_eq!(prof.protected[0].path, real.join(".local/state/cordon"));
        assert!(prof.protected[0].origin.starts_with("a default audit log"));
    }

    #[test]
    fn an_audit_log_inside_a_writable_root_is_protected_with_its_directory() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        let paths = |text: &str, dir: &Path| -> Vec<PathBuf> {
            Profile::from_policy(&policy(text, dir))
                .protected
                .iter()
                .map(|p| p.path.clone())
                .collect()
        };
        let ws = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n";
        // The default place: `.cordon/` whole (nothing can be planted beside the log), whether
        // it exists yet or not.
        let text = format!("{ws}[approval]\naudit_log = \".cordon/audit.jsonl\"\n");
        assert_eq!(paths(&text, d.path()), vec![real.join(".cordon")]);
        std::fs::create_dir(d.path().join(".cordon")).unwrap();
        std::fs::write(d.path().join(".cordon/audit.jsonl"), "").unwrap();
        assert_eq!(paths(&text, d.path()), vec![real.join(".cordon")]);
        let prof = Profile::from_policy(&policy(&text, d.path()));
        assert!(prof.protected[0].origin.contains("its directory"));
        // Not even readable: every earlier command line is in it.
        assert!(prof.protected[0].hidden());
        // Directly in the writable root: protecting the directory would make the whole root
        // read-only, so only the log, its head, the writer's lock and the scans' markers
        // beside them are protected (hidden).
        let text = format!("{ws}[approval]\naudit_log = \"audit.jsonl\"\n");
        assert_eq!(
            paths(&text, d.path()),
            vec![
                real.join("audit.jsonl"),
                real.join("audit.jsonl.head"),
                real.join("audit.jsonl.lock"),
                real.join("scans")
            ]
        );
        let prof = Profile::from_policy(&policy(&text, d.path()));
        assert!(prof.protected.iter().all(Protected::hidden));
        // Likewise when the directory holds another writable root.
        std::fs::create_dir_all(d.path().join("logs/inner")).unwrap();
        let text = format!(
            "{ws}[sandbox.paths.inner]\nroot = \"logs/inner\"\nmode = \"rw\"\n[approval]\naudit_log = \"logs/audit.jsonl\"\n"
        );
        assert_eq!(
            paths(&text, d.path()),
            vec![
                real.join("logs/audit.jsonl"),
                real.join("logs/audit.jsonl.head"),
                real.join("logs/audit.jsonl.lock"),
                real.join("logs/scans")
            ]
        );
        // Outside every writable root there is nothing to protect.
        let outside = tempfile::tempdir().unwrap();
        let text = format!(
            "{ws}[approval]\naudit_log = \"{}/a.jsonl\"\n",
            outside.path().display()
        );
        assert!(paths(&text, d.path()).is_empty());
    }

    #[test]
    fn a_log_not_yet_created_is_found_in_its_root_through_a_symlink() {
        // The policy's directory named through a symlink: the roots are canonical, and so
        // must the log's path be before it exists (the first run).
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("real")).unwrap();
        std::os::unix::fs::symlink(d.path().join("real"), d.path().join("link")).unwrap();
        let p = policy(
            "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[approval]\naudit_log = \"logs/a/audit.jsonl\"\n",
            &d.path().join("link"),
        );
        let real = std::fs::canonicalize(d.path().join("real")).unwrap();
        let paths: Vec<_> = Profile::from_policy(&p)
            .protected
            .iter()
            .map(|p| p.path.clone())
            .collect();
        assert_eq!(paths, vec![real.join("logs/a")]);
    }

    #[test]
    fn a_policy_file_inside_a_writable_root_is_protected_with_its_remembered_rules() {
        let ws = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(ws.path()).unwrap();
        let text = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n";
        std::fs::write(ws.path().join("cordon.toml"), text).unwrap();
        let p = cordon_policy::Policy::load(&ws.path().join("cordon.toml")).unwrap();
        let prof = Profile::from_policy(&p);
        let paths: Vec<_> = prof.protected.iter().map(|p| p.path.clone()).collect();
        assert_eq!(
            paths,
            vec![real.join("cordon.rules.toml"), real.join("cordon.toml")]
        );
        assert!(prof.protected[1].origin.starts_with("the policy file"));
        // Kept outside the writable roots, there is nothing to protect.
        let outside = tempfile::tempdir().unwrap();
        let text = format!(
            "version = 1\n[sandbox.paths.w]\nroot = {:?}\nmode = \"rw\"\n",
            ws.path().display().to_string()
        );
        std::fs::write(outside.path().join("cordon.toml"), text).unwrap();
        let p = cordon_policy::Policy::load(&outside.path().join("cordon.toml")).unwrap();
        assert!(Profile::from_policy(&p).protected.is_empty());
        // The embedded default has no file.
        let empty = tempfile::tempdir().unwrap();
        let p = cordon_policy::Policy::discover(None, empty.path()).unwrap();
        assert!(p.file().is_none() && p.rules_file().is_none());
    }

    #[test]
    fn the_trust_store_inside_a_writable_root_is_protected() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        let mut p = policy(
            "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n",
            d.path(),
        );
        let origin = cordon_policy::trust::PROTECTED_ORIGIN;
        let stores = |p: &Policy| -> Vec<PathBuf> {
            Profile::from_policy(p)
                .protected
                .iter()
                .filter(|x| x.origin == origin)
                .map(|x| x.path.clone())
                .collect()
        };
        // The store in use: protected even before it exists.
        p.trust_stores = vec![d.path().join("cfg/cordon"), d.path().join(".config/cordon")];
        assert_eq!(stores(&p), vec![real.join("cfg/cordon")]);
        // The other default place: once it exists.
        std::fs::create_dir_all(d.path().join(".config/cordon")).unwrap();
        assert_eq!(
            stores(&p),
            vec![real.join(".config/cordon"), real.join("cfg/cordon")]
        );
        // Outside every writable root: nothing to protect.
        p.trust_stores = vec![PathBuf::from("/nonexistent/cordon")];
        assert!(stores(&p).is_empty());
        // Holding a writable root: protected (and so the policy is refused).
        p.trust_stores = vec![d.path().parent().unwrap().to_path_buf()];
        assert_eq!(stores(&p), vec![real.parent().unwrap().to_path_buf()]);
    }

    #[test]
    fn real_paths_resolve_symlinks_like_canonicalize() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::os::unix::fs::symlink(d.path().join("a"), d.path().join("link")).unwrap();
        for p in [
            d.path().join("link"),
            d.path().join("a"),
            d.path().join("link/"),
            d.path().join("a//."),
            d.path().join("a/../link"),
            PathBuf::from("/bin"),
            PathBuf::from("/etc/passwd"),
            PathBuf::from("/usr/bin/"),
        ] {
            assert_eq!(
                real_path(&p),
                std::fs::canonicalize(&p).ok(),
                "{}",
                p.display()
            );
            // The descriptor kept for the rule is the file the name was read from.
            let (real, fd) = real_path_opened(&p).unwrap();
            let (a, b) = (
                rustix::fs::fstat(&fd).unwrap(),
                rustix::fs::stat(&real).unwrap(),
            );
            assert_eq!(
                (a.st_dev, a.st_ino),
                (b.st_dev, b.st_ino),
                "{}",
                p.display()
            );
        }
        assert_eq!(real_path(&d.path().join("missing")), None);
        assert_eq!(real_path(&d.path().join("link/missing")), None);
        assert!(real_path_opened(&d.path().join("missing")).is_none());
    }

    #[test]
    fn derivation_is_deterministic() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(cordon_policy::DEFAULT_POLICY, d.path());
        assert_eq!(Profile::from_policy(&p), Profile::from_policy(&p));
    }
}
