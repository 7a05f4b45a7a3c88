//! The facade: a policy prepared once for this machine ([`prepare`]) and run many times
//! ([`Prepared::run`]).
//!
//! What depends only on the policy and the machine — the profile, the backend and whether it
//! can enforce the profile, the seccomp program, the Landlock rules' paths opened, the sweep
//! of TMPDIRs left by killed cordons — is done once, by [`prepare`]. What must be true at the moment a command starts is done by each run, once:
//! its private TMPDIR, the check that no root or protected path was re-pointed since (a command
//! of an earlier run may have planted a link), the scrubbed environment, the proxy's hand-off,
//! the command under the backend, and the after-run scan of the writable roots.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_policy::{Backend, Mode, Policy};

use crate::planted::{Finding, MissingPlace, Snapshot, MAX_ENTRIES};
use crate::run::{ChildStdio, Outcome, ProxyHandoff};
use crate::{Choice, Chosen, Error, Machine, Profile};

/// A policy prepared for this machine: its profile and the backend that enforces it.
/// `Send + Sync`: a long-lived front end keeps one and runs every call with it.
#[derive(Debug)]
pub struct Prepared {
    /// The policy's profile, without a run's private TMPDIR.
    profile: Profile,
    choice: Choice,
    /// What the backend builds once for every run (the seccomp program, the Landlock rules'
    /// paths opened).
    built: crate::Built,
    /// The roots and `extra_read` paths as the policy names them (for the re-point check).
    named: Vec<(PathBuf, String)>,
    /// `sandbox.env`: the names passed beyond the built-in list.
    env: Vec<String>,
    /// The writable roots, watched by the after-run scan.
    writable: Vec<PathBuf>,
    /// Where the private TMPDIRs are made.
    tmp_base: PathBuf,
    /// `sandbox.limits.timeout`.
    timeout: Option<Duration>,
    /// `false` for [`describe`]: shown, never run.
    runs: bool,
    /// [`Prepared::reuse_sandbox`]: the bwrap sandbox runs share (started by the first run,
    /// replaced when it broke); `None` when every run builds its own.
    zygote: Option<std::sync::Mutex<Option<crate::run::zygote::Zygote>>>,
}

/// Prepares `policy` for `machine` with `backend` (the policy's `sandbox.backend`, or the
/// operator's override): the profile, the backend that can enforce it (refused, exit 125, when
/// none can; see [`crate::choose`]). Also removes the private TMPDIRs of cordons that were
/// killed.
pub fn prepare(policy: &Policy, machine: &Machine, backend: Backend) -> Result<Prepared, Error> {
    // The rules' paths stay open from here to the Landlock ruleset: each is opened once.
    let (profile, opened) = Profile::from_policy_opened(policy);
    let choice = crate::choose(
        backend,
        &profile,
        policy.sandbox.require_os_sandbox,
        machine,
    )?;
    let tmp_base = std::env::temp_dir();
    // Lists only this user's cordon directory (see `tmp.rs`); what it finds is removed on a
    // thread of its own beside the first run's start.
    crate::tmp::sweep(&tmp_base);
    let built = crate::Built::new(&choice, &profile, opened);
    Ok(prepared(policy, profile, choice, built, tmp_base, true))
}

/// `policy`'s profile, to be shown ([`Prepared::render`]) and never run: no backend is chosen
/// (the artifacts of every backend can be shown on any machine), but a writable root that
/// hands over the system is refused as a run would refuse it.
pub fn describe(policy: &Policy) -> Result<Prepared, Error> {
    let profile = Profile::from_policy(policy);
    crate::roots::check(&profile)?;
    let choice = Choice {
        backend: Chosen::Unconfined,
        warnings: vec!["prepared to be shown, not run".into()],
        outer_network: false,
        outer_devices: false,
        namespaces: false,
    };
    Ok(prepared(
        policy,
        profile,
        choice,
        crate::Built::default(),
        std::env::temp_dir(),
        false,
    ))
}

fn prepared(
    policy: &Policy,
    profile: Profile,
    choice: Choice,
    built: crate::Built,
    tmp_base: PathBuf,
    runs: bool,
) -> Prepared {
    let sb = &policy.sandbox;
    #[cfg(target_os = "linux")]
    let named = crate::resolve::named(policy);
    #[cfg(not(target_os = "linux"))]
    let named = Vec::new();
    Prepared {
        profile,
        choice,
        built,
        named,
        env: sb.env.clone(),
        writable: sb
            .paths
            .iter()
            .filter(|p| p.mode == Mode::ReadWrite)
            .map(|p| p.root.clone())
            .collect(),
        tmp_base,
        timeout: sb.limits.timeout,
        runs,
        zygote: None,
    }
}

