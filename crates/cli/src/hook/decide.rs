//! The hook's decisions, through the gate: one [`Gate`] per hook call, opened for the agent
//! host ([`FrontEnd::Host`]): an ask goes back to the host's own prompt, recorded in the audit
//! log as `ask`, `deferred_to` the host. And what each host is told for a decision: one table
//! for every host ([`told`]); the hosts' modules only put it in their wire format.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_gate::{Command, FrontEnd, Gate, Options, Outcome};
use cordon_policy::Policy;

use super::{Answer, Host, Input};

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

/// What was decided and recorded: the engine's [`Outcome`] (for a shell line, an ask is the
/// host's to put to its user), or cordon's own failure, which denies.
pub type Decided = Result<Outcome, cordon_gate::Error>;

/// How restrictive a decision is: a failure is a denial.
fn rank(d: &Decided) -> u8 {
    match d {
        Ok(Outcome::Allowed { .. }) => 0,
        Ok(Outcome::Ask(_)) => 1,
        Ok(Outcome::Denied { .. }) | Err(_) => 2,
    }
}

/// The gate for one hook call.
pub struct Decider {
    gate: Arc<Gate>,
    /// Where the decisions the host may still be told to block are noted (the deadline).
    recorded: Option<Arc<super::Recorded>>,
}

impl Decider {
    /// Opens the gate: `--policy`, else a trusted `./cordon.toml` in `cwd`, else the embedded
    /// default; its audit log records every decision with `client` as the client.
    pub fn open(
        explicit: Option<&Path>,
        cwd: &Path,
        client: &str,
    ) -> Result<Decider, cordon_gate::Error> {
        let mut opts = Options::new(cwd.to_path_buf());
        opts.policy = explicit.map(Path::to_path_buf);
        // The hook never prompts on a terminal: an ask goes back to the host, which also runs
        // the command (through `cordon exec`, which prepares its own sandbox).
        opts.front_end = FrontEnd::Host(client.to_string());
        let gate = Arc::new(Gate::open(opts)?);
        Ok(Decider {
            gate,
            recorded: None,
        })
    }

    /// Notes each decision this decider records in `recorded`, so that when the hook's
    /// deadline passes after one was recorded, the block the host is told is recorded too.
    pub fn noting(mut self, recorded: Arc<super::Recorded>) -> Decider {
        self.recorded = Some(recorded);
        self
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

    /// Decides `call` and records the decision: allowed, denied, or an ask handed to the
    /// host (recorded as such). `Err`: cordon could not decide or record (the call is denied).
    pub fn decide(&self, call: &Call) -> Decided {
        self.decide_as(call, false)
    }

    /// [`Decider::decide`] for a shell line whose allow the host is told as a rewrite to
    /// `cordon exec` of that line (nothing else is handed out): the allow's record is written
    /// but not synced here; `cordon exec`'s own record, synced before the command starts,
    /// makes it durable ([`cordon_gate::Gate::decide_rewritten`]). An ask or a denial is
    /// durable when returned, as with [`Decider::decide`].
    pub fn decide_rewritten(&self, call: &Call) -> Decided {
        self.decide_as(call, matches!(call, Call::Shell { .. }))
    }

    fn decide_as(&self, call: &Call, rewritten: bool) -> Decided {
        let built = match call {
            Call::All(calls) => {
                let mut worst: Option<Decided> = None;
                for c in calls {
                    let d = self.decide(c);
                    if worst.as_ref().is_none_or(|w| rank(&d) > rank(w)) {
                        worst = Some(d);
                    }
                }
                return worst
                    .unwrap_or_else(|| Err(cordon_gate::Error::failure("nothing to decide")));
            }
            Call::Shell { line, cwd } => self.gate.shell(Command::Line(line.clone()), Some(cwd)),
            Call::Tool { tool, args } => self.gate.file(tool, args.clone()),
        };
        let call = built?;
        // A host's gate never asks the asker: an ask comes back as one.
        let _deciding = self.recorded.as_ref().map(|r| r.deciding());
        let d = if rewritten {
            self.gate
                .decide_rewritten(&call, &mut cordon_gate::nobody())
        } else {
            self.gate.decide(&call, &mut cordon_gate::nobody())
        };
        if let (Some(r), Some(o)) = (&self.recorded, d.outcome()) {
            // A denial needs no second record: whatever the host is told, it is blocked.
            if !matches!(o, Outcome::Denied { .. }) {
                r.note(&self.gate, call.request());
            }
        }
        match d.outcome() {
            Some(o) => Ok(o.clone()),
            None => Err(cordon_gate::Error::failure(format!(
                "cordon could not decide: {}",
                d.reason()
            ))),
        }
    }
}

/// What a host is told, before its own wording on the wire: the verb, the reason, and the
/// arguments to run instead. Made by [`told`], the one table for every host; each host's
/// module only serialises it (`claude::render`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    pub verb: Verb,
    /// The reason the host shows; `None` where the host takes none (Codex's allow).
    pub reason: Option<String>,
    /// The arguments to run instead: the tool input with the command rewritten (all of it
    /// where the host replaces the input, only `command` where it merges).
    pub args: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The host's verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Allow,
    /// Only a host whose own prompt asks its user (Claude Code).
    Ask,
    Deny,
}

