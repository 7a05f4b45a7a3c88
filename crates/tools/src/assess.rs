//! The shell tool's assessment: every simple command a line would run, each decided by the
//! rules, plus the tool's own concerns (unparsed syntax, opaque code, writes outside the
//! roots), combined into one most-restrictive decision. `cordon check` prints it and
//! `cordon exec` acts on it, so what is checked is what runs.

use std::path::{Component, Path, PathBuf};

use cordon_approval::{Decision, RuleRef, RuleSet};
use cordon_policy::{names_system_program, Action, Network, Policy};

use crate::shell::{Concern, Effect, ParsedLine, SimpleCommand};

/// Where the line runs, to judge redirections.
#[derive(Debug, Clone)]
pub struct ShellContext {
    /// The directory the line runs in.
    pub cwd: PathBuf,
    /// Roots the policy makes writable.
    pub writable: Vec<PathBuf>,
    /// cordon's own files and directories ([`policy_files`]): a write to one is denied,
    /// whatever the roots say, so that a command never grants itself rules or erases the
    /// record of what it did.
    pub policy_files: Vec<PathBuf>,
    /// The policy's `sandbox.network`: under `deny`, a redirection to `/dev/tcp/…` is denied.
    pub network: Network,
    /// The home directory the line's `~` stands for, if known.
    pub home: Option<PathBuf>,
    /// The `PATH` the line's shell searches for command names, in order (empty: not known);
    /// absolute entries with their symlinks resolved ([`ShellContext::for_policy`] does), as
    /// they are compared with the writable roots by name.
    pub search_path: Vec<PathBuf>,
}

impl ShellContext {
    /// The context for `policy`'s writable roots, own files and network setting, for a line
    /// run in `cwd`; `~` is `$HOME`.
    pub fn for_policy(policy: &Policy, cwd: PathBuf) -> ShellContext {
        ShellContext {
            cwd,
            writable: policy
                .sandbox
                .paths
                .iter()
                .filter(|p| p.mode == cordon_policy::Mode::ReadWrite)
                .map(|p| p.root.clone())
                .collect(),
            policy_files: policy_files(policy, |name| std::env::var_os(name)),
            network: policy.sandbox.network,
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute()),
            // The sandbox passes PATH on, or gives the system directories in this order.
            search_path: match std::env::var_os("PATH") {
                Some(p) => std::env::split_paths(&p)
                    .map(|e| {
                        if e.is_absolute() {
                            real(&lexical(&e))
                        } else {
                            e
                        }
                    })
                    .collect(),
                None => cordon_policy::SYSTEM_BIN_DIRS
                    .iter()
                    .map(PathBuf::from)
                    .collect(),
            },
        }
    }
}

