//! `cordon`: approve a command against the policy, then run it under the OS sandbox.
//!
//! Exit codes follow coreutils (`env`, `timeout`): the child's status; 128+N when it died of
//! signal N; 124 on timeout; 125 cordon's own failure; 126 denied or not executable; 127 not
//! found. Every refusal is one stderr line starting `cordon: `.

// The process's entry is cordon's own `main` (below): std's runtime start-up is skipped, and
// what of it cordon needs is done by `start`.
#![cfg_attr(not(test), no_main)]

mod audit;
mod check;
mod codex_sandbox;
mod codex_trust;
mod doctor;
mod error;
mod exec;
mod gemini_trust;
mod hook;
mod init;
mod install;
mod install_file;
mod install_mcp;
mod manpage;
mod mcp;
mod profile;
mod prompt;
mod term;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// cordon's own failure: bad policy, bad usage, sandbox unavailable.
pub const EXIT_FAILURE: i32 = 125;
/// Denied by policy or approval.
pub const EXIT_DENIED: i32 = 126;

pub use error::Error;

/// What a subcommand ends with: the exit status to return, or an error that carries its own.
pub type Exit = Result<i32, Error>;

#[derive(Parser)]
#[command(
    name = "cordon",
    version,
    about = "Run AI-agent tools under approval rules and a kernel sandbox"
)]
struct Cli {
    /// More diagnostics on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Cmd,
}

/// Diagnostics go to stderr only: stdout carries what a command prints (and, for `cordon
/// mcp` and `cordon hook`, the protocol).
fn init_tracing(verbose: u8) {
    use tracing_subscriber::filter::{EnvFilter, LevelFilter};
    let (name, level) = match verbose {
        0 => ("warn", LevelFilter::WARN),
        1 => ("info", LevelFilter::INFO),
        2 => ("debug", LevelFilter::DEBUG),
        _ => ("trace", LevelFilter::TRACE),
    };
    let ansi = rustix::termios::isatty(std::io::stderr());
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    // `RUST_LOG`'s directives need an `EnvFilter`; without the variable the level alone is
    // the same filter, and a plain level spares every start (each hook call, each rewritten
    // exec) building and consulting one.
    let _ = match std::env::var_os("RUST_LOG") {
        Some(_) => fmt
            .with_env_filter(
                EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(name)),
            )
            .try_init(),
        None => fmt.with_max_level(level).try_init(),
    };
}

