//! The hook's decisions, through the gate: one [`Gate`] per hook call, with the host as the
//! audit log's client and nobody to ask (`can_ask = false`): an ask goes back to the host.

use std::path::{Path, PathBuf};

use cordon_approval::By;
use cordon_gate::{Command, Gate, Options};
use cordon_policy::{ApprovalMode, Policy};

/// How the engine words an ask it resolved for want of a terminal, before the rules' reason.
const NO_TERMINAL: &str = "to allow asks) (";

/// A call as cordon sees it, mapped from a host's tool call.
#[derive(Debug, Clone)]
pub enum Call {
    /// A shell line, run by bash in `cwd`.
    Shell { line: String, cwd: PathBuf },
    /// A file tool of cordon's (read_file, write_file, edit_file, list_dir, delete_file) or a
    /// `[tools.NAME]` tool, with its arguments.
    Tool {
        tool: String,
        args: serde_json::Value,
    },
    /// Several calls decided together (Codex's `apply_patch` touching several files): the
    /// most restrictive decision wins.
    All(Vec<Call>),
}

/// What the rules and the mode say, recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow {
        reason: String,
    },
    /// A person must approve: the hook hands the question to the host.
    Ask {
        reason: String,
    },
    Deny {
        reason: String,
    },
}

impl Verdict {
    fn rank(&self) -> u8 {
        match self {
            Verdict::Allow { .. } => 0,
            Verdict::Ask { .. } => 1,
            Verdict::Deny { .. } => 2,
        }
    }
}

/// The gate for one hook call.
pub struct Decider {
    gate: Gate,
}

impl Decider {
    /// Opens the gate: `--policy`, else a trusted `./cordon.toml` in `cwd`, else the embedded
    /// default; its audit log records every decision with `client` as the client.
    pub fn open(explicit: Option<&Path>, cwd: &Path, client: &str) -> Result<Decider, String> {
        let mut opts = Options::new(cwd.to_path_buf());
        opts.policy = explicit.map(Path::to_path_buf);
        opts.client = Some(client.to_string());
        // The hook never prompts on a terminal: an ask goes back to the host.
        opts.can_ask = false;
        // The host runs the command (through `cordon exec`, which prepares its own sandbox).
        opts.runs = false;
        let gate = Gate::open(opts).map_err(|e| e.message)?;
        Ok(Decider { gate })
    }

    pub fn policy(&self) -> &Policy {
        self.gate.policy()
    }

    /// The policy file a child `cordon exec --policy` must use (absolute); `None`: the
    /// embedded default.
    pub fn policy_file(&self) -> Option<PathBuf> {
        self.gate.policy_file().map(Path::to_path_buf)
    }

    /// Whether the policy configures a tool of this (host's) name in `[tools.NAME]`.
    pub fn has_tool(&self, name: &str) -> bool {
        cordon_tools::tool::Toolbox::from_policy(self.gate.policy())
            .is_ok_and(|t| t.get(name).is_some())
    }

    /// Refuses what cordon will not let through before the rules see it, recorded in the
    /// audit log as a denial by the built-in check `check`: the answer's reason.
    pub fn refuse(&self, tool: &str, key: &str, check: &'static str, reason: String) -> String {
        let mut words = vec![tool.to_string()];
        if !key.is_empty() {
            words.push(key.to_string());
        }
        let shown = if key.is_empty() { tool } else { key };
        let d = self.gate.refuse(tool, words, shown, check, &reason);
        if d.exit_code() == cordon_gate::EXIT_FAILURE {
            return format!("cordon could not record the decision: {}", d.reason());
        }
        reason
    }

    /// Decides `call` and records the decision.
    pub fn decide(&self, call: &Call) -> Verdict {
        let built = match call {
            Call::All(calls) => {
                let mut worst: Option<Verdict> = None;
                for c in calls {
                    let v = self.decide(c);
                    if worst.as_ref().is_none_or(|w| v.rank() > w.rank()) {
                        worst = Some(v);
                    }
                }
                return worst.unwrap_or(Verdict::Deny {
                    reason: "nothing to decide".into(),
                });
            }
            Call::Shell { line, cwd } => self.gate.shell(Command::Line(line.clone()), Some(cwd)),
            Call::Tool { tool, args } => self.gate.file(tool, args.clone()),
        };
        let call = match built {
            Ok(c) => c,
            Err(e) => return Verdict::Deny { reason: e.message },
        };
        let d = self.gate.decide(&call, &mut cordon_gate::nobody());
        match (d.is_allowed(), d.by()) {
            (true, _) => Verdict::Allow {
                reason: d.reason().to_string(),
            },
            // Interactive mode with nobody to ask on this side: the host's user is asked.
            (false, Some(By::Mode(ApprovalMode::Interactive))) => {
                let reason = d.reason();
                Verdict::Ask {
                    // The engine's "no terminal" wording wraps the rules' reason: keep that.
                    reason: match reason.find(NO_TERMINAL) {
                        Some(at) => reason[at + NO_TERMINAL.len()..]
                            .strip_suffix(')')
                            .unwrap_or_default()
                            .to_string(),
                        None => reason.to_string(),
                    },
                }
            }
            (false, Some(by)) if d.exit_code() == cordon_gate::EXIT_DENIED => Verdict::Deny {
                reason: format!("{} [{by}]", d.reason()),
            },
            (false, _) => Verdict::Deny {
                reason: format!("cordon could not decide: {}", d.reason()),
            },
        }
    }
}
