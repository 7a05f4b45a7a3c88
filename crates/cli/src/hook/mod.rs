//! `cordon hook claude|codex|gemini|copilot|opencode`: cordon as an agent host's pre-tool hook.
//!
//! ```text
//!  host's hook JSON ──▶ HOST::parse ──▶ Call (shell line | file tool | host tool)
//!   (stdin, capped)                        │
//!                                  decide::Decider (policy, rules, audit log)
//!                                          │ Allow / Ask / Deny
//!                                          ▼
//!                              HOST::render ──▶ stdout JSON + exit code
//! ```
//!
//! Each host's protocol is data: serde types in `claude.rs`, `codex.rs`, `gemini.rs`,
//! `copilot.rs`, `opencode.rs` (through a plugin of cordon's own), with
//! golden fixtures in `crates/cli/tests/hooks/`. An allowed shell command is rewritten to run
//! under `cordon exec --policy <the same policy> -c '<line>'`, so the kernel sandbox confines
//! what the host itself runs. An ask the host can put to its user (Claude Code) carries a
//! one-time host grant (`host_grant`) that the rewritten `cordon exec` consumes.
//!
//! A host tool that reaches the network itself (web fetch, web search) is denied when the
//! policy denies the sandbox network, so the agent's own fetches follow the same rule.
//!
//! Deadline: the decision is made on a worker thread; when it has not come within
//! `--deadline` (default [`DEADLINE`]), the call is blocked with a reason naming what cordon
//! was waiting for — before the host's own timeout, after which every host runs the call.
//! A decision the worker recorded (or was recording) by then is followed in the log by a
//! refusal of that call ([`Recorded`], at most [`LATE_RECORD`] past the deadline): the log
//! says the call was blocked, as the host was told.
//!
//! Fail closed: input that is not JSON, too large, for another event, or missing what the
//! protocol requires is blocked (exit 2, one `cordon: ` line on stderr), never allowed. A tool
//! cordon does not map defers to the host (no output, exit 0) unless the policy names it in
//! `[tools.NAME]`.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod decide;
pub mod gemini;
pub mod opencode;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use cordon_policy::Network;
use serde_json::Value;

use cordon_approval::{By, RuleRef};
use cordon_gate::Outcome;
use decide::{Call, Decided, Decider};

/// Exit status that blocks the tool call in every supported host (stderr is the reason).
pub const EXIT_BLOCK: i32 = 2;
/// The most hook input read from stdin (a `Write` of a large file carries its content).
pub const MAX_INPUT: u64 = 8 << 20;

/// The agent hosts cordon speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Host {
    Claude,
    Codex,
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    Opencode,
}

impl Host {
    /// The client name recorded with every decision.
    pub fn client(self) -> &'static str {
        match self {
            Host::Claude => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini-cli",
            Host::Copilot => "copilot-cli",
            Host::Opencode => "opencode",
        }
    }

    /// The argument of `cordon hook`/`install` naming the host.
    pub fn arg(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Opencode => "opencode",
        }
    }

    /// A person can type into the shell commands this host runs: Gemini CLI's interactive
    /// shell, focused by its user. Its agent has no tool that types into a command. The
    /// others' agents do (Codex's `write_stdin`, Copilot's `write_bash`) or no one does
    /// (Claude Code, opencode): their commands read nothing (`exec_line`).
    pub fn typed_input(self) -> bool {
        self == Host::Gemini
    }

    /// The hosts whose hooks live in a JSON settings file shared with the operator's other
    /// settings (`install.rs`). Copilot CLI and opencode are wired by a file of cordon's own
    /// (`install_file.rs`).
    pub fn all() -> [Host; 3] {
        [Host::Claude, Host::Codex, Host::Gemini]
    }
}

/// What a host's adapter makes of a tool call.
#[derive(Debug)]
pub enum Mapped {
    /// A call cordon decides; a shell call is the host's shell tool, whose `command` is
    /// rewritten.
    Call { call: Call },
    /// A tool cordon does not map, by the host's name.
    Unmapped(String),
    /// A host tool that reaches the network itself (web fetch, web search): denied under
    /// `sandbox.network = "deny"`, else deferred, unless the policy names it in `[tools]`.
    Network(String),
    /// A host tool that writes or runs, outside any sandbox, what its input does not show
    /// (`why`, which says so): cordon cannot decide it, so it is refused, unless the policy
    /// names it in `[tools]`.
    Unreadable { name: String, why: &'static str },
}

/// A host's hook input, parsed.
#[derive(Debug)]
pub struct Input {
    pub cwd: PathBuf,
    /// The host's name for the tool.
    #[allow(dead_code)]
    pub tool_name: String,
    /// The tool's arguments as the host sent them (the rewrite keeps every other key).
    pub tool_input: serde_json::Map<String, Value>,
    pub mapped: Mapped,
}

/// The hook's answer, before the host's wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No opinion: the host decides as if cordon were not there.
    Defer,
    /// Allowed; `command`: the rewritten shell line to run instead.
    Allow {
        reason: String,
        command: Option<String>,
    },
    /// A person must approve. `command`: the rewritten line (with a host grant) to run once
    /// they do; `how`: for hosts that cannot ask, how a person approves it.
    Ask {
        reason: String,
        command: Option<String>,
        how: String,
    },
    Deny {
        reason: String,
    },
}

