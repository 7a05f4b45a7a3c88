//! Landlock: the ruleset is built here, in the parent; the child only calls
//! `landlock_restrict_self` on the file descriptor (see [`crate::run`]).

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use cordon_policy::Network;
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

use crate::profile::{PathRule, Profile};
use crate::Error;

/// The Landlock ABI the running kernel offers (0: none), asked of the kernel itself.
pub fn kernel_abi() -> i32 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI.
    // SAFETY: with the VERSION flag the kernel requires a null attribute pointer and size 0,
    // reads no memory and creates no descriptor; it only returns a number (or -1: no
    // Landlock, reported as ABI 0, which makes the Landlock backend unavailable).
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if r < 0 {
        0
    } else {
        r as i32
    }
}

/// A protection this ABI cannot give, named for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The first ABI that closes the gap.
    pub needs_abi: i32,
    pub what: &'static str,
}

/// What Landlock on a given ABI can enforce for a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    Full,
    Partial(Vec<Gap>),
    None,
}

/// The protections a profile needs from Landlock that `abi` cannot give. Gaps that seccomp
/// closes anyway (network and unix sockets while the network is denied) are not listed.
pub fn enforcement(abi: i32, _network: Network) -> Enforcement {
    if abi < 1 {
        return Enforcement::None;
    }
    let all = [
        Gap {
            needs_abi: 3,
            what: "truncating read-only files (truncate(2))",
        },
        Gap {
            needs_abi: 5,
            what: "ioctl on device files",
        },
        Gap {
            needs_abi: 6,
            what: "signals to processes outside the sandbox",
        },
        Gap {
            needs_abi: 6,
            what: "abstract unix sockets outside the sandbox",
        },
    ];
    let gaps: Vec<Gap> = all.into_iter().filter(|g| abi < g.needs_abi).collect();
    if gaps.is_empty() {
        Enforcement::Full
    } else {
        Enforcement::Partial(gaps)
    }
}

/// File rights for a path rule, limited to what `abi` knows. Never MakeChar/MakeBlock: a
/// device node created in a writable root would give raw access to a disk or terminal.
pub fn fs_rights(access: crate::profile::Access, is_dir: bool, abi: ABI) -> BitFlags<AccessFs> {
    let known = AccessFs::from_all(abi);
    let mut rights = AccessFs::ReadFile | AccessFs::ReadDir;
    if access.exec {
        rights |= AccessFs::Execute;
    }
    if access.write {
        rights |= AccessFs::from_write(abi)
            & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev);
    }
    if access.device {
        rights |= AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    }
    if !is_dir {
        rights &= AccessFs::from_file(abi);
    }
    rights & known
}

/// The host's devpts: the terminals of every session on the machine. A Landlock rule cannot
/// tell a new pty from another user's or the operator's other terminals, so nothing of the
/// host's devpts is granted: the command's terminal is a pty cordon opened for it and passes
/// as a descriptor (see [`crate::stdio`]). Where the backend has its own namespaces, its init
/// mounts a devpts instance of the command's own here and adds the profile's rule to it
/// (`run::namespaces::own_devpts`): `/dev/ptmx` opens that instance, so a pty the command
/// makes (`script`, `ssh -t`) is its own and works. Without the namespaces (the seccomp
/// fallback) the rule is left out: opening `/dev/ptmx` then makes a host pty whose slave
/// cannot be opened. bwrap mounts a private devpts, where the profile's rule stays (granted
/// by its inner stage).
pub const HOST_PTYS: &str = "/dev/pts";

/// Is this the system rule for [`HOST_PTYS`], which [`prepare`] leaves out?
pub fn is_host_ptys_rule(rule: &crate::profile::PathRule) -> bool {
    rule.path == std::path::Path::new(HOST_PTYS) && rule.origin.starts_with("sandbox.system_read")
}

