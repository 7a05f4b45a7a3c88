//! `cordon exec`: decide, then run under the OS sandbox.

use cordon_approval::{resolve_mode, RuleSet};
use cordon_ossandbox::run::{Outcome, Spec, StartError};
use cordon_ossandbox::{choose, env, execute, Machine, Profile};
use cordon_policy::{Action, ApprovalMode, Mode, Policy};
use cordon_tools::assess::{assess, ShellContext};
use cordon_tools::shell;

use crate::{audit, check, prompt, refuse, ExecArgs, EXIT_DENIED, EXIT_FAILURE};

pub fn run(args: ExecArgs) -> i32 {
    let (cwd, policy) = match crate::load_policy(args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let rules = RuleSet::new(&policy.shell);
    if let Err(e) = check::examples(&policy) {
        return refuse(EXIT_FAILURE, e);
    }

    // The sandbox first: a run that can never happen is refused before anyone is asked and
    // before anything is recorded. A private, per-run TMPDIR: /tmp itself is shared with
    // every process on the machine.
    let tmp = match tempfile::Builder::new().prefix("cordon-").tempdir() {
        Ok(t) => t,
        Err(e) => {
            return refuse(
                EXIT_FAILURE,
                format!("cannot create the private TMPDIR: {e}"),
            )
        }
    };
    let profile = Profile::from_policy(&policy).with_private_tmp(tmp.path());
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
    // What would run, as the shell tool understands it.
    let (argv, parsed) = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => (
            vec!["/bin/sh".to_string(), "-c".to_string(), line.clone()],
            shell::parse(line),
        ),
        (None, false) => (args.argv.clone(), shell::parse_argv(&args.argv)),
        (None, true) => {
            return refuse(
                EXIT_FAILURE,
                "nothing to run: give -c STRING or -- PROG ARGS",
            )
        }
    };
    let cx = ShellContext {
        cwd: cwd.clone(),
        writable: writable_roots(&policy),
    };
    let assessment = assess(&parsed, &rules, &cx);
    let shown = args.command.clone().unwrap_or_else(|| args.argv.join(" "));

    let mode = if args.approve_all {
        ApprovalMode::ApproveAll
    } else if args.strict {
        ApprovalMode::Strict
    } else {
        policy.approval.mode
    };
    let d = &assessment.decision;
    // Every final decision is recorded (allow and deny) before anything runs; a log that
    // cannot be written stops the run (exit 125).
    let audit = audit::ExecAudit::new(&policy, mode, &argv, &cwd, &shown, &assessment);
    match resolve_mode(d.action, mode, prompt::terminal_available()) {
        (Action::Allow, why) => {
            if let Err(code) = audit.decided(Action::Allow, why) {
                return code;
            }
        }
        (Action::Deny, why) => {
            if let Err(code) = audit.decided(Action::Deny, why) {
                return code;
            }
            let extra = why.map(|w| format!("; {w}")).unwrap_or_default();
            return refuse(
                EXIT_DENIED,
                format!("denied: `{shown}`: {} [{}]{extra}", d.reason, d.rule),
            );
        }
        (Action::Ask, _) => {
            let answer = prompt::ask(&shown, &assessment, policy.approval.timeout);
            if let Err(code) = audit.answered(&answer) {
                return code;
            }
            match answer {
                Ok(true) => {}
                Ok(false) => {
                    return refuse(
                        EXIT_DENIED,
                        format!("denied: `{shown}`: refused by the user"),
                    )
                }
                Err(e) => return refuse(EXIT_DENIED, format!("denied: `{shown}`: {e}")),
            }
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
    };
    let code = match execute(&choice, &profile, spec.clone(), tmp.path()) {
        Ok(Outcome::TimedOut) => refuse(
            Outcome::TimedOut.exit_code(),
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

pub fn writable_roots(policy: &Policy) -> Vec<std::path::PathBuf> {
    policy
        .sandbox
        .paths
        .iter()
        .filter(|p| p.mode == Mode::ReadWrite)
        .map(|p| p.root.clone())
        .collect()
}
