use std::fmt;
use std::path::PathBuf;

/// Where a value came from: a policy file (or the embedded default) and a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub col: usize,
}

impl Location {
    /// Converts a byte offset into `text` to a line and column (1-based, columns in characters).
    pub(crate) fn at(file: &str, text: &str, offset: usize) -> Location {
        Lines::new(text).locate(file, text, offset)
    }
}

/// The byte offsets where lines start, so that many offsets can be located cheaply.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        Lines(
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        )
    }

    pub(crate) fn locate(&self, file: &str, text: &str, offset: usize) -> Location {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.0.partition_point(|&start| start <= offset);
        let start = self.0[line - 1];
        Location {
            file: file.to_string(),
            line,
            col: text[start..offset].chars().count() + 1,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Why a policy could not be loaded. Every variant that concerns the file's content carries
/// the location of the offending value and a hint on how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{location}: {message}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Invalid {
        location: Location,
        message: String,
        hint: Option<String>,
    },
    #[error("{}: cannot read policy: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file cordon found on its own that the operator has not trusted as it is now.
    #[error("{0}")]
    Untrusted(Box<crate::trust::Untrusted>),
    /// A value that is not valid, said without its place: `what` it is (a pattern, a host, a
    /// destination, a network rule, an argument glob) and `why`, in words. A caller that read
    /// it from a file puts it at its place ([`PolicyError::invalid`] takes it as the message).
    #[error("{why}")]
    Value { what: &'static str, why: String },
    /// The trust store could not be read, created or written (`trust`, `untrust`, `ensure`):
    /// `why` names the store's place and the cause (a link there, a foreign owner, a mode
    /// others may write, an I/O error).
    #[error("{why}")]
    Store { why: String },
}

impl PolicyError {
    pub(crate) fn invalid(
        location: Location,
        message: impl Into<String>,
        hint: Option<&str>,
    ) -> Self {
        PolicyError::Invalid {
            location,
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }

    /// A value that is not valid ([`PolicyError::Value`]).
    pub fn value(what: &'static str, why: impl Into<String>) -> Self {
        PolicyError::Value {
            what,
            why: why.into(),
        }
    }

    /// The location the error points at, when it concerns the policy's content.
    pub fn location(&self) -> Option<&Location> {
        match self {
            PolicyError::Invalid { location, .. } => Some(location),
            PolicyError::Read { .. }
            | PolicyError::Untrusted(_)
            | PolicyError::Value { .. }
            | PolicyError::Store { .. } => None,
        }
    }

    /// For a file that changed since it was trusted: a unified diff from the trusted content
    /// to the file's (bounded), to show after the one-line message.
    pub fn diff(&self) -> Option<&str> {
        match self {
            PolicyError::Untrusted(u) => u.diff(),
            _ => None,
        }
    }
}
