//! The file's shape, exactly as serde reads it. Every table denies unknown keys so that a typo
//! (`rule` for `rules`, `netwrok`) is an error instead of a silently ignored protection.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_spanned::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub version: Option<Spanned<i64>>,
    #[serde(default)]
    pub sandbox: RawSandbox,
    #[serde(default)]
    pub shell: RawShell,
    #[serde(default)]
    pub tools: BTreeMap<String, Spanned<RawTool>>,
    #[serde(default)]
    pub approval: RawApproval,
    pub network: Option<Spanned<RawNetwork>>,
    #[serde(default)]
    pub credentials: BTreeMap<String, Spanned<crate::credentials::RawCredential>>,
    pub mcp: Option<Spanned<RawMcp>>,
}

/// `[mcp]`: the wrapped MCP servers' tool calls.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    pub default: Option<Spanned<String>>,
    #[serde(default)]
    pub rules: Vec<Spanned<RawMcpRule>>,
}

/// `[[mcp.rules]]`: a `SERVER/TOOL` glob, argument patterns, an action, an optional reason.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcpRule {
    pub pattern: Spanned<String>,
    /// `args = { NAME = "GLOB", … }`: top-level arguments the call's must match.
    pub args: Option<Spanned<BTreeMap<String, String>>>,
    pub action: Spanned<String>,
    pub reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub default: Option<Spanned<String>>,
    #[serde(default)]
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub deny: Vec<Spanned<String>>,
    #[serde(default)]
    pub hosts: BTreeMap<String, Spanned<String>>,
    pub upstream_ca: Option<Spanned<String>>,
    #[serde(default)]
    pub requests: Vec<Spanned<crate::requests::RawRequestRule>>,
    #[serde(default)]
    pub forward: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSandbox {
    pub backend: Option<Spanned<String>>,
    pub require_os_sandbox: Option<Spanned<bool>>,
    pub network: Option<Spanned<String>>,
    pub system_read: Option<bool>,
    #[serde(default)]
    pub extra_read: Vec<Spanned<String>>,
    #[serde(default)]
    pub protected: Vec<Spanned<String>>,
    pub git: Option<Spanned<String>>,
    #[serde(default)]
    pub env: Vec<Spanned<String>>,
    #[serde(default)]
    pub paths: BTreeMap<String, Spanned<RawPath>>,
    #[serde(default)]
    pub limits: RawLimits,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPath {
    pub root: Spanned<String>,
    pub mode: Option<Spanned<String>>,
    pub exec: Option<bool>,
    #[serde(default)]
    pub suffixes: Vec<Spanned<String>>,
    pub read_approval: Option<bool>,
    pub write_approval: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub timeout: Option<Spanned<String>>,
    pub memory: Option<Spanned<String>>,
    pub file_size: Option<Spanned<String>>,
    pub open_files: Option<Spanned<i64>>,
    pub processes: Option<Spanned<i64>>,
    pub cpu_time: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawShell {
    pub default: Option<Spanned<String>>,
    #[serde(default)]
    pub rules: Vec<Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub pattern: Spanned<String>,
    pub action: Spanned<String>,
    pub reason: Option<String>,
    #[serde(default)]
    pub exact: bool,
    #[serde(default, rename = "match")]
    pub matches: Vec<Spanned<String>>,
    #[serde(default)]
    pub not_match: Vec<Spanned<String>>,
}

/// A rules file (`cordon.rules.toml`): remembered rules only.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRulesFile {
    pub version: Option<Spanned<i64>>,
    #[serde(default)]
    pub shell: RawRulesOnly<RawRule>,
    #[serde(default)]
    pub network: RawRulesOnly<RawNetworkRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRulesOnly<R> {
    #[serde(default = "Vec::new")]
    pub rules: Vec<Spanned<R>>,
}

impl<R> Default for RawRulesOnly<R> {
    fn default() -> Self {
        RawRulesOnly { rules: Vec::new() }
    }
}

/// `[[network.rules]]` in a rules file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetworkRule {
    pub host: Spanned<String>,
    pub action: Spanned<String>,
    pub reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    pub approval: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawApproval {
    pub mode: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub doom_loop: Option<Spanned<i64>>,
    pub audit_log: Option<Spanned<String>>,
}
