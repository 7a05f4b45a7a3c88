//! What a check decided about one thing, with why and where the decision came from: the
//! shared vocabulary of the approval layer's rules and the tools' own checks (a path outside
//! every root, a write to a read-only root), below both.

use std::fmt;

use crate::{Action, Location};

/// How much of one command word is known before the line runs. A rule is matched against a
/// word's text; a word whose value only the running shell knows (`"$x"`, `$(cat f)`, `*.rs`,
/// the input xargs appends) is matched as written, so a deny rule would never see the value.
/// The approval layer asks where a deny or ask rule could match some value of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Known {
    /// The value is the text.
    #[default]
    Literal,
    /// Any one word (`"$x"`, `"$(cat f)"`, a `find -exec` `{}`).
    OneWord,
    /// Any number of words, options included (unquoted `$x`, a glob bash expands, xargs input).
    AnyWords,
}

/// The spelling of a `find -exec` `{}` whose start path is known: `P/{found}` (`{found}`
/// alone for `.`), with P the start path normalised lexically, stands for P itself or any path
/// below it, as find names them (never one with `..` past P: find does not climb). Only a
/// [`Known::OneWord`] so spelled is read this way; the approval layer matches rules on it.
pub const FOUND: &str = "{found}";

/// What decided: a rule (with its location and pattern) or the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleRef {
    Rule {
        location: Location,
        pattern: String,
    },
    Default,
    /// A check built into the tool (e.g. `unparsed`: the line could not be fully understood).
    Builtin(&'static str),
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleRef::Rule { location, pattern } => write!(f, "{location} ({pattern})"),
            RuleRef::Default => f.write_str("default"),
            RuleRef::Builtin(tag) => write!(f, "builtin:{tag}"),
        }
    }
}

/// The verdict of the rules on one key, with its reason and origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub reason: String,
    pub rule: RuleRef,
}

impl Decision {
    /// The most restrictive of several decisions (the first one among equals); `None` when
    /// there are none.
    pub fn most_restrictive<I: IntoIterator<Item = Decision>>(all: I) -> Option<Decision> {
        all.into_iter()
            .fold(None, |acc: Option<Decision>, d| match acc {
                Some(a) if a.action >= d.action => Some(a),
                _ => Some(d),
            })
    }
}

/// What a file tool found about the one path a call touches, for the approval engine to
/// decide with the policy's roots: the root that holds it (by name; the deepest, so a
/// read-only root nested in a writable one is the one named), whether the call changes it, and
/// whether it lies on the persistence surface ([`crate::surface`]). Facts, not a decision:
/// the engine gives the root's `read_approval`/`write_approval` (else its mode's allow) as the
/// key's default, and asks at least about a surface write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAccess {
    /// The `[sandbox.paths.NAME]` root's name.
    pub root: String,
    /// The call writes, edits or deletes.
    pub writes: bool,
    /// The path is on the persistence surface: why (a program of the operator's runs it or
    /// takes commands from it outside any sandbox).
    pub surface: Option<String>,
}
