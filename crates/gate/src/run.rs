//! Running an allowed call: a shell call under the prepared kernel sandbox (with the proxy
//! under `network = "proxy"` and the after-run scan), a file call through the file tools.

use super::open::named_through_links;
use super::*;

impl Gate {
    /// Runs an allowed call: a shell call under the kernel sandbox, a file call through the
    /// file tools. Refuses (126) a decision that is not an allow of this very call.
    pub fn run(&self, call: &Call, decision: &Decision, opts: RunOptions) -> Result<Ran, Error> {
        if !decision.is_allowed() || decision.request != call.request.id {
            return Err(Error::new(
                EXIT_DENIED,
                format!("`{}` was not allowed: nothing runs", call.shown),
            ));
        }
        match &call.what {
            What::Shell(s) => self.run_shell(call, s, opts),
            What::File(a) => self.run_file(a),
        }
    }

    fn run_shell(&self, call: &Call, run: &ShellRun, opts: RunOptions) -> Result<Ran, Error> {
        let Some(s) = &run.sandbox else {
            return Err(Error::failure("this gate does not run calls"));
        };
        // Checked again: a command of another call may have re-pointed a root meanwhile.
        #[cfg(target_os = "linux")]
        cordon_ossandbox::resolve::check(&self.policy, &s.profile).map_err(Error::failure)?;
        let timeout = opts.timeout.or(self.policy.sandbox.limits.timeout);
        let mut spec = sandbox_run::Spec {
            program: run.argv[0].clone().into(),
            args: run.argv[1..].iter().map(Into::into).collect(),
            cwd: run.cwd.clone(),
            env: env::scrub(
                std::env::vars_os(),
                &self.policy.sandbox.env,
                s.tmp.path().as_os_str(),
            ),
            timeout,
            stdio: Default::default(),
            cancel: opts.cancel.as_ref().map(Cancel::fd),
            // Under sandbox.network = "proxy", set below with the proxy that serves the run.
            proxy: None,
        };
        let capture = match opts.output {
            Output::Inherit => None,
            Output::Capture { limit } => Some(
                capture::Capture::start(&mut spec.stdio, limit)
                    .map_err(|e| Error::failure(format!("cannot capture the output: {e}")))?,
            ),
        };
        // What the run leaves that the operator's tools run (a `.git` config, `.envrc`, …) is
        // found by comparing with this, moved aside, warned about and recorded after the run.
        let roots = writable_roots(&self.policy);
        let before = after_run::before(&roots);
        tracing::debug!(request = %call.request.id, argv = ?run.argv, "run");
        let result = if self.policy.sandbox.network == cordon_policy::Network::Proxy {
            // The command reaches nothing but cordon's proxy, which decides and records each
            // connection with this gate.
            // A person asked about a connection gets the terminal from the command's relay.
            #[cfg(target_os = "linux")]
            let ask = opts.ask.clone().map(|asker| {
                let switch = cordon_ossandbox::stdio::TerminalSwitch::new();
                spec.stdio.terminal = Some(switch.clone());
                network::Asking::new(asker, switch)
            });
            #[cfg(not(target_os = "linux"))]
            let ask = opts.ask.clone().map(network::Asking::new);
            network::run_with_proxy(self, ask, |handoff, vars| {
                // Every proxy variable the command would inherit goes (a NO_PROXY would send
                // loopback around the proxy, into the sandbox's own empty loopback).
                spec.env
                    .retain(|(k, _)| !k.to_str().is_none_or(env::is_proxy_variable));
                spec.env
                    .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
                spec.proxy = Some(handoff);
                execute(&s.choice, &s.profile, spec, s.tmp.path())
            })?
        } else {
            execute(&s.choice, &s.profile, spec, s.tmp.path())
        };
        after_run::report(
            &before,
            &roots,
            &self.audit_path,
            &self.audit_session,
            &call.request.id,
        );
        let (stdout, stderr, truncated) = match capture {
            Some(c) => c.finish(),
            None => Default::default(),
        };
        let ran = |exit_code, timed_out| Ran {
            exit_code,
            stdout,
            stderr: stderr.clone(),
            truncated,
            timed_out,
        };
        let failed = |e: cordon_ossandbox::Error, stderr: &[u8]| {
            // What the sandbox's builder said went to the captured stderr: keep it.
            // 127 not found, 126 cannot execute, 125 a refusal or a setup failure.
            Error::Sandbox {
                error: e,
                output: String::from_utf8_lossy(stderr)
                    .lines()
                    .take(20)
                    .map(clean)
                    .collect(),
            }
        };
        match result {
            Ok(sandbox_run::Outcome::TimedOut) => Ok(ran(124, true)),
            Ok(outcome) => Ok(ran(outcome.exit_code(), false)),
            Err(e) => Err(failed(e, &stderr)),
        }
    }

    fn run_file(&self, a: &Assessment) -> Result<Ran, Error> {
        let toolbox = self.toolbox()?;
        let tool = toolbox
            .get(&a.tool)
            .ok_or_else(|| Error::failure(format!("unknown tool `{}`", a.tool)))?;
        let value = tool.execute(a).map_err(|e| Error::new(EXIT_DENIED, e))?;
        let stdout = match value {
            serde_json::Value::String(s) => s.into_bytes(),
            v => v.to_string().into_bytes(),
        };
        Ok(Ran {
            stdout,
            ..Ran::default()
        })
    }

    pub(crate) fn toolbox(&self) -> Result<&Toolbox, Error> {
        self.toolbox
            .get_or_init(|| Toolbox::from_policy(&self.policy).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Error::failure)
    }

    /// A shell call's sandbox: a private TMPDIR, the profile, the checks that a root or a
    /// protected path was not re-pointed, the backend.
    pub(crate) fn prepare(&self) -> Result<Sandbox, Error> {
        let Some(machine) = &self.machine else {
            return Err(Error::failure("this gate only checks calls"));
        };
        // A private, per-run TMPDIR: /tmp itself is shared with every process on the machine.
        // One left by a cordon that was killed is removed here.
        let tmp = tmp::PrivateTmp::create(&std::env::temp_dir())
            .map_err(|e| Error::failure(format!("cannot create the private TMPDIR: {e}")))?;
        let profile = Profile::from_policy(&self.policy).with_private_tmp(tmp.path());
        // A name the policy uses that an earlier run re-pointed (a symlink in a writable root,
        // a second name for a protected file) would grant what it now reaches.
        #[cfg(target_os = "linux")]
        cordon_ossandbox::resolve::check(&self.policy, &profile).map_err(Error::failure)?;
        named_through_links(&self.policy, &self.named, &profile)?;
        // Remembered rules beside a policy in a writable root are protected as a file that
        // exists (a missing one would need a placeholder file for the run's duration).
        if let Some(rules_file) = self.policy.rules_file() {
            if profile.protected.iter().any(|p| p.path == rules_file) {
                amend::ensure(&rules_file)
                    .map_err(|e| Error::failure(format!("remembered rules {e}")))?;
            }
        }
        let choice = choose(
            self.backend,
            &profile,
            self.policy.sandbox.require_os_sandbox,
            machine,
        )
        .map_err(Error::failure)?;
        // The trust store inside a writable root is kept read-only by the sandbox: make sure
        // it is a directory to bind, not a missing name.
        if profile
            .protected
            .iter()
            .any(|p| p.origin == trust::PROTECTED_ORIGIN)
        {
            self.store.ensure().map_err(Error::failure)?;
        }
        Ok(Sandbox {
            tmp,
            profile,
            choice,
        })
    }
}
