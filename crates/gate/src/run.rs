//! Running an allowed call: a shell call under the prepared kernel sandbox (with the proxy
//! under `network = "proxy"` and the after-run scan), a file call through the file tools.

use super::open::named_through_links;
use super::*;

/// What a run waits for before its command starts (see [`cordon_ossandbox::Release`]): `Err`
/// with the line that says why it must not.
type Release = Box<dyn FnOnce() -> Result<(), String> + Send>;

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
        let ran = match &call.what {
            What::Shell(s) => self.run_shell(
                &call.request.id,
                &s.argv,
                &s.cwd,
                opts,
                Default::default(),
                None,
            ),
            What::File(a) => self.run_file(a),
        };
        // Allowed (and recorded so) but not run for cordon's own reasons: the log says so.
        ran.map_err(|e| self.refused_run(call, e))
    }

    /// Runs a provisional decision ([`Gate::decide_provisional`]): as [`Gate::run`], but with
    /// the decision's record still being made durable while the sandbox is built (the private
    /// TMPDIR, the checks, the ruleset, the namespaces, bwrap's mounts). The command starts
    /// only once the record is durable; when it cannot be made durable the sandbox is torn
    /// down before the command started and the decision's failure is returned (125).
    pub fn run_provisional(
        &self,
        call: &Call,
        decision: Provisional,
        opts: RunOptions,
    ) -> Result<Ran, Error> {
        let Provisional { decision, sync } = decision;
        let (Some(sync), What::Shell(s)) = (sync, &call.what) else {
            let decision = Provisional {
                decision,
                sync: None,
            };
            return self.run(call, &decision.durable(), opts);
        };
        if !decision.is_allowed() || decision.request != call.request.id {
            let _ = synced(sync);
            return Err(Error::new(
                EXIT_DENIED,
                format!("`{}` was not allowed: nothing runs", call.shown),
            ));
        }
        // The decision the sync turned into a failure, for the error below.
        let refused: Arc<Mutex<Option<Decision>>> = Arc::default();
        let release = {
            let refused = refused.clone();
            let decision = decision.clone();
            Box::new(move || {
                let durable = durable_decision(decision, synced(sync));
                if durable.is_allowed() {
                    return Ok(());
                }
                let why = durable.message();
                *lock(&refused) = Some(durable);
                Err(why)
            }) as Release
        };
        let ran = self.run_shell(
            &call.request.id,
            &s.argv,
            &s.cwd,
            opts,
            Default::default(),
            Some(release),
        );
        if let Some(failed) = lock(&refused).take() {
            // Not an allow that was refused to run: no allow was handed out at all (the log
            // says so in its next record), so there is no refusal to record.
            return Err(Error::new(failed.exit_code(), failed.message()));
        }
        ran.map_err(|e| self.refused_run(call, e))
    }

    /// Runs `argv` in `cwd` under the prepared sandbox for the call `id` (a shell call's, or a
    /// wrapped MCP server's, `mcp.rs`), with `stdio` as the command's descriptors where set.
    /// With a `release`, the command starts only once it returned `Ok` (the sandbox is built
    /// meanwhile). The after-run scan's marker is made first, here.
    pub(crate) fn run_shell(
        &self,
        id: &str,
        argv: &[String],
        cwd: &Path,
        opts: RunOptions,
        stdio: cordon_ossandbox::ChildStdio,
        release: Option<Release>,
    ) -> Result<Ran, Error> {
        let Some(sandbox) = self.sandbox.as_ref().filter(|_| self.front_end.runs()) else {
            return Err(Error::failure("this gate does not run calls"));
        };
        // What the gate itself names must still be what it was: the policy and the audit log
        // not re-pointed through a link in a writable root; the files the sandbox keeps
        // read-only there exist to be bound.
        self.before_run(sandbox)?;
        // The after-run scan is pending until it completed: a cordon killed meanwhile leaves
        // it to the next run, one cut short refuses the next run there (after_run.rs). The
        // marker is not synced (it guards against cordon being killed, see after_run.rs): made
        // here, before the run's snapshot, it costs no sync beside the decision's record.
        let pending = after_run::pending(
            sandbox.writable_roots(),
            &self.audit_path,
            &self.audit_session,
            self.state_apart,
        )
        .map_err(Error::failure)?;
        // Beside the marker, out of every run's reach: what the last completed scan read.
        let listings = pending.as_ref().and_then(|_| {
            after_run::listings(sandbox.writable_roots(), &self.audit_path, self.state_apart)
        });
        // Beside the marker too, written once the "before" snapshot read them: the earlier
        // contents of the watched files, which the next run puts back if this cordon is
        // killed during the run.
        let keep = pending.is_some();
        let pending = Arc::new(Mutex::new(pending));
        let keep = keep.then(|| {
            let slot = pending.clone();
            cordon_ossandbox::Keep::new(move || {
                // The runs beside this log take their "before" snapshots one at a time
                // (`Pending::starting`): held until this one's is kept.
                let start = lock(&slot).as_ref().map(after_run::Pending::starting);
                Box::new(move |kept: &[u8]| {
                    let _start = start.transpose()?;
                    // What is put back: this snapshot's, or, while other runs over these
                    // roots go, the state before the first of them began (the overlap rule,
                    // `Pending::keep`).
                    lock(&slot)
                        .as_ref()
                        .map_or(Ok(cordon_ossandbox::Base::Own), |p| p.keep(kept))
                })
            })
        });
        // Every error returned from here on comes before the command started (a failure after
        // is `Ran::exit`, and the run's scan is done): nothing to scan after it. The marker
        // left would make the next run take what the operator changed meanwhile (the fix the
        // refusal asked for) for this run's doing, and move it aside.
        let not_started = |e: Error| {
            if let Some(p) = lock(&pending).take() {
                p.finish(&[]);
            }
            e
        };
        let release = release.map(|release| {
            let slot = pending.clone();
            cordon_ossandbox::Release::new(move || {
                let released = release();
                if released.is_err() {
                    // Nothing runs: nothing to scan after it.
                    if let Some(p) = lock(&slot).take() {
                        p.finish(&[]);
                    }
                }
                released
            })
        });
        let command = cordon_ossandbox::Command {
            program: argv[0].clone().into(),
            args: argv[1..].iter().map(Into::into).collect(),
            cwd: cwd.to_path_buf(),
            timeout: opts.timeout,
        };
        let mut io = cordon_ossandbox::Io {
            stdio,
            cancel: opts.cancel.as_ref().map(Cancel::fd),
            release,
            listings,
            keep,
            ..Default::default()
        };
        if opts.input == Input::Nothing && io.stdio.fds[0].is_none() {
            // A pipe whose write end is closed at once: end of file, nothing to read.
            let (stdin, _) = capture::pipe()
                .map_err(|e| Error::failure(format!("cannot give the command an empty stdin: {e}")))
                .map_err(not_started)?;
            io.stdio.fds[0] = Some(Arc::new(stdin));
        }
        let capture = match opts.output {
            Output::Inherit => None,
            Output::Capture { limit } => Some(
                capture::Capture::start(&mut io.stdio, limit)
                    .map_err(|e| Error::failure(format!("cannot capture the output: {e}")))
                    .map_err(not_started)?,
            ),
        };
        tracing::debug!(request = %id, argv = ?argv, "run");
        let result = if self.policy.sandbox.network == cordon_policy::Network::Proxy {
            // The command reaches nothing but cordon's proxy, which decides and records each
            // connection with this gate.
            // A person asked about a connection gets the terminal from the command's relay.
            #[cfg(target_os = "linux")]
            let ask = opts.ask.clone().map(|asker| {
                let switch = cordon_ossandbox::TerminalSwitch::new();
                io.stdio.terminal = Some(switch.clone());
                network::Asking::new(asker, switch)
            });
            #[cfg(not(target_os = "linux"))]
            let ask = opts.ask.clone().map(network::Asking::new);
            network::run_with_proxy(self, ask, |handoff, vars, files| {
                io.proxy = Some((handoff, vars));
                io.files = files;
                sandbox.run(command, io)
            })
            .map_err(not_started)?
        } else {
            sandbox.run(command, io)
        };
        let (stdout, stderr, truncated) = match capture {
            Some(c) => c.finish(),
            None => Default::default(),
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
        let ran = match result {
            Ok(ran) => ran,
            // `Sandbox::run` fails only before the command started.
            Err(e) => return Err(not_started(failed(e, &stderr))),
        };
        // The enforcement of this run, beside its decision's record (the audit record of the
        // decision is written before the run; this is what the kernel then applied).
        tracing::info!(request = %id, enforcement = %ran.enforcement, network = %ran.network, sandbox = %ran.path, "ran");
        if let Some(p) = lock(&pending).take() {
            let unrestored = ran.scan_truncated.is_empty()
                && ran
                    .findings
                    .iter()
                    .any(|f| matches!(f.handling, cordon_ossandbox::Handling::Unrestored(..)));
            if !unrestored {
                p.finish(&ran.scan_truncated);
            } else if !p.unrestored() {
                eprintln!("cordon: warning: the earlier contents the scan could not write back could not be kept for the next run either (the disk is full): they are lost");
            }
        }
        after_run::report(
            &ran.findings,
            &ran.enforcement,
            &ran.scan_truncated,
            sandbox.writable_roots(),
            &self.audit_path,
            &self.audit_session,
            id,
        );
        let done = |exit_code, timed_out| Ran {
            exit_code,
            stdout,
            stderr: stderr.clone(),
            truncated,
            timed_out,
        };
        match ran.exit {
            Ok(cordon_ossandbox::Outcome::TimedOut) => Ok(done(124, true)),
            Ok(outcome) => Ok(done(outcome.exit_code(), false)),
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
            .get_or_init(|| Toolbox::from_policy(&self.policy))
            .as_ref()
            .map_err(Error::failure)
    }

    /// What the gate checks before each run, beside the sandbox's own re-point check: the
    /// policy and the audit log not named through a link in a writable root, and the files
    /// the sandbox binds read-only there existing.
    fn before_run(&self, sandbox: &Prepared) -> Result<(), Error> {
        let profile = sandbox.profile();
        named_through_links(&self.policy, &self.named, profile)?;
        // Remembered rules beside a policy in a writable root are protected as a file that
        // exists (a missing one would need a placeholder file for the run's duration).
        if let Some(rules_file) = self.policy.rules_file() {
            if profile.protected.iter().any(|p| p.path == rules_file) {
                amend::ensure(&rules_file)
                    .map_err(|e| Error::failure(format!("remembered rules {e}")))?;
            }
        }
        // The trust store inside a writable root is kept read-only by the sandbox: make sure
        // it is a directory to bind, not a missing name.
        if profile
            .protected
            .iter()
            .any(|p| p.origin == trust::PROTECTED_ORIGIN)
        {
            self.store.ensure().map_err(Error::failure)?;
        }
        Ok(())
    }
}
