//! Deferred approvals: every request of a turn decided in one pass.
//!
//! [`Engine::batch`] evaluates each request; those a person must answer stay pending.
//! Answer them one by one ([`Batch::answer`]), all at once ([`Batch::approve_all`],
//! [`Batch::deny_all`]), or hand the batch to an asker ([`Batch::run_blocking`],
//! [`Batch::run`]), then [`Batch::finish`] and run what was allowed. Cascades:
//! - a `Session` (or `Always`) answer resolves every other pending request its grants now
//!   cover, as [`Engine::explain`] decides it (except doom-loop asks, which always need their
//!   own look);
//! - [`Batch::reject`] with `cancel_rest` denies every other pending request;
//! - `Abort` denies every other pending request.

use std::time::Instant;

use serde_json::Value;

use crate::engine::{AsyncAsker, Engine};
use crate::outcome::{Answer, AskError, By, Outcome, Pending};
use crate::request::Request;
use crate::{Asker, Error};

#[derive(Debug)]
struct Item {
    request: Request,
    outcome: Outcome,
    args: Option<Value>,
}

/// One request of a finished batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub request: Request,
    /// Never [`Outcome::Ask`].
    pub outcome: Outcome,
    /// Arguments the person substituted when approving (the tool must validate them again).
    pub args: Option<Value>,
}

/// The requests of one turn, some pending. Borrows the engine until finished.
///
/// The policy's timeout runs from when the batch is made: an answer given after it, by any
/// means, denies the request as timed out.
#[derive(Debug)]
pub struct Batch<'e> {
    engine: &'e mut Engine,
    items: Vec<Item>,
    deadline: Instant,
}

impl Engine {
    /// Evaluates every request of a turn; those needing an answer are pending.
    pub fn batch<I: IntoIterator<Item = Request>>(&mut self, requests: I) -> Batch<'_> {
        let items = requests
            .into_iter()
            .map(|request| Item {
                outcome: self.evaluate(&request),
                request,
                args: None,
            })
            .collect();
        Batch {
            deadline: Instant::now() + self.timeout(),
            engine: self,
            items,
        }
    }
}

