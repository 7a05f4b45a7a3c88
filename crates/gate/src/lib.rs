//! cordon's gate: one tool call, assessed → decided → recorded → run.
//!
//! Every front end — `cordon exec` on a terminal, `cordon check`, the MCP server, the agent
//! hosts' pre-tool hooks — goes through a [`Gate`], opened for its [`FrontEnd`] (who answers an
//! ask). The gate owns what a call needs: the loaded (and trusted) policy, the approval
//! [`Engine`] with the remembered "approve always" rules, the session,
//! the hash-chained audit log and the chosen kernel-sandbox backend. A front end builds a
//! [`Call`], has it decided — the engine's one evaluator gives an [`Outcome`]; an ask goes to a
//! person through an [`Asker`] (a terminal, an MCP elicitation, or [`nobody`]), or back to an
//! agent host — and runs what was allowed:
//!
//! ```text
//!   Gate::shell / Gate::file ──▶ Call ──▶ Gate::explain  (pure: rules, grants, doom loop, mode)
//!        (assess: what it means)   │      = what `cordon check` prints and the prompt previews
//!                                  └────▶ Gate::decide   (the same, + the doom-loop count, the
//!                                             │           FrontEnd's answer to an ask)
//!                                             │ recorded in the audit log before return
//!                                             ▼
//!                                  Decision ──▶ Gate::run (kernel sandbox / file tools)
//! ```
//!
//! Errors are one [`Error`]: the lower crates' errors as they are (policy, approval, sandbox,
//! tools) and the gate's own refusals and failures, each with its [`Error::exit_code`].
//!
//! A policy no backend can enforce is refused when the gate is opened, before any call; the
//! sandbox is prepared then, once, and each run checks right before it starts that no root
//! or protected path was re-pointed by a planted symlink (refused, 125, nothing runs).
//! Nothing runs that is not recorded: a decision whose record cannot be
//! written is a denial.
//!
//! A command under a policy, in a dozen lines (the project directory is the one writable
//! root; the policy allows `echo`, and its default is `ask`):
//!
//! ```
//! use cordon_gate::{Command, Gate, Options, Output, RunOptions};
//!
//! let project = tempfile::tempdir()?;
//! let state = tempfile::tempdir()?;
//! std::fs::write(project.path().join("cordon.toml"), format!(
//!     "version = 1\n[sandbox.paths.project]\nroot = \".\"\nmode = \"rw\"\n\
//!      [[shell.rules]]\npattern = \"echo\"\naction = \"allow\"\n\
//!      [approval]\naudit_log = \"{}/audit.jsonl\"\n", state.path().display()))?;
//!
//! let mut options = Options::new(project.path().to_path_buf());
//! options.policy = Some(project.path().join("cordon.toml"));
//! let gate = Gate::open(options)?;
//! let call = gate.shell(Command::Line("echo hello from the sandbox".into()), None)?;
//! // Nobody to ask here: an `ask` would be a denial, recorded as such.
//! let decision = gate.decide(&call, &mut cordon_gate::nobody());
//! assert!(decision.is_allowed(), "{}", decision.message());
//! let ran = gate.run(&call, &decision, RunOptions { output: Output::Capture { limit: 1 << 20 }, ..RunOptions::default() })?;
//! assert_eq!(ran.stdout, b"hello from the sandbox\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod after_run;
mod capture;
mod credentials;
pub mod examples;
pub mod host_grant;
pub mod network;
mod paths;
mod requests;
pub mod session;
mod text;

mod call;
mod decide;
pub mod mcp;
mod open;
mod refusal;
mod run;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cordon_approval::audit::AuditLog;
use cordon_approval::{amend, Engine, Key, Presentation, Preview, Rules};
use cordon_ossandbox::{Machine, Prepared, Profile};
use cordon_policy::trust::{self, TrustStore};
use cordon_policy::{Action, ApprovalMode, Mode, Policy};
use cordon_tools::assess::{assess, ShellContext, ShellReading};
use cordon_tools::shell;
use cordon_tools::tool::{Assessment, Toolbox};

