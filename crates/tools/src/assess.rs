//! The shell tool's assessment: every simple command a line would run, each decided by the
//! rules, plus the tool's own concerns (unparsed syntax, opaque code, writes outside the
//! roots), combined into one most-restrictive decision. `cordon check` prints it and
//! `cordon exec` acts on it, so what is checked is what runs.

use std::path::{Component, Path, PathBuf};

use cordon_approval::{Decision, RuleRef, RuleSet};
use cordon_policy::Action;

use crate::shell::{Concern, ParsedLine, SimpleCommand};

/// Where the line runs, to judge redirections.
#[derive(Debug, Clone)]
pub struct ShellContext {
    /// The directory the line runs in.
    pub cwd: PathBuf,
    /// Roots the policy makes writable.
    pub writable: Vec<PathBuf>,
}

/// One simple command and the rules' decision on it.
#[derive(Debug, Clone)]
pub struct CommandVerdict {
    /// The command.
    pub command: SimpleCommand,
    /// What the rules decided for it.
    pub decision: Decision,
}

/// The whole line's assessment.
#[derive(Debug, Clone)]
pub struct ShellAssessment {
    /// The most restrictive of every command's decision and every concern.
    pub decision: Decision,
    /// Every simple command, with its own decision.
    pub commands: Vec<CommandVerdict>,
    /// Concerns that raised the decision to at least `ask`, with their decisions.
    pub concerns: Vec<(Concern, Decision)>,
}

/// Decides a parsed line.
pub fn assess(parsed: &ParsedLine, rules: &RuleSet, cx: &ShellContext) -> ShellAssessment {
    let commands: Vec<CommandVerdict> = parsed
        .commands
        .iter()
        .map(|c| CommandVerdict {
            command: c.clone(),
            decision: rules.decide(&c.words),
        })
        .collect();
    let concerns: Vec<(Concern, Decision)> = parsed
        .concerns
        .iter()
        .filter(|c| !matches!(c, Concern::WriteRedirect(target) if writes_inside(target, cx)))
        .map(|c| (c.clone(), concern_decision(c)))
        .collect();
    let all = commands
        .iter()
        .map(|c| c.decision.clone())
        .chain(concerns.iter().map(|(_, d)| d.clone()));
    let decision = Decision::most_restrictive(all).unwrap_or_else(|| Decision {
        action: Action::Ask,
        reason: "no command found in the line".into(),
        rule: RuleRef::Builtin("empty"),
    });
    ShellAssessment {
        decision,
        commands,
        concerns,
    }
}

fn concern_decision(c: &Concern) -> Decision {
    let (tag, reason) = match c {
        Concern::Unparsed(why) => (
            "unparsed",
            format!("the line cannot be fully understood: {why}"),
        ),
        Concern::DynamicCommand(w) => (
            "dynamic-command",
            format!("the command name `{w}` is only known at run time"),
        ),
        Concern::Opaque(w) => (
            "opaque",
            format!("`{w}` runs code that cannot be checked in advance"),
        ),
        Concern::WriteRedirect(t) => (
            "redirect",
            format!("output is redirected to `{t}`, outside the writable roots"),
        ),
        Concern::LoaderVariable(v) => (
            "loader-variable",
            format!("`{v}` changes which code a program loads"),
        ),
    };
    Decision {
        action: Action::Ask,
        reason,
        rule: RuleRef::Builtin(tag),
    }
}

/// Is a redirection target a literal path inside a writable root?
fn writes_inside(target: &str, cx: &ShellContext) -> bool {
    if target.is_empty() || target.contains(['$', '`', '*', '?', '[', '~']) {
        return false;
    }
    let mut path = PathBuf::new();
    for c in cx.cwd.join(target).components() {
        match c {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            other => path.push(other),
        }
    }
    cx.writable
        .iter()
        .any(|root| Path::new(&path).starts_with(root))
}
