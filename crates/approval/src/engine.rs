//! The engine: decides requests, applies answers, asks with a deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_policy::{Action, ApprovalMode, Policy};

use crate::amend::Amendment;
use crate::audit::{self, AuditLog, SharedLog};
use crate::explain::{Explanation, KeyExplained};
use crate::memory::{DoomLoop, SessionMemory};
use crate::outcome::{mode_name, timed_out_reason, Answer, AskError, By, Outcome, Pending};
use crate::request::{Concern, Key, Request};
use crate::resolve_mode;
use crate::toolrules::KeyVerdict;
use crate::toolrules::{matches_everything, Rules};
use crate::Error;
use crate::RuleRef;
use cordon_policy::network::NETWORK_TOOL;

/// Asks a person, blocking. `deadline` is when the engine stops waiting: an answer that comes
/// later counts as no answer (the request is denied as timed out).
pub trait Asker {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: Instant,
    ) -> Result<Answer, AskError>;

    /// [`Asker::ask`] for a question that can be withdrawn: `withdrawn()` turns true once the
    /// answer can no longer matter (the run whose connection it is about is over). An asker
    /// that waits for a person checks it while waiting and gives up with
    /// [`AskError::Lost`]. The default asks as [`Asker::ask`] does.
    fn ask_withdrawable(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: Instant,
        withdrawn: &dyn Fn() -> bool,
    ) -> Result<Answer, AskError> {
        let _ = withdrawn;
        self.ask(request, pending, deadline)
    }
}

impl<F> Asker for F
where
    F: FnMut(&Request, &Pending, Instant) -> Result<Answer, AskError>,
{
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: Instant,
    ) -> Result<Answer, AskError> {
        self(request, pending, deadline)
    }
}

/// Asks a person, asynchronously. The engine wraps the future in the policy's timeout.
pub trait AsyncAsker {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
    ) -> impl Future<Output = Result<Answer, AskError>> + Send;
}

/// Saves an "approve always" rule where later calls find it (e.g. [`crate::amend::append`] to
/// the rules file): `Ok(None)` when an identical rule is already there. Given to
/// [`Engine::set_rule_store`], it runs before the decision is recorded, so the record says
/// whether the rule was saved.
pub type RuleStore = dyn Fn(&Amendment) -> Result<Option<String>, Error> + Send + Sync;

/// A tool a blanket deny removes (hide it from the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disabled {
    pub tool: String,
    pub by: By,
    pub reason: String,
}

/// Decides requests for one session: rules, tool defaults, session grants, doom loop, mode.
///
/// The order, per request:
/// 1. each key by the rules ([`Rules`]): the first matching deny (for a shell key also a deny
///    rule naming an option that stands elsewhere in the key), else the last match, else the
///    tool's default (`[shell] default`, `[tools.NAME] approval`; for a file tool the root that
///    holds the path, [`Request::file`]: its `read_approval`/`write_approval` ask, else its
///    mode's allow; else `ask`); a passing key ([`Request::passing`]: a wrapper, `cd src`)
///    is allowed by its check unless a rule names it; the most restrictive wins. Any deny
///    here is final — no grant or mode relaxes it.
/// 2. an ask whose keys are all granted for the session is allowed (session grant) — unless
///    the tool raised a concern the keys do not capture ([`Request::concerns`]), which asks
///    (or denies) whatever the grants say; a front end's refusal (the gate's `refuse`) is
///    such a deny concern, final like a rule's deny. A concern about an option of one command is lifted
///    by an explicit allow rule on that command's key that names the option. A file tool's
///    write on the persistence surface asks whatever the rules and grants say, as the shell's
///    surface concern does: what a person approves there is one content, which a program of
///    the operator's runs later outside any sandbox, and a grant for the key (the path) would
///    let any later content through.
/// 3. the doom loop: the same tool with the same keys `doom_loop` times in a row turns an
///    allow into an ask (connections, the `network` tool, are not counted).
/// 4. the mode resolves what is still an ask: `approve-all` allows, `strict` and `deny`
///    deny, `interactive` leaves it an ask ([`Outcome::Ask`]). Who answers it is the front
///    end's business: an [`Asker`], an agent host ([`Engine::defer`]), or nobody
///    ([`AskError::NobodyToAsk`], a denial [`By::NobodyToAsk`]).
///
/// [`Engine::explain`] is this evaluation, pure; [`Engine::evaluate`] is `explain` plus the
/// doom-loop count and the record.
///
/// A tool's configured pre-approval (`[tools.NAME] approval = "allow"`) is an allow, and an
/// allow stays an allow in every mode, `strict` included.
///
/// With an audit log ([`Engine::set_audit`]), every final outcome — from [`Engine::evaluate`],
/// an answer, a timeout, a lost channel, a batch's cascades and its unanswered leftovers — is
/// appended (and synced) *before* the engine hands it out. A record that cannot be written
/// turns the outcome into a denial ([`By::AuditFailed`]): nothing runs unrecorded.
#[derive(Debug, Clone)]
pub struct Engine {
    rules: Rules,
    mode: ApprovalMode,
    timeout: Duration,
    doom_threshold: u32,
    memory: SessionMemory,
    doom: DoomLoop,
    audit: Option<Arc<SharedLog>>,
    rule_store: Option<StoreHandle>,
}