/// What the hook prints and returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Reply {
    /// Blocks the call: exit 2 with the reason on stderr, understood by every host.
    pub fn block(reason: &str) -> Reply {
        Reply {
            stdout: String::new(),
            stderr: format!("cordon: {}\n", crate::term::clean(reason)),
            code: EXIT_BLOCK,
        }
    }

    pub fn json(v: Value) -> Reply {
        Reply {
            stdout: format!("{v}\n"),
            stderr: String::new(),
            code: 0,
        }
    }
}

/// How long the hook takes at most by default before it blocks the call: well inside the
/// 30 s hook timeout `cordon install` gives each host (a host whose timeout passes lets the
/// call run), with room left for starting cordon on a loaded machine.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// The hook timeout `cordon install` writes into each host's settings.
pub const HOST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the hook was doing, for the reason given when its deadline passes.
static STAGE: AtomicU8 = AtomicU8::new(Stage::Input as u8);

#[derive(Clone, Copy)]
#[repr(u8)]
enum Stage {
    Input,
    Open,
    Decide,
}

fn stage(s: Stage) {
    STAGE.store(s as u8, Ordering::Relaxed);
}

/// `cordon hook HOST [--policy F] [--deadline S]`: the decision is made on a worker thread;
/// when it has not come by `deadline`, the call is blocked with a reason that says so (the
/// worker may be waiting on a lock, a policy file that does not open, or the host's input),
/// and the process exits without waiting for it — after recording that block for a call
/// whose decision the worker had already recorded ([`Recorded`]).
pub fn run(host: Host, policy: Option<PathBuf>, deadline: Duration) -> crate::Exit {
    let reply = within(deadline, move |recorded| {
        let head = read_head(&mut std::io::stdin().lock());
        match head {
            Ok((bytes, true)) => respond(host, policy.as_deref(), &bytes, recorded),
            // One whole JSON object is in, and the host has not closed its end yet (hosts
            // close it a while after writing): the call is decided meanwhile, and the answer
            // waits for the rest, which must leave the input what it was — one JSON value, at
            // most MAX_INPUT bytes —, else the call is blocked after all.
            Ok((bytes, false)) => {
                let read = bytes.len() as u64;
                let rest = std::thread::Builder::new()
                    .name("cordon-input".into())
                    .spawn(move || read_rest(&mut std::io::stdin().lock(), read));
                let reply = respond(host, policy.as_deref(), &bytes, recorded.clone());
                stage(Stage::Input);
                let whole = match rest {
                    Ok(rest) => rest
                        .join()
                        .unwrap_or_else(|_| Err(Error::Read(std::io::Error::other("panicked"))))
                        .and_then(|tail| {
                            let mut all = bytes;
                            all.extend_from_slice(&tail);
                            serde_json::from_slice::<serde::de::IgnoredAny>(&all)
                                .map(drop)
                                .map_err(Error::NotJson)
                        }),
                    Err(e) => Err(Error::Read(e)),
                };
                match whole {
                    Ok(()) => reply,
                    Err(e) => {
                        let reason = e.to_string();
                        let mut reply = Reply::block(&reason);
                        if let Some(warning) =
                            recorded.block_late("hook-input", &reason, LATE_RECORD)
                        {
                            reply.stderr.push_str(&format!(
                                "cordon: warning: {}\n",
                                crate::term::clean(&warning)
                            ));
                        }
                        reply
                    }
                }
            }
            Err(e) => Reply::block(&e.to_string()),
        }
    });
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let wrote = out
        .write_all(reply.stdout.as_bytes())
        .and_then(|()| out.flush());
    eprint!("{}", reply.stderr);
    wrote.map_err(Error::Write)?;
    Ok(reply.code)
}

/// How long, past the deadline, the hook takes at most to record that it blocked a call whose
/// decision was already recorded: inside the 5 s `cordon doctor` requires between the hook's
/// deadline and the host's timeout.
pub const LATE_RECORD: Duration = Duration::from_secs(2);

/// `work`'s reply when it comes within `deadline`; else a block saying so, recorded after
/// each decision `work` recorded meanwhile (a refusal, by `builtin:deadline`, for that
/// call's id) so that the log says what the host was told. `work` runs on a thread of its
/// own, left behind when the deadline passes.
fn within(deadline: Duration, work: impl FnOnce(Arc<Recorded>) -> Reply + Send + 'static) -> Reply {
    let recorded = Arc::new(Recorded::default());
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let recorded = recorded.clone();
        std::thread::spawn(move || {
            let _ = tx.send(work(recorded));
        });
    }
    match rx.recv_timeout(deadline) {
        Ok(reply) => reply,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            let reason = late(deadline);
            let mut reply = Reply::block(&reason);
            if let Some(warning) = recorded.block_late("deadline", &reason, LATE_RECORD) {
                reply.stderr.push_str(&format!(
                    "cordon: warning: {}\n",
                    crate::term::clean(&warning)
                ));
            }
            reply
        }
        // The worker died without an answer (a panic, printed above): never a pass.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Reply::block("the hook failed before deciding (see above): the call is blocked")
        }
    }
}

