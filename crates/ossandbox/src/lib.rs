//! cordon's OS sandbox: the last line of defence.
//!
//! The model is one-way, and the crate has one door: [`prepare`] turns a
//! [`Policy`](cordon_policy::Policy) into a typed [`Profile`] (read-only roots, read-write
//! roots, executable roots, devices, network, protected paths, limits) and picks a backend that
//! can enforce it on this [`Machine`] (or refuses); the [`Prepared`] sandbox then runs commands,
//! as many as its front end likes ([`Prepared::run`]). Each run makes its private TMPDIR,
//! checks once that no name the policy uses was re-pointed by a link an earlier run planted,
//! scrubs the environment, hands the proxy its listener, turns the profile into kernel objects
//! in the parent (a Landlock ruleset, seccomp BPF, bwrap's mounts), applies them to the child
//! between fork and exec with nothing but raw syscalls, and scans the writable roots after the
//! command for what it left that the operator's tools would run. [`Ran`] says how the command
//! ended, what the kernel enforced ([`Enforcement`]) and what the scan moved aside. There are no
//! prompts here; this layer only blocks. [`Prepared::render`] shows the profile as an auditor
//! reads it, or as each backend's artifact (`cordon profile`). A front end that runs many
//! commands (`cordon mcp`) calls [`Prepared::reuse_sandbox`]: bwrap's sandbox is then started
//! once and each run forked inside it ([`Ran::path`] says which way a run went).
//!
//! A backend never claims protection it cannot enforce: [`prepare`] refuses (the CLI exits
//! 125) when the kernel lacks what the policy needs and `require_os_sandbox` is set. Landlock
//! rules cannot keep a subpath of a writable root read-only: the Landlock backend keeps
//! protected paths with mounts its init makes in the command's own mount namespace
//! ([`protect`], the plan the bwrap backend renders as options), and refuses them where that
//! namespace cannot be made.
//!
//! On macOS the backend is Seatbelt: the profile becomes a `/usr/bin/sandbox-exec -p TEXT
//! -DNAME=VALUE… -- PROG ARGS…` command (a plain function, tested on Linux), and a small
//! macOS-only runner starts and supervises it. That runner is type-checked for macOS
//! (`scripts/check-macos.sh`) but has not been run by cordon's tests, which run on Linux.
//!
//! ```no_run
//! use cordon_ossandbox::{prepare, Command, Io, Machine};
//! use cordon_policy::{Backend, Policy};
//!
//! let cwd = std::env::current_dir().unwrap();
//! let policy = Policy::discover(None, &cwd).unwrap();
//! let sandbox = prepare(&policy, &Machine::probe(), Backend::Auto)
//!     .expect("this machine can enforce the policy");
//! for _ in 0..2 {
//!     let command = Command { program: "ls".into(), args: vec![], cwd: cwd.clone(), timeout: None };
//!     let ran = sandbox.run(command, Io::default()).unwrap();
//!     println!("{} ({})", ran.exit.unwrap().exit_code(), ran.enforcement);
//! }
//! ```
//!
//! ## Errors
//!
//! Choosing, checking, building and starting a sandbox fail with the one [`Error`];
//! [`Error::kind`] says what a failure means, and [`ErrorKind::exit_code`] the status the CLI
//! exits with: [`ErrorKind::NotFound`] (the command does not exist) 127,
//! [`ErrorKind::NotExecutable`] (it exists but will not run) 126, [`ErrorKind::Refused`] (the
//! policy cannot be enforced safely here: no backend, a dangerous root, a planted link, a path
//! an artifact cannot carry) and [`ErrorKind::Failed`] (cordon's own setup failed, in the
//! parent or in the child before exec) 125. Each message is one line saying what and why.
//! Internal helpers that only do I/O (the after-run scan, the stdio relay, the proxy's
//! hand-off) return [`std::io::Error`], and the code between fork and exec reports a raw errno
//! and its step's index through a pipe (it may not allocate); the caller turns both into an
//! [`Error`].

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("cordon's OS sandbox exists for Linux (Landlock, seccomp, bubblewrap) and macOS (Seatbelt) only");

// Every module is private: the crate is used through the facade (`prepare`, `Prepared`).
#[cfg(target_os = "linux")]
mod bwrap;
mod env;
mod handoff;
#[cfg(target_os = "linux")]
mod landlock;
mod locale;
mod network;
mod planted;
mod probe;
mod profile;
#[cfg(target_os = "linux")]
mod protect;
mod proxy;
mod render;
#[cfg(target_os = "linux")]
mod resolve;
mod roots;
mod run;
mod sandbox;
mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod stdio;
#[cfg(target_os = "linux")]
mod termout;
mod tmp;

#[cfg(all(test, target_os = "linux"))]
mod tests_internal;

use cordon_policy::Backend;

pub use env::is_proxy_variable;
pub use locale::locale_is_utf8;
pub use network::{
    isolation as network_isolation, Isolation as NetworkIsolation,
    FILTERS_MIN_ABI as NETWORK_FILTERS_MIN_ABI,
};
pub use planted::{
    scan_changed_since, Began, Change, Finding, Handling, Journal, Kept, Listings, MissingPlace,
    Watch, What as FindingKind, MAX_ENTRIES as SCAN_MAX_ENTRIES,
};
pub use probe::{Finding as ProbeResult, Machine, Outer, Platform};
pub use profile::{Access, PathRule, Profile, Protected, PROXY_PORT, PTY_MAX};
pub use render::Format;
#[cfg(target_os = "linux")]
pub use run::{block_forwarded_signals, SignalMask};
pub use run::{Cancel, ChildStdio, Outcome, ProxyHandoff, Release};
pub use sandbox::{
    describe, inherited_names, prepare, Base, Command, Enforcement, Io, Keep, Prepared, Ran,
    RunFile, RunPath,
};
#[cfg(target_os = "linux")]
pub use stdio::{Lent, TerminalSwitch};

/// Every failure of this crate: a refusal, a command that cannot start, or cordon's own
/// setup failing (see the crate docs, "Errors"). [`Error::kind`] says which, and so the exit
/// code the CLI reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command does not exist (not on `PATH`, or no such file): 127.
    #[error("{0}: command not found")]
    NotFound(String),
    /// The command exists, but the kernel (or the sandbox) will not execute it: 126.
    #[error("{0}: cannot execute: {1}")]
    NotExecutable(String, std::io::Error),
    /// No backend may run this profile here, or something the policy names is not safe to
    /// use now (a dangerous writable root, a planted link, a hard link to a protected file):
    /// 125. The message names what and why.
    #[error("{0}")]
    Refused(String),
    /// A path an artifact cannot carry safely, e.g. a Seatbelt parameter with a `"`: 125.
    #[error("cannot pass {path:?} (from {origin}) to {target}: it {problem}; rename it or remove it from the policy")]
    UnsafePath {
        /// The path, lossily decoded; shown escaped (`{:?}`) so the message stays one line.
        path: String,
        /// The policy key that brought the path in.
        origin: String,
        /// The artifact that refused it, e.g. `Seatbelt`.
        target: &'static str,
        /// What is wrong, e.g. `contains a double quote`.
        problem: &'static str,
    },
    /// A walk of [`resolve`] met a symlink inside a writable root, where a run could have
    /// made it: 125.
    #[error(
        "{} is a symlink (to {}) inside the writable root {}, where a sandboxed run could have made it",
        .link.display(),
        // Whatever the run wrote into the link, on one line.
        .target.display().to_string().escape_debug(),
        .root.display()
    )]
    PlantedLink {
        link: std::path::PathBuf,
        target: std::path::PathBuf,
        root: std::path::PathBuf,
    },
    /// A walk of [`resolve`] could not open a component: 125.
    #[error("cannot open {}: {error}", .at.display())]
    CannotOpen {
        at: std::path::PathBuf,
        error: std::io::Error,
    },
    /// The child failed this setup step between fork and exec (or bwrap could not build the
    /// sandbox): 125.
    #[error("sandbox setup failed in the child at {0}: {1}")]
    Setup(&'static str, std::io::Error),
    /// The Landlock ruleset could not be built: 125.
    #[error("landlock: {0}")]
    Landlock(String),
    /// The seccomp program could not be built: 125.
    #[error("seccomp: {0}")]
    Seccomp(String),
    /// Any other failure of cordon's own in the parent: 125.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What an [`Error`] means to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The command does not exist ([`Error::NotFound`]).
    NotFound,
    /// The command cannot be executed ([`Error::NotExecutable`]).
    NotExecutable,
    /// The policy cannot be enforced safely here; the operator must change the policy, the
    /// machine or the files it names ([`Error::Refused`], [`Error::UnsafePath`],
    /// [`Error::PlantedLink`]).
    Refused,
    /// cordon's own setup failed (every other variant).
    Failed,
}

impl ErrorKind {
    /// The exit status the CLI reports: 127 not found, 126 cannot execute, 125 otherwise.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::NotFound => 127,
            ErrorKind::NotExecutable => 126,
            ErrorKind::Refused | ErrorKind::Failed => 125,
        }
    }
}

impl Error {
    /// What this error means to the caller.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::NotExecutable(..) => ErrorKind::NotExecutable,
            Error::Refused(_) | Error::UnsafePath { .. } | Error::PlantedLink { .. } => {
                ErrorKind::Refused
            }
            Error::CannotOpen { .. }
            | Error::Setup(..)
            | Error::Landlock(_)
            | Error::Seccomp(_)
            | Error::Io(_) => ErrorKind::Failed,
        }
    }

    /// The exit status the CLI reports for it ([`ErrorKind::exit_code`]).
    pub fn exit_code(&self) -> i32 {
        self.kind().exit_code()
    }

    /// A failure of cordon's own, described by `message` (one line).
    pub(crate) fn other(message: impl Into<String>) -> Error {
        Error::Io(std::io::Error::other(message.into()))
    }
}

