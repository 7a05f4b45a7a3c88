//! One audit record: what was asked, what was decided, by what, and the link to the record
//! before it.

use std::fmt;

use cordon_policy::{Action, ApprovalMode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::util::{canonical_json, sha256_hex};
use crate::RuleRef;

/// The record format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// The `prev` of a log's first record.
pub const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The longest [`Record::preview`], in characters, ellipsis included.
pub const PREVIEW_MAX: usize = 200;

/// One decision, as one line of the log. Fields are written in this order.
///
/// A caller builds one with [`Record::new`] and the builder methods; [`AuditLog::append`]
/// fills in `v`, `time`, `session` (unless set), `request` (unless set), `seq`, `prev` and
/// `repair`.
///
/// [`AuditLog::append`]: super::AuditLog::append
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Format version: [`FORMAT_VERSION`].
    pub v: u32,
    /// When the record was written: RFC 3339, UTC, milliseconds.
    pub time: String,
    /// The session (agent run or cordon process) that decided: 32 hex digits.
    pub session: String,
    /// Position in the file: 0, 1, 2, … with no gaps.
    pub seq: u64,
    /// What the record is (omitted for a decision, the common case and every record written
    /// before kinds existed).
    #[serde(default, skip_serializing_if = "Kind::is_decision")]
    pub kind: Kind,
    /// The request's id.
    pub request: String,
    /// The agent host or MCP client that made the call (e.g. `claude-code`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The client's own id for the call (an MCP `tools/call` request id), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_request: Option<String>,
    /// The tool, e.g. `shell`.
    pub tool: String,
    /// The operation keys: for the shell tool, each simple command's words; for a file tool,
    /// one key with the path.
    pub keys: Vec<Vec<String>>,
    /// SHA-256 (hex) of the canonical JSON of the call's arguments
    /// (see [`canonical_json`](super::canonical_json)).
    pub args_digest: String,
    /// A short human preview of the call, at most [`PREVIEW_MAX`] characters, ending in `…`
    /// when cut.
    pub preview: String,
    /// The final decision: `allow`, `ask` or `deny`. `ask` only with `deferred_to`: the
    /// question went to an agent host's own prompt.
    #[serde(with = "action_serde")]
    pub decision: Action,
    /// For an `ask`: the agent host whose own prompt the question was handed to (e.g.
    /// `claude-code`); what its user answered is the host's to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_to: Option<String>,
    /// What decided.
    pub by: By,
    /// Why, in words.
    pub reason: String,
    /// A note, e.g. the user's feedback on a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// On an after-run record: what the kernel sandbox enforced for the run, as the sandbox
    /// reported it (`full`, `partial: GAP; GAP…`, `unconfined: WHY`). Every run that got less
    /// than `full` has an after-run record carrying it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<String>,
    /// For a record `by: connection`: the connection the proxy made or refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<Connection>,
    /// Set by the writer when it moved a torn tail (an interrupted write) aside before this
    /// record: what it moved, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<String>,
    /// SHA-256 (hex) of the previous line's bytes, without its newline; [`ZERO_HASH`] for the
    /// first record.
    pub prev: String,
}

/// What a record is. A connection is one decision (a `network` call, kind `decision`) and
/// then its events (kind `connection`: open, close with bytes) — not more decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A decision on a call, before it ran.
    #[default]
    Decision,
    /// An event of a connection through cordon's proxy (open, close, refused after the
    /// address check), its details in `connection`.
    Connection,
    /// What a run left that the operator's tools would run (see [`Record::after_run`]).
    AfterRun,
    /// A call cordon refused before or without a decision of the rules: cordon itself could
    /// not do what deciding or running needs (policy, sandbox, session store), said in
    /// `reason` (see [`Record::refusal`]).
    Refusal,
    /// Only a repair: what the writer found and repaired (also said in `repair`), with no
    /// call (see [`Record::repair_only`]).
    Repair,
}

impl Kind {
    pub fn is_decision(&self) -> bool {
        *self == Kind::Decision
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Decision => "decision",
            Kind::Connection => "connection",
            Kind::AfterRun => "after-run",
            Kind::Refusal => "refusal",
            Kind::Repair => "repair",
        }
    }
}

