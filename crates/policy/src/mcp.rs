//! The `[mcp]` section: what `cordon mcp wrap` decides for each tool call of a wrapped MCP
//! server.
//!
//! ```toml
//! [mcp]
//! default = "ask"              # allow | ask | deny: a tool no rule names
//! [[mcp.rules]]
//! pattern = "fs/write_*"       # SERVER/TOOL (the wrapper's --name, then the tool's name)
//! action = "deny"
//! reason = "the filesystem server may only read"
//! [[mcp.rules]]
//! pattern = "fs/read_*"
//! args = { path = "/etc/**" }  # and the call's `path` argument matches this glob
//! action = "deny"
//! ```
//!
//! A call is decided on one key with the shell's rule machinery: an explicit deny that
//! matches wins, else the last matching rule, else the default. A pattern is one glob token:
//! `*` and `?` never cross the `/`, so `fs/*` names every tool of the server `fs` and
//! `*/delete_*` every `delete_` tool of every server. Without a `[mcp]` section every tool
//! call is asked.
//!
//! `args` narrows a rule to calls whose top-level arguments match: each `NAME = "GLOB"` must
//! match the argument `NAME`'s value (a string as it is, any other value as its compact JSON
//! text); a call without that argument does not match. Globs are the patterns' (`*` does not
//! cross `/`, `**` does: `"/etc/**"` is everything under `/etc`), matched against the text
//! the agent sent — no path is resolved, so `/ws/../etc/x` matches `/ws/**`: an argument rule
//! sorts calls into allow/ask/deny, the sandbox's roots are what confine the server.
//!
//! How: the key is `SERVER/TOOL` followed, for each argument name some rule names (sorted,
//! the policy's [`McpPolicy::arg_names`]), by two words — the name and the call's value, or
//! `(no NAME)` and `""` when the call has no such argument. A rule with `args` compiles to
//! the token pattern `SERVER/TOOL` then, per name up to the last it names, `NAME GLOB` or
//! `** **`; a rule without `args` is `SERVER/TOOL` alone, which matches every key of its
//! tools (patterns match a prefix of the key). So the one evaluator decides both.

use crate::{Action, Location, ShellRule};

/// The tool name the approval engine decides wrapped MCP calls under.
pub const MCP_TOOL: &str = "mcp";

/// The `[mcp]` section, validated.
#[derive(Debug, Clone)]
pub struct McpPolicy {
    /// Where the `[mcp]` table is, when the policy has one.
    pub location: Option<Location>,
    /// What a tool no rule names gets.
    pub default: Action,
    /// `[[mcp.rules]]`, in order, as rules over the key [`McpPolicy::key_words`].
    pub rules: Vec<ShellRule>,
    /// The argument names the rules' `args` name, sorted: the key's words after `SERVER/TOOL`.
    pub arg_names: Vec<String>,
}

impl Default for McpPolicy {
    fn default() -> McpPolicy {
        McpPolicy {
            location: None,
            default: Action::Ask,
            rules: Vec::new(),
            arg_names: Vec::new(),
        }
    }
}

/// The key a wrapped tool call is decided on: `SERVER/TOOL`.
pub fn key(server: &str, tool: &str) -> String {
    format!("{server}/{tool}")
}

impl McpPolicy {
    /// The words a wrapped tool call is decided on: [`key`], then per name of
    /// [`McpPolicy::arg_names`] the name and the argument's text, or `(no NAME)` and `""`.
    pub fn key_words(&self, server: &str, tool: &str, args: &serde_json::Value) -> Vec<String> {
        let mut words = Vec::with_capacity(1 + 2 * self.arg_names.len());
        words.push(key(server, tool));
        for name in &self.arg_names {
            match args.get(name) {
                Some(serde_json::Value::String(s)) => {
                    words.push(name.clone());
                    words.push(s.clone());
                }
                Some(v) => {
                    words.push(name.clone());
                    words.push(v.to_string());
                }
                None => {
                    words.push(format!("(no {name})"));
                    words.push(String::new());
                }
            }
        }
        words
    }
}

/// An argument name is a word of letters, digits, `_`, `-` and `.` (it is matched as
/// written); its glob has no whitespace (a pattern token).
pub(crate) fn check_arg(name: &str, glob: &str) -> Result<(), crate::PolicyError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(crate::PolicyError::value(
            "argument glob",
            "an argument name is letters, digits, `_`, `-` and `.`",
        ));
    }
    if glob.is_empty() || glob.chars().any(char::is_whitespace) {
        return Err(crate::PolicyError::value(
            "argument glob",
            "the glob must be one word without spaces (`?` matches one character)",
        ));
    }
    Ok(())
}

/// The token pattern of a rule `pattern` with `args` (see the module docs).
pub(crate) fn rule_source(
    pattern: &str,
    arg_names: &[String],
    args: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut source = vec![pattern.to_string()];
    let last = arg_names
        .iter()
        .rposition(|n| args.contains_key(n))
        .map_or(0, |i| i + 1);
    for name in &arg_names[..last] {
        match args.get(name) {
            Some(glob) => source.extend([name.clone(), glob.clone()]),
            None => source.extend(["**".to_string(), "**".to_string()]),
        }
    }
    source.join(" ")
}