/// The profile's rules as the Landlock backend applies them on the host's own filesystem
/// view: without the system rule for [`HOST_PTYS`]. A rule that would reach the host's
/// terminals anyway (one for `/`, `/dev`, or an entry of `/dev/pts`) is refused. (Under
/// bwrap, `/dev` is bwrap's own: such rules reach only its private devpts.)
pub fn host_rules(profile: &Profile) -> Result<Vec<&crate::profile::PathRule>, Error> {
    let ptys = std::path::Path::new(HOST_PTYS);
    let mut out = Vec::with_capacity(profile.rules.len());
    for rule in &profile.rules {
        if is_host_ptys_rule(rule) {
            continue;
        }
        // Where /dev/ptmx is a link to pts/ptmx (a /dev made by bubblewrap, as in an agent
        // host's sandbox), the system rule for it names the multiplexer itself: opening it
        // makes a new pty and reaches no other session's terminal.
        if rule.path == std::path::Path::new(HOST_PTYS).join("ptmx")
            && rule.origin.starts_with("sandbox.system_read")
        {
            out.push(rule);
            continue;
        }
        if rule.path.starts_with(ptys) || ptys.starts_with(&rule.path) {
            return Err(Error::Landlock(format!(
                "{} ({}) would grant the host's terminals in {HOST_PTYS} (other sessions' input and output), which the Landlock backend cannot exclude from a rule; narrow it, or use --backend bwrap, which has a private /dev/pts",
                rule.path.display(),
                rule.origin
            )));
        }
        out.push(rule);
    }
    Ok(out)
}

/// A ruleset ready to be applied in a child.
#[derive(Debug)]
pub struct Prepared {
    pub fd: OwnedFd,
}

/// Builds the ruleset for `profile` on a kernel with `abi`: every access right that ABI
/// knows is handled, so whatever is not granted is denied.
pub fn prepare(profile: &Profile, abi: i32) -> Result<Prepared, Error> {
    let writable = crate::resolve::writable_roots(profile);
    let rules: Vec<&PathRule> = profile
        .rules
        .iter()
        .filter(|r| !is_host_ptys_rule(r))
        .collect();
    build_from(
        &[],
        &rules,
        &writable,
        profile.network,
        &profile.forwards,
        abi,
    )
}

/// A rule's path opened once, when its sandbox was prepared, with the identity it had then.
#[derive(Debug)]
struct HeldRule {
    rule: PathRule,
    /// `None`: it could not be opened then; each run opens it (and fails as a run did).
    opened: Option<HeldFd>,
}

/// A held rule's descriptor, the identity of what it opened, and whether that is a directory
/// (so that no run asks the kernel again).
#[derive(Debug)]
struct HeldFd {
    fd: OwnedFd,
    id: Identity,
    dir: bool,
}

/// A file's identity: device and inode.
type Identity = (u64, u64);

fn identity(st: &rustix::fs::Stat) -> Identity {
    (st.st_dev, st.st_ino)
}

/// The rules of a profile opened once, for the many rulesets of a long-lived sandbox
/// ([`prepare_held`]): each run then makes one `lstat` per rule instead of opening it
/// again, and opens afresh (through the walk that refuses planted links) every rule whose
/// path no longer names the file opened here — a system file replaced by a rename, a root
/// deleted and made again, a link planted since. A rule never grants a file its path no
/// longer names.
#[derive(Debug)]
pub struct Held {
    /// In the order of the profile's rules (sorted).
    rules: Vec<HeldRule>,
}

