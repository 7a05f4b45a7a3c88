//! Deciding a call: the engine's answer, a person asked where one must answer, the session
//! saved, the decision recorded before it is handed out.

use super::*;
use cordon_approval::Durable;

impl Gate {
    /// How `call` would be decided now, step by step ([`Explanation`]): each command's rule
    /// or default, the tool's concerns, the session's grants, the doom loop, the mode and the
    /// outcome — what [`Gate::decide`] would start from. Pure: nothing is asked, recorded or
    /// saved (a named session is read, never written). `cordon check` prints it.
    pub fn explain(&self, call: &Call) -> Result<Explanation, Error> {
        let session = self.open_session()?;
        let mut engine = lock(&self.engine);
        if let Some(s) = &session {
            s.restore(&mut engine);
        }
        Ok(engine.explain(&call.request))
    }

    /// Decides `call`, asking `asker` when a person must answer (no answer within the
    /// policy's timeout denies), and records the final decision before returning. On a gate
    /// for an agent host ([`FrontEnd::Host`]) an ask is not put to `asker`: it is recorded as
    /// an ask deferred to the host and returned as one ([`Decision::is_ask`]).
    pub fn decide(&self, call: &Call, asker: &mut dyn Asker) -> Decision {
        self.decide_deferring(call, asker, false).0
    }

    /// [`Gate::decide`]; with `defer`, a call the rules allow (nobody asked) is returned with
    /// its record perhaps not yet durable, and the wait for it ([`cordon_approval::Durable`]):
    /// for the network proxy, which makes it durable with the connection's open record (one
    /// sync for both) and acts on the decision only after that. Any other decision is durable
    /// when returned, as without `defer`.
    pub(crate) fn decide_deferring(
        &self,
        call: &Call,
        asker: &mut dyn Asker,
        defer: bool,
    ) -> (Decision, Option<Durable>) {
        let (mut session, first, durable) = match self.begin(call, defer) {
            Ok(begun) => begun,
            Err(failed) => return (failed, None),
        };
        let concluded = match first {
            Outcome::Ask(p) if self.defers() => self.defer(call, p),
            Outcome::Ask(p) => {
                let released = self.release_while_asking(call, &mut session);
                let deadline = Instant::now() + lock(&self.engine).timeout();
                let result = if Instant::now() >= deadline {
                    Err(AskError::TimedOut)
                } else {
                    self.nobody_says_how(&p, asker.ask(&call.request, &p, deadline))
                };
                let late = Instant::now() > deadline;
                match self.conclude(call, &mut session, released, result, late) {
                    Ok(c) => c,
                    Err(failed) => return (failed, None),
                }
            }
            o => Concluded::of(o),
        };
        (self.settle(call, concluded, session.as_mut()), durable)
    }

    /// [`Gate::decide`] for a front end that runs the call at once ([`Gate::run_provisional`],
    /// `cordon exec`): a shell call the engine allows without asking anyone is settled while
    /// its record is still being made durable, on a thread of its own, so that the sandbox is
    /// built meanwhile; the command starts only once the record is durable, and never when it
    /// could not be made so. Every other call is decided as [`Gate::decide`] decides it.
    #[allow(clippy::result_large_err)] // the sync thread hands back the denial, one per run
    pub fn decide_provisional(&self, call: &Call, asker: &mut dyn Asker) -> Provisional {
        let settled = |decision| Provisional {
            decision,
            sync: None,
        };
        let overlaps = matches!(call.what, What::Shell(_));
        let (decision, durable) = self.decide_deferring(call, asker, overlaps);
        let Some(durable) = durable else {
            return settled(decision);
        };
        if !decision.is_allowed() {
            // The session could not be saved: nothing runs; the record stands as written.
            let _ = durable.wait();
            return settled(decision);
        }
        match spawn_helper("cordon-audit-sync", move || durable.wait()) {
            Ok(handle) => Provisional {
                decision,
                sync: Some(handle),
            },
            // The record is written but nobody makes it durable: nothing is handed out.
            Err(e) => settled(Decision::failed(
                call,
                Some(By::AuditFailed),
                format!("cannot start the thread that makes the decision's record durable ({e}): not run"),
            )),
        }
    }