/// What a run executes.
#[derive(Debug, Clone)]
pub struct Command {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// `None`: the policy's `sandbox.limits.timeout`.
    pub timeout: Option<Duration>,
}

/// What a run is connected to: its stdio, what cancels it, and the proxy that serves it.
#[derive(Debug, Default)]
pub struct Io {
    /// The command's stdin, stdout and stderr (default: cordon's own, relayed).
    pub stdio: ChildStdio,
    /// Cancels the run (see [`crate::run::Cancel`]).
    pub cancel: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
    /// Under `sandbox.network = "proxy"`: where the listener made inside the command's network
    /// namespace goes (required then, refused otherwise), and the variables that point the
    /// command's clients at the proxy (they replace the scrubbed environment's).
    pub proxy: Option<(ProxyHandoff, Vec<(String, String)>)>,
    /// Files handed to the command in its private TMPDIR (written before it starts, read-only),
    /// each named to it by variables: a CA bundle for cordon's proxy, say.
    pub files: Vec<RunFile>,
    /// What the command waits for: the run builds its sandbox (the private TMPDIR, the
    /// re-point check, the ruleset, the namespaces and their mounts, bwrap's) and calls this
    /// meanwhile; the command starts only once it returned `Ok`. `Err(why)` ends the run
    /// before the command started ([`Error::Refused`]). The gate makes its decision's audit
    /// record durable here.
    pub release: Option<crate::Release>,
    /// Where the after-run scan's listings are kept between runs over these roots
    /// ([`crate::Listings`]): the run's "before" snapshot reads only the directories changed
    /// since, and a scan that completed keeps its own. `None`: every directory is read.
    pub listings: Option<crate::Listings>,
    /// Called once with the earlier contents the run's "before" snapshot read
    /// ([`crate::planted::Snapshot::kept`]), to keep them where no run reaches: a cordon
    /// killed during the run leaves the next run what to put back ([`crate::Kept`]).
    pub keep: Option<Keep>,
}

/// Where a run keeps the earlier contents of its watched files ([`Io::keep`]).
pub struct Keep(KeepFn);

/// Called right before the run's "before" snapshot (the caller may take a lock there, and
/// hold it in what it returns); what it returns is called right after it, with the earlier
/// contents the snapshot read ([`crate::Kept`]), and answers what the run's scan puts back
/// ([`Base`]). `Err(why)`: they could not be kept, and the command does not start.
type KeepFn = Box<dyn FnOnce() -> KeptFn + Send>;
type KeptFn = Box<dyn FnOnce(&[u8]) -> Result<Base, String> + Send>;

/// What a run's scan puts back of what the run changed or removed ([`Keep`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Base {
    /// What its own "before" snapshot read: no other run over these roots had begun.
    Own,
    /// What the first of the runs over these roots still going kept before its command began
    /// (its [`crate::planted::Snapshot::kept`]): this run's snapshot, taken while they went,
    /// may hold their plants ([`crate::planted::Snapshot::restore_from`]).
    Earlier(Vec<u8>),
    /// Nothing: what this run's snapshot read may be another run's plant, and no earlier
    /// state is known (the scan moves aside only, and says so).
    Nothing,
}

impl Keep {
    pub fn new(f: impl FnOnce() -> KeptFn + Send + 'static) -> Keep {
        Keep(Box::new(f))
    }
}

impl std::fmt::Debug for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keep")
    }
}

/// A file [`Io::files`] hands to a run.
#[derive(Debug, Clone)]
pub struct RunFile {
    /// Its name in the run's private TMPDIR (one component).
    pub name: String,
    pub contents: Vec<u8>,
    /// Variables set to its path (they replace the scrubbed environment's).
    pub vars: Vec<String>,
}

/// What the kernel enforced for a run, as rust-landlock's `RestrictionStatus` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// Everything the profile says.
    Full,
    /// Less than the profile says, accepted because `require_os_sandbox = false` (or, for a
    /// part the design covers otherwise, always): each gap named.
    Partial(Vec<String>),
    /// No kernel sandbox at all (`backend = "none"`, or none available and accepted).
    Unconfined(String),
}

