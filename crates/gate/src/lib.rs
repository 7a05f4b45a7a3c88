//! cordon's gate: one tool call, assessed → decided → recorded → run.
//!
//! Every front end — `cordon exec` and `cordon check` on a terminal, the MCP server, the
//! agent hosts' pre-tool hooks — goes through a [`Gate`]. The gate owns what a call needs:
//! the loaded (and trusted) policy, the approval [`Engine`](cordon_approval::Engine) with the
//! remembered "approve always" rules, the session, the hash-chained audit log and the chosen
//! kernel-sandbox backend. A front end builds a [`Call`], has it decided by a person through an
//! [`Asker`] (a terminal, an MCP elicitation, or nobody), and runs what was allowed:
//!
//! ```text
//!   Gate::shell / Gate::file ──▶ Call ──▶ Gate::decide (rules, session, mode, Asker)
//!        (assess: what it means)              │ recorded in the audit log before return
//!                                             ▼
//!                                  Decision ──▶ Gate::run (kernel sandbox / file tools)
//! ```
//!
//! A run that can never happen (no backend can enforce the policy, a root re-pointed by a
//! planted symlink) is refused when the call is built, before anyone is asked and before
//! anything is recorded. Nothing runs that is not recorded: a decision whose record cannot be
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
pub mod examples;
pub mod host_grant;
pub mod network;
mod paths;
pub mod session;
mod text;
mod tmp;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cordon_approval::audit::AuditLog;
use cordon_approval::{amend, Engine, Key, Outcome, Presentation, Preview, RuleSet, Rules};
use cordon_ossandbox::run as sandbox_run;
use cordon_ossandbox::{choose, env, execute, Choice, Machine, Profile};
use cordon_policy::trust::{self, TrustStore};
use cordon_policy::{Action, ApprovalMode, Mode, Policy};
use cordon_tools::assess::{assess, ShellAssessment, ShellContext};
use cordon_tools::shell;
use cordon_tools::tool::{Assessment, Toolbox};

pub use cordon_approval::{Answer, AskError, Asker, AsyncAsker, By, Pending, Request};
/// The switch that cancels a run ([`RunOptions::cancel`]).
pub use cordon_ossandbox::run::Cancel;
pub use examples::{example_results, ExampleResult};
pub use text::clean;

/// cordon's own failure (bad policy, sandbox unavailable, audit log unwritable).
pub const EXIT_FAILURE: i32 = 125;
/// Denied by policy or approval, or not executable.
pub const EXIT_DENIED: i32 = 126;
/// The program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

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
    /// The agent host or MCP client making the calls, written into every audit record.
    pub client: Option<String>,
    /// Whether a person can be asked (a terminal, an elicitation). `false`: an ask denies.
    pub can_ask: bool,
    /// Whether this front end runs the calls it decides. `false` (`cordon hook`: the host
    /// runs the command, rewritten through `cordon exec`): a shell call skips the sandbox's
    /// preparation (its private TMPDIR, the kernel profile's checks), and `run` refuses.
    pub runs: bool,
}

impl Options {
    /// The defaults: discovered policy, the policy's backend and mode, no session, no client,
    /// nobody to ask.
    pub fn new(cwd: PathBuf) -> Options {
        Options {
            policy: None,
            cwd,
            backend: None,
            mode: None,
            session: None,
            client: None,
            can_ask: false,
            runs: true,
        }
    }
}

/// cordon's own failure or a refusal: one line, and the exit code a CLI returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    /// One line, safe for a terminal.
    pub message: String,
    /// Lines to show after it (e.g. how a trusted policy file changed), each safe as well.
    pub detail: Vec<String>,
}

impl Error {
    /// An error with its exit code; the message is made safe for a terminal.
    pub fn new(code: i32, message: impl std::fmt::Display) -> Error {
        Error {
            code,
            message: clean(&message.to_string()),
            detail: Vec::new(),
        }
    }

    /// cordon's own failure (125).
    pub fn failure(message: impl std::fmt::Display) -> Error {
        Error::new(EXIT_FAILURE, message)
    }

    /// The message, then `lines` shown after it (each made safe for a terminal).
    pub fn with_detail<'a>(mut self, lines: impl IntoIterator<Item = &'a str>) -> Error {
        self.detail.extend(lines.into_iter().map(clean));
        self
    }

    /// A policy error: its one line, then the differences from the trusted content, if any.
    fn policy(prefix: &str, e: &cordon_policy::PolicyError) -> Error {
        let mut err = Error::failure(format!("{prefix}{e}"));
        err.detail = e.diff().unwrap_or_default().lines().map(clean).collect();
        err
    }

    fn rules(e: &cordon_approval::Error) -> Error {
        match e {
            cordon_approval::Error::Policy(p) => Error::policy("remembered rules ", p),
            e => Error::failure(format!("remembered rules {e}")),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A shell call's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A line for the shell (bash where installed: the analysis is bash's).
    Line(String),
    /// A program and its arguments, no shell.
    Argv(Vec<String>),
}

