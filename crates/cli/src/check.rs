//! `cordon check`: the decision on a call, explained. Runs nothing.

use cordon_approval::RuleSet;
use cordon_policy::Policy;
use cordon_tools::assess::{assess, ShellAssessment, ShellContext};
use cordon_tools::shell;
use cordon_tools::tool::{Assessment, Toolbox};
use serde_json::json;

use crate::{refuse, CheckArgs, EXIT_FAILURE};

pub fn run(args: CheckArgs) -> i32 {
    let (cwd, policy) = match crate::load_policy(args.policy.as_deref()) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if let Err(e) = examples(&policy) {
        return refuse(EXIT_FAILURE, e);
    }
    if args.tool == "network" {
        // A connection through the proxy: the [network] rules' verdict on HOST:PORT.
        let words = args.pairs.iter().chain(&args.argv);
        let a = match cordon_tools::network::check(&policy, words) {
            Ok(a) => a,
            Err(e) => return refuse(EXIT_FAILURE, e),
        };
        if args.json {
            println!("{}", a.to_json());
        } else {
            print_tool_human(&a);
        }
        return 0;
    }
    if args.tool != "shell" {
        return check_tool(&policy, &args);
    }
    if let Some(extra) = args.pairs.first() {
        return refuse(
            EXIT_FAILURE,
            format!("shell: unexpected `{extra}`; give -c STRING or -- PROG ARGS"),
        );
    }
    let parsed = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => shell::parse_in(line, &crate::exec::inherited(&policy)),
        (None, false) => shell::parse_argv_in(&args.argv, &crate::exec::inherited(&policy)),
        (None, true) => {
            return refuse(
                EXIT_FAILURE,
                "nothing to check: give -c STRING or -- PROG ARGS",
            )
        }
    };
    // The policy's rules, then the remembered "approve always" rules, as `exec` decides.
    let mut shell_rules = policy.shell.clone();
    if let Ok(file) = crate::exec::persisted_rules_file(&policy) {
        let store = cordon_policy::trust::TrustStore::from_env();
        match cordon_approval::amend::load(&file, &store) {
            Ok(persisted) => shell_rules.rules.extend(persisted),
            Err(e) => return crate::refuse_rules(&e),
        }
    }
    let rules = RuleSet::new(&shell_rules);
    let cx = ShellContext::for_policy(&policy, cwd);
    let a = assess(&parsed, &rules, &cx);
    if args.json {
        println!("{}", to_json(&a));
    } else {
        print_human(&a);
    }
    0
}

/// `cordon check TOOL key=value…` for a file tool or a `[tools.NAME]` tool: the tool's
/// assessment of the call (nothing is executed). The arguments are `key=value` words (values
/// are strings); they may also follow `--`.
fn check_tool(policy: &Policy, args: &CheckArgs) -> i32 {
    let toolbox = match Toolbox::from_policy(policy) {
        Ok(t) => t,
        Err(e) => return refuse(EXIT_FAILURE, e),
    };
    let Some(tool) = toolbox.get(&args.tool) else {
        let mut known = toolbox.names();
        known.push("shell".into());
        known.sort();
        return refuse(
            EXIT_FAILURE,
            format!(
                "unknown tool `{}`; known tools: {}",
                args.tool,
                known.join(", ")
            ),
        );
    };
    if args.command.is_some() {
        return refuse(
            EXIT_FAILURE,
            format!(
                "{}: -c is for shell; give the arguments as key=value",
                args.tool
            ),
        );
    }
    let call = match call_args(&args.tool, args.pairs.iter().chain(&args.argv)) {
        Ok(v) => v,
        Err(e) => return refuse(EXIT_FAILURE, e),
    };
    let a = match tool.assess(&call) {
        Ok(a) => a,
        Err(e) => return refuse(EXIT_FAILURE, e),
    };
    if args.json {
        println!("{}", a.to_json());
    } else {
        print_tool_human(&a);
    }
    0
}

/// `key=value` words as a JSON object of strings. A word without `=`, an empty key or a key
/// given twice is an error.
fn call_args<'a>(
    tool: &str,
    words: impl Iterator<Item = &'a String>,
) -> Result<serde_json::Value, String> {
    let mut map = serde_json::Map::new();
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            return Err(format!("{tool}: expected key=value, got `{w}`"));
        };
        if k.is_empty() {
            return Err(format!("{tool}: expected key=value, got `{w}` (empty key)"));
        }
        if map.insert(k.to_string(), json!(v)).is_some() {
            return Err(format!("{tool}: argument `{k}` given twice"));
        }
    }
    Ok(serde_json::Value::Object(map))
}

fn print_tool_human(a: &Assessment) {
    println!("decision: {}", a.verdict.action.as_str());
    println!("reason:   {}", a.verdict.reason);
    println!("rule:     {}", a.verdict.rule);
    println!("keys:     {}", a.keys.join(" "));
    println!("summary:  {}", a.presentation.summary);
    let preview = a.presentation.preview.to_string();
    if !preview.is_empty() {
        println!("preview:");
        for line in preview.lines() {
            println!("  {line}");
        }
    }
}