/// What made a decision.
///
/// In JSON an object tagged by `kind`: `{"kind":"rule","at":"cordon.toml:8:1","pattern":"git *"}`,
/// `{"kind":"default"}`, `{"kind":"builtin","tag":"unparsed"}`,
/// `{"kind":"tool-config","at":"cordon.toml:3:1"}`, `{"kind":"mode","mode":"approve-all"}`,
/// `{"kind":"user"}`, `{"kind":"abort"}`, `{"kind":"timeout"}`, `{"kind":"channel"}`,
/// `{"kind":"unanswered"}`, `{"kind":"doom-loop","count":3}`, `{"kind":"session-grant"}`,
/// `{"kind":"persisted-grant","at":"…","pattern":"…"}`, `{"kind":"audit-failed"}`,
/// `{"kind":"nobody-to-ask"}`,
/// `{"kind":"after-run"}` (a record of what a run left, see [`Record::after_run`]),
/// `{"kind":"connection"}` (a connection through cordon's proxy, see [`Record::connection`]). The engine's [`crate::By`] converts
/// with `From`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum By {
    /// A policy rule: where it is (`file:line:col`) and its pattern.
    Rule { at: String, pattern: String },
    /// No rule matched: the tool's default.
    Default,
    /// A check built into the tool (e.g. `unparsed`).
    Builtin { tag: String },
    /// `[tools.NAME] approval`: the tool's configured pre-approval, and where.
    ToolConfig { at: String },
    /// The approval mode resolved an `ask` (`approve-all`, `strict`, `deny`).
    Mode { mode: String },
    /// A person answered.
    User,
    /// A person aborted the whole run.
    Abort,
    /// Nobody answered in time.
    Timeout,
    /// The approval channel failed (terminal closed, read error): denied.
    Channel,
    /// A batch was finished with the request still unanswered.
    Unanswered,
    /// The same call repeated too often in a row (how often, when known).
    DoomLoop {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
    },
    /// A grant made earlier in this session.
    SessionGrant,
    /// A grant persisted to a rules file ("approve always"), and where, when known.
    PersistedGrant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pattern: Option<String>,
    },
    /// An earlier write to the audit log failed (only ever seen in a log a later write
    /// reached, e.g. after a transient error).
    AuditFailed,
    /// A person had to answer and the front end had nobody to ask (no terminal, an MCP
    /// client without elicitation): denied.
    NobodyToAsk,
    /// Not a decision before a call but what cordon found after it ran: files the run left in
    /// its writable roots that make the operator's tools run code (a `.git` directory or its
    /// configuration, a gitlink, `.envrc`, editor tasks). The record has the run's `request`
    /// id, one key per finding (`[KIND, PATH]`), `decision` `deny` (they are not let take
    /// effect), and in `note` what was done with each (moved aside, restored, left in place).
    AfterRun,
    /// Not a decision but a connection cordon's network proxy opened, closed or refused, its
    /// details in the record's `connection` field (host, port, the address connected to, the
    /// rule that decided, bytes each way, duration). The decision itself was recorded before,
    /// as a `network` call decided by the rules, a person or a grant.
    Connection,
}

impl By {
    /// The mode that resolved an ask.
    pub fn mode(mode: ApprovalMode) -> By {
        By::Mode {
            mode: crate::mode_name(mode).to_string(),
        }
    }
}

impl From<&RuleRef> for By {
    fn from(r: &RuleRef) -> By {
        match r {
            RuleRef::Rule { location, pattern } => By::Rule {
                at: location.to_string(),
                pattern: pattern.clone(),
            },
            RuleRef::Default => By::Default,
            RuleRef::Builtin(tag) => By::Builtin {
                tag: (*tag).to_string(),
            },
        }
    }
}

impl From<&crate::By> for By {
    fn from(b: &crate::By) -> By {
        use crate::By as E;
        match b {
            E::Rule { location, pattern } => By::Rule {
                at: location.to_string(),
                pattern: pattern.clone(),
            },
            E::PersistedGrant { location, pattern } => By::PersistedGrant {
                at: Some(location.to_string()),
                pattern: Some(pattern.clone()),
            },
            E::Default { .. } => By::Default,
            E::ToolConfig { location, .. } => By::ToolConfig {
                at: location.to_string(),
            },
            E::Tool(r) => By::from(r),
            E::SessionGrant => By::SessionGrant,
            E::Mode(m) => By::mode(*m),
            E::User => By::User,
            E::Abort => By::Abort,
            E::TimedOut => By::Timeout,
            E::ChannelLost => By::Channel,
            E::Unanswered => By::Unanswered,
            E::DoomLoop { count } => By::DoomLoop {
                count: Some(*count),
            },
            E::AuditFailed => By::AuditFailed,
            E::NobodyToAsk => By::NobodyToAsk,
        }
    }
}

