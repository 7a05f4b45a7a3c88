//! The tools `cordon mcp` offers, their schemas and annotations, and how a call's outcome
//! becomes a `CallToolResult`.
//!
//! `run_command` runs a bash command line under the kernel sandbox; the file tools are
//! cordon's own (`cordon_tools::files`), with their schemas and semantics unchanged. None of
//! them can reach the policy: the file tools refuse cordon's own files, and the sandbox keeps
//! them read-only for commands.

use std::sync::Arc;
use std::time::Duration;

use cordon_policy::{Network, Policy};

use super::Error;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// The file tools offered, in the order listed.
pub const FILE_TOOLS: [&str; 5] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "delete_file",
];

/// How much of each output stream of a command is kept; the rest is drained and dropped.
pub const OUTPUT_LIMIT: usize = 256 * 1024;

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The tool list for `policy`.
pub fn definitions(policy: &Policy) -> Result<Vec<Tool>, Error> {
    let network = policy.sandbox.network == Network::Allow;
    let mut tools = vec![Tool::new(
        "run_command",
        "Run a bash command line under cordon: the policy's rules decide (some commands ask \
         the user first), and it runs in a kernel sandbox that can write only inside the \
         policy's roots. Returns stdout, stderr and the exit code.",
        object(json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "the command line, run by bash -c"},
                "cwd": {"type": "string", "description": "working directory, inside a root of the policy (default: where cordon mcp started)"},
                "timeout_s": {"type": "number", "exclusiveMinimum": 0, "description": "seconds before the command and all its descendants are killed (never beyond the policy's limit)"},
            },
            "required": ["command"],
            "additionalProperties": false,
        })),
    )
    .with_title("Run a command (sandboxed)")
    .with_raw_output_schema(object(json!({
        "type": "object",
        "properties": {
            "exit_code": {"type": "integer"},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "truncated": {"type": "boolean"},
        },
        "required": ["exit_code", "stdout", "stderr", "truncated"],
    })))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            // The sandbox's network switch is the policy's: closed unless it says allow.
            .open_world(network),
    )];
    let files = cordon_tools::files::file_tools(policy)?;
    for name in FILE_TOOLS {
        let Some(t) = files.iter().find(|t| t.name() == name) else {
            return Err(Error::MissingTool(name));
        };
        let (read_only, destructive, idempotent) = match name {
            "read_file" | "list_dir" => (true, false, true),
            // Replaces the whole file: the old content is gone; the same call again changes
            // nothing more.
            "write_file" => (false, true, true),
            // The old text must occur exactly once: a second identical call fails.
            "edit_file" => (false, true, false),
            _ => (false, true, true),
        };
        tools.push(
            Tool::new(
                name.to_string(),
                t.description().to_string(),
                object(t.schema()),
            )
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(read_only)
                    .destructive(destructive)
                    .idempotent(idempotent)
                    .open_world(false),
            ),
        );
    }
    Ok(tools)
}

/// A `run_command` call's arguments.
#[derive(Debug, PartialEq)]
pub struct RunArgs {
    pub command: String,
    pub cwd: Option<String>,
    pub timeout: Option<Duration>,
}

/// Parses `run_command`'s arguments strictly: unknown keys and wrong types are refused.
pub fn run_args(args: &JsonObject) -> Result<RunArgs, Error> {
    for key in args.keys() {
        if !matches!(key.as_str(), "command" | "cwd" | "timeout_s") {
            return Err(Error::UnknownArgument(key.clone()));
        }
    }
    let command = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(Error::Empty("command")),
        Some(_) => return Err(Error::NotString("command")),
        None => return Err(Error::Required("command")),
    };
    let cwd = match args.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(Error::NotString("cwd")),
    };
    let timeout = match args.get("timeout_s") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() => {
                Some(Duration::try_from_secs_f64(s).map_err(|_| Error::TimeoutOutOfRange)?)
            }
            _ => return Err(Error::TimeoutNotPositive),
        },
    };
    Ok(RunArgs {
        command,
        cwd,
        timeout,
    })
}