    /// [`Gate::decide`] for an agent host's hook deciding a shell line whose allow hands out
    /// nothing but `cordon exec` of that line (the rewrite): a shell call the engine allows
    /// without asking anyone is returned once its record is written, without waiting for the
    /// sync. The record reaches the disk with the sync of the record `cordon exec` appends
    /// to the same file before it starts the command (a sync covers every record written to
    /// the file before it), or with the kernel's writeback when the host never runs the
    /// rewrite: a record lost to a crash is then one whose allow ran nothing (docs/
    /// architecture.md, "The hook's record of a rewritten allow"). Every other call is decided
    /// as [`Gate::decide`] decides it, durable when returned.
    pub fn decide_rewritten(&self, call: &Call, asker: &mut dyn Asker) -> Decision {
        let shell = matches!(call.what, What::Shell(_));
        let (decision, durable) = self.decide_deferring(call, asker, shell);
        if let Some(durable) = durable {
            if !decision.is_allowed() {
                // Not handed out as an allow (the session could not be saved): the record
                // stands as written, made durable as any other.
                let _ = durable.wait();
            }
            // An allow: the record is written; its sync is exec's (above). Dropping the wait
            // syncs nothing and hands out nothing the sync would have guarded.
        }
        decision
    }

    /// [`Gate::decide`] for an asynchronous asker (an MCP elicitation): the engine is not
    /// held while the person is asked, so other calls are decided meanwhile.
    pub async fn decide_async<A: AsyncAsker>(&self, call: &Call, asker: &mut A) -> Decision {
        self.decide_async_deferring(call, asker, false).await.0
    }

    /// [`Gate::decide_async`], deferring as [`Gate::decide_deferring`] does.
    pub(crate) async fn decide_async_deferring<A: AsyncAsker>(
        &self,
        call: &Call,
        asker: &mut A,
        defer: bool,
    ) -> (Decision, Option<Durable>) {
        let (mut session, first, durable) = match self.begin(call, defer) {
            Ok(begun) => begun,
            Err(failed) => return (failed, None),
        };
        let concluded = match first {
            Outcome::Ask(p) if self.defers() => self.defer(call, p),
            Outcome::Ask(p) => {
                let released = self.release_while_asking(call, &mut session);
                let timeout = lock(&self.engine).timeout();
                let started = Instant::now();
                let result = tokio::time::timeout(timeout, asker.ask(&call.request, &p))
                    .await
                    .unwrap_or(Err(AskError::TimedOut));
                let result = self.nobody_says_how(&p, result);
                let late = started.elapsed() > timeout;
                match self.conclude(call, &mut session, released, result, late) {
                    Ok(c) => c,
                    Err(failed) => return (failed, None),
                }
            }
            o => Concluded::of(o),
        };
        (self.settle(call, concluded, session.as_mut()), durable)
    }

    /// Whether an ask goes back to an agent host rather than to an asker.
    fn defers(&self) -> bool {
        matches!(self.front_end, FrontEnd::Host(_))
    }

    /// An ask handed to the agent host's own prompt, recorded as `ask`, `deferred_to` it.
    fn defer(&self, call: &Call, p: Pending) -> Concluded {
        let host = match &self.front_end {
            FrontEnd::Host(host) => host.as_str(),
            _ => "",
        };
        Concluded::of(lock(&self.engine).defer(&call.request, p, host))
    }

    /// An asker's "nobody to ask", worded for this front end: what needed approval, and how a
    /// person can give it.
    fn nobody_says_how(
        &self,
        p: &Pending,
        result: Result<Answer, AskError>,
    ) -> Result<Answer, AskError> {
        let Err(AskError::NobodyToAsk(why)) = result else {
            return result;
        };
        let source = &self.policy.source;
        let how = if !why.is_empty() {
            why
        } else if self.front_end == FrontEnd::Mcp {
            format!(
                "the MCP client cannot ask its user (it supports no elicitation): the operator can allow it with a rule in {source}, or run it in a terminal with `cordon exec`, which asks there"
            )
        } else {
            format!(
                "there is no terminal to ask on: run it from a terminal, where cordon asks, allow it with a rule in {source}, or use --approve-all to allow asks"
            )
        };
        Err(AskError::NobodyToAsk(format!(
            "approval needed ({}), but {how}",
            p.reason
        )))
    }

    /// The start of a decision: the session locked and restored, the engine's first answer
    /// (with `defer`, an allowed one perhaps not yet durable, and the wait for it).
    #[allow(clippy::result_large_err, clippy::type_complexity)] // a Decision is what the caller returns either way
    fn begin(
        &self,
        call: &Call,
        defer: bool,
    ) -> Result<(Option<session::Session>, Outcome, Option<Durable>), Decision> {
        if self.front_end == FrontEnd::Check {
            return Err(Decision::failed(
                call,
                None,
                "this gate only checks calls (open it with another front end to decide)",
            ));
        }
        let session = self
            .open_session()
            .map_err(|e| Decision::failed(call, None, e.to_string()))?;
        let (first, durable) = self.evaluate(call, session.as_ref(), defer);
        Ok((session, first, durable))
    }

    fn open_session(&self) -> Result<Option<session::Session>, Error> {
        match &self.session {
            Some(name) => session::Session::open(
                name,
                &writable_roots(&self.policy),
                Some(session::scope(&self.policy)),
            )
            .map(Some),
            None => Ok(None),
        }
    }