impl fmt::Display for By {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            By::Rule { at, pattern } => write!(f, "{at} ({pattern})"),
            By::Default => f.write_str("default"),
            By::Builtin { tag } => write!(f, "builtin:{tag}"),
            By::ToolConfig { at } => write!(f, "tool-config {at}"),
            By::Mode { mode } => write!(f, "mode:{mode}"),
            By::User => f.write_str("user"),
            By::Abort => f.write_str("abort"),
            By::Timeout => f.write_str("timeout"),
            By::Channel => f.write_str("channel"),
            By::Unanswered => f.write_str("unanswered"),
            By::DoomLoop { count: None } => f.write_str("doom-loop"),
            By::DoomLoop { count: Some(n) } => write!(f, "doom-loop ({n} in a row)"),
            By::SessionGrant => f.write_str("session-grant"),
            By::AuditFailed => f.write_str("audit-failed"),
            By::NobodyToAsk => f.write_str("nobody-to-ask"),
            By::AfterRun => f.write_str("after-run"),
            By::Connection => f.write_str("connection"),
            By::PersistedGrant { at, pattern } => {
                f.write_str("persisted-grant")?;
                match (at, pattern) {
                    (Some(at), Some(p)) => write!(f, " {at} ({p})"),
                    (Some(at), None) => write!(f, " {at}"),
                    (None, Some(p)) => write!(f, " ({p})"),
                    (None, None) => Ok(()),
                }
            }
        }
    }
}

impl Record {
    /// A record of `decision` on a call of `tool`, made by `by` for `reason`.
    pub fn new(
        tool: impl Into<String>,
        decision: Action,
        by: By,
        reason: impl Into<String>,
    ) -> Record {
        Record {
            v: FORMAT_VERSION,
            time: String::new(),
            session: String::new(),
            seq: 0,
            kind: Kind::Decision,
            request: String::new(),
            client: None,
            client_request: None,
            tool: tool.into(),
            keys: Vec::new(),
            args_digest: sha256_hex(b"null"),
            preview: String::new(),
            decision,
            deferred_to: None,
            by,
            reason: reason.into(),
            note: None,
            enforcement: None,
            connection: None,
            repair: None,
            prev: String::new(),
        }
    }

