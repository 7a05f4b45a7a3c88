//! `cordon exec`: decide, then run under the OS sandbox.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cordon_approval::audit::AuditLog;
use cordon_approval::RuleSet;
use cordon_approval::{amend, By, Engine, Key, Outcome, Presentation, Preview, Request, Rules};
use cordon_ossandbox::run::{self, Spec, StartError};
use cordon_ossandbox::{choose, env, execute, Machine, Profile};
use cordon_policy::trust::{self, TrustStore};
use cordon_policy::{ApprovalMode, Mode, Policy};
use cordon_tools::assess::{assess, ShellAssessment, ShellContext};
use cordon_tools::shell;

use crate::prompt::Prompt;
use crate::session::Session;
use crate::{check, refuse, term, ExecArgs, EXIT_DENIED, EXIT_FAILURE};

pub fn run(args: ExecArgs) -> i32 {
    let (cwd, policy) = match crate::load_policy(args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if let Err(e) = check::examples(&policy) {
        return refuse(EXIT_FAILURE, e);
    }

    // The sandbox first: a run that can never happen is refused before anyone is asked and
    // before anything is recorded. A private, per-run TMPDIR: /tmp itself is shared with
    // every process on the machine. One left by a cordon that was killed is removed here.
    let tmp = match PrivateTmp::create(&std::env::temp_dir()) {
        Ok(t) => t,
        Err(e) => {
            return refuse(
                EXIT_FAILURE,
                format!("cannot create the private TMPDIR: {e}"),
            )
        }
    };
    let profile = Profile::from_policy(&policy).with_private_tmp(tmp.path());
    // A name the policy uses that an earlier run re-pointed (a symlink in a writable root, a
    // second name for a protected file) would grant what it now reaches.
    #[cfg(target_os = "linux")]
    if let Err(r) = cordon_ossandbox::resolve::check(&policy, &profile) {
        // One line, whatever a planted link's target holds.
        return refuse(EXIT_FAILURE, crate::term::clean(&r.0));
    }
    // A policy or audit log named through a symlink in a writable root: the command could
    // re-point the link, at a policy of its own for the next call, or away from the log (whose
    // history it could then delete, no longer protected).
    let named = args
        .policy
        .clone()
        .unwrap_or_else(|| cwd.join(cordon_policy::DEFAULT_POLICY_FILE));
    let log = policy.approval.audit_log.path();
    for (what, path) in [
        (
            "the policy",
            policy.path.is_some().then_some(named.as_path()),
        ),
        (policy.approval.audit_log.key(), log),
    ] {
        let Some((link, root)) = path.and_then(|p| symlink_in_writable_root(p, &profile)) else {
            continue;
        };
        return refuse(
            EXIT_FAILURE,
            format!(
                "{what} {} is named through the symlink {} inside the writable root {}: the command could re-point it; name the real path",
                path.unwrap_or(Path::new("")).display(),
                link.display(),
                root.display()
            ),
        );
    }
    // Remembered rules beside a policy in a writable root are protected as a file that exists
    // (a missing one would need a placeholder file for the run's duration).
    if let Some(rules_file) = policy.rules_file() {
        if profile.protected.iter().any(|p| p.path == rules_file) {
            if let Err(e) = amend::ensure(&rules_file) {
                return refuse(EXIT_FAILURE, format!("remembered rules {e}"));
            }
        }
    }
    let backend = args
        .backend
        .map(|b| b.to_policy())
        .unwrap_or(policy.sandbox.backend);
    let choice = match choose(
        backend,
        &profile,
        policy.sandbox.require_os_sandbox,
        &Machine::probe(),
    ) {
        Ok(c) => c,
        Err(r) => return refuse(EXIT_FAILURE, r),
    };
    for w in &choice.warnings {
        eprintln!("cordon: warning: {w}");
    }
    // The trust store inside a writable root is kept read-only by the sandbox: make sure it
    // is a directory to bind, not a missing name (covered, and kept from being created, only
    // while the run lasts).
    let store = TrustStore::from_env();
    if profile
        .protected
        .iter()
        .any(|p| p.origin == trust::PROTECTED_ORIGIN)
    {
        if let Err(e) = store.ensure() {
            return refuse(EXIT_FAILURE, e);
        }
    }
    // What would run, as the shell tool understands it.
    let (argv, parsed) = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => (
            // bash where installed (the analysis is bash's), so what was judged is what runs.
            vec![
                shell::line_shell().to_string(),
                "-c".to_string(),
                line.clone(),
            ],
            shell::parse_in(line, &inherited(&policy)),
        ),
        (None, false) => (
            args.argv.clone(),
            shell::parse_argv_in(&args.argv, &inherited(&policy)),
        ),
        (None, true) => {
            return refuse(
                EXIT_FAILURE,
                "nothing to run: give -c STRING or -- PROG ARGS",
            )
        }
    };
    let cx = ShellContext::for_policy(&policy, cwd.clone());
    let assessment = assess(&parsed, &RuleSet::new(&policy.shell), &cx);
    let shown = args.command.clone().unwrap_or_else(|| args.argv.join(" "));

    // The approval engine decides: the policy's rules, remembered "approve always" rules,
    // the session's grants and doom-loop count, the mode, and a person on the terminal.
    let rules_file = persisted_rules_file(&policy);
    let mut rules = Rules::from_policy(&policy);
    if let Ok(file) = &rules_file {
        match amend::load(file, &store) {
            Ok(persisted) => rules.add_persisted(persisted),
            Err(e) => return crate::refuse_rules(&e),
        }
    }
    let mut engine = Engine::with_rules(rules, &policy);
    if args.approve_all {
        // A flag may tighten the policy's mode, never loosen a stricter one: whoever can
        // start cordon (an agent, too) must not be able to turn the policy's refusals off.
        if matches!(
            policy.approval.mode,
            ApprovalMode::Strict | ApprovalMode::Deny
        ) {
            return refuse(
                EXIT_FAILURE,
                format!(
                    "--approve-all cannot loosen the policy's approval.mode = \"{}\" ({}); change the policy to allow it",
                    cordon_approval::mode_name(policy.approval.mode),
                    policy.source
                ),
            );
        }
        engine.set_mode(ApprovalMode::ApproveAll);
    } else if args.strict {
        engine.set_mode(ApprovalMode::Strict);
    }
    engine.set_can_ask(term::terminal_available());
    // "Approve always" rules are saved as part of the decision, so its record says whether
    // the rule was saved. What was written is kept, to be taken back should the record fail.
    let saved: Arc<Mutex<Vec<String>>> = Arc::default();
    if let Ok(file) = rules_file.clone() {
        let saved = saved.clone();
        let store = store.clone();
        engine.set_rule_store(move |a| {
            let wrote = amend::append(&file, &store, a).map_err(|e| e.to_string());
            match &wrote {
                Ok(Some(text)) => {
                    saved
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(text.clone());
                    eprintln!(
                        "cordon: remembered in {}: `{}` (exact)",
                        file.display(),
                        term::clean(&a.pattern)
                    )
                }
                Ok(None) => {}
                Err(e) => eprintln!("cordon: warning: not remembered: {}", term::clean(e)),
            }
            wrote
        });
    }
    let session_name = args.session.clone().or_else(|| {
        std::env::var("CORDON_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    let mut session = match &session_name {
        Some(name) => match Session::open(name, &cx.writable) {
            Ok(s) => Some(s),
            Err(e) => return refuse(EXIT_FAILURE, e),
        },
        None => None,
    };
    if let Some(s) = &session {
        s.restore(&mut engine);
    }
    // Every final decision is recorded (allow and deny) before anything runs; a log that
    // cannot be written stops the run (exit 125).
    let log = &policy.approval.audit_log;
    let Some(path) = log.path() else {
        return refuse(
            EXIT_FAILURE,
            "nowhere to record decisions: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path (set one of them)",
        );
    };
    if let cordon_policy::AuditLog::Default(_) = log {
        if let Err(e) = owned_by_caller(path) {
            return refuse(
                EXIT_FAILURE,
                format!("the default audit log {}: {e}; set XDG_STATE_HOME or approval.audit_log to a place of your own", path.display()),
            );
        }
    }
    let audit_session;
    match AuditLog::open(path) {
        Ok(log) => {
            let log = match &session {
                Some(s) => log.with_session(s.id.clone()),
                None => log,
            };
            audit_session = log.session().to_string();
            engine.set_audit(log)
        }
        Err(e) => {
            let hint = match log {
                cordon_policy::AuditLog::Default(_) => {
                    " (the default place; set approval.audit_log in the policy, or XDG_STATE_HOME, to record elsewhere)"
                }
                _ => "",
            };
            return refuse(EXIT_FAILURE, format!("audit log {e}{hint}"));
        }
    }
    let request = shell_request(&engine, &shown, &argv, &cwd, &assessment);
    let mut prompt = Prompt::new(rules_file.clone(), session_name.clone());
    let outcome = engine.decide_blocking(&request, &mut prompt);
    if let Some(s) = &mut session {
        if let Err(e) = s.save_from(&engine) {
            return refuse(EXIT_FAILURE, e);
        }
    }
    drop(session); // unlock: the next call of the session may be decided while this one runs
    match outcome {
        Outcome::Allowed { .. } => {}
        Outcome::Denied {
            by: By::AuditFailed,
            reason,
            ..
        } => {
            // A rule saved for a decision the log does not show must not stay granted.
            let saved = std::mem::take(&mut *saved.lock().unwrap_or_else(|e| e.into_inner()));
            if let Ok(file) = &rules_file {
                for text in saved.iter().rev() {
                    match amend::retract(file, &store, text) {
                        Ok(true) => eprintln!(
                            "cordon: taken back from {}: the rule just saved (its decision could not be recorded)",
                            file.display()
                        ),
                        Ok(false) | Err(_) => eprintln!(
                            "cordon: warning: a rule was saved in {} but its decision could not be recorded; remove it by hand: {}",
                            file.display(),
                            term::clean(text.trim())
                        ),
                    }
                }
            }
            return refuse(EXIT_FAILURE, term::clean(&reason));
        }
        Outcome::Denied { by, reason, note } => {
            let note = note.map(|n| format!("; note: {n}")).unwrap_or_default();
            // One line, whatever the command, the reason or the note contain.
            return refuse(
                EXIT_DENIED,
                term::clean(&format!("denied: `{shown}`: {reason} [{by}]{note}")),
            );
        }
        Outcome::NeedsAnswer(p) => {
            // decide_blocking never leaves an ask open; fail closed if it ever did.
            return refuse(
                EXIT_DENIED,
                term::clean(&format!("denied: `{shown}`: {}", p.reason)),
            );
        }
    }

    let spec = Spec {
        program: argv[0].clone().into(),
        args: argv[1..].iter().map(Into::into).collect(),
        cwd,
        env: env::scrub(
            std::env::vars_os(),
            &policy.sandbox.env,
            tmp.path().as_os_str(),
        ),
        timeout: args.timeout.or(policy.sandbox.limits.timeout),
        stdio: Default::default(),
        proxy: None,
    };
    // What the run leaves that the operator's tools run (a `.git` config, `.envrc`, …) is
    // found by comparing with this, moved aside, warned about and recorded after the run.
    let roots = writable_roots(&policy);
    let before = crate::after_run::before(&roots);
    let ran = execute(&choice, &profile, spec.clone(), tmp.path());
    crate::after_run::report(&before, &roots, path, &audit_session, &request.id);
    let code = match ran {
        Ok(run::Outcome::TimedOut) => refuse(
            run::Outcome::TimedOut.exit_code(),
            format!(
                "timed out after {:?}; killed `{shown}` and all its descendants",
                spec.timeout.unwrap_or_default()
            ),
        ),
        Ok(outcome) => outcome.exit_code(),
        Err(e @ StartError::NotFound(_)) => refuse(127, e),
        Err(e @ StartError::NotExecutable(..)) => refuse(EXIT_DENIED, e),
        Err(e) => refuse(EXIT_FAILURE, e),
    };
    drop(tmp);
    code
}

/// The first symlink on `path` as written (the path itself or a directory on the way) whose
/// directory lies in one of the profile's writable roots, with that root: the sandboxed command
/// can replace such a link between runs.
fn symlink_in_writable_root(path: &Path, profile: &Profile) -> Option<(PathBuf, PathBuf)> {
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
fn owned_by_caller(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.uid() == euid || m.uid() == 0 => {}
            Ok(m) => {
                return Err(format!(
                    "{} belongs to uid {}, not to uid {euid} running cordon (is HOME another user's, as with sudo -E?)",
                    at.display(),
                    m.uid()
                ))
            }
            Err(_) => break, // missing from here on: cordon creates it, as this user
        }
    }
    Ok(())
}

/// The variables the command's shell inherits: exactly the names of the scrubbed environment
/// the child gets. A variable outside it that the line assigns without exporting reaches no
/// program, so `for FILE in …` need not ask.
pub fn inherited(policy: &Policy) -> shell::Inherited {
    let names = env::scrub(std::env::vars_os(), &policy.sandbox.env, "".as_ref())
        .into_iter()
        .filter_map(|(k, _)| k.into_string().ok());
    shell::Inherited::exactly(names)
}

/// Where "approve always" rules are kept: `cordon.rules.toml` beside the policy file. The
/// embedded default policy has no file, so nothing can be remembered for it.
pub fn persisted_rules_file(policy: &Policy) -> Result<PathBuf, String> {
    policy.rules_file().ok_or_else(|| {
        "cannot approve always: the embedded default policy is in use, and there is no policy file to keep rules beside (write a cordon.toml)".into()
    })
}

/// The shell call as the approval engine sees it: one key per simple command, the shell
/// tool's own concerns, and a preview listing each command with what the
/// rules say of it.
fn shell_request(
    engine: &Engine,
    shown: &str,
    argv: &[String],
    cwd: &Path,
    a: &ShellAssessment,
) -> Request {
    // Each command's key (its canonical words); a transparent wrapper no rule names (`time`,
    // `timeout 300`, `bash -c`) has none: the commands it runs are decided instead.
    let keys: Vec<Key> = a
        .commands
        .iter()
        .filter_map(|c| c.key.clone())
        .map(Key::new)
        .collect();
    // One line per command or concern, each word made safe for the terminal here (a newline
    // inside a quoted word must not push the next command out of the box); concerns first.
    let mut lines: Vec<String> = a
        .concerns
        .iter()
        .map(|(_, d)| term::clean(&format!("{:<9} ! {}", d.action.as_str(), d.reason)))
        .collect();
    for k in &keys {
        let action = engine
            .rules()
            .decide_key("shell", k.words())
            .map_or("(default)".to_string(), |v| v.action.as_str().to_string());
        lines.push(term::clean(&format!("{action:<9} {k}")));
    }
    let id = cordon_approval::audit::new_id().unwrap_or_default(); // empty: the log picks one
    let mut req = Request::shell(id, keys)
        .with_presentation(Presentation::new(
            shown,
            Preview::Text {
                text: lines.join("\n"),
            },
        ))
        .with_args(serde_json::json!({ "argv": argv, "cwd": cwd }));
    // The tool's concerns (an environment assignment, a redirection outside the roots, a
    // line it cannot parse) are not in the keys, so a session grant never covers them.
    req.concern = a.own_verdict();
    req
}

pub fn writable_roots(policy: &Policy) -> Vec<std::path::PathBuf> {
    policy
        .sandbox
        .paths
        .iter()
        .filter(|p| p.mode == Mode::ReadWrite)
        .map(|p| p.root.clone())
        .collect()
}

/// The run's private TMPDIR: created 0700, locked with `flock` for as long as
/// this cordon lives, removed on drop. A cordon that is killed cannot remove it, but its lock
/// goes with it: the next run removes every `cordon-run-*` directory of this user whose lock
/// it can take. Race-free: the directory is made under a name the sweep ignores, locked, and
/// only then renamed into the swept pattern, so a sweep never sees a live run's directory
/// unlocked. (The lock's descriptor is close-on-exec: the command never holds it.)
struct PrivateTmp {
    path: PathBuf,
    _lock: std::fs::File,
}

/// What the sweep removes; `NEW_PREFIX` is what it never touches.
const TMP_PREFIX: &str = "cordon-run-";
const TMP_NEW_PREFIX: &str = ".cordon-new-";

impl PrivateTmp {
    fn create(base: &Path) -> std::io::Result<PrivateTmp> {
        sweep_private_tmps(base);
        // 0700 from the start (tempfile's default follows the umask: 0755 to every user).
        let fresh = tempfile::Builder::new()
            .prefix(TMP_NEW_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(base)?;
        let lock = std::fs::File::open(fresh.path())?;
        if unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let name = fresh
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(TMP_NEW_PREFIX))
            .map(|suffix| format!("{TMP_PREFIX}{suffix}"))
            .ok_or_else(|| std::io::Error::other("unexpected temporary directory name"))?;
        let path = base.join(name);
        // Never over an existing entry: RENAME_NOREPLACE.
        let from = std::ffi::CString::new(fresh.path().as_os_str().as_encoded_bytes())?;
        let to = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())?;
        if unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let _ = fresh.keep();
        Ok(PrivateTmp { path, _lock: lock })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        // remove_dir_all does not follow symlinks the command left inside.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the private TMPDIRs of this user's cordons that are gone (their lock is free).
fn sweep_private_tmps(base: &Path) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        if !e
            .file_name()
            .as_encoded_bytes()
            .starts_with(TMP_PREFIX.as_bytes())
        {
            continue;
        }
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let Ok(dir) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(&path)
        else {
            continue;
        };
        if unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&dir),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        } == 0
        {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}
