//! Codex's `PreToolUse` hook, as data.
//!
//! Follows codex-rs `hooks/src/schema.rs` and `hooks/src/engine/output_parser.rs` (Codex
//! 0.155–0.171, 2026; 0.171 driven for real in `hosts_codex.rs`): the input has `session_id`,
//! `turn_id`, `transcript_path` (string or null), `cwd`, `hook_event_name` = `"PreToolUse"`,
//! `model`, `permission_mode`, `tool_name`, `tool_input`, `tool_use_id` (and
//! `agent_id`/`agent_type` for subagents). The shell tool is `tool_name` = `"Bash"` with
//! `tool_input` = { `command` } (unified exec is presented the same way: `exec_command`'s
//! `workdir` is the input's `cwd`, its `tty` is not shown, and `write_stdin` runs no hook);
//! `apply_patch` carries the patch text in `command`.
//!
//! The answer: `hookSpecificOutput` { `hookEventName`, `permissionDecision`,
//! `permissionDecisionReason`, `updatedInput` } with unknown fields refused by Codex. A deny
//! needs a non-empty reason; `ask` and an `allow` without `updatedInput` are rejected as a
//! failed hook, after which Codex runs the tool. So: an allowed shell command is an `allow`
//! with `updatedInput`; an allowed `apply_patch` is the empty object `{}`; an ask is a deny
//! whose reason says how a person approves. Exit 2 blocks only with a reason on stderr.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::decide::{Call, Told, Verb};
use super::{host_path, object, string, Error, Input, Mapped, Reply};

/// The hook's stdin. Unknown fields are accepted.
// Every documented field is declared, used or not: the type is the protocol.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
pub struct PreToolUseCommandInput {
    pub hook_event_name: String,
    pub cwd: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub turn_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `permissionDecision` as cordon sends it (never `ask`: Codex rejects it).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    Allow,
    Deny,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: &'static str,
    pub permission_decision: PermissionDecision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Map<String, Value>>,
}

/// The hook's stdout (`{}` when it has nothing to say).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseCommandOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
}

/// The files an `apply_patch` patch touches, as cordon's file calls: `*** Add File: P`
/// writes, `*** Update File: P` edits (decided as a write), `*** Delete File: P` deletes,
/// `*** Move to: P` writes P. A patch naming no file is malformed.
///
/// Read at least as leniently as each host that applies this format reads it, every reading
/// decided (one call more to decide, never one less):
/// - Codex (codex-rs `apply-patch/src/parser.rs`) trims a header line with Rust's
///   `str::trim` before matching its marker (` *** Add File: /x` adds `/x`) and keeps the
///   rest after `MARKER ` as the path;
/// - opencode (its `apply_patch`/`patch` tools, this format parsed in TypeScript) takes the
///   rest after `MARKER:` trimmed by JavaScript's `String.prototype.trim`, which also drops
///   U+FEFF (`*** Add File:\u{feff}/x` adds `/x`), a character Rust keeps;
/// - Codex's newer releases resolve `~` and `~/P` from the home (`codex-utils-absolute-path`),
///   0.171 as names in the cwd: both are decided ([`home_reading`]).
///
/// So every line that could be a header under any reading is taken — trimmed either way,
/// markers in any case, any space after the colon. A line a host reads as content (an added
/// or context line) may thus name a file too.
pub fn patch_calls(patch: &str, cwd: &std::path::Path) -> Result<Call, Error> {
    const MARKERS: [(&str, &str); 4] = [
        ("*** add file:", "write_file"),
        ("*** update file:", "write_file"),
        ("*** move to:", "write_file"),
        ("*** delete file:", "delete_file"),
    ];
    /// JavaScript's `trim` (White_Space and U+FEFF), a superset of Rust's.
    fn js_trim(s: &str) -> &str {
        s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
    }
    /// The rest of `line` after `marker` (any case), if it starts with it.
    fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
        let head = line.get(..marker.len())?;
        head.eq_ignore_ascii_case(marker)
            .then(|| &line[marker.len()..])
    }
    let mut calls = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    // Codex splits with `str::lines` after trimming the whole text, opencode on `\n`; a lone
    // CR is a line end to neither, but a header behind one is taken too (more, never fewer).
    for raw in patch.split(['\n', '\r']) {
        for (marker, tool) in MARKERS {
            // Trimmed as JavaScript trims: the line starts where Rust's trim would start it
            // too, or earlier (a leading U+FEFF), so no header is missed.
            let Some(loose) = after(js_trim(raw), marker) else {
                continue;
            };
            let mut paths = vec![js_trim(loose), loose.trim()];
            // Codex's path: what follows "MARKER " in the line trimmed by Rust.
            if let Some(rest) = after(raw.trim(), marker) {
                paths.push(rest.strip_prefix(' ').unwrap_or(rest));
                paths.push(rest.trim());
            }
            for path in paths {
                if path.is_empty() {
                    continue;
                }
                let home = home_reading(path)?;
                for path in std::iter::once(host_path(cwd, path)).chain(home) {
                    let path = path.to_string_lossy().into_owned();
                    if !seen.insert((tool, path.clone())) {
                        continue;
                    }
                    let args = if tool == "delete_file" {
                        json!({ "path": path })
                    } else {
                        json!({ "path": path, "content": "" })
                    };
                    calls.push(Call::Tool {
                        tool: tool.into(),
                        args,
                    });
                }
            }
        }
    }
    if calls.is_empty() {
        return Err(Error::NoPatchFile);
    }
    Ok(Call::All(calls))
}