impl std::fmt::Display for Enforcement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Enforcement::Full => f.write_str("full"),
            Enforcement::Partial(gaps) => write!(f, "partial: {}", gaps.join("; ")),
            Enforcement::Unconfined(why) => write!(f, "unconfined: {why}"),
        }
    }
}

/// How a run's sandbox was made (see [`Prepared::reuse_sandbox`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunPath {
    /// Built for this run alone (every backend's way, and bwrap's without reuse).
    OneShot,
    /// In the bwrap sandbox this prepared policy keeps for its runs (the zygote).
    Reused,
    /// Built for this run alone although reuse was asked for, and why (the shared sandbox
    /// was busy with another run, could not start, or cannot carry this command).
    OneShotInstead(String),
}

impl std::fmt::Display for RunPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunPath::OneShot => f.write_str("one-shot"),
            RunPath::Reused => f.write_str("reused (the session's bwrap sandbox)"),
            RunPath::OneShotInstead(why) => write!(f, "one-shot instead of reused: {why}"),
        }
    }
}

/// How a run went.
#[derive(Debug)]
pub struct Ran {
    /// How the command ended, or why it could not start (after the TMPDIR, the checks and the
    /// snapshot were made: the after-run scan ran either way).
    pub exit: Result<Outcome, Error>,
    /// What the kernel enforced.
    pub enforcement: Enforcement,
    /// What the run left in the writable roots that makes the operator's tools run code,
    /// already moved aside (see [`crate::planted`]).
    pub findings: Vec<Finding>,
    /// The after-run scan stopped at [`MAX_ENTRIES`] entries (`before` or `after` the run).
    pub scan_truncated: Vec<&'static str>,
    /// How its sandbox was made.
    pub path: RunPath,
    /// How the command was kept off the network (or not), as the backend plans it
    /// ([`Prepared::network`]); a run whose namespaces the kernel refused names that in
    /// `enforcement`.
    pub network: crate::NetworkIsolation,
}

impl Prepared {
    /// The profile runs enforce (without a run's private TMPDIR).
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The backend runs use.
    pub fn backend(&self) -> &Chosen {
        &self.choice.backend
    }

    /// Degradations accepted because `require_os_sandbox` is false: show them.
    pub fn warnings(&self) -> &[String] {
        &self.choice.warnings
    }

