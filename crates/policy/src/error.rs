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
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = text[line_start..offset].chars().count() + 1;
        Location {
            file: file.to_string(),
            line,
            col,
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
}

impl PolicyError {
    pub(crate) fn invalid(location: Location, message: impl Into<String>, hint: Option<&str>) -> Self {
        PolicyError::Invalid {
            location,
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }

    /// The location the error points at, when it concerns the policy's content.
    pub fn location(&self) -> Option<&Location> {
        match self {
            PolicyError::Invalid { location, .. } => Some(location),
            PolicyError::Read { .. } => None,
        }
    }
}
