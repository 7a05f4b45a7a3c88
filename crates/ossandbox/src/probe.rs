//! Live probes: what this machine can enforce, proved by doing it in a throw-away child,
//! not by reading version strings.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The operating system cordon runs on: which backends exist at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Landlock + seccomp, bubblewrap.
    Linux,
    /// Seatbelt through `/usr/bin/sandbox-exec`.
    MacOs,
}

impl Platform {
    /// The platform this build runs on.
    pub const fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }
}

/// What the running kernel and system offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub platform: Platform,
    /// Landlock ABI the kernel reports (0: none, and always 0 on macOS).
    pub landlock_abi: i32,
    /// The kernel accepts seccomp filters (never on macOS).
    pub seccomp: bool,
    /// cordon runs as root (root owns the system files, so `auto` prefers bwrap).
    pub root: bool,
    /// A bubblewrap binary on the trusted path.
    pub bwrap: Option<PathBuf>,
    /// `/usr/bin/sandbox-exec`, when it exists (macOS).
    pub sandbox_exec: Option<PathBuf>,
    /// The sandbox cordon itself runs inside (an agent host's, a container's), as the kernel
    /// shows it to this process; `None` when nothing binds cordon.
    pub outer: Option<Outer>,
    /// The Landlock backend can make its own mount namespace here, where it keeps protected
    /// paths read-only with mounts: no outer sandbox, and (for a user) no sysctl that turns
    /// unprivileged user namespaces off. A cheap reading (a few /proc files, no clone): a
    /// kernel that refuses at run time anyway refuses the run, never runs it without the
    /// mounts (`cordon doctor` proves it live).
    pub own_namespaces: bool,
}

/// An outer sandbox around cordon: what it already enforces on every process inside it
/// (cordon's command included) and what it refuses cordon. Each fact comes from the kernel
/// (`/proc/self/status`, `/proc/self/uid_map`, a refused `socket()`, `statvfs`), never from
/// an environment variable; only [`Outer::name`] reads one, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outer {
    /// What to call it in messages: "Codex's sandbox" when Codex's marker variable is set
    /// (only a name: every decision rests on the probed facts below).
    pub name: &'static str,
    /// `no_new_privs` is already set on cordon.
    pub no_new_privs: bool,
    /// A seccomp filter already binds cordon (cordon's own filter stacks on it).
    pub seccomp: bool,
    /// cordon runs in a user namespace other than the machine's (its uid_map is not the
    /// identity over every uid): files of unmapped owners show as the overflow uid.
    pub user_namespace: bool,
    /// cordon runs as uid 0 without CAP_SYS_ADMIN (root of a user namespace it does not own,
    /// or with capabilities dropped): no mounts, no namespaces, no mknod, and a nested user
    /// namespace may not map uid 0 again (that needs CAP_SETFCAP), so bubblewrap cannot start.
    pub root_without_capabilities: bool,
    /// `socket(AF_INET)` and `socket(AF_INET6)` are refused to cordon (the outer's seccomp
    /// filter, inherited by every process it starts).
    pub inet_refused: bool,
    /// `socket(AF_NETLINK)` is refused: nobody inside can bring loopback up in a network
    /// namespace of its own (bubblewrap's `--unshare-net` fails).
    pub netlink_refused: bool,
    /// `/etc` and `/usr` lie on read-only mounts: nobody inside, root included, can change
    /// the system's files or their modes, owners and times.
    pub system_read_only: bool,
    /// Another mount covers part of `/proc` (`/proc/sys`, `/proc/sysrq-trigger`, …): the
    /// kernel refuses a fresh /proc in a user namespace there (too revealing), so neither
    /// bubblewrap nor cordon's own namespaces can mount the one they need.
    pub proc_covered: bool,
}

