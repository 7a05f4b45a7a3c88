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
//! ```
//!
//! A call is decided on one key, `SERVER/TOOL`, with the shell's rule machinery: an explicit
//! deny that matches wins, else the last matching rule, else the default. A pattern is one
//! glob token: `*` and `?` never cross the `/`, so `fs/*` names every tool of the server `fs`
//! and `*/delete_*` every `delete_` tool of every server. Without a `[mcp]` section every
//! tool call is asked. Arguments are not matched (a rule names a tool, not what it is given).

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
    /// `[[mcp.rules]]`, in order, as rules over the key `SERVER/TOOL`.
    pub rules: Vec<ShellRule>,
}

impl Default for McpPolicy {
    fn default() -> McpPolicy {
        McpPolicy {
            location: None,
            default: Action::Ask,
            rules: Vec::new(),
        }
    }
}

/// The key a wrapped tool call is decided on: `SERVER/TOOL`.
pub fn key(server: &str, tool: &str) -> String {
    format!("{server}/{tool}")
}