/// The backend that will run the child, after checking it can enforce the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// Landlock + seccomp at this Landlock ABI.
    Landlock { abi: i32 },
    /// bubblewrap's mount and process namespaces, with Landlock + seccomp inside.
    Bwrap { bwrap: std::path::PathBuf, abi: i32 },
    /// macOS Seatbelt, through this `sandbox-exec` (always `/usr/bin/sandbox-exec`).
    Seatbelt { sandbox_exec: std::path::PathBuf },
    /// No kernel sandbox (only `backend = "none"` or `require_os_sandbox = false`).
    Unconfined,
}

/// A backend choice and what the operator must be told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    pub backend: Chosen,
    /// Degradations accepted because `require_os_sandbox` is false, and what an outer
    /// sandbox keeps cordon from adding (named gaps); print them.
    pub warnings: Vec<String>,
    /// bwrap leaves the command in the outer sandbox's network namespace: the outer refuses
    /// the netlink socket bwrap needs to bring loopback up in one of its own, and the network
    /// is already closed (see [`nested_network`]).
    pub outer_network: bool,
    /// bwrap as root keeps the outer sandbox's device nodes: root in a user namespace cannot
    /// `mknod` fresh ones (that needs CAP_MKNOD in the machine's own namespace). Named in
    /// `warnings`.
    pub outer_devices: bool,
    /// The probe said the Landlock backend's own namespaces can be made here
    /// ([`Machine::own_namespaces`]), and `cordon profile` and `doctor` report what they hold
    /// (the read-only mount tree, the protected paths' mounts, the private `/tmp`): a clone
    /// the kernel refuses at run time refuses the run, never runs it with less.
    pub namespaces: bool,
}

impl Choice {
    /// How this choice isolates a profile's `network` (see `network.rs`).
    pub fn network(&self, network: cordon_policy::Network) -> network::Isolation {
        network::isolation(network, &self.backend, self.outer_network)
    }
}

/// Picks the backend for `profile` on `machine`, or refuses.
///
/// `auto` needs read-only mounts when the policy has protected paths or when running as root
/// (root owns the system files, and only read-only mounts stop `chmod` on them): the Landlock
/// backend's init makes them where the command's own mount namespace can be made
/// ([`Machine::own_namespaces`]), else bwrap does (as root without either, `auto` refuses and
/// names `--backend landlock` to accept the weaker backend); otherwise Landlock + seccomp, which enforce everything else the policy says at a fraction
/// of the start-up cost. A needed backend that is missing is a refusal, never a silent
/// downgrade. A writable root that is, holds or lies in a system directory is refused
/// whatever the backend ([`roots::check`]).
///
/// On macOS `auto` and `seatbelt` pick Seatbelt; a missing `/usr/bin/sandbox-exec` is a
/// refusal even with `require_os_sandbox = false` (there is nothing weaker to fall back to
/// but no sandbox at all, which only `backend = "none"` asks for).
///
/// `sandbox.network = "proxy"` is never run unconfined: without a sandbox the command could
/// go around the proxy.
pub(crate) fn choose(
    requested: Backend,
    profile: &Profile,
    require: bool,
    machine: &Machine,
) -> Result<Choice, Error> {
    let choice = choose_platform(requested, profile, require, machine)?;
    if choice.backend == Chosen::Unconfined && profile.network == cordon_policy::Network::Proxy {
        return Err(Error::Refused(format!(
            "sandbox.network = \"proxy\" needs a kernel sandbox to keep the command from going around the proxy, but {}",
            choice
                .warnings
                .first()
                .map_or("none would confine the command", |w| w.split(';').next().unwrap_or(w))
        )));
    }
    Ok(choice)
}

fn choose_platform(
    requested: Backend,
    profile: &Profile,
    require: bool,
    machine: &Machine,
) -> Result<Choice, Error> {
    match machine.platform {
        Platform::Linux => choose_linux(requested, profile, require, machine),
        Platform::MacOs => match requested {
            Backend::None => unconfined("backend `none` was requested".into(), require),
            Backend::Landlock | Backend::Bwrap => Err(Error::Refused(
                "the landlock and bwrap backends run only on Linux; on macOS use seatbelt (or auto)"
                    .into(),
            )),
            Backend::Auto | Backend::Seatbelt => choose_seatbelt(profile, machine),
        },
    }
}

/// No kernel sandbox: a refusal when `require` (require_os_sandbox), else a warned choice.
fn unconfined(why: String, require: bool) -> Result<Choice, Error> {
    if require {
        Err(Error::Refused(format!(
            "{why}; refusing to run unconfined (require_os_sandbox = true)"
        )))
    } else {
        Ok(Choice {
            backend: Chosen::Unconfined,
            warnings: vec![format!(
                "{why}; running UNCONFINED because require_os_sandbox = false"
            )],
            outer_network: false,
            outer_devices: false,
            namespaces: false,
        })
    }
}

/// A build for another OS has no Linux backends to choose from.
#[cfg(not(target_os = "linux"))]
fn choose_linux(_: Backend, _: &Profile, _: bool, _: &Machine) -> Result<Choice, Error> {
    Err(Error::Refused(
        "this build of cordon is not for Linux: it has no Landlock, seccomp or bwrap backend"
            .into(),
    ))
}

#[cfg(target_os = "linux")]
fn choose_linux(
    requested: Backend,
    profile: &Profile,
    require: bool,
    machine: &Machine,
) -> Result<Choice, Error> {
    // A writable root that is (or holds, or lies in) a system directory hands the command
    // the system whatever the backend: refused before any is chosen.
    roots::check(profile)?;
    let unconfined = |why: String| unconfined(why, require);
    // What Landlock + seccomp give on this kernel: needed by both Linux backends.
    let kernel = |make: &dyn Fn(i32) -> Chosen| -> Result<Choice, Error> {
        if !machine.seccomp {
            return unconfined("this kernel does not accept seccomp filters".into());
        }
        match landlock::enforcement(machine.landlock_abi, profile.network) {
            landlock::Enforcement::None => {
                unconfined("this kernel has no Landlock (not built in or disabled at boot)".into())
            }
            landlock::Enforcement::Partial(gaps) => {
                let list: Vec<String> = gaps
                    .iter()
                    .map(|g| format!("{} (needs ABI {})", g.what, g.needs_abi))
                    .collect();
                let why = format!(
                    "Landlock ABI {} cannot restrict: {}",
                    machine.landlock_abi,
                    list.join(", ")
                );
                if require {
                    Err(Error::Refused(format!(
                        "{why}; set require_os_sandbox = false to accept partial confinement"
                    )))
                } else {
                    Ok(Choice {
                        backend: make(machine.landlock_abi),
                        warnings: vec![format!("{why}; running with PARTIAL confinement because require_os_sandbox = false")],
                        outer_network: false,
            outer_devices: false,
            namespaces: false,
                    })
                }
            }
            landlock::Enforcement::Full => Ok(Choice {
                backend: make(machine.landlock_abi),
                warnings: vec![],
                outer_network: false,
                outer_devices: false,
                namespaces: false,
            }),
        }
    };
    let bwrap = |why_needed: &str| -> Result<Choice, Error> {
        match (machine.bwrap_usable(), &machine.outer) {
            (Some(path), _) => kernel(&|abi| Chosen::Bwrap {
                bwrap: path.clone(),
                abi,
            }),
            (None, Some(outer)) if machine.bwrap.is_some() => Err(Error::Refused(format!(
                "{why_needed}, but bubblewrap cannot start here: {}; {}",
                outer.bwrap_blocker(machine.root).unwrap_or_default(),
                outer_remedy(outer)
            ))),
            _ => Err(Error::Refused(format!(
                "{why_needed}, but bubblewrap is not installed in {} (Debian package `bubblewrap`)",
                probe::TRUSTED_BWRAP.join(", ")
            ))),
        }
    };
    let protected = profile.protected.first();
    // Root without capabilities inside an outer sandbox that mounts /etc and /usr read-only:
    // bwrap cannot start, and what it is needed for as root (the system's files) the outer
    // already keeps. What Landlock alone cannot stop on the outer's writable mounts is named.
    let root_covered = machine.bwrap.is_some()
        && machine.bwrap_usable().is_none()
        && machine.outer.as_ref().is_some_and(|o| o.system_read_only);
    let landlock_as_root_inside = || -> Result<Choice, Error> {
        let mut c = kernel(&|abi| Chosen::Landlock { abi })?;
        if let Some(o) = machine.outer.as_ref().filter(|_| machine.root) {
            c.warnings.push(format!(
                "running as root {}inside {}, where bubblewrap cannot start: /etc and /usr are read-only there, but root's command can change the modes, owners and times of root's files on its writable mounts (/tmp, the nodes in /dev), which Landlock does not restrict",
                if o.root_without_capabilities {
                    "without capabilities "
                } else {
                    "(part of its /proc covered by another mount) "
                },
                o.name
            ));
        }
        Ok(c)
    };
    let choice = match requested {
        Backend::Seatbelt => Err(Error::Refused("the seatbelt backend runs only on macOS".into())),
        Backend::None => unconfined("backend `none` was requested".into()),
        Backend::Bwrap => bwrap("backend `bwrap` was requested"),
        // Protected paths are kept read-only by mounts the backend's init makes in the
        // command's own mount namespace, where it can make one.
        Backend::Landlock => match protected.filter(|_| !machine.own_namespaces) {
            Some(p) if p.origin.starts_with("sandbox.git") => Err(Error::Refused(format!(
                "the Landlock backend cannot keep the configuration of {} read-only inside a writable root here ({}): it needs a mount namespace of its own, which {}; use --backend bwrap (or auto), or set sandbox.git = \"writable\" (what a run leaves there is still moved aside and reported after it)",
                p.path
                    .ancestors()
                    .find(|a| a.file_name() == Some(".git".as_ref()))
                    .unwrap_or(&p.path)
                    .display(),
                p.origin.split(':').next().unwrap_or(&p.origin),
                no_namespaces(machine)
            ))),
            Some(p) => Err(Error::Refused(format!(
                "the Landlock backend cannot keep {} ({}) read-only inside a writable root here: it needs a mount namespace of its own, which {}; use --backend bwrap (or auto), or keep it out of the writable roots",
                p.path.display(),
                p.origin,
                no_namespaces(machine)
            ))),
            None => kernel(&|abi| Chosen::Landlock { abi }),
        },
        Backend::Auto => match (protected, machine.root, machine.bwrap_usable()) {
            // Inside an outer sandbox that already keeps every protected path read-only
            // (its own read-only mounts, which nothing inside can undo), Landlock suffices.
            (Some(_), root, None) if outer_protects(machine, profile) && (!root || root_covered) => {
                landlock_as_root_inside()
            }
            // Where the command's own mount namespace can be made, Landlock's init keeps the
            // protected paths read-only with mounts there, and makes the whole mount tree
            // read-only but for the writable roots: root's command cannot change the system's
            // files' modes, owners and times (EROFS), as under bwrap, at about half its
            // start-up cost. Elsewhere root needs bwrap (see `root_without_bwrap`).
            (_, _, _) if machine.own_namespaces && (protected.is_some() || machine.root) => {
                kernel(&|abi| Chosen::Landlock { abi })
            }
            (Some(p), _, _) => bwrap(&format!("{} ({}) must stay read-only inside a writable root, which needs bwrap", p.path.display(), p.origin)),
            (None, true, Some(_)) => bwrap("running as root"),
            // Root needs bwrap for the system's files; an outer sandbox that mounts them
            // read-only already keeps them (and their modes) from root's command.
            (None, true, None) if root_covered => landlock_as_root_inside(),
            // Installed but unable to start (root without capabilities): say that, not "missing".
            (None, true, None) if machine.bwrap.is_some() => bwrap("running as root"),
            (None, true, None) => Err(Error::Refused(root_without_bwrap(machine))),
            _ => kernel(&|abi| Chosen::Landlock { abi }),
        },
    }?;
    let mut choice = nested_network(choice, profile, machine)?;
    choice.namespaces = machine.own_namespaces && matches!(choice.backend, Chosen::Landlock { .. });
    // bwrap as root in a user namespace (an outer sandbox's): no mknod for fresh device nodes.
    if let (Chosen::Bwrap { .. }, true, Some(o)) = (&choice.backend, machine.root, &machine.outer) {
        if o.user_namespace {
            choice.outer_devices = true;
            choice.warnings.push(format!(
                "running as root in the user namespace of {}, which refuses mknod: the command gets its device nodes (/dev/null, zero, full, random, urandom, tty), and root's command can change their modes, owners and times",
                o.name
            ));
        }
    }
    Ok(choice)
}