/// cordon's own files for `policy`, which no tool call may write: the policy file and its
/// `cordon.rules.toml` ("approve always" rules), the audit log and its directory (also the
/// per-user default logs), the trust store (`$XDG_CONFIG_HOME/cordon`, else
/// `~/.config/cordon`) and the session store (`$XDG_RUNTIME_DIR/cordon`, else
/// `~/.local/state/cordon`, where `cordon exec --session` keeps its grants). `var` reads
/// the environment; relative values are ignored, as the XDG specification says.
pub fn policy_files(
    policy: &Policy,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(file) = policy.file() {
        out.push(file);
    }
    out.extend(policy.rules_file());
    // The log, its head file and its directory, unless a writable root is that directory or
    // lies inside it (then every write there would be refused; the OS sandbox draws the same
    // line).
    let writable: Vec<&Path> = policy
        .sandbox
        .paths
        .iter()
        .filter(|p| p.mode == cordon_policy::Mode::ReadWrite)
        .map(|p| p.root.as_path())
        .collect();
    let logs = policy.approval.audit_log.path().into_iter();
    for log in logs.chain(
        policy
            .approval
            .other_audit_logs
            .iter()
            .map(PathBuf::as_path),
    ) {
        out.push(log.to_path_buf());
        out.push(cordon_approval::audit::head_path(log));
        let dir = log
            .parent()
            .filter(|d| !writable.iter().any(|w| w.starts_with(d)));
        out.extend(dir.map(Path::to_path_buf));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = absolute("HOME");
    match absolute("XDG_CONFIG_HOME") {
        Some(c) => out.push(c.join("cordon")),
        None => out.extend(home.as_ref().map(|h| h.join(".config/cordon"))),
    }
    if let Some(r) = absolute("XDG_RUNTIME_DIR") {
        out.push(r.join("cordon"));
    }
    out.extend(home.as_ref().map(|h| h.join(".local/state/cordon")));
    out.sort();
    out.dedup();
    out
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
    let planted = plantable_path_entries(cx);
    let commands: Vec<CommandVerdict> = parsed
        .commands
        .iter()
        .map(|c| {
            // The key as the option tables normalised it, but the program as written: an allow
            // rule on a bare name holds only for the program the PATH finds (or its path in a
            // system directory), never for `./git` or `/tmp/evil/ls` (matching_command).
            let mut key = c.key.clone();
            if let (Some(k), Some(w)) = (key.first_mut(), c.words.first()) {
                k.clone_from(w);
            }
            let mut verdict = match rules.matching_command(&key) {
                // A wrapper that runs its command as it is (`timeout`, `nice`, `bash -c`) is
                // decided by that command, unless a rule names the wrapper; only the real
                // program, not one named by another path.
                None if c.transparent
                    && c.words.first().is_some_and(|w| names_system_program(w)) =>
                {
                    CommandVerdict {
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
                    }
                }
                // A builtin that only reads or sets the shell's state, which no rule names:
                // allowed as a careful operator would (`true`, `[ -f x ]`, `set -e`, `cd src`).
                None if c.state_only && state_only_allowed(c, parsed, cx) => CommandVerdict {
                    command: c.clone(),
                    decision: Decision {
                        action: Action::Allow,
                        reason: format!(
                            "`{}` only reads or sets the shell's own state",
                            c.words.join(" ")
                        ),
                        rule: RuleRef::Builtin("state-only"),
                    },
                    key: None,
                },
                matched => {
                    let denied = matched.as_ref().is_some_and(|d| d.action == Action::Deny);
                    let (key, decision) = match deny_reordered(rules, &key).filter(|_| !denied) {
                        Some(reordered) => reordered,
                        None => (key.clone(), matched.unwrap_or_else(|| rules.fallback())),
                    };
                    CommandVerdict {
                        command: c.clone(),
                        decision,
                        key: Some(key),
                    }
                }
            };
            if verdict.decision.action == Action::Allow && !planted.is_empty() {
                if let Some(entry) = c.words.first().and_then(|n| shadowed(n, &planted, cx)) {
                    verdict.decision = Decision {
                        action: Action::Ask,
                        reason: format!(
                            "`{}` is looked up on the PATH, whose entry `{}` the line can write to: the program that runs may be one the line puts there",
                            c.words[0],
                            entry.display()
                        ),
                        rule: verdict.decision.rule,
                    };
                }
            }
            verdict
        })
        .collect();
    // After `cd` (`pushd`, `popd`) a relative target is relative to a directory the line
    // chose: it is not judged inside the roots.
    let moves = parsed.commands.iter().any(|c| {
        c.words
            .first()
            .is_some_and(|w| matches!(cordon_policy::basename(w), "cd" | "pushd" | "popd"))
    });
    // Code found at a path inside the writable roots is the project's: no effect there.
    let in_project = |path: &str| (!moves || path.starts_with('/')) && writes_inside(path, cx);
    let effects = commands.iter().flat_map(|v| {
        v.command
            .effects
            .iter()
            .filter(|e| !allowed_by_its_rule(e, &v.decision))
            .filter(|e| !e.path.as_deref().is_some_and(in_project))
            .map(|e| Concern::OptionEffect(e.detail.clone()))
    });
    let concerns: Vec<(Concern, Decision)> = parsed
        .concerns
        .iter()
        .cloned()
        .chain(effects)
        .filter_map(|c| {
            let decision = match &c {
                Concern::WriteRedirect(target) if moves && !target.starts_with(['/', '~']) => {
                    concern_decision(&c)
                }
                Concern::WriteRedirect(target) => {
                    if let Some(file) = writes_policy_file(target, cx) {
                        policy_file_decision(target, &file)
                    } else if writes_inside(target, cx) {
                        return None;
                    } else {
                        concern_decision(&c)
                    }
                }
                Concern::Network(_) if cx.network == Network::Deny => Decision {
                    action: Action::Deny,
                    reason: format!(
                        "{c}, and the policy denies network access (sandbox.network = \"deny\")"
                    ),
                    rule: RuleRef::Builtin("network"),
                },
                _ => concern_decision(&c),
            };
            Some((c, decision))
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
        Concern::Rebinding(v) => (
            "rebinding",
            format!("`{v}` changes what later commands mean, so the commands the rules allowed may not be the ones that run"),
        ),
        Concern::Network(t) => (
            "network",
            format!("the redirection `{t}` connects to the network"),
        ),
        Concern::DynamicRedirect(t) => (
            "dynamic-redirect",
            format!("input is redirected from `{t}`, only known at run time (it may be a network connection)"),
        ),
        Concern::Outside(what) => (
            "outside-subset",
            format!("the line uses what the shell analysis does not model: {what}"),
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
/// Whether a [`SimpleCommand::state_only`] builtin is allowed where no rule names it: all are,
/// but `cd`/`pushd` only to an existing directory inside the writable roots (symlinks
/// followed), and with `..` only as the line's one change of directory (its target is judged
/// from where the line starts).
fn state_only_allowed(c: &SimpleCommand, parsed: &ParsedLine, cx: &ShellContext) -> bool {
    let name = c.words.first().map_or("", String::as_str);
    if !matches!(name, "cd" | "pushd") {
        return true;
    }
    let operands: Vec<&String> = c.words[1..]
        .iter()
        .filter(|w| !(w.starts_with('-') && w.len() > 1))
        .collect();
    let [target] = operands.as_slice() else {
        // `cd` alone goes home; `pushd` alone swaps the stack.
        return false;
    };
    let changes = parsed
        .commands
        .iter()
        .filter(|c| {
            c.words
                .first()
                .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd" | "popd"))
        })
        .count();
    let up = Path::new(target.as_str())
        .components()
        .any(|p| p == Component::ParentDir);
    if (up && changes > 1) || target.is_empty() || target.contains(['$', '`', '*', '?', '[', '~']) {
        return false;
    }
    // Lexically outside every root: no need to ask the file system.
    let path = lexical(&cx.cwd.join(target.as_str()));
    if !cx.writable.iter().any(|root| path.starts_with(root)) {
        return false;
    }
    match std::fs::canonicalize(&path) {
        Ok(real) => real.is_dir() && cx.writable.iter().any(|root| real.starts_with(root)),
        Err(_) => false,
    }
}

fn writes_inside(target: &str, cx: &ShellContext) -> bool {
    if target.is_empty() || target.contains(['$', '`', '*', '?', '[', '~']) {
        return false;
    }
    let path = lexical(&cx.cwd.join(target));
    cx.writable
        .iter()
        .any(|root| Path::new(&path).starts_with(root))
}

/// The `PATH` entries a line could put a program in: relative ones (the current directory,
/// wherever a `cd` took it) and those inside a writable root. Empty in the usual case, so the
/// lookups below cost nothing there.
fn plantable_path_entries(cx: &ShellContext) -> Vec<usize> {
    cx.search_path
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            !e.is_absolute() || {
                let e = lexical(e);
                cx.writable.iter().any(|w| e.starts_with(w))
            }
        })
        .map(|(i, _)| i)
        .collect()
}

/// For a bare command name (not a builtin): the first `PATH` entry the line could plant a
/// program in that bash would search before it finds the program there now.
fn shadowed<'c>(name: &str, planted: &[usize], cx: &'c ShellContext) -> Option<&'c Path> {
    if name.contains('/') || crate::shell::BUILTINS.contains(&name) {
        return None;
    }
    for (i, entry) in cx.search_path.iter().enumerate() {
        if planted.contains(&i) {
            return Some(entry);
        }
        if entry.join(name).is_file() {
            return None;
        }
    }
    None
}

/// `.` and `..` resolved by name, as the shell's `cd` does.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where a path really is: each symlink on the way followed (also a dangling one, which a
/// write would create the target of), `..` taken after the links before it, as the kernel
/// resolves it. Parts that do not exist are kept as written.
fn real(path: &Path) -> PathBuf {
    use std::ffi::OsString;
    let mut out = PathBuf::from("/");
    let mut todo: Vec<OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    // Like the kernel's limit on links followed in one lookup.
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&c);
        let link = std::fs::symlink_metadata(&next)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then(|| std::fs::read_link(&next).ok())
            .flatten();
        match link {
            Some(target) if links < 40 => {
                links += 1;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for part in target.components().rev() {
                    match part {
                        Component::Normal(n) => todo.push(n.to_os_string()),
                        Component::ParentDir => todo.push("..".into()),
                        _ => {}
                    }
                }
            }
            _ => out = next,
        }
    }
    out
}

