//! The bubblewrap backend: a private view of the filesystem built from mounts, then Landlock
//! and seccomp inside it as well.
//!
//! What it adds over Landlock alone: `protected` paths stay read-only inside writable roots
//! (read-only bind mounts, so even `chmod`, `utime` and `setxattr` fail with EROFS), a
//! private `/tmp`, and new PID, IPC, UTS, cgroup and network namespaces (other processes are
//! invisible; no network unless the policy allows it, or only cordon's proxy under
//! `network = "proxy"`, whose listener the inner stage makes there: see [`crate::proxy`]).
//!
//! The run has two stages. cordon builds the Landlock ruleset in the parent and starts bwrap
//! (found on a trusted path, never `$PATH`) with its options in a memfd (`--args`), cordon's
//! seccomp program in another (`--add-seccomp-fd`). Landlock forbids mounts
//! to a restricted process, so the ruleset cannot be applied before bwrap builds the view:
//! bwrap runs the inner stage ([`INNER_STAGE`], a small static program embedded in cordon and
//! passed in a sealed memfd), which adds the rules for what bwrap mounts fresh (`/proc`,
//! `/dev`), applies the ruleset and execs the command. The other rules are built from host
//! paths: bwrap's binds show the same inodes, and Landlock rules belong to inodes.
//!
//! Right before that exec the inner stage writes one byte on a pipe of cordon's (`ready FD`,
//! [`with_ready`]): that byte, not bwrap's `--json-status-fd`, tells bwrap's own failures
//! (no byte) from the command's exit status. bwrap's report reads `/proc/CHILD/ns/*`, which
//! needs a /proc of the PID namespace bwrap runs in, so cordon's pid 1 (`run/pid1.rs`) had to
//! take a mount namespace and mount a fresh /proc on every run only for it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::profile::{Access, PathRule, Profile};
use crate::Error;

/// The inner stage's program (`inner/main.rs`, built statically by `build.rs`).
pub static INNER_STAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cordon-inner"));

/// Everything the outer stage needs that is not in the profile.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub cwd: &'a Path,
    /// The run's private directory on the host, mounted at `/tmp` inside.
    pub tmp: &'a Path,
    /// Running as root: bwrap must drop every capability itself.
    pub root: bool,
    /// File descriptors (as the child will see them) for bwrap's seccomp programs.
    pub seccomp_fds: &'a [i32],
    /// Only describe the invocation (`cordon profile`): create no placeholders on the host.
    pub dry_run: bool,
    /// Stay in the outer sandbox's network namespace (it refuses the netlink socket bwrap
    /// needs for loopback, and already refuses inet sockets; see `crate::nested_network`).
    pub outer_network: bool,
    /// Keep the outer sandbox's device nodes (root in a user namespace cannot make its own;
    /// see `crate::Choice::outer_devices`).
    pub outer_devices: bool,
}

/// One bwrap option with its values, and why it is there (the policy key, for audit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub words: Vec<OsString>,
    pub why: String,
    /// cordon's own plumbing (its seccomp and status fds), not part of the sandbox's view.
    pub plumbing: bool,
}

/// bwrap's options and the paths cordon created as mount points (to remove after the run).
#[derive(Debug)]
pub struct Invocation {
    /// bwrap's options, flattened (what `--args` receives).
    pub args: Vec<OsString>,
    /// The same options grouped, each with why it is there.
    pub options: Vec<Opt>,
    /// The placeholders the protect mounts use: kept until bwrap is gone (see
    /// [`crate::protect::Placeholders`]).
    pub placeholders: crate::protect::Placeholders,
    /// As root: the (empty) directory the `--dev-bind` options take the sandbox's own device
    /// nodes from. They are made right before bwrap starts: on a tmpfs that cordon's pid 1
    /// mounts there in its own mount namespace, or, where there is no such pid 1, on disk by
    /// [`make_device_nodes`] (see `run::Confinement::device_nodes`).
    pub devices: Option<PathBuf>,
}

/// Mount points the profile's system rules need that bwrap provides itself.
fn provided_by_bwrap(p: &Path) -> bool {
    p.starts_with("/dev") || p.starts_with("/proc")
}