/// The decisions a hook's worker recorded that were not denials, for the deadline: when the
/// host is told to block after all, the log must say so after each of them.
#[derive(Default)]
pub struct Recorded {
    state: Mutex<Recording>,
    /// Signalled when a decision is no longer being made.
    idle: Condvar,
}

#[derive(Default)]
struct Recording {
    /// Decisions being made (and recorded) now.
    deciding: usize,
    /// The gate and the request of each decision recorded that was not a denial.
    calls: Vec<(Arc<cordon_gate::Gate>, cordon_gate::Request)>,
}

/// A decision being made; [`Recorded`] hears when it is done (dropped).
pub struct Deciding<'a>(&'a Recorded);

impl Drop for Deciding<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
        s.deciding -= 1;
        self.0.idle.notify_all();
    }
}

impl Recorded {
    /// A decision starts: the deadline waits (a little) for it to be recorded or not.
    pub fn deciding(&self) -> Deciding<'_> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .deciding += 1;
        Deciding(self)
    }

    /// `request`'s decision, not a denial, is recorded in `gate`'s log.
    pub fn note(&self, gate: &Arc<cordon_gate::Gate>, request: &cordon_gate::Request) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.calls.push((gate.clone(), request.clone()));
    }

    /// The host is told to block after all (the deadline passed, or the rest of its input
    /// broke what was decided on): records a refusal (by `builtin:CHECK`, `reason`) after each
    /// decision recorded that was not a denial, waiting first for one being recorded now — all
    /// within `budget`. `Some`: what could not be recorded in time, for the person (the log
    /// then shows the decision alone).
    fn block_late(&self, check: &'static str, reason: &str, budget: Duration) -> Option<String> {
        let end = Instant::now() + budget;
        let calls = {
            let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let (mut s, _) = self
                .idle
                .wait_timeout_while(s, budget, |s| s.deciding > 0)
                .unwrap_or_else(|p| p.into_inner());
            std::mem::take(&mut s.calls)
        };
        if calls.is_empty() {
            return None;
        }
        let reason = format!("blocked after its decision was recorded: {reason}");
        let (tx, rx) = std::sync::mpsc::channel();
        // On a thread of its own: the engine or the log may be held by a decision still
        // being made (another file of the same patch); the answer does not wait past `end`.
        let recording = std::thread::Builder::new()
            .name("cordon-late-record".into())
            .spawn(move || {
                let failed: Vec<String> = calls
                    .iter()
                    .filter_map(|(gate, request)| {
                        gate.record_blocked(request, check, &reason)
                            .err()
                            .map(|e| format!("{}: {e}", request.id))
                    })
                    .collect();
                let _ = tx.send(failed);
            });
        if let Err(e) = recording {
            return Some(format!(
                "the log shows the call's decision, but not that it was blocked: cannot start the thread that records it ({e})"
            ));
        }
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(failed) if failed.is_empty() => None,
            Ok(failed) => Some(format!(
                "the log shows the call's decision, but not that it was blocked: {}",
                failed.join("; ")
            )),
            Err(_) => Some(format!(
                "the log shows the call's decision, but not that it was blocked: recording that took longer than {} s",
                budget.as_secs_f64()
            )),
        }
    }
}

/// The reason given when the deadline passed: what cordon was still waiting for, and what to do.
fn late(deadline: Duration) -> String {
    let (waiting, todo) = match STAGE.load(Ordering::Relaxed) {
        s if s == Stage::Input as u8 => (
            "for the host to finish sending the tool call",
            "retry it; if this repeats, the host keeps the hook's input open",
        ),
        s if s == Stage::Open as u8 => (
            "to load the policy and open the audit log",
            "retry it; if this repeats, check that the policy file is a regular file that opens (not a FIFO, not on a hung mount)",
        ),
        _ => (
            "to record the decision in the audit log",
            "retry it; if this repeats, another process holds the audit log's lock: `cordon audit verify` names it",
        ),
    };
    format!(
        "no decision within the hook's {} s deadline (cordon was still waiting {waiting}): \
         the call is blocked; {todo}",
        deadline.as_secs_f64()
    )
}

/// The rest of an input of which `read` bytes were read already: to its end, at most
/// [`MAX_INPUT`] bytes in all; more is an error (the call is blocked).
fn read_rest(r: &mut dyn Read, read: u64) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    let room = MAX_INPUT.saturating_sub(read);
    r.take(room + 1)
        .read_to_end(&mut bytes)
        .map_err(Error::Read)?;
    if bytes.len() as u64 > room {
        return Err(Error::TooLarge(MAX_INPUT));
    }
    Ok(bytes)
}

