//! GitHub Copilot CLI's `preToolUse` command hook, as data.
//!
//! Follows the Copilot CLI hooks reference (docs.github.com, "GitHub Copilot CLI hooks
//! reference", 2026) and what Copilot CLI 1.0.102 sends and accepts (checked against the real
//! program, `crates/cli/tests/hosts_copilot.rs`). A hook file holds
//! `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": CMD, "timeoutSec": N}]}}`;
//! with the camelCase event name the input is one JSON object `{sessionId, timestamp, cwd,
//! toolName, toolArgs}` (`toolArgs` an object; older releases sent it as a JSON string, which
//! is read too). The answer on stdout: `{permissionDecision: allow | deny | ask,
//! permissionDecisionReason, modifiedArgs}`; `modifiedArgs` replaces the tool's arguments.
//! The deny reason is the tool result the model reads. No output lets Copilot decide as if
//! the hook were not there; an `allow` skips Copilot's own approval prompt. A hook that fails
//! (not found, exit 2, output that is not JSON) denies the call; a hook that times out lets
//! the call run (Copilot's changelog: "Allow tool calls to continue when hooks time out").
//!
//! `ask` is put to the user only in an interactive session (`-p` denies it: "unable to ask
//! user for confirmation"), and there `modifiedArgs` is ignored: the dialog shows the model's
//! arguments and approving it runs them (checked by hand with 1.0.102, docs/hooks.md). An ask
//! with cordon's rewrite would so run the command unconfined: cordon answers an ask as a deny
//! whose reason says how a person approves it, as for Codex and Gemini CLI.
//!
//! Tools (their schemas as Copilot CLI 1.0.102 offers them to the model): `bash` (`command`,
//! `description`, `mode`, `detach`, …; runs in the session's cwd) is the shell; `view`
//! (`path`) reads a file or lists a directory; `create` (`path`, `file_text`) writes; `edit`
//! (`path`, `old_str`, `new_str`) edits; `glob` and `grep` (`paths`: one directory or a list,
//! default the cwd) are listings; `web_fetch` and `web_search` reach the network. `read_bash`,
//! `write_bash`, `stop_bash`, `list_bash` talk to a shell `bash` already started (so, already
//! rewritten); they and every other tool (agents, skills, MCP tools) defer to Copilot unless
//! the policy has `[tools.NAME]`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::decide::{Call, Told, Verb};
use super::{host_path, string, Error, Input, Mapped, Reply};

/// The hook's stdin. Unknown fields are accepted.
// Every documented field is declared, used or not: the type is the protocol.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseInput {
    pub cwd: String,
    pub tool_name: String,
    /// An object, or (older releases) the same object as a JSON string.
    #[serde(default)]
    pub tool_args: Value,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub timestamp: Option<Value>,
}

/// `permissionDecision`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    Allow,
    Deny,
}

/// The hook's stdout.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseOutput {
    pub permission_decision: PermissionDecision,
    pub permission_decision_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified_args: Option<Map<String, Value>>,
}

/// `toolArgs` as an object: an object as it is, a string holding one parsed, absent or null
/// as no arguments.
fn tool_args(v: Value) -> Result<Map<String, Value>, Error> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        Value::String(s) => match serde_json::from_str(&s).map_err(Error::NotJson)? {
            Value::Object(m) => Ok(m),
            _ => Err(Error::NotObject("toolArgs".into())),
        },
        _ => Err(Error::NotObject("toolArgs".into())),
    }
}