/// How a host's protocol differs, as data: whether it can ask its user, whether an allow
/// carries a reason, and whether the rewritten arguments replace the tool input or merge
/// into it.
struct Wire {
    asks: bool,
    allow_reason: bool,
    merges: bool,
}

fn wire(host: Host) -> Wire {
    match host {
        Host::Claude => Wire {
            asks: true,
            allow_reason: true,
            merges: false,
        },
        // A reason on an allow is a failed hook in Codex.
        Host::Codex => Wire {
            asks: false,
            allow_reason: false,
            merges: false,
        },
        Host::Gemini | Host::Opencode => Wire {
            asks: false,
            allow_reason: true,
            merges: true,
        },
        Host::Copilot => Wire {
            asks: false,
            allow_reason: true,
            merges: false,
        },
    }
}

/// The one decision → reply table: what `host` is told for `answer` to `input`'s call;
/// `None`: nothing (the host decides as if cordon were not there: no output, exit 0).
///
/// | answer | host that asks (Claude Code) | the others |
/// |---|---|---|
/// | allow | allow, `cordon: allowed: R`, the rewritten command | the same (Codex: no reason) |
/// | ask | ask, `cordon: needs your approval: R (HOW)`, the command with its host grant | deny, `cordon: needs a person's approval: R; HOW` |
/// | deny | deny, `cordon: denied: R` | the same |
pub fn told(host: Host, input: &Input, answer: &Answer) -> Option<Told> {
    let w = wire(host);
    let args = |command: &Option<String>| {
        command.as_ref().map(|c| {
            let mut m = if w.merges {
                serde_json::Map::new()
            } else {
                input.tool_input.clone()
            };
            m.insert("command".into(), serde_json::Value::String(c.clone()));
            m
        })
    };
    Some(match answer {
        Answer::Defer => return None,
        Answer::Allow { reason, command } => Told {
            verb: Verb::Allow,
            reason: w.allow_reason.then(|| format!("cordon: allowed: {reason}")),
            args: args(command),
        },
        Answer::Ask {
            reason,
            command,
            how,
        } if w.asks => Told {
            verb: Verb::Ask,
            reason: Some(format!("cordon: needs your approval: {reason} ({how})")),
            args: args(command),
        },
        Answer::Ask { reason, how, .. } => Told {
            verb: Verb::Deny,
            reason: Some(format!(
                "cordon: needs a person's approval: {reason}; {how}"
            )),
            args: None,
        },
        Answer::Deny { reason } => Told {
            verb: Verb::Deny,
            reason: Some(format!("cordon: denied: {reason}")),
            args: None,
        },
    })
}