/// Whether a read of stdin would return at once (more input, or its end: a file, or a pipe
/// the host has closed): then it is read on this thread, as before, and no thread is started
/// for the rest.
fn stdin_ready() -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    // A zero timeout: this only asks. An error reads on, as before.
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).map_or(true, |n| n > 0)
}

/// Up to this much input is looked at for a whole object before its end; a larger one (a
/// file tool's big content) is read to its end first, so that the parses stay few and small.
const EARLY_MAX: usize = 1 << 20;

/// Reads the input until it ends (`true`) or until what was read holds one whole JSON object
/// (`false`: the rest is still to be read; [`run`] reads it beside the decision). Only an
/// object counts as whole before the end: a number or a literal could go on in the next read.
/// At most [`MAX_INPUT`] bytes.
fn read_head(r: &mut dyn Read) -> Result<(Vec<u8>, bool), Error> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Read(e)),
        };
        if n == 0 {
            return Ok((bytes, true));
        }
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() as u64 > MAX_INPUT {
            return Err(Error::TooLarge(MAX_INPUT));
        }
        let space = |b: &&u8| b" \t\n\r".contains(*b);
        let object_so_far = bytes.len() <= EARLY_MAX
            && bytes.iter().find(|b| !space(b)) == Some(&b'{')
            && bytes.iter().rev().find(|b| !space(b)) == Some(&b'}');
        if object_so_far
            && serde_json::Deserializer::from_slice(&bytes)
                .into_iter::<serde::de::IgnoredAny>()
                .next()
                .is_some_and(|v| v.is_ok())
            && !stdin_ready()
        {
            return Ok((bytes, false));
        }
    }
}