/// An outcome whose record is written but perhaps not yet durable ([`Engine::evaluate_unsynced`]):
/// [`Decided::durable`] hands it out once it is, or a denial ([`By::AuditFailed`]) when the
/// sync failed. Dropped unread, the outcome is lost — never handed out unrecorded.
#[must_use = "the outcome is handed out only by Decided::durable"]
pub struct Decided {
    outcome: Outcome,
    /// The log, the record to wait for, and the decision in words for a failure's reason.
    pending: Option<(Arc<SharedLog>, audit::Unsynced, String)>,
}

impl Decided {
    fn ready(outcome: Outcome) -> Decided {
        Decided {
            outcome,
            pending: None,
        }
    }

    /// The outcome, once its record is durable (this may wait for a sync another thread is
    /// making); a record that could not be made durable denies.
    pub fn durable(self) -> Outcome {
        match self.pending {
            None => self.outcome,
            Some((log, unsynced, failed)) => match log.durable(unsynced) {
                Ok(_) => self.outcome,
                Err(e) => audit_failed(&failed, &e),
            },
        }
    }
}

impl Decided {
    /// For a caller that makes this record durable together with a record of its own written
    /// after it (the network proxy's open record: one sync for both, not two): the outcome
    /// now, and what must return `Ok` before the caller acts on it. The outcome must not reach
    /// anyone outside the process (no byte relayed, no answer sent) before [`Durable::wait`]
    /// returned `Ok`; an `Err` is the denial to act on instead.
    pub fn defer(self) -> (Outcome, Durable) {
        (
            self.outcome,
            Durable {
                pending: self.pending,
            },
        )
    }
}

/// The wait for a deferred record ([`Decided::defer`]).
#[must_use = "a deferred outcome may be acted on only once Durable::wait returned Ok"]
pub struct Durable {
    pending: Option<(Arc<SharedLog>, audit::Unsynced, String)>,
}

impl Durable {
    /// Returns once the record is durable (a sync that covers it, shared with every record
    /// written before the sync began: write yours first, then wait here); `Err` is the
    /// denial ([`By::AuditFailed`], naming the log and why) when it could not be made durable.
    pub fn wait(self) -> Result<(), Outcome> {
        match self.pending {
            None => Ok(()),
            Some((log, unsynced, failed)) => match log.durable(unsynced) {
                Ok(_) => Ok(()),
                Err(e) => Err(audit_failed(&failed, &e)),
            },
        }
    }
}

impl std::fmt::Debug for Durable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable")
            .field("synced", &self.pending.is_none())
            .finish()
    }
}

impl std::fmt::Debug for Decided {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decided")
            .field("outcome", &self.outcome)
            .field("synced", &self.pending.is_none())
            .finish()
    }
}

/// The denial of a decision (`failed`: "allow by rule …: reason") whose record could not be
/// made durable.
fn audit_failed(failed: &str, e: &Error) -> Outcome {
    Outcome::denied(
        By::AuditFailed,
        format!("audit log: the decision ({failed}) could not be recorded ({e}), so the call was denied"),
    )
}

/// The engine's [`RuleStore`] (a closure has no `Debug`).
#[derive(Clone)]
struct StoreHandle(Arc<RuleStore>);

impl std::fmt::Debug for StoreHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuleStore")
    }
}

impl Engine {
    /// An engine for `policy`: its rules, tool defaults and `[approval]` settings.
    pub fn new(policy: &Policy) -> Engine {
        Engine::with_rules(Rules::from_policy(policy), policy)
    }

    /// An engine with prepared rules (e.g. with persisted grants added) and the policy's
    /// `[approval]` settings.
    pub fn with_rules(rules: Rules, policy: &Policy) -> Engine {
        Engine {
            rules,
            mode: policy.approval.mode,
            timeout: policy.approval.timeout,
            doom_threshold: policy.approval.doom_loop,
            memory: SessionMemory::new(),
            doom: DoomLoop::default(),
            audit: None,
            rule_store: None,
        }
    }