pub use after_run::{live_runs_over, Watch};
pub use cordon_approval::{
    Answer, AskError, Asker, AsyncAsker, By, Explanation, Outcome, Pending, Request,
};
/// The switch that cancels a run ([`RunOptions::cancel`]).
pub use cordon_ossandbox::Cancel;
pub use examples::{example_results, ExampleResult};
pub use text::clean;

/// cordon's own failure (bad policy, sandbox unavailable, audit log unwritable).
pub const EXIT_FAILURE: i32 = 125;
/// Denied by policy or approval, or not executable.
pub const EXIT_DENIED: i32 = 126;
/// The program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// Who answers an ask, said once when the gate is opened. The engine returns an ask as an
/// ask ([`Outcome::Ask`]); what becomes of it is this front end's business:
///
/// | front end | an ask is | recorded as |
/// | --- | --- | --- |
/// | `Terminal` (`cordon exec`) | asked on the terminal; without one, denied saying how to approve | `allow`/`deny` by `user`, or `deny` by `nobody-to-ask` |
/// | `Host(name)` (`cordon hook`) | handed back to the host's own prompt ([`Gate::decide`] returns it) | `ask`, `deferred_to: NAME` |
/// | `Mcp` (`cordon mcp`) | asked by elicitation; without it, denied saying how to approve | `allow`/`deny` by `user`, or `deny` by `nobody-to-ask` |
/// | `Check` (`cordon check`) | printed ([`Gate::explain`]); nothing is recorded | — |
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontEnd {
    /// `cordon exec`: a person on a terminal, asked through the [`Asker`] given to
    /// [`Gate::decide`] ([`nobody`] when there is no terminal).
    Terminal,
    /// An agent host's pre-tool hook (`cordon hook`), named as the audit log's client: the
    /// host asks its own user, and runs the command itself (rewritten through `cordon exec`),
    /// so no sandbox is prepared and [`Gate::run`] refuses.
    Host(String),
    /// The MCP server: the client's user, asked by elicitation ([`nobody`] when the client
    /// cannot show a form).
    Mcp,
    /// `cordon check`: explains calls, never decides, records or runs them (no audit log, no
    /// sandbox).
    Check,
}

impl FrontEnd {
    /// Whether this front end runs the calls it decides.
    fn runs(&self) -> bool {
        matches!(self, FrontEnd::Terminal | FrontEnd::Mcp)
    }
}

/// What opens a gate: the meaning of the CLI's flags, filled by every front end.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--policy F`; `None`: `./cordon.toml` in `cwd` if the operator trusted it, else the
    /// embedded default.
    pub policy: Option<PathBuf>,
    /// Where calls happen by default.
    pub cwd: PathBuf,
    /// Overrides `sandbox.backend`.
    pub backend: Option<cordon_policy::Backend>,
    /// Overrides `approval.mode`; `approve-all` is refused when the policy says `strict` or
    /// `deny` (whoever starts cordon — an agent, too — must not loosen the policy).
    pub mode: Option<ApprovalMode>,
    /// A named session (`--session`, `CORDON_SESSION`): grants and the doom-loop count
    /// carried from one process to the next.
    pub session: Option<String>,
    /// The agent host or MCP client making the calls, written into every audit record
    /// (`None` with [`FrontEnd::Host`]: the host's name).
    pub client: Option<String>,
    /// Who answers an ask (see [`FrontEnd`]).
    pub front_end: FrontEnd,
    /// A host grant to use up (`cordon exec --host-grant ID -c LINE`): consumed against the
    /// policy this gate discovers, the one it then runs under ([`host_grant::consume`]); the
    /// host whose user approved becomes the client ([`Gate::granted_by`]).
    pub host_grant: Option<host_grant::Claim>,
    /// A run Codex starts inside its own sandbox (`cordon exec --state codex`, as Codex's hook
    /// rewrites a call): it records to `LOGDIR/codex/audit.jsonl` and keeps its scans there
    /// ([`cordon_policy::CODEX_STATE_DIR`]), the one directory install makes writable in
    /// Codex's sandbox; the policy's own log joins the logs kept from the command.
    pub codex_state: bool,
}

