//! opencode's `tool.execute.before`, through a plugin of cordon's own, as data.
//!
//! opencode (sst/opencode, `opencode-ai` on npm) has no command hooks: its pre-tool decision
//! is a plugin's `tool.execute.before(input, output)`, called with `input` = { `tool`,
//! `sessionID`, `callID` } and `output` = { `args` } before every tool runs. The plugin may
//! change `output.args` (the tool then runs with them) or throw, which fails the call: the
//! thrown message is the tool result the model reads. There is no ask from a plugin (opencode's
//! own `permission` settings ask; cordon's plugin cannot), and no timeout: opencode waits.
//!
//! `cordon install opencode` writes the plugin [`plugin_source`] (`plugin/cordon.js` in
//! opencode's config directory); for each call it runs `cordon hook opencode` with this JSON on
//! stdin: `{event: "tool.execute.before", cwd, tool, sessionID, callID, args}` (`cwd`: the
//! plugin's `directory`, the project the session runs in). The answer on stdout is the
//! plugin's contract: nothing (exit 0) defers to opencode; `{decision: "allow", reason, args}`
//! merges `args` over the tool's arguments (an allowed shell command's rewrite); `{decision:
//! "deny", reason}` throws `reason`. Anything else — cordon missing, a non-zero exit, output
//! that is not that JSON, no answer within [`PLUGIN_DEADLINE_MS`] — throws too: the call is
//! blocked, with cordon's stderr as the reason.
//!
//! Tools (opencode 1.18): `bash` (`command`, `workdir` default the project, `timeout`,
//! `description`) is the shell; `read` (`filePath`) reads; `write` (`filePath`, `content`)
//! writes; `edit` (`filePath`, `oldString`, `newString`, `replaceAll`) edits; `multiedit`
//! (`filePath`) is decided as a write; `patch`/`apply_patch` (`patchText`, the Codex patch
//! format) as writes and deletes of the files it names; `list`, `glob`, `grep` (`path`, default
//! the project) as listings; `webfetch`, `websearch` and `codesearch` reach the network. Other
//! tools (task, todowrite, skill, MCP tools) defer to opencode unless the policy has
//! `[tools.NAME]`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::decide::{Call, Told, Verb};
use super::{host_path, object, string, Error, Input, Mapped, Reply};

/// How long the plugin waits for `cordon hook opencode` before it blocks the call.
pub const PLUGIN_DEADLINE_MS: u64 = 60_000;

/// What the plugin sends. Unknown fields are accepted.
// Every field is declared, used or not: the type is the protocol.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeInput {
    pub event: String,
    pub cwd: String,
    pub tool: String,
    pub args: Map<String, Value>,
    #[serde(default, rename = "sessionID")]
    pub session_id: Option<String>,
    #[serde(default, rename = "callID")]
    pub call_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
}

/// What the plugin reads back.
#[derive(Debug, Serialize)]
pub struct BeforeOutput {
    pub decision: Decision,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Map<String, Value>>,
}