impl Batch<'_> {
    /// The requests waiting for an answer, in order, with why they ask.
    pub fn pending(&self) -> Vec<(&Request, &Pending)> {
        self.items
            .iter()
            .filter_map(|i| match &i.outcome {
                Outcome::Ask(p) => Some((&i.request, p)),
                _ => None,
            })
            .collect()
    }

    /// Is nothing pending any more?
    pub fn is_done(&self) -> bool {
        self.pending().is_empty()
    }

    /// The outcome of a request so far.
    pub fn outcome(&self, id: &str) -> Option<&Outcome> {
        self.items
            .iter()
            .find(|i| i.request.id == id)
            .map(|i| &i.outcome)
    }

    fn pending_index(&self, id: &str) -> Result<usize, Error> {
        let i = self
            .items
            .iter()
            .position(|i| i.request.id == id)
            .ok_or_else(|| Error::UnknownId(id.to_string()))?;
        match self.items[i].outcome {
            Outcome::Ask(_) => Ok(i),
            _ => Err(Error::AlreadyDecided(id.to_string())),
        }
    }

    /// Answers one pending request, then applies the cascades.
    pub fn answer(&mut self, id: &str, answer: Answer) -> Result<&Outcome, Error> {
        let i = self.pending_index(id)?;
        self.apply(i, Ok(answer), self.late());
        Ok(&self.items[i].outcome)
    }

    /// Is the batch's deadline past? Then an answer counts as none.
    fn late(&self) -> bool {
        Instant::now() > self.deadline
    }

    /// Approves one pending request once, with substituted arguments.
    pub fn approve_with_args(&mut self, id: &str, args: Value) -> Result<&Outcome, Error> {
        let i = self.pending_index(id)?;
        self.items[i].args = Some(args);
        self.apply(i, Ok(Answer::Once), self.late());
        Ok(&self.items[i].outcome)
    }

    /// Denies one pending request (with an optional note for the agent); with `cancel_rest`,
    /// every other pending request is denied too.
    pub fn reject(
        &mut self,
        id: &str,
        note: Option<String>,
        cancel_rest: bool,
    ) -> Result<&Outcome, Error> {
        let i = self.pending_index(id)?;
        let answer = match note {
            Some(n) => Answer::DenyWithNote(n),
            None => Answer::Deny,
        };
        self.apply(i, Ok(answer), self.late());
        if cancel_rest {
            let reason = format!("cancelled: the user rejected `{id}` in the same batch");
            self.deny_rest(By::User, &reason);
        }
        Ok(&self.items[i].outcome)
    }

    /// Approves every pending request once.
    pub fn approve_all(&mut self) {
        for i in 0..self.items.len() {
            if matches!(self.items[i].outcome, Outcome::Ask(_)) {
                self.apply(i, Ok(Answer::Once), self.late());
            }
        }
    }

    /// Denies every pending request (with an optional note for the agent).
    pub fn deny_all(&mut self, note: Option<String>) {
        for i in 0..self.items.len() {
            if matches!(self.items[i].outcome, Outcome::Ask(_)) {
                let a = match &note {
                    Some(n) => Answer::DenyWithNote(n.clone()),
                    None => Answer::Deny,
                };
                self.apply(i, Ok(a), self.late());
            }
        }
    }

    fn deny_rest(&mut self, by: By, reason: &str) {
        for item in &mut self.items {
            if matches!(item.outcome, Outcome::Ask(_)) {
                item.outcome = self
                    .engine
                    .settle(&item.request, Outcome::denied(by.clone(), reason));
            }
        }
    }

    /// Resolves item `i` from an asker's result and applies the cascades.
    fn apply(&mut self, i: usize, result: Result<Answer, AskError>, late: bool) {
        let answer = result.as_ref().ok().cloned();
        let lost = matches!(result, Err(AskError::Lost(_) | AskError::NobodyToAsk(_)));
        let outcome = self.engine.resolve(
            &self.items[i].request,
            result,
            late,
            self.items[i].args.as_ref(),
        );
        let denied_by = match &outcome {
            Outcome::Denied { by, reason, .. } => Some((by.clone(), reason.clone())),
            _ => None,
        };
        self.items[i].outcome = outcome;
        if denied_by.is_none() && matches!(answer, Some(Answer::Session | Answer::Always)) {
            let id = self.items[i].request.id.clone();
            for item in &mut self.items {
                if let Outcome::Ask(p) = &item.outcome {
                    // Decided again by the one evaluator, now that the grant is given: covered
                    // when it allows by the session grant (every key a rule decides is granted,
                    // and no concern stands, which no grant covers). A doom-loop ask needs its
                    // own look.
                    let covered = || {
                        let x = self.engine.explain(&item.request);
                        x.session_grant && x.outcome.is_allowed()
                    };
                    if !matches!(p.by, By::DoomLoop { .. }) && covered() {
                        item.outcome = self.engine.settle(
                            &item.request,
                            Outcome::allowed(
                                By::SessionGrant,
                                format!("covered by the session grant given to `{id}`"),
                            ),
                        );
                    }
                }
            }
        }
        if let Some((by, reason)) = denied_by {
            if by == By::Abort || lost {
                self.deny_rest(by, &reason);
            }
        }
    }

    /// Asks `asker` about every pending request in order (skipping those a cascade resolved),
    /// all under the batch's deadline. A lost channel denies the rest.
    pub fn run_blocking(&mut self, asker: &mut dyn Asker) {
        let deadline = self.deadline;
        for i in 0..self.items.len() {
            let Outcome::Ask(p) = &self.items[i].outcome else {
                continue;
            };
            let p = p.clone();
            let (result, late) = if Instant::now() >= deadline {
                (Err(AskError::TimedOut), true)
            } else {
                let r = asker.ask(&self.items[i].request, &p, deadline);
                (r, Instant::now() > deadline)
            };
            self.apply(i, result, late);
        }
    }

    /// The async variant of [`Batch::run_blocking`].
    pub async fn run<A: AsyncAsker>(&mut self, asker: &mut A) {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let deadline = tokio::time::Instant::now() + left;
        for i in 0..self.items.len() {
            let Outcome::Ask(p) = &self.items[i].outcome else {
                continue;
            };
            let p = p.clone();
            let result = tokio::time::timeout_at(deadline, asker.ask(&self.items[i].request, &p))
                .await
                .unwrap_or(Err(AskError::TimedOut));
            self.apply(i, result, false);
        }
    }

    /// Ends the batch. A request still pending is denied (never answered), and recorded so.
    pub fn finish(self) -> Vec<Resolved> {
        let engine = self.engine;
        self.items
            .into_iter()
            .map(|i| Resolved {
                outcome: match i.outcome {
                    Outcome::Ask(p) => engine.settle(
                        &i.request,
                        Outcome::denied(
                            By::Unanswered,
                            format!("nobody answered the approval request ({})", p.reason),
                        ),
                    ),
                    o => o,
                },
                request: i.request,
                args: i.args,
            })
            .collect()
    }
}
