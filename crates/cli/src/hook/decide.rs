//! The one place the hook asks cordon for a decision: a thin function over the approval
//! engine, to be replaced by `cordon_gate::Gate` (`client` = the host, `can_ask = false`) when
//! the gate crate lands. Every decision goes to the policy's audit log, as `cordon exec`'s do.

use std::path::{Path, PathBuf};

use cordon_approval::audit::AuditLog;
use cordon_approval::{amend, By, Engine, Key, Outcome, Presentation, Request, RuleSet, Rules};
use cordon_policy::trust::TrustStore;
use cordon_policy::{ApprovalMode, Policy};
use cordon_tools::assess::{assess, ShellAssessment, ShellContext};
use cordon_tools::shell;
use cordon_tools::tool::Toolbox;

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

/// The loaded policy and engine for one hook call.
pub struct Decider {
    pub policy: Policy,
    /// The policy file a child `cordon exec --policy` must use (absolute); `None`: the
    /// embedded default.
    pub policy_file: Option<PathBuf>,
    engine: Engine,
    toolbox: Toolbox,
}

impl Decider {
    /// Loads the policy (`--policy`, else a trusted `./cordon.toml` in `cwd`, else the
    /// embedded default) and opens its audit log.
    pub fn open(explicit: Option<&Path>, cwd: &Path) -> Result<Decider, String> {
        let policy =
            Policy::discover(explicit, cwd).map_err(|e| crate::term::clean(&e.to_string()))?;
        crate::check::examples(&policy)?;
        let store = TrustStore::from_env();
        let mut rules = Rules::from_policy(&policy);
        if let Ok(file) = crate::exec::persisted_rules_file(&policy) {
            let persisted =
                amend::load(&file, &store).map_err(|e| format!("remembered rules {e}"))?;
            rules.add_persisted(persisted);
        }
        let mut engine = Engine::with_rules(rules, &policy);
        // The hook never prompts on a terminal: an ask goes back to the host.
        engine.set_can_ask(false);
        let log = &policy.approval.audit_log;
        let Some(path) = log.path() else {
            return Err("nowhere to record decisions: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path".into());
        };
        if let cordon_policy::AuditLog::Default(_) = log {
            crate::exec::owned_by_caller(path)
                .map_err(|e| format!("the default audit log {}: {e}", path.display()))?;
        }
        let audit = AuditLog::open(path).map_err(|e| format!("audit log {e}"))?;
        engine.set_audit(audit);
        let toolbox = Toolbox::from_policy(&policy).map_err(|e| e.to_string())?;
        let policy_file = match (explicit, &policy.path) {
            (Some(p), _) => {
                Some(std::path::absolute(p).map_err(|e| format!("policy {}: {e}", p.display()))?)
            }
            (None, path) => path.clone(),
        };
        Ok(Decider {
            policy,
            policy_file,
            engine,
            toolbox,
        })
    }

    /// Whether cordon maps a host tool it does not know by name: a `[tools.NAME]` entry of
    /// the policy with the host's tool name.
    pub fn has_tool(&self, name: &str) -> bool {
        self.toolbox.get(name).is_some()
    }

    /// The shell tool's reading of `line` in `cwd`.
    pub fn assess_shell(&self, line: &str, cwd: &Path) -> ShellAssessment {
        let parsed = shell::parse_in(line, &crate::exec::inherited(&self.policy));
        let cx = ShellContext::for_policy(&self.policy, cwd.to_path_buf());
        assess(&parsed, &RuleSet::new(&self.policy.shell), &cx)
    }

    /// Decides `call` and records the decision.
    pub fn decide(&mut self, call: &Call) -> Verdict {
        match call {
            Call::All(calls) => {
                let mut worst: Option<Verdict> = None;
                for c in calls {
                    let v = self.decide(c);
                    if worst.as_ref().is_none_or(|w| v.rank() > w.rank()) {
                        worst = Some(v);
                    }
                }
                worst.unwrap_or(Verdict::Deny {
                    reason: "nothing to decide".into(),
                })
            }
            Call::Shell { line, cwd } => {
                let a = self.assess_shell(line, cwd);
                let argv = vec![shell::line_shell().to_string(), "-c".into(), line.clone()];
                let req = crate::exec::shell_request(&self.engine, line, &argv, cwd, &a);
                self.settle(&req)
            }
            Call::Tool { tool, args } => {
                let a = match self.toolbox.assess(tool, args) {
                    Ok(a) => a,
                    Err(e) => {
                        return Verdict::Deny {
                            reason: format!("{tool}: {e}"),
                        }
                    }
                };
                let id = cordon_approval::audit::new_id().unwrap_or_default();
                let req = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
                    .with_verdict(a.verdict.clone())
                    .with_presentation(Presentation::summary(a.presentation.summary.clone()))
                    .with_args(a.args.clone());
                self.settle(&req)
            }
        }
    }

    fn settle(&mut self, req: &Request) -> Verdict {
        match self.engine.evaluate(req) {
            Outcome::Allowed { reason, .. } => Verdict::Allow { reason },
            // Interactive mode with nobody to ask on this side: the host's user is asked.
            Outcome::Denied {
                by: By::Mode(ApprovalMode::Interactive),
                reason,
                ..
            } => Verdict::Ask {
                // The engine's "no terminal" wording wraps the rules' reason: keep the latter.
                reason: match reason.find(NO_TERMINAL) {
                    Some(at) => reason[at + NO_TERMINAL.len()..]
                        .strip_suffix(')')
                        .unwrap_or_default()
                        .to_string(),
                    None => reason,
                },
            },
            Outcome::Denied {
                by: By::AuditFailed,
                reason,
                ..
            } => Verdict::Deny {
                reason: format!("cordon could not record the decision: {reason}"),
            },
            Outcome::Denied { by, reason, .. } => Verdict::Deny {
                reason: format!("{reason} [{by}]"),
            },
            Outcome::NeedsAnswer(p) => Verdict::Ask { reason: p.reason },
        }
    }
}