/// Opens the rules of `profile` (the Landlock backend's host rules, without a run's private
/// TMPDIR) for [`prepare_held`]. A rule outside every writable root takes the descriptor the
/// profile was made with (`opened`, see [`crate::profile::Opened`]): that open followed links
/// as the kernel does, which is how such a rule is opened anyway, and its canonical name is
/// the rule's path. A rule inside a writable root is always opened by the walk that refuses
/// a link there.
pub(crate) fn hold(profile: &Profile, opened: &mut crate::profile::Opened) -> Held {
    let writable = crate::resolve::writable_roots(profile);
    let mut rules: Vec<HeldRule> = profile
        .rules
        .iter()
        .filter(|r| !is_host_ptys_rule(r))
        .map(|rule| {
            let outside = !writable.iter().any(|w| rule.path.starts_with(w));
            // The same path may be two rules (two origins): the second opens its own.
            let fd = match opened.remove(&rule.path).filter(|_| outside) {
                Some(fd) => Ok(fd),
                None => crate::resolve::open_for_rule(&rule.path, &writable),
            };
            HeldRule {
                rule: rule.clone(),
                opened: fd.ok().and_then(|fd| {
                    let st = rustix::fs::fstat(&fd).ok()?;
                    Some(HeldFd {
                        id: identity(&st),
                        dir: rustix::fs::FileType::from_raw_mode(st.st_mode)
                            == rustix::fs::FileType::Directory,
                        fd,
                    })
                }),
            }
        })
        .collect();
    rules.sort_by(|a, b| a.rule.cmp(&b.rule));
    Held { rules }
}

/// The ruleset [`prepare`] builds for `profile` (a run's: with its private TMPDIR), taking
/// the descriptor of each rule `held` opened that still names the same file, and opening the
/// others now.
pub fn prepare_held(held: &Held, profile: &Profile, abi: i32) -> Result<Prepared, Error> {
    let writable = crate::resolve::writable_roots(profile);
    let mut opened = Vec::with_capacity(held.rules.len());
    let mut fresh = Vec::new();
    for rule in profile.rules.iter().filter(|r| !is_host_ptys_rule(r)) {
        let same = held
            .rules
            .binary_search_by(|h| h.rule.cmp(rule))
            .ok()
            .and_then(|i| held.rules[i].opened.as_ref())
            .filter(|h| rustix::fs::lstat(&rule.path).is_ok_and(|st| identity(&st) == h.id));
        match same {
            // The same file as when prepared: its descriptor, no new walk.
            Some(h) => opened.push((rule, &h.fd, h.dir)),
            None => fresh.push(rule),
        }
    }
    build_from(
        &opened,
        &fresh,
        &writable,
        profile.network,
        &profile.forwards,
        abi,
    )
}

