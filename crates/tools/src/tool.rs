//! The tool interface: what every tool an agent calls looks like to cordon.
//!
//! A tool has a name and a JSON schema for its arguments. A call goes through two steps:
//!
//! 1. [`Tool::assess`] validates the arguments and says what the call *means* — without
//!    touching anything: the operation keys it touches (for approval), the facts the approval
//!    engine decides from, and a [`Presentation`] for the person who approves it (a diff for an
//!    edit, the content of a new file, …). Arguments a tool cannot accept are an error
//!    ([`ToolError::InvalidArguments`]); a call the tool must refuse whatever the rules say (a
//!    path outside every root, a write to a read-only root, cordon's own files) is an
//!    assessment with a `deny` concern ([`Assessment::refusal`]), with the reason.
//! 2. [`Tool::execute`] carries out an assessed call once approval said yes. It never
//!    trusts the assessment blindly: a tool re-validates, refuses what is now refused, and
//!    refuses when what it previewed changed in between (see [`Assessment::precondition`]).
//!
//! ## Facts, not verdicts
//!
//! A tool hands the engine facts and decides nothing else: its keys, its concerns (a refusal
//! is a `deny` concern, final in the engine), and for a file tool the root that holds the path
//! and a persistence-surface hit ([`FileAccess`]). The approval engine
//! (`cordon_approval::Engine::explain`) decides from them with the rules, the tool's default,
//! session grants, the doom loop and the mode — for the file tools the root's `read_approval`
//! / `write_approval` (else its mode's allow) is the default of a key no rule matches, and a
//! surface write asks at least; for a `[tools.NAME]` tool the configured `approval` is the
//! default ([`ConfiguredTool`] hands no verdict).
//!
//! An embedding program that implements a `[tools.NAME]` tool in Rust attaches its code with
//! [`ConfiguredTool::with_executor`]. [`Toolbox`] refuses a name that is both registered in
//! code and declared in the policy, and `[tools.NAME]` tables that name a built-in tool, so
//! there is never a precedence question between two sources.

use std::collections::BTreeMap;

use cordon_policy::verdict::{Decision, RuleRef};
use cordon_policy::{Action, Policy, ToolConfig};
use serde_json::{json, Value};

use crate::assess::{Concern, Level};
pub use cordon_policy::verdict::FileAccess;

/// Bytes of content shown inline in a [`Preview::Content`]; the rest is counted.
pub const PREVIEW_BYTES: usize = 4096;

/// A tool an agent can call.
pub trait Tool: Send + Sync {
    /// The name the agent calls it by.
    fn name(&self) -> &str;

    /// One line saying what it does.
    fn description(&self) -> &str {
        ""
    }

    /// JSON schema of the arguments (an object schema).
    fn schema(&self) -> Value;

    /// Validates a call and says what it means. Never changes anything.
    fn assess(&self, args: &Value) -> Result<Assessment, ToolError>;

    /// Carries out an assessed (and approved) call. The caller is responsible for approval:
    /// `execute` refuses a call the tool refuses (now or at assessment), but it does not ask
    /// anyone about an `ask`.
    fn execute(&self, assessment: &Assessment) -> Result<Value, ToolError>;
}

/// What a call means, for approval: facts the engine decides from.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// The tool's name.
    pub tool: String,
    /// The validated arguments, normalised (e.g. a file path in its `ROOT/rel` form).
    /// [`Tool::execute`] works from these.
    pub args: Value,
    /// The operation keys the call touches, e.g. `["write_file", "notes/a.txt"]`.
    pub keys: Vec<String>,
    /// For a file tool: the root that holds the path, whether the call writes, and a
    /// persistence-surface hit. `None` for a refused call and for other tools.
    pub access: Option<FileAccess>,
    /// What the tool found that the keys do not capture; a `deny` concern is a refusal
    /// ([`Assessment::refusal`]): final, whatever the rules say.
    pub concerns: Vec<Concern>,
    /// What to show the person who approves the call.
    pub presentation: Presentation,
    /// What the call expects to find when it runs (e.g. the exact version of a file a diff
    /// was computed against). `None`: nothing to check.
    pub precondition: Option<Precondition>,
}

impl Assessment {
    /// An assessment of facts alone: no access, no concern, summary = tool name, no preview.
    /// The engine decides it by the rules and the tool's default.
    pub fn new(tool: impl Into<String>, args: Value, keys: Vec<String>) -> Assessment {
        let tool = tool.into();
        Assessment {
            presentation: Presentation::summary(tool.clone()),
            tool,
            args,
            keys,
            access: None,
            concerns: Vec::new(),
            precondition: None,
        }
    }

    /// Adds a concern.
    pub fn with_concern(mut self, concern: Concern) -> Assessment {
        self.concerns.push(concern);
        self
    }

    /// Sets what a file tool found about the path (see [`Assessment::access`]).
    pub fn with_access(mut self, access: FileAccess) -> Assessment {
        self.access = Some(access);
        self
    }

