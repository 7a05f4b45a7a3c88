//! The `network` tool: a connection a sandboxed run asks cordon's proxy to make, as a call
//! the approval engine decides.
//!
//! A connection to `HOST:PORT` is a call of tool `network` with the one key
//! `["network", "HOST:PORT"]`, the host normalised ([`cordon_policy::network::Target`]: IDNA,
//! lower case, IPv6 in brackets, IPv4-mapped IPv6 as IPv4). The policy's `[network]` section
//! becomes that tool's rules and default ([`cordon_approval::network_rules`]), so the engine's
//! machinery — deny wins, ask, session grants, modes, no asking without a terminal, the audit
//! log — decides connections exactly as it decides shell commands.
//!
//! The tool itself has no opinion (its verdict is `allow` with rule `default`): every
//! decision comes from the rules, in one place. It is not in the agent's
//! [`Toolbox`](crate::tool::Toolbox) — an agent never calls it; cordon's proxy does, for the
//! program the agent ran — but its name is reserved there, so a `[tools.network]` table
//! cannot shadow it.
//!
//! ```
//! use cordon_policy::{Action, Policy};
//! use cordon_tools::network;
//! use cordon_tools::tool::Tool;
//! use serde_json::json;
//!
//! let text = "version = 1\n[network]\nallow = [\"*.example.org:443\"]\ndeny = [\"bad.example.org\"]\n[sandbox]\nnetwork = \"proxy\"\n";
//! let policy = Policy::parse(text, "cordon.toml", std::path::Path::new("/")).unwrap();
//! let rules = cordon_approval::Rules::from_policy(&policy);
//! let a = network::NetworkTool.assess(&json!({"target": "API.Example.org:443"})).unwrap();
//! assert_eq!(a.keys, ["network", "api.example.org:443"]);
//! assert_eq!(network::decide(&rules, &a.keys).action, Action::Allow);
//! let a = network::NetworkTool.assess(&json!({"target": "bad.example.org:443"})).unwrap();
//! assert_eq!(network::decide(&rules, &a.keys).action, Action::Deny);
//! assert!(network::NetworkTool.assess(&json!({"target": "0x7f.1:80"})).is_err());
//! ```

use cordon_approval::{Decision, RuleRef, Rules};
use cordon_policy::network::{Target, NETWORK_TOOL};
use cordon_policy::{Action, Policy};
use serde_json::{json, Value};

use crate::tool::{string_args, string_schema, Assessment, Presentation, Preview, Tool, ToolError};

/// The `network` tool (see the module docs).
pub struct NetworkTool;

impl NetworkTool {
    /// Parses and normalises `HOST:PORT`; what is not a host and port is an invalid argument.
    pub fn target(s: &str) -> Result<Target, ToolError> {
        Target::parse(s).map_err(|message| ToolError::InvalidArguments {
            tool: NETWORK_TOOL.into(),
            message,
        })
    }
}

impl Tool for NetworkTool {
    fn name(&self) -> &str {
        NETWORK_TOOL
    }

    fn description(&self) -> &str {
        "a connection to HOST:PORT through cordon's proxy"
    }

    fn schema(&self) -> Value {
        string_schema(
            &[(
                "target",
                "HOST:PORT, e.g. github.com:443, 10.0.0.5:5432, [::1]:8080",
            )],
            &[],
        )
    }

    fn assess(&self, args: &Value) -> Result<Assessment, ToolError> {
        let a = string_args(NETWORK_TOOL, args, &["target"], &[])?;
        let target = NetworkTool::target(a["target"])?;
        let shown = target.to_string();
        Ok(
            Assessment::new(NETWORK_TOOL, json!({ "target": shown }), target.key())
                .with_presentation(Presentation {
                    summary: format!("connect to {shown}"),
                    preview: Preview::Text {
                        text: format!("a network connection to {shown} through cordon's proxy"),
                    },
                    full: None,
                }),
        )
    }

    fn execute(&self, _: &Assessment) -> Result<Value, ToolError> {
        // The proxy connects, after the engine allowed the call; there is nothing to run here.
        Err(ToolError::NotExecutable {
            tool: NETWORK_TOOL.into(),
        })
    }
}

/// The rules' verdict on a `network` key, as the engine reaches it before anyone is asked:
/// a matching deny entry, else an allow entry, else the `[network]` default. What
/// `cordon check network HOST:PORT` prints.
pub fn decide(rules: &Rules, key: &[String]) -> Decision {
    if let Some(v) = rules.decide_key(NETWORK_TOOL, key) {
        return Decision {
            action: v.action,
            reason: v.reason,
            rule: match v.by {
                cordon_approval::By::Rule { location, pattern }
                | cordon_approval::By::PersistedGrant { location, pattern } => {
                    RuleRef::Rule { location, pattern }
                }
                cordon_approval::By::Tool(r) => r,
                _ => RuleRef::Default,
            },
        };
    }
    match rules.tool_default(NETWORK_TOOL) {
        Some((action, _, reason)) => Decision {
            action,
            reason: reason.to_string(),
            rule: RuleRef::Default,
        },
        None => Decision {
            action: Action::Deny,
            reason: "no [network] rules: no host may be reached".into(),
            rule: RuleRef::Default,
        },
    }
}

/// `cordon check network HOST:PORT` (or `target=HOST:PORT`): the call's assessment with the
/// verdict of `policy`'s rules ([`decide`]). Anything but one target is an error.
pub fn check<'a>(
    policy: &Policy,
    words: impl IntoIterator<Item = &'a String>,
) -> Result<Assessment, ToolError> {
    let words: Vec<&String> = words.into_iter().collect();
    let [word] = words.as_slice() else {
        return Err(ToolError::InvalidArguments {
            tool: NETWORK_TOOL.into(),
            message: "give one HOST:PORT, e.g. `cordon check network github.com:443`".into(),
        });
    };
    let target = word.strip_prefix("target=").unwrap_or(word);
    let mut a = NetworkTool.assess(&json!({ "target": target }))?;
    a.verdict = decide(&Rules::from_policy(policy), &a.keys);
    Ok(a)
}