/// Derives bwrap's options (one option or value per element) from the profile. Mounts are
/// ordered so that the more specific path is mounted later and wins: parents first, then
/// protected paths last.
pub fn invocation(profile: &Profile, cx: &Context) -> Result<Invocation, Error> {
    let mut options: Vec<Opt> = Vec::new();
    let mut push = |why: &str, items: &[&OsStr]| {
        options.push(Opt {
            words: items.iter().map(|s| s.to_os_string()).collect(),
            why: why.to_string(),
            plumbing: false,
        })
    };
    if cx.outer_network {
        // `--unshare-all` without the network: bwrap would need a netlink socket to bring
        // loopback up in a new one, which the outer sandbox refuses.
        push(
            "new mount, PID, IPC, UTS and cgroup namespaces (and user, when unprivileged); the network namespace is the outer sandbox's, which refuses inet sockets (and cordon's seccomp every socket)",
            &[
                "--unshare-user-try".as_ref(),
                "--unshare-ipc".as_ref(),
                "--unshare-pid".as_ref(),
                "--unshare-uts".as_ref(),
                "--unshare-cgroup-try".as_ref(),
            ],
        );
    } else {
        push(
            "new mount, PID, IPC, UTS, cgroup and network namespaces (and user, when unprivileged)",
            &["--unshare-all".as_ref()],
        );
    }
    if profile.network == cordon_policy::Network::Allow && !cx.outer_network {
        push("sandbox.network = \"allow\"", &["--share-net".as_ref()]);
    }
    // "deny" keeps bwrap's empty network namespace on every kernel (see `network.rs`).
    push(
        "the sandbox dies with cordon; a new session has no controlling terminal",
        &["--die-with-parent".as_ref(), "--new-session".as_ref()],
    );
    if cx.root {
        push(
            "running as root: no capabilities inside",
            &["--cap-drop".as_ref(), "ALL".as_ref()],
        );
    }
    if cx.root && !cx.outer_devices {
        // The whole /dev is cordon's own ([`private_device_nodes`]): no `--dev`.
        push(
            "a /proc for the new PID namespace",
            &["--proc".as_ref(), "/proc".as_ref()],
        );
    } else {
        push(
            "a /proc for the new PID namespace and a minimal /dev (sandbox.system_read devices)",
            &[
                "--proc".as_ref(),
                "/proc".as_ref(),
                "--dev".as_ref(),
                "/dev".as_ref(),
            ],
        );
    }
    kernel_interfaces_read_only(&mut push);
    let devices = private_device_nodes(cx, &mut push)?;

    // Private /tmp: the run's own directory, so nothing is shared with the host's /tmp.
    // Each bind mount costs ~160 us to set up and tear down, and the profile lists ~30 files
    // in /etc. Landlock inside enforces that allow-list file by file (nothing else in /etc,
    // such as /etc/shadow, can be opened), so bwrap binds /etc whole, read-only, once.
    let system_etc =
        |r: &PathRule| r.origin.starts_with("sandbox.system_read") && r.path.starts_with("/etc");
    let etc = PathRule {
        path: PathBuf::from("/etc"),
        access: Access::READ,
        origin: "sandbox.system_read (configuration)".into(),
    };
    let has_etc = profile.rules.iter().any(system_etc);
    let rules: Vec<&PathRule> = profile
        .rules
        .iter()
        .filter(|r| !provided_by_bwrap(&r.path) && r.path != cx.tmp && !system_etc(r))
        .chain(has_etc.then_some(&etc))
        .collect();
    // A path whose nearest enclosing rule mounts it the same way is already visible
    // (/usr/bin under /usr): one mount fewer each.
    let rules: Vec<&PathRule> = rules
        .iter()
        .copied()
        .filter(|r| !crate::protect::redundant(&rules, r))
        .collect();
    // Parents before children, so a deeper mount (a workspace under /tmp) lands on top; the
    // protected paths' plan (crate::protect) anchors the directories above them among these.
    let protect = crate::protect::plan(
        &profile.protected,
        &crate::protect::writable_roots(&rules),
        cx.dry_run,
    )?;
    let mut mounts: Vec<(&Path, &Path, bool, &str)> = rules
        .iter()
        .map(|r| {
            (
                r.path.as_path(),
                r.path.as_path(),
                r.access.write,
                r.origin.as_str(),
            )
        })
        .collect();
    if !rules.iter().any(|r| r.path == Path::new("/tmp")) {
        mounts.push((
            cx.tmp,
            Path::new("/tmp"),
            true,
            "private /tmp: the run's own directory",
        ));
    }
    mounts.extend(
        protect
            .anchors
            .iter()
            .map(|a| (a.at.as_path(), a.at.as_path(), true, a.why.as_str())),
    );
    mounts.sort_by_key(|(_, dest, _, _)| (dest.components().count(), dest.to_path_buf()));
    for (src, dest, write, why) in mounts {
        let opt = if write { "--bind" } else { "--ro-bind" };
        push(why, &[opt.as_ref(), src.as_os_str(), dest.as_os_str()]);
    }
    // As root the sandbox's /dev is the tmpfs on the run's `.cordon-dev`, and the run's
    // directory is bound with what is mounted in it: covered where the sandbox sees that
    // directory, or the command could change its /dev there (replace /dev/null with a file,
    // which a reused sandbox's later runs would write into).
    if let Some(dir) = &devices {
        let mut seen: Vec<PathBuf> = Vec::new();
        if !rules.iter().any(|r| r.path == Path::new("/tmp")) {
            seen.push(Path::new("/tmp").join(DEVICE_DIR));
        }
        if rules.iter().any(|r| dir.starts_with(&r.path)) {
            seen.push(dir.clone());
        }
        for at in &seen {
            push(
                "running as root: the sandbox's /dev as the run's directory shows it, covered by an empty read-only tmpfs",
                &[
                    "--tmpfs".as_ref(),
                    at.as_os_str(),
                    "--remount-ro".as_ref(),
                    at.as_os_str(),
                ],
            );
        }
    }
    // The profile holds canonical paths; recreate the host's symlinked system entries
    // (`/lib64` → `usr/lib64` on merged-/usr systems, which the ELF interpreter path uses).
    if profile
        .rules
        .iter()
        .any(|r| r.origin.starts_with("sandbox.system_read"))
    {
        // Links inside a bound directory (/etc/localtime) are there already.
        let bound = |p: &Path| rules.iter().any(|r| p.starts_with(&r.path));
        for (link, target) in system_links(bound, |p| std::fs::read_link(p)) {
            push(
                "sandbox.system_read (a symlink on this host)",
                &["--symlink".as_ref(), target.as_os_str(), link.as_os_str()],
            );
        }
    }

    // Protected paths: re-bound read-only over the writable root, or covered where a symlink
    // on the way could point the mount elsewhere or a missing path could be created.
    for m in &protect.covers {
        let at = m.at.as_os_str();
        match m.cover {
            crate::protect::Cover::ReadOnly => push(&m.why, &["--ro-bind".as_ref(), at, at]),
            crate::protect::Cover::Null => {
                push(&m.why, &["--ro-bind".as_ref(), "/dev/null".as_ref(), at])
            }
            crate::protect::Cover::EmptyDir => push(
                &m.why,
                &["--tmpfs".as_ref(), at, "--remount-ro".as_ref(), at],
            ),
            crate::protect::Cover::Anchor => push(&m.why, &["--bind".as_ref(), at, at]),
        }
    }
    let placeholders = protect.placeholders;

    // The sandbox's root is bwrap's throwaway tmpfs, and Landlock inside grants nothing on it:
    // no `--remount-ro /` (it would cost a remount of every mount).
    push(
        "the current directory",
        &["--chdir".as_ref(), cx.cwd.as_os_str()],
    );
    for fd in cx.seccomp_fds {
        push(
            "cordon's seccomp filter (cordon profile --format seccomp)",
            &["--add-seccomp-fd".as_ref(), OsStr::new(&fd.to_string())],
        );
    }

    for o in &mut options {
        o.plumbing = o.words[0] == "--add-seccomp-fd";
    }
    Ok(Invocation {
        args: options
            .iter()
            .flat_map(|o| o.words.iter().cloned())
            .collect(),
        options,
        placeholders,
        devices,
    })
}