/// Why the hook cannot answer with a decision: the host's input cannot be read (the call is
/// blocked, the message names what is wrong), or cordon failed to decide (the call is denied,
/// with the gate's error as it is). Turned into the host's reply in one place, [`respond`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the hook input: {0}")]
    Read(#[source] std::io::Error),
    #[error("cannot write the answer: {0}")]
    Write(#[source] std::io::Error),
    #[error("hook input larger than {} MiB: blocked", .0 >> 20)]
    TooLarge(u64),
    #[error("hook input is not JSON ({0}): blocked")]
    NotJson(#[source] serde_json::Error),
    /// The input's shape is not the host's (a field missing or of another type).
    #[error("{0}")]
    Shape(#[source] serde_json::Error),
    #[error("`{0}` is missing or not an object")]
    NotObject(String),
    #[error("`{0}` is missing or not a string")]
    NotString(String),
    #[error("`{0}` is not a string")]
    WrongType(String),
    #[error("`{0}` is missing")]
    Missing(String),
    /// Another hook event than the one cordon is installed for.
    #[error("event `{found}`, not {want}")]
    Event { found: String, want: &'static str },
    #[error("`cwd` is not an absolute path")]
    RelativeCwd,
    #[error("apply_patch names no file (no `*** Add/Update/Delete File:` line)")]
    NoPatchFile,
    /// A patch path under `~`, which the host takes from the home, and no HOME to take it from.
    #[error("apply_patch names a path under `~`, and HOME is not set: cordon cannot tell which file it is")]
    NoHome,
    #[error("a NUL byte cannot be passed to a shell")]
    NulByte,
    /// A path the rewritten command must name is not UTF-8 (`the cordon binary's`, `the
    /// policy's`).
    #[error("{0} path is not UTF-8")]
    NotUtf8(&'static str),
    #[error("cannot find the cordon binary: {0}")]
    NoBinary(#[source] std::io::Error),
    /// cordon failed to decide (the policy, the audit log, a host grant): the call is denied.
    #[error(transparent)]
    Gate(#[from] cordon_gate::Error),
}

impl Error {
    /// Another event than `want`, its name made safe for a terminal.
    pub fn event(found: &str, want: &'static str) -> Error {
        Error::Event {
            found: crate::term::clean(found),
            want,
        }
    }
}

/// The whole hook: input bytes → the host's answer; each decision it records is noted in
/// `recorded` (for the deadline).
fn respond(host: Host, policy: Option<&Path>, bytes: &[u8], recorded: Arc<Recorded>) -> Reply {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Reply::block(&Error::NotJson(e).to_string()),
    };
    let input = match host {
        Host::Claude => claude::parse(value),
        Host::Codex => codex::parse(value),
        Host::Gemini => gemini::parse(value),
        Host::Copilot => copilot::parse(value),
        Host::Opencode => opencode::parse(value),
    };
    let input = match input {
        Ok(i) => i,
        Err(e) => return Reply::block(&format!("{} hook input: {e}: blocked", host.client())),
    };
    let answer = match answer(host, policy, &input, recorded) {
        Ok(a) => a,
        Err(e) => Answer::Deny {
            reason: e.to_string(),
        },
    };
    // One table for every host (decide::told); each host's module only serialises it.
    let Some(told) = decide::told(host, &input, &answer) else {
        return Reply {
            stdout: String::new(),
            stderr: String::new(),
            code: 0,
        };
    };
    match host {
        Host::Claude => claude::render(told),
        Host::Codex => codex::render(told),
        Host::Gemini => gemini::render(told),
        Host::Copilot => copilot::render(told),
        Host::Opencode => opencode::render(told),
    }
}

/// What a host is told of a write on the persistence surface: no rule or grant lets the next
/// one through.
const EACH_TIME: &str =
    "a write on the persistence surface is asked each time, whatever the policy's rules";

/// Decides the mapped call; `Err`: cordon's own failure, which denies.
fn answer(
    host: Host,
    policy: Option<&Path>,
    input: &Input,
    recorded: Arc<Recorded>,
) -> Result<Answer, Error> {
    stage(Stage::Open);
    let decider = Decider::open(policy, &input.cwd, host.client())?.noting(recorded);
    stage(Stage::Decide);
    let call = match &input.mapped {
        Mapped::Call { call } => call.clone(),
        Mapped::Unmapped(name) | Mapped::Network(name) | Mapped::Unreadable { name, .. }
            if decider.has_tool(name) =>
        {
            Call::Tool {
                tool: name.clone(),
                args: Value::Object(input.tool_input.clone()),
            }
        }
        Mapped::Unreadable { name, why } => {
            let name = crate::term::clean(name);
            let reason = format!(
                "`{name}` {why}; cordon cannot decide what it writes or runs, so it is refused \
                 (a policy lets it through by naming it: [tools.{name}])"
            );
            return Ok(Answer::Deny {
                reason: decider.refuse(&name, "", "host-unreadable-tool", reason),
            });
        }
        Mapped::Network(name) if decider.policy().sandbox.network == Network::Deny => {
            let reason = format!(
                "`{}` reaches the network, and the policy denies network access (sandbox.network = \"deny\", {})",
                crate::term::clean(name),
                decider.policy().source
            );
            return Ok(Answer::Deny {
                reason: decider.refuse(name, "", "host-network-tool", reason),
            });
        }
        Mapped::Unmapped(_) | Mapped::Network(_) => return Ok(Answer::Defer),
    };
    if let Some(file) = hook_settings_written(&call) {
        let reason = format!(
            "{} configures the agent host's hooks, cordon's among them: a person edits it, not the agent",
            file.display()
        );
        let tool = match &call {
            Call::Tool { tool, .. } => tool.as_str(),
            _ => "write_file",
        };
        let key = file.display().to_string();
        return Ok(Answer::Deny {
            reason: decider.refuse(tool, &key, "hook-settings", reason),
        });
    }
    let Call::Shell { line, cwd } = &call else {
        return Ok(match decider.decide(&call) {
            Ok(Outcome::Allowed { reason, .. }) => Answer::Allow {
                reason,
                command: None,
            },
            // A write on the persistence surface asks whatever the rules say (a rule's allow
            // does not lower it): "allow it in the policy" would not stop the asks.
            Ok(Outcome::Ask(p)) if matches!(p.by, By::Tool(RuleRef::Builtin("surface"))) => {
                Answer::Ask {
                    how: if host == Host::Claude {
                        format!("approve to let it happen once; {EACH_TIME}")
                    } else {
                        format!(
                            "cordon cannot ask from a {} hook; {EACH_TIME}: a person does it themselves",
                            host.client()
                        )
                    },
                    reason: p.reason,
                    command: None,
                }
            }
            Ok(Outcome::Ask(p)) => Answer::Ask {
                // Claude Code asks its user; the other hosts cannot, and tell the agent how a
                // person approves it.
                how: if host == Host::Claude {
                    format!(
                        "approve to let it happen once; to stop being asked, allow it in the policy ({}) and trust it (`cordon policy trust`)",
                        decider.policy().source
                    )
                } else {
                    format!(
                        "cordon cannot ask from a {} hook; a person can allow it in the policy ({}), or do it themselves",
                        host.client(),
                        decider.policy().source
                    )
                },
                reason: p.reason,
                command: None,
            },
            denied => Answer::Deny {
                reason: denial(denied),
            },
        });
    };
    if line.contains('\0') {
        let reason = "the command contains a NUL byte, which no shell can be given".to_string();
        return Ok(Answer::Deny {
            reason: decider.refuse("shell", &line.replace('\0', "\\0"), "nul-byte", reason),
        });
    }
    if line.trim().is_empty() {
        let reason = "the command is empty".to_string();
        return Ok(Answer::Deny {
            reason: decider.refuse("shell", line, "empty-line", reason),
        });
    }
    // A host grant is consumed only by the line this hook wrote; the agent submitting one
    // itself (a declined ask's grant, a guessed id) gains nothing.
    if names_host_grant(line) {
        let reason = "`cordon exec --host-grant` runs only as cordon's hook rewrote it; it cannot be submitted as a command".to_string();
        return Ok(Answer::Deny {
            reason: decider.refuse("shell", line, "host-grant-submitted", reason),
        });
    }
    let exe = std::env::current_exe().map_err(Error::NoBinary)?;
    let policy_file = decider.policy_file();
    // An allow here is told as the rewrite (below) and nothing else: its record's sync is
    // left to `cordon exec`'s, made before the command starts (`Decider::decide_rewritten`).
    // Not under Codex: that run records apart (`--state codex`), and its sync covers nothing
    // of this log, so the hook syncs its own record.
    let decided = if host == Host::Codex {
        decider.decide(&call)
    } else {
        decider.decide_rewritten(&call)
    };
    if host == Host::Codex && matches!(decided, Ok(Outcome::Allowed { .. })) {
        if let Err(e) = codex_state_dir(&decider) {
            return Ok(Answer::Deny {
                reason: decider.refuse("shell", line, "codex-state", e),
            });
        }
    }
    Ok(match decided {
        Ok(Outcome::Allowed { reason, .. }) => Answer::Allow {
            reason,
            command: Some(exec_line(
                Some((&exe, host)),
                policy_file.as_deref(),
                None,
                line,
            )?),
        },
        Ok(Outcome::Ask(p)) => {
            let reason = p.reason;
            // Claude Code asks its user: approving there runs it once, confined; a host that
            // cannot ask tells the agent how a person approves it.
            let how = if host == Host::Claude {
                format!(
                    "approve to run it once, confined by cordon; to stop being asked, add an allow rule to {} and trust it (`cordon policy trust`)",
                    decider.policy().source
                )
            } else {
                format!(
                    "to run it once, a person runs it in a terminal, where cordon asks: {}",
                    exec_line(None, policy_file.as_deref(), None, line)?
                )
            };
            let command = if host == Host::Claude {
                let id = cordon_gate::host_grant::issue(
                    decider.policy(),
                    policy_file.as_deref(),
                    cwd,
                    line,
                    host.client(),
                )?;
                Some(exec_line(
                    Some((&exe, host)),
                    policy_file.as_deref(),
                    Some(&id),
                    line,
                )?)
            } else {
                None
            };
            Answer::Ask {
                reason,
                command,
                how,
            }
        }
        denied => Answer::Deny {
            reason: denial(denied),
        },
    })
}

/// The reason a denial (or cordon's failure to decide) gives the agent: the rule's reason and
/// what decided.
fn denial(d: Decided) -> String {
    match d {
        Ok(Outcome::Denied { by, reason, .. }) => format!("{reason} [{by}]"),
        Ok(o) => format!("{} [{}]", o.reason(), o.by()),
        Err(e) => e.to_string(),
    }
}

/// A host settings file `call` writes, edits or deletes: the persistence surface's part that
/// wires the agent hosts' hooks (`cordon_policy::surface::HOST_SETTINGS`, also where the
/// environment moves a host's directory: `$CODEX_HOME`, `$COPILOT_HOME`, `$XDG_CONFIG_HOME`).
fn hook_settings_written(call: &Call) -> Option<PathBuf> {
    match call {
        Call::All(calls) => calls.iter().find_map(hook_settings_written),
        Call::Tool { tool, args } if tool != "read_file" && tool != "list_dir" => {
            let path = Path::new(args.get("path")?.as_str()?);
            let named = cordon_policy::surface::host_settings(path, &|n| std::env::var_os(n));
            // Also where the operator's links put them (`~/.claude/settings.json ->
            // dots/claude.json`): by where the write really lands.
            let linked = || {
                let cwd = std::env::current_dir().ok()?;
                let real = cordon_policy::surface::resolve(&cwd.join(path));
                let mut dirs: Vec<PathBuf> = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|h| h.is_absolute())
                    .into_iter()
                    .collect();
                dirs.extend(cwd.ancestors().map(Path::to_path_buf));
                cordon_policy::surface::host_settings_linked(&real, &dirs)
            };
            named.or_else(linked).map(|_| path.to_path_buf())
        }
        _ => None,
    }
}

/// Whether `line` mentions `--host-grant` at all. A spelling the text check misses
/// (`--host-gr""ant`) still runs inside the sandbox, where the grant store is out of reach.
fn names_host_grant(line: &str) -> bool {
    line.contains("--host-grant")
}

/// `'…'`: the POSIX single-quoted form of `s`, one argument in bash, dash and zsh, every byte
/// as it is (a `'` inside ends the quote, adds `\'`, and opens a new one).
pub fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('\'');
    for c in s.chars() {
        if c == '\'' {
            q.push_str("'\\''");
        } else {
            q.push(c);
        }
    }
    q.push('\'');
    q
}

/// The state apart of the run Codex starts (`LOGDIR/codex`, [`cordon_policy::CODEX_STATE_DIR`]),
/// made by the hook before it answers: Codex's sandbox leaves LOGDIR read-only, so a run
/// inside it cannot make the directory once it is gone (a home whose cordon state was
/// cleared since install), and its first call would be refused. The hook runs outside
/// Codex's sandbox, as the user who installed. Made without following a link below what
/// exists; an error is the reason the call is refused (the run could not record).
fn codex_state_dir(decider: &Decider) -> Result<(), String> {
    let Some(dir) = decider
        .policy()
        .approval
        .audit_log
        .path()
        .and_then(std::path::Path::parent)
    else {
        // Nowhere to record: the run refuses, saying so.
        return Ok(());
    };
    let apart = dir.join(cordon_policy::CODEX_STATE_DIR);
    cordon_fs::safe::create_path(&apart, 0o700)
        .map(drop)
        .map_err(|e| {
            format!(
                "cannot create {}, where the command would record inside Codex's sandbox: {e} (run `cordon install codex` again)",
                apart.display()
            )
        })
}

/// The command `host` runs instead of `line`, with cordon at `exe`: `cordon exec --from-hook
/// --policy P [--host-grant ID] [--input typed] [--state codex] -c='line'` (without
/// `--from-hook` when `by` is `None`: a line for a person to type). `--input typed`: a person
/// can type into the command through the host (Gemini CLI's interactive shell, see
/// [`Host::typed_input`]); otherwise the command reads nothing, as what the host's agent types
/// into it later (Codex's `write_stdin`, Copilot's `write_bash`) reaches no hook. `--state
/// codex`: Codex runs it inside its own sandbox, where what Codex runs without cordon writes
/// as well, so the run keeps its state apart ([`cordon_policy::CODEX_STATE_DIR`]).
/// A line with a NUL byte is refused (no argument can carry it).
pub fn exec_line(
    by: Option<(&Path, Host)>,
    policy: Option<&Path>,
    grant: Option<&str>,
    line: &str,
) -> Result<String, Error> {
    if line.contains('\0') {
        return Err(Error::NulByte);
    }
    // `None`: the bare name, for a person to type.
    let mut out = match by {
        Some((exe, _)) => quote(exe.to_str().ok_or(Error::NotUtf8("the cordon binary's"))?),
        None => "cordon".to_string(),
    };
    out.push_str(" exec");
    // For the host to run (not a person to type): cordon must never ask on the host's
    // terminal, which its agent may type into.
    if by.is_some() {
        out.push_str(" --from-hook");
    }
    if let Some(p) = policy {
        let p = p.to_str().ok_or(Error::NotUtf8("the policy's"))?;
        out.push_str(" --policy ");
        out.push_str(&quote(p));
    }
    if let Some(id) = grant {
        out.push_str(" --host-grant ");
        out.push_str(id);
    }
    let host = by.map(|(_, host)| host);
    if host.is_some_and(Host::typed_input) {
        out.push_str(" --input typed");
    }
    if host == Some(Host::Codex) {
        out.push_str(" --state codex");
    }
    // Attached (`-c='…'`): a line starting with `-` stays the option's value. The `=` is
    // what clap strips after an attached short option's name, once: without it, a line that
    // starts with `=` would lose that `=` (`-c'=rm x'` runs `rm x`, not the `=rm` decided).
    out.push_str(" -c=");
    out.push_str(&quote(line));
    Ok(out)
}

/// The object under `key` in `v`, or an error naming it.
pub fn object<'a>(v: &'a Value, key: &str) -> Result<&'a serde_json::Map<String, Value>, Error> {
    v.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| Error::NotObject(key.to_string()))
}

/// The string under `key` in `map`, or an error naming it.
pub fn string<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Result<&'a str, Error> {
    map.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::NotString(key.to_string()))
}