/// The policy file a literal redirection target writes (by name or through a symlink), if any.
/// `~` and `~/…` stand for the home directory.
fn writes_policy_file(target: &str, cx: &ShellContext) -> Option<PathBuf> {
    if target.is_empty() || cx.policy_files.is_empty() {
        return None;
    }
    let expanded = match (target.strip_prefix('~'), &cx.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(target),
    };
    let named = lexical(&cx.cwd.join(expanded));
    let resolved = real(&named);
    cx.policy_files
        .iter()
        .find(|f| {
            let f_real = real(f);
            [&named, &resolved]
                .iter()
                .any(|p| p.starts_with(f) || p.starts_with(&f_real))
        })
        .cloned()
}

fn policy_file_decision(target: &str, file: &Path) -> Decision {
    Decision {
        action: Action::Deny,
        reason: format!(
            "output is redirected to `{target}`, which writes cordon's own file `{}` (the policy, its rules, the audit log, the trust or session store)",
            file.display()
        ),
        rule: RuleRef::Builtin("policy-file"),
    }
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
        ShellTool {
            rules: RuleSet::new(&policy.shell),
            cx: ShellContext::for_policy(policy, cwd),
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
        "run a shell command line (with bash -c where installed, else /bin/sh -c) under the OS sandbox"
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
                        argv: vec![crate::shell::line_shell().into(), "-c".into(), line.into()],
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
        match t.execute(&a) {
            Err(crate::tool::ToolError::Denied { tool, decision }) => {
                assert_eq!(tool, "shell");
                assert_eq!(decision.reason, "no deleting", "a denied line never runs");
            }
            other => panic!("a denied line never runs, got {other:?}"),
        }
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
        let refused = |args: serde_json::Value| match t.assess(&args) {
            Err(crate::tool::ToolError::InvalidArguments { tool, message }) => {
                assert_eq!(tool, "shell");
                message
            }
            other => panic!("{args}: expected InvalidArguments, got {other:?}"),
        };
        assert_eq!(refused(json!({})), "`command` (a string) is required");
        assert_eq!(
            refused(json!({"command": 3})),
            "`command` (a string) is required"
        );
        assert_eq!(
            refused(json!({"command": "ls", "cwd": "/"})),
            "unknown argument `cwd`"
        );
        assert_eq!(refused(json!("ls")), "arguments must be a JSON object");
        assert_eq!(t.schema()["required"], json!(["command"]));
    }
}