/// Why the Landlock backend cannot make its mount namespace here (see
/// [`Machine::own_namespaces`]).
#[cfg(target_os = "linux")]
fn no_namespaces(machine: &Machine) -> String {
    match &machine.outer {
        Some(o) => format!("{} may refuse", o.name),
        None if machine.root => "this kernel refuses (user.max_mnt_namespaces is 0)".into(),
        None => {
            "this kernel refuses to unprivileged users (a sysctl turns user namespaces off)".into()
        }
    }
}

/// Every protected path lies on a read-only mount of the outer sandbox (the path, or where it
/// would be created): nothing inside can write there, so Landlock needs no bwrap to keep it.
#[cfg(target_os = "linux")]
fn outer_protects(machine: &Machine, profile: &Profile) -> bool {
    machine.outer.is_some()
        && profile.protected.iter().all(|p| {
            p.path
                .ancestors()
                .find(|a| std::fs::symlink_metadata(a).is_ok())
                .is_some_and(probe::read_only_mount)
        })
}

/// What the operator can change so that cordon can enforce the policy inside `outer`.
#[cfg(target_os = "linux")]
fn outer_remedy(outer: &probe::Outer) -> &'static str {
    if outer.name.starts_with("Codex") {
        "run Codex with `-s danger-full-access` (or `cordon install codex --sandbox cordon`, which sets that in the project's .codex/config.toml) so that cordon does the sandboxing, or run Codex as an unprivileged user"
    } else {
        "run cordon outside that sandbox, or as an unprivileged user inside it"
    }
}

/// The network part of the plan inside an outer sandbox that refuses netlink sockets (bwrap
/// cannot bring loopback up in a network namespace of its own there): `network = "deny"` runs
/// in the outer's namespace when the outer already refuses inet sockets (and cordon's seccomp
/// refuses every socket); the proxy needs loopback of its own and is refused, naming the
/// setting that lets it run.
#[cfg(target_os = "linux")]
fn nested_network(
    mut choice: Choice,
    profile: &Profile,
    machine: &Machine,
) -> Result<Choice, Error> {
    let Some(outer) = machine.outer.as_ref().filter(|o| o.netlink_refused) else {
        return Ok(choice);
    };
    let codex = outer.name.starts_with("Codex");
    match (profile.network, &choice.backend) {
        (_, Chosen::Unconfined) | (cordon_policy::Network::Allow, _) => Ok(choice),
        (cordon_policy::Network::Proxy, _) => Err(Error::Refused(format!(
            "sandbox.network = \"proxy\" needs loopback in a network namespace of the command's own, but {} refuses netlink and inet sockets{}",
            outer.name,
            if codex {
                "; set sandbox_workspace_write.network_access = true in Codex's config, or run Codex with `-s danger-full-access` so that cordon does the sandboxing"
            } else {
                "; let the outer sandbox allow the network, or run cordon outside it"
            }
        ))),
        // Where seccomp and Landlock keep the command off the network without a namespace
        // (ABI 6, `network.rs`), bwrap needs none and no netlink: the outer's is as good.
        (cordon_policy::Network::Deny, Chosen::Bwrap { abi, .. })
            if outer.inet_refused || *abi >= network::FILTERS_MIN_ABI =>
        {
            choice.outer_network = true;
            Ok(choice)
        }
        (cordon_policy::Network::Deny, Chosen::Bwrap { .. }) => Err(Error::Refused(format!(
            "{} refuses the netlink socket bubblewrap needs for a network namespace of the command's own, yet allows inet sockets; the network cannot be closed as sandbox.network = \"deny\" asks; run cordon outside it",
            outer.name
        ))),
        _ => Ok(choice),
    }
}

/// Why `auto` refuses to run as root without a mount namespace of its own and without
/// bubblewrap: Landlock has no right for metadata, so root's command could `chmod`
/// `/etc/shadow` or the system's programs; only read-only mounts stop that (the Landlock
/// backend's init's, or bwrap's). The weaker backend stays available when asked for by name.
#[cfg(target_os = "linux")]
fn root_without_bwrap(machine: &Machine) -> String {
    format!(
        "running as root, `auto` needs read-only mounts to keep root's command from changing system files' modes, owners and times (e.g. chmod /etc/shadow): the Landlock backend makes them in a mount namespace of the command's own, which {} here, and bubblewrap is not installed in {}; install the Debian package `bubblewrap`, or pass --backend landlock (sandbox.backend = \"landlock\") to accept the weaker Landlock backend",
        no_namespaces(machine),
        probe::TRUSTED_BWRAP.join(", ")
    )
}

/// Seatbelt on macOS, when it can enforce `profile`.
fn choose_seatbelt(profile: &Profile, machine: &Machine) -> Result<Choice, Error> {
    let Some(sandbox_exec) = &machine.sandbox_exec else {
        return Err(Error::Refused(format!(
            "the seatbelt backend needs {}, which is missing; refusing to run without it",
            seatbelt::SANDBOX_EXEC
        )));
    };
    // macOS accepts RLIMIT_AS but does not enforce it: a memory limit would be a claim only.
    if profile.limits.memory.is_some() {
        return Err(Error::Refused(
            "sandbox.limits.memory cannot be enforced on macOS (the kernel ignores RLIMIT_AS); remove it from the policy or run on Linux".into(),
        ));
    }
    // A path Seatbelt cannot take safely is refused now, before anyone is asked; the run
    // renders again with the paths resolved on this machine.
    render::seatbelt::render(profile)?;
    Ok(Choice {
        backend: Chosen::Seatbelt {
            sandbox_exec: sandbox_exec.clone(),
        },
        warnings: vec![],
        outer_network: false,
        outer_devices: false,
        namespaces: false,
    })
}

/// The resource type `setrlimit` takes on this platform.
#[cfg(target_os = "linux")]
pub(crate) type RlimitResource = libc::__rlimit_resource_t;
/// The resource type `setrlimit` takes on this platform.
#[cfg(not(target_os = "linux"))]
pub(crate) type RlimitResource = libc::c_int;