fn to_json(a: &ShellAssessment) -> serde_json::Value {
    json!({
        "decision": a.decision.action.as_str(),
        "reason": a.decision.reason,
        "rule": a.decision.rule.to_string(),
        "commands": a.commands.iter().map(|c| json!({
            "words": c.command.words,
            "text": c.command.text,
            "decision": c.decision.action.as_str(),
            "reason": c.decision.reason,
            "rule": c.decision.rule.to_string(),
        })).collect::<Vec<_>>(),
        "concerns": a.concerns.iter().map(|(c, d)| json!({
            "concern": format!("{c:?}"),
            "decision": d.action.as_str(),
            "reason": d.reason,
            "rule": d.rule.to_string(),
        })).collect::<Vec<_>>(),
    })
}

fn print_human(a: &ShellAssessment) {
    println!("decision: {}", a.decision.action.as_str());
    println!("reason:   {}", a.decision.reason);
    println!("rule:     {}", a.decision.rule);
    if !a.commands.is_empty() {
        println!("commands:");
        for c in &a.commands {
            println!(
                "  {:<5}  {}  [{}]",
                c.decision.action.as_str(),
                c.command.words.join(" "),
                c.decision.rule
            );
        }
    }
    if !a.concerns.is_empty() {
        println!("concerns:");
        for (_, d) in &a.concerns {
            println!("  {:<5}  {}  [{}]", d.action.as_str(), d.reason, d.rule);
        }
    }
}

/// Checks every rule's `match`/`not_match` examples against the rule itself: an example
/// matches when any simple command in it matches the rule's pattern. The embedded default's
/// examples are fixed at build time and proved by a test, so they are not re-checked on
/// every run.
pub fn examples(policy: &Policy) -> Result<(), String> {
    if policy.source == cordon_policy::DEFAULT_POLICY_NAME {
        return Ok(());
    }
    check_examples(policy)
}

fn check_examples(policy: &Policy) -> Result<(), String> {
    match example_results(policy).into_iter().find(|r| !r.ok) {
        Some(failed) => Err(failed.message()),
        None => Ok(()),
    }
}

/// One `match`/`not_match` example and whether the rule's pattern treats it as promised.
pub struct ExampleResult {
    pub location: cordon_policy::Location,
    pub line: String,
    pub pattern: String,
    /// `true` for a `match` example, `false` for `not_match`.
    pub should_match: bool,
    pub ok: bool,
}

impl ExampleResult {
    pub fn message(&self) -> String {
        match (self.ok, self.should_match) {
            (true, true) => format!("{}: `{}` matches `{}`", self.location, self.line, self.pattern),
            (true, false) => format!("{}: `{}` does not match `{}`", self.location, self.line, self.pattern),
            (false, true) => format!(
                "{}: example `{}` does not match the rule's pattern `{}` (fix the pattern or the example)",
                self.location, self.line, self.pattern
            ),
            (false, false) => format!(
                "{}: example `{}` matches the rule's pattern `{}` but is listed in not_match (fix the pattern or the example)",
                self.location, self.line, self.pattern
            ),
        }
    }
}

/// Every example of every shell rule, in policy order: an example matches when any simple
/// command in it (as the shell tool finds them) matches the rule's pattern, as written or by
/// the key it is decided by (`git --no-pager log` is `git log`).
pub fn example_results(policy: &Policy) -> Vec<ExampleResult> {
    let mut out = Vec::new();
    for rule in &policy.shell.rules {
        let hits = |line: &str| {
            shell::parse(line)
                .commands
                .iter()
                .any(|c| rule.pattern.matches(&c.words) || rule.pattern.matches(&c.key))
        };
        for (examples, should_match) in [(&rule.matches, true), (&rule.not_match, false)] {
            for ex in examples {
                out.push(ExampleResult {
                    location: ex.location.clone(),
                    line: ex.line.clone(),
                    pattern: rule.pattern.as_str().to_string(),
                    should_match,
                    ok: hits(&ex.line) == should_match,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Policy {
        Policy::parse(text, "p.toml", std::path::Path::new("/")).unwrap()
    }

    #[test]
    fn embedded_default_examples_hold() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy::parse(
            cordon_policy::DEFAULT_POLICY,
            cordon_policy::DEFAULT_POLICY_NAME,
            dir.path(),
        )
        .unwrap();
        assert!(
            policy
                .shell
                .rules
                .iter()
                .map(|r| r.matches.len() + r.not_match.len())
                .sum::<usize>()
                >= 8
        );
        check_examples(&policy).unwrap();
    }

    #[test]
    fn failing_examples_name_their_location() {
        let p = load("version = 1\n[[shell.rules]]\npattern = \"git push\"\naction = \"deny\"\nmatch = [\"git pull\"]\n");
        let e = examples(&p).unwrap_err();
        assert!(
            e.starts_with("p.toml:5:10: example `git pull` does not match"),
            "{e}"
        );
        let p = load("version = 1\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nnot_match = [\"ls && /bin/rm x\"]\n");
        let e = examples(&p).unwrap_err();
        assert!(
            e.starts_with("p.toml:5:14: example `ls && /bin/rm x` matches"),
            "{e}"
        );
        let p = load("version = 1\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nmatch = [\"sudo rm -rf /\"]\nnot_match = [\"echo rm\"]\n");
        examples(&p).unwrap();
    }
}