impl Outer {
    /// Probes the outer sandbox around this process; `None` when there is none (no
    /// `no_new_privs`, no seccomp filter, the machine's own user namespace).
    #[cfg(target_os = "linux")]
    pub fn probe() -> Option<Outer> {
        Outer::from_facts(
            &std::fs::read_to_string("/proc/self/status").unwrap_or_default(),
            &std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default(),
            &|| std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
            std::env::var_os("CODEX_SANDBOX_NETWORK_DISABLED").is_some()
                || std::env::var_os("CODEX_SANDBOX").is_some(),
            &|family| socket_refused(family),
            &|path| read_only_mount(path),
        )
    }

    /// [`Outer::probe`] from the facts it reads, so each can be tested alone: the text of
    /// `/proc/self/status` and `/proc/self/uid_map`, `/proc/self/mountinfo`'s, whether
    /// Codex's marker is set, and the socket and mount probes (the last four called only
    /// inside an outer sandbox).
    pub fn from_facts(
        status: &str,
        uid_map: &str,
        mountinfo: &dyn Fn() -> String,
        codex: bool,
        refused: &dyn Fn(i32) -> bool,
        read_only: &dyn Fn(&Path) -> bool,
    ) -> Option<Outer> {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let no_new_privs = field("NoNewPrivs") == Some("1");
        let seccomp = field("Seccomp") == Some("2");
        // The machine's own namespace maps every uid to itself: "0 0 4294967295". An
        // unreadable map counts as a namespace (the safe reading: more is refused).
        let words: Vec<&str> = uid_map.split_whitespace().collect();
        let user_namespace = words != ["0", "0", "4294967295"];
        if !no_new_privs && !seccomp && !user_namespace {
            return None;
        }
        const CAP_SYS_ADMIN: u32 = 21;
        let euid_zero = field("Uid")
            .and_then(|u| u.split_whitespace().nth(1))
            .is_some_and(|u| u == "0");
        let cap_eff = field("CapEff")
            .and_then(|c| u64::from_str_radix(c, 16).ok())
            .unwrap_or(0);
        let (inet, inet6, netlink) = (libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK);
        Some(Outer {
            name: if codex {
                "Codex's sandbox"
            } else {
                "an outer sandbox"
            },
            no_new_privs,
            seccomp,
            user_namespace,
            root_without_capabilities: euid_zero && cap_eff & (1 << CAP_SYS_ADMIN) == 0,
            inet_refused: refused(inet) && refused(inet6),
            netlink_refused: refused(netlink),
            system_read_only: read_only(Path::new("/etc")) && read_only(Path::new("/usr")),
            // The mount point is mountinfo's fifth field.
            proc_covered: mountinfo()
                .lines()
                .any(|l| l.split(' ').nth(4).is_some_and(|m| m.starts_with("/proc/"))),
        })
    }

    /// Why bubblewrap cannot start here (for `root`, the caller being uid 0), naming the
    /// outer sandbox; `None` when it can.
    pub fn bwrap_blocker(&self, root: bool) -> Option<String> {
        if self.root_without_capabilities {
            Some(format!(
                "cordon runs as root without capabilities inside {} (a nested user namespace may not map root again, and no mount namespace can be made)",
                self.name
            ))
        } else if self.proc_covered && (self.user_namespace || !root) {
            Some(format!(
                "part of /proc inside {} is covered by another mount, so the kernel refuses a fresh /proc in a user namespace (too revealing)",
                self.name
            ))
        } else {
            None
        }
    }

