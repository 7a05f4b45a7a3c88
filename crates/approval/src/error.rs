//! The crate's one error type: why something this crate was asked to do failed.
//!
//! Two other types in the crate implement `std::error::Error` but are values, not failures of
//! the crate: [`crate::AskError`] is what an asker reports *to* the engine (nobody answered,
//! the channel was lost), and [`crate::ApprovalError`] is the verdict handed to the agent host
//! (why a call must not run). Both are `Clone + Eq`, which an error holding an `io::Error`
//! cannot be.

use std::path::PathBuf;

use cordon_policy::PolicyError;

/// Why an operation of this crate failed: an "always" answer that cannot become a rule (or a
/// rules file that cannot be written), a [`crate::Batch`] used wrongly, or an audit log that
/// cannot be opened, appended to or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// "Always" for an interpreter or wrapper: it would approve anything it runs.
    #[error("`{program}` runs other code or commands; approving it always would approve anything it runs (approve once or for this session instead)")]
    Interpreter { program: String },
    /// "Always" for a program named by a path, whose file can change after approval.
    #[error("`{program}` is named by a path, and the file there can change after it is approved (approve once or for this session instead)")]
    PathProgram { program: String },
    /// "Always" for a tool that has no rules to remember.
    #[error("only shell commands and network connections can be approved always, not `{tool}` calls (approve for this session instead)")]
    UnsupportedTool { tool: String },
    /// "Always" for a request without keys.
    #[error("the request has no operation to remember")]
    NoKeys,
    /// A key a rule cannot state exactly.
    #[error("the word {word:?} cannot be written exactly in a rule pattern")]
    Inexpressible { word: String },
    /// The rules file could not be read or written.
    #[error("{path}: {source}")]
    RulesFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The rules file (or what would be written to it) is not a valid or trusted rules file.
    #[error("{0}")]
    Policy(#[from] PolicyError),
    /// A rule or tool glob built in code ([`crate::rule`], [`crate::Rules::add`]) is not valid.
    #[error("{0}")]
    InvalidRule(String),
    /// A batch has no request with this id.
    #[error("no request `{0}` in this batch")]
    UnknownId(String),
    /// A batch's request was already decided.
    #[error("request `{0}` is already decided")]
    AlreadyDecided(String),
    /// An audit log I/O step failed.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The audit log is not in a state a crash can leave — its last complete line is not a
    /// valid record, or it disagrees with its head file — so the writer refuses to build on it.
    #[error(
        "{}: {why}; refusing to append: run `cordon audit verify` on it, and move it (with its \
         head file) aside to start a new log",
        path.display()
    )]
    Inconsistent { path: PathBuf, why: String },
    /// No random id could be drawn.
    #[error("cannot draw a random id: {0}")]
    Random(#[source] std::io::Error),
}