impl Options {
    /// The defaults: discovered policy, the policy's backend and mode, no session, no client,
    /// a terminal front end.
    pub fn new(cwd: PathBuf) -> Options {
        Options {
            policy: None,
            cwd,
            backend: None,
            mode: None,
            session: None,
            client: None,
            front_end: FrontEnd::Terminal,
            host_grant: None,
            codex_state: false,
        }
    }
}

/// Why the gate could not do what it was asked: the lower crates' errors as they are, and the
/// gate's own refusals and failures. [`Error::exit_code`] is what a CLI returns; `Display` is
/// one line, safe for a terminal, and [`Error::detail`] the lines to show after it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The policy cannot be used (unreadable, invalid, untrusted, changed since trusted): 125.
    Policy(cordon_policy::PolicyError),
    /// The remembered "approve always" rules cannot be used: 125.
    Rules(cordon_approval::Error),
    /// The approval layer failed (the audit log cannot be opened or written): 125.
    Approval(cordon_approval::Error),
    /// The kernel sandbox refused or failed (127 not found, 126 cannot execute, 125
    /// otherwise), with what its builder printed.
    Sandbox {
        error: cordon_ossandbox::Error,
        output: Vec<String>,
    },
    /// A file tool refused the call (invalid arguments, a path outside the roots): 126.
    Tool(cordon_tools::tool::ToolError),
    /// A rule's `match`/`not_match` example fails: the policy does not say what its author
    /// meant, so it is not used (125).
    Example(Box<ExampleResult>),
    /// The gate refused the call (a cwd outside the roots, a run of a call not allowed): 126.
    Refused(String),
    /// cordon's own failure (a policy no backend can run, nowhere to record): 125, with lines
    /// to show after the message.
    Failed {
        message: String,
        detail: Vec<String>,
    },
    /// A front end ends with this code and message (a timed-out run: 124).
    Exit { code: i32, message: String },
}

impl Error {
    /// An error with its exit code: 125 [`Error::Failed`], 126 [`Error::Refused`], any other
    /// [`Error::Exit`]. The message is made safe for a terminal.
    pub fn new(code: i32, message: impl std::fmt::Display) -> Error {
        let message = clean(&message.to_string());
        match code {
            EXIT_FAILURE => Error::Failed {
                message,
                detail: Vec::new(),
            },
            EXIT_DENIED => Error::Refused(message),
            code => Error::Exit { code, message },
        }
    }

    /// cordon's own failure (125).
    pub fn failure(message: impl std::fmt::Display) -> Error {
        Error::new(EXIT_FAILURE, message)
    }

    /// The exit code a CLI returns for it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Policy(_)
            | Error::Rules(_)
            | Error::Approval(_)
            | Error::Example(_)
            | Error::Failed { .. } => EXIT_FAILURE,
            Error::Sandbox { error, .. } => error.exit_code(),
            Error::Tool(_) | Error::Refused(_) => EXIT_DENIED,
            Error::Exit { code, .. } => *code,
        }
    }

    /// The lines to show after the message (how a trusted policy file changed, what the
    /// sandbox's builder printed), each safe for a terminal.
    pub fn detail(&self) -> Vec<String> {
        let diff = |e: &cordon_policy::PolicyError| {
            e.diff()
                .unwrap_or_default()
                .lines()
                .map(clean)
                .collect::<Vec<_>>()
        };
        match self {
            Error::Policy(e) | Error::Rules(cordon_approval::Error::Policy(e)) => diff(e),
            Error::Sandbox { output, .. } => output.clone(),
            Error::Failed { detail, .. } => detail.clone(),
            _ => Vec::new(),
        }
    }

    /// The message, then `lines` shown after it (each made safe for a terminal). Only cordon's
    /// own failures and the sandbox's carry lines; any other error becomes a failure (125)
    /// with its message.
    pub fn with_detail<'a>(self, lines: impl IntoIterator<Item = &'a str>) -> Error {
        let lines = lines.into_iter().map(clean);
        match self {
            Error::Failed {
                message,
                mut detail,
            } => {
                detail.extend(lines);
                Error::Failed { message, detail }
            }
            Error::Sandbox { error, mut output } => {
                output.extend(lines);
                Error::Sandbox { error, output }
            }
            other => Error::Failed {
                message: other.to_string(),
                detail: other.detail().into_iter().chain(lines).collect(),
            },
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = match self {
            Error::Policy(e) => e.to_string(),
            Error::Rules(e) => format!("remembered rules {e}"),
            Error::Approval(e) => e.to_string(),
            Error::Sandbox { error, .. } => error.to_string(),
            Error::Tool(e) => e.to_string(),
            Error::Example(r) => r.message(),
            Error::Refused(m)
            | Error::Failed { message: m, .. }
            | Error::Exit { message: m, .. } => return f.write_str(m),
        };
        f.write_str(&clean(&line))
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Policy(e) => Some(e),
            Error::Rules(e) | Error::Approval(e) => Some(e),
            Error::Sandbox { error, .. } => Some(error),
            Error::Tool(e) => Some(e),
            _ => None,
        }
    }
}