pub fn parse(v: Value) -> Result<Input, Error> {
    object(&v, "args")?;
    let input: BeforeInput = serde_json::from_value(v).map_err(Error::Shape)?;
    if input.event != "tool.execute.before" {
        return Err(Error::event(&input.event, "tool.execute.before"));
    }
    let cwd = std::path::PathBuf::from(&input.cwd);
    if !cwd.is_absolute() {
        return Err(Error::RelativeCwd);
    }
    let ti = &input.args;
    let abs = |p: &str| host_path(&cwd, p).to_string_lossy().into_owned();
    let file = |key: &str| string(ti, key).map(abs);
    // An optional path: absent or null is the project.
    let dir = |key: &str| -> Result<String, Error> {
        match ti.get(key) {
            None | Some(Value::Null) => Ok(abs(".")),
            Some(Value::String(p)) => Ok(abs(p)),
            Some(_) => Err(Error::WrongType(key.to_string())),
        }
    };
    let tool = |tool: &str, args: Value| Mapped::Call {
        call: Call::Tool {
            tool: tool.into(),
            args,
        },
    };
    let mapped = match input.tool.as_str() {
        "bash" => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: dir("workdir")?.into(),
            },
        },
        "read" => tool("read_file", json!({ "path": file("filePath")? })),
        "write" => tool(
            "write_file",
            json!({ "path": file("filePath")?, "content": string(ti, "content")? }),
        ),
        "edit" if ti.get("replaceAll") != Some(&Value::Bool(true)) => {
            let old = string(ti, "oldString")?;
            if old.is_empty() {
                // An empty oldString creates the file with newString.
                tool(
                    "write_file",
                    json!({ "path": file("filePath")?, "content": string(ti, "newString")? }),
                )
            } else {
                tool(
                    "edit_file",
                    json!({ "path": file("filePath")?, "old": old, "new": string(ti, "newString")? }),
                )
            }
        }
        "edit" | "multiedit" => tool(
            "write_file",
            json!({ "path": file("filePath")?, "content": "" }),
        ),
        "patch" | "apply_patch" => Mapped::Call {
            call: super::codex::patch_calls(string(ti, "patchText")?, &cwd)?,
        },
        "list" | "glob" | "grep" => tool("list_dir", json!({ "path": dir("path")? })),
        "webfetch" | "websearch" | "codesearch" => Mapped::Network(input.tool.clone()),
        other => Mapped::Unmapped(other.to_string()),
    };
    Ok(Input {
        cwd,
        tool_name: input.tool.clone(),
        tool_input: input.args,
        mapped,
    })
}

/// [`Told`] in the words cordon's opencode plugin reads: `args` merge over the tool's.
pub fn render(told: Told) -> Reply {
    Reply::json(json!(BeforeOutput {
        decision: match told.verb {
            Verb::Allow => Decision::Allow,
            Verb::Ask | Verb::Deny => Decision::Deny,
        },
        reason: told.reason.unwrap_or_default(),
        args: told.args,
    }))
}

/// The first line of cordon's plugin: how install, uninstall and doctor know the file.
pub const PLUGIN_MARK: &str = "// cordon: opencode plugin written by `cordon install opencode`";