/// `~` or `~/P` (any number of slashes) as the home's path, as Codex's newer releases resolve
/// a patch path: from `HOME`, which the hook inherits from the host. With no HOME to take it
/// from, cordon cannot know the file: an error, which blocks the call.
fn home_reading(path: &str) -> Result<Option<std::path::PathBuf>, Error> {
    let rest = match path.strip_prefix('~') {
        Some("") => "",
        Some(r) if r.starts_with('/') => r.trim_start_matches('/'),
        _ => return Ok(None),
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(Error::NoHome)?;
    let home = std::path::PathBuf::from(home);
    Ok(Some(if rest.is_empty() {
        home
    } else {
        home.join(rest)
    }))
}

pub fn parse(v: Value) -> Result<Input, Error> {
    object(&v, "tool_input")?;
    let input: PreToolUseCommandInput = serde_json::from_value(v).map_err(Error::Shape)?;
    if input.hook_event_name != "PreToolUse" {
        return Err(Error::event(&input.hook_event_name, "PreToolUse"));
    }
    let cwd = std::path::PathBuf::from(&input.cwd);
    if !cwd.is_absolute() {
        return Err(Error::RelativeCwd);
    }
    let ti = &input.tool_input;
    let mapped = match input.tool_name.as_str() {
        // `Bash` is the canonical name; the others are the shell tools' own names, taken too
        // rather than deferred (a command there would run unconfined).
        "Bash" | "shell" | "exec_command" | "local_shell" => Mapped::Call {
            call: Call::Shell {
                line: string(ti, "command")?.to_string(),
                cwd: cwd.clone(),
            },
        },
        "apply_patch" => Mapped::Call {
            call: patch_calls(string(ti, "command")?, &cwd)?,
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

/// [`Told`] in Codex's words: a bare allow (nothing rewritten) is the empty object.
pub fn render(told: Told) -> Reply {
    let said = match (told.verb, told.args) {
        (Verb::Allow, None) => None,
        (verb, args) => Some(HookSpecificOutput {
            hook_event_name: "PreToolUse",
            permission_decision: match verb {
                Verb::Allow => PermissionDecision::Allow,
                Verb::Ask | Verb::Deny => PermissionDecision::Deny,
            },
            permission_decision_reason: told.reason,
            updated_input: args,
        }),
    };
    Reply::json(json!(PreToolUseCommandOutput {
        hook_specific_output: said
    }))
}