impl From<cordon_policy::PolicyError> for Error {
    fn from(e: cordon_policy::PolicyError) -> Error {
        Error::Policy(e)
    }
}

impl From<cordon_approval::Error> for Error {
    fn from(e: cordon_approval::Error) -> Error {
        Error::Approval(e)
    }
}

impl From<cordon_ossandbox::Error> for Error {
    fn from(error: cordon_ossandbox::Error) -> Error {
        Error::Sandbox {
            error,
            output: Vec::new(),
        }
    }
}

impl From<cordon_tools::tool::ToolError> for Error {
    fn from(e: cordon_tools::tool::ToolError) -> Error {
        Error::Tool(e)
    }
}

/// A shell call's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A line for the shell (bash where installed: the analysis is bash's).
    Line(String),
    /// A program and its arguments, no shell.
    Argv(Vec<String>),
}

/// One call, assessed, ready to be decided and run.
pub struct Call {
    request: Request,
    shown: String,
    preview: String,
    what: What,
}

enum What {
    Shell(Box<ShellRun>),
    File(Box<Assessment>),
}

/// Everything a shell call's run needs, prepared before it is decided.
struct ShellRun {
    argv: Vec<String>,
    cwd: PathBuf,
    assessment: ShellReading,
}

impl Call {
    /// The client's own id for this call (an MCP request id), recorded in the audit record
    /// as `client_request` beside cordon's `request`.
    pub fn with_client_request(mut self, id: impl Into<String>) -> Call {
        self.request.client_request = Some(id.into());
        self
    }

    /// The request's id: the audit record's `request`.
    pub fn id(&self) -> &str {
        &self.request.id
    }
    /// `shell` or the file tool's name.
    pub fn tool(&self) -> &str {
        &self.request.tool
    }
    /// The call on one line: the command line, or the tool and its path.
    pub fn shown(&self) -> &str {
        &self.shown
    }
    /// What to show a person: the commands with what the rules say of each, or a diff.
    pub fn preview(&self) -> &str {
        &self.preview
    }
    pub fn request(&self) -> &Request {
        &self.request
    }
    /// The shell tool's reading of a shell call.
    pub fn shell_assessment(&self) -> Option<&ShellReading> {
        match &self.what {
            What::Shell(s) => Some(&s.assessment),
            What::File(_) => None,
        }
    }
    /// The file tool's reading of a file call.
    pub fn tool_assessment(&self) -> Option<&Assessment> {
        match &self.what {
            What::File(a) => Some(a),
            What::Shell(_) => None,
        }
    }
    /// The program and arguments a shell call runs.
    pub fn argv(&self) -> &[String] {
        match &self.what {
            What::Shell(s) => &s.argv,
            What::File(_) => &[],
        }
    }
}

