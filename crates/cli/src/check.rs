//! `cordon check`: what `exec` would decide on a call, explained. Runs and records nothing.
//!
//! The decision is the engine's one evaluator ([`Gate::explain`]): the rules and defaults of
//! each command, the tool's concerns, the remembered rules, the session's grants (with
//! `--session`), the doom loop and the mode (`--approve-all`, `--strict`) — exactly what
//! `exec` starts from. The exit code says it: 0 allow, 1 ask, 2 deny; 125 when the call or
//! the policy cannot be read.

use std::io::Write;

use cordon_approval::{By, Explanation, RuleRef};
use cordon_gate::{Command, FrontEnd, Gate, Options};
use cordon_policy::Action;
use cordon_tools::assess::ShellReading;
use cordon_tools::tool::Assessment;
use serde_json::json;

use crate::{CheckArgs, Error, Exit};

/// The exit code of a decision: 0 allow, 1 ask, 2 deny.
pub fn exit_code(action: Action) -> i32 {
    match action {
        Action::Allow => 0,
        Action::Ask => 1,
        Action::Deny => 2,
    }
}

/// Through a gate that only explains: the policy, the remembered rules, the session's grants
/// and the tools' reading are exactly `exec`'s, and nothing is recorded or run.
pub fn run(args: CheckArgs) -> Exit {
    let cwd = crate::current_dir()?;
    let mut opts = Options::new(cwd);
    opts.policy = args.policy.clone();
    opts.front_end = FrontEnd::Check;
    crate::approval_options(
        &mut opts,
        args.approve_all,
        args.strict,
        args.session.clone(),
    );
    let gate = Gate::open(opts)?;
    let (text, action) = if args.tool == "network" {
        check_network(&gate, &args)?
    } else if args.tool != "shell" {
        check_tool(&gate, &args)?
    } else {
        check_shell(&gate, &args)?
    };
    print(&text);
    Ok(exit_code(action))
}

/// Writes `text` to stdout. A reader that went away (`cordon check … | head`) is no error:
/// the decision stands, and is the exit code.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("cordon: cannot write the answer: {e}");
        }
    }
}

fn check_shell(gate: &Gate, args: &CheckArgs) -> Result<(String, Action), Error> {
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
    let x = gate.explain(&call)?;
    let text = if args.json {
        format!("{}\n", shell_json(&x, a))
    } else {
        shell_human(&x, a)
    };
    Ok((text, x.action()))
}

/// `cordon check network HOST:PORT`: a connection through the proxy, decided as the gate
/// decides a running command's connection (the `[network]` rules, remembered rules, mode).
fn check_network(gate: &Gate, args: &CheckArgs) -> Result<(String, Action), Error> {
    let all: Vec<&String> = args.pairs.iter().chain(&args.argv).collect();
    // METHOD URL: a request (a method is letters only; a target has its `:PORT`).
    if let [method, url] = all.as_slice() {
        if !method.is_empty() && method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return check_request(gate, method, url, args.json);
        }
    }
    let words = args.pairs.iter().chain(&args.argv);
    // The tool's reading first: its one-line usage errors (125).
    let a = cordon_tools::network::check(words).map_err(Error::failure)?;
    let target = a
        .keys
        .get(1)
        .and_then(|k| cordon_policy::network::Target::parse(k).ok())
        .ok_or_else(|| Error::failure("network: give one HOST:PORT"))?;
    let call = gate.network(&target.host.to_string(), target.port)?;
    let x = gate.explain(&call)?;
    Ok((tool_text(&x, &a, args.json), x.action()))
}