/// Holds every bind source that lies in a writable root by the descriptor the path resolver
/// opened (see [`crate::resolve`]), and hands it to bwrap as `--bind-fd N` / `--ro-bind-fd N`.
/// A source that became a symlink before it was opened is refused here. After that, whatever
/// a process in the root (a concurrent run's command) does to the name cannot redirect the
/// mount: bwrap mounts `/proc/self/fd/N` by the name that magic link reads as, so a plain
/// `--bind /proc/self/fd/N` would mount whatever now stands at that name (a directory removed
/// after it was opened reads as `NAME (deleted)`, and a symlink planted under that name was
/// bound: `held_sources_cannot_be_redirected_by_the_name`); with `--bind-fd` bwrap compares
/// the mounted inode with the descriptor's and refuses the run on any difference ("Race
/// condition binding dirfd"), and closes the descriptor itself. Sources outside every
/// writable root (system paths, `/dev/null`) stay paths. What is left to a path: the mount
/// points (destinations), which bwrap resolves inside the new root as it mounts.
pub fn hold_sources(
    inv: &mut Invocation,
    writable: &[PathBuf],
) -> Result<Vec<std::os::fd::OwnedFd>, Error> {
    use std::os::fd::AsRawFd;
    let mut held = Vec::new();
    for opt in &mut inv.options {
        let by_fd = match opt.words[0].to_str() {
            Some("--bind") => "--bind-fd",
            Some("--ro-bind") => "--ro-bind-fd",
            _ => continue,
        };
        if opt.words.len() != 3 {
            continue;
        }
        let src = PathBuf::from(&opt.words[1]);
        if !writable.iter().any(|w| src.starts_with(w)) {
            continue;
        }
        let fd = crate::resolve::open_for_rule(&src, writable)?;
        opt.words[0] = by_fd.into();
        opt.words[1] = fd.as_raw_fd().to_string().into();
        held.push(fd);
    }
    inv.args = inv
        .options
        .iter()
        .flat_map(|o| o.words.iter().cloned())
        .collect();
    Ok(held)
}

/// Where /proc lets root change the kernel: sysctls (`kernel.core_pattern` and
/// `kernel.modprobe` run programs as root outside any sandbox) and the magic SysRq key. As
/// root, bwrap covers `/proc/sys`, `sysrq-trigger`, `irq` and `bus` itself, but only where its
/// `access(W_OK)` check says writable, which `/proc/sys` (a read-only directory of writable
/// files) escapes; so these two are bound read-only here, from the host's /proc (sysctls
/// answer for the reader's namespaces, whichever /proc mount shows them). Landlock inside
/// grants /proc read-only as well; an unprivileged user's bwrap runs in a user namespace,
/// where the host's root-owned entries are not writable.
pub const PROC_READ_ONLY: &[&str] = &["/proc/sys", "/proc/sysrq-trigger"];

fn kernel_interfaces_read_only(push: &mut impl FnMut(&str, &[&OsStr])) {
    for p in PROC_READ_ONLY {
        // `-try`: a kernel without the entry (no SysRq support) has nothing to protect.
        push(
            "the kernel's writable /proc entries stay read-only (even for root)",
            &["--ro-bind-try".as_ref(), p.as_ref(), p.as_ref()],
        );
    }
    // Then the whole fresh /proc: a mode or owner set on an entry that is not a process's
    // (kallsyms, acpi/*) is the kernel's own, shared by every /proc mount, and root owns it
    // (chmod needs no capability). Landlock inside grants /proc read-only, so nothing else
    // is taken away.
    push(
        "the fresh /proc read-only: its kernel entries' modes are the host's",
        &["--remount-ro".as_ref(), "/proc".as_ref()],
    );
}

/// The device nodes bwrap's `--dev` binds from the host.
pub const DEVICE_NODES: &[(&str, u32, u32)] = &[
    ("null", 1, 3),
    ("zero", 1, 5),
    ("full", 1, 7),
    ("random", 1, 8),
    ("urandom", 1, 9),
    ("tty", 5, 0),
];

/// Where, inside the run's private directory, cordon makes the sandbox's own device nodes.
pub const DEVICE_DIR: &str = ".cordon-dev";

/// The symbolic links of the sandbox's own `/dev` (as root), as bwrap's `--dev` makes them:
/// (name, target).
pub const DEVICE_LINKS: &[(&str, &str)] = &[
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("core", "/proc/kcore"),
    ("ptmx", "pts/ptmx"),
];

/// The directories of the sandbox's own `/dev` (as root), as bwrap's `--dev` makes them; a
/// devpts instance of its own is mounted on `pts` (by cordon's pid 1).
pub const DEVICE_DIRS: &[&str] = &["pts", "shm"];