/// How a call was decided: the engine's [`Outcome`] with the call's id and the notices for
/// the person — or cordon's failure to decide or record it.
#[derive(Debug, Clone)]
pub struct Decision {
    request: String,
    shown: String,
    kind: DecisionKind,
    /// Messages for the person at the front end (e.g. "remembered in …"), in order.
    pub notices: Vec<String>,
}

#[derive(Debug, Clone)]
enum DecisionKind {
    /// What the engine decided: allowed, denied, or (for [`FrontEnd::Host`]) an ask handed to
    /// the host, recorded as such.
    Decided(Outcome),
    /// cordon could not decide or record (audit log, session store): nothing runs.
    Failed { by: Option<By>, reason: String },
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        matches!(&self.kind, DecisionKind::Decided(o) if o.is_allowed())
    }
    /// An ask handed back to an agent host ([`FrontEnd::Host`]): its own prompt asks.
    pub fn is_ask(&self) -> bool {
        matches!(&self.kind, DecisionKind::Decided(o) if o.is_ask())
    }
    /// What the engine decided; `None` when cordon failed to decide or record.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.kind {
            DecisionKind::Decided(o) => Some(o),
            DecisionKind::Failed { .. } => None,
        }
    }
    /// What decided (for an ask: what raised it); `None` when cordon failed before the
    /// engine did.
    pub fn by(&self) -> Option<&By> {
        match &self.kind {
            DecisionKind::Decided(o) => Some(o.by()),
            DecisionKind::Failed { by, .. } => by.as_ref(),
        }
    }
    pub fn reason(&self) -> &str {
        match &self.kind {
            DecisionKind::Decided(o) => o.reason(),
            DecisionKind::Failed { reason, .. } => reason,
        }
    }
    /// The person's note for the agent on a denial.
    pub fn note(&self) -> Option<&str> {
        match &self.kind {
            DecisionKind::Decided(Outcome::Denied { note, .. }) => note.as_deref(),
            _ => None,
        }
    }
    /// 0 allowed, 126 denied (or an ask not answered here), 125 when cordon could not decide
    /// or record.
    pub fn exit_code(&self) -> i32 {
        match &self.kind {
            DecisionKind::Decided(o) if o.is_allowed() => 0,
            DecisionKind::Decided(_) => EXIT_DENIED,
            DecisionKind::Failed { .. } => EXIT_FAILURE,
        }
    }
    /// One line, safe for a terminal: ``denied: `CMD`: REASON [BY]; note: …``.
    pub fn message(&self) -> String {
        match &self.kind {
            DecisionKind::Decided(Outcome::Allowed { by, reason, .. }) => {
                clean(&format!("allowed: `{}`: {reason} [{by}]", self.shown))
            }
            DecisionKind::Decided(Outcome::Denied { by, reason, note }) => {
                let note = note
                    .as_ref()
                    .map(|n| format!("; note: {n}"))
                    .unwrap_or_default();
                clean(&format!("denied: `{}`: {reason} [{by}]{note}", self.shown))
            }
            DecisionKind::Decided(Outcome::Ask(p)) => clean(&format!(
                "needs approval: `{}`: {} [{}]",
                self.shown, p.reason, p.by
            )),
            DecisionKind::Failed { reason, .. } => clean(reason),
        }
    }
    /// The request this decision is for.
    pub fn request_id(&self) -> &str {
        &self.request
    }

    fn failed(call: &Call, by: Option<By>, reason: impl Into<String>) -> Decision {
        Decision {
            request: call.request.id.clone(),
            shown: call.shown.clone(),
            kind: DecisionKind::Failed {
                by,
                reason: reason.into(),
            },
            notices: Vec::new(),
        }
    }
}

/// An outcome with the rules its answer saved (to take back should its record fail) and the
/// notices for the person, all of this one decision's.
struct Concluded {
    outcome: Outcome,
    saved: Vec<String>,
    notices: Vec<String>,
}

