//! The shell tool's assessment: every simple command a line would run, each decided by the
//! rules, plus the tool's own concerns (unparsed syntax, opaque code, writes outside the
//! roots), combined into one most-restrictive decision. `cordon check` prints it and
//! `cordon exec` acts on it, so what is checked is what runs.

use std::path::{Component, Path, PathBuf};

use cordon_approval::{Decision, RuleRef, RuleSet};
use cordon_policy::Action;

use crate::shell::{Concern, Effect, ParsedLine, SimpleCommand};

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
    /// The words an approval engine decides for it (its [`SimpleCommand::key`]); `None` for a
    /// transparent wrapper no rule names (`time`, `timeout 300`, `bash -c`), whose commands are
    /// decided instead.
    pub key: Option<Vec<String>>,
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

impl ShellAssessment {
    /// The tool's own verdict, apart from the rules: the most restrictive concern (unparsed
    /// syntax, opaque code, writes outside the roots, …), or an ask when the line has no
    /// command at all; `None` when the tool has no objection. An approval engine combines it
    /// with its own rules (see `cordon_approval::Request::verdict`).
    pub fn own_verdict(&self) -> Option<Decision> {
        if self.commands.is_empty() {
            return Some(self.decision.clone());
        }
        Decision::most_restrictive(self.concerns.iter().map(|(_, d)| d.clone()))
    }
}