    /// The engine's first answer, its record written under the engine's lock and made
    /// durable after it is let go: concurrent calls (a `cordon mcp` serving several) share
    /// one sync, and none is handed out before its record is durable.
    /// With `defer`, an allowed outcome is returned before its record is durable, with the
    /// wait for it: the caller acts on it only once that returned `Ok`.
    fn evaluate(
        &self,
        call: &Call,
        session: Option<&session::Session>,
        defer: bool,
    ) -> (Outcome, Option<Durable>) {
        let decided = {
            let mut engine = lock(&self.engine);
            if let Some(s) = session {
                s.restore(&mut engine);
            }
            engine.evaluate_unsynced(&call.request)
        };
        if !defer {
            return (decided.durable(), None);
        }
        match decided.defer() {
            (o @ Outcome::Allowed { .. }, durable) => (o, Some(durable)),
            // Anything else is answered at once: durable first.
            (o, durable) => match durable.wait() {
                Ok(()) => (o, None),
                Err(denied) => (denied, None),
            },
        }
    }

    /// Lets go of the session while a person is asked about a connection, so that the run's
    /// other connections (allowed by rules, or asked after this one) are decided meanwhile;
    /// `true` when it did. Only a connection: its evaluation leaves nothing in the session
    /// (connections are not counted in the doom loop), so restoring the session after the
    /// answer loses nothing of its own. Any other call keeps the session until it is settled.
    fn release_while_asking(&self, call: &Call, session: &mut Option<session::Session>) -> bool {
        if session.is_none() || call.request.tool != cordon_policy::network::NETWORK_TOOL {
            return false;
        }
        drop(session.take());
        true
    }

    /// The engine's conclusion on an answer, with what its rule store did for this very
    /// answer (taken under the same engine lock, so no other decision's rule or notice is
    /// mixed in). A session let go of while asking and opened again is restored first: other
    /// calls of it may have changed it meanwhile.
    #[allow(clippy::result_large_err)] // a Decision is what the caller returns either way
    fn conclude(
        &self,
        call: &Call,
        session: &mut Option<session::Session>,
        released: bool,
        result: Result<Answer, AskError>,
        late: bool,
    ) -> Result<Concluded, Decision> {
        if released {
            *session = self
                .open_session()
                .map_err(|e| Decision::failed(call, None, e.to_string()))?;
        }
        let mut engine = lock(&self.engine);
        if let Some(s) = session.as_ref().filter(|_| released) {
            s.restore(&mut engine);
        }
        let outcome = engine.conclude(&call.request, result, late);
        Ok(Concluded {
            outcome,
            saved: std::mem::take(&mut *lock(&self.saved)),
            notices: std::mem::take(&mut *lock(&self.notices)),
        })
    }

    /// The outcome as a decision: the session saved, a rule saved for a decision the log
    /// does not show taken back.
    fn settle(
        &self,
        call: &Call,
        concluded: Concluded,
        session: Option<&mut session::Session>,
    ) -> Decision {
        let Concluded {
            outcome,
            saved,
            mut notices,
        } = concluded;
        if let Some(s) = session {
            let engine = lock(&self.engine);
            if let Err(e) = s.save_from(&engine) {
                return Decision::failed(call, None, e.to_string());
            }
        }
        let kind = match outcome {
            o @ Outcome::Allowed { .. } => DecisionKind::Decided(o),
            Outcome::Denied {
                by: By::AuditFailed,
                reason,
                ..
            } => {
                // A rule saved for a decision the log does not show must not stay granted.
                if let Ok(file) = &self.rules_file {
                    for text in saved.iter().rev() {
                        notices.push(match amend::retract(file, &self.store, text) {
                            Ok(true) => format!(
                                "taken back from {}: the rule just saved (its decision could not be recorded)",
                                file.display()
                            ),
                            Ok(false) | Err(_) => format!(
                                "warning: a rule was saved in {} but its decision could not be recorded; remove it by hand: {}",
                                file.display(),
                                clean(text.trim())
                            ),
                        });
                    }
                }
                DecisionKind::Failed {
                    by: Some(By::AuditFailed),
                    reason,
                }
            }
            o @ Outcome::Denied { .. } => DecisionKind::Decided(o),
            // Handed to the agent host, which asks its own user.
            o @ Outcome::Ask(_) if self.defers() => DecisionKind::Decided(o),
            // Never left open otherwise; fail closed if it ever were.
            Outcome::Ask(p) => DecisionKind::Decided(Outcome::Denied {
                by: By::Unanswered,
                reason: p.reason,
                note: None,
            }),
        };
        Decision {
            request: call.request.id.clone(),
            shown: call.shown.clone(),
            kind,
            notices,
        }
    }
}