impl Concluded {
    /// An outcome the engine reached without an answer: nothing was saved.
    fn of(outcome: Outcome) -> Concluded {
        Concluded {
            outcome,
            saved: Vec::new(),
            notices: Vec::new(),
        }
    }
}

/// A decision whose record may still be syncing ([`Gate::decide_provisional`]): run it with
/// [`Gate::run_provisional`], which builds the sandbox meanwhile and starts the command only
/// once the record is durable; [`Provisional::durable`] waits for it.
#[derive(Debug)]
#[must_use = "a provisional decision is handed out only by Provisional::durable or Gate::run_provisional"]
pub struct Provisional {
    decision: Decision,
    /// The thread making the record durable: `Err` is the denial when it could not.
    sync: Option<std::thread::JoinHandle<Result<(), Outcome>>>,
}

impl Provisional {
    /// The decision as it will stand if its record becomes durable: its notices may be
    /// shown, and a denial is final; an allow runs only through [`Gate::run_provisional`].
    pub fn provisional(&self) -> &Decision {
        &self.decision
    }

    /// The decision, once its record is durable (an allow whose record could not be made
    /// durable is a failure: nothing runs).
    pub fn durable(self) -> Decision {
        let Some(sync) = self.sync else {
            return self.decision;
        };
        let outcome = synced(sync);
        durable_decision(self.decision, outcome)
    }
}

/// Starts a helper thread of a run (a record's sync, the after-run marker) with the signals a
/// run forwards blocked in it: a SIGTERM meant for the command that arrives while it works
/// must reach the run's signalfd (and be forwarded), not kill cordon in this thread.
pub(crate) fn spawn_helper<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    #[cfg(target_os = "linux")]
    let _mask = cordon_ossandbox::block_forwarded_signals()?;
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// What the thread making a record durable handed out (a thread that panicked: a denial).
#[allow(clippy::result_large_err)] // the denial is what the run reports; one per run
fn synced(sync: std::thread::JoinHandle<Result<(), Outcome>>) -> Result<(), Outcome> {
    sync.join().unwrap_or_else(|_| {
        Err(Outcome::Denied {
            by: By::AuditFailed,
            reason: "the decision's record could not be made durable (its sync panicked): not run"
                .into(),
            note: None,
        })
    })
}

/// `provisional` as the durable `outcome` makes it: unchanged when the record is durable, a
/// failure (nothing runs) when the sync turned the allow into [`By::AuditFailed`].
fn durable_decision(provisional: Decision, synced: Result<(), Outcome>) -> Decision {
    match synced {
        Err(Outcome::Denied { by, reason, .. }) => Decision {
            kind: DecisionKind::Failed {
                by: Some(by),
                reason,
            },
            ..provisional
        },
        _ => provisional,
    }
}

/// How to run an allowed call.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// `None`: the policy's `sandbox.limits.timeout`.
    pub timeout: Option<Duration>,
    pub output: Output,
    /// Kills a shell call's whole process tree when cancelled (the run then ends with exit
    /// code 137, as if SIGKILLed). A file call is not interrupted.
    pub cancel: Option<Cancel>,
    /// Under `sandbox.network = "proxy"`: who is asked about a connection the rules leave to
    /// "ask" while the command runs — one question at a time, with the command's terminal
    /// taken from it meanwhile (its output waits) and given back after the answer. `None`: such
    /// a connection is denied, and recorded as denied.
    pub ask: Option<SharedAsker>,
    /// What the command reads: cordon's own stdin and terminal, or nothing at all.
    pub input: Input,
}

/// An asker shared by the threads that decide a run's connections.
pub type SharedAsker = Arc<Mutex<dyn Asker + Send>>;

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("timeout", &self.timeout)
            .field("output", &self.output)
            .field("cancel", &self.cancel)
            .field("ask", &self.ask.is_some())
            .field("input", &self.input)
            .finish()
    }
}

/// What a shell call's command reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Input {
    /// cordon's own stdin, and its terminal's keys where the run is interactive.
    #[default]
    Inherit,
    /// Nothing: stdin is at end of file, and a terminal the command is given (its own pty,
    /// for output) reads end of file too. For a command an agent host runs, where whatever
    /// is typed into it later (Codex's `write_stdin`, Copilot's `write_bash`) would be
    /// commands no hook decides: what the policy allowed is the line, not the keys.
    Nothing,
}