    /// Sets the presentation.
    pub fn with_presentation(mut self, presentation: Presentation) -> Assessment {
        self.presentation = presentation;
        self
    }

    /// The tool's refusal (its first `deny` concern) as a decision with rule `builtin:CHECK`;
    /// `None` when the tool refuses nothing.
    pub fn refusal(&self) -> Option<Decision> {
        self.concerns
            .iter()
            .find(|c| c.level == Level::Deny)
            .map(|c| Decision {
                action: Action::Deny,
                reason: c.reason.clone(),
                rule: RuleRef::Builtin(c.check),
            })
    }
}

/// An opaque record of the state an assessment saw (for files: device, inode, size and
/// change times, or "absent"). Compared, never interpreted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precondition(pub(crate) Vec<i128>);

/// The presentation types are shared with the approval layer (one definition, in the policy
/// crate below both).
pub use cordon_policy::present::{Presentation, Preview};

/// Why a tool call failed before or while running (a refusal is not an error: it is an
/// assessment with a `deny` concern, [`Assessment::refusal`]).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema (unknown, missing, wrong type).
    #[error("{tool}: {message}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The call is valid but cannot be carried out as given (no such file, `old` text not
    /// unique, a directory where a file is expected, …).
    #[error("{tool}: {message}")]
    Failed {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// `execute` was given a call the tool refuses.
    #[error("{tool}: denied: {}", decision.reason)]
    Denied {
        /// The tool.
        tool: String,
        /// The denial.
        decision: Decision,
    },
    /// What the assessment previewed changed before the call ran.
    #[error("{tool}: `{what}` changed since the call was assessed; assess it again")]
    Changed {
        /// The tool.
        tool: String,
        /// What changed (e.g. the path).
        what: String,
    },
    /// An I/O error while running.
    #[error("{tool}: {what}: {source}")]
    Io {
        /// The tool.
        tool: String,
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// No tool by that name.
    #[error("unknown tool `{name}`; known tools: {}", known.join(", "))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The tools there are.
        known: Vec<String>,
    },
    /// The tool is only assessed by cordon; the agent's host runs it.
    #[error("{tool}: cordon assesses this tool but has no code to run it")]
    NotExecutable {
        /// The tool.
        tool: String,
    },
    /// The tools cannot be set up from this configuration.
    #[error("{0}")]
    Config(String),
}