pub fn parse(v: Value) -> Result<Input, Error> {
    // A postToolUse payload carries the result: cordon answers only before the tool runs.
    if v.get("toolResult").is_some() {
        return Err(Error::event("postToolUse", "preToolUse"));
    }
    let input: PreToolUseInput = serde_json::from_value(v).map_err(Error::Shape)?;
    let cwd = std::path::PathBuf::from(&input.cwd);
    if !cwd.is_absolute() {
        return Err(Error::RelativeCwd);
    }
    let ti = tool_args(input.tool_args)?;
    let abs = |p: &str| host_path(&cwd, p).to_string_lossy().into_owned();
    let tool = |tool: &str, args: Value| Mapped::Call {
        call: Call::Tool {
            tool: tool.into(),
            args,
        },
    };
    let mapped = match input.tool_name.as_str() {
        "bash" => Mapped::Call {
            call: Call::Shell {
                line: string(&ti, "command")?.to_string(),
                cwd: cwd.clone(),
            },
        },
        "view" => tool("read_file", json!({ "path": abs(string(&ti, "path")?) })),
        "create" => tool(
            "write_file",
            json!({ "path": abs(string(&ti, "path")?), "content": string(&ti, "file_text")? }),
        ),
        "edit" => {
            let path = abs(string(&ti, "path")?);
            match (ti.get("old_str"), ti.get("new_str")) {
                (Some(Value::String(old)), Some(Value::String(new))) if !old.is_empty() => {
                    tool("edit_file", json!({ "path": path, "old": old, "new": new }))
                }
                // Anything else the tool may accept is decided as a write of the file.
                _ => tool("write_file", json!({ "path": path, "content": "" })),
            }
        }
        "glob" | "grep" => {
            let dirs: Vec<String> = match ti.get("paths") {
                None | Some(Value::Null) => vec![abs(".")],
                Some(Value::String(p)) => vec![abs(p)],
                Some(Value::Array(ps)) => ps
                    .iter()
                    .map(|p| p.as_str().map(abs))
                    .collect::<Option<_>>()
                    .ok_or_else(|| Error::WrongType("paths".into()))?,
                Some(_) => return Err(Error::WrongType("paths".into())),
            };
            let mut calls: Vec<Call> = dirs
                .into_iter()
                .map(|d| Call::Tool {
                    tool: "list_dir".into(),
                    args: json!({ "path": d }),
                })
                .collect();
            match calls.len() {
                1 => Mapped::Call {
                    call: calls.remove(0),
                },
                // An empty list searches the cwd.
                0 => tool("list_dir", json!({ "path": abs(".") })),
                _ => Mapped::Call {
                    call: Call::All(calls),
                },
            }
        }
        "web_fetch" | "web_search" => Mapped::Network(input.tool_name.clone()),
        other => Mapped::Unmapped(other.to_string()),
    };
    Ok(Input {
        cwd,
        tool_name: input.tool_name.clone(),
        tool_input: ti,
        mapped,
    })
}

/// [`Told`] in Copilot CLI's words.
pub fn render(told: Told) -> Reply {
    Reply::json(json!(PreToolUseOutput {
        permission_decision: match told.verb {
            Verb::Allow => PermissionDecision::Allow,
            Verb::Ask | Verb::Deny => PermissionDecision::Deny,
        },
        permission_decision_reason: told.reason.unwrap_or_default(),
        modified_args: told.args,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, args: Value) -> Value {
        json!({ "sessionId": "s", "timestamp": 1, "cwd": "/p", "toolName": tool, "toolArgs": args })
    }

    #[test]
    fn tool_args_as_a_json_string_is_read() {
        let i = parse(input("bash", json!("{\"command\":\"ls\"}"))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Shell { ref line, .. } } if line == "ls")
        );
    }

    #[test]
    fn tools_map() {
        let i = parse(input("view", json!({ "path": "a/./b" }))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Tool { ref tool, ref args } } if tool == "read_file" && args["path"] == "/p/a/b")
        );
        let i = parse(input(
            "grep",
            json!({ "pattern": "x", "paths": ["/a", "b"] }),
        ))
        .unwrap();
        assert!(matches!(i.mapped, Mapped::Call { call: Call::All(ref c) } if c.len() == 2));
        let i = parse(input("glob", json!({ "pattern": "*" }))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Tool { ref args, .. } } if args["path"] == "/p")
        );
        let i = parse(input("edit", json!({ "path": "/f" }))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Tool { ref tool, .. } } if tool == "write_file")
        );
        assert!(matches!(
            parse(input("web_fetch", json!({ "url": "x" })))
                .unwrap()
                .mapped,
            Mapped::Network(_)
        ));
        assert!(matches!(
            parse(input("read_bash", json!({}))).unwrap().mapped,
            Mapped::Unmapped(_)
        ));
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(parse(input("bash", json!({ "command": 1 }))).is_err());
        assert!(parse(input("bash", json!(3))).is_err());
        assert!(parse(json!({ "cwd": "rel", "toolName": "bash", "toolArgs": {} })).is_err());
        let mut post = input("bash", json!({ "command": "ls" }));
        post["toolResult"] = json!({});
        assert!(parse(post).is_err());
    }

    #[test]
    fn allow_keeps_every_other_argument() {
        let i = parse(input(
            "bash",
            json!({ "command": "ls", "description": "d" }),
        ))
        .unwrap();
        let r = render(
            crate::hook::decide::told(
                crate::hook::Host::Copilot,
                &i,
                &crate::hook::Answer::Allow {
                    reason: "r".into(),
                    command: Some("cordon exec -c'ls'".into()),
                },
            )
            .unwrap(),
        );
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["permissionDecision"], "allow");
        assert_eq!(v["modifiedArgs"]["command"], "cordon exec -c'ls'");
        assert_eq!(v["modifiedArgs"]["description"], "d");
        let r = render(
            crate::hook::decide::told(
                crate::hook::Host::Copilot,
                &i,
                &crate::hook::Answer::Deny {
                    reason: "no".into(),
                },
            )
            .unwrap(),
        );
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["permissionDecision"], "deny");
        assert_eq!(v["permissionDecisionReason"], "cordon: denied: no");
        assert!(v.get("modifiedArgs").is_none());
    }
}