/// Where a shell call's output goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Output {
    /// cordon's own stdin, stdout and stderr (through the sandbox's pty or pipes).
    #[default]
    Inherit,
    /// Collected: each stream keeps its first `limit` bytes; the rest is read and dropped
    /// (counted in [`Ran::truncated`]), never buffered. stdin is empty.
    Capture { limit: usize },
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    /// The child's status; 128+N when it died of signal N; 124 on timeout. 0 for a file call.
    pub exit_code: i32,
    /// Empty with [`Output::Inherit`]. A file call: the tool's result.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Something was dropped past the capture limit.
    pub truncated: bool,
    /// Killed (with every descendant) when the timeout expired.
    pub timed_out: bool,
}

/// The asker of a front end with nobody to ask (no terminal, an MCP client that cannot show a
/// form): every ask is a denial [`By::NobodyToAsk`], whose reason the gate words for its
/// [`FrontEnd`] — what needed approval, and how a person can give it.
pub fn nobody() -> impl Asker {
    |_: &Request, _: &Pending, _: Instant| -> Result<Answer, AskError> {
        Err(AskError::NobodyToAsk(String::new()))
    }
}

/// A loaded policy, its engine, audit log and sandbox backend. `Send + Sync`: share it in an
/// `Arc`; calls may be decided and run concurrently (the engine is locked while it decides,
/// never while a person is asked or a command runs).
pub struct Gate {
    policy: Policy,
    cwd: PathBuf,
    named: PathBuf,
    /// The sandbox every shell call runs in, prepared once when the gate is opened; `None`
    /// for a gate that only checks ([`FrontEnd::Check`]).
    sandbox: Option<Prepared>,
    /// Who answers an ask.
    front_end: FrontEnd,
    warnings: Vec<String>,
    engine: Mutex<Engine>,
    inherited: shell::Inherited,
    rules_file: Result<PathBuf, NoRulesFile>,
    saved: Arc<Mutex<Vec<String>>>,
    notices: Arc<Mutex<Vec<String>>>,
    store: TrustStore,
    session: Option<String>,
    audit_path: PathBuf,
    audit_session: String,
    /// The log is the state apart of the runs inside Codex's sandbox ([`Options::codex_state`]),
    /// which processes outside cordon can write: its journaled moves are never finished.
    state_apart: bool,
    toolbox: std::sync::OnceLock<Result<Toolbox, cordon_tools::tool::ToolError>>,
    /// The host whose user approved the call of a consumed host grant.
    granted_by: Option<String>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data: keep going with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The variables the command's shell inherits: exactly the names of the scrubbed environment
/// the child gets. A variable outside it that the line assigns without exporting reaches no
/// program, so `for FILE in …` need not ask.
pub fn inherited(policy: &Policy) -> shell::Inherited {
    shell::Inherited::exactly(cordon_ossandbox::inherited_names(policy))
}

/// Why there is no place to keep "approve always" rules: the embedded default policy is in
/// use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRulesFile;

impl std::fmt::Display for NoRulesFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot approve always: the embedded default policy is in use, and there is no policy file to keep rules beside (write a cordon.toml)")
    }
}

impl std::error::Error for NoRulesFile {}

/// Where "approve always" rules are kept: `cordon.rules.toml` beside the policy file. The
/// embedded default policy has no file, so nothing can be remembered for it.
pub fn persisted_rules_file(policy: &Policy) -> Result<PathBuf, NoRulesFile> {
    policy.rules_file().ok_or(NoRulesFile)
}

/// The policy's writable roots.
pub fn writable_roots(policy: &Policy) -> Vec<PathBuf> {
    policy
        .sandbox
        .paths
        .iter()
        .filter(|p| p.mode == Mode::ReadWrite)
        .map(|p| p.root.clone())
        .collect()
}