/// The timeout a run gets: the agent's, but never beyond the policy's limit.
pub fn timeout(asked: Option<Duration>, policy: Option<Duration>) -> Option<Duration> {
    match (asked, policy) {
        (Some(a), Some(p)) => Some(a.min(p)),
        (a, p) => a.or(p),
    }
}

/// An error result: the model reads `message`.
pub fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// A command that ran (whatever its exit code): its output as text and as structured content.
pub fn ran(exit_code: i32, stdout: &[u8], stderr: &[u8], truncated: bool) -> CallToolResult {
    let stdout = String::from_utf8_lossy(stdout).into_owned();
    let stderr = String::from_utf8_lossy(stderr).into_owned();
    let mut text = String::new();
    if !stdout.is_empty() {
        text.push_str(&stdout);
        if !stdout.ends_with('\n') {
            text.push('\n');
        }
    }
    if !stderr.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&stderr);
        if !stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    if truncated {
        text.push_str(&format!(
            "[cordon: output truncated: each stream keeps its first {} KiB]\n",
            OUTPUT_LIMIT / 1024
        ));
    }
    text.push_str(&format!("[exit code: {exit_code}]"));
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({
        "exit_code": exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "truncated": truncated,
    }));
    result
}

/// A file tool's result: the tool's JSON text, also as structured content when it is an object.
pub fn file_result(text: &[u8]) -> CallToolResult {
    let text = String::from_utf8_lossy(text).into_owned();
    let structured = serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn run_args_are_strict() {
        assert_eq!(
            run_args(&obj(json!({"command": "ls", "timeout_s": 1.5}))).unwrap(),
            RunArgs {
                command: "ls".into(),
                cwd: None,
                timeout: Some(Duration::from_millis(1500)),
            }
        );
        for (bad, want) in [
            (json!({}), "run_command: `command` is required"),
            (json!({"command": ""}), "run_command: `command` is empty"),
            (
                json!({"command": 1}),
                "run_command: `command` must be a string",
            ),
            (
                json!({"command": "ls", "cwd": 3}),
                "run_command: `cwd` must be a string",
            ),
            (
                json!({"command": "ls", "timeout_s": 0}),
                "run_command: `timeout_s` must be a positive number",
            ),
            (
                json!({"command": "ls", "timeout_s": -1}),
                "run_command: `timeout_s` must be a positive number",
            ),
            (
                json!({"command": "ls", "timeout_s": "5"}),
                "run_command: `timeout_s` must be a positive number",
            ),
            (
                json!({"command": "ls", "timeout_s": 1e300}),
                "run_command: `timeout_s` is out of range",
            ),
            (
                json!({"command": "ls", "policy": "x"}),
                "run_command: unknown argument `policy`",
            ),
        ] {
            match run_args(&obj(bad.clone())) {
                Err(e) => assert_eq!(e.to_string(), want, "{bad}"),
                Ok(a) => panic!("{bad}: accepted as {a:?}"),
            }
        }
        assert!(matches!(
            run_args(&obj(json!({"cwd": "/"}))),
            Err(Error::Required("command"))
        ));
    }

    #[test]
    fn the_policy_caps_the_timeout() {
        let s = Duration::from_secs;
        assert_eq!(timeout(Some(s(100)), Some(s(10))), Some(s(10)));
        assert_eq!(timeout(Some(s(1)), Some(s(10))), Some(s(1)));
        assert_eq!(timeout(None, Some(s(10))), Some(s(10)));
        assert_eq!(timeout(Some(s(3)), None), Some(s(3)));
        assert_eq!(timeout(None, None), None);
    }

    #[test]
    fn output_keeps_both_streams_and_the_code() {
        let r = ran(3, b"out", b"err\n", true);
        let text = serde_json::to_value(&r.content).unwrap().to_string();
        assert!(
            text.contains("out\\n[stderr]\\nerr\\n[cordon: output truncated"),
            "{text}"
        );
        assert!(text.contains("[exit code: 3]"), "{text}");
        assert_eq!(r.structured_content.unwrap()["exit_code"], 3);
        assert_eq!(r.is_error, Some(false));
    }
}
