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
use cordon_fs::links::lexical;

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
    // Every file Gemini CLI could take the path for (see `readings`).
    let file = |keys: &[&str]| -> Result<Vec<String>, Error> {
        first(ti, keys)?
            .map(|p| readings(&cwd, p))
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
    // The same call for each reading of the path, decided together (the most restrictive
    // wins).
    let each = |paths: Vec<String>, args: &dyn Fn(String) -> Value, name: &str| {
        let mut calls: Vec<Call> = paths
            .into_iter()
            .map(|p| Call::Tool {
                tool: name.into(),
                args: args(p),
            })
            .collect();
        Mapped::Call {
            call: if calls.len() == 1 {
                calls.remove(0)
            } else {
                Call::All(calls)
            },
        }
    };
    let mapped = match input.tool_name.as_str() {
        "run_shell_command" => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: dir(&["dir_path", "directory"])?.into(),
            },
        },
        "read_file" => each(
            file(&["file_path", "absolute_path", "path"])?,
            &|p| json!({ "path": p }),
            "read_file",
        ),
        "write_file" => {
            let content = string(ti, "content")?;
            each(
                file(&["file_path"])?,
                &|p| json!({ "path": p, "content": content }),
                "write_file",
            )
        }
        "replace" => {
            let paths = file(&["file_path"])?;
            let once = matches!(ti.get("expected_replacements"), None | Some(Value::Null))
                || ti.get("expected_replacements") == Some(&json!(1));
            let old = string(ti, "old_string")?;
            if once && !old.is_empty() && paths.len() == 1 {
                let new = string(ti, "new_string")?;
                each(
                    paths,
                    &|p| json!({ "path": p, "old": old, "new": new }),
                    "edit_file",
                )
            } else {
                each(
                    paths,
                    &|p| json!({ "path": p, "content": "" }),
                    "write_file",
                )
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

/// The files Gemini CLI's file tools may take `p` for (0.61: `resolveDefensiveToolPath`, then
/// `resolveToRealPath`): the path as written and without a leading `@` (`@.envrc` is `.envrc`
/// where no `@.envrc` exists; `@/x` is `x`), each resolved from `cwd`, as it is and
/// percent-decoded whole (`decodeURIComponent`: `%2eenvrc` is `.envrc`,
/// `.git%2Fhooks%2Fx` a git hook), each with its `..` kept (for the file tools to take where
/// the kernel takes it) and taken lexically, as Node's `path.resolve` does. More readings than
/// Gemini CLI's one, never fewer: each is decided and the most restrictive answer wins. (NUL
/// bytes, which Gemini CLI drops, stay: a path holding one is refused.)
fn readings(cwd: &std::path::Path, p: &str) -> Vec<String> {
    let mut written = vec![p.to_string()];
    if let Some(rest) = p.strip_prefix('@').filter(|r| !r.is_empty()) {
        let rest = rest.trim_start_matches(['/', '\\']);
        if !rest.is_empty() {
            written.push(rest.to_string());
        }
    }
    let mut out: Vec<String> = Vec::new();
    for w in written {
        let joined = cwd.join(&w).to_string_lossy().into_owned();
        let decoded = decode_uri_component(&joined).filter(|d| *d != joined);
        for a in std::iter::once(joined).chain(decoded) {
            let kept = host_path(cwd, &a);
            let lexical = lexical(&kept);
            for r in [kept, lexical] {
                let r = r.to_string_lossy().into_owned();
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
    }
    out
}

/// JavaScript's `decodeURIComponent`: every `%XX` decoded; `None` where it throws (a `%`
/// without two hex digits, bytes that are not UTF-8).
fn decode_uri_component(s: &str) -> Option<String> {
    if !s.contains('%') {
        return None;
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_read_every_way_gemini_cli_may_read_it() {
        let cwd = std::path::Path::new("/p");
        let r = |p: &str| readings(cwd, p);
        assert_eq!(r("a.txt"), ["/p/a.txt"]);
        assert!(r("%2eenvrc").contains(&"/p/.envrc".to_string()));
        assert!(r("@.envrc").contains(&"/p/.envrc".to_string()));
        assert!(r("@//.envrc").contains(&"/p/.envrc".to_string()));
        assert!(r("@%2eenvrc").contains(&"/p/.envrc".to_string()));
        // Decoded whole, then `..` taken by name as Node does, and kept for the kernel's reading.
        let up = r("x/%2e%2e%2F..%2Fetc/passwd");
        assert!(up.contains(&"/etc/passwd".to_string()), "{up:?}");
        assert!(up.contains(&"/p/x/../../etc/passwd".to_string()), "{up:?}");
        // Where decodeURIComponent throws, the path is taken as written.
        assert_eq!(r("%zz"), ["/p/%zz"]);
        assert_eq!(r("%e9"), ["/p/%e9"]);
        assert_eq!(r("%+1"), ["/p/%+1"]);
        assert_eq!(decode_uri_component("a%20b%C3%A9"), Some("a bé".into()));
    }
}