/// As root, the sandbox gets device nodes of its own. bwrap's `--dev` binds the host's
/// `/dev/null`, `zero`, …, read-write (a read-only bind would also make them `nodev`), and
/// root owns them, so `chmod`, `chown` or `touch` inside would change the host's nodes. cordon
/// makes fresh nodes (same devices) for each run: whatever the command does to their metadata
/// stays with them. An unprivileged user cannot change the host's nodes (root owns them), so
/// keeps bwrap's `--dev`.
///
/// The whole `/dev` is one directory of cordon's, bound once (`--dev-bind DIR /dev`): the
/// nodes, [`DEVICE_LINKS`], [`DEVICE_DIRS`] and a devpts instance of its own on `pts`, as
/// bwrap's `--dev` has them. Not `--dev` plus a bind per node over its nodes: bubblewrap reads
/// the whole mount table after every bind, so its six binds and cordon's six cost ~2.5–3 ms
/// of CPU per run here (docs/benchmarks.md), one bind a fraction of that.
///
/// Here only the directory is made (in the run's private directory) and returned; its content
/// is made just before bwrap starts, on a tmpfs in cordon's pid 1's mount namespace (an inode
/// on tmpfs costs almost nothing; on the disk's /tmp each one cost 0.2–1 ms of CPU here), or by
/// [`make_device_nodes`] on disk where there is no such pid 1 (then without a devpts of its
/// own: no pseudo-terminals inside, named as part of that gap).
fn private_device_nodes(
    cx: &Context,
    push: &mut impl FnMut(&str, &[&OsStr]),
) -> Result<Option<PathBuf>, Error> {
    if !cx.root || cx.outer_devices {
        return Ok(None);
    }
    let dir = cx.tmp.join(DEVICE_DIR);
    if !cx.dry_run {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(&dir)
            .map_err(|e| Error::other(format!("cannot create {}: {e}", dir.display())))?;
    }
    push(
        "running as root: the sandbox's own /dev (its nodes, links and devpts; sandbox.system_read devices), so chmod/chown/utime cannot reach the host's nodes",
        &["--dev-bind".as_ref(), dir.as_os_str(), "/dev".as_ref()],
    );
    Ok(Some(dir))
}

/// Makes [`DEVICE_NODES`] (mode 0666 whatever the umask) in `dir`, on the disk: for a bwrap
/// started without cordon's pid 1 (no PID namespace of cordon's own here), which has no mount
/// namespace of its own to put a tmpfs in.
pub fn make_device_nodes(dir: &Path) -> Result<(), Error> {
    for (name, major, minor) in DEVICE_NODES {
        let node = dir.join(name);
        let c = std::ffi::CString::new(node.as_os_str().as_bytes())
            .map_err(|_| Error::other(format!("a NUL byte in {}", node.display())))?;
        // SAFETY: a NUL-terminated path; mknod creates the node or fails.
        let rc = unsafe {
            libc::mknod(
                c.as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(*major, *minor),
            )
        };
        if rc != 0 {
            return Err(Error::other(format!(
                "cannot make the sandbox's own /dev/{name} ({}): {}",
                node.display(),
                std::io::Error::last_os_error()
            )));
        }
        // The umask must not narrow what every program expects of these nodes.
        let _ =
            std::fs::set_permissions(&node, std::os::unix::fs::PermissionsExt::from_mode(0o666));
    }
    let made = |what: &str, e: std::io::Error| {
        Error::other(format!(
            "cannot make the sandbox's own /dev/{what} in {}: {e}",
            dir.display()
        ))
    };
    for name in DEVICE_DIRS {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(dir.join(name))
            .map_err(|e| made(name, e))?;
    }
    for (name, target) in DEVICE_LINKS {
        std::os::unix::fs::symlink(target, dir.join(name)).map_err(|e| made(name, e))?;
    }
    Ok(())
}

/// The inner stage's program in a sealed, executable memfd: bwrap runs it as
/// `/proc/self/fd/N` inside the sandbox, so no file on the host has to be trusted to be it.
pub fn inner_stage() -> Result<std::os::fd::OwnedFd, Error> {
    crate::memfd("cordon-inner", INNER_STAGE, crate::MemfdKind::Program)
}

/// The profile's rules, split by where Landlock must open them: cordon builds the ruleset
/// from host paths (bwrap's binds show the same inodes), except for what bwrap mounts fresh
/// (`/proc`, `/dev`), which exists only in the sandbox's view and is returned separately for
/// the inner stage to open there.
pub fn split_rules(profile: &Profile) -> (Profile, Vec<PathRule>) {
    let (inside, host): (Vec<PathRule>, Vec<PathRule>) = profile
        .rules
        .iter()
        .cloned()
        .partition(|r| provided_by_bwrap(&r.path));
    (
        Profile {
            rules: host,
            ..profile.clone()
        },
        inside,
    )
}

/// The inner stage's command line after its program (see `inner/main.rs`): the ruleset's
/// descriptor, each rule for the sandbox's view with its Landlock rights for a directory and
/// for a file, `cwd` and the checked working directory `cwd` (the stage refuses to start the
/// command anywhere else: bwrap's `--chdir` resolves the path again, after the check), then
/// `--` and the command.
pub fn inner_args(
    ruleset_fd: i32,
    inside: &[PathRule],
    abi: i32,
    cwd: &Path,
    command: impl IntoIterator<Item = OsString>,
) -> Vec<OsString> {
    let level = landlock::ABI::from(abi);
    let mut out: Vec<OsString> = vec![
        ruleset_fd.to_string().into(),
        inside.len().to_string().into(),
    ];
    for r in inside {
        out.push(r.path.clone().into_os_string());
        for is_dir in [true, false] {
            let rights = crate::landlock::fs_rights(r.access, is_dir, level);
            out.push(rights.bits().to_string().into());
        }
    }
    out.push("cwd".into());
    out.push(cwd.as_os_str().to_owned());
    out.push("--".into());
    out.extend(command);
    out
}

