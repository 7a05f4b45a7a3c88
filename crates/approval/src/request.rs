//! What the approval layer is asked about: a tool call described by its operation keys and a
//! presentation for the person who approves it.

use std::fmt;

use serde::Serialize;

use crate::Decision;

/// The words of one operation a call performs: for the shell tool, one simple command's words
/// (quoting resolved); for other tools, the tool's name and the object it touches, e.g.
/// `["write_file", "notes/a.txt"]`. Rules match keys as token prefixes; session grants are
/// kept per key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Key(Vec<String>);

impl Key {
    /// A key from its words.
    pub fn new<I, S>(words: I) -> Key
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Key(words.into_iter().map(Into::into).collect())
    }

    /// A key from a line split at ASCII whitespace (tests and simple callers; no quoting).
    pub fn split(line: &str) -> Key {
        Key::new(line.split_whitespace())
    }

    /// The words.
    pub fn words(&self) -> &[String] {
        &self.0
    }
}

impl fmt::Display for Key {
    /// The words joined by spaces; a word that is empty or contains whitespace or a quote is
    /// shown in single quotes, so that the display is unambiguous to a reader.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, w) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                write!(f, "'{}'", w.replace('\'', r"'\''"))?;
            } else {
                f.write_str(w)?;
            }
        }
        Ok(())
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
    /// The tool's own verdict from its configuration (e.g. a path outside every root is
    /// `deny`, a line the shell parser cannot fully understand is `ask`), if the tool has one.
    /// It is combined with the rules' verdicts: the most restrictive wins, and it is the
    /// default for keys no rule matches when the policy configures no default for the tool.
    #[serde(skip)]
    pub verdict: Option<Decision>,
    /// What the tool found that the keys do not capture (for the shell tool: an environment
    /// assignment, a write redirection outside the roots, a line it cannot fully parse).
    /// Combined like the verdict — the most restrictive wins — but never covered by a session
    /// grant: the grant was given for the keys, and this is not in them.
    #[serde(skip)]
    pub concern: Option<Decision>,
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
            verdict: None,
            concern: None,
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

    /// Sets the tool's own verdict.
    pub fn with_verdict(mut self, verdict: Decision) -> Request {
        self.verdict = Some(verdict);
        self
    }

    /// Sets what the tool found that the keys do not capture (see [`Request::concern`]).
    pub fn with_concern(mut self, concern: Decision) -> Request {
        self.concern = Some(concern);
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

/// What to show for approval.
/// What a person approving a call sees: a one-line summary and a typed preview. The one
/// definition for every layer: tools produce it, the approval prompt and `cordon check`
/// show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Presentation {
    /// One line: what the call does, e.g. `edit notes/a.txt (+2 -1)`.
    pub summary: String,
    /// The detail.
    pub preview: Preview,
    /// The whole text when the preview was truncated (for a pager view); `None` when the
    /// preview is complete.
    #[serde(skip)]
    pub full: Option<std::sync::Arc<str>>,
}

impl Presentation {
    /// A summary and a preview.
    pub fn new(summary: impl Into<String>, preview: Preview) -> Presentation {
        Presentation {
            summary: summary.into(),
            preview,
            full: None,
        }
    }

    /// A summary alone.
    pub fn summary(summary: impl Into<String>) -> Presentation {
        Presentation::new(summary, Preview::None)
    }
}

/// The detail of a [`Presentation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Preview {
    /// Nothing beyond the summary.
    None,
    /// Free text.
    Text {
        /// The text.
        text: String,
    },
    /// A unified diff of a change.
    Diff {
        /// The diff, with `a/PATH` and `b/PATH` headers.
        unified: String,
    },
    /// File content, possibly truncated (the whole text is in [`Presentation::full`]).
    Content {
        /// The shown part (cut at a character boundary).
        text: String,
        /// Bytes not shown.
        truncated_bytes: u64,
    },
    /// A binary file: its size and what it looks like.
    Binary {
        /// Size in bytes.
        size: u64,
        /// E.g. `PNG image`, `ELF executable`, `binary data`.
        kind: String,
    },
    /// A command line.
    Command {
        /// The words of the command.
        argv: Vec<String>,
    },
    /// Structured arguments (e.g. a custom tool's JSON arguments).
    Structured {
        /// The value.
        value: serde_json::Value,
    },
}

impl fmt::Display for Preview {
    /// The preview as a person reads it (empty for [`Preview::None`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Preview::None => Ok(()),
            Preview::Text { text } => f.write_str(text),
            Preview::Diff { unified } => f.write_str(unified),
            Preview::Content {
                text,
                truncated_bytes,
            } => {
                f.write_str(text)?;
                if *truncated_bytes > 0 {
                    if !text.ends_with('\n') {
                        f.write_str("\n")?;
                    }
                    write!(f, "… {truncated_bytes} more bytes not shown")?;
                }
                Ok(())
            }
            Preview::Binary { size, kind } => write!(f, "{kind}, {size} bytes"),
            Preview::Command { argv } => write!(f, "{}", Key::new(argv.iter().cloned())),
            Preview::Structured { value } => match serde_json::to_string_pretty(value) {
                Ok(s) => f.write_str(&s),
                Err(_) => Err(fmt::Error),
            },
        }
    }
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

    #[test]
    fn content_preview_counts_truncated_bytes() {
        let p = Preview::Content {
            text: "abc".into(),
            truncated_bytes: 10,
        };
        assert_eq!(p.to_string(), "abc\n… 10 more bytes not shown");
    }
}