/// Resource limits for the child, from the profile; core dumps are always off (a core dump
/// may hold secrets, and a `|`-pipe core_pattern runs a helper outside the sandbox).
///
/// A limit is at most what cordon's own hard limit already is: the child inherits that one,
/// and cannot be given more (`setrlimit` refuses, EPERM). The lower one is the stricter, so
/// the policy's "at most N" still holds; refusing every run under `ulimit -Hn 1024` because
/// the default says 4,096 open files protected nothing.
fn rlimits(profile: &Profile) -> Vec<(RlimitResource, u64)> {
    let mut out = vec![(libc::RLIMIT_CORE, 0)];
    let l = &profile.limits;
    for (res, v) in [
        (libc::RLIMIT_AS, l.memory),
        (libc::RLIMIT_FSIZE, l.file_size),
        (libc::RLIMIT_NOFILE, l.open_files),
        (libc::RLIMIT_NPROC, l.processes),
        (libc::RLIMIT_CPU, l.cpu_time),
    ] {
        if let Some(v) = v {
            out.push((res, v.min(hard_limit(res))));
        }
    }
    out
}

/// This process's hard limit for `res` (`u64::MAX`: unlimited, or unknown — the child's
/// `setrlimit` then says what failed).
fn hard_limit(res: RlimitResource) -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `l` is a plain struct on our stack that getrlimit only writes into.
    match unsafe { libc::getrlimit(res, &mut l) } {
        0 if l.rlim_max != libc::RLIM_INFINITY => l.rlim_max,
        _ => u64::MAX,
    }
}

/// What a prepared sandbox builds once for all its runs, because it depends on the policy and
/// the machine only: the seccomp program (it depends on the network setting alone) and, for
/// the Landlock backend, the rules' paths opened (each run checks they still name the same
/// files; see [`landlock::Held`]). A run adds only what is its own: the private TMPDIR's
/// rule, the fresh /proc's rules (added by the namespace's init), the re-point check.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The seccomp programs the Landlock backend's namespaced command and bwrap's inner stage
    /// install (`None`: not built, e.g. for an unconfined or shown-only sandbox).
    #[cfg(target_os = "linux")]
    seccomp: Option<Result<Vec<seccomp::Program>, String>>,
    /// The Landlock backend's host rules, opened.
    #[cfg(target_os = "linux")]
    landlock: Option<landlock::Held>,
}

impl Built {
    /// Builds what `choice` runs `profile` (the policy's, without a run's TMPDIR) with;
    /// `opened`: the paths the profile was made with, taken for the Landlock rules.
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    pub(crate) fn new(choice: &Choice, profile: &Profile, mut opened: profile::Opened) -> Built {
        #[cfg(target_os = "linux")]
        {
            let seccomp = matches!(
                choice.backend,
                Chosen::Landlock { .. } | Chosen::Bwrap { .. }
            )
            .then(|| {
                seccomp::compile(&seccomp::rules(profile.network)).map_err(|e| match e {
                    Error::Seccomp(m) => m,
                    e => e.to_string(),
                })
            });
            let landlock = match choice.backend {
                Chosen::Landlock { abi } => {
                    Some(landlock::hold(&namespace_plan(profile, abi).0, &mut opened))
                }
                _ => None,
            };
            Built { seccomp, landlock }
        }
        #[cfg(not(target_os = "linux"))]
        Built::default()
    }

    /// The seccomp programs for the network setting (compiled now when they were not before).
    #[cfg(target_os = "linux")]
    fn seccomp(&self, network: cordon_policy::Network) -> Result<Vec<seccomp::Program>, Error> {
        match &self.seccomp {
            Some(Ok(programs)) => Ok(programs.clone()),
            // A program that cannot be built fails each run as it failed here.
            Some(Err(e)) => Err(Error::Seccomp(e.clone())),
            None => seccomp::compile(&seccomp::rules(network)),
        }
    }
}

/// Runs `spec` under `choice`: builds the kernel objects in the parent, runs the child, and
/// cleans up (bwrap's protected-path placeholders). `tmp` is the run's private directory
/// (already in `profile`, see [`Profile::with_private_tmp`]). What the run could not enforce
/// beyond `choice`'s warnings is added to `gaps`. The re-point checks are the caller's
/// ([`Prepared::run`] makes them right before).
///
/// A confined child never holds cordon's own terminal or the files its stdio was redirected
/// to: it gets a pty or pipes of its own, relayed for the run (see [`stdio`]). An unconfined
/// run (`backend = "none"`) inherits them.
#[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
pub(crate) fn execute(
    choice: &Choice,
    built: &Built,
    profile: &Profile,
    mut spec: run::Spec,
    tmp: &std::path::Path,
    gaps: &mut Vec<String>,
    reuse: Option<(&mut run::zygote::Zygote, &mut RunPath)>,
) -> Result<run::Outcome, Error> {
    // The proxy's handoff and the profile's network must agree: a proxy profile without a
    // proxy would leave the command's only way out unserved, and a listener for a profile
    // that does not confine the network would be a proxy the command could go around.
    let refuse = |why: String| Err(Error::other(why));
    match (profile.network, &spec.proxy, &choice.backend) {
        (cordon_policy::Network::Proxy, None, _) => {
            return refuse("sandbox.network = \"proxy\" but no proxy was started for the run (cordon's own wiring failed)".into())
        }
        (cordon_policy::Network::Proxy, Some(_), Chosen::Unconfined) => {
            return refuse("sandbox.network = \"proxy\" cannot run unconfined: the command could go around the proxy".into())
        }
        (cordon_policy::Network::Proxy, Some(h), _) if h.port != PROXY_PORT => {
            return refuse(format!("the proxy's port must be {PROXY_PORT}, which the sandbox's rules name, not {}", h.port))
        }
        (cordon_policy::Network::Proxy, Some(h), _) if h.forwards.contains(&PROXY_PORT) => {
            return refuse(format!("[network.forward] cannot use port {PROXY_PORT}: it is the proxy's, inside the sandbox; forward another port"))
        }
        (cordon_policy::Network::Proxy, Some(h), _) if h.forwards != profile.forwards => {
            return refuse("the forwarded ports handed to the run are not the profile's (cordon's own wiring failed)".into())
        }
        (cordon_policy::Network::Proxy, Some(_), _) | (_, None, _) => {}
        (_, Some(_), _) => {
            return refuse("a proxy was started for a run whose policy does not say sandbox.network = \"proxy\"".into())
        }
    }
    #[cfg(target_os = "linux")]
    let relay = match choice.backend {
        Chosen::Unconfined => None,
        _ => Some(
            stdio::Relay::start(
                &mut spec.stdio.fds,
                &mut spec.stdio.controlling_tty,
                spec.stdio.terminal.clone(),
            )
            .map_err(|e| {
                Error::other(format!(
                    "cannot give the command a terminal and pipes of its own: {e}"
                ))
            })?,
        ),
    };
    let outcome = match reuse {
        // The bwrap sandbox kept for many runs (`Prepared::reuse_sandbox`); `path` says when
        // the run was built one-shot instead.
        #[cfg(target_os = "linux")]
        Some((z, path)) => match z.run(spec) {
            run::zygote::Served::Ran(outcome) => outcome,
            run::zygote::Served::NotSent(spec, why) => {
                *path = RunPath::OneShotInstead(why);
                execute_backend(choice, built, profile, *spec, tmp, gaps)
            }
        },
        #[cfg(not(target_os = "linux"))]
        Some((z, _)) => match *z {},
        None => execute_backend(choice, built, profile, spec, tmp, gaps),
    };
    #[cfg(target_os = "linux")]
    if let Some(relay) = relay {
        relay.finish();
    }
    outcome
}