/// An absolute path from the host (relative ones are taken from `cwd`).
/// `.` components are dropped (`dir/.` is `dir`); `..` is kept for the tools to judge.
pub fn host_path(cwd: &Path, p: &str) -> PathBuf {
    cwd.join(p).components().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_is_posix_single_quoting() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("$(x) `y` \\ \n"), "'$(x) `y` \\ \n'");
    }

    /// Every file `cordon install` writes (hooks, plugins, MCP servers), for every host and
    /// scope, with the hosts' directories at their defaults and moved by the environment, is
    /// on the persistence surface: the after-run scan watches it (in a root, or at the home
    /// when a root holds it), and the hook files are denied to an agent's file tools.
    #[test]
    fn every_file_install_writes_is_on_the_surface() {
        use crate::install::Scope;
        use cordon_policy::surface::{classify, classify_home, host_settings, HOST_HOMES};
        let hosts = [
            Host::Claude,
            Host::Codex,
            Host::Gemini,
            Host::Copilot,
            Host::Opencode,
        ];
        let plain = |n: &str| (n == "HOME").then(|| "/h".to_string());
        let moved = |n: &str| match n {
            "HOME" => Some("/h".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            "COPILOT_HOME" => Some("/cp".to_string()),
            "XDG_CONFIG_HOME" => Some("/x".to_string()),
            _ => None,
        };
        type Var<'a> = &'a dyn Fn(&str) -> Option<String>;
        let envs: [Var; 2] = [&plain, &moved];
        let cwd = Path::new("/p");
        let mut checked = 0;
        for var in envs {
            let os_var = |n: &str| var(n).map(std::ffi::OsString::from);
            // Where the scan sees the file: relative to the project's root, or to the home
            // (a place the environment moved stands for its directory below the home).
            let on_scan_surface = |file: &Path| {
                if let Ok(rel) = file.strip_prefix(cwd) {
                    return classify(rel, &|_| false).is_some();
                }
                let mut rel = file.strip_prefix("/h").ok().map(Path::to_path_buf);
                for (name, below_home) in HOST_HOMES {
                    if let Some(rest) = var(name).and_then(|d| file.strip_prefix(d).ok()) {
                        rel = Some(Path::new(below_home).join(rest));
                    }
                }
                let rel = rel.unwrap_or_else(|| panic!("{}: where is it?", file.display()));
                classify_home(&rel).is_some() || classify(&rel, &|_| false).is_some()
            };
            for host in hosts {
                for scope in [Scope::Project, Scope::User] {
                    let (anchor, rel) =
                        crate::install::settings_place(host, scope, cwd, var).unwrap();
                    let file = anchor.join(rel);
                    assert!(
                        host_settings(&file, &os_var).is_some(),
                        "{}: not denied to the file tools",
                        file.display()
                    );
                    assert!(on_scan_surface(&file), "{}: not scanned", file.display());
                    checked += 1;
                    if let Ok((anchor, rel)) = crate::install_mcp::place(host, scope, cwd, var) {
                        let file = anchor.join(rel);
                        assert!(on_scan_surface(&file), "{}: not scanned", file.display());
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 2 * (10 + 6));
    }

    #[test]
    fn nul_is_refused() {
        assert!(exec_line(Some((Path::new("/c"), Host::Claude)), None, None, "a\0b").is_err());
    }

    /// The hook's deadline passes after the worker recorded `allow` (and, for a second call,
    /// an ask deferred to the host): the host is told to block, and the log says so after
    /// each decision — a refusal (`builtin:deadline`) for the same call id, durable before the
    /// answer. The real decision path (policy file, gate, audit log on disk); only the delay
    /// after the decision is the test's (its worker sleeps past the deadline).
    #[test]
    fn a_deadline_passed_after_the_decision_was_recorded_is_recorded_as_a_block() {
        let ws = tempfile::tempdir().unwrap();
        let policy = ws.path().join("cordon.toml");
        let log = ws.path().join("audit.jsonl");
        std::fs::write(
            &policy,
            format!(
                "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
                 [approval]\naudit_log = \"{}\"\n[shell]\ndefault = \"allow\"\n\
                 [[shell.rules]]\npattern = \"git push\"\naction = \"ask\"\n",
                log.display()
            ),
        )
        .unwrap();
        let input = |line: &str| {
            serde_json::json!({
                "session_id": "s", "transcript_path": "/t", "cwd": ws.path(),
                "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": { "command": line }
            })
            .to_string()
        };
        // Generous for a loaded machine: the decision must have started within it (a
        // decision still being recorded at the deadline is waited for, LATE_RECORD).
        let deadline = Duration::from_secs(5);
        for (n, line) in ["echo hi", "git push"].into_iter().enumerate() {
            let (policy, bytes) = (policy.clone(), input(line));
            let reply = within(deadline, move |recorded| {
                let reply = respond(Host::Claude, Some(&policy), bytes.as_bytes(), recorded);
                // Decided and recorded; the answer misses the deadline.
                std::thread::sleep(Duration::from_secs(12));
                reply
            });
            assert_eq!(reply.code, EXIT_BLOCK, "{reply:?}");
            assert!(
                reply
                    .stderr
                    .contains("no decision within the hook's 5 s deadline")
                    && !reply.stderr.contains("warning"),
                "{reply:?}"
            );
            let records: Vec<cordon_approval::audit::Record> = std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(records.len(), 2 * (n + 1), "{records:?}");
            let (decision, refusal) = (&records[2 * n], &records[2 * n + 1]);
            match n {
                0 => assert_eq!(decision.decision, cordon_policy::Action::Allow),
                _ => assert_eq!(decision.deferred_to.as_deref(), Some("claude-code")),
            }
            assert_eq!(refusal.kind, cordon_approval::audit::Kind::Refusal);
            assert_eq!(refusal.decision, cordon_policy::Action::Deny);
            assert_eq!(refusal.by.to_string(), "builtin:deadline");
            assert_eq!(refusal.request, decision.request, "the same call");
            assert_eq!(refusal.session, decision.session);
            assert!(
                refusal.reason.starts_with(
                    "blocked after its decision was recorded: no decision within the hook's 5 s deadline"
                ),
                "{}",
                refusal.reason
            );
        }
        assert!(cordon_approval::audit::verify(&log).unwrap().is_intact());

        // A deadline that passes before anything was recorded adds nothing to the log.
        let before = std::fs::read_to_string(&log).unwrap();
        let reply = within(Duration::from_millis(500), |_| {
            std::thread::sleep(Duration::from_secs(3));
            Reply::block("never")
        });
        assert_eq!(reply.code, EXIT_BLOCK);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), before);
    }
}