    /// What a run (the call `request` of `tool`) left that the operator's tools run: one key
    /// `[KIND, PATH]` per finding, the findings themselves as the arguments (their digest is
    /// recorded), what was done with each in `note`.
    pub fn after_run(
        tool: impl Into<String>,
        request: impl Into<String>,
        findings: &[AfterRunFinding],
    ) -> Record {
        let reason = format!(
            "the run left {} path(s) in its writable roots that make the operator's tools run code",
            findings.len()
        );
        let done: Vec<String> = findings
            .iter()
            .map(|f| format!("{}: {}", f.path, f.handling))
            .collect();
        let mut r = Record::new(tool, Action::Deny, By::AfterRun, reason)
            .request(request)
            .keys(findings.iter().map(|f| [f.kind.clone(), f.path.clone()]))
            .args(&serde_json::to_value(findings).unwrap_or(Value::Null))
            .preview(
                &findings
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
            .note(done.join("; "));
        r.kind = Kind::AfterRun;
        r
    }

    /// A call cordon refused because it could not do what deciding or running it needs
    /// (`reason` says what, why and what to do): `decision` `deny`, kind `refusal`.
    pub fn refusal(tool: impl Into<String>, reason: impl Into<String>) -> Record {
        let mut r = Record::new(
            tool,
            Action::Deny,
            By::Builtin {
                tag: "refusal".into(),
            },
            reason,
        );
        r.kind = Kind::Refusal;
        r
    }

    /// A record of a repair alone (no call): `what` in `reason` and `repair`.
    pub fn repair_only(what: impl Into<String>) -> Record {
        let what = what.into();
        let mut r = Record::new(
            "audit",
            Action::Allow,
            By::Builtin {
                tag: "repair".into(),
            },
            &what,
        );
        r.repair = Some(what);
        r.kind = Kind::Repair;
        r
    }

    /// A connection through cordon's proxy (`by: connection`, tool `network`, key
    /// `["network", "HOST:PORT"]`): `allow` for a connection made (its opening, then its close
    /// with the bytes moved), `deny` for one refused, `reason` why. The connection's details are
    /// the `connection` field and, as its arguments, the digest.
    pub fn connection(allowed: bool, reason: impl Into<String>, c: Connection) -> Record {
        let decision = if allowed { Action::Allow } else { Action::Deny };
        let target = format!("{}:{}", c.host, c.port);
        let mut shown = format!("{} {target} ({})", c.event, c.protocol);
        if let Some(addr) = &c.addr {
            shown.push_str(&format!(" via {addr}"));
        }
        if c.event == "close" && allowed {
            shown.push_str(&format!(
                ": {} bytes up, {} down, {} ms",
                c.bytes_up, c.bytes_down, c.duration_ms
            ));
        }
        let mut r = Record::new("network", decision, By::Connection, reason)
            .keys([["network".to_string(), target]])
            .args(&serde_json::to_value(&c).unwrap_or(Value::Null))
            .preview(&shown);
        r.connection = Some(c);
        r.kind = Kind::Connection;
        r
    }

    /// The request's id (default: a fresh random id when appended).
    pub fn request(mut self, id: impl Into<String>) -> Record {
        self.request = id.into();
        self
    }

    /// The session's id (default: the log's session).
    pub fn session(mut self, id: impl Into<String>) -> Record {
        self.session = id.into();
        self
    }

    /// The operation keys, each a list of words.
    pub fn keys<K, W>(mut self, keys: K) -> Record
    where
        K: IntoIterator<Item = W>,
        W: IntoIterator,
        W::Item: Into<String>,
    {
        self.keys = keys
            .into_iter()
            .map(|k| k.into_iter().map(Into::into).collect())
            .collect();
        self
    }

    /// The call's arguments: sets `args_digest` to the SHA-256 of their canonical JSON.
    pub fn args(mut self, args: &Value) -> Record {
        self.args_digest = sha256_hex(canonical_json(args).as_bytes());
        self
    }

    /// A human preview of the call, cut to [`PREVIEW_MAX`] characters.
    pub fn preview(mut self, text: &str) -> Record {
        self.preview = preview(text);
        self
    }

    /// The agent host the ask was handed to (see [`Record::deferred_to`]); the record's
    /// `decision` is then `ask`.
    pub fn deferred_to(mut self, host: impl Into<String>) -> Record {
        self.deferred_to = Some(host.into());
        self
    }

    /// The client's own id for the call (e.g. an MCP request id).
    pub fn client_request(mut self, id: Option<String>) -> Record {
        self.client_request = id;
        self
    }

    /// A note (e.g. the user's feedback).
    pub fn note(mut self, note: impl Into<String>) -> Record {
        self.note = Some(note.into());
        self
    }

    /// What the kernel sandbox enforced for the run (see [`Record::enforcement`]).
    pub fn enforcement(mut self, enforcement: impl Into<String>) -> Record {
        self.enforcement = Some(enforcement.into());
        self
    }
}

/// The connection of a [`Record::connection`] record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// `open` (the destination is connected) or `close` (the connection is over, or was
    /// refused: every connection has one).
    pub event: String,
    /// The proxy's number for the connection, to pair its open and close records.
    pub id: u64,
    /// `http-connect`, `http` or `socks5`.
    pub protocol: String,
    /// Normalised host, as decided.
    pub host: String,
    pub port: u16,
    /// The address connected to (or refused), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// What decided (the rule, a person, a grant); empty when it never came to a decision.
    pub rule: String,
    /// Bytes sent to the destination.
    pub bytes_up: u64,
    /// Bytes received from it.
    pub bytes_down: u64,
    /// From the request to this record, milliseconds.
    pub duration_ms: u64,
}

/// One finding of an [`Record::after_run`] record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterRunFinding {
    /// What it is: `git-dir`, `bare-repository`, `git-config`, `gitlink`, `todo-list`,
    /// `tool-file`.
    pub kind: String,
    pub path: String,
    /// `appeared` or `changed`.
    pub change: String,
    /// Why it matters.
    pub why: String,
    /// What cordon did: moved aside (where), restored, or left in place (why).
    pub handling: String,
}

/// `text` cut to at most [`PREVIEW_MAX`] characters; a cut text ends in `…`.
pub fn preview(text: &str) -> String {
    if text.chars().count() <= PREVIEW_MAX {
        return text.to_string();
    }
    let mut s: String = text.chars().take(PREVIEW_MAX - 1).collect();
    s.push('…');
    s
}