    /// The writable roots the after-run scan watches.
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.writable
    }

    /// What the backend enforces, before any run (a run may add a gap: see [`Ran`]).
    pub fn enforcement(&self) -> Enforcement {
        match (&self.choice.backend, self.choice.warnings.is_empty()) {
            (Chosen::Unconfined, _) => Enforcement::Unconfined(
                self.choice
                    .warnings
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "backend `none`".into()),
            ),
            (_, true) => Enforcement::Full,
            (_, false) => Enforcement::Partial(self.choice.warnings.clone()),
        }
    }

    /// How the backend keeps the command off the network: "deny" without a network
    /// namespace where seccomp and Landlock (ABI 6) do it, in one where the kernel's Landlock
    /// is older (see `network.rs`).
    pub fn network(&self) -> crate::NetworkIsolation {
        self.choice.network(self.profile.network)
    }

    /// For a front end that runs many commands (`cordon mcp`): bwrap runs share one sandbox,
    /// started by the first run and kept until this value is dropped, instead of starting
    /// bwrap each time (see `run/zygote.rs`: the same mounts and namespaces; each run gets
    /// Landlock and its own session fresh, its leftover processes are killed when it ends and
    /// the sandbox's `/tmp` is emptied after it). Runs are served one at a time; a run that
    /// finds the sandbox busy, or that it cannot carry, is built one-shot and says so
    /// ([`Ran::path`]). No effect on other backends, or under `sandbox.network = "proxy"`
    /// (each run's proxy listener is made in a network namespace of its own).
    pub fn reuse_sandbox(&mut self) {
        #[cfg(target_os = "linux")]
        if self.runs
            && matches!(self.choice.backend, Chosen::Bwrap { .. })
            && self.profile.network != cordon_policy::Network::Proxy
        {
            self.zygote = Some(std::sync::Mutex::new(None));
        }
    }

    /// Runs `command` under the prepared sandbox. Refuses (exit 125) when a root, an
    /// `extra_read` path or a protected path was re-pointed through a link a run could have
    /// planted, or when the private TMPDIR cannot be made; the command never starts then.
    pub fn run(&self, command: Command, io: Io) -> Result<Ran, Error> {
        if !self.runs {
            return Err(Error::other(
                "this sandbox was prepared to be shown, not run",
            ));
        }
        // The shared sandbox, when there is one and no other run holds it.
        let mut path = RunPath::OneShot;
        let mut slot = match &self.zygote {
            Some(m) => match m.try_lock() {
                Ok(g) => Some(g),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => {
                    path = RunPath::OneShotInstead(
                        "the session's sandbox is busy with another run".into(),
                    );
                    None
                }
            },
            None => None,
        };
        if let Some(z) = slot.as_deref_mut() {
            // Emptied after every run; again here, in case a call ended before its command
            // ran (a refused re-point check, a file it could not be handed) after writing there.
            if let Some(z) = z.as_mut() {
                z.empty_tmp();
            }
            // Gone or broken since the last run: replaced (that run was refused, or ended).
            if z.as_ref().is_some_and(|z| !z.usable()) {
                *z = None;
            }
            if z.is_none() {
                #[cfg(target_os = "linux")]
                crate::resolve::check_named(&self.named, &self.profile)?;
                match crate::run::zygote::Zygote::start(
                    &self.choice,
                    &self.built,
                    &self.profile,
                    &self.tmp_base,
                ) {
                    Ok(started) => *z = Some(started),
                    Err(e) => path = RunPath::OneShotInstead(e.to_string()),
                }
            }
        }
        let mut zygote = slot.as_deref_mut().and_then(|z| z.as_mut());
        if zygote.is_some() {
            path = RunPath::Reused;
        }
        // A private, per-run TMPDIR: /tmp itself is shared with every process on the machine.
        // (The shared sandbox's /tmp is emptied after each run instead.)
        let (_own_tmp, tmp_path) = match &zygote {
            Some(z) => (None, z.tmp().to_path_buf()),
            None => {
                let t = crate::tmp::PrivateTmp::create(&self.tmp_base)?;
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let tmp_dir: &Path = &tmp_path;
        let profile = self.profile.clone().with_private_tmp(tmp_dir);
        // A name the policy uses that an earlier run re-pointed (a symlink in a writable root,
        // a second name for a protected file) would grant what it now reaches: checked once,
        // right before the command starts.
        #[cfg(target_os = "linux")]
        crate::resolve::check_named(&self.named, &profile)?;
        let mut env = crate::env::scrub(std::env::vars_os(), &self.env, tmp_dir.as_os_str());
        let proxy = io.proxy.map(|(handoff, vars)| {
            // Every proxy variable the command would inherit goes (a NO_PROXY would send
            // loopback around the proxy, into the sandbox's own empty loopback).
            env.retain(|(k, _)| !k.to_str().is_none_or(crate::env::is_proxy_variable));
            // cordon's values replace whatever the command would have inherited by that name.
            env.retain(|(k, _)| !vars.iter().any(|(n, _)| k == n.as_str()));
            env.extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
            handoff
        });
        if !io.files.is_empty() {
            // The private TMPDIR is cordon's, new, and no command has run in it yet; written
            // link-safely all the same.
            let dir = cordon_fs::safe::Dir::anchor(tmp_dir)
                .map_err(|e| Error::other(format!("cannot hand the command its files: {e}")))?;
            for f in io.files {
                dir.create_new(Path::new(&f.name), &f.contents, 0o444)
                    .map_err(|e| {
                        Error::other(format!("cannot hand the command {}: {e}", f.name))
                    })?;
                let path = tmp_dir.join(&f.name);
                env.retain(|(k, _)| !f.vars.iter().any(|n| k == n.as_str()));
                env.extend(
                    f.vars
                        .iter()
                        .map(|v| (v.into(), path.clone().into_os_string())),
                );
            }
        }
        let spec = crate::run::Spec {
            program: command.program,
            args: command.args,
            cwd: command.cwd,
            env,
            timeout: command.timeout.or(self.timeout),
            stdio: io.stdio,
            cancel: io.cancel,
            proxy,
            release: io.release,
        };
        // What the run leaves that the operator's tools run (a `.git` config, `.envrc`, …) is
        // found by comparing with this, and moved aside.
        let keeping = io.keep.map(|keep| (keep.0)());
        let mut before = Before::take(&self.writable, io.listings);
        if let Some(keeping) = keeping {
            match keeping(&before.snapshot.kept()).map_err(Error::Refused)? {
                Base::Own => {}
                Base::Earlier(kept) => before.snapshot.restore_from(crate::Kept::read(&kept)),
                // Another run's plant may be among them: never written back.
                Base::Nothing => before.snapshot.forget_contents(),
            }
        }
        let mut gaps = Vec::new();
        let exit = crate::execute(
            &self.choice,
            &self.built,
            &profile,
            spec,
            tmp_dir,
            &mut gaps,
            zygote.as_deref_mut().map(|z| (z, &mut path)),
        );
        if let Some(z) = zygote {
            // Nothing of the run is left running (the zygote answered only then): the next
            // run finds /tmp empty.
            z.empty_tmp();
        }
        drop(slot);
        let (findings, scan_truncated) = before.compare(&self.writable);
        let enforcement = match self.enforcement() {
            Enforcement::Full if !gaps.is_empty() => Enforcement::Partial(gaps),
            Enforcement::Partial(mut g) => {
                g.extend(gaps);
                Enforcement::Partial(g)
            }
            e => e,
        };
        Ok(Ran {
            exit,
            enforcement,
            findings,
            scan_truncated,
            path,
            network: self.network(),
        })
    }

    /// The artifact `format` shows of the profile, as `cordon profile` prints it (the private
    /// TMPDIR stands at [`crate::render::PRIVATE_TMP`]). Refused like a run when a root or a
    /// protected path was re-pointed: no artifact is shown for a profile built through a
    /// planted link.
    pub fn render(&self, format: &crate::Format) -> Result<String, Error> {
        let profile = self
            .profile
            .clone()
            .with_private_tmp(Path::new(crate::render::PRIVATE_TMP));
        #[cfg(target_os = "linux")]
        crate::resolve::check_named(&self.named, &profile)?;
        crate::render::artifact(&profile, format)
    }
}

/// The watched paths of the writable roots before a run.
struct Before {
    snapshot: Snapshot,
    /// The default trust-store places in the roots that do not exist (the existing ones are
    /// kept from the command by the sandbox).
    stores: Vec<MissingPlace>,
    listings: Option<crate::Listings>,
    /// The kept listings were used (and so are on file).
    kept: bool,
}

impl Before {
    fn take(roots: &[PathBuf], listings: Option<crate::Listings>) -> Before {
        let stores = MissingPlace::trust_stores_in(roots);
        let kept = listings.as_ref().and_then(|l| l.load(roots));
        Before {
            snapshot: Snapshot::take_with(roots, MAX_ENTRIES, kept.as_ref()),
            stores,
            listings,
            kept: kept.is_some(),
        }
    }

    /// What appeared or changed since, moved aside; and when the scan stopped early.
    fn compare(self, roots: &[PathBuf]) -> (Vec<Finding>, Vec<&'static str>) {
        // Not while a wrapped server's live check moves files aside (`planted::Watch`).
        let _one = crate::planted::scanning();
        let stores = self.stores.iter().filter_map(MissingPlace::check);
        let before = &self.snapshot;
        let after = Snapshot::take_with(roots, MAX_ENTRIES, Some(before));
        let truncated: Vec<&'static str> = [(before, "before"), (&after, "after")]
            .into_iter()
            .filter(|(s, _)| s.truncated)
            .map(|(_, when)| when)
            .collect();
        // Each move journaled beside the listings (out of every run's reach): a cordon killed
        // in the middle of one leaves it for the next run to finish.
        let journal = self.listings.as_ref().map(|l| l.journal(roots));
        let mut findings = after.findings_journaled(before, journal.as_ref());
        findings.extend(stores);
        // For the next run's "before": what this walk read (a directory cordon just moved a
        // finding out of has a new ctime, and is read again). Not when neither walk read a
        // directory, a ref or a reflog: what is on file holds as it is.
        let read =
            before.listed + after.listed + before.git_read() + after.git_read() > 0 || !self.kept;
        if let Some(l) = self
            .listings
            .as_ref()
            .filter(|_| read && truncated.is_empty())
        {
            l.store(&after, roots);
        }
        (findings, truncated)
    }
}

/// The names of the variables a sandboxed command inherits from this process under `policy`
/// (the built-in list, `LC_*`, `sandbox.env`, as scrubbed for a run): what a shell line may
/// read without assigning.
pub fn inherited_names(policy: &Policy) -> Vec<String> {
    crate::env::scrub(std::env::vars_os(), &policy.sandbox.env, "".as_ref())
        .into_iter()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect()
}
