//! What a person approving a call sees: a one-line summary and a typed preview. Defined here,
//! below both the tools (which produce it) and the approval layer (which shows it), so that
//! neither depends on the other for it.

use std::fmt;

use serde::Serialize;

/// Words joined by spaces; a word that is empty or contains whitespace or a quote is shown in
/// single quotes, so that the display is unambiguous to a reader.
pub fn show_words<S: AsRef<str>>(words: &[S]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.as_ref();
        if i > 0 {
            out.push(' ');
        }
        if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
            out.push('\'');
            out.push_str(&w.replace('\'', r"'\''"));
            out.push('\'');
        } else {
            out.push_str(w);
        }
    }
    out
}

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
            Preview::Command { argv } => f.write_str(&show_words(argv)),
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
    fn content_preview_counts_truncated_bytes() {
        let p = Preview::Content {
            text: "abc".into(),
            truncated_bytes: 10,
        };
        assert_eq!(p.to_string(), "abc\n… 10 more bytes not shown");
    }
}