    /// The facts, one line, as the audit and `cordon doctor` show them.
    pub fn describe(&self) -> String {
        let yes = |b: bool, s: &str| if b { Some(s.to_string()) } else { None };
        let facts: Vec<String> = [
            yes(self.no_new_privs, "no_new_privs"),
            yes(self.seccomp, "a seccomp filter"),
            yes(self.user_namespace, "a user namespace"),
            yes(self.root_without_capabilities, "root without capabilities"),
            yes(self.inet_refused, "inet sockets refused"),
            yes(self.netlink_refused, "netlink sockets refused"),
            yes(self.system_read_only, "/etc and /usr read-only"),
            yes(self.proc_covered, "part of /proc covered"),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!("{}: {}", self.name, facts.join(", "))
    }
}

/// Whether this process is refused a socket of `family` (EPERM or EACCES: a seccomp filter or
/// an LSM), proved by asking for one and closing it.
#[cfg(target_os = "linux")]
fn socket_refused(family: i32) -> bool {
    use rustix::net::{socket, AddressFamily, SocketType};
    let Ok(family) = u16::try_from(family) else {
        return false;
    };
    // The descriptor, if granted, is dropped (closed) at once.
    matches!(
        socket(AddressFamily::from_raw(family), SocketType::DGRAM, None),
        Err(rustix::io::Errno::PERM | rustix::io::Errno::ACCESS)
    )
}

/// Whether `path` lies on a read-only mount (`statvfs` reports `ST_RDONLY`).
#[cfg(target_os = "linux")]
pub(crate) fn read_only_mount(path: &Path) -> bool {
    rustix::fs::statvfs(path)
        .is_ok_and(|s| s.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
}

/// Where bwrap is looked for: system locations only, never the caller's PATH.
pub const TRUSTED_BWRAP: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

impl Machine {
    /// The cheap facts every `cordon exec` needs (two syscalls on Linux, one stat on macOS).
    pub fn probe() -> Machine {
        #[cfg(target_os = "linux")]
        let (landlock_abi, seccomp) = (
            crate::landlock::kernel_abi(),
            crate::seccomp::kernel_supports_filters(),
        );
        #[cfg(not(target_os = "linux"))]
        let (landlock_abi, seccomp) = (0, false);
        let platform = Platform::current();
        Machine {
            platform,
            landlock_abi,
            seccomp,
            // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
            root: unsafe { libc::geteuid() } == 0,
            bwrap: match platform {
                Platform::Linux => TRUSTED_BWRAP
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file()),
                Platform::MacOs => None,
            },
            sandbox_exec: match platform {
                Platform::MacOs => {
                    Some(PathBuf::from(crate::seatbelt::SANDBOX_EXEC)).filter(|p| p.is_file())
                }
                Platform::Linux => None,
            },
            #[cfg(target_os = "linux")]
            outer: Outer::probe(),
            #[cfg(not(target_os = "linux"))]
            outer: None,
            own_namespaces: false,
        }
        .with_own_namespaces()
    }

    /// Sets [`Machine::own_namespaces`] from the outer sandbox found and the sysctls that
    /// refuse unprivileged user namespaces (Debian's `unprivileged_userns_clone`, Ubuntu's
    /// AppArmor restriction, a limit of 0 user or mount namespaces).
    fn with_own_namespaces(mut self) -> Machine {
        let sysctl = |name: &str| {
            std::fs::read_to_string(Path::new("/proc/sys").join(name))
                .ok()
                .map(|v| v.trim().to_string())
        };
        let refused = |name: &str, off: &str| sysctl(name).is_some_and(|v| v == off);
        self.own_namespaces = self.platform == Platform::Linux
            && self.outer.is_none()
            && !refused("user/max_mnt_namespaces", "0")
            && (self.root
                || !(refused("user/max_user_namespaces", "0")
                    || refused("kernel/unprivileged_userns_clone", "0")
                    || refused("kernel/apparmor_restrict_unprivileged_userns", "1")));
        self
    }

    /// bubblewrap is installed and can start here (see [`Outer::bwrap_blocker`]).
    pub fn bwrap_usable(&self) -> Option<&PathBuf> {
        self.bwrap.as_ref().filter(|_| {
            self.outer
                .as_ref()
                .is_none_or(|o| o.bwrap_blocker(self.root).is_none())
        })
    }
}

impl Machine {
    /// The live probes `cordon doctor` shows, each proved by doing it in a throw-away child
    /// (slow: processes and namespaces; never on a run's path). On Linux, in this order:
    /// landlock, seccomp, user namespaces, bwrap, own namespaces, proxy netns, outer sandbox.
    pub fn live_probes() -> Vec<Finding> {
        #[cfg(target_os = "linux")]
        {
            vec![
                landlock_enforces(),
                seccomp_enforces(),
                user_namespaces(),
                bwrap_runs(),
                own_namespaces(),
                proxy_namespace(),
                outer_sandbox(),
            ]
        }
        #[cfg(not(target_os = "linux"))]
        {
            vec![sandbox_exec_enforces()]
        }
    }