    /// Records every final outcome in `log` before returning it (see the type's docs). The
    /// log's session id is the session id of the records.
    pub fn set_audit(&mut self, log: AuditLog) {
        self.set_shared_audit(Arc::new(SharedLog::new(log)));
    }

    /// The log this engine records in, to share with other writers of this process (the
    /// network proxy's connection records): their records then share its group syncs.
    pub fn audit_log(&self) -> Option<Arc<SharedLog>> {
        self.audit.clone()
    }

    /// [`Engine::set_audit`] with a log shared with others in this process (the network
    /// proxy's connection records, another engine): their records share its group syncs.
    pub fn set_shared_audit(&mut self, log: Arc<SharedLog>) {
        self.audit = Some(log);
    }

    /// Saves "approve always" rules with `store` as part of the decision, before it is
    /// recorded: the outcome (and its record) says the rule was saved, or — when saving failed
    /// — that the call was approved once and why nothing was remembered. The outcome's
    /// `amendments` are then empty: nothing is left for the host to save. Without a store, the
    /// host saves them after the decision (see [`Outcome::Allowed`]). Should the record then
    /// fail (a denial [`By::AuditFailed`]), the host takes back what its store saved
    /// ([`crate::amend::retract`]): nothing may stay granted that the log does not show.
    pub fn set_rule_store(
        &mut self,
        store: impl Fn(&Amendment) -> Result<Option<String>, Error> + Send + Sync + 'static,
    ) {
        self.rule_store = Some(StoreHandle(Arc::new(store)));
    }

    /// Restores the doom-loop state of a session that continues in a new engine (e.g. the
    /// next `cordon exec` of the same session): the last call's fingerprint and how many
    /// times in a row it came.
    pub fn set_doom_state(&mut self, state: (Option<u64>, u32)) {
        self.doom = DoomLoop::from_state(state);
    }

    /// The doom-loop state, to carry a session over to another engine.
    pub fn doom_state(&self) -> (Option<u64>, u32) {
        self.doom.state()
    }

    /// Records `outcome` for `req` when it is final and an audit log is set; a record that
    /// cannot be written denies.
    pub(crate) fn settle(&mut self, req: &Request, outcome: Outcome) -> Outcome {
        self.settle_with(req, outcome, None)
    }

    /// [`Engine::settle`], with the arguments a person substituted (their digest is recorded).
    pub(crate) fn settle_with(
        &mut self,
        req: &Request,
        outcome: Outcome,
        substituted: Option<&serde_json::Value>,
    ) -> Outcome {
        if outcome.is_ask() {
            return outcome;
        }
        self.record(req, outcome, substituted, None)
    }

    /// Hands a pending ask to an agent host's own prompt (`cordon hook`): recorded as
    /// decision `ask`, `deferred_to` the host, and returned as the ask it is. What the host's
    /// user answers is the host's to keep; a record that cannot be written denies
    /// ([`By::AuditFailed`]).
    pub fn defer(&mut self, req: &Request, pending: Pending, host: &str) -> Outcome {
        self.record(req, Outcome::Ask(pending), None, Some(host))
    }

    /// Appends the record of `outcome` (an ask only when deferred to `host`) when an audit log
    /// is set, and makes it durable; a record that cannot be written turns the outcome into a
    /// denial.
    fn record(
        &mut self,
        req: &Request,
        outcome: Outcome,
        substituted: Option<&serde_json::Value>,
        host: Option<&str>,
    ) -> Outcome {
        self.write_record(req, outcome, substituted, host).durable()
    }

    /// [`Engine::record`] without waiting for the sync: see [`Decided`].
    fn write_record(
        &self,
        req: &Request,
        outcome: Outcome,
        substituted: Option<&serde_json::Value>,
        host: Option<&str>,
    ) -> Decided {
        let Some(log) = &self.audit else {
            return Decided::ready(outcome);
        };
        let (decision, by, reason, note) = match &outcome {
            Outcome::Allowed { by, reason, .. } => (Action::Allow, by, reason, None),
            Outcome::Denied { by, reason, note } => (Action::Deny, by, reason, note.as_ref()),
            Outcome::Ask(p) => (Action::Ask, &p.by, &p.reason, None),
        };
        let mut record = audit::Record::new(&req.tool, decision, audit::By::from(by), reason)
            .request(&req.id)
            .client_request(req.client_request.clone())
            .keys(req.keys.iter().map(|k| k.words().to_vec()))
            .args(substituted.unwrap_or(&req.args))
            .preview(&req.presentation.summary);
        if let Some(host) = host {
            record = record.deferred_to(host);
        }
        if let Some(n) = note {
            record = record.note(n.clone());
        } else if substituted.is_some() {
            record = record.note("arguments substituted by the user");
        }
        let failed = format!("{} by {by}: {reason}", decision.as_str());
        match log.write(&record) {
            Ok(unsynced) => Decided {
                outcome,
                pending: Some((log.clone(), unsynced, failed)),
            },
            Err(e) => Decided::ready(audit_failed(&failed, &e)),
        }
    }

