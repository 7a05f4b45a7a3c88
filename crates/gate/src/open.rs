//! Opening a gate: the trusted policy, the remembered rules, the machine and backend, the
//! session and the audit log.

use super::*;

impl Gate {
    /// Loads the policy (trusted, examples checked), the remembered rules, the session and
    /// the audit log, and picks the sandbox backend. Refuses (125) what could never run.
    ///
    /// With [`FrontEnd::Check`] (`cordon check`): the same policy, rules, session grants and
    /// tools' reading, but no audit log and no sandbox: it builds and explains calls
    /// ([`Gate::explain`]); it never decides, records or runs them.
    pub fn open(opts: Options) -> Result<Gate, Error> {
        Gate::load(opts)
    }

    /// [`Gate::open`] with [`FrontEnd::Check`]: a gate that explains calls and never decides,
    /// records or runs them.
    pub fn open_dry(opts: Options) -> Result<Gate, Error> {
        Gate::load(Options {
            front_end: FrontEnd::Check,
            ..opts
        })
    }

    fn load(opts: Options) -> Result<Gate, Error> {
        let dry = opts.front_end == FrontEnd::Check;
        let cwd = opts.cwd.clone();
        // A dead run (its cordon killed) may have left a trust entry at a default place of
        // the store that lay in its roots; its scan moves it aside before discovery looks.
        if !dry {
            after_run::before_discovery();
        }
        let store = TrustStore::from_env();
        let mut policy = Policy::discover_in(opts.policy.as_deref(), &cwd, &store)?;
        if opts.codex_state {
            codex_state(&mut policy);
        }
        // A host's user approved exactly this line (`cordon hook`): the grant is used up now,
        // before anything else, and checked against this very policy, the one the gate then
        // decides and runs under (not one loaded for the check alone, which would be a second
        // load, before the dead runs' trust entries were moved aside, and could differ).
        let granted_by = match &opts.host_grant {
            Some(c) => Some(host_grant::consume(&c.id, &policy, &cwd, &c.line)?),
            None => None,
        };
        examples::check(&policy)?;
        let named = opts
            .policy
            .clone()
            .unwrap_or_else(|| cwd.join(cordon_policy::DEFAULT_POLICY_FILE));

        let backend = opts.backend.unwrap_or(policy.sandbox.backend);
        // The writable roots as the sandbox resolves them, for a front end that decides but
        // never runs (see below).
        let mut deciding_only = None;
        let (sandbox, warnings) = if dry {
            (None, Vec::new())
        } else if !opts.front_end.runs() {
            // An agent host's hook decides and never runs: what it allows runs later under
            // `cordon exec`, which prepares the sandbox (and refuses what no backend can
            // run) then. Choosing a backend here, opening every Landlock path and sweeping
            // TMPDIRs cost each hook call more than its decision did; only the policy's own
            // roots are needed, for the link checks of the policy and the log.
            let profile = roots_profile(&policy);
            named_through_links(&policy, &named, &profile)?;
            deciding_only = Some(profile);
            (None, Vec::new())
        } else {
            // Prepared once for every call of this gate: the profile, the backend (a policy no
            // backend can run is refused now, before any call).
            let mut prepared = cordon_ossandbox::prepare(&policy, &Machine::probe(), backend)
                .map_err(Error::failure)?;
            // The MCP server runs call after call under this policy: bwrap's sandbox is
            // started once for them (a reload or trust change opens a new gate, and a new one).
            if matches!(opts.front_end, FrontEnd::Mcp) {
                prepared.reuse_sandbox();
            }
            tracing::debug!(policy = %policy.source, backend = ?prepared.backend(), "gate open");
            // Before the audit log is opened (and created): nothing is recorded through a link.
            named_through_links(&policy, &named, prepared.profile())?;
            let warnings = prepared.warnings().to_vec();
            (Some(prepared), warnings)
        };

        // The engine: the policy's rules, remembered "approve always" rules, the mode.
        let rules_file = persisted_rules_file(&policy);
        let mut rules = Rules::from_policy(&policy);
        if let Ok(file) = &rules_file {
            let persisted = amend::load(file, &store)
                .map_err(|e| refusal::refused_open(&policy, &opts.front_end, Error::Rules(e)))?;
            rules.add_persisted(persisted);
        }
        let mut engine = Engine::with_rules(rules, &policy);
        match opts.mode {
            Some(ApprovalMode::ApproveAll) => {
                if matches!(
                    policy.approval.mode,
                    ApprovalMode::Strict | ApprovalMode::Deny
                ) {
                    return Err(refusal::refused_open(&policy, &opts.front_end, Error::failure(format!(
                        "--approve-all cannot loosen the policy's approval.mode = \"{}\" ({}); change the policy to allow it",
                        cordon_approval::mode_name(policy.approval.mode),
                        policy.source
                    ))));
                }
                engine.set_mode(ApprovalMode::ApproveAll);
            }
            Some(m) => engine.set_mode(m),
            None => {}
        }

        // "Approve always" rules are saved as part of the decision, so its record says whether
        // the rule was saved. What was written is kept, to be taken back should the record
        // fail.
        let saved: Arc<Mutex<Vec<String>>> = Arc::default();
        let notices: Arc<Mutex<Vec<String>>> = Arc::default();
        if let Ok(file) = rules_file.clone() {
            let saved = saved.clone();
            let notices = notices.clone();
            let store = store.clone();
            engine.set_rule_store(move |a| {
                let wrote = amend::append(&file, &store, a);
                match &wrote {
                    Ok(Some(text)) => {
                        lock(&saved).push(text.clone());
                        lock(&notices).push(format!(
                            "remembered in {}: `{}` (exact)",
                            file.display(),
                            clean(&a.pattern)
                        ));
                    }
                    Ok(None) => {}
                    Err(e) => lock(&notices).push(format!(
                        "warning: not remembered: {}",
                        clean(&e.to_string())
                    )),
                }
                wrote
            });
        }

        // The session's id names the audit records; its directory must be out of reach.
        let writable = writable_roots(&policy);
        // A new session is saved at once, so that every process of it records the same id.
        // `check` reads the session's grants when it explains a call; it never saves one.
        let session_id = match &opts.session {
            Some(_) if dry => None,
            Some(name) => {
                let refused = |e| refusal::refused_open(&policy, &opts.front_end, e);
                let mut s = session::Session::open(name, &writable, Some(session::scope(&policy)))
                    .map_err(refused)?;
                s.restore(&mut engine);
                s.save_from(&engine).map_err(refused)?;
                Some(s.id)
            }
            None => None,
        };

        // An agent host is the client of every record its hook makes, and of the run its
        // user approved through a grant.
        let client = granted_by.clone().or_else(|| opts.client.clone());
        let client = match &opts.front_end {
            FrontEnd::Host(host) => client.or_else(|| Some(host.clone())),
            _ => client,
        };
        let (audit_path, audit_session) = if dry {
            (PathBuf::new(), String::new())
        } else {
            // Writable roots (canonical): a log inside one is opened beneath it, never
            // through a link at any component below it.
            let roots: Vec<PathBuf> = sandbox
                .as_ref()
                .map(|p| p.profile())
                .or(deciding_only.as_ref())
                .map(|profile| {
                    profile
                        .rules
                        .iter()
                        .filter(|r| r.access.write && !r.access.device)
                        .map(|r| r.path.clone())
                        .collect()
                })
                .unwrap_or_default();
            open_audit(
                &policy,
                &roots,
                &mut engine,
                session_id.as_deref(),
                client.as_deref(),
                opts.codex_state,
            )?
        };
        let inherited = inherited(&policy);
        Ok(Gate {
            cwd,
            named,
            sandbox,
            front_end: opts.front_end,
            warnings,
            engine: Mutex::new(engine),
            inherited,
            rules_file,
            saved,
            notices,
            store,
            session: opts.session,
            audit_path,
            state_apart: opts.codex_state,
            audit_session,
            toolbox: std::sync::OnceLock::new(),
            granted_by,
            policy,
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The host whose user approved this gate's call, when it was opened with a host grant
    /// ([`Options::host_grant`]), which it used up.
    pub fn granted_by(&self) -> Option<&str> {
        self.granted_by.as_deref()
    }

    /// The policy file to hand to a child `cordon exec --policy` (absolute); `None` for the
    /// embedded default.
    pub fn policy_file(&self) -> Option<&Path> {
        self.policy.path.as_deref()
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Degradations accepted because `require_os_sandbox` is false: show them.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The audit log the decisions go to.
    pub fn audit_log(&self) -> &Path {
        &self.audit_path
    }

    /// How many group syncs ([`cordon_approval::audit::SharedLog::syncs`]) the audit log's
    /// writer has made so far (`None` without a log): what a decision costs in syncs, for
    /// tests and benchmarks.
    pub fn audit_syncs(&self) -> Option<u64> {
        lock(&self.engine).audit_log().map(|l| l.syncs())
    }

    /// Where "approve always" rules are kept, or why there is no such place.
    pub fn rules_file(&self) -> Result<&Path, NoRulesFile> {
        self.rules_file.as_deref().map_err(|e| *e)
    }

    /// Who answers an ask on this gate.
    pub fn front_end(&self) -> &FrontEnd {
        &self.front_end
    }

    /// The variables the command's shell inherits (see [`inherited`]).
    pub fn inherited(&self) -> &shell::Inherited {
        &self.inherited
    }
}

/// Opens the audit log every final decision is recorded in (allow and deny) before anything
/// runs; a log that cannot be written stops the gate. Returns its path and session id.
fn open_audit(
    policy: &Policy,
    roots: &[PathBuf],
    engine: &mut Engine,
    session_id: Option<&str>,
    client: Option<&str>,
    codex_state: bool,
) -> Result<(PathBuf, String), Error> {
    let log = &policy.approval.audit_log;
    let Some(path) = log.path().map(Path::to_path_buf) else {
        return Err(Error::failure(
                "nowhere to record decisions: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path (set one of them)",
            ));
    };
    if let cordon_policy::AuditLog::Default(_) = log {
        if let Err(e) = paths::owned_by_caller(&path) {
            return Err(Error::failure(format!(
                    "the default audit log {}: {e}; set XDG_STATE_HOME or approval.audit_log to a place of your own",
                    path.display()
                )));
        }
    }
    let beneath = roots
        .iter()
        .find_map(|r| Some((r, path.strip_prefix(r).ok()?)))
        .filter(|(_, rel)| !rel.as_os_str().is_empty());
    let opened = match beneath {
        Some((root, rel)) => AuditLog::open_beneath(root, rel),
        None => AuditLog::open(&path),
    };
    let mut audit = opened.map_err(|e| {
            let hint = match log {
                // Inside Codex's sandbox only install's directory apart is writable.
                _ if codex_state => {
                    " (the state apart of the runs inside Codex's sandbox: `cordon install codex` creates it and makes it writable there)"
                }
                cordon_policy::AuditLog::Default(_) => {
                    " (the default place; set approval.audit_log in the policy, or XDG_STATE_HOME, to record elsewhere)"
                }
                _ => "",
            };
            Error::failure(format!("audit log {e}{hint}"))
        })?;
    if let Some(id) = session_id {
        audit = audit.with_session(id);
    }
    if let Some(client) = client {
        audit = audit.with_client(client);
    }
    let session = audit.session().to_string();
    engine.set_audit(audit);
    Ok((path, session))
}

/// A run inside Codex's sandbox records apart ([`cordon_policy::CODEX_STATE_DIR`]): everything
/// Codex runs without cordon can write where this run writes, so that is never the log the
/// hook records to, nor the scans, sessions and grants beside it. The policy's own log (and
/// its directory) is still kept from the command, with the other logs.
fn codex_state(policy: &mut Policy) {
    use cordon_policy::AuditLog;
    let apart = |log: &Path| {
        log.parent()
            .map(|d| d.join(cordon_policy::CODEX_STATE_DIR).join("audit.jsonl"))
    };
    let moved = match &policy.approval.audit_log {
        AuditLog::Configured(l) => apart(l).map(|a| (l.clone(), AuditLog::Configured(a))),
        AuditLog::Default(l) => apart(l).map(|a| (l.clone(), AuditLog::Default(a))),
        // Nowhere to record: opening the log refuses, saying so.
        AuditLog::Nowhere => None,
    };
    if let Some((own, log)) = moved {
        if !policy.approval.other_audit_logs.contains(&own) {
            policy.approval.other_audit_logs.push(own);
        }
        policy.approval.audit_log = log;
    }
}

/// A policy or audit log named through a symlink in a writable root: the command could
/// re-point the link, at a policy of its own for the next call, or away from the log (whose
/// history it could then delete, no longer protected).
/// The profile of `policy`'s own roots (`sandbox.paths`), resolved as the sandbox resolves
/// them, without the system paths and `extra_read` (read-only, so no link check looks at
/// them): the writable roots a front end that never runs needs, at a fraction of the cost of
/// the whole profile (each system path is opened and read back).
fn roots_profile(policy: &Policy) -> Profile {
    let mut roots_only = policy.clone();
    roots_only.sandbox.system_read = false;
    roots_only.sandbox.extra_read.clear();
    Profile::from_policy(&roots_only)
}

pub(crate) fn named_through_links(
    policy: &Policy,
    named: &Path,
    profile: &Profile,
) -> Result<(), Error> {
    let log = policy.approval.audit_log.path();
    for (what, path) in [
        ("the policy", policy.path.is_some().then_some(named)),
        (policy.approval.audit_log.key(), log),
    ] {
        let Some(path) = path else { continue };
        if let Some((link, root)) = paths::symlink_in_writable_root(path, profile) {
            return Err(Error::failure(format!(
                "{what} {} is named through the symlink {} inside the writable root {}: the command could re-point it; name the real path",
                path.display(),
                link.display(),
                root.display()
            )));
        }
    }
    Ok(())
}