#[cfg_attr(not(target_os = "linux"), allow(unused_mut, unused_variables))]
fn execute_backend(
    choice: &Choice,
    built: &Built,
    profile: &Profile,
    mut spec: run::Spec,
    tmp: &std::path::Path,
    gaps: &mut Vec<String>,
) -> Result<run::Outcome, Error> {
    // The macOS runner starts the command at once: released first.
    #[cfg(target_os = "macos")]
    if let Some(r) = spec.release.take() {
        r.wait()?;
    }
    match &choice.backend {
        #[cfg(target_os = "macos")]
        Chosen::Unconfined => run::macos::run(&spec, &rlimits(profile)),
        #[cfg(target_os = "macos")]
        Chosen::Seatbelt { sandbox_exec } => {
            // No network namespaces on macOS: the proxy listens on the host's loopback, on
            // the one port the Seatbelt profile lets the command reach.
            if let Some(handoff) = &spec.proxy {
                // Forwarded ports would be host ports here, open to every local process:
                // refused rather than served so.
                if !handoff.forwards.is_empty() {
                    return Err(Error::other(
                        "[network.forward] needs a network namespace of the command's own (Linux); Seatbelt cannot give it one",
                    ));
                }
                let listener =
                    std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, handoff.port))
                        .map_err(|e| {
                            Error::other(format!(
                                "cannot listen for the proxy on 127.0.0.1:{}: {e}",
                                handoff.port
                            ))
                        })?;
                handoff
                    .listener
                    .send(listener)
                    .map_err(|_| Error::other("the proxy is gone; it did not take its listener"))?;
            }
            let spec =
                seatbelt::invocation(profile, &spec, sandbox_exec, &|p| std::fs::canonicalize(p))?;
            run::macos::run(&spec, &rlimits(profile)).map_err(seatbelt::launcher_failed)
        }
        #[cfg(not(target_os = "linux"))]
        Chosen::Landlock { .. } | Chosen::Bwrap { .. } => Err(Error::other(
            "the landlock and bwrap backends run only on Linux",
        )),
        #[cfg(not(target_os = "macos"))]
        Chosen::Seatbelt { .. } => Err(Error::other("the seatbelt backend runs only on macOS")),
        #[cfg(target_os = "linux")]
        Chosen::Unconfined => {
            let c = run::Confinement {
                rlimits: rlimits(profile),
                release: spec.release.take(),
                ..Default::default()
            };
            run::run(c, &spec)
        }
        #[cfg(target_os = "linux")]
        Chosen::Landlock { abi } => {
            landlock::host_rules(profile)?;
            // Own PID, IPC and mount namespaces (and user, network) first; the rules for /proc
            // are added by the namespace's init, to the /proc it mounts.
            let (host, mut plan) = namespace_plan(profile, *abi);
            let c = run::namespaces::Confinement {
                landlock: match &built.landlock {
                    Some(held) => landlock::prepare_held(held, &host, *abi)?.fd,
                    None => landlock::prepare(&host, *abi)?.fd,
                },
                seccomp: built.seccomp(profile.network)?,
                rlimits: rlimits(profile),
            };
            // The protected paths' mounts, made by the namespace's init (the paths were
            // checked by the caller right before, see `Prepared::run`); the placeholders made
            // for them are removed after the run, whatever its end.
            let rules: Vec<&PathRule> = profile.rules.iter().collect();
            let protect =
                protect::plan(&profile.protected, &protect::writable_roots(&rules), false)?;
            // And the operator's per-user configuration git dies on when it cannot read it
            // (see `protect::hidden_user_config`).
            plan.protect = protect
                .anchors
                .into_iter()
                .chain(protect.covers)
                .chain(protect::hidden_user_config(&profile.rules, &spec.env))
                .collect();
            // The private TMPDIR at /tmp, as bwrap shows it, where nothing else the command
            // needs lies under /tmp (programs that write /tmp by name work as on bwrap).
            if let Some(w) = private_tmp_at_tmp(profile, tmp, &spec, &mut plan) {
                w.at = Some("/tmp".into());
                tmp_env_at_tmp(&mut spec.env, tmp);
            }
            // Taken by the namespaced run once it waited for it; what is left (the namespaces
            // were refused before) the run without them waits for.
            let mut release = spec.release.take();
            let ran = run::namespaces::run(c, &spec, &plan, &mut release);
            // The namespace and its mounts are gone: the placeholders go if no other run
            // uses them (see `protect::Placeholders`).
            drop(protect.placeholders);
            match ran {
                Ok(outcome) => return Ok(outcome),
                Err(run::namespaces::Attempt::Start(e)) => return Err(e),
                Err(run::namespaces::Attempt::Unavailable(e)) => gaps.push(without_namespaces(
                    choice.namespaces,
                    profile,
                    plan.net,
                    rustix::process::geteuid().is_root(),
                    &e,
                )?),
            }
            // No namespaces here: seccomp keeps other processes and SysV IPC out of reach.
            let mut rules = seccomp::rules(profile.network);
            rules.extend(seccomp::host_process_rules());
            let c = run::Confinement {
                landlock: Some(landlock::prepare(profile, *abi)?.fd),
                seccomp: seccomp::compile(&rules)?,
                rlimits: rlimits(profile),
                confine: true,
                release,
                ..Default::default()
            };
            run::run(c, &spec)
        }
        #[cfg(target_os = "linux")]
        Chosen::Bwrap {
            bwrap: bwrap_path,
            abi,
        } => {
            let (mut pass, seccomp_fds) = seccomp_memfds(&built.seccomp(profile.network)?)?;
            let root = rustix::process::geteuid().is_root();
            let cx = bwrap::Context {
                cwd: &spec.cwd,
                tmp,
                root,
                seccomp_fds: &seccomp_fds,
                dry_run: false,
                outer_network: choice.outer_network,
                outer_devices: choice.outer_devices,
            };
            // The bind sources inside writable roots held by descriptor (the protected paths
            // were checked by the caller right before, see `Prepared::run`).
            let mut inv = bwrap::invocation(profile, &cx)?;
            match bwrap::hold_sources(&mut inv, &resolve::writable_roots(profile)) {
                Ok(held) => pass.extend(held),
                // The invocation's placeholders go with it (if no other run uses them).
                Err(e) => return Err(e),
            }
            let args_fd = memfd(
                "cordon-bwrap-args",
                &bwrap::args_bytes(&inv.args),
                MemfdKind::Data,
            )?;
            let args_no = std::os::fd::AsRawFd::as_raw_fd(&args_fd);
            pass.push(args_fd);
            // Landlock for everything bwrap binds is built here, from host paths; the inner
            // stage adds /proc and /dev as the sandbox sees them, applies it, and execs.
            let (host, inside) = bwrap::split_rules(profile);
            let ruleset = landlock::prepare(&host, *abi)?.fd;
            let ruleset_no = std::os::fd::AsRawFd::as_raw_fd(&ruleset);
            pass.push(ruleset);
            let inner = bwrap::inner_stage()?;
            let inner_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&inner));
            pass.push(inner);

            let mut argv: Vec<std::ffi::OsString> = vec![
                "--args".into(),
                args_no.to_string().into(),
                "--".into(),
                inner_path.into(),
            ];
            let command = std::iter::once(std::mem::take(&mut spec.program))
                .chain(std::mem::take(&mut spec.args));
            let inner_args = bwrap::inner_args(ruleset_no, &inside, *abi, &spec.cwd, command);
            // sandbox.network = "proxy": the inner stage makes the listener inside bwrap's
            // network namespace (loopback only, brought up by bwrap) and sends it back.
            let proxy = match &spec.proxy {
                Some(handoff) if profile.network == cordon_policy::Network::Proxy => {
                    let (mine, theirs) = proxy::pair()?;
                    let theirs_no = std::os::fd::AsRawFd::as_raw_fd(&theirs);
                    pass.push(theirs);
                    argv.extend(bwrap::with_proxy(
                        inner_args,
                        handoff.port,
                        theirs_no,
                        &handoff.forwards,
                    ));
                    Some((mine, handoff.clone()))
                }
                _ => {
                    argv.extend(inner_args);
                    None
                }
            };
            // The inner stage starts the command only on cordon's "go" (`Spec::release`), while
            // bwrap builds the sandbox.
            let go = match &spec.release {
                Some(_) => {
                    let (go_r, go_w) = pipe()?;
                    argv = bwrap::with_go(argv, std::os::fd::AsRawFd::as_raw_fd(&go_r));
                    pass.push(go_r);
                    Some(go_w)
                }
                None => None,
            };
            // The inner stage's "built" byte, right before the command's exec: without it,
            // bwrap's exit status is bwrap's own failure, not the command's.
            let (ready_r, ready_w) = pipe()?;
            argv = bwrap::with_ready(argv, std::os::fd::AsRawFd::as_raw_fd(&ready_w));
            pass.push(ready_w);
            spec.program = bwrap_path.clone().into_os_string();
            spec.args = argv;
            tmp_env_at_tmp(&mut spec.env, tmp);

            let c = run::Confinement {
                rlimits: rlimits(profile),
                pass_fds: pass,
                setup_status: Some(ready_r),
                proxy,
                own_pid_namespace: true,
                release: spec.release.take(),
                go,
                device_nodes: inv.devices.clone(),
                ..Default::default()
            };
            let outcome = run::run_noting(c, &spec, gaps);
            // bwrap and its mounts are gone: the placeholders go if no other run uses them
            // (see `protect::Placeholders`).
            drop(inv);
            outcome
        }
    }
}

/// What a Landlock run does when the kernel refuses its namespaces at run time (`e`): the gap
/// to name for the run without them, or the refusal.
///
/// - Where the probe said they can be made (`promised`, [`Choice::namespaces`]), `cordon
///   profile` and `doctor` report what they hold (the read-only mount tree, the protected
///   paths' mounts, the private `/tmp`): refused, never run with less than they report.
/// - The protected paths are kept read-only only by mounts there: refused, never run writable.
///   (The per-user configuration covers alone are no protection: without them git dies on the
///   unreadable file, as before.)
/// - `sandbox.network = "proxy"`: without a network namespace the command could go around the
///   proxy: refused.
/// - Otherwise (an outer sandbox, where the probe said no and the report says so) the run goes
///   on under seccomp's argument filters, with what it lacks named.
#[cfg(target_os = "linux")]
fn without_namespaces(
    promised: bool,
    profile: &Profile,
    net: bool,
    root: bool,
    e: &std::io::Error,
) -> Result<String, Error> {
    if promised {
        return Err(Error::Refused(format!(
            "the Landlock backend could not make the command's own namespaces ({e}), although this machine's settings allow them and `cordon profile`/`doctor` report what they hold ({}); the run is refused rather than run with less (run `cordon doctor` to see why the kernel refuses, or use --backend bwrap)",
            if root {
                "the read-only mount tree that keeps root's command from changing system files"
            } else {
                "the read-only mount tree, the protected paths' mounts"
            }
        )));
    }
    if let Some(p) = profile.protected.first() {
        return Err(Error::Refused(format!(
            "the Landlock backend keeps {} read-only with mounts in a mount namespace of the command's own, which this kernel refused ({e}); the run is refused (use --backend bwrap where bubblewrap can start, or allow unprivileged user namespaces)",
            p.path.display()
        )));
    }
    if profile.network == cordon_policy::Network::Proxy {
        return Err(Error::Refused(format!(
            "sandbox.network = \"proxy\" needs a network namespace of the command's own, which this kernel refused ({e}); without one the command could go around the proxy, so the run is refused (use --backend bwrap where bubblewrap can make it, or allow unprivileged user namespaces)"
        )));
    }
    Ok(format!(
        "no PID, IPC{} and mount namespaces of the command's own ({e}): other processes are visible in /proc, and a daemon that left the session is not killed should cordon itself be SIGKILLed{}{}",
        if net { ", network" } else { "" },
        if net {
            "; the network stays closed by seccomp, which refuses every socket()"
        } else {
            ""
        },
        // The read-only mount tree needs that mount namespace.
        if root {
            "; no read-only mount tree either: root's command can change the modes, owners and times of root's files outside the writable roots"
        } else {
            ""
        }
    ))
}

