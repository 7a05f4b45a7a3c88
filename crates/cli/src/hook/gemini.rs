//! Gemini CLI's `BeforeTool` hook, as data.
//!
//! Follows the Gemini CLI hooks reference (google-gemini/gemini-cli `docs/hooks/reference.md`,
//! 2026): the input has `session_id`, `transcript_path`, `cwd`, `hook_event_name` =
//! `"BeforeTool"`, `timestamp`, `tool_name`, `tool_input` (and `mcp_context` for MCP tools).
//! The answer is exit 0 with `decision` (`allow` | `deny`), `reason` (required with deny) and
//! `hookSpecificOutput.tool_input`, which merges with and overrides the model's arguments;
//! exit 2 blocks with stderr as the reason; any other exit is only a warning.
//!
//! Tools (`docs/tools/`): `run_shell_command` (`command`, `directory` or `dir_path` relative
//! to the project root) runs with `bash -c`; `read_file` (`file_path`, older `absolute_path`
//! or `path`); `write_file` (`file_path`, `content`); `replace` (`file_path`, `old_string`,
//! `new_string`, `expected_replacements`); `list_directory` (`dir_path` or `path`); `glob` and
//! `search_file_content`/`grep_search` (`dir_path` or `path`, default the project root) as
//! listings; `web_fetch` and `google_web_search` reach the network (denied under
//! `sandbox.network = "deny"`). Other tools defer to Gemini CLI unless the policy has
//! `[tools.NAME]`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::decide::{Call, Told, Verb};
use super::{host_path, object, string, Error, Input, Mapped, Reply};

/// The hook's stdin. Unknown fields are accepted.
// Every documented field is declared, used or not: the type is the protocol.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
pub struct BeforeToolInput {
    pub hook_event_name: String,
    pub cwd: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub timestamp: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
}

#[derive(Debug, Serialize)]
pub struct HookSpecificOutput {
    pub tool_input: Map<String, Value>,
}

/// The hook's stdout.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeToolOutput {
    pub decision: Decision,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
}

/// The first of `keys` present in `map`, as a string.
fn first<'a>(map: &'a Map<String, Value>, keys: &[&str]) -> Result<Option<&'a str>, Error> {
    for k in keys {
        match map.get(*k) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => return Ok(Some(s)),
            Some(_) => return Err(Error::WrongType(k.to_string())),
        }
    }
    Ok(None)
}

pub fn parse(v: Value) -> Result<Input, Error> {
    object(&v, "tool_input")?;
    let input: BeforeToolInput = serde_json::from_value(v).map_err(Error::Shape)?;
    if input.hook_event_name != "BeforeTool" {
        return Err(Error::event(&input.hook_event_name, "BeforeTool"));
    }
    let cwd = std::path::PathBuf::from(&input.cwd);
    if !cwd.is_absolute() {
        return Err(Error::RelativeCwd);
    }
    let ti = &input.tool_input;
    let abs = |p: &str| host_path(&cwd, p).to_string_lossy().into_owned();
    let file = |keys: &[&str]| -> Result<String, Error> {
        first(ti, keys)?
            .map(abs)
            .ok_or_else(|| Error::Missing(keys[0].to_string()))
    };
    let dir = |keys: &[&str]| -> Result<String, Error> {
        Ok(first(ti, keys)?.map(abs).unwrap_or_else(|| abs(".")))
    };
    let tool = |tool: &str, args: Value| Mapped::Call {
        call: Call::Tool {
            tool: tool.into(),
            args,
        },
    };
    let mapped = match input.tool_name.as_str() {
        "run_shell_command" => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: dir(&["dir_path", "directory"])?.into(),
            },
        },
        "read_file" => tool(
            "read_file",
            json!({ "path": file(&["file_path", "absolute_path", "path"])? }),
        ),
        "write_file" => tool(
            "write_file",
            json!({ "path": file(&["file_path"])?, "content": string(ti, "content")? }),
        ),
        "replace" => {
            let path = file(&["file_path"])?;
            let once = matches!(ti.get("expected_replacements"), None | Some(Value::Null))
                || ti.get("expected_replacements") == Some(&json!(1));
            let old = string(ti, "old_string")?;
            if once && !old.is_empty() {
                tool(
                    "edit_file",
                    json!({ "path": path, "old": old, "new": string(ti, "new_string")? }),
                )
            } else {
                tool("write_file", json!({ "path": path, "content": "" }))
            }
        }
        "list_directory" | "glob" | "search_file_content" | "grep_search" => {
            tool("list_dir", json!({ "path": dir(&["dir_path", "path"])? }))
        }
        "web_fetch" | "google_web_search" => Mapped::Network(input.tool_name.clone()),
        other => Mapped::Unmapped(other.to_string()),
    };
    Ok(Input {
        cwd,
        tool_name: input.tool_name.clone(),
        tool_input: input.tool_input,
        mapped,
    })
}

/// [`Told`] in Gemini CLI's words: `tool_input` merges over the model's arguments.
pub fn render(told: Told) -> Reply {
    Reply::json(json!(BeforeToolOutput {
        decision: match told.verb {
            Verb::Allow => Decision::Allow,
            Verb::Ask | Verb::Deny => Decision::Deny,
        },
        reason: told.reason.unwrap_or_default(),
        hook_specific_output: told
            .args
            .map(|tool_input| HookSpecificOutput { tool_input }),
    }))
}