    /// What Landlock at this machine's ABI cannot restrict, each with the first ABI that can:
    /// `None` without Landlock, empty when it enforces everything the profiles need.
    pub fn landlock_gaps(&self) -> Option<Vec<(&'static str, i32)>> {
        #[cfg(target_os = "linux")]
        {
            use crate::landlock::Enforcement;
            match crate::landlock::enforcement(self.landlock_abi, cordon_policy::Network::Deny) {
                Enforcement::None => None,
                Enforcement::Full => Some(Vec::new()),
                Enforcement::Partial(gaps) => {
                    Some(gaps.iter().map(|g| (g.what, g.needs_abi)).collect())
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}

/// One doctor finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Runs `body` in a forked child and returns its exit code; `None` when the child could not
/// be started or did not exit normally (the caller reports the probe as failed).
///
/// # Safety
/// The process may have other threads (the CLI's, the test harness's): after `fork` the child
/// has only this one, and any lock another thread held (the allocator's, stdio's) stays held
/// forever. `body` must therefore only make async-signal-safe calls — raw system calls, no
/// allocation, no locking, no panicking — and must not touch state other threads could be
/// changing. Its result is passed to `_exit`, so no atexit handler or destructor runs there.
#[cfg(target_os = "linux")]
unsafe fn in_child(body: impl FnOnce() -> i32) -> Option<i32> {
    // SAFETY: fork has no memory preconditions. In the child (pid 0) only `body` runs, under
    // the caller's promise above, then `_exit`, which is async-signal-safe and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return None;
    }
    if pid == 0 {
        // SAFETY: see above: `body` keeps to async-signal-safe calls, `_exit` ends the child.
        unsafe { libc::_exit(body()) };
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is a live local the kernel writes the exit status into; `pid` is
        // our own unreaped child, so the call cannot reap anyone else's.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return None;
    }
    libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status))
}

/// Proves Landlock works: a child restricts itself to nothing and must then fail to open `/`.
#[cfg(target_os = "linux")]
pub fn landlock_enforces() -> Finding {
    let abi = crate::landlock::kernel_abi();
    if abi < 1 {
        return Finding { name: "landlock", ok: false, detail: "landlock_create_ruleset fails: no Landlock in this kernel (not built in, or not in the lsm= boot list)".into() };
    }
    let profile = crate::Profile {
        rules: vec![],
        protected: vec![],
        network: cordon_policy::Network::Deny,
        limits: Default::default(),
        forwards: Vec::new(),
    };
    let prepared = match crate::landlock::prepare(&profile, abi) {
        Ok(p) => p,
        Err(e) => {
            return Finding {
                name: "landlock",
                ok: false,
                detail: format!("ABI {abi}, but building a ruleset failed: {e}"),
            }
        }
    };
    use std::os::fd::AsRawFd;
    let fd = prepared.fd.as_raw_fd();
    // SAFETY: the child only makes raw system calls (prctl, landlock_restrict_self, open)
    // and reads errno: no allocation or lock (`c"/"` is a static C string). `fd` is the
    // ruleset descriptor `prepared` keeps open across the fork. Restricting itself affects
    // the child alone.
    let code = unsafe {
        in_child(|| {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0
            {
                return 2;
            }
            let r = libc::open(c"/".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            if r < 0 && *libc::__errno_location() == libc::EACCES {
                0
            } else {
                1
            }
        })
    };
    match code {
        Some(0) => Finding {
            name: "landlock",
            ok: true,
            detail: format!("ABI {abi}: a restricted child was refused access to /"),
        },
        Some(1) => Finding {
            name: "landlock",
            ok: false,
            detail: format!("ABI {abi} reported, but a restricted child could still open /"),
        },
        _ => Finding {
            name: "landlock",
            ok: false,
            detail: format!("ABI {abi} reported, but landlock_restrict_self failed"),
        },
    }
}

/// Proves seccomp works: a child installs cordon's own filter and `unshare` must fail with EPERM.
#[cfg(target_os = "linux")]
pub fn seccomp_enforces() -> Finding {
    let programs =
        match crate::seccomp::compile(&crate::seccomp::rules(cordon_policy::Network::Deny)) {
            Ok(p) => p,
            Err(e) => {
                return Finding {
                    name: "seccomp",
                    ok: false,
                    detail: format!("compiling the filter failed: {e}"),
                }
            }
        };
    // SAFETY: the child only makes raw system calls (prctl, seccomp, unshare) and reads
    // errno; `seccomp::install` is documented as raw syscalls only, safe after fork, and
    // reads `programs`, compiled before the fork. `install` needs no_new_privs, set (and
    // checked) just before it. The filter binds the child alone.
    let code = unsafe {
        in_child(|| {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || crate::seccomp::install(&programs).is_err()
            {
                return 2;
            }
            let r = libc::unshare(libc::CLONE_NEWUTS);
            if r < 0 && *libc::__errno_location() == libc::EPERM {
                0
            } else {
                1
            }
        })
    };
    match code {
        Some(0) => Finding {
            name: "seccomp",
            ok: true,
            detail: "filter installed; a filtered child was refused unshare() with EPERM".into(),
        },
        Some(1) => Finding {
            name: "seccomp",
            ok: false,
            detail: "filter installed, but unshare() was not refused".into(),
        },
        _ => Finding {
            name: "seccomp",
            ok: false,
            detail: "the kernel refused to install a filter".into(),
        },
    }
}

/// Can an unprivileged child create a user namespace? (What bwrap needs when not setuid.)
#[cfg(target_os = "linux")]
pub fn user_namespaces() -> Finding {
    // SAFETY: the child only makes raw system calls (getuid, setgroups with a null list of
    // length 0, setgid, setuid, unshare); each result is checked, and dropping privileges
    // changes the child alone.
    let code = unsafe {
        in_child(|| {
            // As root, first become an unprivileged user so the probe answers for normal users.
            if libc::getuid() == 0
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0)
            {
                return 2;
            }
            if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                0
            } else {
                1
            }
        })
    };
    match code {
        Some(0) => Finding {
            name: "user namespaces",
            ok: true,
            detail: "an unprivileged child created a user namespace".into(),
        },
        Some(1) => Finding {
            name: "user namespaces",
            ok: false,
            detail:
                "unshare(CLONE_NEWUSER) is refused to unprivileged users (sysctl or LSM policy)"
                    .into(),
        },
        _ => Finding {
            name: "user namespaces",
            ok: false,
            detail: "could not run the probe".into(),
        },
    }
}

/// Can the Landlock backend run commands in namespaces of their own (PID, IPC, mount,
/// network, and a user namespace when not root)? Proved by making them in a child.
#[cfg(target_os = "linux")]
pub fn own_namespaces() -> Finding {
    use crate::run::namespaces::{probe, Probe, TASK_CAP};
    match probe() {
        Probe::Available {
            user, task_cap, ..
        } => Finding {
            name: "namespaces",
            ok: true,
            detail: format!(
                "a child made PID, IPC, mount and network namespaces{} and mounted its own /proc; {}",
                if user { " (in a user namespace)" } else { "" },
                if task_cap {
                    format!("its pid_max caps a run at {TASK_CAP} tasks")
                } else {
                    "this kernel has no per-namespace pid_max (Linux 6.14): tasks are capped only by sandbox.limits.processes".into()
                }
            ),
        },
        Probe::Unavailable(why) => Finding {
            name: "namespaces",
            ok: false,
            detail: format!("{why}; what landlock runs do then: see the backends below"),
        },
    }
}

/// Can `sandbox.network = "proxy"` be enforced here: a network namespace of the command's
/// own (with a user namespace unless root), loopback up in it, and the proxy's listener made
/// there? Proved in a child, as the Landlock backend's init does it (bwrap brings loopback up
/// itself and its inner stage makes the same listener).
#[cfg(target_os = "linux")]
pub fn proxy_namespace() -> Finding {
    use crate::run::namespaces::{probe, Probe};
    match probe() {
        Probe::Available { proxy: None, user, .. } => Finding {
            name: "proxy netns",
            ok: true,
            detail: format!(
                "a child made a network namespace{}, brought loopback up and listened on port {} there",
                if user { " (in a user namespace)" } else { "" },
                crate::PROXY_PORT
            ),
        },
        Probe::Available {
            proxy: Some(step), ..
        } => Finding {
            name: "proxy netns",
            ok: false,
            detail: format!("the network namespace was made, but {step} failed; sandbox.network = \"proxy\" is refused (exit 125)"),
        },
        Probe::Unavailable(why) => Finding {
            name: "proxy netns",
            ok: false,
            detail: format!("{why}; sandbox.network = \"proxy\" is refused (exit 125) rather than run with a proxy the command could go around"),
        },
    }
}

/// The sandbox cordon itself runs inside, if any ([`Outer`]): not a failure, but what the
/// plan works around (bwrap in the outer's network namespace, Landlock alone as root without
/// capabilities) or refuses, each run naming it.
#[cfg(target_os = "linux")]
pub fn outer_sandbox() -> Finding {
    Finding {
        name: "outer sandbox",
        ok: true,
        detail: match Outer::probe() {
            None => "none: cordon runs on the machine itself".into(),
            Some(o) => format!(
                "{}{}",
                o.describe(),
                if o.bwrap_blocker(rustix::process::geteuid().is_root())
                    .is_some()
                {
                    "; bubblewrap cannot start here: Landlock + seccomp only, and protected paths on its writable mounts are refused"
                } else if o.netlink_refused {
                    "; bwrap stays in its network namespace when it also refuses inet sockets, sandbox.network = \"proxy\" is refused"
                } else {
                    ""
                }
            ),
        },
    }
}

/// Is bwrap installed where we trust it, and does it actually start a sandbox?
#[cfg(target_os = "linux")]
pub fn bwrap_runs() -> Finding {
    let Some(bwrap) = TRUSTED_BWRAP.iter().map(Path::new).find(|p| p.is_file()) else {
        return Finding {
            name: "bwrap",
            ok: false,
            detail: format!(
                "not found in {} (Debian package `bubblewrap`)",
                TRUSTED_BWRAP.join(", ")
            ),
        };
    };
    let fail = |detail: String| Finding {
        name: "bwrap",
        ok: false,
        detail,
    };
    let base = [
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--",
    ];
    let quiet = |cmd: &mut Command| {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
    };
    match quiet(Command::new(bwrap).args(base).arg("/bin/true")) {
        Ok(s) if s.success() => {}
        Ok(s) => {
            return fail(format!(
                "{} is installed but failed to start a sandbox ({s})",
                bwrap.display()
            ))
        }
        Err(e) => return fail(format!("{} could not be run: {e}", bwrap.display())),
    }
    // The backend's inner stage must start inside, from its memfd, and apply Landlock there.
    let abi = crate::landlock::kernel_abi();
    if abi < 1 {
        return Finding {
            name: "bwrap",
            ok: true,
            detail: format!(
                "{} started a sandbox with all namespaces unshared (no Landlock to apply inside)",
                bwrap.display()
            ),
        };
    }
    let inner = (|| {
        let profile = crate::profile::Profile {
            rules: vec![crate::profile::PathRule {
                path: "/".into(),
                access: crate::profile::Access::READ_EXEC,
                origin: "probe".into(),
            }],
            protected: vec![],
            network: cordon_policy::Network::Deny,
            limits: Default::default(),
            forwards: Vec::new(),
        };
        let ruleset = crate::landlock::prepare(&profile, abi)?.fd;
        let program = crate::bwrap::inner_stage()?;
        Ok::<_, crate::Error>((ruleset, program))
    })();
    let (ruleset, program) = match inner {
        Ok(fds) => fds,
        Err(e) => return fail(format!("cannot prepare the inner stage: {e}")),
    };
    use std::os::fd::AsRawFd;
    let mut args: Vec<std::ffi::OsString> = base.iter().map(Into::into).collect();
    args.push(format!("/proc/self/fd/{}", program.as_raw_fd()).into());
    args.extend(crate::bwrap::inner_args(
        ruleset.as_raw_fd(),
        &[],
        abi,
        Path::new("/"),
        ["/bin/true".into()],
    ));
    // Passed on the way `cordon exec` passes them (its inner stage's message, if any, shows).
    let c = crate::run::Confinement {
        pass_fds: vec![ruleset, program],
        ..Default::default()
    };
    let spec = crate::run::Spec {
        program: bwrap.into(),
        args,
        cwd: "/".into(),
        env: vec![],
        timeout: Some(std::time::Duration::from_secs(30)),
        stdio: Default::default(),
        cancel: None,
        proxy: None,
        release: None,
    };
    match crate::run::run(c, &spec) {
        Ok(crate::run::Outcome::Exited(0)) => Finding {
            name: "bwrap",
            ok: true,
            detail: format!(
                "{} started a sandbox with all namespaces unshared, and cordon's inner stage applied Landlock in it",
                bwrap.display()
            ),
        },
        Ok(o) => fail(format!(
            "{} starts a sandbox, but cordon's inner stage failed in it ({o:?}): is vm.memfd_noexec = 2?",
            bwrap.display()
        )),
        Err(e) => fail(format!("{} could not be run: {e}", bwrap.display())),
    }
}

/// Proves `/usr/bin/sandbox-exec` confines: it runs a program under a profile that allows
/// everything, and fails to run the same program under one that denies executing it.
#[cfg_attr(target_os = "linux", allow(dead_code))] // macOS's one probe
pub fn sandbox_exec_enforces() -> Finding {
    let name = "sandbox-exec";
    let path = Path::new(crate::seatbelt::SANDBOX_EXEC);
    if !path.is_file() {
        return Finding {
            name,
            ok: false,
            detail: format!("{} not found (part of macOS)", path.display()),
        };
    }
    let run = |profile: &str| {
        Command::new(path)
            .args(["-p", profile, "--", "/usr/bin/true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
    };
    match (
        run("(version 1)(allow default)"),
        run("(version 1)(allow default)(deny process-exec (literal \"/usr/bin/true\"))"),
    ) {
        (Ok(allowed), Ok(denied)) if allowed.success() && !denied.success() => Finding {
            name,
            ok: true,
            detail: format!(
                "{} ran /usr/bin/true under (allow default) and refused it under a profile denying its exec",
                path.display()
            ),
        },
        (Ok(allowed), Ok(_)) if !allowed.success() => Finding {
            name,
            ok: false,
            detail: format!(
                "{} could not run /usr/bin/true even under (allow default) ({allowed})",
                path.display()
            ),
        },
        (Ok(_), Ok(_)) => Finding {
            name,
            ok: false,
            detail: format!(
                "{} ran /usr/bin/true although the profile denied executing it",
                path.display()
            ),
        },
        (Err(e), _) | (_, Err(e)) => Finding {
            name,
            ok: false,
            detail: format!("{} could not be run: {e}", path.display()),
        },
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn landlock_and_seccomp_probes_pass_on_this_machine() {
        let l = landlock_enforces();
        assert!(l.ok, "{l:?}");
        let s = seccomp_enforces();
        assert!(s.ok, "{s:?}");
    }

    /// The cheap reading `auto` goes by agrees with the live probe on this machine (the
    /// development and CI machines make the namespaces, outside any outer sandbox).
    #[cfg(target_os = "linux")]
    #[test]
    fn own_namespaces_agrees_with_the_live_probe() {
        use crate::run::namespaces::{probe, Probe};
        let m = Machine::probe();
        let live = matches!(probe(), Probe::Available { .. });
        assert!(live, "{:?}", probe());
        assert_eq!(m.own_namespaces, m.outer.is_none(), "{m:?}");
    }

    #[test]
    fn there_is_no_sandbox_exec_on_linux() {
        let f = sandbox_exec_enforces();
        assert!(
            !f.ok && f.detail.contains("/usr/bin/sandbox-exec not found"),
            "{f:?}"
        );
        assert_eq!(Machine::probe().sandbox_exec, None);
        assert_eq!(Machine::probe().platform, Platform::Linux);
    }

    /// /proc/self/status and uid_map as Codex 0.171's `workspace-write` sandbox shows them.
    const CODEX_STATUS: &str = "Name:\tsh\nUid:\t0\t0\t0\t0\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";

    #[test]
    fn outer_sandbox_facts() {
        let never = |_: i32| false;
        let rw = |_: &Path| false;
        // The machine itself: no outer sandbox, and no socket or mount probe made.
        let host = "Uid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\nNoNewPrivs:\t0\nSeccomp:\t0\n";
        let boom = |_: i32| -> bool { panic!("probed outside a sandbox") };
        assert_eq!(
            Outer::from_facts(
                host,
                "         0          0 4294967295\n",
                &|| panic!("read mountinfo outside a sandbox"),
                false,
                &boom,
                &rw
            ),
            None
        );
        // Codex's sandbox, as root: every fact, and its name from the marker.
        let refused = |f: i32| [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK].contains(&f);
        let ro = |_: &Path| true;
        let codex_mounts = || {
            "69 45 254:0 / / ro - ext4 /dev/vda rw\n71 69 0:21 / /proc ro - proc proc rw\n"
                .to_string()
        };
        let o =
            Outer::from_facts(CODEX_STATUS, "0 0 1\n", &codex_mounts, true, &refused, &ro).unwrap();
        assert_eq!(
            o,
            Outer {
                name: "Codex's sandbox",
                no_new_privs: true,
                seccomp: true,
                user_namespace: true,
                root_without_capabilities: true,
                inet_refused: true,
                netlink_refused: true,
                system_read_only: true,
                proc_covered: false,
            }
        );
        assert!(o
            .bwrap_blocker(true)
            .unwrap()
            .contains("root without capabilities"));
        assert!(o
            .describe()
            .starts_with("Codex's sandbox: no_new_privs, a seccomp filter"));
        // A user in a rootless container with capabilities in its namespace: only that.
        let user = "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\n";
        let o = Outer::from_facts(user, "1000 1000 1\n", &String::new, false, &never, &rw).unwrap();
        assert_eq!(o.name, "an outer sandbox");
        assert!(o.user_namespace && !o.root_without_capabilities && !o.inet_refused);
        assert_eq!(o.bwrap_blocker(false), None);
        // A mount over /proc/sys (a rootful bwrap's, a container's): no fresh /proc in a user
        // namespace, so bwrap cannot start.
        let covered = || {
            "71 69 0:21 / /proc rw - proc proc rw\n80 71 0:21 /sys /proc/sys ro - proc proc rw\n"
                .to_string()
        };
        let o = Outer::from_facts(user, "1000 1000 1\n", &covered, false, &never, &rw).unwrap();
        assert!(o.proc_covered);
        assert!(o.bwrap_blocker(false).unwrap().contains("part of /proc"));
        // An unreadable uid_map counts as a namespace.
        assert!(Outer::from_facts(host, "", &String::new, false, &never, &rw).is_some());
    }
}