/// `cordon check network METHOD https://HOST[:PORT]/PATH`: a request inside a tunnel the
/// proxy terminates (`[[network.requests]]`), decided as the gate decides it for a running
/// command — after its connection, whose decision stands first: a connection that is not
/// allowed outright is what is shown.
fn check_request(
    gate: &Gate,
    method: &str,
    url: &str,
    json: bool,
) -> Result<(String, Action), Error> {
    let usage = || {
        Error::failure(format!(
            "network: `{}` is not an https:// URL; e.g. `cordon check network GET https://api.example.org/repos/x`",
            cordon_gate::clean(url)
        ))
    };
    let rest = url.strip_prefix("https://").ok_or_else(usage)?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let target = cordon_policy::network::Target::parse(authority)
        .or_else(|_| cordon_policy::network::Target::parse(&format!("{authority}:443")))
        .map_err(|_| usage())?;
    let host = target.host.to_string();
    let connection = gate.network(&host, target.port)?;
    let xc = gate.explain(&connection)?;
    if xc.action() != Action::Allow {
        let a = connection
            .tool_assessment()
            .ok_or_else(|| Error::failure("not a tool call"))?;
        return Ok((tool_text(&xc, a, json), xc.action()));
    }
    // Each path a server may read it as, as the proxy decides it (the first that is not
    // allowed is shown); one no reading can cover is refused, as the proxy refuses it.
    let readings = cordon_policy::requests::request_paths(path).map_err(|why| {
        cordon_gate::Error::new(
            cordon_gate::EXIT_DENIED,
            format!(
                "network: {method} {}: {}; the proxy refuses such a request",
                cordon_gate::clean(url),
                cordon_gate::clean(&why)
            ),
        )
    })?;
    let mut shown = None;
    for reading in &readings {
        let call = gate.http_request(method, &host, target.port, reading)?;
        let a = call
            .tool_assessment()
            .ok_or_else(|| Error::failure("not a tool call"))?;
        let x = gate.explain(&call)?;
        let action = x.action();
        shown = Some((tool_text(&x, a, json), action));
        if action != Action::Allow {
            break;
        }
    }
    shown.ok_or_else(|| Error::failure("network: no path to decide"))
}

/// `cordon check TOOL key=value…` for a file tool or a `[tools.NAME]` tool: the decision on
/// the call (nothing is executed). The arguments are `key=value` words (values are strings);
/// they may also follow `--`.
fn check_tool(gate: &Gate, args: &CheckArgs) -> Result<(String, Action), Error> {
    if args.command.is_some() {
        return Err(Error::failure(format!(
            "{}: -c is for shell; give the arguments as key=value",
            args.tool
        )));
    }
    let call = call_args(&args.tool, args.pairs.iter().chain(&args.argv))?;
    // A call cordon cannot even read is a usage error here (125), not a denial.
    let call = gate
        .file(&args.tool, call)
        .map_err(|e| Error::failure(e.to_string()))?;
    let Some(a) = call.tool_assessment() else {
        return Err(Error::failure("not a tool call"));
    };
    let x = gate.explain(&call)?;
    Ok((tool_text(&x, a, args.json), x.action()))
}

/// Where the deciding rule is, as `check` has always shown it: `FILE:LINE:COL (PATTERN)`,
/// `default`, `builtin:CHECK`, or what else decided (a session grant, the mode, the doom loop).
fn rule(by: &By) -> String {
    match by {
        By::Rule { location, pattern } | By::PersistedGrant { location, pattern } => {
            format!("{location} ({pattern})")
        }
        By::Default { .. } => RuleRef::Default.to_string(),
        By::ToolConfig { tool, location } => format!("{location} ([tools.{tool}])"),
        By::Tool(r) => r.to_string(),
        other => other.to_string(),
    }
}

/// The steps beyond the rules, for both outputs.
fn steps_json(x: &Explanation) -> serde_json::Value {
    json!({
        "mode": cordon_approval::mode_name(x.mode),
        "session_grant": x.session_grant,
        "doom_loop": x.doom_loop.then_some(x.in_a_row),
    })
}

fn steps_human(x: &Explanation, out: &mut String) {
    out.push_str(&format!(
        "mode:     {}\n",
        cordon_approval::mode_name(x.mode)
    ));
    if x.session_grant {
        out.push_str("session:  every operation was approved for this session\n");
    }
    if x.doom_loop {
        out.push_str(&format!(
            "doom loop: the same call {} times in a row\n",
            x.in_a_row
        ));
    }
}