    /// Records that cordon refused to run `req`, allowed, for its own reasons (`reason`: what,
    /// why, what to do — the sandbox could not be built, a file it must check was re-pointed):
    /// a record of kind `refusal` ([`audit::Record::refusal`]) after the call's decision.
    /// Without an audit log there is nothing to record in: `Ok`.
    pub fn record_refusal(&self, req: &Request, reason: &str) -> Result<(), Error> {
        match &self.audit {
            Some(log) => log
                .append(&refusal_record(req, "refusal", reason))
                .map(|_| ()),
            None => Ok(()),
        }
    }

    /// Overrides the mode (e.g. `--approve-all`).
    pub fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
    }

    /// Overrides the approval timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Overrides the doom-loop threshold (0: off).
    pub fn set_doom_loop(&mut self, n: u32) {
        self.doom_threshold = n;
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn rules_mut(&mut self) -> &mut Rules {
        &mut self.rules
    }

    /// The session's grants (list them).
    pub fn memory(&self) -> &SessionMemory {
        &self.memory
    }

    /// The session's grants (revoke them).
    pub fn memory_mut(&mut self) -> &mut SessionMemory {
        &mut self.memory
    }

    /// Decides `req` without asking anyone: allowed, denied, or [`Outcome::Ask`]. Counts the
    /// request for the doom loop. A final outcome is recorded (with an audit log); an ask is
    /// not: it is recorded when it is concluded ([`Engine::conclude`]) or handed to an agent
    /// host ([`Engine::defer`]).
    pub fn evaluate(&mut self, req: &Request) -> Outcome {
        self.evaluate_unsynced(req).durable()
    }

    /// [`Engine::evaluate`] for a caller that holds the engine under a lock of its own (a
    /// long-lived front end deciding calls on several threads): the record is written, and
    /// [`Decided::durable`] — called after that lock is let go — waits for the sync that
    /// covers it, shared with the records other threads wrote meanwhile (group commit). The
    /// outcome is handed out only by `durable`, and only once its record is durable.
    pub fn evaluate_unsynced(&mut self, req: &Request) -> Decided {
        // Connections (the `network` tool) are opened by the programs an agent runs, many to
        // the same host (a package manager's downloads), not called by the agent: they
        // neither count in the doom loop nor break the run of the agent's own calls.
        let in_a_row = if req.tool == NETWORK_TOOL {
            0
        } else {
            self.doom.observe(&req.tool, &doom_keys(req))
        };
        let o = self.explain_counted(req, in_a_row).outcome;
        if o.is_ask() {
            return Decided::ready(o);
        }
        self.write_record(req, o, None, None)
    }

    /// How `req` would be decided now, step by step (see [`Explanation`]): what
    /// [`Engine::evaluate`] returns for it, without counting it for the doom loop, recording
    /// it or changing anything. The prompt's preview and `cordon check` read this.
    pub fn explain(&self, req: &Request) -> Explanation {
        let in_a_row = if req.tool == NETWORK_TOOL {
            0
        } else {
            self.doom.peek(&req.tool, &doom_keys(req))
        };
        self.explain_counted(req, in_a_row)
    }

    /// The one evaluator, given how many times in a row the call has come.
    fn explain_counted(&self, req: &Request, in_a_row: u32) -> Explanation {
        let mut keys: Vec<KeyExplained> = req
            .keys
            .iter()
            .map(|key| match self.rules.decide_key(&req.tool, key.words()) {
                Some(verdict) => KeyExplained {
                    key: key.clone(),
                    verdict: self.rules.unsure(&req.tool, key, verdict),
                    by_default: false,
                },
                None => {
                    // A could-match names a rule: the key is no longer decided by the default.
                    let default = self.default_for(req);
                    let action = default.action;
                    let verdict = self.rules.unsure(&req.tool, key, default);
                    KeyExplained {
                        key: key.clone(),
                        by_default: verdict.action == action,
                        verdict,
                    }
                }
            })
            .collect();
        // Keys that pass unless a rule names them come last: among equals the first decides
        // the reason, so `timeout 60 pytest` is allowed by the rule on `pytest`.
        keys.extend(req.passing.iter().map(|p| {
            KeyExplained {
                key: p.key.clone(),
                verdict: self.rules.unsure(
                    &req.tool,
                    &p.key,
                    self.rules
                        .decide_key(&req.tool, p.key.words())
                        .unwrap_or_else(|| KeyVerdict {
                            action: Action::Allow,
                            by: By::Tool(RuleRef::Builtin(p.check)),
                            reason: p.reason.clone(),
                        }),
                ),
                by_default: false,
            }
        }));
        // For a file tool, what the persistence surface adds: a write there makes a program
        // of the operator's run something later, outside any sandbox, so neither the root's
        // mode nor a rule's allow nor a session grant allows it (below, after the grant). A
        // front end's refusal is a deny concern, below.
        let verdict = surface(req);
        // The most restrictive concern that no explicit allow rule lifted (first among equals).
        let concerns: Vec<KeyVerdict> = req
            .concerns
            .iter()
            .filter(|c| !lifted(c, &keys))
            .map(|c| KeyVerdict {
                action: c.action,
                by: By::Tool(RuleRef::Builtin(c.check)),
                reason: c.reason.clone(),
            })
            .collect();
        let mut concern: Option<KeyVerdict> = None;
        for c in &concerns {
            if concern.as_ref().is_none_or(|w| c.action > w.action) {
                concern = Some(c.clone());
            }
        }
        let rules = self.combine(req, &keys);
        let granted = self.grant_keys(req);
        let session_grant = !granted.is_empty() && self.memory.covers(&req.tool, &granted);
        let mut e = Explanation {
            keys,
            verdict,
            concerns,
            concern,
            rules: rules.clone(),
            session_grant,
            in_a_row,
            doom_loop: false,
            mode: self.mode,
            outcome: Outcome::denied(rules.by.clone(), rules.reason.clone()),
        };
        // Any deny of the rules, or of the tool's concern, is final: no grant or mode relaxes it.
        if rules.action == Action::Deny {
            return e;
        }
        if let Some(c) = e.concern.as_ref().filter(|c| c.action == Action::Deny) {
            e.outcome = Outcome::denied(c.by.clone(), c.reason.clone());
            return e;
        }
        let mut now = if rules.action == Action::Ask && session_grant {
            KeyVerdict {
                action: Action::Allow,
                by: By::SessionGrant,
                reason: "every operation was approved for this session".to_string(),
            }
        } else {
            rules
        };
        // The surface's ask is about this write's content, not the key: no grant covers it.
        // Tied with an ask only by default (the root's `write_approval`), it is the one shown:
        // the person must learn that the file is one a program of the operator's runs.
        if let Some(v) = e.verdict.as_ref() {
            let by_default = e.keys.iter().all(|k| k.by_default);
            if v.action > now.action || (v.action == now.action && by_default) {
                now = v.clone();
            }
        }
        // A concern is not in the keys, so no grant covers it: it asks again.
        if let Some(c) = e.concern.as_ref().filter(|c| c.action > now.action) {
            now = c.clone();
        }
        if now.action == Action::Allow && self.doom_threshold > 0 && in_a_row >= self.doom_threshold
        {
            e.doom_loop = true;
            now = KeyVerdict {
                action: Action::Ask,
                by: By::DoomLoop { count: in_a_row },
                reason: format!(
                    "the same `{}` call came {in_a_row} times in a row (doom-loop check); \
                     it would be allowed ({}), but a person should look first",
                    req.tool, now.reason
                ),
            };
        }
        let KeyVerdict { action, by, reason } = now;
        e.outcome = match action {
            Action::Allow => Outcome::allowed(by, reason),
            Action::Deny => Outcome::denied(by, reason),
            Action::Ask => match resolve_mode(Action::Ask, self.mode) {
                (Action::Ask, _) => Outcome::Ask(Pending { by, reason }),
                (a, why) => {
                    let why = why.unwrap_or("resolved by mode");
                    let reason = format!("{why} ({reason})");
                    let by = By::Mode(self.mode);
                    if a == Action::Allow {
                        Outcome::allowed(by, reason)
                    } else {
                        Outcome::denied(by, reason)
                    }
                }
            },
        };
        e
    }

    /// The keys a session grant is given for and must cover: the request's keys and every
    /// passing key a rule names (a rule made it a decision of its own).
    fn grant_keys(&self, req: &Request) -> Vec<crate::request::Key> {
        let mut out = req.keys.clone();
        out.extend(
            req.passing
                .iter()
                .filter(|p| self.rules.decide_key(&req.tool, p.key.words()).is_some())
                .map(|p| p.key.clone()),
        );
        out
    }

    /// Step 1: the keys' verdicts and the defaults — a rule's deny first, else the most
    /// restrictive, the first among equals.
    fn combine(&self, req: &Request, keys: &[KeyExplained]) -> KeyVerdict {
        if let Some(k) = keys
            .iter()
            .find(|k| !k.by_default && k.verdict.action == Action::Deny)
        {
            return k.verdict.clone();
        }
        fn take(worst: &mut Option<KeyVerdict>, c: &KeyVerdict) {
            if worst.as_ref().is_none_or(|w| c.action > w.action) {
                *worst = Some(c.clone());
            }
        }
        let mut worst = None;
        for k in keys {
            take(&mut worst, &k.verdict);
        }
        if keys.is_empty() {
            // No keys to match a pattern against; a rule that denies every call of the tool
            // still applies (the tool is reported disabled, and must act so). Passing keys
            // alone (`true`, `cd src`) are keys: allowed by their check, as in a longer line.
            if let Some((by, reason)) = self.blanket_deny(&req.tool) {
                return KeyVerdict {
                    action: Action::Deny,
                    by,
                    reason,
                };
            }
            take(&mut worst, &self.default_for(req));
        }
        worst.unwrap_or_else(|| self.default_for(req))
    }

    /// A deny rule of `tool` that matches every call (`*` or `**`), with its reason.
    fn blanket_deny(&self, tool: &str) -> Option<(By, String)> {
        let (r, _) = self
            .rules
            .rules_for(tool)
            .find(|(r, _)| r.action == Action::Deny && matches_everything(&r.pattern))?;
        Some((
            By::Rule {
                location: r.location.clone(),
                pattern: r.pattern.as_str().to_string(),
            },
            r.reason.clone().unwrap_or_else(|| {
                format!("rule `{}` denies every `{tool}` call", r.pattern.as_str())
            }),
        ))
    }

    /// The decision for a key no rule matches.
    fn default_for(&self, req: &Request) -> KeyVerdict {
        if let Some((action, by, reason)) = self.rules.tool_default(&req.tool) {
            return KeyVerdict {
                action,
                by: by.clone(),
                reason: reason.to_string(),
            };
        }
        if let Some(access) = &req.file {
            return self.rules.file_default(access);
        }
        KeyVerdict {
            action: Action::Ask,
            by: By::Default {
                tool: req.tool.clone(),
            },
            reason: format!("no rule matches and `{}` has no default: ask", req.tool),
        }
    }

    /// Applies a person's answer to a pending request (recorded, with an audit log).
    pub fn answer(&mut self, req: &Request, answer: Answer) -> Outcome {
        self.apply_answer(req, answer, None)
    }

    /// Records the answer's outcome, then — only if it is still an allow (the record was
    /// written) — remembers a session or always grant.
    fn apply_answer(
        &mut self,
        req: &Request,
        answer: Answer,
        substituted: Option<&serde_json::Value>,
    ) -> Outcome {
        let (o, remember) = match answer {
            // Nothing to remember: no grant or rule would cover the next write there.
            Answer::Session | Answer::Always if !remembers(req) => (
                Outcome::allowed(
                    By::User,
                    "approved once by the user: a write on the persistence surface is asked for each write, so nothing was remembered",
                ),
                false,
            ),
            answer => Engine::outcome_of(req, answer),
        };
        let (o, remember) = match (&self.rule_store, o) {
            (Some(store), Outcome::Allowed { by, amendments, .. }) if !amendments.is_empty() => {
                Engine::store_rules(&*store.0, by, &amendments)
            }
            (_, o) => (o, remember),
        };
        let o = self.settle_with(req, o, substituted);
        if remember && o.is_allowed() {
            for k in &self.grant_keys(req) {
                self.memory.grant(&req.tool, k.clone());
            }
        }
        o
    }

    /// Saves an "approve always" answer's rules with the store: all saved, the outcome says
    /// so; one failed, the call is approved once (no session grant), and the outcome says
    /// which rules were saved before the failure and why the rest were not.
    fn store_rules(store: &RuleStore, by: By, amendments: &[Amendment]) -> (Outcome, bool) {
        let mut saved = Vec::new();
        for a in amendments {
            match store(a) {
                Ok(_) => saved.push(format!("`{}`", a.pattern)),
                Err(e) => {
                    let before = if saved.is_empty() {
                        String::new()
                    } else {
                        format!(" (saved before it: {})", saved.join(", "))
                    };
                    let reason = format!(
                        "approved once by the user; the rule `{}` could not be saved: {e}{before}",
                        a.pattern
                    );
                    return (Outcome::allowed(by, reason), false);
                }
            }
        }
        let reason = format!(
            "approved by the user always (rule saved: {})",
            saved.join(", ")
        );
        (Outcome::allowed(by, reason), true)
    }

    /// What an answer means, and whether its keys are to be granted for the session.
    fn outcome_of(req: &Request, answer: Answer) -> (Outcome, bool) {
        match answer {
            Answer::Once => (
                Outcome::allowed(By::User, "approved once by the user"),
                false,
            ),
            Answer::Session => (
                Outcome::allowed(By::User, "approved by the user for this session"),
                true,
            ),
            Answer::Always => match Amendment::for_request(req) {
                Ok(amendments) => (
                    Outcome::Allowed {
                        by: By::User,
                        reason: "approved by the user always (a rule is to be saved)".into(),
                        amendments,
                    },
                    true,
                ),
                Err(e) => (
                    Outcome::allowed(
                        By::User,
                        format!("approved once by the user; not remembered: {e}"),
                    ),
                    false,
                ),
            },
            Answer::Deny => (Outcome::denied(By::User, "denied by the user"), false),
            Answer::DenyWithNote(note) => (
                Outcome::Denied {
                    by: By::User,
                    reason: format!("denied by the user: {note}"),
                    note: Some(note),
                },
                false,
            ),
            Answer::Abort => (
                Outcome::denied(By::Abort, "the user aborted the run"),
                false,
            ),
        }
    }

    /// Settles a request that [`Engine::evaluate`] left pending, with what the asker gave:
    /// an answer (`late`: it came after the deadline, so it counts as none), a timeout, a
    /// lost channel or nobody to ask. Recorded like every final outcome. For hosts that ask a person without
    /// holding the engine (several calls in flight, each asked on its own).
    pub fn conclude(
        &mut self,
        req: &Request,
        result: Result<Answer, AskError>,
        late: bool,
    ) -> Outcome {
        self.resolve(req, result, late, None)
    }

    /// Turns an asker's result into an outcome.
    pub(crate) fn resolve(
        &mut self,
        req: &Request,
        result: Result<Answer, AskError>,
        late: bool,
        substituted: Option<&serde_json::Value>,
    ) -> Outcome {
        let o = match result {
            Ok(a) if !late => return self.apply_answer(req, a, substituted),
            Ok(_) | Err(AskError::TimedOut) => {
                Outcome::denied(By::TimedOut, timed_out_reason(self.timeout))
            }
            Err(AskError::Lost(why)) => Outcome::denied(
                By::ChannelLost,
                format!("the approval channel failed ({why}), so the call was denied"),
            ),
            Err(AskError::NobodyToAsk(why)) => Outcome::denied(By::NobodyToAsk, why),
        };
        self.settle_with(req, o, substituted)
    }

    /// Decides `req`, asking `asker` when a person must answer, within the timeout.
    pub fn decide_blocking(&mut self, req: &Request, asker: &mut dyn Asker) -> Outcome {
        match self.evaluate(req) {
            Outcome::Ask(p) => {
                let deadline = Instant::now() + self.timeout;
                self.ask_blocking(req, &p, deadline, asker)
            }
            o => o,
        }
    }

    pub(crate) fn ask_blocking(
        &mut self,
        req: &Request,
        p: &Pending,
        deadline: Instant,
        asker: &mut dyn Asker,
    ) -> Outcome {
        if Instant::now() >= deadline {
            return self.resolve(req, Err(AskError::TimedOut), true, None);
        }
        let result = asker.ask(req, p, deadline);
        let late = Instant::now() > deadline;
        self.resolve(req, result, late, None)
    }

    /// Decides `req`, asking `asker` when a person must answer; no answer within the timeout
    /// denies.
    pub async fn decide<A: AsyncAsker>(&mut self, req: &Request, asker: &mut A) -> Outcome {
        match self.evaluate(req) {
            Outcome::Ask(p) => {
                let deadline = tokio::time::Instant::now() + self.timeout;
                self.ask_async(req, &p, deadline, asker).await
            }
            o => o,
        }
    }

    pub(crate) async fn ask_async<A: AsyncAsker>(
        &mut self,
        req: &Request,
        p: &Pending,
        deadline: tokio::time::Instant,
        asker: &mut A,
    ) -> Outcome {
        let result = tokio::time::timeout_at(deadline, asker.ask(req, p))
            .await
            .unwrap_or(Err(AskError::TimedOut));
        self.resolve(req, result, false, None)
    }

    /// The tools of `tools` a blanket deny removes: a deny rule matching every key, or a
    /// default that ends in deny (after the mode) with no rule that could allow or ask.
    pub fn disabled_tools<'a, I>(&self, tools: I) -> Vec<Disabled>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let effective = |a: Action| resolve_mode(a, self.mode).0;
        let mut out = Vec::new();
        for tool in tools {
            if let Some((by, reason)) = self.blanket_deny(tool) {
                out.push(Disabled {
                    tool: tool.to_string(),
                    by,
                    reason,
                });
                continue;
            }
            let Some((default, by, _)) = self.rules.tool_default(tool) else {
                continue;
            };
            if effective(default) != Action::Deny {
                continue;
            }
            if self
                .rules
                .rules_for(tool)
                .any(|(r, _)| effective(r.action) != Action::Deny)
            {
                continue;
            }
            let reason = if default == Action::Deny {
                format!("`{tool}` is denied by default and no rule allows it")
            } else {
                format!(
                    "`{tool}` always asks, and mode {} denies every ask",
                    mode_name(self.mode)
                )
            };
            out.push(Disabled {
                tool: tool.to_string(),
                by: if default == Action::Deny {
                    by.clone()
                } else {
                    By::Mode(self.mode)
                },
                reason,
            });
        }
        out
    }
}