/// Builds a ruleset from `held` (rules with their descriptor) and `fresh` (rules opened now,
/// by the walk that refuses a symlink inside a writable root).
fn build_from(
    held: &[(&PathRule, &OwnedFd, bool)],
    fresh: &[&PathRule],
    writable: &[PathBuf],
    network: Network,
    forwards: &[u16],
    abi: i32,
) -> Result<Prepared, Error> {
    let lerr = |what: &str, e: &dyn std::fmt::Display| Error::Landlock(format!("{what}: {e}"));
    let level = ABI::from(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(level))
        .map_err(|e| lerr("handling filesystem rights", &e))?;
    if network != Network::Allow && abi >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(level))
            .map_err(|e| lerr("handling network rights", &e))?;
    }
    if abi >= 6 {
        ruleset = ruleset
            .scope(Scope::from_all(level))
            .map_err(|e| lerr("scoping signals and abstract sockets", &e))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|e| lerr("creating the ruleset", &e))?;
    for (rule, fd, is_dir) in held {
        let rights = fs_rights(rule.access, *is_dir, level);
        created = created
            .add_rule(PathBeneath::new(*fd, rights))
            .map_err(|e| lerr(&format!("adding {}", rule.path.display()), &e))?;
    }
    // A rule inside a writable root is opened by the walk that refuses a symlink there (a
    // run could have planted it since the profile was made), and the rule gets that very
    // descriptor: nothing re-resolves the path.
    for rule in fresh {
        let fd = crate::resolve::open_for_rule(&rule.path, writable)
            .map_err(|e| lerr(&format!("opening {}", rule.path.display()), &e))?;
        // The type from the open descriptor: no second walk of the path.
        let is_dir = crate::resolve::is_dir(&fd);
        let rights = fs_rights(rule.access, is_dir, level);
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| lerr(&format!("adding {}", rule.path.display()), &e))?;
    }
    // sandbox.network = "proxy": TCP connect to the proxy's port only, bind nowhere (the
    // listener there is made before the ruleset applies, by cordon's own code).
    if network == Network::Proxy && abi >= 4 {
        created = created
            .add_rule(NetPort::new(crate::PROXY_PORT, AccessNet::ConnectTcp))
            .map_err(|e| lerr("allowing connect to the proxy's port", &e))?;
        // [network.forward]: the loopback ports cordon serves besides the proxy's.
        for &port in forwards {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(|e| lerr("allowing connect to a forwarded port", &e))?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| Error::Landlock("the kernel returned no ruleset".into()))?;
    Ok(Prepared { fd })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Access as A;

    #[test]
    fn writable_roots_never_get_device_creation() {
        let r = fs_rights(
            A {
                write: true,
                exec: true,
                device: false,
            },
            true,
            ABI::V7,
        );
        assert!(r.contains(
            AccessFs::MakeReg | AccessFs::RemoveFile | AccessFs::Truncate | AccessFs::Execute
        ));
        assert!(!r.contains(AccessFs::MakeChar));
        assert!(!r.contains(AccessFs::MakeBlock));
        assert!(!r.contains(AccessFs::IoctlDev));
    }

    #[test]
    fn files_get_only_file_rights() {
        let r = fs_rights(A::DEVICE, false, ABI::V7);
        assert_eq!(
            r,
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
        );
        let r = fs_rights(A::READ, false, ABI::V7);
        assert_eq!(r, BitFlags::from(AccessFs::ReadFile));
    }

    #[test]
    fn older_abis_report_their_gaps() {
        assert_eq!(enforcement(0, Network::Deny), Enforcement::None);
        assert_eq!(enforcement(6, Network::Deny), Enforcement::Full);
        assert_eq!(enforcement(7, Network::Allow), Enforcement::Full);
        match enforcement(4, Network::Deny) {
            Enforcement::Partial(g) => assert_eq!(g.len(), 3),
            other => panic!("{other:?}"),
        }
        match enforcement(2, Network::Deny) {
            Enforcement::Partial(g) => assert!(g.iter().any(|g| g.what.contains("truncat"))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_hosts_terminals_are_never_granted() {
        use crate::profile::PathRule;
        let rule = |path: &str, origin: &str| PathRule {
            path: path.into(),
            access: A::DEVICE,
            origin: origin.into(),
        };
        let mut p = Profile {
            rules: vec![
                rule("/dev/null", "sandbox.system_read (devices)"),
                rule("/dev/ptmx", "sandbox.system_read (devices)"),
                rule("/dev/pts", "sandbox.system_read (devices)"),
            ],
            protected: vec![],
            network: Network::Deny,
            limits: Default::default(),
            forwards: Vec::new(),
        };
        let kept: Vec<_> = host_rules(&p)
            .unwrap()
            .iter()
            .map(|r| r.path.clone())
            .collect();
        assert_eq!(
            kept,
            ["/dev/null", "/dev/ptmx"].map(std::path::PathBuf::from)
        );
        for (path, origin) in [
            ("/", "sandbox.extra_read"),
            ("/dev", "sandbox.paths.dev (ro)"),
            ("/dev/pts/3", "sandbox.extra_read"),
            ("/dev/pts", "sandbox.extra_read"),
        ] {
            p.rules.push(rule(path, origin));
            let e = host_rules(&p).unwrap_err().to_string();
            assert!(e.contains(path) && e.contains("bwrap"), "{e}");
            p.rules.pop();
        }
    }

    #[test]
    fn this_kernel_has_landlock() {
        // The development and CI machines run Linux with Landlock enabled; if this fails the
        // escape suite cannot prove anything either.
        assert!(
            kernel_abi() >= 1,
            "Landlock is not available on this kernel"
        );
    }
}
