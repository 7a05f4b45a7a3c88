//! What a decision says: the outcome, what made it, and the person's answers.

use std::fmt;
use std::time::Duration;

use cordon_policy::{ApprovalMode, Location};

use crate::amend::Amendment;
use crate::RuleRef;

/// What decided a request. It feeds the audit log, so every path through the engine names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    /// A rule of the policy.
    Rule { location: Location, pattern: String },
    /// A rule remembered by an earlier "approve always" (the amendments file).
    PersistedGrant { location: Location, pattern: String },
    /// No rule matched: the tool's default (for `shell`, `[shell] default`).
    Default { tool: String },
    /// `[tools.NAME] approval`: the tool's configured pre-approval.
    ToolConfig { tool: String, location: Location },
    /// The tool's own verdict (its configuration or a built-in check).
    Tool(RuleRef),
    /// Every key was granted for this session.
    SessionGrant,
    /// The approval mode resolved an ask.
    Mode(ApprovalMode),
    /// The person who was asked.
    User,
    /// The person aborted the whole run.
    Abort,
    /// Nobody answered before the deadline.
    TimedOut,
    /// The approval channel failed or closed.
    ChannelLost,
    /// A batch was finished with the request still unanswered.
    Unanswered,
    /// The same call came this many times in a row.
    DoomLoop { count: u32 },
    /// The decision could not be recorded in the audit log, so the call is denied.
    AuditFailed,
    /// A person had to answer, and this front end has nobody to ask (no terminal, an MCP
    /// client without elicitation): denied, with a reason that says how to approve it.
    NobodyToAsk,
}

impl By {
    /// A short stable tag for machines (`rule`, `persisted_grant`, `default`, `tool_config`,
    /// `tool`, `session_grant`, `mode`, `user`, `abort`, `timeout`, `channel_lost`,
    /// `unanswered`, `doom_loop`, `audit_failed`, `nobody_to_ask`).
    pub fn tag(&self) -> &'static str {
        match self {
            By::Rule { .. } => "rule",
            By::PersistedGrant { .. } => "persisted_grant",
            By::Default { .. } => "default",
            By::ToolConfig { .. } => "tool_config",
            By::Tool(_) => "tool",
            By::SessionGrant => "session_grant",
            By::Mode(_) => "mode",
            By::User => "user",
            By::Abort => "abort",
            By::TimedOut => "timeout",
            By::ChannelLost => "channel_lost",
            By::Unanswered => "unanswered",
            By::DoomLoop { .. } => "doom_loop",
            By::AuditFailed => "audit_failed",
            By::NobodyToAsk => "nobody_to_ask",
        }
    }
}

/// The name of a mode as the policy writes it.
pub fn mode_name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Interactive => "interactive",
        ApprovalMode::ApproveAll => "approve-all",
        ApprovalMode::Strict => "strict",
        ApprovalMode::Deny => "deny",
    }
}

impl fmt::Display for By {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            By::Rule { location, pattern } => write!(f, "rule {location} ({pattern})"),
            By::PersistedGrant { location, pattern } => {
                write!(f, "persisted grant {location} ({pattern})")
            }
            By::Default { tool } => write!(f, "default ({tool})"),
            By::ToolConfig { tool, location } => {
                write!(f, "tool config {location} ([tools.{tool}])")
            }
            By::Tool(r) => write!(f, "tool {r}"),
            By::SessionGrant => f.write_str("session grant"),
            By::Mode(m) => write!(f, "mode {}", mode_name(*m)),
            By::User => f.write_str("user"),
            By::Abort => f.write_str("user (abort)"),
            By::TimedOut => f.write_str("timeout"),
            By::ChannelLost => f.write_str("channel lost"),
            By::Unanswered => f.write_str("unanswered"),
            By::DoomLoop { count } => write!(f, "doom loop ({count} in a row)"),
            By::AuditFailed => f.write_str("audit log failure"),
            By::NobodyToAsk => f.write_str("nobody to ask"),
        }
    }
}

/// An ask waiting for a person: what raised it and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// What made it an ask (a rule, a default, the doom loop, …).
    pub by: By,
    /// Why, for the person asked.
    pub reason: String,
}

/// What was decided about a call: the one vocabulary from the engine to every front end.
///
/// An ask stays an ask: the engine never turns one into a denial because nobody can answer.
/// Who answers it is the front end's business — a terminal prompt, an MCP elicitation, an
/// agent host's own prompt ([`crate::Engine::defer`]) — and a front end with nobody to ask
/// concludes it as a denial [`By::NobodyToAsk`] ([`AskError::NobodyToAsk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The call may run.
    Allowed {
        by: By,
        reason: String,
        /// Rules to persist ("approve always"): show each [`Amendment::to_toml`] verbatim,
        /// then [`crate::amend::append`] it. Empty otherwise, and empty when the engine has a
        /// rule store ([`crate::Engine::set_rule_store`]), which saved them before the
        /// decision was recorded.
        amendments: Vec<Amendment>,
    },
    /// The call must not run; `reason` is written for the agent.
    Denied {
        by: By,
        reason: String,
        /// The person's feedback for the agent ("deny with a note").
        note: Option<String>,
    },
    /// A person must answer (the rules, defaults or doom loop ask, and the mode leaves it so).
    Ask(Pending),
}