/// The plugin `cordon install opencode` writes: every tool call goes to `exe hook opencode
/// [--policy P]` first. Paths are embedded as JSON strings (no shell is involved); any failure
/// of cordon, and no answer within [`PLUGIN_DEADLINE_MS`], blocks the call.
pub fn plugin_source(exe: &Path, policy: Option<&Path>) -> Result<String, Error> {
    let exe = exe.to_str().ok_or(Error::NotUtf8("the cordon binary's"))?;
    let mut args = vec!["hook".to_string(), "opencode".to_string()];
    if let Some(p) = policy {
        args.push("--policy".into());
        args.push(p.to_str().ok_or(Error::NotUtf8("the policy's"))?.into());
    }
    let exe = Value::String(exe.into());
    let args = Value::from(args);
    Ok(format!(
        r#"{PLUGIN_MARK}
// Every tool call goes through cordon's policy first (docs/hooks.md): an allowed shell command
// is rewritten to run under `cordon exec`; a denial fails the call with cordon's reason. If
// cordon fails, is missing, or does not answer in time, the call is blocked. Edit with
// `cordon install opencode` / `cordon uninstall opencode`, not by hand.
import {{ spawn }} from "node:child_process";

const CORDON = {exe};
const ARGS = {args};
const DEADLINE_MS = {PLUGIN_DEADLINE_MS};
const BLOCKED = "cordon: the cordon hook failed (see above); the call is blocked";

function ask(request) {{
  return new Promise((resolve) => {{
    let child;
    try {{
      child = spawn(CORDON, ARGS, {{ stdio: ["pipe", "pipe", "pipe"] }});
    }} catch (e) {{
      resolve({{ error: String(e) }});
      return;
    }}
    const out = [];
    const err = [];
    const timer = setTimeout(() => {{
      child.kill("SIGKILL");
      resolve({{ error: `cordon did not answer within ${{DEADLINE_MS}} ms` }});
    }}, DEADLINE_MS);
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    child.on("error", (e) => {{
      clearTimeout(timer);
      resolve({{ error: String(e) }});
    }});
    child.on("close", (code, signal) => {{
      clearTimeout(timer);
      resolve({{
        code,
        signal,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      }});
    }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(request);
  }});
}}

export const Cordon = async ({{ directory }}) => ({{
  "tool.execute.before": async (input, output) => {{
    const r = await ask(
      JSON.stringify({{
        event: "tool.execute.before",
        cwd: directory,
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: output.args,
      }}),
    );
    if (r.error !== undefined || r.code !== 0) {{
      throw new Error(`${{(r.stderr || r.error || `cordon exited with ${{r.code ?? r.signal}}`).trim()}}\n${{BLOCKED}}`);
    }}
    if (r.stdout.trim() === "") return;
    let reply;
    try {{
      reply = JSON.parse(r.stdout);
    }} catch {{
      throw new Error(`${{BLOCKED}} (its answer is not JSON)`);
    }}
    if (reply.decision === "allow") {{
      if (reply.args) Object.assign(output.args, reply.args);
      return;
    }}
    throw new Error(reply.reason || BLOCKED);
  }},
}});
"#
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tool: &str, args: Value) -> Value {
        json!({ "event": "tool.execute.before", "cwd": "/p", "tool": tool, "sessionID": "s",
            "callID": "c", "args": args })
    }

    #[test]
    fn tools_map() {
        let i = parse(input("bash", json!({ "command": "ls", "workdir": "sub" }))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Shell { ref line, ref cwd } } if line == "ls" && cwd == Path::new("/p/sub"))
        );
        let i = parse(input(
            "edit",
            json!({ "filePath": "f", "oldString": "", "newString": "n" }),
        ))
        .unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Tool { ref tool, ref args } } if tool == "write_file" && args["content"] == "n")
        );
        let i = parse(input(
            "apply_patch",
            json!({ "patchText": "*** Begin Patch\n*** Delete File: x\n*** End Patch" }),
        ))
        .unwrap();
        assert!(matches!(i.mapped, Mapped::Call { call: Call::All(_) }));
        let i = parse(input("grep", json!({ "pattern": "x" }))).unwrap();
        assert!(
            matches!(i.mapped, Mapped::Call { call: Call::Tool { ref args, .. } } if args["path"] == "/p")
        );
        assert!(matches!(
            parse(input("webfetch", json!({ "url": "u" })))
                .unwrap()
                .mapped,
            Mapped::Network(_)
        ));
        assert!(matches!(
            parse(input("todowrite", json!({}))).unwrap().mapped,
            Mapped::Unmapped(_)
        ));
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(parse(input("bash", json!({ "command": ["ls"] }))).is_err());
        let mut other = input("bash", json!({ "command": "ls" }));
        other["event"] = json!("tool.execute.after");
        assert!(parse(other).is_err());
        assert!(
            parse(json!({ "event": "tool.execute.before", "cwd": "/p", "tool": "bash" })).is_err()
        );
    }

    #[test]
    fn the_plugin_embeds_paths_as_json() {
        let s = plugin_source(Path::new("/o'p\"t/cordon"), Some(Path::new("/p/c.toml"))).unwrap();
        assert!(s.starts_with(PLUGIN_MARK));
        assert!(s.contains(r#"const CORDON = "/o'p\"t/cordon";"#), "{s}");
        assert!(
            s.contains(r#"const ARGS = ["hook","opencode","--policy","/p/c.toml"];"#),
            "{s}"
        );
    }
}
