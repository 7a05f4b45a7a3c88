//! Claude Code's `PreToolUse` hook, as data.
//!
//! Follows the Claude Code hooks reference (code.claude.com/docs/en/hooks, 2026): the input is
//! one JSON object with `session_id`, `transcript_path`, `cwd`, `permission_mode`,
//! `hook_event_name` = `"PreToolUse"`, `tool_name`, `tool_input`, `tool_use_id`; the answer is
//! exit 0 with `hookSpecificOutput` { `hookEventName`, `permissionDecision` (allow | deny |
//! ask), `permissionDecisionReason`, `updatedInput` }, or exit 2 with the reason on stderr.
//! `updatedInput` replaces the tool's input; with `ask` the user is shown the new input.
//!
//! Tools: `Bash` (`command`) is the shell; `Read` (`file_path`) reads; `Write` (`file_path`,
//! `content`) writes; `Edit` (`file_path`, `old_string`, `new_string`, `replace_all`) edits;
//! `MultiEdit` (`file_path`) and `NotebookEdit` (`notebook_path`) are decided as writes of the
//! file; `Glob` and `Grep` (`path`, default the cwd) as listings. `WebFetch` and `WebSearch`
//! reach the network: denied under `sandbox.network = "deny"`. `Monitor` (`command`, run in a
//! shell like Bash's, or `ws`, a WebSocket) is a shell call, or reaches the network. Any other
//! tool (Agent, REPL, Workflow, MCP tools) defers to Claude Code unless the policy has
//! `[tools.NAME]`: what a subagent, the REPL's `sh`/`put` or a workflow's agents do comes to
//! the hook as its own Bash, Write… call (checked with the real Claude Code 2.1.197, round 8
//! of issue 21).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::decide::{Call, Told, Verb};
use super::{host_path, object, string, Error, Input, Mapped, Reply};

/// The hook's stdin. Unknown fields are accepted (newer versions add some).
// Every documented field is declared, used or not: the type is the protocol.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
pub struct PreToolUseInput {
    pub hook_event_name: String,
    pub cwd: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `permissionDecision`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    Allow,
    Deny,
    Ask,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: &'static str,
    pub permission_decision: PermissionDecision,
    pub permission_decision_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Map<String, Value>>,
}

/// The hook's stdout.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseOutput {
    pub hook_specific_output: HookSpecificOutput,
}

pub fn parse(v: Value) -> Result<Input, Error> {
    object(&v, "tool_input")?;
    let input: PreToolUseInput = serde_json::from_value(v).map_err(Error::Shape)?;
    if input.hook_event_name != "PreToolUse" {
        return Err(Error::event(&input.hook_event_name, "PreToolUse"));
    }
    let cwd = std::path::PathBuf::from(&input.cwd);
    if !cwd.is_absolute() {
        return Err(Error::RelativeCwd);
    }
    let ti = &input.tool_input;
    let file =
        |key: &str| string(ti, key).map(|p| host_path(&cwd, p).to_string_lossy().into_owned());
    let tool = |tool: &str, args: Value| Mapped::Call {
        call: Call::Tool {
            tool: tool.into(),
            args,
        },
    };
    let listing = |key: &str| -> Result<Mapped, Error> {
        let dir = match ti.get(key) {
            None | Some(Value::Null) => cwd.to_string_lossy().into_owned(),
            Some(_) => file(key)?,
        };
        Ok(tool("list_dir", json!({ "path": dir })))
    };
    let mapped = match input.tool_name.as_str() {
        "Bash" => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: cwd.clone(),
            },
        },
        // Monitor (behind a feature flag in 2.1.197) runs `command` in a shell, as Bash does,
        // streaming its lines; without one it opens the WebSocket `ws`.
        "Monitor" if ti.get("command").is_some() => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: cwd.clone(),
            },
        },
        "Monitor" => Mapped::Network(input.tool_name.clone()),
        "Read" => tool("read_file", json!({ "path": file("file_path")? })),
        "Write" => tool(
            "write_file",
            json!({ "path": file("file_path")?, "content": string(ti, "content")? }),
        ),
        "Edit" if ti.get("replace_all") != Some(&Value::Bool(true)) => tool(
            "edit_file",
            json!({
                "path": file("file_path")?,
                "old": string(ti, "old_string")?,
                "new": string(ti, "new_string")?,
            }),
        ),
        "Edit" | "MultiEdit" => tool(
            "write_file",
            json!({ "path": file("file_path")?, "content": "" }),
        ),
        "NotebookEdit" => tool(
            "write_file",
            json!({ "path": file("notebook_path")?, "content": "" }),
        ),
        "Glob" | "Grep" => listing("path")?,
        "WebFetch" | "WebSearch" => Mapped::Network(input.tool_name.clone()),
        // Claude Code checks the repository's HEAD out into `.claude/worktrees/NAME` itself:
        // any file of a commit a sandboxed run may have made, the persistence surface's too
        // (a `.claude/settings.json` whose hooks the next session there runs).
        "EnterWorktree" => Mapped::Unreadable {
            name: input.tool_name.clone(),
            why: "checks out the repository's HEAD into .claude/worktrees outside any sandbox: every file of a commit the agent may have made, the persistence surface's too",
        },
        other => Mapped::Unmapped(other.to_string()),
    };
    Ok(Input {
        cwd,
        tool_name: input.tool_name.clone(),
        tool_input: input.tool_input,
        mapped,
    })
}

/// [`Told`] in Claude Code's words.
pub fn render(told: Told) -> Reply {
    Reply::json(json!(PreToolUseOutput {
        hook_specific_output: HookSpecificOutput {
            hook_event_name: "PreToolUse",
            permission_decision: match told.verb {
                Verb::Allow => PermissionDecision::Allow,
                Verb::Ask => PermissionDecision::Ask,
                Verb::Deny => PermissionDecision::Deny,
            },
            permission_decision_reason: told.reason.unwrap_or_default(),
            updated_input: told.args,
        },
    }))
}