impl Outcome {
    pub(crate) fn allowed(by: By, reason: impl Into<String>) -> Outcome {
        Outcome::Allowed {
            by,
            reason: reason.into(),
            amendments: Vec::new(),
        }
    }

    pub(crate) fn denied(by: By, reason: impl Into<String>) -> Outcome {
        Outcome::Denied {
            by,
            reason: reason.into(),
            note: None,
        }
    }

    /// Whether the call may run.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Outcome::Allowed { .. })
    }

    /// Whether a person must still answer.
    pub fn is_ask(&self) -> bool {
        matches!(self, Outcome::Ask(_))
    }

    /// `allow`, `ask` or `deny`: the action the outcome amounts to.
    pub fn action(&self) -> cordon_policy::Action {
        match self {
            Outcome::Allowed { .. } => cordon_policy::Action::Allow,
            Outcome::Ask(_) => cordon_policy::Action::Ask,
            Outcome::Denied { .. } => cordon_policy::Action::Deny,
        }
    }

    /// What decided (for a pending ask: what raised it).
    pub fn by(&self) -> &By {
        match self {
            Outcome::Allowed { by, .. } | Outcome::Denied { by, .. } => by,
            Outcome::Ask(p) => &p.by,
        }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Allowed { reason, .. } | Outcome::Denied { reason, .. } => reason,
            Outcome::Ask(p) => &p.reason,
        }
    }

    /// `Ok` when the call may run; otherwise the typed error to hand back to the agent.
    /// A pending ask is an error too (fail closed).
    pub fn result(&self) -> Result<(), ApprovalError> {
        match self {
            Outcome::Allowed { .. } => Ok(()),
            Outcome::Ask(p) => Err(ApprovalError::Unanswered {
                reason: p.reason.clone(),
            }),
            Outcome::Denied { by, reason, note } => Err(match by {
                By::User => match note {
                    Some(note) => ApprovalError::Corrected { note: note.clone() },
                    None => ApprovalError::Rejected,
                },
                By::Abort => ApprovalError::Aborted,
                By::TimedOut => ApprovalError::TimedOut {
                    reason: reason.clone(),
                },
                By::ChannelLost => ApprovalError::ChannelLost {
                    reason: reason.clone(),
                },
                By::Unanswered | By::NobodyToAsk => ApprovalError::Unanswered {
                    reason: reason.clone(),
                },
                By::AuditFailed => ApprovalError::AuditFailed {
                    reason: reason.clone(),
                },
                by => ApprovalError::DeniedByRule {
                    by: by.clone(),
                    reason: reason.clone(),
                },
            }),
        }
    }
}

/// A person's answer to an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Approve this call only.
    Once,
    /// Approve, and remember every key of the call for the rest of the session.
    Session,
    /// Approve, remember for the session, and persist a rule ([`Amendment`]); refused (the
    /// call is then approved once) for interpreters, wrappers and keys a rule cannot state.
    Always,
    /// Deny.
    Deny,
    /// Deny, with feedback the agent reads.
    DenyWithNote(String),
    /// Deny and stop the whole run.
    Abort,
}

/// Why an [`Asker`](crate::Asker) could not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// Nobody answered in time.
    #[error("no answer in time")]
    TimedOut,
    /// The channel to the person failed (terminal closed, connection lost, …).
    #[error("approval channel lost: {0}")]
    Lost(String),
    /// This front end has nobody to ask (no terminal, a client that cannot show a form): the
    /// whole reason for the denial, saying how a person can approve the call instead.
    #[error("{0}")]
    NobodyToAsk(String),
}

/// Why a call must not run, as a typed error for the agent host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// The person denied it.
    #[error("denied by the user")]
    Rejected,
    /// The person denied it with feedback for the agent.
    #[error("denied by the user: {note}")]
    Corrected { note: String },
    /// The policy denied it: a rule, a default, a tool's configuration, the mode or the doom
    /// loop.
    #[error("denied by {by}: {reason}")]
    DeniedByRule { by: By, reason: String },
    /// Nobody answered in time.
    #[error("{reason}")]
    TimedOut { reason: String },
    /// The approval channel failed.
    #[error("{reason}")]
    ChannelLost { reason: String },
    /// The person aborted the run.
    #[error("the user aborted the run")]
    Aborted,
    /// The request was never answered.
    #[error("not approved: {reason}")]
    Unanswered { reason: String },
    /// The decision could not be recorded, so the call must not run.
    #[error("{reason}")]
    AuditFailed { reason: String },
}

/// The reason a timed-out request carries (readable by the agent).
pub(crate) fn timed_out_reason(after: Duration) -> String {
    format!(
        "approval timed out: nobody answered within {}, so the call was denied; do not retry it \
         unchanged, ask the user or take another approach",
        human(after)
    )
}

fn human(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, name) in [(3_600_000, "h"), (60_000, "m"), (1000, "s")] {
        if ms >= unit && (ms / unit) * unit == ms {
            return format!("{}{name}", ms / unit);
        }
    }
    format!("{ms}ms")
}