/// `args` from [`inner_args`] with the inner stage's `proxy PORT FD` (`sandbox.network =
/// "proxy"`): it makes the proxy's listener on `port` in the sandbox's network namespace and
/// sends it to cordon over the unix socket `fd` before the command starts.
pub fn with_proxy(mut args: Vec<OsString>, port: u16, fd: i32, forwards: &[u16]) -> Vec<OsString> {
    // Rule paths and the cwd are absolute: the first `--` is the one before the command.
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let mut inserted: Vec<OsString> = vec![
        "proxy".into(),
        port.to_string().into(),
        fd.to_string().into(),
    ];
    // [network.forward]: `forward PORT` each; their listeners follow the proxy's.
    for p in forwards {
        inserted.push("forward".into());
        inserted.push(p.to_string().into());
    }
    args.splice(at..at, inserted);
    args
}

/// `args` (the whole bwrap command line after its own options, `--args N -- INNER …`) with
/// the inner stage's `go FD` before the command: it starts the command only once cordon
/// writes "go" on the pipe `fd` (see [`crate::run::Release`]).
pub fn with_go(args: Vec<OsString>, fd: i32) -> Vec<OsString> {
    before_command(args, "go", fd)
}

/// `args` (as for [`with_go`]) with the inner stage's `ready FD` before the command: right
/// before the exec, once the sandbox is built, it writes `R` on the pipe `fd`. No byte when
/// bwrap has exited means bwrap (or the inner stage) failed, and its status is not the
/// command's (see `run::Confinement::setup_status`).
pub fn with_ready(args: Vec<OsString>, fd: i32) -> Vec<OsString> {
    // After `go FD` when there is one: the inner stage reads them in that order.
    before_command(args, "ready", fd)
}

/// `args` with the inner stage's `WORD FD` just before its `--` (the command).
fn before_command(mut args: Vec<OsString>, word: &str, fd: i32) -> Vec<OsString> {
    // bwrap's own `--` comes first; the inner stage's (rule paths and the cwd are absolute)
    // second.
    let at = args
        .iter()
        .enumerate()
        .filter(|(_, a)| *a == "--")
        .nth(1)
        .map_or(args.len(), |(i, _)| i);
    args.splice(at..at, [word.into(), fd.to_string().into()]);
    args
}

/// System entries that are symlinks on this host, with their targets as written (read by
/// `read_link`), but for those inside a `bound` directory: that bind shows them already. Those
/// are never read: 36 of the 45 entries are files in /etc, which is bound whole, and a
/// `readlink` each was a system call per entry per run for nothing.
fn system_links(
    bound: impl Fn(&Path) -> bool,
    read_link: impl Fn(&Path) -> std::io::Result<PathBuf>,
) -> Vec<(PathBuf, PathBuf)> {
    use crate::profile::{SYSTEM_DEVICES, SYSTEM_EXEC, SYSTEM_READ};
    SYSTEM_EXEC
        .iter()
        .chain(SYSTEM_READ)
        .chain(SYSTEM_DEVICES)
        .map(Path::new)
        .filter(|p| !provided_by_bwrap(p) && !bound(p))
        .filter_map(|p| read_link(p).ok().map(|t| (p.to_path_buf(), t)))
        .collect()
}