/// The Landlock backend's namespaces for `profile`: the profile without its /proc rules (the
/// host's /proc is covered by a fresh one) and the plan that re-adds them there.
#[cfg(target_os = "linux")]
fn namespace_plan(profile: &Profile, abi: i32) -> (Profile, run::namespaces::Plan) {
    let level = ::landlock::ABI::from(abi);
    // The rules for what init mounts fresh, added there: /proc, and the system rule for the
    // devpts (the command's own instance on /dev/pts, never the host's, see
    // `landlock::HOST_PTYS`).
    let (proc_rules, host): (Vec<PathRule>, Vec<PathRule>) = profile
        .rules
        .iter()
        .cloned()
        .partition(|r| r.path.starts_with("/proc") || landlock::is_host_ptys_rule(r));
    let plan = run::namespaces::Plan {
        user: !rustix::process::geteuid().is_root(),
        // "deny" needs a network namespace only where Landlock cannot refuse TCP and
        // abstract unix sockets (see `network.rs`); "proxy" always does.
        net: network::isolation(profile.network, &Chosen::Landlock { abi }, false)
            .needs_namespace(),
        proxy: (profile.network == cordon_policy::Network::Proxy).then_some(PROXY_PORT),
        proc_rules: proc_rules
            .iter()
            .map(|r| run::namespaces::ProcRule {
                path: r.path.clone(),
                dir_rights: landlock::fs_rights(r.access, true, level).bits(),
                file_rights: landlock::fs_rights(r.access, false, level).bits(),
            })
            .collect(),
        protect: Vec::new(),
        read_only: Some(read_only_tree(profile)),
        pts: true,
        // Landlock has no right for inotify: every watch is checked by the supervisor.
        inotify: true,
    };
    (
        Profile {
            rules: host,
            ..profile.clone()
        },
        plan,
    )
}

/// `TMPDIR` and the paths in the private TMPDIR handed to the command (`Io::files`) as the
/// command sees them where its private TMPDIR is its `/tmp` (bwrap; Landlock's read-only tree
/// when [`private_tmp_at_tmp`]).
#[cfg(target_os = "linux")]
fn tmp_env_at_tmp(env: &mut [(std::ffi::OsString, std::ffi::OsString)], tmp: &std::path::Path) {
    for (k, v) in env.iter_mut() {
        if k == "TMPDIR" {
            *v = "/tmp".into();
        } else if let Ok(rest) = std::path::Path::new(v.as_os_str()).strip_prefix(tmp) {
            *v = std::path::Path::new("/tmp").join(rest).into_os_string();
        }
    }
}

/// The read-only tree's entry for the run's private TMPDIR, when the command can be shown it
/// at `/tmp` (covering the host's /tmp, which Landlock lets it neither list nor write): the
/// tree is made, /tmp is a directory, and nothing else the command is given or starts in lies
/// under /tmp (a root, a protected path's or a cover's mount, the working directory), since
/// the cover would hide it. Otherwise the TMPDIR stays at its own path (`$TMPDIR`).
#[cfg(target_os = "linux")]
fn private_tmp_at_tmp<'a>(
    profile: &Profile,
    tmp: &std::path::Path,
    spec: &run::Spec,
    plan: &'a mut run::namespaces::Plan,
) -> Option<&'a mut run::namespaces::Writable> {
    let slash_tmp = std::path::Path::new("/tmp");
    let tmp = std::fs::canonicalize(tmp).ok()?;
    let under = |p: &std::path::Path| p.starts_with(slash_tmp) && !p.starts_with(&tmp);
    let is_dir = std::fs::symlink_metadata(slash_tmp).is_ok_and(|m| m.is_dir());
    if !is_dir
        || !tmp.starts_with(slash_tmp)
        || profile.rules.iter().any(|r| under(&r.path))
        || plan.protect.iter().any(|m| under(&m.at))
        || under(&spec.cwd)
        || under(std::path::Path::new(&spec.program))
    {
        return None;
    }
    plan.read_only.iter_mut().flatten().find(|w| w.path == tmp)
}

/// The writable roots init gives write back to in the read-only mount tree: each writable
/// rule but device nodes (writing those works on a read-only mount), at its real path, with
/// the device and inode seen here. A root that cannot be resolved now is left out: it does
/// not exist, so there is nothing to write in (its parent is read-only).
#[cfg(target_os = "linux")]
fn read_only_tree(profile: &Profile) -> Vec<run::namespaces::Writable> {
    use std::os::unix::fs::MetadataExt;
    resolve::writable_roots(profile)
        .into_iter()
        .filter_map(|p| {
            let path = std::fs::canonicalize(&p).ok()?;
            let m = std::fs::metadata(&path).ok()?;
            Some(run::namespaces::Writable {
                path,
                dev: m.dev(),
                ino: m.ino(),
                at: None,
            })
        })
        .collect()
}

/// bwrap's `--add-seccomp-fd` programs, each in a memfd, and their descriptor numbers.
#[cfg(target_os = "linux")]
fn seccomp_memfds(
    programs: &[seccomp::Program],
) -> Result<(Vec<std::os::fd::OwnedFd>, Vec<i32>), Error> {
    let mut fds = Vec::new();
    let mut nos = Vec::new();
    for prog in programs {
        let mut bytes = Vec::with_capacity(prog.len() * 8);
        for ins in prog {
            bytes.extend_from_slice(&ins.code.to_ne_bytes());
            bytes.push(ins.jt);
            bytes.push(ins.jf);
            bytes.extend_from_slice(&ins.k.to_ne_bytes());
        }
        let fd = memfd("cordon-seccomp", &bytes, MemfdKind::Data)?;
        nos.push(std::os::fd::AsRawFd::as_raw_fd(&fd));
        fds.push(fd);
    }
    Ok((fds, nos))
}

/// What a memfd holds, and so how it is made.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemfdKind {
    /// Data a program reads (bwrap's options, a seccomp program).
    Data,
    /// A program to execute as `/proc/self/fd/N`; sealed, so it cannot change once written.
    Program,
}

/// An anonymous in-memory file holding `bytes`, positioned at its start (close-on-exec; the
/// child clears that for the descriptors it must pass on).
#[cfg(target_os = "linux")]
pub(crate) fn memfd(
    name: &str,
    bytes: &[u8],
    kind: MemfdKind,
) -> Result<std::os::fd::OwnedFd, Error> {
    use rustix::fs::{MemfdFlags, SealFlags};
    use std::io::{Seek, Write};
    // A program is sealed once written, and asks for MFD_EXEC (Linux 6.3), which keeps it
    // executable where vm.memfd_noexec = 1 would not; older kernels reject the flag, and
    // their memfds are executable anyway.
    let (flags, exec) = match kind {
        MemfdKind::Data => (MemfdFlags::CLOEXEC, MemfdFlags::empty()),
        MemfdKind::Program => (
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
            MemfdFlags::EXEC,
        ),
    };
    let created = match rustix::fs::memfd_create(name, flags | exec) {
        Err(rustix::io::Errno::INVAL) if !exec.is_empty() => rustix::fs::memfd_create(name, flags),
        r => r,
    };
    let fd = created.map_err(|e| {
        Error::Io(std::io::Error::other(format!(
            "cannot create a memfd for {name}: {}{}",
            std::io::Error::from(e),
            if kind == MemfdKind::Program {
                " (vm.memfd_noexec = 2 forbids executable memfds)"
            } else {
                ""
            }
        )))
    })?;
    let mut f = std::fs::File::from(fd);
    f.write_all(bytes).map_err(|e| {
        Error::Io(std::io::Error::other(format!(
            "cannot write {name} ({} bytes) into its memfd: {e}{}",
            bytes.len(),
            if e.raw_os_error() == Some(libc::EFBIG) {
                " (a memfd counts against the file-size limit: raise `ulimit -f`)"
            } else {
                ""
            }
        )))
    })?;
    f.rewind()?;
    if kind == MemfdKind::Program {
        let seals = SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE;
        rustix::fs::fcntl_add_seals(&f, seals).map_err(|e| Error::Io(e.into()))?;
    }
    Ok(f.into())
}