/// The rules' answer to a call, nobody asked and nothing recorded (`cordon check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub action: Action,
    pub reason: String,
    /// Where the deciding rule is (`file:line:col (pattern)`), or `default`.
    pub rule: String,
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
    assessment: ShellAssessment,
    /// `None` on a gate that only checks.
    sandbox: Option<Sandbox>,
}

/// A shell call's sandbox, prepared when the call is built.
struct Sandbox {
    tmp: tmp::PrivateTmp,
    profile: Profile,
    choice: Choice,
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
    pub fn shell_assessment(&self) -> Option<&ShellAssessment> {
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

/// How a call was decided.
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
    Allowed {
        by: By,
        reason: String,
    },
    Denied {
        by: By,
        reason: String,
        note: Option<String>,
    },
    /// cordon could not decide or record (audit log, session store): nothing runs.
    Failed {
        by: Option<By>,
        reason: String,
    },
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        matches!(self.kind, DecisionKind::Allowed { .. })
    }
    /// What decided; `None` when cordon failed before the engine did.
    pub fn by(&self) -> Option<&By> {
        match &self.kind {
            DecisionKind::Allowed { by, .. } | DecisionKind::Denied { by, .. } => Some(by),
            DecisionKind::Failed { by, .. } => by.as_ref(),
        }
    }
    pub fn reason(&self) -> &str {
        match &self.kind {
            DecisionKind::Allowed { reason, .. }
            | DecisionKind::Denied { reason, .. }
            | DecisionKind::Failed { reason, .. } => reason,
        }
    }
    /// The person's note for the agent on a denial.
    pub fn note(&self) -> Option<&str> {
        match &self.kind {
            DecisionKind::Denied { note, .. } => note.as_deref(),
            _ => None,
        }
    }
    /// 0 allowed, 126 denied, 125 when cordon could not decide or record.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            DecisionKind::Allowed { .. } => 0,
            DecisionKind::Denied { .. } => EXIT_DENIED,
            DecisionKind::Failed { .. } => EXIT_FAILURE,
        }
    }
    /// One line, safe for a terminal: ``denied: `CMD`: REASON [BY]; note: …``.
    pub fn message(&self) -> String {
        match &self.kind {
            DecisionKind::Allowed { by, reason } => {
                clean(&format!("allowed: `{}`: {reason} [{by}]", self.shown))
            }
            DecisionKind::Denied { by, reason, note } => {
                let note = note
                    .as_ref()
                    .map(|n| format!("; note: {n}"))
                    .unwrap_or_default();
                clean(&format!("denied: `{}`: {reason} [{by}]{note}", self.shown))
            }
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
            .finish()
    }
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

/// An asker for when nobody can be asked: every ask is a denial ("the channel is lost").
pub fn nobody() -> impl Asker {
    |_: &Request, _: &Pending, _: Instant| -> Result<Answer, AskError> {
        Err(AskError::Lost("nobody can be asked".into()))
    }
}

/// A loaded policy, its engine, audit log and sandbox backend. `Send + Sync`: share it in an
/// `Arc`; calls may be decided and run concurrently (the engine is locked while it decides,
/// never while a person is asked or a command runs).
pub struct Gate {
    policy: Policy,
    cwd: PathBuf,
    named: PathBuf,
    backend: cordon_policy::Backend,
    /// `None` for a gate that only checks ([`Gate::open_dry`]).
    machine: Option<Machine>,
    dry: bool,
    /// [`Options::runs`].
    runs: bool,
    warnings: Vec<String>,
    engine: Mutex<Engine>,
    /// The shell rules the tool's reading uses: the policy's, then the remembered ones.
    shell_rules: cordon_policy::Shell,
    inherited: shell::Inherited,
    rules_file: Result<PathBuf, String>,
    saved: Arc<Mutex<Vec<String>>>,
    notices: Arc<Mutex<Vec<String>>>,
    store: TrustStore,
    session: Option<String>,
    audit_path: PathBuf,
    audit_session: String,
    toolbox: std::sync::OnceLock<Result<Toolbox, String>>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data: keep going with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Gate {
    /// Loads the policy (trusted, examples checked), the remembered rules, the session and
    /// the audit log, and picks the sandbox backend. Refuses (125) what could never run.
    pub fn open(opts: Options) -> Result<Gate, Error> {
        Gate::load(opts, false)
    }

    /// A gate for `cordon check`: the same policy, rules and tools' reading, but no audit log,
    /// no session and no sandbox. It builds and checks calls; it never decides or runs them.
    pub fn open_dry(opts: Options) -> Result<Gate, Error> {
        Gate::load(opts, true)
    }

    fn load(opts: Options, dry: bool) -> Result<Gate, Error> {
        let cwd = opts.cwd.clone();
        let store = TrustStore::from_env();
        let policy = Policy::discover_in(opts.policy.as_deref(), &cwd, &store)
            .map_err(|e| Error::policy("", &e))?;
        examples::check(&policy).map_err(Error::failure)?;
        let named = opts
            .policy
            .clone()
            .unwrap_or_else(|| cwd.join(cordon_policy::DEFAULT_POLICY_FILE));

        let backend = opts.backend.unwrap_or(policy.sandbox.backend);
        let (machine, warnings) = if dry {
            (None, Vec::new())
        } else {
            let machine = Machine::probe();
            // The backend is chosen again for each call (its profile has the call's TMPDIR); a
            // policy no backend can run is refused now, before any call.
            let probe_profile = Profile::from_policy(&policy);
            let first = choose(
                backend,
                &probe_profile,
                policy.sandbox.require_os_sandbox,
                &machine,
            )
            .map_err(Error::failure)?;
            tracing::debug!(policy = %policy.source, backend = ?first.backend, "gate open");
            // Before the audit log is opened (and created): nothing is recorded through a link.
            named_through_links(&policy, &named, &probe_profile)?;
            (Some(machine), first.warnings)
        };

        // The engine: the policy's rules, remembered "approve always" rules, the mode.
        let rules_file = persisted_rules_file(&policy);
        let mut rules = Rules::from_policy(&policy);
        let mut shell_rules = policy.shell.clone();
        if let Ok(file) = &rules_file {
            let persisted = amend::load(file, &store).map_err(|e| Error::rules(&e))?;
            shell_rules.rules.extend(persisted.shell.iter().cloned());
            rules.add_persisted(persisted);
        }
        let mut engine = Engine::with_rules(rules, &policy);
        match opts.mode {
            Some(ApprovalMode::ApproveAll) => {
                if matches!(
                    policy.approval.mode,
                    ApprovalMode::Strict | ApprovalMode::Deny
                ) {
                    return Err(Error::failure(format!(
                        "--approve-all cannot loosen the policy's approval.mode = \"{}\" ({}); change the policy to allow it",
                        cordon_approval::mode_name(policy.approval.mode),
                        policy.source
                    )));
                }
                engine.set_mode(ApprovalMode::ApproveAll);
            }
            Some(m) => engine.set_mode(m),
            None => {}
        }
        engine.set_can_ask(opts.can_ask);

        // "Approve always" rules are saved as part of the decision, so its record says whether
        // the rule was saved. What was written is kept, to be taken back should the record
        // fail.
        let saved: Arc<Mutex<Vec<String>>> = Arc::default();
        let notices: Arc<Mutex<Vec<String>>> = Arc::default();
        if let Ok(file) = rules_file.clone() {
            let saved = saved.clone();
            let notices = notices.clone();
            let store = store.clone();
            engine.set_rule_store(move |a| {
                let wrote = amend::append(&file, &store, a).map_err(|e| e.to_string());
                match &wrote {
                    Ok(Some(text)) => {
                        lock(&saved).push(text.clone());
                        lock(&notices).push(format!(
                            "remembered in {}: `{}` (exact)",
                            file.display(),
                            clean(&a.pattern)
                        ));
                    }
                    Ok(None) => {}
                    Err(e) => lock(&notices).push(format!("warning: not remembered: {}", clean(e))),
                }
                wrote
            });
        }

        // The session's id names the audit records; its directory must be out of reach.
        let writable = writable_roots(&policy);
        // A new session is saved at once, so that every process of it records the same id.
        let session_id = match &opts.session {
            Some(_) if dry => None,
            Some(name) => {
                let mut s = session::Session::open(name, &writable).map_err(Error::failure)?;
                s.restore(&mut engine);
                s.save_from(&engine).map_err(Error::failure)?;
                Some(s.id)
            }
            None => None,
        };

        let (audit_path, audit_session) = if dry {
            (PathBuf::new(), String::new())
        } else {
            open_audit(
                &policy,
                &mut engine,
                session_id.as_deref(),
                opts.client.as_deref(),
            )?
        };
        let inherited = inherited(&policy);
        Ok(Gate {
            cwd,
            named,
            backend,
            machine,
            dry,
            runs: opts.runs,
            warnings,
            engine: Mutex::new(engine),
            shell_rules,
            inherited,
            rules_file,
            saved,
            notices,
            store,
            session: if dry { None } else { opts.session },
            audit_path,
            audit_session,
            toolbox: std::sync::OnceLock::new(),
            policy,
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The policy file to hand to a child `cordon exec --policy` (absolute); `None` for the
    /// embedded default.
    pub fn policy_file(&self) -> Option<&Path> {
        self.policy.path.as_deref()
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Degradations accepted because `require_os_sandbox` is false: show them.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The audit log the decisions go to.
    pub fn audit_log(&self) -> &Path {
        &self.audit_path
    }

    /// Where "approve always" rules are kept, or why there is no such place.
    pub fn rules_file(&self) -> Result<&Path, &str> {
        self.rules_file.as_deref().map_err(String::as_str)
    }

    /// The variables the command's shell inherits (see [`inherited`]).
    pub fn inherited(&self) -> &shell::Inherited {
        &self.inherited
    }

    /// A shell call in `cwd` (`None`: the gate's). Prepares its run — a private TMPDIR, the
    /// kernel profile, the backend — and refuses now what could never run. `cwd` must lie in
    /// one of the policy's roots.
    pub fn shell(&self, command: Command, cwd: Option<&Path>) -> Result<Call, Error> {
        let cwd = self.call_cwd(cwd)?;
        let sandbox = if self.dry || !self.runs {
            None
        } else {
            Some(self.prepare()?)
        };
        let (argv, parsed, shown) = match command {
            Command::Line(line) => (
                // bash where installed (the analysis is bash's), so what was judged is what runs.
                vec![shell::line_shell().to_string(), "-c".into(), line.clone()],
                shell::parse_in(&line, &self.inherited),
                line,
            ),
            Command::Argv(argv) if argv.is_empty() => {
                return Err(Error::failure("nothing to run: an empty command"))
            }
            Command::Argv(argv) => {
                let parsed = shell::parse_argv_in(&argv, &self.inherited);
                let shown = argv.join(" ");
                (argv, parsed, shown)
            }
        };
        let cx = ShellContext::for_policy(&self.policy, cwd.clone());
        let assessment = assess(&parsed, &RuleSet::new(&self.shell_rules), &cx);
        let (request, preview) = {
            let engine = lock(&self.engine);
            shell_request(&engine, &shown, &argv, &cwd, &assessment)
        };
        Ok(Call {
            request,
            shown,
            preview,
            what: What::Shell(Box::new(ShellRun {
                argv,
                cwd,
                assessment,
                sandbox,
            })),
        })
    }

    /// A file-tool call (`read_file`, `write_file`, `edit_file`, `list_dir`, `delete_file`,
    /// or a `[tools.NAME]` tool) with the tool's own arguments. Invalid arguments or a path
    /// outside the roots: refused (126), nothing recorded.
    pub fn file(&self, tool: &str, args: serde_json::Value) -> Result<Call, Error> {
        let toolbox = self.toolbox()?;
        let a = toolbox.assess(tool, &args).map_err(|e| match e {
            cordon_tools::tool::ToolError::UnknownTool { name, mut known } => {
                known.push("shell".into());
                known.sort();
                Error::failure(format!(
                    "unknown tool `{name}`; known tools: {}",
                    known.join(", ")
                ))
            }
            e => Error::new(EXIT_DENIED, e),
        })?;
        let id = cordon_approval::audit::new_id().unwrap_or_default();
        let preview = a.presentation.preview.to_string();
        let shown = a.presentation.summary.clone();
        let request = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
            .with_verdict(a.verdict.clone())
            .with_presentation(a.presentation.clone())
            .with_args(a.args.clone());
        Ok(Call {
            request,
            shown,
            preview,
            what: What::File(Box::new(a)),
        })
    }

    /// Records a call that the front end refuses before the rules see it (a host's tool
    /// cordon will not let through, a line no shell can be given): a denial by the built-in
    /// check `check`, in the audit log like every decision. `key` names what was called.
    pub fn refuse(
        &self,
        tool: &str,
        key: Vec<String>,
        shown: &str,
        check: &'static str,
        reason: &str,
    ) -> Decision {
        let id = cordon_approval::audit::new_id().unwrap_or_default();
        let request = Request::new(id, tool, vec![Key::new(key)])
            .with_presentation(Presentation::summary(shown))
            .with_verdict(cordon_approval::Decision {
                action: Action::Deny,
                reason: reason.to_string(),
                rule: cordon_approval::RuleRef::Builtin(check),
            });
        let shown = clean(shown);
        if self.dry {
            return Decision {
                request: request.id.clone(),
                shown,
                kind: DecisionKind::Failed {
                    by: None,
                    reason: "this gate only checks calls".into(),
                },
                notices: Vec::new(),
            };
        }
        // A tool's own deny is final: the engine records it and hands back a denial.
        let kind = match lock(&self.engine).evaluate(&request) {
            Outcome::Denied {
                by: By::AuditFailed,
                reason,
                ..
            } => DecisionKind::Failed {
                by: Some(By::AuditFailed),
                reason,
            },
            Outcome::Denied { by, reason, note } => DecisionKind::Denied { by, reason, note },
            // Never for a deny verdict; fail closed all the same.
            _ => DecisionKind::Denied {
                by: By::Unanswered,
                reason: reason.to_string(),
                note: None,
            },
        };
        Decision {
            request: request.id.clone(),
            shown,
            kind,
            notices: Vec::new(),
        }
    }

    /// The rules' answer without asking anyone or recording anything.
    pub fn check(&self, call: &Call) -> Verdict {
        match &call.what {
            What::Shell(s) => Verdict {
                action: s.assessment.decision.action,
                reason: s.assessment.decision.reason.clone(),
                rule: s.assessment.decision.rule.to_string(),
            },
            What::File(a) => Verdict {
                action: a.verdict.action,
                reason: a.verdict.reason.clone(),
                rule: a.verdict.rule.to_string(),
            },
        }
    }

    /// Decides `call`, asking `asker` when a person must answer (no answer within the
    /// policy's timeout denies), and records the final decision before returning.
    pub fn decide(&self, call: &Call, asker: &mut dyn Asker) -> Decision {
        let (mut session, first) = match self.begin(call) {
            Ok(begun) => begun,
            Err(failed) => return failed,
        };
        let concluded = match first {
            Outcome::NeedsAnswer(p) => {
                let released = self.release_while_asking(call, &mut session);
                let deadline = Instant::now() + lock(&self.engine).timeout();
                let result = if Instant::now() >= deadline {
                    Err(AskError::TimedOut)
                } else {
                    asker.ask(&call.request, &p, deadline)
                };
                let late = Instant::now() > deadline;
                match self.conclude(call, &mut session, released, result, late) {
                    Ok(c) => c,
                    Err(failed) => return failed,
                }
            }
            o => Concluded::of(o),
        };
        self.settle(call, concluded, session.as_mut())
    }

    /// [`Gate::decide`] for an asynchronous asker (an MCP elicitation): the engine is not
    /// held while the person is asked, so other calls are decided meanwhile.
    pub async fn decide_async<A: AsyncAsker>(&self, call: &Call, asker: &mut A) -> Decision {
        let (mut session, first) = match self.begin(call) {
            Ok(begun) => begun,
            Err(failed) => return failed,
        };
        let concluded = match first {
            Outcome::NeedsAnswer(p) => {
                let released = self.release_while_asking(call, &mut session);
                let timeout = lock(&self.engine).timeout();
                let started = Instant::now();
                let result = tokio::time::timeout(timeout, asker.ask(&call.request, &p))
                    .await
                    .unwrap_or(Err(AskError::TimedOut));
                let late = started.elapsed() > timeout;
                match self.conclude(call, &mut session, released, result, late) {
                    Ok(c) => c,
                    Err(failed) => return failed,
                }
            }
            o => Concluded::of(o),
        };
        self.settle(call, concluded, session.as_mut())
    }

    /// The start of a decision: the session locked and restored, the engine's first answer.
    #[allow(clippy::result_large_err)] // a Decision is what the caller returns either way
    fn begin(&self, call: &Call) -> Result<(Option<session::Session>, Outcome), Decision> {
        if self.dry {
            return Err(Decision::failed(
                call,
                None,
                "this gate only checks calls (open it with Gate::open to decide)",
            ));
        }
        let session = self
            .open_session()
            .map_err(|e| Decision::failed(call, None, e))?;
        let first = self.evaluate(call, session.as_ref());
        Ok((session, first))
    }

    fn open_session(&self) -> Result<Option<session::Session>, String> {
        match &self.session {
            Some(name) => session::Session::open(name, &writable_roots(&self.policy)).map(Some),
            None => Ok(None),
        }
    }

    fn evaluate(&self, call: &Call, session: Option<&session::Session>) -> Outcome {
        let mut engine = lock(&self.engine);
        if let Some(s) = session {
            s.restore(&mut engine);
        }
        engine.evaluate(&call.request)
    }

    /// Lets go of the session while a person is asked about a connection, so that the run's
    /// other connections (allowed by rules, or asked after this one) are decided meanwhile;
    /// `true` when it did. Only a connection: its evaluation leaves nothing in the session
    /// (connections are not counted in the doom loop), so restoring the session after the
    /// answer loses nothing of its own. Any other call keeps the session until it is settled.
    fn release_while_asking(&self, call: &Call, session: &mut Option<session::Session>) -> bool {
        if session.is_none() || call.request.tool != cordon_policy::network::NETWORK_TOOL {
            return false;
        }
        drop(session.take());
        true
    }

    /// The engine's conclusion on an answer, with what its rule store did for this very
    /// answer (taken under the same engine lock, so no other decision's rule or notice is
    /// mixed in). A session let go of while asking and opened again is restored first: other
    /// calls of it may have changed it meanwhile.
    #[allow(clippy::result_large_err)] // a Decision is what the caller returns either way
    fn conclude(
        &self,
        call: &Call,
        session: &mut Option<session::Session>,
        released: bool,
        result: Result<Answer, AskError>,
        late: bool,
    ) -> Result<Concluded, Decision> {
        if released {
            *session = self
                .open_session()
                .map_err(|e| Decision::failed(call, None, e))?;
        }
        let mut engine = lock(&self.engine);
        if let Some(s) = session.as_ref().filter(|_| released) {
            s.restore(&mut engine);
        }
        let outcome = engine.conclude(&call.request, result, late);
        Ok(Concluded {
            outcome,
            saved: std::mem::take(&mut *lock(&self.saved)),
            notices: std::mem::take(&mut *lock(&self.notices)),
        })
    }

    /// The outcome as a decision: the session saved, a rule saved for a decision the log
    /// does not show taken back.
    fn settle(
        &self,
        call: &Call,
        concluded: Concluded,
        session: Option<&mut session::Session>,
    ) -> Decision {
        let Concluded {
            outcome,
            saved,
            mut notices,
        } = concluded;
        if let Some(s) = session {
            let engine = lock(&self.engine);
            if let Err(e) = s.save_from(&engine) {
                return Decision::failed(call, None, e);
            }
        }
        let kind = match outcome {
            Outcome::Allowed { by, reason, .. } => DecisionKind::Allowed { by, reason },
            Outcome::Denied {
                by: By::AuditFailed,
                reason,
                ..
            } => {
                // A rule saved for a decision the log does not show must not stay granted.
                if let Ok(file) = &self.rules_file {
                    for text in saved.iter().rev() {
                        notices.push(match amend::retract(file, &self.store, text) {
                            Ok(true) => format!(
                                "taken back from {}: the rule just saved (its decision could not be recorded)",
                                file.display()
                            ),
                            Ok(false) | Err(_) => format!(
                                "warning: a rule was saved in {} but its decision could not be recorded; remove it by hand: {}",
                                file.display(),
                                clean(text.trim())
                            ),
                        });
                    }
                }
                DecisionKind::Failed {
                    by: Some(By::AuditFailed),
                    reason,
                }
            }
            Outcome::Denied { by, reason, note } => DecisionKind::Denied { by, reason, note },
            // Never left open by decide; fail closed if it ever were.
            Outcome::NeedsAnswer(p) => DecisionKind::Denied {
                by: By::Unanswered,
                reason: p.reason,
                note: None,
            },
        };
        Decision {
            request: call.request.id.clone(),
            shown: call.shown.clone(),
            kind,
            notices,
        }
    }

    /// Runs an allowed call: a shell call under the kernel sandbox, a file call through the
    /// file tools. Refuses (126) a decision that is not an allow of this very call.
    pub fn run(&self, call: &Call, decision: &Decision, opts: RunOptions) -> Result<Ran, Error> {
        if !decision.is_allowed() || decision.request != call.request.id {
            return Err(Error::new(
                EXIT_DENIED,
                format!("`{}` was not allowed: nothing runs", call.shown),
            ));
        }
        match &call.what {
            What::Shell(s) => self.run_shell(call, s, opts),
            What::File(a) => self.run_file(a),
        }
    }

    fn run_shell(&self, call: &Call, run: &ShellRun, opts: RunOptions) -> Result<Ran, Error> {
        let Some(s) = &run.sandbox else {
            return Err(Error::failure("this gate does not run calls"));
        };
        // Checked again: a command of another call may have re-pointed a root meanwhile.
        #[cfg(target_os = "linux")]
        cordon_ossandbox::resolve::check(&self.policy, &s.profile).map_err(Error::failure)?;
        let timeout = opts.timeout.or(self.policy.sandbox.limits.timeout);
        let mut spec = sandbox_run::Spec {
            program: run.argv[0].clone().into(),
            args: run.argv[1..].iter().map(Into::into).collect(),
            cwd: run.cwd.clone(),
            env: env::scrub(
                std::env::vars_os(),
                &self.policy.sandbox.env,
                s.tmp.path().as_os_str(),
            ),
            timeout,
            stdio: Default::default(),
            cancel: opts.cancel.as_ref().map(Cancel::fd),
            // Under sandbox.network = "proxy", set below with the proxy that serves the run.
            proxy: None,
        };
        let capture = match opts.output {
            Output::Inherit => None,
            Output::Capture { limit } => Some(
                capture::Capture::start(&mut spec.stdio, limit)
                    .map_err(|e| Error::failure(format!("cannot capture the output: {e}")))?,
            ),
        };
        // What the run leaves that the operator's tools run (a `.git` config, `.envrc`, …) is
        // found by comparing with this, moved aside, warned about and recorded after the run.
        let roots = writable_roots(&self.policy);
        let before = after_run::before(&roots);
        tracing::debug!(request = %call.request.id, argv = ?run.argv, "run");
        let result = if self.policy.sandbox.network == cordon_policy::Network::Proxy {
            // The command reaches nothing but cordon's proxy, which decides and records each
            // connection with this gate.
            // A person asked about a connection gets the terminal from the command's relay.
            #[cfg(target_os = "linux")]
            let ask = opts.ask.clone().map(|asker| {
                let switch = cordon_ossandbox::stdio::TerminalSwitch::new();
                spec.stdio.terminal = Some(switch.clone());
                network::Asking::new(asker, switch)
            });
            #[cfg(not(target_os = "linux"))]
            let ask = opts.ask.clone().map(network::Asking::new);
            network::run_with_proxy(self, ask, |handoff, vars| {
                let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
                spec.env.retain(|(k, _)| !names.iter().any(|n| k == n));
                spec.env
                    .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
                spec.proxy = Some(handoff);
                execute(&s.choice, &s.profile, spec, s.tmp.path())
            })?
        } else {
            execute(&s.choice, &s.profile, spec, s.tmp.path())
        };
        after_run::report(
            &before,
            &roots,
            &self.audit_path,
            &self.audit_session,
            &call.request.id,
        );
        let (stdout, stderr, truncated) = match capture {
            Some(c) => c.finish(),
            None => Default::default(),
        };
        let ran = |exit_code, timed_out| Ran {
            exit_code,
            stdout,
            stderr: stderr.clone(),
            truncated,
            timed_out,
        };
        let failed = |e: cordon_ossandbox::Error, stderr: &[u8]| {
            // What the sandbox's builder said went to the captured stderr: keep it.
            // 127 not found, 126 cannot execute, 125 a refusal or a setup failure.
            let mut err = Error::new(e.exit_code(), e);
            err.detail = String::from_utf8_lossy(stderr)
                .lines()
                .take(20)
                .map(clean)
                .collect();
            err
        };
        match result {
            Ok(sandbox_run::Outcome::TimedOut) => Ok(ran(124, true)),
            Ok(outcome) => Ok(ran(outcome.exit_code(), false)),
            Err(e) => Err(failed(e, &stderr)),
        }
    }

    fn run_file(&self, a: &Assessment) -> Result<Ran, Error> {
        let toolbox = self.toolbox()?;
        let tool = toolbox
            .get(&a.tool)
            .ok_or_else(|| Error::failure(format!("unknown tool `{}`", a.tool)))?;
        let value = tool.execute(a).map_err(|e| Error::new(EXIT_DENIED, e))?;
        let stdout = match value {
            serde_json::Value::String(s) => s.into_bytes(),
            v => v.to_string().into_bytes(),
        };
        Ok(Ran {
            stdout,
            ..Ran::default()
        })
    }

    fn toolbox(&self) -> Result<&Toolbox, Error> {
        self.toolbox
            .get_or_init(|| Toolbox::from_policy(&self.policy).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Error::failure)
    }

    /// A call's directory: the gate's, or one inside a root of the policy.
    fn call_cwd(&self, cwd: Option<&Path>) -> Result<PathBuf, Error> {
        let Some(dir) = cwd else {
            return Ok(self.cwd.clone());
        };
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.cwd.join(dir)
        };
        let real = std::fs::canonicalize(&dir)
            .map_err(|e| Error::new(EXIT_DENIED, format!("cwd {}: {e}", dir.display())))?;
        let inside = self
            .policy
            .sandbox
            .paths
            .iter()
            .any(|p| std::fs::canonicalize(&p.root).is_ok_and(|root| real.starts_with(root)));
        if !inside {
            return Err(Error::new(
                EXIT_DENIED,
                format!("cwd {} lies outside the policy's roots", real.display()),
            ));
        }
        Ok(real)
    }

    /// A shell call's sandbox: a private TMPDIR, the profile, the checks that a root or a
    /// protected path was not re-pointed, the backend.
    fn prepare(&self) -> Result<Sandbox, Error> {
        let Some(machine) = &self.machine else {
            return Err(Error::failure("this gate only checks calls"));
        };
        // A private, per-run TMPDIR: /tmp itself is shared with every process on the machine.
        // One left by a cordon that was killed is removed here.
        let tmp = tmp::PrivateTmp::create(&std::env::temp_dir())
            .map_err(|e| Error::failure(format!("cannot create the private TMPDIR: {e}")))?;
        let profile = Profile::from_policy(&self.policy).with_private_tmp(tmp.path());
        // A name the policy uses that an earlier run re-pointed (a symlink in a writable root,
        // a second name for a protected file) would grant what it now reaches.
        #[cfg(target_os = "linux")]
        cordon_ossandbox::resolve::check(&self.policy, &profile).map_err(Error::failure)?;
        named_through_links(&self.policy, &self.named, &profile)?;
        // Remembered rules beside a policy in a writable root are protected as a file that
        // exists (a missing one would need a placeholder file for the run's duration).
        if let Some(rules_file) = self.policy.rules_file() {
            if profile.protected.iter().any(|p| p.path == rules_file) {
                amend::ensure(&rules_file)
                    .map_err(|e| Error::failure(format!("remembered rules {e}")))?;
            }
        }
        let choice = choose(
            self.backend,
            &profile,
            self.policy.sandbox.require_os_sandbox,
            machine,
        )
        .map_err(Error::failure)?;
        // The trust store inside a writable root is kept read-only by the sandbox: make sure
        // it is a directory to bind, not a missing name.
        if profile
            .protected
            .iter()
            .any(|p| p.origin == trust::PROTECTED_ORIGIN)
        {
            self.store.ensure().map_err(Error::failure)?;
        }
        Ok(Sandbox {
            tmp,
            profile,
            choice,
        })
    }
}

/// Opens the audit log every final decision is recorded in (allow and deny) before anything
/// runs; a log that cannot be written stops the gate. Returns its path and session id.
fn open_audit(
    policy: &Policy,
    engine: &mut Engine,
    session_id: Option<&str>,
    client: Option<&str>,
) -> Result<(PathBuf, String), Error> {
    let log = &policy.approval.audit_log;
    let Some(path) = log.path().map(Path::to_path_buf) else {
        return Err(Error::failure(
                "nowhere to record decisions: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path (set one of them)",
            ));
    };
    if let cordon_policy::AuditLog::Default(_) = log {
        if let Err(e) = paths::owned_by_caller(&path) {
            return Err(Error::failure(format!(
                    "the default audit log {}: {e}; set XDG_STATE_HOME or approval.audit_log to a place of your own",
                    path.display()
                )));
        }
    }
    let mut audit = AuditLog::open(&path).map_err(|e| {
            let hint = match log {
                cordon_policy::AuditLog::Default(_) => {
                    " (the default place; set approval.audit_log in the policy, or XDG_STATE_HOME, to record elsewhere)"
                }
                _ => "",
            };
            Error::failure(format!("audit log {e}{hint}"))
        })?;
    if let Some(id) = session_id {
        audit = audit.with_session(id);
    }
    if let Some(client) = client {
        audit = audit.with_client(client);
    }
    let session = audit.session().to_string();
    engine.set_audit(audit);
    Ok((path, session))
}

/// A policy or audit log named through a symlink in a writable root: the command could
/// re-point the link, at a policy of its own for the next call, or away from the log (whose
/// history it could then delete, no longer protected).
fn named_through_links(policy: &Policy, named: &Path, profile: &Profile) -> Result<(), Error> {
    let log = policy.approval.audit_log.path();
    for (what, path) in [
        ("the policy", policy.path.is_some().then_some(named)),
        (policy.approval.audit_log.key(), log),
    ] {
        let Some(path) = path else { continue };
        if let Some((link, root)) = paths::symlink_in_writable_root(path, profile) {
            return Err(Error::failure(format!(
                "{what} {} is named through the symlink {} inside the writable root {}: the command could re-point it; name the real path",
                path.display(),
                link.display(),
                root.display()
            )));
        }
    }
    Ok(())
}

/// The variables the command's shell inherits: exactly the names of the scrubbed environment
/// the child gets. A variable outside it that the line assigns without exporting reaches no
/// program, so `for FILE in …` need not ask.
pub fn inherited(policy: &Policy) -> shell::Inherited {
    let names = env::scrub(std::env::vars_os(), &policy.sandbox.env, "".as_ref())
        .into_iter()
        .filter_map(|(k, _)| k.into_string().ok());
    shell::Inherited::exactly(names)
}

/// Where "approve always" rules are kept: `cordon.rules.toml` beside the policy file. The
/// embedded default policy has no file, so nothing can be remembered for it.
pub fn persisted_rules_file(policy: &Policy) -> Result<PathBuf, String> {
    policy.rules_file().ok_or_else(|| {
        "cannot approve always: the embedded default policy is in use, and there is no policy file to keep rules beside (write a cordon.toml)".into()
    })
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

/// The shell call as the approval engine sees it: one key per simple command, the shell
/// tool's own concerns, and a preview listing each command with what the rules say of it.
fn shell_request(
    engine: &Engine,
    shown: &str,
    argv: &[String],
    cwd: &Path,
    a: &ShellAssessment,
) -> (Request, String) {
    // Each command's key (its canonical words); a transparent wrapper no rule names (`time`,
    // `timeout 300`, `bash -c`) has none: the commands it runs are decided instead.
    let keys: Vec<Key> = a
        .commands
        .iter()
        .filter_map(|c| c.key.clone())
        .map(Key::new)
        .collect();
    // One line per command or concern, each word made safe for the terminal here (a newline
    // inside a quoted word must not push the next command out of the box); concerns first.
    let mut lines: Vec<String> = a
        .concerns
        .iter()
        .map(|(_, d)| clean(&format!("{:<9} ! {}", d.action.as_str(), d.reason)))
        .collect();
    for k in &keys {
        let action = engine
            .rules()
            .decide_key("shell", k.words())
            .map_or("(default)".to_string(), |v| v.action.as_str().to_string());
        lines.push(clean(&format!("{action:<9} {k}")));
    }
    let id = cordon_approval::audit::new_id().unwrap_or_default(); // empty: the log picks one
    let text = lines.join("\n");
    let mut req = Request::shell(id, keys)
        .with_presentation(Presentation::new(
            shown,
            Preview::Text { text: text.clone() },
        ))
        .with_args(serde_json::json!({ "argv": argv, "cwd": cwd }));
    // The tool's concerns (an environment assignment, a redirection outside the roots, a
    // line it cannot parse) are not in the keys, so a session grant never covers them.
    req.concern = a.own_verdict();
    (req, text)
}