fn tool_text(x: &Explanation, a: &Assessment, json: bool) -> String {
    if json {
        let mut v = json!({
            "tool": a.tool,
            "decision": x.action().as_str(),
            "reason": x.reason(),
            "rule": rule(x.by()),
            "keys": a.keys,
            "summary": a.presentation.summary,
            "preview": a.presentation.preview,
        });
        merge(&mut v, steps_json(x));
        return format!("{v}\n");
    }
    let clean = crate::term::clean;
    let mut out = String::new();
    head_human(x, &mut out);
    out.push_str(&format!("keys:     {}\n", clean(&a.keys.join(" "))));
    out.push_str(&format!("summary:  {}\n", clean(&a.presentation.summary)));
    let preview = a.presentation.preview.to_string();
    if !preview.is_empty() {
        out.push_str("preview:\n");
        for line in preview.lines() {
            out.push_str(&format!("  {}\n", clean(line)));
        }
    }
    out
}

/// The decision, its reason, its rule and the evaluator's steps: the head of every human report.
fn head_human(x: &Explanation, out: &mut String) {
    let clean = crate::term::clean;
    out.push_str(&format!("decision: {}\n", x.action().as_str()));
    out.push_str(&format!("reason:   {}\n", clean(x.reason())));
    out.push_str(&format!("rule:     {}\n", clean(&rule(x.by()))));
    steps_human(x, out);
}

fn merge(v: &mut serde_json::Value, more: serde_json::Value) {
    if let (Some(v), serde_json::Value::Object(more)) = (v.as_object_mut(), more) {
        v.extend(more);
    }
}

/// The commands that have a key, each with what the evaluator said of its key (a
/// transparent wrapper has none: the commands it runs are decided instead).
fn commands<'a>(
    x: &'a Explanation,
    a: &'a ShellReading,
) -> impl Iterator<
    Item = (
        &'a cordon_tools::assess::CommandReading,
        &'a cordon_approval::KeyExplained,
    ),
> {
    a.commands
        .iter()
        .filter(|c| c.passes.is_none())
        .zip(&x.keys)
}

fn shell_json(x: &Explanation, a: &ShellReading) -> serde_json::Value {
    let mut v = json!({
        "decision": x.action().as_str(),
        "reason": x.reason(),
        "rule": rule(x.by()),
        "commands": commands(x, a).map(|(c, k)| json!({
            "words": c.command.words,
            "text": c.command.text,
            "decision": k.verdict.action.as_str(),
            "reason": k.verdict.reason,
            "rule": rule(&k.verdict.by),
        })).collect::<Vec<_>>(),
        "concerns": x.concerns.iter().map(|c| json!({
            "decision": c.action.as_str(),
            "reason": c.reason,
            "rule": rule(&c.by),
        })).collect::<Vec<_>>(),
    });
    merge(&mut v, steps_json(x));
    v
}

fn shell_human(x: &Explanation, a: &ShellReading) -> String {
    let clean = crate::term::clean;
    let mut out = String::new();
    head_human(x, &mut out);
    let cmds: Vec<_> = commands(x, a).collect();
    if !cmds.is_empty() {
        out.push_str("commands:\n");
        for (c, k) in cmds {
            out.push_str(&format!(
                "  {:<5}  {}  [{}]\n",
                k.verdict.action.as_str(),
                clean(&c.command.words.join(" ")),
                clean(&rule(&k.verdict.by))
            ));
        }
    }
    if !x.concerns.is_empty() {
        out.push_str("concerns:\n");
        for c in &x.concerns {
            out.push_str(&format!(
                "  {:<5}  {}  [{}]\n",
                c.action.as_str(),
                clean(&c.reason),
                clean(&rule(&c.by))
            ));
        }
    }
    out
}

/// `key=value` words as a JSON object of strings. A word without `=`, an empty key or a key
/// given twice is a usage error (125).
fn call_args<'a>(
    tool: &str,
    words: impl Iterator<Item = &'a String>,
) -> Result<serde_json::Value, Error> {
    let mut map = serde_json::Map::new();
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            return Err(Error::failure(format!(
                "{tool}: expected key=value, got `{w}`"
            )));
        };
        if k.is_empty() {
            return Err(Error::failure(format!(
                "{tool}: expected key=value, got `{w}` (empty key)"
            )));
        }
        if map.insert(k.to_string(), json!(v)).is_some() {
            return Err(Error::failure(format!(
                "{tool}: argument `{k}` given twice"
            )));
        }
    }
    Ok(serde_json::Value::Object(map))
}