/// Reads a JSON object of string arguments: every key must be known, every `required` key
/// present, every value a string. Returns the values by name.
pub fn string_args<'a>(
    tool: &str,
    args: &'a Value,
    required: &[&str],
    optional: &[&str],
) -> Result<BTreeMap<&'a str, &'a str>, ToolError> {
    let invalid = |message: String| ToolError::InvalidArguments {
        tool: tool.to_string(),
        message,
    };
    let takes = || {
        required
            .iter()
            .map(|k| k.to_string())
            .chain(optional.iter().map(|k| format!("{k} (optional)")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(map) = args.as_object() else {
        return Err(invalid(format!(
            "arguments must be an object; {tool} takes: {}",
            takes()
        )));
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
            return Err(invalid(format!(
                "unknown argument `{k}`; {tool} takes: {}",
                takes()
            )));
        }
        let Some(s) = v.as_str() else {
            return Err(invalid(format!("argument `{k}` must be a string")));
        };
        out.insert(k.as_str(), s);
    }
    for k in required {
        if !out.contains_key(k) {
            return Err(invalid(format!(
                "missing argument `{k}`; {tool} takes: {}",
                takes()
            )));
        }
    }
    Ok(out)
}

/// A JSON object schema with string properties.
pub fn string_schema(required: &[(&str, &str)], optional: &[(&str, &str)]) -> Value {
    let props: serde_json::Map<String, Value> = required
        .iter()
        .chain(optional)
        .map(|(k, d)| (k.to_string(), json!({"type": "string", "description": d})))
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "required": required.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

type Executor = dyn Fn(&Value) -> Result<Value, ToolError> + Send + Sync;

/// A tool declared in the policy as `[tools.NAME]`. It hands no verdict: the approval engine
/// decides its calls with the configured `approval` as the tool's default (rule: the table's
/// location). It accepts any JSON object as arguments; its key is the name plus the arguments
/// as compact JSON (keys sorted).
pub struct ConfiguredTool {
    name: String,
    config: ToolConfig,
    executor: Option<Box<Executor>>,
}

impl ConfiguredTool {
    /// The tool `name` as the policy configures it.
    pub fn new(name: impl Into<String>, config: ToolConfig) -> ConfiguredTool {
        ConfiguredTool {
            name: name.into(),
            config,
            executor: None,
        }
    }

    /// Attaches the code that runs the tool.
    pub fn with_executor(
        mut self,
        run: impl Fn(&Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> ConfiguredTool {
        self.executor = Some(Box::new(run));
        self
    }
}

impl Tool for ConfiguredTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a tool declared in the policy's [tools] table"
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn assess(&self, args: &Value) -> Result<Assessment, ToolError> {
        if !args.is_object() {
            return Err(ToolError::InvalidArguments {
                tool: self.name.clone(),
                message: "arguments must be a JSON object".into(),
            });
        }
        let compact = serde_json::to_string(args).unwrap_or_default();
        let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
        Ok(
            Assessment::new(&self.name, args.clone(), vec![self.name.clone(), compact])
                .with_presentation(Presentation {
                    summary: format!("call {}", self.name),
                    preview: Preview::Text { text: pretty },
                    full: None,
                }),
        )
    }

    fn execute(&self, assessment: &Assessment) -> Result<Value, ToolError> {
        // The arguments are checked again. Approving the call is the caller's (the engine
        // decides it, the configured approval its default); a tool the policy denies is
        // refused here all the same: fail closed.
        self.assess(&assessment.args)?;
        if self.config.approval == Action::Deny {
            return Err(ToolError::Denied {
                tool: self.name.clone(),
                decision: Decision {
                    action: Action::Deny,
                    reason: format!(
                        "the policy's [tools.{}] table sets approval = \"deny\"",
                        self.name
                    ),
                    rule: RuleRef::Rule {
                        location: self.config.location.clone(),
                        pattern: format!("[tools.{}]", self.name),
                    },
                },
            });
        }
        match &self.executor {
            Some(run) => run(&assessment.args),
            None => Err(ToolError::NotExecutable {
                tool: self.name.clone(),
            }),
        }
    }
}

/// The tools of one policy, by name: the file tools over its roots and every `[tools.NAME]`,
/// plus whatever the embedding program registers.
pub struct Toolbox {
    tools: BTreeMap<String, Box<dyn Tool>>,
    configured: BTreeMap<String, ToolConfig>,
}

/// Names the policy's `[tools]` table may not use: they are built in (`network` is the
/// proxy's connections, decided by the `[network]` section; `mcp` the wrapped MCP servers'
/// tool calls, decided by the `[mcp]` section).
pub const BUILTIN_TOOLS: &[&str] = &[
    "shell",
    "network",
    "mcp",
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "delete_file",
];

impl Toolbox {
    /// The file tools over `policy`'s roots and a [`ConfiguredTool`] for every
    /// `[tools.NAME]`. A `[tools.NAME]` that names a built-in tool is an error.
    pub fn from_policy(policy: &Policy) -> Result<Toolbox, ToolError> {
        let mut tools: BTreeMap<String, Box<dyn Tool>> = BTreeMap::new();
        for (name, config) in &policy.tools {
            if BUILTIN_TOOLS.contains(&name.as_str()) {
                return Err(ToolError::Config(format!(
                    "{}: [tools.{name}] configures a built-in tool; its approval comes from the \
                     policy's sandbox.paths (file tools) or shell rules, so remove the table",
                    config.location
                )));
            }
            tools.insert(
                name.clone(),
                Box::new(ConfiguredTool::new(name.clone(), config.clone())),
            );
        }
        for tool in crate::files::file_tools(policy)? {
            tools.insert(tool.name().to_string(), tool);
        }
        Ok(Toolbox {
            tools,
            configured: policy.tools.clone(),
        })
    }

    /// Adds a tool implemented in code. Its name must be new and not declared in the
    /// policy's `[tools]` (attach code to a declared tool with
    /// [`ConfiguredTool::with_executor`] and [`Toolbox::replace_configured`]).
    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), ToolError> {
        let name = tool.name().to_string();
        if let Some(c) = self.configured.get(&name) {
            return Err(ToolError::Config(format!(
                "tool `{name}` is declared in the policy ({}) and registered in code; a tool's \
                 verdict comes from one place: use ConfiguredTool::with_executor",
                c.location
            )));
        }
        if self.tools.contains_key(&name) || BUILTIN_TOOLS.contains(&name.as_str()) {
            return Err(ToolError::Config(format!("tool `{name}` already exists")));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Attaches code to a tool declared in the policy's `[tools]`.
    pub fn replace_configured(
        &mut self,
        name: &str,
        run: impl Fn(&Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Result<(), ToolError> {
        let Some(config) = self.configured.get(name) else {
            return Err(ToolError::Config(format!(
                "tool `{name}` is not declared in the policy's [tools]"
            )));
        };
        let tool = ConfiguredTool::new(name, config.clone()).with_executor(run);
        self.tools.insert(name.to_string(), Box::new(tool));
        Ok(())
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.get(name).map(|t| t.as_ref())
    }

    /// Every tool's name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Assesses a call of the tool `name`.
    pub fn assess(&self, name: &str, args: &Value) -> Result<Assessment, ToolError> {
        match self.get(name) {
            Some(t) => t.assess(args),
            None => Err(ToolError::UnknownTool {
                name: name.to_string(),
                known: self.names(),
            }),
        }
    }
}