/// bwrap's options as the NUL-separated bytes `--args FD` reads.
pub fn args_bytes(args: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in args {
        out.extend_from_slice(a.as_bytes());
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Protected;
    use crate::protect::{is_placeholder, remove_placeholder};
    use cordon_policy::{Limits, Network};

    /// The system entries inside a bound directory (every /etc file of the profile, under the
    /// /etc bind) are not read at all: the bind shows them, and a `readlink` each cost a
    /// system call per run. Those outside still are, and their links are kept.
    #[test]
    fn system_links_reads_no_entry_inside_a_bound_directory() {
        let asked = std::cell::RefCell::new(Vec::<PathBuf>::new());
        let links = system_links(
            |p| p.starts_with("/etc"),
            |p| {
                asked.borrow_mut().push(p.to_path_buf());
                if p == Path::new("/bin") {
                    Ok(PathBuf::from("usr/bin"))
                } else {
                    Err(std::io::ErrorKind::InvalidInput.into())
                }
            },
        );
        let asked = asked.into_inner();
        let inside: Vec<_> = asked.iter().filter(|p| p.starts_with("/etc")).collect();
        assert!(inside.is_empty(), "read inside the bound /etc: {inside:?}");
        assert!(asked.contains(&PathBuf::from("/usr")), "{asked:?}");
        assert_eq!(
            links,
            vec![(PathBuf::from("/bin"), PathBuf::from("usr/bin"))]
        );
    }

    fn rule(path: &Path, write: bool) -> PathRule {
        PathRule {
            path: path.to_path_buf(),
            access: Access {
                write,
                exec: true,
                device: false,
            },
            origin: "t".into(),
        }
    }

    fn cx<'a>(cwd: &'a Path, tmp: &'a Path) -> Context<'a> {
        Context {
            cwd,
            tmp,
            // As root the run's private directory must exist (device nodes are made there):
            // see `root_gets_its_own_device_nodes_and_no_capabilities`.
            root: false,
            seccomp_fds: &[4],
            dry_run: false,
            outer_network: false,
            outer_devices: false,
        }
    }

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn mounts_parents_first_and_protected_last() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        let profile = Profile {
            rules: vec![
                rule(&ws, true),
                rule(Path::new("/usr"), false),
                rule(Path::new("/dev/null"), true),
            ],
            protected: vec![Protected {
                path: ws.join(".git/hooks"),
                origin: "p".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/cordon-x"))).unwrap();
        let a = strings(&inv.args);
        let joined = a.join(" ");
        assert!(
            joined.starts_with("--unshare-all --die-with-parent --new-session --proc /proc --dev /dev --ro-bind-try /proc/sys /proc/sys"),
            "{joined}"
        );
        assert!(!joined.contains("--share-net"));
        assert!(
            !joined.contains("/dev/null /dev/null"),
            "devices come from --dev"
        );
        let usr = joined.find("--ro-bind /usr /usr").unwrap();
        let wsb = joined
            .find(&format!("--bind {0} {0}", ws.display()))
            .unwrap();
        let prot = joined
            .find(&format!(
                "--ro-bind {0}/.git/hooks {0}/.git/hooks",
                ws.display()
            ))
            .unwrap();
        assert!(usr < wsb && wsb < prot, "{joined}");
        assert!(joined.contains("--bind /tmp/cordon-x /tmp"));
        assert!(
            joined.ends_with(&format!(
                "/.git/hooks --chdir {} --add-seccomp-fd 4",
                ws.display()
            )),
            "{joined}"
        );
        assert!(inv.placeholders.made().is_empty());
    }

    #[test]
    fn nested_paths_are_bound_only_when_their_mode_differs() {
        let d = tempfile::tempdir().unwrap();
        let ro = |p: &Path| PathRule {
            path: p.to_path_buf(),
            access: Access::READ,
            origin: "t".into(),
        };
        let a = d.path().join("a");
        let profile = Profile {
            rules: vec![
                ro(&a),
                rule(&a.join("b"), true),
                ro(&a.join("b/c")),
                ro(&a.join("x")),
                rule(&a.join("b/d"), true),
            ],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(d.path(), Path::new("/tmp/x"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        let bound = |p: &Path| joined.contains(&format!(" {0} {0}", p.display()));
        assert!(bound(&a) && bound(&a.join("b")) && bound(&a.join("b/c")));
        assert!(!bound(&a.join("x")), "ro under ro is redundant: {joined}");
        assert!(!bound(&a.join("b/d")), "rw under rw is redundant: {joined}");
    }

    #[test]
    fn etc_is_bound_once_and_left_to_landlock() {
        let d = tempfile::tempdir().unwrap();
        let sys = |p: &str| PathRule {
            path: PathBuf::from(p),
            access: Access::READ,
            origin: "sandbox.system_read (configuration)".into(),
        };
        let profile = Profile {
            rules: vec![
                rule(d.path(), true),
                sys("/etc/passwd"),
                sys("/etc/hosts"),
                sys("/run/systemd/resolve/stub-resolv.conf"),
            ],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(d.path(), Path::new("/tmp/x"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        assert!(joined.contains("--ro-bind /etc /etc"), "{joined}");
        assert!(!joined.contains("/etc/passwd"), "{joined}");
        assert!(
            joined.contains("--ro-bind /run/systemd/resolve/stub-resolv.conf"),
            "targets outside /etc stay"
        );
        // Landlock still gets the file-by-file allow-list, built from the host's paths.
        let (host, inside) = split_rules(&profile);
        assert!(host
            .rules
            .iter()
            .any(|r| r.path == Path::new("/etc/passwd")));
        assert!(!host.rules.iter().any(|r| r.path == Path::new("/etc")));
        assert!(inside.is_empty());
    }

    #[test]
    fn directories_above_protected_paths_become_mount_points() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: vec![
                Protected {
                    path: ws.join(".git/hooks"),
                    origin: "p".into(),
                },
                Protected {
                    path: ws.join(".git/config"),
                    origin: "p".into(),
                },
            ],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        let anchor = format!("--bind {0}/.git {0}/.git", ws.display());
        assert_eq!(joined.matches(&anchor).count(), 1, "{joined}");
        let hooks = format!("--ro-bind {0}/.git/hooks", ws.display());
        assert!(
            joined.find(&anchor).unwrap() < joined.find(&hooks).unwrap(),
            "{joined}"
        );
    }

    #[test]
    fn missing_protected_path_gets_a_placeholder() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: vec![Protected {
                path: ws.join(".git/hooks/pre-commit"),
                origin: "p".into(),
            }],
            network: Network::Allow,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        assert_eq!(inv.placeholders.made(), [ws.join(".git/hooks")]);
        assert!(ws.join(".git/hooks").is_file());
        let joined = strings(&inv.args).join(" ");
        // Inside a git directory the placeholder is its own source: git reads it as empty
        // (a host /dev/null is not granted by Landlock inside, and git warns about it).
        let at = ws.join(".git/hooks");
        assert!(
            joined.contains(&format!("--ro-bind {} {}", at.display(), at.display())),
            "{joined}"
        );
        assert!(joined.contains("--share-net"));
    }

    #[test]
    fn a_missing_commondir_is_covered_by_one_naming_the_git_dir_itself() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("other")).unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: ["ws/.git/commondir", "ws/.git/modules", "ws/other/x"]
                .iter()
                .map(|p| Protected {
                    path: d.path().join(p),
                    origin: "p".into(),
                })
                .collect(),
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        let commondir = ws.join(".git/commondir");
        // git refuses an empty commondir; `.` is the git directory itself.
        assert_eq!(std::fs::read(&commondir).unwrap(), b".\n");
        assert_eq!(std::fs::read(ws.join(".git/modules")).unwrap(), b"");
        let joined = strings(&inv.args).join(" ");
        let c = commondir.display();
        assert!(joined.contains(&format!("--ro-bind {c} {c}")), "{joined}");
        // Outside a git directory: /dev/null, as before.
        let x = ws.join("other/x");
        assert!(
            joined.contains(&format!("--ro-bind /dev/null {}", x.display())),
            "{joined}"
        );
        for p in inv.placeholders.made() {
            assert!(is_placeholder(p), "{}", p.display());
        }
        // Changed since: no longer cordon's, so it is not removed.
        std::fs::write(&commondir, "/elsewhere\n").unwrap();
        assert!(!is_placeholder(&commondir));
        remove_placeholder(&commondir);
        assert!(commondir.exists());
        // Issue 21, class 1: the directory on the way re-pointed by a concurrent run
        // (`.git -> elsewhere`, holding an empty file of the placeholder's name): nothing
        // there is removed; the real placeholder still is.
        let modules = ws.join(".git/modules");
        assert!(is_placeholder(&modules));
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("modules"), b"").unwrap();
        std::fs::rename(ws.join(".git"), ws.join(".git-real")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, ws.join(".git")).unwrap();
        remove_placeholder(&modules);
        assert!(elsewhere.join("modules").exists(), "removed through a link");
        std::fs::remove_file(ws.join(".git")).unwrap();
        std::fs::rename(ws.join(".git-real"), ws.join(".git")).unwrap();
        remove_placeholder(&modules);
        assert!(!modules.exists());
    }

    #[test]
    fn symlinked_protected_path_is_covered_at_the_link() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join(".git")).unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: vec![Protected {
                path: ws.join(".git/hooks"),
                origin: "p".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        assert!(inv.placeholders.made().is_empty());
        let joined = strings(&inv.args).join(" ");
        assert!(
            joined.contains(&format!("--ro-bind /dev/null {}/.git", ws.display())),
            "{joined}"
        );
    }

    #[test]
    fn private_tmp_is_tmp_inside() {
        let d = tempfile::tempdir().unwrap();
        let profile = Profile {
            rules: vec![rule(d.path(), true)],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
        .with_private_tmp(Path::new("/tmp/cordon-abc"));
        let inv = invocation(&profile, &cx(d.path(), Path::new("/tmp/cordon-abc"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        assert!(joined.contains("--bind /tmp/cordon-abc /tmp"), "{joined}");
        // The bind shows the same inode, so the host path's rule covers /tmp inside.
        let (host, _) = split_rules(&profile);
        assert!(host
            .rules
            .iter()
            .any(|r| r.path == Path::new("/tmp/cordon-abc") && r.access.write));
    }

    #[test]
    fn fresh_mounts_are_left_to_the_inner_stage() {
        let sys = |p: &str, device: bool| PathRule {
            path: PathBuf::from(p),
            access: Access {
                write: device,
                exec: false,
                device,
            },
            origin: "sandbox.system_read".into(),
        };
        let profile = Profile {
            rules: vec![
                sys("/dev/null", true),
                sys("/dev/pts", true),
                sys("/proc", false),
                sys("/usr", false),
            ],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let (host, inside) = split_rules(&profile);
        let paths = |v: &[PathRule]| v.iter().map(|r| r.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&host.rules), [PathBuf::from("/usr")]);
        assert_eq!(
            paths(&inside),
            ["/dev/null", "/dev/pts", "/proc"].map(PathBuf::from)
        );
        let args = strings(&inner_args(
            9,
            &inside[2..],
            7,
            Path::new("/w"),
            ["cat".into(), "-".into()],
        ));
        // ReadFile|ReadDir for the directory, ReadFile alone for a file: the inner stage
        // picks by the type it finds inside.
        assert_eq!(
            args,
            ["9", "1", "/proc", "12", "4", "cwd", "/w", "--", "cat", "-"]
        );
    }

    #[test]
    fn bind_sources_in_writable_roots_are_held_by_descriptor() {
        let d = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(d.path()).unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true), rule(Path::new("/usr"), false)],
            protected: vec![Protected {
                path: ws.join(".git/hooks"),
                origin: "p".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let mut inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        let writable = crate::resolve::writable_roots(&profile);
        let held = hold_sources(&mut inv, &writable).unwrap();
        assert_eq!(held.len(), 3, "the root, the anchor .git and .git/hooks");
        let joined = strings(&inv.args).join(" ");
        assert!(joined.contains("--ro-bind /usr /usr"), "{joined}");
        for (fd, dest) in held
            .iter()
            .zip([ws.clone(), ws.join(".git"), ws.join(".git/hooks")])
        {
            use std::os::fd::AsRawFd;
            let n = fd.as_raw_fd();
            assert!(
                joined.contains(&format!("-bind-fd {n} {}", dest.display())),
                "{joined}"
            );
            let src = format!("/proc/self/fd/{n}");
            assert_eq!(std::fs::read_link(&src).unwrap(), dest);
        }
        // A source that became a link since the view was derived is refused.
        let mut inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        std::fs::rename(ws.join(".git/hooks"), ws.join("hooks-old")).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join(".git/hooks")).unwrap();
        match hold_sources(&mut inv, &writable) {
            Err(Error::PlantedLink { link, .. }) => {
                assert_eq!(link, ws.join(".git/hooks"))
            }
            other => panic!("{other:?}"),
        }
    }

    /// A held source whose name changed after cordon opened it must not be mounted by its
    /// new name. Deterministic form of the race: the held directory is removed (its
    /// descriptor now reads as `NAME (deleted)`) and a symlink to a secret is planted under
    /// that name, as a concurrent run's command in the same root could. With the old
    /// `--ro-bind /proc/self/fd/N`, the real bwrap bound the secret (seen: the secret was
    /// printed); with `--ro-bind-fd N` it refuses the run.
    #[test]
    fn held_sources_cannot_be_redirected_by_the_name() {
        use std::os::fd::AsFd;
        let Some(bwrap) = crate::probe::TRUSTED_BWRAP
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
        else {
            panic!("bubblewrap is not installed (Debian package `bubblewrap`): the test needs it");
        };
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir(base.join("secret")).unwrap();
        std::fs::write(base.join("secret/s"), "SECRET\n").unwrap();
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: vec![Protected {
                path: ws.join(".git/hooks"),
                origin: "p".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let mut inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        let held = hold_sources(&mut inv, &crate::resolve::writable_roots(&profile)).unwrap();
        let hooks = inv
            .options
            .iter()
            .find(|o| o.words.len() == 3 && o.words[2] == ws.join(".git/hooks").as_os_str())
            .expect("the protected directory's bind")
            .words
            .clone();
        for fd in &held {
            rustix::io::fcntl_setfd(fd.as_fd(), rustix::io::FdFlags::empty()).unwrap();
        }
        std::fs::remove_dir(ws.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(base.join("secret"), ws.join(".git/hooks (deleted)")).unwrap();
        let out = std::process::Command::new(bwrap)
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/mnt"])
            .args([&hooks[0], &hooks[1]])
            .args(["/mnt/hooks", "/bin/cat", "/mnt/hooks/s"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stdout.contains("SECRET") && !out.status.success(),
            "bwrap mounted the name's new target: {:?} {stdout} {stderr}",
            out.status
        );
        assert!(stderr.contains("Race condition"), "{stderr}");
        drop(held);
    }

    #[test]
    fn root_gets_its_own_device_nodes_and_no_capabilities() {
        let d = tempfile::tempdir().unwrap();
        let tmp = d.path().join("run");
        std::fs::create_dir(&tmp).unwrap();
        let profile = Profile {
            rules: vec![rule(d.path(), true)],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let mut c = cx(d.path(), &tmp);
        c.root = true;
        let inv = invocation(&profile, &c).unwrap();
        let joined = strings(&inv.args).join(" ");
        assert!(joined.contains("--cap-drop ALL"), "{joined}");
        // The whole /dev is one bind of cordon's directory, after /proc; no `--dev`.
        let dir = tmp.join(DEVICE_DIR);
        let proc = joined.find("--proc /proc").unwrap();
        let bind = format!("--dev-bind {} /dev", dir.display());
        assert!(joined.find(&bind).is_some_and(|i| i > proc), "{joined}");
        assert!(!joined.contains("--dev /dev"), "{joined}");
        assert_eq!(joined.matches("--dev-bind").count(), 1, "{joined}");
        // Where the sandbox sees the run's directory, that /dev is covered.
        let cover = format!("--tmpfs /tmp/{DEVICE_DIR} --remount-ro /tmp/{DEVICE_DIR}");
        assert!(
            joined.find(&cover) > joined.find(&format!("--bind {} /tmp", tmp.display())),
            "{joined}"
        );
        // Only the directory is made here; its content right before bwrap starts.
        assert_eq!(inv.devices.as_deref(), Some(dir.as_path()));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        make_device_nodes(&dir).unwrap();
        for (name, target) in DEVICE_LINKS {
            assert_eq!(
                std::fs::read_link(dir.join(name)).unwrap(),
                Path::new(target)
            );
        }
        for name in DEVICE_DIRS {
            assert!(dir.join(name).is_dir(), "{name}");
        }
        for (name, major, minor) in DEVICE_NODES {
            let node = tmp.join(DEVICE_DIR).join(name);
            let m = std::fs::metadata(&node).unwrap();
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            assert!(m.file_type().is_char_device(), "{name}");
            assert_eq!(m.rdev(), libc::makedev(*major, *minor), "{name}");
            assert_eq!(m.mode() & 0o777, 0o666, "{name}");
        }
        // An unprivileged user keeps bwrap's nodes (root owns them; the user cannot chmod).
        let inv = invocation(&profile, &cx(d.path(), Path::new("/nonexistent"))).unwrap();
        assert!(!strings(&inv.args).join(" ").contains("--dev-bind"));
        assert_eq!(inv.devices, None);
    }

    #[test]
    fn the_kernels_writable_proc_entries_are_bound_read_only_after_proc() {
        let d = tempfile::tempdir().unwrap();
        let profile = Profile {
            rules: vec![rule(d.path(), true), rule(Path::new("/proc"), false)],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(d.path(), Path::new("/tmp/x"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        let proc = joined.find("--proc /proc").unwrap();
        for p in PROC_READ_ONLY {
            let at = joined.find(&format!("--ro-bind-try {p} {p}")).unwrap();
            assert!(at > proc, "{joined}");
        }
    }

    #[test]
    fn hidden_protected_paths_are_covered_not_bound() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join(".cordon")).unwrap();
        std::fs::write(ws.join("audit.jsonl"), "x").unwrap();
        let hidden = |p: PathBuf| Protected {
            path: p,
            origin: format!("approval.audit_log{}", crate::profile::HIDDEN),
        };
        let profile = Profile {
            rules: vec![rule(&ws, true)],
            protected: vec![hidden(ws.join(".cordon")), hidden(ws.join("audit.jsonl"))],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let inv = invocation(&profile, &cx(&ws, Path::new("/tmp/x"))).unwrap();
        let joined = strings(&inv.args).join(" ");
        let dir = ws.join(".cordon");
        assert!(
            joined.contains(&format!("--tmpfs {0} --remount-ro {0}", dir.display())),
            "{joined}"
        );
        assert!(
            joined.contains(&format!(
                "--ro-bind /dev/null {}",
                ws.join("audit.jsonl").display()
            )),
            "{joined}"
        );
        assert!(!joined.contains(&format!("--ro-bind {0} {0}", dir.display())));
    }

    #[test]
    fn args_are_nul_separated() {
        assert_eq!(args_bytes(&["--a".into(), "b c".into()]), b"--a\0b c\0");
    }
}
