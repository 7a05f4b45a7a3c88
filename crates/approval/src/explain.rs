//! The one evaluator's account of a request: every step [`Engine::explain`] took, and the
//! outcome it came to.
//!
//! ```text
//!   keys ──▶ rules / default (per key) ──▶ most restrictive ─▶ session grant ─▶ the tool's
//!                                            (deny: final)      (ask → allow)    verdict,
//!                                                                                concern
//!                                                                                (ask again)
//!   ──▶ doom loop (allow → ask) ──▶ mode (approve-all / strict / deny) ──▶ Outcome
//! ```
//!
//! The prompt's preview, `cordon check` and the real decision all read this one account, so
//! what a person is shown, what `check` prints and what `exec` does cannot disagree.
//!
//! [`Engine::explain`]: crate::Engine::explain

use cordon_policy::{Action, ApprovalMode};

use crate::outcome::{By, Outcome};
use crate::request::Key;
use crate::toolrules::KeyVerdict;

/// What the rules say of one key of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyExplained {
    pub key: Key,
    /// The verdict: the deciding rule (the policy's, or a remembered one), or the default.
    pub verdict: KeyVerdict,
    /// No rule matched: the tool's default decided.
    pub by_default: bool,
}

/// How [`crate::Engine::explain`] decided a request. Pure: computing it records nothing and
/// changes no session grant, doom-loop count or rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// Each key with the rule or default that decided it, in the request's order.
    pub keys: Vec<KeyExplained>,
    /// The tool's own verdict, if it gave one: a file tool's write on the persistence surface
    /// (an ask that no rule's allow lowers and no session grant covers).
    pub verdict: Option<KeyVerdict>,
    /// What the tool found that the keys do not capture and no explicit allow rule lifted, in
    /// the request's order (never covered by a session grant).
    pub concerns: Vec<KeyVerdict>,
    /// The most restrictive of them (the first among equals).
    pub concern: Option<KeyVerdict>,
    /// The rules' combined answer: the keys' and the defaults', most restrictive first.
    pub rules: KeyVerdict,
    /// Every key is granted for this session (so an ask of the rules is allowed — unless a
    /// concern asks again).
    pub session_grant: bool,
    /// How many times in a row this very call has come, this one included (0: not counted,
    /// as for connections).
    pub in_a_row: u32,
    /// The doom loop turned an allow into an ask.
    pub doom_loop: bool,
    /// The approval mode that resolved what was still an ask.
    pub mode: ApprovalMode,
    /// The decision: allowed, denied, or an ask for a person.
    pub outcome: Outcome,
}

impl Explanation {
    /// `allow`, `ask` or `deny`.
    pub fn action(&self) -> Action {
        self.outcome.action()
    }

    /// What decided (for an ask: what raised it).
    pub fn by(&self) -> &By {
        self.outcome.by()
    }

    /// Why.
    pub fn reason(&self) -> &str {
        self.outcome.reason()
    }
}