/// Decides a parsed line.
pub fn assess(parsed: &ParsedLine, rules: &RuleSet, cx: &ShellContext) -> ShellAssessment {
    let commands: Vec<CommandVerdict> = parsed
        .commands
        .iter()
        .map(|c| match rules.matching(&c.key) {
            None if c.transparent => CommandVerdict {
                command: c.clone(),
                decision: Decision {
                    action: Action::Allow,
                    reason: format!(
                        "`{}` runs its command as it is; that command is decided by its own rules",
                        c.words.first().map_or("", String::as_str)
                    ),
                    rule: RuleRef::Builtin("wrapper"),
                },
                key: None,
            },
            matched => {
                let denied = matched.as_ref().is_some_and(|d| d.action == Action::Deny);
                let (key, decision) = match deny_reordered(rules, &c.key).filter(|_| !denied) {
                    Some(reordered) => reordered,
                    None => (c.key.clone(), matched.unwrap_or_else(|| rules.fallback())),
                };
                CommandVerdict {
                    command: c.clone(),
                    decision,
                    key: Some(key),
                }
            }
        })
        .collect();
    let effects = commands.iter().flat_map(|v| {
        v.command
            .effects
            .iter()
            .filter(|e| !allowed_by_its_rule(e, &v.decision))
            .map(|e| Concern::OptionEffect(e.detail.clone()))
    });
    let concerns: Vec<(Concern, Decision)> = parsed
        .concerns
        .iter()
        .cloned()
        .chain(effects)
        .filter(|c| !matches!(c, Concern::WriteRedirect(target) if writes_inside(target, cx)))
        .map(|c| {
            let d = concern_decision(&c);
            (c, d)
        })
        .collect();
    // Among equals the first decides the reason: a transparent wrapper's pass-through comes
    // last, so `timeout 60 pytest` is allowed by the rule on `pytest`.
    let (passed, decided): (Vec<&CommandVerdict>, Vec<&CommandVerdict>) =
        commands.iter().partition(|c| c.key.is_none());
    let all = decided
        .iter()
        .map(|c| c.decision.clone())
        .chain(concerns.iter().map(|(_, d)| d.clone()))
        .chain(passed.iter().map(|c| c.decision.clone()));
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

/// A deny rule that names an option matches wherever the option stands: programs read their
/// options in any order (`git reset -q --hard`, `git push origin main --force`), and patterns
/// are token prefixes. The key with one option word moved right after the program name, or
/// after its first operand (a subcommand), that a deny rule matches, with that rule's decision.
fn deny_reordered(rules: &RuleSet, key: &[String]) -> Option<(Vec<String>, Decision)> {
    for (i, word) in key.iter().enumerate().skip(2) {
        if !word.starts_with('-') || word == "-" || word == "--" {
            continue;
        }
        for at in [1, 2] {
            if at >= i {
                continue;
            }
            let mut moved = key.to_vec();
            let option = moved.remove(i);
            moved.insert(at, option);
            if let Some(d) = rules.matching(&moved).filter(|d| d.action == Action::Deny) {
                return Some((moved, d));
            }
        }
    }
    None
}

/// Whether the allow rule that decided a command names the option with the effect (`find *
/// -delete`): then the operator allowed that form, not just the program.
fn allowed_by_its_rule(effect: &Effect, decision: &Decision) -> bool {
    decision.action == Action::Allow
        && matches!(&decision.rule, RuleRef::Rule { pattern, .. }
            if pattern.split(' ').any(|token| token == effect.option))
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
            format!("`{t}` is written (a redirection or a program's option), outside the writable roots"),
        ),
        Concern::OptionEffect(what) => (
            "option",
            format!("{what}, which the rule allowing the program does not name"),
        ),
        Concern::LoaderVariable(v) => (
            "loader-variable",
            format!("`{v}` changes which code a program loads"),
        ),
        Concern::Environment(v) => (
            "environment",
            match c.variable() {
                Some(name) if name != v => format!(
                    "`{v}` sets environment variable `{name}`, which may change what the program runs"
                ),
                Some(name) => format!(
                    "environment variable `{name}` may change what the program runs"
                ),
                None => format!(
                    "`{v}` may set or export variables that reach the programs it runs, which may change what they run"
                ),
            },
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

/// The shell tool as a [`Tool`](crate::tool::Tool): `{"command": "LINE"}`. Its assessment is
/// [`assess`] of the parsed line (the same one `cordon check` prints and `cordon exec` acts
/// on); running it is the host's job, passed in with [`ShellTool::with_runner`] (cordon's own
/// runner is the OS sandbox), so the tools layer never reaches into the sandbox layer.
pub struct ShellTool {
    rules: RuleSet,
    cx: ShellContext,
    runner: Option<Box<Runner>>,
}

type Runner = dyn Fn(&str) -> Result<serde_json::Value, crate::tool::ToolError> + Send + Sync;

impl ShellTool {
    /// The shell tool for `policy`'s shell rules and writable roots, running lines in `cwd`.
    pub fn new(policy: &cordon_policy::Policy, cwd: PathBuf) -> ShellTool {
        let writable = policy
            .sandbox
            .paths
            .iter()
            .filter(|p| p.mode == cordon_policy::Mode::ReadWrite)
            .map(|p| p.root.clone())
            .collect();
        ShellTool {
            rules: RuleSet::new(&policy.shell),
            cx: ShellContext { cwd, writable },
            runner: None,
        }
    }

    /// How an approved line is run.
    pub fn with_runner(
        mut self,
        run: impl Fn(&str) -> Result<serde_json::Value, crate::tool::ToolError> + Send + Sync + 'static,
    ) -> ShellTool {
        self.runner = Some(Box::new(run));
        self
    }

    /// The detailed assessment of a line: every simple command with its own decision.
    pub fn assess_line(&self, line: &str) -> ShellAssessment {
        assess(&crate::shell::parse(line), &self.rules, &self.cx)
    }
}

impl crate::tool::Tool for ShellTool {
    fn name(&self) -> &str {
        "shell"
    }

    fn description(&self) -> &str {
        "run a shell command line (with /bin/sh -c) under the OS sandbox"
    }

    fn schema(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command line"}},
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    fn assess(
        &self,
        args: &serde_json::Value,
    ) -> Result<crate::tool::Assessment, crate::tool::ToolError> {
        let bad = |message: &str| crate::tool::ToolError::InvalidArguments {
            tool: "shell".into(),
            message: message.into(),
        };
        let obj = args
            .as_object()
            .ok_or_else(|| bad("arguments must be a JSON object"))?;
        if let Some(extra) = obj.keys().find(|k| *k != "command") {
            return Err(bad(&format!("unknown argument `{extra}`")));
        }
        let line = obj
            .get("command")
            .and_then(|v| v.as_str())
            .ok_or_else(|| bad("`command` (a string) is required"))?;
        let a = self.assess_line(line);
        let keys = std::iter::once("shell".to_string())
            .chain(
                a.commands
                    .iter()
                    .filter_map(|c| c.key.as_ref().map(|k| k.join(" "))),
            )
            .collect();
        Ok(
            crate::tool::Assessment::new("shell", serde_json::json!({"command": line}), keys)
                .with_verdict(a.decision.clone())
                .with_presentation(crate::tool::Presentation {
                    summary: format!("run `{line}`"),
                    preview: crate::tool::Preview::Command {
                        argv: vec!["/bin/sh".into(), "-c".into(), line.into()],
                    },
                    full: None,
                }),
        )
    }

    fn execute(
        &self,
        assessment: &crate::tool::Assessment,
    ) -> Result<serde_json::Value, crate::tool::ToolError> {
        // Decide again from the arguments: a forged or stale assessment cannot run.
        let fresh = crate::tool::Tool::assess(self, &assessment.args)?;
        if fresh.verdict.action == Action::Deny || assessment.verdict.action == Action::Deny {
            return Err(crate::tool::ToolError::Denied {
                tool: "shell".into(),
                decision: fresh.verdict,
            });
        }
        let line = fresh.args["command"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match &self.runner {
            Some(run) => run(&line),
            None => Err(crate::tool::ToolError::NotExecutable {
                tool: "shell".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;
    use serde_json::json;

    fn tool(default: &str) -> ShellTool {
        let text = format!(
            "version = 1\n[shell]\ndefault = \"{default}\"\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nreason = \"no deleting\"\n"
        );
        let policy = cordon_policy::Policy::parse(&text, "p.toml", Path::new("/")).unwrap();
        ShellTool::new(&policy, PathBuf::from("/")).with_runner(|line| Ok(json!({"ran": line})))
    }

    #[test]
    fn assesses_every_command_of_the_line() {
        let t = tool("allow");
        let a = t
            .assess(&json!({"command": "ls && sudo rm -rf /"}))
            .unwrap();
        assert_eq!(a.verdict.action, Action::Deny);
        assert_eq!(a.verdict.reason, "no deleting");
        assert_eq!(a.keys, ["shell", "ls", "sudo rm -rf /", "rm -rf /"]);
        assert!(t.execute(&a).is_err(), "a denied line never runs");
        let ok = t.assess(&json!({"command": "ls -la"})).unwrap();
        assert_eq!(t.execute(&ok).unwrap(), json!({"ran": "ls -la"}));
    }

    #[test]
    fn a_forged_assessment_is_decided_again() {
        let t = tool("allow");
        let mut a = t.assess(&json!({"command": "ls"})).unwrap();
        a.args = json!({"command": "rm -rf ~"});
        assert!(matches!(
            t.execute(&a),
            Err(crate::tool::ToolError::Denied { .. })
        ));
    }

    #[test]
    fn environment_variables_ask_unless_inert() {
        let text = "version = 1\n[shell]\ndefault = \"deny\"\n[[shell.rules]]\npattern = \"git log\"\naction = \"allow\"\n";
        let policy = cordon_policy::Policy::parse(text, "p.toml", Path::new("/")).unwrap();
        let t = ShellTool::new(&policy, PathBuf::from("/"));
        let a = t.assess_line("GIT_PAGER=\"touch /tmp/pwn\" git log");
        assert_eq!(a.decision.action, Action::Ask, "{:?}", a.decision);
        assert_eq!(a.decision.rule, RuleRef::Builtin("environment"));
        assert!(
            a.decision.reason.contains("`GIT_PAGER`")
                && a.decision
                    .reason
                    .contains("may change what the program runs"),
            "{}",
            a.decision.reason
        );
        assert_eq!(a.own_verdict().unwrap().action, Action::Ask);
        for line in [
            "env GIT_SSH_COMMAND=x git log",
            "export HOME=/tmp/x; git log",
        ] {
            let a = t.assess_line(line);
            let rules: Vec<_> = a.concerns.iter().map(|(_, d)| d.rule.clone()).collect();
            assert_eq!(rules, [RuleRef::Builtin("environment")], "{line}");
        }
        let a = t.assess_line("LD_PRELOAD=/x.so git log");
        assert_eq!(a.decision.rule, RuleRef::Builtin("loader-variable"));
        for line in [
            "LANG=C git log",
            "x=1; git log",
            "TERM=dumb NO_COLOR=1 git log",
        ] {
            let a = t.assess_line(line);
            assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
        }
        // An explicit deny still wins over the concern's ask.
        let a = t.assess_line("GIT_PAGER=x git push");
        assert_eq!(a.decision.action, Action::Deny);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let t = tool("ask");
        assert!(t.assess(&json!({})).is_err());
        assert!(t.assess(&json!({"command": 3})).is_err());
        assert!(t.assess(&json!({"command": "ls", "cwd": "/"})).is_err());
        assert_eq!(t.schema()["required"], json!(["command"]));
    }
}
