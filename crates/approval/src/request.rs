//! What the approval layer is asked about: a tool call described by its operation keys and a
//! presentation for the person who approves it.

use std::fmt;

use cordon_policy::verdict::Known;
use cordon_policy::Action;
use serde::Serialize;

use crate::{Decision, RuleRef};
pub use cordon_policy::present::{Presentation, Preview};
pub use cordon_policy::verdict::FileAccess;

/// The words of one operation a call performs: for the shell tool, one simple command's words
/// (quoting resolved); for other tools, the tool's name and the object it touches, e.g.
/// `["write_file", "notes/a.txt"]`. Rules match keys as token prefixes; session grants are
/// kept per key.
///
/// For a shell command, which words only the running shell knows ([`Known`]): the engine asks
/// where a deny or ask rule could match some value of them. Keys compare, hash and serialize
/// by their words alone: a grant is given for what the person saw, and a grant read back from
/// a file has no marks.
#[derive(Debug, Clone)]
pub struct Key {
    words: Vec<String>,
    /// Parallel to `words`; empty when every word is literal.
    known: Vec<Known>,
}

impl Key {
    /// A key from its words, all of them literal.
    pub fn new<I, S>(words: I) -> Key
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Key {
            words: words.into_iter().map(Into::into).collect(),
            known: Vec::new(),
        }
    }

    /// A key from a line split at ASCII whitespace (tests and simple callers; no quoting).
    pub fn split(line: &str) -> Key {
        Key::new(line.split_whitespace())
    }

    /// Sets how much of each word is known (parallel to the words). A list of another length
    /// is a caller's mistake; the words it does not cover count as any words (fail closed).
    pub fn with_known(mut self, mut known: Vec<Known>) -> Key {
        known.resize(self.words.len(), Known::AnyWords);
        self.known = if known.iter().all(|k| *k == Known::Literal) {
            Vec::new()
        } else {
            known
        };
        self
    }

    /// The words.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// How much of each word is known; empty when every word is literal.
    pub fn known(&self) -> &[Known] {
        &self.known
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.words == other.words
    }
}

impl Eq for Key {}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words.hash(state);
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.words.cmp(&other.words)
    }
}

impl Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.words.serialize(serializer)
    }
}

impl fmt::Display for Key {
    /// The words joined by spaces; a word that is empty or contains whitespace or a quote is
    /// shown in single quotes, so that the display is unambiguous to a reader.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cordon_policy::present::show_words(&self.words))
    }
}

/// One tool call to decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// The caller's id for the call (e.g. the model's tool-call id); unique within a batch.
    pub id: String,
    /// The tool's name, e.g. `shell`, `write_file`.
    pub tool: String,
    /// The operations the call performs. A request with no keys is decided by the tool's
    /// default alone and can never be covered by a session grant.
    pub keys: Vec<Key>,
    /// What to show the person who approves it.
    pub presentation: Presentation,
    /// What the tool found that the keys do not capture (for the shell tool: an environment
    /// assignment, a write redirection outside the roots, a line it cannot fully parse).
    /// Combined like the verdict — the most restrictive wins — but never covered by a session
    /// grant: the grant was given for the keys, and this is not in them.
    #[serde(skip)]
    pub concerns: Vec<Concern>,
    /// Keys that need no decision of their own unless a rule names them (for the shell tool: a
    /// wrapper that runs its command as it is, `timeout 60`, whose command is one of
    /// [`Request::keys`]; a builtin that only sets the shell's state, `cd src`). A rule that
    /// matches one decides it like any key; otherwise it is allowed by its check.
    #[serde(skip)]
    pub passing: Vec<Passing>,
    /// For a file tool: the root that holds the path it touches, whether it writes, and a
    /// persistence-surface hit ([`FileAccess`]). The engine decides from it with the policy's
    /// roots; the tool hands no verdict.
    #[serde(skip)]
    pub file: Option<FileAccess>,
    /// The call's arguments (JSON; `null` when not given). The audit log keeps only their
    /// digest, so whoever holds the arguments can prove which call a record is about.
    #[serde(skip)]
    pub args: serde_json::Value,
    /// The client's own id for the call (an MCP request id), recorded beside `id`, which is
    /// cordon's.
    #[serde(skip)]
    pub client_request: Option<String>,
}

