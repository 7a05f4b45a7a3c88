//! The `network` tool: a connection a sandboxed run asks cordon's proxy to make, as a call
//! the approval engine decides.
//!
//! A connection to `HOST:PORT` is a call of tool `network` with the one key
//! `["network", "HOST:PORT"]`, the host normalised ([`cordon_policy::network::Target`]: IDNA,
//! lower case, IPv6 in brackets, IPv4-mapped IPv6 as IPv4). The policy's `[network]` section
//! becomes that tool's rules and default (`cordon_approval::network_rules`), so the engine's
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
//! // The tool reads the call; the approval engine (here as the gate drives it) decides it.
//! let engine = cordon_approval::Engine::new(&policy);
//! let decide = |target: &str| {
//!     let a = network::NetworkTool.assess(&json!({ "target": target })).unwrap();
//!     let key = cordon_approval::Key::new(a.keys.clone());
//!     (a.keys, engine.explain(&cordon_approval::Request::new("1", "network", vec![key])).action())
//! };
//! let (keys, action) = decide("API.Example.org:443");
//! assert_eq!(keys, ["network", "api.example.org:443"]);
//! assert_eq!(action, Action::Allow);
//! assert_eq!(decide("bad.example.org:443").1, Action::Deny);
//! assert!(network::NetworkTool.assess(&json!({"target": "0x7f.1:80"})).is_err());
//! ```

use cordon_policy::network::{Target, NETWORK_TOOL};
use serde_json::{json, Value};

use crate::tool::{string_args, string_schema, Assessment, Presentation, Preview, Tool, ToolError};

/// The `network` tool (see the module docs).
pub struct NetworkTool;

impl NetworkTool {
    /// Parses and normalises `HOST:PORT`; what is not a host and port is an invalid argument.
    pub fn target(s: &str) -> Result<Target, ToolError> {
        Target::parse(s).map_err(|message| ToolError::InvalidArguments {
            tool: NETWORK_TOOL.into(),
            message: message.to_string(),
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

/// `cordon check network HOST:PORT` (or `target=HOST:PORT`): the call's reading (the engine
/// decides it, with the same rules as a running command's connection). Anything but one target
/// is an error.
pub fn check<'a>(words: impl IntoIterator<Item = &'a String>) -> Result<Assessment, ToolError> {
    let words: Vec<&String> = words.into_iter().collect();
    let [word] = words.as_slice() else {
        return Err(ToolError::InvalidArguments {
            tool: NETWORK_TOOL.into(),
            message: "give one HOST:PORT, e.g. `cordon check network github.com:443`".into(),
        });
    };
    let target = word.strip_prefix("target=").unwrap_or(word);
    NetworkTool.assess(&json!({ "target": target }))
}