#[derive(Subcommand)]
enum Cmd {
    /// Approve a command against the shell rules, then run it under the OS sandbox.
    Exec(ExecArgs),
    /// Dry run: what `exec` would decide on a call, its reason and the rule that made it (exit
    /// 0 allow, 1 ask, 2 deny). Runs and records nothing.
    Check(CheckArgs),
    /// Print what the kernel will enforce for the policy, as a backend's artifact.
    Profile(ProfileArgs),
    /// What this machine can enforce, proved by live probes.
    Doctor,
    /// Work with policy files: `test [FILE]` runs every rule's match/not_match examples;
    /// `trust [FILE]` lets cordon use a ./cordon.toml (or remembered rules) as it is now,
    /// `untrust [FILE]` takes that back.
    #[command(subcommand)]
    Policy(PolicyCmd),
    /// The audit log: `verify [FILE]` checks its hash chain, `show [FILE]` prints it readably
    /// (FILE: the log `exec` writes under the policy, by default).
    Audit(audit::AuditArgs),
    /// A named session's grants: `show NAME` lists them, `revoke NAME [-- WORDS…]` revokes
    /// those starting with WORDS (all without).
    #[command(subcommand)]
    Session(SessionCmd),
    /// Serve the shell and file tools over MCP on stdio, every call through the policy, the
    /// audit log and the sandbox (docs/mcp.md).
    Mcp(mcp::McpArgs),
    /// An agent host's pre-tool hook: reads the host's hook JSON on stdin (Claude Code
    /// PreToolUse, Codex PreToolUse, Gemini CLI BeforeTool, Copilot CLI preToolUse, opencode's
    /// tool.execute.before through cordon's plugin), decides, answers in its protocol.
    Hook {
        host: hook::Host,
        /// Policy file (default: ./cordon.toml in the host's cwd if trusted, else the embedded default).
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// Block the call when no decision is made within this many seconds (well inside the
        /// host's hook timeout, 30 s as `cordon install` sets it, after which a host runs the call).
        #[arg(long, value_name = "DURATION", default_value = HOOK_DEADLINE, value_parser = hook_deadline)]
        deadline: Duration,
    },
    /// Wire `cordon hook HOST` into the host's settings (idempotent; a backup is kept).
    Install(install::InstallArgs),
    /// Remove cordon's hook entries from the host's settings (other entries are kept).
    Uninstall(install::UninstallArgs),
    /// Write a commented starter ./cordon.toml for this project and trust it.
    Init {
        /// Replace an existing ./cordon.toml (kept as cordon.toml.bak).
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script (e.g. `cordon completions bash > /etc/bash_completion.d/cordon`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum SessionCmd {
    /// List the session's grants.
    Show { name: String },
    /// Revoke the grants whose command starts with WORDS (every grant without WORDS).
    Revoke {
        name: String,
        #[arg(last = true, value_name = "WORDS")]
        words: Vec<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Landlock,
    Bwrap,
    Seatbelt,
    None,
}

impl BackendArg {
    fn to_policy(self) -> cordon_policy::Backend {
        use cordon_policy::Backend as B;
        match self {
            BackendArg::Auto => B::Auto,
            BackendArg::Landlock => B::Landlock,
            BackendArg::Bwrap => B::Bwrap,
            BackendArg::Seatbelt => B::Seatbelt,
            BackendArg::None => B::None,
        }
    }
}

#[derive(Args)]
struct ExecArgs {
    /// Policy file (default: ./cordon.toml, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// OS sandbox backend (overrides the policy's sandbox.backend).
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Kill the command and all its descendants after this long (e.g. 30s, 5m).
    #[arg(long, value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Allow every `ask` without asking.
    #[arg(long, conflicts_with = "strict")]
    approve_all: bool,
    /// Deny every `ask`.
    #[arg(long)]
    strict: bool,
    /// Keep "approve for this session" grants and the doom-loop count across calls of this
    /// session (default: $CORDON_SESSION; without one, a session is this one call).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Run this string with bash -c (/usr/bin/bash or /bin/bash; /bin/sh where bash is not installed).
    #[arg(short = 'c', value_name = "STRING", conflicts_with = "argv")]
    command: Option<String>,
    /// The program and its arguments.
    #[arg(last = true, value_name = "PROG ARGS")]
    argv: Vec<String>,
    /// Run a call a host's user approved (written by `cordon hook`; used once).
    #[arg(long, value_name = "ID", hide = true)]
    host_grant: Option<String>,
    /// An agent host runs this (written by `cordon hook`): never ask on a terminal, which is
    /// the host's — one its agent may type into.
    #[arg(long, hide = true)]
    from_hook: bool,
    /// With --from-hook: a person types into the command through the host (`typed`: Gemini
    /// CLI's interactive shell). Without it, a command a host runs reads nothing: what an
    /// agent types into it later is no line the hook decided.
    #[arg(long, value_name = "WHO", value_parser = ["typed"], requires = "from_hook", hide = true)]
    input: Option<String>,
    /// With --from-hook: the run happens inside Codex's own sandbox (`codex`), where what
    /// Codex runs without cordon can write too: it records to and scans from cordon's state
    /// apart (`LOGDIR/codex`), never the hook's log and the state beside it.
    #[arg(long, value_name = "HOST", value_parser = ["codex"], requires = "from_hook", hide = true)]
    state: Option<String>,
}

#[derive(Args)]
struct CheckArgs {
    /// Policy file (default: ./cordon.toml, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// As `exec --approve-all` would decide: every `ask` allowed.
    #[arg(long, conflicts_with = "strict")]
    approve_all: bool,
    /// As `exec --strict` would decide: every `ask` denied.
    #[arg(long)]
    strict: bool,
    /// Read this session's grants and doom-loop count, as `exec --session` would (default:
    /// $CORDON_SESSION); nothing is saved.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// The tool: `shell`, a file tool (read_file, write_file, edit_file, list_dir,
    /// delete_file), `network` (give HOST:PORT) or a `[tools.NAME]` tool from the policy.
    tool: String,
    /// For a file or `[tools]` tool: its arguments, as KEY=VALUE.
    #[arg(value_name = "KEY=VALUE")]
    pairs: Vec<String>,
    /// For shell: the line to check.
    #[arg(short = 'c', value_name = "STRING", conflicts_with = "argv")]
    command: Option<String>,
    /// For shell: the argv to check.
    #[arg(last = true, value_name = "PROG ARGS")]
    argv: Vec<String>,
}

#[derive(Subcommand)]
enum PolicyCmd {
    /// Run every shell rule's `match`/`not_match` examples and report each (exit 1 if any fails).
    Test {
        /// Policy file (default: ./cordon.toml, else the embedded default).
        file: Option<PathBuf>,
    },
    /// Trust FILE's exact content at its path (default: ./cordon.toml): cordon uses a policy
    /// it finds in the current directory, or remembered rules it did not write itself, only
    /// as you trusted them, because a sandboxed command could have written them.
    Trust {
        /// The policy or rules file (default: ./cordon.toml).
        file: Option<PathBuf>,
    },
    /// Forget the trust given to FILE (default: ./cordon.toml).
    Untrust {
        /// The policy or rules file (default: ./cordon.toml).
        file: Option<PathBuf>,
    },
}

#[derive(Args)]
struct ProfileArgs {
    /// Policy file (default: ./cordon.toml, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The artifact: seatbelt (SBPL), bwrap (runnable script), landlock (ruleset JSON),
    /// seccomp (OCI runtime-spec profile for Docker, Podman, Kubernetes). Without it: the
    /// effective access of each path, the network and the refused system calls.
    #[arg(long, value_enum)]
    format: Option<ProfileFormat>,
    /// For seccomp: the target architecture (default: this machine's).
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
    /// For landlock and bwrap: the Landlock ABI to describe (default: this kernel's).
    #[arg(long, value_name = "N")]
    abi: Option<i32>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProfileFormat {
    Seatbelt,
    Bwrap,
    Landlock,
    Seccomp,
}

fn parse_duration(s: &str) -> Result<Duration, Error> {
    cordon_policy::parse_duration(s).ok_or_else(|| {
        Error::failure(format!(
            "invalid duration `{s}` (write e.g. 500ms, 30s, 5m, 2h)"
        ))
    })
}

/// `cordon hook --deadline`'s default.
const HOOK_DEADLINE: &str = "10s";

/// `cordon hook --deadline`: above zero and below the 30 s hook timeout `cordon install` gives
/// the hosts (a deadline past the host's timeout would let the host run the call first).
pub(crate) fn hook_deadline(s: &str) -> Result<Duration, Error> {
    let d = parse_duration(s)?;
    if d.is_zero() || d >= hook::HOST_TIMEOUT {
        return Err(Error::failure(format!(
            "the hook's deadline must be above 0 and below the hosts' {} s hook timeout",
            hook::HOST_TIMEOUT.as_secs()
        )));
    }
    Ok(d)
}

/// The current directory and the policy the command runs under (`--policy`, else
/// `./cordon.toml`, else the embedded default).
pub fn load_policy(
    explicit: Option<&std::path::Path>,
) -> Result<(PathBuf, cordon_policy::Policy), Error> {
    let cwd = current_dir()?;
    let policy = cordon_policy::Policy::discover(explicit, &cwd)
        .map_err(|e| policy_error("", &e, e.diff()))?;
    Ok((cwd, policy))
}

/// `--approve-all` / `--strict` and `--session` (else `$CORDON_SESSION`), the same for `exec` and
/// for `check`, so that `check` decides as `exec` would.
pub(crate) fn approval_options(
    opts: &mut cordon_gate::Options,
    approve_all: bool,
    strict: bool,
    session: Option<String>,
) {
    opts.mode = if approve_all {
        Some(cordon_policy::ApprovalMode::ApproveAll)
    } else if strict {
        Some(cordon_policy::ApprovalMode::Strict)
    } else {
        None
    };
    opts.session = session.or_else(|| {
        std::env::var("CORDON_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
}

/// The working directory, or why it cannot be read.
pub fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir()
        .map_err(|e| Error::failure(format!("cannot read the current directory: {e}")))
}

/// A policy error: `PREFIX ERROR` on one line (made safe for the terminal: the file may hold
/// anything), then, for a file changed since it was trusted, the differences (bounded).
pub fn policy_error(prefix: &str, e: &dyn std::fmt::Display, diff: Option<&str>) -> Error {
    Error::failure(format!("{prefix}{e}")).with_detail(diff.unwrap_or_default().lines())
}

/// `cordon policy trust|untrust [FILE]`.
fn policy_trust(file: Option<PathBuf>, grant: bool) -> Exit {
    use cordon_policy::trust::{self, Follow, TrustStore};
    let path = file.unwrap_or_else(|| PathBuf::from(cordon_policy::DEFAULT_POLICY_FILE));
    let store = TrustStore::from_env();
    if !grant {
        let real = trust::canonical_name(&path);
        return match store.untrust(&real) {
            Ok(true) => {
                println!(
                    "no longer trusted: {}",
                    term::clean(&real.display().to_string())
                );
                Ok(0)
            }
            Ok(false) => {
                println!(
                    "{} was not trusted",
                    term::clean(&real.display().to_string())
                );
                Ok(0)
            }
            Err(e) => Err(Error::failure(e)),
        };
    }
    // The same read as discovery's: the file itself, never a link, a FIFO or a device.
    let file = match trust::read_file(&path, Follow::Never) {
        Ok(f) => f,
        Err(e) => return Err(policy_error("", &e, None)),
    };
    match store.trust(&file) {
        Ok(before) => {
            let shown = term::clean(&file.path.display().to_string());
            println!("trusted {shown} (sha256 {})", file.sha256());
            if let Some(before) = before {
                println!("it replaces the trust in its earlier content (sha256 {before})");
            }
            // Trusted as it is; a file that does not load is refused when used: say so now. A
            // rules file (remembered "approve always" rules) is read as one, not as a policy.
            let base = file.path.parent().unwrap_or(std::path::Path::new("/"));
            let name = path.display().to_string();
            let is_rules = file.path.file_name() == Some(cordon_policy::RULES_FILE_NAME.as_ref());
            let loads = if is_rules {
                cordon_policy::RulesFile::parse(&file.text, &name, base).map(drop)
            } else {
                cordon_policy::Policy::parse(&file.text, &name, base).map(drop)
            };
            if let Err(e) = loads {
                eprintln!(
                    "cordon: warning: it does not load: {}",
                    term::clean(&e.to_string())
                );
            }
            Ok(0)
        }
        Err(e) => Err(Error::failure(e)),
    }
}

/// Prints `cordon: MESSAGE` (made safe for a terminal) and the lines after it on stderr;
/// returns the exit code.
fn report(e: &Error) -> i32 {
    eprintln!("cordon: {}", term::clean(&e.to_string()));
    for line in e.detail() {
        eprintln!("{line}");
    }
    e.exit_code()
}

/// `cordon policy test [FILE]`: every example, passed or failed, one line each.
fn policy_test(file: Option<PathBuf>) -> Exit {
    let (_, policy) = load_policy(file.as_deref())?;
    let results = cordon_gate::example_results(&policy);
    let failed = results.iter().filter(|r| !r.ok).count();
    // Rules that never decide (issue 22): a warning, not a failure.
    for s in cordon_approval::RuleSet::new(&policy.shell).shadowed() {
        println!("warn {s}");
    }
    for r in &results {
        println!("{} {}", if r.ok { "ok  " } else { "FAIL" }, r.message());
    }
    println!("{} passed, {failed} failed", results.len() - failed);
    Ok(if failed == 0 { 0 } else { 1 })
}

/// `cordon session show|revoke NAME`.
fn session_cmd(cmd: SessionCmd) -> Exit {
    let (name, words) = match &cmd {
        SessionCmd::Show { name } => (name, None),
        SessionCmd::Revoke { name, words } => (name, Some(words)),
    };
    let mut s = cordon_gate::session::Session::open(name, &[], None)?;
    match words {
        None => {
            for (tool, key) in s.grants() {
                println!("{} {}", term::clean(tool), term::clean(&key.to_string()));
            }
            Ok(0)
        }
        Some(words) => {
            let n = s.revoke(words)?;
            println!("revoked {n} grant(s) of session `{name}`");
            Ok(0)
        }
    }
}

/// `cordon hook HOST [--policy FILE] [--deadline DURATION]` read without clap, for exactly
/// the shapes `cordon install` writes and their plain variants: the host right after `hook`,
/// each option once, as `--NAME VALUE`, with a value clap would take as it is. Anything else
/// (help, `-v`, `--NAME=VALUE`, a repeat, a bad host or deadline, an unknown word) is `None`
/// and goes to clap, so that clap stays the one that accepts, refuses and explains;
/// `hook_args_agree_with_clap` checks that both read every shape taken here the same way.
fn hook_args(args: &[std::ffi::OsString]) -> Option<(hook::Host, Option<PathBuf>, Duration)> {
    use clap::ValueEnum;
    let [_, sub, host, rest @ ..] = args else {
        return None;
    };
    if sub != "hook" {
        return None;
    }
    let host = hook::Host::from_str(host.to_str()?, false).ok()?;
    let (mut policy, mut deadline) = (None, None);
    for pair in rest.chunks(2) {
        let [name, value] = pair else {
            return None;
        };
        // An empty value or one that starts with `-` is clap's to refuse or to read as a flag.
        if value.is_empty() || value.as_encoded_bytes().starts_with(b"-") {
            return None;
        }
        let slot = match name.to_str()? {
            "--policy" if policy.is_none() => &mut policy,
            "--deadline" if deadline.is_none() => &mut deadline,
            _ => return None,
        };
        *slot = Some(value);
    }
    let deadline = match deadline {
        Some(d) => hook_deadline(d.to_str()?).ok()?,
        None => hook_deadline(HOOK_DEADLINE).ok()?,
    };
    Some((host, policy.map(PathBuf::from), deadline))
}

/// `cordon exec --from-hook [--policy FILE] [--host-grant ID] [--input typed] [--state codex]
/// -c=LINE` read
/// without clap: the
/// exact shape `cordon hook` rewrites an allowed shell line to (`hook::exec_line`), which an
/// agent host runs for every allowed shell call. Anything else — other options, another
/// order, `-c` not attached by `=`, a value clap would refuse or read as a flag, a line that
/// is not UTF-8 — is `None` and goes to clap, which stays the one that accepts, refuses and
/// explains; `exec_args_agree_with_clap` checks that both read every shape taken here the
/// same way.
fn exec_args(args: &[std::ffi::OsString]) -> Option<ExecArgs> {
    let [_, sub, from_hook, rest @ .., last] = args else {
        return None;
    };
    if sub != "exec" || from_hook != "--from-hook" {
        return None;
    }
    let line = last.to_str()?.strip_prefix("-c=")?;
    if line.is_empty() {
        return None;
    }
    let (mut policy, mut host_grant, mut input, mut state) = (None, None, None, None);
    let mut order = 0;
    for pair in rest.chunks(2) {
        let [name, value] = pair else {
            return None;
        };
        // An empty value or one that starts with `-` is clap's to refuse or to read as a flag.
        if value.is_empty() || value.as_encoded_bytes().starts_with(b"-") {
            return None;
        }
        // In the order the rewrite writes them, each once.
        match name.to_str()? {
            "--policy" if order < 1 => {
                policy = Some(PathBuf::from(value));
                order = 1;
            }
            "--host-grant" if order < 2 => {
                host_grant = Some(value.to_str()?.to_string());
                order = 2;
            }
            "--input" if order < 3 && value == "typed" => {
                input = Some("typed".to_string());
                order = 3;
            }
            "--state" if order < 4 && value == "codex" => {
                state = Some("codex".to_string());
                order = 4;
            }
            _ => return None,
        }
    }
    Some(ExecArgs {
        policy,
        backend: None,
        timeout: None,
        approve_all: false,
        strict: false,
        session: None,
        command: Some(line.to_string()),
        argv: Vec::new(),
        host_grant,
        from_hook: true,
        input,
        state,
    })
}

/// The network proxy serves as many connections at once as the open-file limit leaves room
/// for: take what the system allows, not the 1024 most sessions start with. Where it cannot
/// be raised, the proxy fits into what there is.
fn raise_fd_limit() {
    if let Err(e) = cordon_gate::network::raise_fd_limit() {
        tracing::debug!("cannot raise the open-file limit: {e}");
    }
}

/// The process's entry, in place of std's (`#![no_main]`): an agent host starts cordon twice
/// per allowed shell call (`cordon hook`, then the rewritten `cordon exec`), and std's runtime
/// start-up spends a good part of what cordon's own start costs on what cordon does not need —
/// a stack-overflow handler for every thread, whose main-thread guard page glibc finds by
/// reading and parsing `/proc/self/maps`, plus a signal stack mapped for each thread (and
/// unmapped, with the other CPU's TLB flushed, as it ends). A stack overflow is then a plain
/// SIGSEGV instead of a message and SIGABRT: the process dies either way, and a host takes a
/// hook that dies as a block. What std's start-up does that cordon needs is done in
/// [`start`]; the arguments std reads from glibc's `.init_array` call, not from here.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    start();
    run()
}

/// What std's runtime start-up does that cordon needs, done the same way.
///
/// - fds 0, 1 and 2 are open: one that is closed is opened on `/dev/null`, else the first
///   file cordon opens (the audit log, a lock, the policy) would get that number, and the
///   host's reply or a command's output would be written into it. A start where that fails
///   is refused (125).
/// - SIGPIPE is ignored: a host or reader that went away is an `EPIPE` cordon reports (and
///   records), not a silent death. The sandbox's runners put SIGPIPE back to its default
///   action for the command, as std's `Command` does.
/// - SIGXFSZ is ignored too: under a file-size limit (`ulimit -f`) the audit log reaches, a
///   write is an `EFBIG` cordon refuses with a line that says so, not a death without a
///   word. The runners put it back for the command as well.
#[cfg(not(test))]
fn start() {
    for fd in 0..=2 {
        // SAFETY: F_GETFD reads the descriptor's flags and changes nothing; any number is
        // valid to ask about.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        {
            // SAFETY: a NUL-terminated path and plain flags. The lowest free descriptor is
            // `fd`, since 0..fd are open: anything else is a start cordon cannot trust.
            let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if opened != fd {
                std::process::exit(report(&Error::failure(format!(
                    "file descriptor {fd} is closed and /dev/null cannot take its place: start cordon with stdin, stdout and stderr open"
                ))));
            }
        }
    }
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler; it fails only
    // for an invalid signal number.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// What `cordon` does with its arguments; never returns (every path ends in `exit`, which
/// flushes stdout).
#[cfg_attr(test, allow(dead_code))]
fn run() -> ! {
    // `cordon __man DIR` writes the man pages (for packaging, and for the test that keeps
    // docs/man/ current). Outside clap, so that no help, completion or man page offers it.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.len() == 3 && args[1] == "__man" {
        use clap::CommandFactory;
        let dir = PathBuf::from(&args[2]);
        std::process::exit(match manpage::write_all(Cli::command(), &dir) {
            Ok(()) => 0,
            Err(e) => report(&Error::failure(format!(
                "cannot write the man pages into {}: {e}",
                dir.display()
            ))),
        });
    }
    // The agent host runs `cordon hook HOST …` before every tool call: its well-formed
    // shapes skip clap, whose whole command tree costs ~13 % of the hook's user-space
    // instructions to build, parse with and drop (docs/benchmarks.md, start23).
    if let Some((host, policy, deadline)) = hook_args(&args) {
        init_tracing(0);
        raise_fd_limit();
        let code = hook::run(host, policy, deadline).unwrap_or_else(|e| report(&e));
        std::process::exit(code);
    }
    // ... and rewrites each allowed shell line to `cordon exec --from-hook … -c=LINE`, which
    // the host then runs: the same saving on the allowed call's other half.
    if let Some(exec) = exec_args(&args) {
        init_tracing(0);
        raise_fd_limit();
        let code = exec::run(exec).unwrap_or_else(|e| report(&e));
        std::process::exit(code);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => EXIT_FAILURE,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    init_tracing(cli.verbose);
    raise_fd_limit();
    let result: Exit = match cli.command {
        Cmd::Exec(args) => exec::run(args),
        Cmd::Check(args) => check::run(args),
        Cmd::Profile(args) => profile::run(args),
        Cmd::Doctor => Ok(doctor::run()),
        Cmd::Policy(PolicyCmd::Test { file }) => policy_test(file),
        Cmd::Policy(PolicyCmd::Trust { file }) => policy_trust(file, true),
        Cmd::Policy(PolicyCmd::Untrust { file }) => policy_trust(file, false),
        Cmd::Audit(args) => audit::run(args),
        Cmd::Session(cmd) => session_cmd(cmd),
        Cmd::Mcp(args) => mcp::run(args),
        Cmd::Hook {
            host,
            policy,
            deadline,
        } => hook::run(host, policy, deadline),
        Cmd::Install(args) => install::run(args, true),
        Cmd::Uninstall(args) => install::run(args.into(), false),
        Cmd::Init { force } => init::run(force),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "cordon", &mut std::io::stdout());
            Ok(0)
        }
    };
    let code = result.unwrap_or_else(|e| report(&e));
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    /// The words the real `/bin/sh` makes of `line` (as a host's shell runs the hook's and
    /// the rewrite's command lines).
    fn sh_words(line: &str) -> Vec<OsString> {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("set -- {line}; printf '%s\\0' \"$@\""))
            .output()
            .unwrap();
        assert!(out.status.success(), "{line}");
        out.stdout
            .split(|&b| b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| OsString::from_vec(w.to_vec()))
            .collect()
    }

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("cordon")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What clap makes of ARGS when it is a `cordon hook` call without `-v`.
    fn by_clap(args: &[OsString]) -> Option<(hook::Host, Option<PathBuf>, Duration)> {
        match Cli::try_parse_from(args).ok()? {
            Cli {
                verbose: 0,
                command:
                    Cmd::Hook {
                        host,
                        policy,
                        deadline,
                    },
            } => Some((host, policy, deadline)),
            _ => None,
        }
    }

    /// What clap makes of ARGS when it is a `cordon exec` call without `-v`, as comparable
    /// fields (every field of `ExecArgs`).
    #[allow(clippy::type_complexity)]
    fn exec_fields(
        a: &ExecArgs,
    ) -> (
        Option<PathBuf>,
        bool,
        Option<Duration>,
        bool,
        bool,
        Option<String>,
        Option<String>,
        Vec<String>,
        Option<String>,
        bool,
        Option<String>,
        Option<String>,
    ) {
        (
            a.policy.clone(),
            a.backend.is_some(),
            a.timeout,
            a.approve_all,
            a.strict,
            a.session.clone(),
            a.command.clone(),
            a.argv.clone(),
            a.host_grant.clone(),
            a.from_hook,
            a.input.clone(),
            a.state.clone(),
        )
    }

    fn exec_by_clap(args: &[OsString]) -> Option<ExecArgs> {
        match Cli::try_parse_from(args).ok()? {
            Cli {
                verbose: 0,
                command: Cmd::Exec(a),
            } => Some(a),
            _ => None,
        }
    }

    /// The clap-less `exec` path: every shape it takes, clap reads the same way (all of
    /// `ExecArgs`); every shape it leaves, clap handles. The lines `cordon hook` writes —
    /// split into words by the real `sh`, as the host's shell splits them — are taken, so
    /// the allowed call does not pay for clap again unnoticed.
    #[test]
    fn exec_args_agree_with_clap() {
        let taken: &[&[&str]] = &[
            &["exec", "--from-hook", "-c=ls"],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "/w/cordon.toml",
                "-c=ls -la",
            ],
            &["exec", "--from-hook", "--host-grant", "ab12", "-c=git push"],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "p",
                "--host-grant",
                "ab12",
                "-c=-x",
            ],
            &["exec", "--from-hook", "-c==x"],
            &["exec", "--from-hook", "-c=-c=x"],
            &["exec", "--from-hook", "--input", "typed", "-c=ls"],
            &["exec", "--from-hook", "--state", "codex", "-c=ls"],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "p",
                "--state",
                "codex",
                "-c=ls",
            ],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "p",
                "--host-grant",
                "ab12",
                "--input",
                "typed",
                "-c=ls",
            ],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "a b",
                "-c=a\nb 'c' \"d\"",
            ],
        ];
        let left: &[&[&str]] = &[
            &[],
            &["exec"],
            &["exec", "-c=ls"],
            &["exec", "--from-hook"],
            &["exec", "--from-hook", "-c="],
            &["exec", "--from-hook", "-cls"],
            &["exec", "--from-hook", "-c", "ls"],
            &["exec", "--from-hook", "--policy=p", "-c=ls"],
            &["exec", "--from-hook", "--policy", "", "-c=ls"],
            &["exec", "--from-hook", "--policy", "-p", "-c=ls"],
            &[
                "exec",
                "--from-hook",
                "--policy",
                "a",
                "--policy",
                "b",
                "-c=ls",
            ],
            &[
                "exec",
                "--from-hook",
                "--host-grant",
                "g",
                "--policy",
                "p",
                "-c=ls",
            ],
            &["exec", "--from-hook", "--backend", "none", "-c=ls"],
            &["exec", "--from-hook", "--input", "keys", "-c=ls"],
            &["exec", "--from-hook", "--state", "other", "-c=ls"],
            &[
                "exec",
                "--from-hook",
                "--state",
                "codex",
                "--input",
                "typed",
                "-c=ls",
            ],
            &[
                "exec",
                "--from-hook",
                "--input",
                "typed",
                "--policy",
                "p",
                "-c=ls",
            ],
            &["exec", "--from-hook", "--approve-all", "-c=ls"],
            &["exec", "--from-hook", "--session", "s", "-c=ls"],
            &["exec", "--from-hook", "-c=ls", "--", "x"],
            &["exec", "--from-hook", "-c=ls", "--help"],
            &["exec", "--from-hook", "--help"],
            &["-v", "exec", "--from-hook", "-c=ls"],
            &["exec", "--from-hook", "-v", "-c=ls"],
            &["hook", "--from-hook", "-c=ls"],
            &["check", "--from-hook", "-c=ls"],
        ];
        for words in taken {
            let args = argv(words);
            let fast = exec_args(&args);
            assert!(fast.is_some(), "not taken: {words:?}");
            let clap = exec_by_clap(&args);
            assert!(clap.is_some(), "clap refuses {words:?}");
            assert_eq!(
                exec_fields(&fast.unwrap()),
                exec_fields(&clap.unwrap()),
                "{words:?}"
            );
        }
        for words in left {
            assert!(exec_args(&argv(words)).is_none(), "taken: {words:?}");
        }
        // A policy path that is not UTF-8 is a path all the same, to both.
        let mut args = argv(&["exec", "--from-hook", "--policy"]);
        args.push(OsString::from_vec(b"/w/\xff.toml".to_vec()));
        args.push("-c=ls".into());
        assert_eq!(
            exec_args(&args).map(|a| exec_fields(&a)),
            exec_by_clap(&args).map(|a| exec_fields(&a))
        );
        // A line that is not UTF-8 is clap's to refuse.
        let mut args = argv(&["exec", "--from-hook"]);
        args.push(OsString::from_vec(b"-c=\xff".to_vec()));
        assert!(exec_args(&args).is_none());
        // The lines the hook writes, split by the shell as the host's is.
        for line in ["ls -la", "=x", "-x", "it's \"q\"\nnext", "a\\b $(c) `d`"] {
            let hosts = [
                hook::Host::Claude,
                hook::Host::Codex,
                hook::Host::Gemini,
                hook::Host::Copilot,
                hook::Host::Opencode,
            ];
            for (host, grant) in hosts
                .into_iter()
                .flat_map(|h| [(h, None), (h, Some("0123abcd"))])
            {
                let written = hook::exec_line(
                    Some((std::path::Path::new("/usr/bin/cordon"), host)),
                    Some(std::path::Path::new("/w/it's cordon.toml")),
                    grant,
                    line,
                )
                .unwrap();
                let words = sh_words(&written);
                let fast = exec_args(&words).unwrap_or_else(|| panic!("not taken: {words:?}"));
                assert_eq!(fast.command.as_deref(), Some(line), "{written}");
                assert_eq!(
                    exec_fields(&fast),
                    exec_fields(&exec_by_clap(&words).unwrap()),
                    "{written}"
                );
            }
        }
    }

    /// Every shape the clap-less path takes, clap reads the same way; every shape it leaves,
    /// clap handles (help, errors, other spellings). The shapes `cordon install` writes are
    /// among those taken, or the host's hook would pay for clap again unnoticed.
    #[test]
    fn hook_args_agree_with_clap() {
        let taken: &[&[&str]] = &[
            &["hook", "claude"],
            &["hook", "codex", "--policy", "/w/cordon.toml"],
            &["hook", "gemini", "--deadline", "5s"],
            &[
                "hook",
                "copilot",
                "--policy",
                "p.toml",
                "--deadline",
                "500ms",
            ],
            &["hook", "opencode", "--deadline", "29s", "--policy", "x"],
            &["hook", "claude", "--policy", "claude"],
            &["hook", "claude", "--policy", "a b/c d.toml"],
        ];
        let left: &[&[&str]] = &[
            &[],
            &["hook"],
            &["hook", "--help"],
            &["hook", "claude", "--help"],
            &["hook", "claude", "-h"],
            &["hook", "Claude"],
            &["hook", "nohost"],
            &["hook", "--policy", "p", "claude"],
            &["-v", "hook", "claude"],
            &["hook", "claude", "-v"],
            &["hook", "claude", "--policy=p"],
            &["hook", "claude", "--policy"],
            &["hook", "claude", "--policy", ""],
            &["hook", "claude", "--policy", "-p"],
            &["hook", "claude", "--policy", "a", "--policy", "b"],
            &["hook", "claude", "--deadline", "0s"],
            &["hook", "claude", "--deadline", "30s"],
            &["hook", "claude", "--deadline", "soon"],
            &["hook", "claude", "--deadline", "1s", "--deadline", "2s"],
            &["hook", "claude", "extra"],
            &["hook", "claude", "--", "--policy", "p"],
            &["hook", "claude", "--unknown", "x"],
            &["exec", "claude"],
            &["--version"],
        ];
        for words in taken {
            let args = argv(words);
            let fast = hook_args(&args);
            assert!(fast.is_some(), "not taken: {words:?}");
            assert_eq!(fast, by_clap(&args), "{words:?}");
        }
        for words in left {
            assert_eq!(hook_args(&argv(words)), None, "taken: {words:?}");
        }
        // A policy path that is not UTF-8 is a path all the same, to both.
        let mut args = argv(&["hook", "claude", "--policy"]);
        args.push(OsString::from_vec(b"/w/\xff.toml".to_vec()));
        assert!(hook_args(&args).is_some());
        assert_eq!(hook_args(&args), by_clap(&args));
        // The lines `cordon install` writes, split into words by the shell as the host's is.
        for deadline in [None, Some(Duration::from_secs(5))] {
            let line = install::hook_command(
                std::path::Path::new("/usr/bin/cordon"),
                hook::Host::Claude,
                Some(std::path::Path::new("/w/it's cordon.toml")),
                deadline,
            )
            .unwrap();
            let (head, _) = line.split_once(" || ").unwrap();
            let installed = sh_words(head);
            let fast = hook_args(&installed);
            assert!(fast.is_some(), "{installed:?}");
            assert_eq!(fast, by_clap(&installed), "{installed:?}");
        }
    }
}