impl Request {
    /// A request with a summary presentation (the tool name and the keys) and no verdict.
    pub fn new(id: impl Into<String>, tool: impl Into<String>, keys: Vec<Key>) -> Request {
        let tool = tool.into();
        let summary = match keys.as_slice() {
            [] => tool.clone(),
            [k] => format!("{tool}: {k}"),
            ks => format!("{tool}: {} operations", ks.len()),
        };
        Request {
            id: id.into(),
            tool,
            keys,
            presentation: Presentation::summary(summary),
            concerns: Vec::new(),
            passing: Vec::new(),
            file: None,
            args: serde_json::Value::Null,
            client_request: None,
        }
    }

    /// A shell request: one key per simple command; the preview shows the commands.
    pub fn shell(id: impl Into<String>, commands: Vec<Key>) -> Request {
        let mut r = Request::new(id, "shell", commands);
        r.presentation.preview = match r.keys.as_slice() {
            [k] => Preview::Command {
                argv: k.words().to_vec(),
            },
            ks => Preview::Text {
                text: ks
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ; "),
            },
        };
        r
    }

    /// Sets the presentation.
    pub fn with_presentation(mut self, presentation: Presentation) -> Request {
        self.presentation = presentation;
        self
    }

    /// Adds something the tool found that the keys do not capture (see
    /// [`Request::concerns`]); a concern of action `allow` is no concern and is dropped.
    pub fn with_concern(mut self, concern: Concern) -> Request {
        if concern.action != Action::Allow {
            self.concerns.push(concern);
        }
        self
    }

    /// Adds a key that needs no decision of its own unless a rule names it (see
    /// [`Request::passing`]).
    pub fn with_passing(mut self, passing: Passing) -> Request {
        self.passing.push(passing);
        self
    }

    /// Sets what a file tool found about the path the call touches (see [`Request::file`]).
    pub fn with_file(mut self, access: FileAccess) -> Request {
        self.file = Some(access);
        self
    }

    /// Sets the call's arguments (recorded in the audit log as a digest).
    pub fn with_args(mut self, args: serde_json::Value) -> Request {
        self.args = args;
        self
    }

    /// Sets the client's own id for the call (see [`Request::client_request`]).
    pub fn with_client_request(mut self, id: impl Into<String>) -> Request {
        self.client_request = Some(id.into());
        self
    }
}

/// A fact about a call that its keys do not capture, with how much it weighs: `ask` (a person
/// should look) or `deny` (never, whatever the rules say). Never covered by a session grant. A
/// concern about an option of one command (`find . -delete`) [`lift`](Concern::lift)s when an
/// explicit allow rule that names the option decides that command's key: the operator allowed
/// exactly that form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concern {
    /// `ask` or `deny`.
    pub action: Action,
    /// What was found and why it matters, one line.
    pub reason: String,
    /// The built-in check that found it (`unparsed`, `environment`, `write-outside-roots`, …).
    pub check: &'static str,
    /// The key and option word an explicit allow rule must name to lift the concern; `None`:
    /// only a deny or the person decides.
    pub lift: Option<(Key, String)>,
}

impl Concern {
    /// A concern raised by `check`.
    pub fn new(action: Action, check: &'static str, reason: impl Into<String>) -> Concern {
        Concern {
            action,
            reason: reason.into(),
            check,
            lift: None,
        }
    }

    /// A concern from a tool's verdict (its rule, when built in, names the check).
    pub fn from_decision(d: &Decision) -> Concern {
        let check = match d.rule {
            RuleRef::Builtin(tag) => tag,
            _ => "tool",
        };
        Concern::new(d.action, check, d.reason.clone())
    }

    /// The concern as a tool's decision (rule `builtin:CHECK`).
    pub fn decision(&self) -> Decision {
        Decision {
            action: self.action,
            reason: self.reason.clone(),
            rule: RuleRef::Builtin(self.check),
        }
    }
}

/// A key that needs no decision of its own unless a rule names it; see [`Request::passing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passing {
    /// The key, matched against the rules like any other.
    pub key: Key,
    /// The built-in check that lets it pass (`wrapper`, `state-only`).
    pub check: &'static str,
    /// Why it needs no decision of its own.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_display_quotes_ambiguous_words() {
        assert_eq!(
            Key::new(["git", "commit", "-m", "a b"]).to_string(),
            "git commit -m 'a b'"
        );
        assert_eq!(Key::new(["echo", "it's"]).to_string(), r"echo 'it'\''s'");
        assert_eq!(Key::new(["x", ""]).to_string(), "x ''");
    }
}