/// What makes two calls "the same call" for the doom loop: the tool and its keys — and for a
/// wrapped MCP tool, whose one key names only the tool (`SERVER/TOOL`), its arguments too:
/// three reads of three files are not a loop.
fn doom_keys(req: &Request) -> std::borrow::Cow<'_, [Key]> {
    if req.tool == cordon_policy::mcp::MCP_TOOL {
        let mut keys = req.keys.clone();
        keys.push(Key::new([req.args.to_string()]));
        std::borrow::Cow::Owned(keys)
    } else {
        std::borrow::Cow::Borrowed(&req.keys)
    }
}

/// Whether a "session" or "always" answer to `req` is remembered: not for a file tool's write
/// on the persistence surface, which asks for each write (no grant or rule covers the next
/// one), so a front end leaves those choices out of its question.
pub fn remembers(req: &Request) -> bool {
    surface(req).is_none()
}

/// A file tool's write on the persistence surface: at least an ask (rule `builtin:surface`).
fn surface(req: &Request) -> Option<KeyVerdict> {
    let access = req.file.as_ref().filter(|a| a.writes)?;
    let why = access.surface.as_ref()?;
    let path = req
        .keys
        .first()
        .and_then(|k| k.words().get(1))
        .map(String::as_str)
        .unwrap_or_default();
    Some(KeyVerdict {
        action: Action::Ask,
        by: By::Tool(RuleRef::Builtin("surface")),
        reason: format!(
            "{} of `{path}`, which a program of the operator's runs or takes commands from outside the sandbox: {why}",
            req.tool
        ),
    })
}