#[cfg(target_os = "linux")]
fn pipe() -> Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd), Error> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| Error::Io(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{Limits, Network};
    use std::path::PathBuf;

    fn profile(protected: bool) -> Profile {
        Profile {
            rules: vec![],
            protected: if protected {
                vec![Protected {
                    path: PathBuf::from("/w/.git/hooks"),
                    origin: "sandbox.protected".into(),
                }]
            } else {
                vec![]
            },
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
    }

    /// The message of a refusal; any other result fails the test.
    fn refused(r: Result<Choice, Error>) -> String {
        match r {
            Err(e) if e.kind() == ErrorKind::Refused => e.to_string(),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    fn machine(abi: i32, seccomp: bool) -> Machine {
        Machine {
            platform: Platform::Linux,
            landlock_abi: abi,
            seccomp,
            root: false,
            bwrap: None,
            sandbox_exec: None,
            outer: None,
            own_namespaces: false,
        }
    }

    fn mac(sandbox_exec: bool) -> Machine {
        Machine {
            platform: Platform::MacOs,
            landlock_abi: 0,
            seccomp: false,
            root: false,
            bwrap: None,
            sandbox_exec: sandbox_exec.then(|| PathBuf::from("/usr/bin/sandbox-exec")),
            outer: None,
            own_namespaces: false,
        }
    }

    /// A clone refused at run time: refused where the probe said the namespaces can be made
    /// (what `profile` and `doctor` reported), for root and a user alike; elsewhere the run
    /// goes on under seccomp with the gap named, unless what it needs lives only there.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_clone_refused_at_run_time_refuses_where_the_probe_said_yes() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        for root in [false, true] {
            let r = without_namespaces(true, &profile(false), true, root, &e);
            assert!(
                matches!(&r, Err(Error::Refused(m)) if m.contains("could not make the command's own namespaces")),
                "{r:?}"
            );
            let gap = without_namespaces(false, &profile(false), true, root, &e).unwrap();
            assert!(
                gap.contains("no PID, IPC, network and mount namespaces"),
                "{gap}"
            );
            assert_eq!(gap.contains("no read-only mount tree"), root, "{gap}");
            let r = without_namespaces(false, &profile(true), true, root, &e);
            assert!(
                matches!(&r, Err(Error::Refused(m)) if m.contains("keeps /w/.git/hooks read-only")),
                "{r:?}"
            );
            let mut proxy = profile(false);
            proxy.network = Network::Proxy;
            let r = without_namespaces(false, &proxy, true, root, &e);
            assert!(
                matches!(&r, Err(Error::Refused(m)) if m.contains("needs a network namespace")),
                "{r:?}"
            );
        }
    }

    #[test]
    fn macos_picks_seatbelt_and_never_falls_back() {
        let sb = Chosen::Seatbelt {
            sandbox_exec: PathBuf::from("/usr/bin/sandbox-exec"),
        };
        for requested in [Backend::Auto, Backend::Seatbelt] {
            for protected in [false, true] {
                let c = choose(requested, &profile(protected), true, &mac(true)).unwrap();
                assert_eq!(c.backend, sb);
                assert!(c.warnings.is_empty());
            }
            // Missing sandbox-exec: a refusal whatever require_os_sandbox says.
            for require in [true, false] {
                let e = refused(choose(requested, &profile(false), require, &mac(false)));
                assert!(
                    e.contains("/usr/bin/sandbox-exec") && e.contains("missing"),
                    "{e}"
                );
            }
        }
        for requested in [Backend::Landlock, Backend::Bwrap] {
            let e = refused(choose(requested, &profile(false), false, &mac(true)));
            assert!(e.contains("only on Linux"), "{e}");
        }
        assert!(
            refused(choose(Backend::None, &profile(false), true, &mac(true)))
                .contains("refusing to run unconfined")
        );
        assert_eq!(
            choose(Backend::None, &profile(false), false, &mac(true))
                .unwrap()
                .backend,
            Chosen::Unconfined
        );
    }

    #[test]
    fn macos_refuses_what_seatbelt_cannot_enforce_or_pass() {
        let mut p = profile(false);
        p.limits.memory = Some(1 << 30);
        let e = refused(choose(Backend::Auto, &p, false, &mac(true)));
        assert!(e.contains("sandbox.limits.memory"), "{e}");
        let mut p = profile(false);
        p.rules.push(PathRule {
            path: PathBuf::from("/w/a\"b"),
            access: Access::READ,
            origin: "sandbox.extra_read".into(),
        });
        let e = refused(choose(Backend::Seatbelt, &p, true, &mac(true)));
        assert!(
            e.contains("double quote") && e.contains("sandbox.extra_read"),
            "{e}"
        );
    }

    #[test]
    fn network_proxy_never_runs_unconfined() {
        let mut p = profile(false);
        p.network = Network::Proxy;
        for m in [machine(7, true), machine(0, true), mac(true)] {
            let e = refused(choose(Backend::None, &p, false, &m));
            assert!(e.contains("sandbox.network = \"proxy\""), "{e}");
        }
        let e = refused(choose(Backend::Auto, &p, false, &machine(0, true)));
        assert!(e.contains("proxy") && e.contains("no Landlock"), "{e}");
        // Confined, it runs: the namespace does the work, Landlock narrows TCP on ABI 4+.
        let c = choose(Backend::Auto, &p, true, &machine(7, true)).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
    }

    #[test]
    fn the_proxys_handoff_and_the_profile_must_agree() {
        let spec = |proxy: Option<run::ProxyHandoff>| run::Spec {
            program: "/bin/true".into(),
            args: vec![],
            cwd: "/".into(),
            env: vec![],
            timeout: None,
            stdio: Default::default(),
            cancel: None,
            proxy,
            release: None,
        };
        let handoff = |port| {
            let (tx, _) = std::sync::mpsc::channel();
            Some(run::ProxyHandoff {
                port,
                listener: tx,
                forwards: Vec::new(),
            })
        };
        let landlock = Choice {
            backend: Chosen::Landlock { abi: 7 },
            warnings: vec![],
            outer_network: false,
            outer_devices: false,
            namespaces: false,
        };
        let tmp = std::path::Path::new("/nonexistent");
        let mut proxy = profile(false);
        proxy.network = Network::Proxy;
        let refused = |p: &Profile, c: &Choice, s: run::Spec| match execute(
            c,
            &Built::default(),
            p,
            s,
            tmp,
            &mut vec![],
            None,
        ) {
            Err(e) if e.kind() == ErrorKind::Failed => e.to_string(),
            other => panic!("not refused: {other:?}"),
        };
        let e = refused(&proxy, &landlock, spec(None));
        assert!(e.contains("no proxy was started"), "{e}");
        let e = refused(&proxy, &landlock, spec(handoff(PROXY_PORT + 1)));
        assert!(e.contains(&format!("must be {PROXY_PORT}")), "{e}");
        let unconfined = Choice {
            backend: Chosen::Unconfined,
            warnings: vec![],
            outer_network: false,
            outer_devices: false,
            namespaces: false,
        };
        let e = refused(&proxy, &unconfined, spec(handoff(PROXY_PORT)));
        assert!(e.contains("cannot run unconfined"), "{e}");
        let e = refused(&profile(false), &landlock, spec(handoff(PROXY_PORT)));
        assert!(e.contains("does not say sandbox.network"), "{e}");
    }

    #[test]
    fn full_landlock() {
        let c = choose(Backend::Auto, &profile(false), true, &machine(7, true)).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn fails_closed_without_landlock_or_seccomp() {
        let e = refused(choose(
            Backend::Landlock,
            &profile(false),
            true,
            &machine(0, true),
        ));
        assert!(e.contains("no Landlock") && e.contains("refusing"), "{e}");
        let e = refused(choose(
            Backend::Auto,
            &profile(false),
            true,
            &machine(7, false),
        ));
        assert!(e.contains("seccomp"), "{e}");
        let c = choose(Backend::Auto, &profile(false), false, &machine(0, true)).unwrap();
        assert_eq!(c.backend, Chosen::Unconfined);
        assert!(c.warnings[0].contains("UNCONFINED"));
    }

    #[test]
    fn partial_abi_refused_when_required() {
        let e = refused(choose(
            Backend::Landlock,
            &profile(false),
            true,
            &machine(4, true),
        ));
        assert!(e.contains("ABI 4") && e.contains("signals"), "{e}");
        let c = choose(Backend::Landlock, &profile(false), false, &machine(4, true)).unwrap();
        assert!(c.warnings[0].contains("PARTIAL"));
    }

    #[test]
    fn protected_paths_run_on_landlock_only_where_its_mount_namespace_can_be_made() {
        for require in [true, false] {
            let e = refused(choose(
                Backend::Landlock,
                &profile(true),
                require,
                &machine(7, true),
            ));
            assert!(
                e.contains("/w/.git/hooks") && e.contains("mount namespace of its own"),
                "{e}"
            );
        }
        // Where it can, the backend's init keeps them read-only with mounts: as root and as
        // a user, when asked for by name.
        for root in [false, true] {
            let mut m = machine(7, true);
            m.own_namespaces = true;
            m.root = root;
            let c = choose(Backend::Landlock, &profile(true), true, &m).unwrap();
            assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
            assert!(c.warnings.is_empty(), "{:?}", c.warnings);
            // And the run refuses a clone the kernel refuses anyway (see `without_namespaces`).
            assert!(c.namespaces, "{c:?}");
            m.own_namespaces = false;
            let c = choose(Backend::Landlock, &profile(false), true, &m).unwrap();
            assert!(!c.namespaces, "{c:?}");
        }
    }

    #[test]
    fn auto_runs_protected_paths_and_root_on_landlock_where_it_can_mount() {
        let bw = Chosen::Bwrap {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            abi: 7,
        };
        let mut m = with_bwrap(machine(7, true), false);
        m.own_namespaces = true;
        let c = choose(Backend::Auto, &profile(true), true, &m).unwrap();
        assert_eq!(
            c.backend,
            Chosen::Landlock { abi: 7 },
            "a user's protected paths"
        );
        // Without bwrap as well: the mounts are cordon's own.
        m.bwrap = None;
        let c = choose(Backend::Auto, &profile(true), true, &m).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
        // Root too: the init's read-only mount tree keeps the system's files' modes, owners
        // and times, protected paths or not; bwrap only where the namespace cannot be made.
        let mut m = with_bwrap(machine(7, true), true);
        m.own_namespaces = true;
        for protected in [true, false] {
            let c = choose(Backend::Auto, &profile(protected), true, &m).unwrap();
            assert_eq!(
                c.backend,
                Chosen::Landlock { abi: 7 },
                "root, protected = {protected}"
            );
            assert!(c.warnings.is_empty(), "{:?}", c.warnings);
            // bwrap stays selectable by name.
            let c = choose(Backend::Bwrap, &profile(protected), true, &m).unwrap();
            assert_eq!(c.backend, bw);
        }
        m.own_namespaces = false;
        for protected in [true, false] {
            let c = choose(Backend::Auto, &profile(protected), true, &m).unwrap();
            assert_eq!(
                c.backend, bw,
                "root without its own namespace, protected = {protected}"
            );
        }
        // Inside an outer sandbox (no own_namespaces): bwrap or a refusal, as before.
        let m = nested(false, codex_outer(false));
        assert!(!m.own_namespaces);
        match choose(Backend::Auto, &profile(true), true, &m) {
            Ok(c) => assert_ne!(c.backend, Chosen::Landlock { abi: 7 }),
            Err(e) => assert_eq!(e.kind(), ErrorKind::Refused),
        }
    }

    #[test]
    fn none_and_foreign_backends() {
        assert!(refused(choose(
            Backend::None,
            &profile(false),
            true,
            &machine(7, true)
        ))
        .contains("refusing to run unconfined"));
        assert_eq!(
            choose(Backend::None, &profile(false), false, &machine(7, true))
                .unwrap()
                .backend,
            Chosen::Unconfined
        );
        assert!(refused(choose(
            Backend::Seatbelt,
            &profile(false),
            false,
            &machine(7, true)
        ))
        .contains("macOS"));
        assert!(refused(choose(
            Backend::Bwrap,
            &profile(false),
            false,
            &machine(7, true)
        ))
        .contains("bubblewrap is not installed"));
    }

    fn with_bwrap(mut m: Machine, root: bool) -> Machine {
        m.bwrap = Some(PathBuf::from("/usr/bin/bwrap"));
        m.root = root;
        m
    }

    #[test]
    fn auto_picks_bwrap_when_the_policy_or_root_needs_it() {
        let bw = Chosen::Bwrap {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            abi: 7,
        };
        let c = choose(
            Backend::Auto,
            &profile(true),
            true,
            &with_bwrap(machine(7, true), false),
        )
        .unwrap();
        assert_eq!(c.backend, bw, "protected paths need bwrap");
        let c = choose(
            Backend::Auto,
            &profile(false),
            true,
            &with_bwrap(machine(7, true), true),
        )
        .unwrap();
        assert_eq!(c.backend, bw, "root prefers bwrap");
        let c = choose(
            Backend::Auto,
            &profile(false),
            true,
            &with_bwrap(machine(7, true), false),
        )
        .unwrap();
        assert_eq!(
            c.backend,
            Chosen::Landlock { abi: 7 },
            "nothing needs bwrap"
        );
        let c = choose(Backend::Auto, &profile(false), true, &machine(7, true)).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
    }

    #[test]
    fn a_needed_bwrap_that_is_missing_is_a_refusal() {
        let e = refused(choose(
            Backend::Auto,
            &profile(true),
            false,
            &machine(7, true),
        ));
        assert!(e.contains("bubblewrap is not installed"), "{e}");
        let e = refused(choose(
            Backend::Bwrap,
            &profile(false),
            false,
            &machine(7, true),
        ));
        assert!(e.contains("bubblewrap is not installed"), "{e}");
    }

    #[test]
    fn root_without_bwrap_is_refused_unless_landlock_is_asked_for() {
        let mut root = machine(7, true);
        root.root = true;
        for require in [true, false] {
            let e = refused(choose(Backend::Auto, &profile(false), require, &root));
            assert!(
                e.contains("running as root")
                    && e.contains("`bubblewrap`")
                    && e.contains("--backend landlock"),
                "{e}"
            );
        }
        // Named, the weaker backend is the operator's choice.
        let c = choose(Backend::Landlock, &profile(false), true, &root).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
        // An unprivileged user without bwrap still gets Landlock from `auto`.
        let c = choose(Backend::Auto, &profile(false), true, &machine(7, true)).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
    }

    #[test]
    fn dangerous_roots_are_refused_on_every_backend() {
        let mut p = profile(false);
        p.rules.push(PathRule {
            path: PathBuf::from("/proc"),
            access: Access {
                write: true,
                exec: true,
                device: false,
            },
            origin: "sandbox.paths.workspace (rw)".into(),
        });
        let m = with_bwrap(machine(7, true), true);
        for backend in [
            Backend::Auto,
            Backend::Landlock,
            Backend::Bwrap,
            Backend::None,
        ] {
            let e = refused(choose(backend, &p, false, &m));
            assert!(e.contains("writable root /proc"), "{e}");
        }
    }

    #[test]
    fn bwrap_still_needs_landlock_and_seccomp_inside() {
        let e = refused(choose(
            Backend::Bwrap,
            &profile(true),
            true,
            &with_bwrap(machine(0, true), false),
        ));
        assert!(e.contains("no Landlock"), "{e}");
        let e = refused(choose(
            Backend::Bwrap,
            &profile(true),
            true,
            &with_bwrap(machine(7, false), false),
        ));
        assert!(e.contains("seccomp"), "{e}");
    }

    /// A machine inside an outer sandbox like Codex's (bwrap installed, Landlock ABI 7).
    fn nested(root: bool, outer: probe::Outer) -> Machine {
        let mut m = with_bwrap(machine(7, true), root);
        m.outer = Some(outer);
        m
    }

    /// Codex's `workspace-write` sandbox as probed from inside it (see docs/hooks.md).
    fn codex_outer(root: bool) -> probe::Outer {
        probe::Outer {
            name: "Codex's sandbox",
            no_new_privs: true,
            seccomp: true,
            user_namespace: true,
            root_without_capabilities: root,
            inet_refused: true,
            netlink_refused: true,
            system_read_only: true,
            proc_covered: false,
        }
    }

    #[test]
    fn nested_as_a_user_bwrap_stays_in_the_outer_network_when_it_is_closed_or_filters_suffice() {
        let m = nested(false, codex_outer(false));
        let c = choose(Backend::Auto, &profile(true), true, &m).unwrap();
        assert!(matches!(c.backend, Chosen::Bwrap { .. }), "{c:?}");
        assert!(c.outer_network && c.warnings.is_empty(), "{c:?}");
        // An outer that allows inet sockets: on Landlock ABI 6 and later seccomp and Landlock
        // keep the command off the network without a namespace (issue 25), so bwrap stays in
        // the outer's.
        let mut open = codex_outer(false);
        open.inet_refused = false;
        let c = choose(
            Backend::Auto,
            &profile(true),
            true,
            &nested(false, open.clone()),
        )
        .unwrap();
        assert!(c.outer_network && c.warnings.is_empty(), "{c:?}");
        assert_eq!(
            c.network(Network::Deny),
            network::Isolation::Filters { landlock_abi: 7 }
        );
        // Before ABI 6 it needs a namespace of its own, which bwrap cannot make there.
        let mut old = nested(false, open);
        old.landlock_abi = 5;
        let e = refused(choose(Backend::Auto, &profile(true), false, &old));
        assert!(
            e.contains("Codex's sandbox") && e.contains("allows inet sockets"),
            "{e}"
        );
        // The proxy needs loopback of its own: refused, naming Codex's setting.
        let mut proxy = profile(true);
        proxy.network = Network::Proxy;
        let e = refused(choose(Backend::Auto, &proxy, true, &m));
        assert!(
            e.contains("sandbox_workspace_write.network_access = true")
                && e.contains("-s danger-full-access"),
            "{e}"
        );
        // Allowed network: bwrap shares the (outer's) network as it always does.
        let mut allow = profile(true);
        allow.network = Network::Allow;
        let c = choose(Backend::Auto, &allow, true, &m).unwrap();
        assert!(!c.outer_network, "{c:?}");
        // Outside any sandbox nothing changes.
        let c = choose(
            Backend::Auto,
            &profile(true),
            true,
            &with_bwrap(machine(7, true), false),
        )
        .unwrap();
        assert!(!c.outer_network, "{c:?}");
    }

    #[test]
    fn nested_as_root_without_capabilities() {
        let m = nested(true, codex_outer(true));
        assert_eq!(m.bwrap_usable(), None);
        // Protected paths on writable mounts need bwrap, which cannot start: refused, naming
        // the outer sandbox and what lets cordon run.
        let e = refused(choose(Backend::Auto, &profile(true), true, &m));
        assert!(
            e.contains("root without capabilities inside Codex's sandbox")
                && e.contains("-s danger-full-access")
                && e.contains("cordon install codex --sandbox cordon"),
            "{e}"
        );
        let e = refused(choose(Backend::Bwrap, &profile(false), true, &m));
        assert!(e.contains("bubblewrap cannot start here"), "{e}");
        // Nothing protected: Landlock, with root's remaining gap named (never Full).
        let c = choose(Backend::Auto, &profile(false), true, &m).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
        assert!(
            c.warnings.len() == 1 && c.warnings[0].contains("modes, owners and times"),
            "{c:?}"
        );
        // Root WITH capabilities in the outer's user namespace (a rootless container): bwrap
        // runs, but keeps the outer's device nodes (no mknod there), named.
        let mut caps = codex_outer(false);
        caps.netlink_refused = false;
        let c = choose(
            Backend::Auto,
            &profile(true),
            true,
            &nested(true, caps.clone()),
        )
        .unwrap();
        assert!(matches!(c.backend, Chosen::Bwrap { .. }), "{c:?}");
        assert!(
            c.outer_devices && c.warnings.len() == 1 && c.warnings[0].contains("refuses mknod"),
            "{c:?}"
        );
        // Not in a user namespace: cordon makes its own nodes, as outside any sandbox.
        caps.user_namespace = false;
        let c = choose(Backend::Auto, &profile(true), true, &nested(true, caps)).unwrap();
        assert!(!c.outer_devices && c.warnings.is_empty(), "{c:?}");
        // The system is writable in the outer: root's command could chmod it; refused.
        let mut rw = codex_outer(true);
        rw.system_read_only = false;
        let e = refused(choose(
            Backend::Auto,
            &profile(false),
            true,
            &nested(true, rw),
        ));
        assert!(
            e.contains("running as root, but bubblewrap cannot start here")
                && e.contains("-s danger-full-access"),
            "{e}"
        );
    }
}