mod action_serde {
    use cordon_policy::Action;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(a: &Action, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(a.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Action, D::Error> {
        let s = String::deserialize(d)?;
        Action::parse(&s)
            .ok_or_else(|| D::Error::custom(format!("unknown decision `{s}` (allow, ask, deny)")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_serializes_tagged_by_kind() {
        let cases = [
            (
                By::Rule {
                    at: "p.toml:3:1".into(),
                    pattern: "git *".into(),
                },
                r#"{"kind":"rule","at":"p.toml:3:1","pattern":"git *"}"#,
                "p.toml:3:1 (git *)",
            ),
            (By::Default, r#"{"kind":"default"}"#, "default"),
            (
                By::Builtin {
                    tag: "unparsed".into(),
                },
                r#"{"kind":"builtin","tag":"unparsed"}"#,
                "builtin:unparsed",
            ),
            (
                By::mode(ApprovalMode::ApproveAll),
                r#"{"kind":"mode","mode":"approve-all"}"#,
                "mode:approve-all",
            ),
            (
                By::DoomLoop { count: Some(3) },
                r#"{"kind":"doom-loop","count":3}"#,
                "doom-loop (3 in a row)",
            ),
            (
                By::DoomLoop { count: None },
                r#"{"kind":"doom-loop"}"#,
                "doom-loop",
            ),
            (
                By::SessionGrant,
                r#"{"kind":"session-grant"}"#,
                "session-grant",
            ),
            (
                By::PersistedGrant {
                    at: None,
                    pattern: None,
                },
                r#"{"kind":"persisted-grant"}"#,
                "persisted-grant",
            ),
            (
                By::PersistedGrant {
                    at: Some("r.toml:2:1".into()),
                    pattern: Some("npm test".into()),
                },
                r#"{"kind":"persisted-grant","at":"r.toml:2:1","pattern":"npm test"}"#,
                "persisted-grant r.toml:2:1 (npm test)",
            ),
            (By::Channel, r#"{"kind":"channel"}"#, "channel"),
            (By::AfterRun, r#"{"kind":"after-run"}"#, "after-run"),
            (By::Connection, r#"{"kind":"connection"}"#, "connection"),
            (By::Unanswered, r#"{"kind":"unanswered"}"#, "unanswered"),
        ];
        for (by, json, shown) in cases {
            assert_eq!(serde_json::to_string(&by).unwrap(), json);
            assert_eq!(serde_json::from_str::<By>(json).unwrap(), by);
            assert_eq!(by.to_string(), shown);
        }
    }

    #[test]
    fn the_engines_by_converts() {
        use cordon_policy::Location;
        let location = Location {
            file: "p.toml".into(),
            line: 3,
            col: 1,
        };
        let rule = crate::By::Rule {
            location: location.clone(),
            pattern: "git *".into(),
        };
        assert_eq!(By::from(&rule).to_string(), "p.toml:3:1 (git *)");
        assert_eq!(By::from(&crate::By::TimedOut), By::Timeout);
        assert_eq!(By::from(&crate::By::ChannelLost), By::Channel);
        assert_eq!(
            By::from(&crate::By::DoomLoop { count: 3 }),
            By::DoomLoop { count: Some(3) }
        );
        assert_eq!(
            By::from(&crate::By::Tool(RuleRef::Builtin("unparsed"))),
            By::Builtin {
                tag: "unparsed".into()
            }
        );
        assert_eq!(
            By::from(&crate::By::Mode(ApprovalMode::Strict)).to_string(),
            "mode:strict"
        );
        let grant = crate::By::PersistedGrant {
            location,
            pattern: "npm test".into(),
        };
        assert_eq!(
            By::from(&grant).to_string(),
            "persisted-grant p.toml:3:1 (npm test)"
        );
    }

    #[test]
    fn preview_is_cut_with_an_ellipsis() {
        assert_eq!(preview("ls"), "ls");
        let exact = "é".repeat(PREVIEW_MAX);
        assert_eq!(preview(&exact), exact);
        let long = "é".repeat(PREVIEW_MAX + 1);
        let p = preview(&long);
        assert_eq!(p.chars().count(), PREVIEW_MAX);
        assert!(p.ends_with('…'));
    }

    #[test]
    fn args_digest_is_independent_of_member_order() {
        let a = Record::new("shell", Action::Allow, By::Default, "")
            .args(&serde_json::json!({"argv": ["ls"], "cwd": "/w"}));
        let b = Record::new("shell", Action::Allow, By::Default, "")
            .args(&serde_json::from_str(r#"{"cwd":"/w","argv":["ls"]}"#).unwrap());
        assert_eq!(a.args_digest, b.args_digest);
        assert_eq!(a.args_digest, sha256_hex(br#"{"argv":["ls"],"cwd":"/w"}"#));
    }
}