/// A concern about an option of one command is lifted by an explicit allow rule (the policy's
/// or a remembered one) that decides that command's key and names the option (`find * -delete`): the operator
/// allowed that form, not just the program.
fn lifted(c: &Concern, keys: &[KeyExplained]) -> bool {
    let Some((key, option)) = &c.lift else {
        return false;
    };
    keys.iter().any(|k| {
        &k.key == key
            && k.verdict.action == Action::Allow
            && matches!(&k.verdict.by, By::Rule { pattern, .. } | By::PersistedGrant { pattern, .. }
                if pattern.split(' ').any(|token| token == option))
    })
}

/// The refusal record of `req`, a call whose decision was recorded before: kind `refusal`, by
/// `builtin:CATEGORY` (`refusal`: cordon could not run it; `deadline`: the hook's host was
/// told to block it after its decision was recorded), with the call's id and keys.
pub fn refusal_record(req: &Request, category: &str, reason: &str) -> audit::Record {
    let mut record = audit::Record::refusal(&req.tool, reason)
        .request(&req.id)
        .client_request(req.client_request.clone())
        .keys(req.keys.iter().map(|k| k.words().to_vec()))
        .args(&req.args)
        .preview(&req.presentation.summary);
    record.by = audit::By::Builtin {
        tag: category.to_string(),
    };
    record
}
