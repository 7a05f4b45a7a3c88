//! `cordon check`: the decision on a call, explained. Runs nothing.

use cordon_gate::{Command, Gate, Options};
use cordon_tools::assess::ShellAssessment;
use cordon_tools::tool::Assessment;
use serde_json::json;

use crate::{CheckArgs, Error, Exit};

/// Through a gate that only checks: the policy, the remembered rules and the tools' reading
/// are exactly `exec`'s, and nothing is recorded or run.
pub fn run(args: CheckArgs) -> Exit {
    let cwd = crate::current_dir()?;
    let mut opts = Options::new(cwd);
    opts.policy = args.policy.clone();
    let gate = Gate::open_dry(opts)?;
    if args.tool == "network" {
        // A connection through the proxy: the [network] rules' verdict on HOST:PORT.
        let words = args.pairs.iter().chain(&args.argv);
        let a = cordon_tools::network::check(gate.policy(), words).map_err(Error::failure)?;
        if args.json {
            println!("{}", a.to_json());
        } else {
            print_tool_human(&a);
        }
        return Ok(0);
    }
    if args.tool != "shell" {
        return check_tool(&gate, &args);
    }
    if let Some(extra) = args.pairs.first() {
        return Err(Error::failure(format!(
            "shell: unexpected `{extra}`; give -c STRING or -- PROG ARGS"
        )));
    }
    let command = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => Command::Line(line.clone()),
        (None, false) => Command::Argv(args.argv.clone()),
        (None, true) => {
            return Err(Error::failure(
                "nothing to check: give -c STRING or -- PROG ARGS",
            ))
        }
    };
    let call = gate.shell(command, None)?;
    let Some(a) = call.shell_assessment() else {
        return Err(Error::failure("not a shell call"));
    };
    if args.json {
        println!("{}", to_json(a));
    } else {
        print_human(a);
    }
    Ok(0)
}

/// `cordon check TOOL key=value…` for a file tool or a `[tools.NAME]` tool: the tool's
/// assessment of the call (nothing is executed). The arguments are `key=value` words (values
/// are strings); they may also follow `--`.
fn check_tool(gate: &Gate, args: &CheckArgs) -> Exit {
    if args.command.is_some() {
        return Err(Error::failure(format!(
            "{}: -c is for shell; give the arguments as key=value",
            args.tool
        )));
    }
    let call =
        call_args(&args.tool, args.pairs.iter().chain(&args.argv)).map_err(Error::failure)?;
    // A call cordon cannot even read is a usage error here (125), not a denial.
    let call = gate
        .file(&args.tool, call)
        .map_err(|e| Error::failure(e.message))?;
    let Some(a) = call.tool_assessment() else {
        return Err(Error::failure("not a tool call"));
    };
    if args.json {
        println!("{}", a.to_json());
    } else {
        print_tool_human(a);
    }
    Ok(0)
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
