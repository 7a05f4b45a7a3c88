//! cordon's policy: one TOML file that is the single source of truth for every layer.
//!
//! The approval layer reads the shell rules and tool settings from it, the file tools read the
//! named roots, and the OS sandbox derives its kernel profile from the very same roots, so a
//! path declared writable for the tools is the path the kernel lets a child write.
//!
//! Loading is strict: an unknown key, a bad value, a root that does not exist or a pattern that
//! does not compile is a [`PolicyError`] that names `file:line:col` and says how to fix it.
//! Relative paths are relative to the policy file's directory (the current directory for the
//! embedded default).
//!
//! ```
//! use cordon_policy::{Policy, Mode, Action};
//!
//! let dir = std::env::temp_dir();
//! let text = r#"
//! version = 1
//! [sandbox.paths.work]
//! root = "."
//! mode = "rw"
//! [shell]
//! default = "ask"
//! [[shell.rules]]
//! pattern = "git status"
//! action = "allow"
//! "#;
//! let policy = Policy::parse(text, "cordon.toml", &dir).unwrap();
//! assert_eq!(policy.sandbox.paths[0].mode, Mode::ReadWrite);
//! assert_eq!(policy.shell.rules[0].action, Action::Allow);
//! assert_eq!(policy.shell.rules[0].location.to_string(), "cordon.toml:8:1");
//!
//! let err = Policy::parse("version = 1\nnetwrok = 1\n", "cordon.toml", &dir).unwrap_err();
//! assert!(err.to_string().starts_with("cordon.toml:2:1: unknown field `netwrok`"));
//! ```

pub mod credentials;
mod error;
pub mod mcp;
pub mod network;
mod pattern;
pub mod present;
mod raw;
pub mod requests;
pub mod surface;
pub mod trust;
pub mod verdict;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_spanned::Spanned;

pub use credentials::{Credential, Header, Source};
pub use error::{Location, PolicyError};
pub use mcp::McpPolicy;
pub use network::{HostPattern, HostRule, NetworkDefault, NetworkPolicy};
pub use pattern::{
    basename, is_glob, literal_prefix, names_system_program, Pattern, SYSTEM_BIN_DIRS,
};

/// The shipped default policy, embedded in the binary: `profiles/default.toml`.
pub const DEFAULT_POLICY: &str = include_str!("../../../profiles/default.toml");
/// The policy file looked up in the current directory.
pub const DEFAULT_POLICY_FILE: &str = "cordon.toml";

/// The file "approve always" rules are kept in, beside the policy file.
pub const RULES_FILE_NAME: &str = "cordon.rules.toml";

/// The directory beside an audit log where the after-run scans of the runs recording to it
/// keep their markers and kept listings (`LOGDIR/scans`): cordon's own, kept from every run
/// and every tool call as the log is (a run that removed its own scan's marker, its cordon
/// then killed, was never scanned).
pub const SCANS_DIR: &str = "scans";

/// The directory beside an audit log where the `cordon exec` runs Codex starts inside its own
/// sandbox keep their state (`LOGDIR/codex`: their audit log, their scans' markers and
/// listings), apart from the rest of cordon's state. `cordon install codex` makes it, and only
/// it, writable in Codex's sandbox, where everything Codex runs without cordon (a `!` command,
/// an MCP server, a call whose hook timed out) can write it too: so nothing outside it — the
/// hook's own log, the scans other runs act on, sessions, host grants — is in their reach, and
/// what lies in it is worth no more than what Codex's sandbox lets them do anyway.
pub const CODEX_STATE_DIR: &str = "codex";

/// How locations in the embedded default are named.
pub const DEFAULT_POLICY_NAME: &str = "<embedded profiles/default.toml>";

/// Which OS sandbox runs the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Auto,
    Landlock,
    Bwrap,
    Seatbelt,
    None,
}

impl Backend {
    pub fn parse(s: &str) -> Option<Backend> {
        Some(match s {
            "auto" => Backend::Auto,
            "landlock" => Backend::Landlock,
            "bwrap" => Backend::Bwrap,
            "seatbelt" => Backend::Seatbelt,
            "none" => Backend::None,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
            Backend::Seatbelt => "seatbelt",
            Backend::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    Deny,
    Allow,
    /// Only through cordon's network proxy: the command runs where the one address it can
    /// reach is the proxy's listener on its loopback (see `[network]` for what the proxy
    /// lets through).
    Proxy,
}

/// What the sandbox may do to the `.git` directory of each writable root (`sandbox.git`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GitDir {
    /// Writable like the rest of the root (the default). What a run leaves there that git
    /// runs or reads as configuration is still reported after the run and moved aside.
    #[default]
    Writable,
    /// Git works (objects, refs, logs, index, HEAD and the other files git writes in normal
    /// work stay writable), but everything git reads as configuration or code (`config`,
    /// `commondir`, `hooks/`, `info/`, `modules/`, `worktrees/`, alternates, …) is read-only
    /// and what is missing of it cannot be created. Needs a backend that can keep a path
    /// read-only inside a writable root (bwrap).
    Protect,
}

impl GitDir {
    pub fn name(self) -> &'static str {
        match self {
            GitDir::Writable => "writable",
            GitDir::Protect => "protect",
        }
    }
}

/// Access mode of a named root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    ReadOnly,
    ReadWrite,
}

/// A rule's or default's verdict. Ordered from least to most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "allow" => Action::Allow,
            "ask" => Action::Ask,
            "deny" => Action::Deny,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

/// How unanswered asks are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    Interactive,
    ApproveAll,
    Strict,
    Deny,
}

/// A policy, validated and with every path absolute.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The file it came from, or [`DEFAULT_POLICY_NAME`].
    pub source: String,
    /// The file it was loaded from, canonical (symlinks resolved); `None` when parsed from
    /// text (the embedded default, a string).
    pub path: Option<PathBuf>,
    pub sandbox: Sandbox,
    pub shell: Shell,
    pub tools: BTreeMap<String, ToolConfig>,
    pub approval: Approval,
    /// The `[network]` section: the hosts a run may reach through cordon's proxy.
    pub network: NetworkPolicy,
    /// `[credentials.NAME]`: secrets the command gets a placeholder for, and cordon's proxy
    /// puts in the requests to their hosts (see [`credentials`]), in name order.
    pub credentials: Vec<Credential>,
    /// The `[mcp]` section: tool calls of the MCP servers `cordon mcp wrap` runs.
    pub mcp: McpPolicy,
    /// The places this user's trust stores may be ([`trust::store_dirs`]), the one in use
    /// first: kept out of the sandbox's reach, so that no command can trust its own policy.
    pub trust_stores: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct Sandbox {
    pub backend: Backend,
    /// Refuse to run (exit 125) rather than run with less confinement than the policy asks.
    pub require_os_sandbox: bool,
    pub network: Network,
    /// Read-only, executable access to the OS directories programs need to start.
    pub system_read: bool,
    pub extra_read: Vec<PathBuf>,
    /// `extra_read` as the policy names it (absolute, `.` and `..` removed lexically), before
    /// symlinks were resolved, in the same order: a link on the way that lies in a writable
    /// root could have been planted by a run (see the OS sandbox's path resolver).
    pub extra_read_written: Vec<PathBuf>,
    /// Paths that stay read-only inside writable roots. Relative entries apply inside every
    /// read-write root; they need not exist (they must then not be created).
    pub protected: Vec<PathBuf>,
    /// What the sandbox may do to the `.git` directory of each writable root.
    pub git: GitDir,
    /// Named roots, in name order.
    pub paths: Vec<PathRoot>,
    /// Environment variables passed to the child besides the built-in allow-list.
    pub env: Vec<String>,
    pub limits: Limits,
}

/// One `[sandbox.paths.NAME]` table.
#[derive(Debug, Clone)]
pub struct PathRoot {
    pub name: String,
    /// Absolute and canonical (symlinks resolved when the policy loaded).
    pub root: PathBuf,
    /// The root as the policy names it (absolute, `.` and `..` removed lexically), before
    /// symlinks were resolved: a link on the way that lies in a writable root could have been
    /// planted by a run (see the OS sandbox's path resolver).
    pub written: PathBuf,
    pub mode: Mode,
    /// Whether programs inside may be executed (default true).
    pub exec: bool,
    /// When non-empty, the file tools touch only files with these suffixes.
    pub suffixes: Vec<String>,
    pub read_approval: bool,
    pub write_approval: bool,
}

/// Resource limits for the child. `None` means unlimited (inherit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock limit; the whole process tree is killed when it expires.
    pub timeout: Option<Duration>,
    /// RLIMIT_AS, bytes.
    pub memory: Option<u64>,
    /// RLIMIT_FSIZE, bytes.
    pub file_size: Option<u64>,
    /// RLIMIT_NOFILE.
    pub open_files: Option<u64>,
    /// RLIMIT_NPROC (per user, as the kernel counts it).
    pub processes: Option<u64>,
    /// RLIMIT_CPU, seconds.
    pub cpu_time: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Shell {
    /// Decision when no rule matches.
    pub default: Action,
    pub rules: Vec<ShellRule>,
}

#[derive(Debug, Clone)]
pub struct ShellRule {
    pub pattern: Pattern,
    pub action: Action,
    pub reason: Option<String>,
    /// Command lines this rule must match, checked when the policy is loaded.
    pub matches: Vec<Example>,
    /// Command lines this rule must not match.
    pub not_match: Vec<Example>,
    /// Where the rule's table starts.
    pub location: Location,
}

/// A `match`/`not_match` example with its location, for error messages.
#[derive(Debug, Clone)]
pub struct Example {
    pub line: String,
    pub location: Location,
}

#[derive(Debug, Clone)]
pub struct ToolConfig {
    pub approval: Action,
    pub location: Location,
}

#[derive(Debug, Clone)]
pub struct Approval {
    pub mode: ApprovalMode,
    /// An unanswered request is denied after this long.
    pub timeout: Duration,
    /// Same tool + same arguments this many times in a row raises an ask (0: off).
    pub doom_loop: u32,
    /// Where every decision is recorded.
    pub audit_log: AuditLog,
    /// The per-user default places (`$XDG_STATE_HOME/cordon/audit.jsonl`,
    /// `$HOME/.local/state/cordon/audit.jsonl`) other than `audit_log`: logs that runs under
    /// another policy or setting wrote there are kept out of the sandbox's reach as well, so a
    /// run under this policy cannot erase the trail another left.
    pub other_audit_logs: Vec<PathBuf>,
}

/// Where decisions are recorded: the policy's `approval.audit_log`, else a per-user default,
/// so that a policy that says nothing about the log still leaves a record of every decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditLog {
    /// `approval.audit_log`, resolved against the policy file's directory.
    Configured(PathBuf),
    /// The policy names no log: `$XDG_STATE_HOME/cordon/audit.jsonl`, else
    /// `$HOME/.local/state/cordon/audit.jsonl` (the XDG base directory for state).
    Default(PathBuf),
    /// The policy names no log and neither `XDG_STATE_HOME` nor `HOME` is an absolute path:
    /// there is nowhere to record, so `cordon exec` refuses to run anything.
    Nowhere,
}

impl AuditLog {
    /// The log's path, unless there is none.
    pub fn path(&self) -> Option<&Path> {
        match self {
            AuditLog::Configured(p) | AuditLog::Default(p) => Some(p),
            AuditLog::Nowhere => None,
        }
    }

    /// How messages and profile comments name the log.
    pub fn key(&self) -> &'static str {
        match self {
            AuditLog::Configured(_) => "approval.audit_log",
            AuditLog::Default(_) | AuditLog::Nowhere => {
                "the default audit log (approval.audit_log is not set)"
            }
        }
    }

    /// The default for a policy that names no log, from the environment `var` gives:
    /// `$XDG_STATE_HOME/cordon/audit.jsonl`, else `$HOME/.local/state/cordon/audit.jsonl`.
    /// A relative or empty value is ignored, as the XDG base directory specification says, and
    /// so is one with a `..` component: `..` after a directory that does not exist yet
    /// would make the path the writer opens differ from the one the sandbox protects.
    pub fn default_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> AuditLog {
        let absolute = |name: &str| {
            var(name).map(PathBuf::from).filter(|p| {
                p.is_absolute()
                    && p.components()
                        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
            })
        };
        let state =
            absolute("XDG_STATE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".local/state")));
        match state {
            Some(dir) => AuditLog::Default(dir.join("cordon/audit.jsonl")),
            None => AuditLog::Nowhere,
        }
    }
}

impl Policy {
    /// Finds the policy the CLI uses: `explicit` if given (the operator named it), else
    /// `./cordon.toml` in `cwd` when the operator trusted its exact content in the trust store
    /// of this environment ([`trust::TrustStore::from_env`]), else the embedded default
    /// (relative paths resolved against `cwd`).
    pub fn discover(explicit: Option<&Path>, cwd: &Path) -> Result<Policy, PolicyError> {
        Policy::discover_in(explicit, cwd, &trust::TrustStore::from_env())
    }

    /// [`Policy::discover`] with trust kept in `store`. A `./cordon.toml` that is there in any
    /// form (a symlink, a FIFO, a directory, a file not trusted as it is) is refused, never
    /// skipped for the default: the operator must see what was left there.
    pub fn discover_in(
        explicit: Option<&Path>,
        cwd: &Path,
        store: &trust::TrustStore,
    ) -> Result<Policy, PolicyError> {
        if let Some(path) = explicit {
            return Policy::load(path);
        }
        let local = cwd.join(DEFAULT_POLICY_FILE);
        match std::fs::symlink_metadata(&local) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Policy::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME, cwd)
            }
            Err(source) => Err(PolicyError::Read {
                path: local,
                source,
            }),
            Ok(_) => {
                let file = trust::read_file(&local, trust::Follow::Never)?;
                store.check(&file, trust::Pinned::Policy)?;
                let base = file.path.parent().unwrap_or(Path::new("/")).to_path_buf();
                let mut policy = Policy::parse(&file.text, &local.display().to_string(), &base)?;
                policy.path = Some(file.path);
                Ok(policy)
            }
        }
    }

    /// The policy file this policy was loaded from (canonical); `None` for the embedded
    /// default or text parsed from a string.
    pub fn file(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// The rules file beside the policy file (`cordon.rules.toml`), where "approve always"
    /// rules are kept; `None` for the embedded default.
    pub fn rules_file(&self) -> Option<PathBuf> {
        let file = self.file()?;
        Some(
            file.parent()
                .unwrap_or(Path::new("/"))
                .join(RULES_FILE_NAME),
        )
    }

    /// Loads a policy file the operator named; relative paths inside are relative to its
    /// directory. A symlink is followed; a FIFO, a device or a file over
    /// [`trust::MAX_FILE_SIZE`] is refused ([`trust::read_file`]).
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let file = trust::read_file(path, trust::Follow::Links)?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let base = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut policy = Policy::parse(&file.text, &path.display().to_string(), &base)?;
        // The real file: what must be kept out of the sandbox's reach, and where its
        // remembered rules live, even when it was named through a symlink.
        policy.path = Some(file.path);
        Ok(policy)
    }

    /// Parses policy text. `name` is used in error locations; `base` resolves relative paths.
    pub fn parse(text: &str, name: &str, base: &Path) -> Result<Policy, PolicyError> {
        let cx = Cx {
            name,
            text,
            base,
            lines: error::Lines::new(text),
        };
        let raw: raw::RawPolicy = from_toml(text, name, hint_for_serde)?;
        cx.build(raw)
    }

    /// The named root with this name.
    pub fn root(&self, name: &str) -> Option<&PathRoot> {
        self.sandbox.paths.iter().find(|p| p.name == name)
    }
}

/// A rules file (`cordon.rules.toml`, beside the policy): the rules "approve always"
/// remembered, checked like the policy's own. It holds `version = 1`, `[[shell.rules]]`
/// tables (as in a policy) and `[[network.rules]]` tables — `host` (an entry as in
/// `[network] allow`: `api.example.org:443`), `action`, an optional `reason` — and nothing
/// else: a rules file only ever adds rules, so a `[sandbox]`, a `default` or a `[network]`
/// list there is refused rather than silently ignored.
///
/// ```
/// use cordon_policy::{Action, RulesFile};
///
/// let text = "version = 1\n[[shell.rules]]\npattern = \"make test\"\nexact = true\naction = \"allow\"\n\
///             [[network.rules]]\nhost = \"API.example.org:443\"\naction = \"allow\"\n";
/// let r = RulesFile::parse(text, "cordon.rules.toml", std::path::Path::new("/")).unwrap();
/// assert_eq!(r.shell[0].pattern.as_str(), "make test");
/// assert_eq!(r.network[0].action, Action::Allow);
/// assert_eq!(r.network[0].location.to_string(), "cordon.rules.toml:6:1");
/// let bad = "version = 1\n[sandbox]\nnetwork = \"allow\"\n";
/// assert!(RulesFile::parse(bad, "cordon.rules.toml", std::path::Path::new("/")).is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct RulesFile {
    pub shell: Vec<ShellRule>,
    /// `[[network.rules]]`, as rules over the `network` tool's key (`network HOST:PORT`),
    /// exact like `[network]` entries.
    pub network: Vec<ShellRule>,
}

impl RulesFile {
    /// Parses a rules file's text; errors name `name:line:col` like a policy's.
    pub fn parse(text: &str, name: &str, base: &Path) -> Result<RulesFile, PolicyError> {
        let cx = Cx {
            name,
            text,
            base,
            lines: error::Lines::new(text),
        };
        let raw: raw::RawRulesFile = from_toml(text, name, |_| {
            Some("a rules file holds `version = 1`, [[shell.rules]] and [[network.rules]] (host, action, reason) only")
        })?;
        cx.version(&raw.version)?;
        let shell = cx
            .shell(raw::RawShell {
                default: None,
                rules: raw.shell.rules,
            })?
            .rules;
        let network = raw
            .network
            .rules
            .iter()
            .map(|r| cx.network_rule(r))
            .collect::<Result<_, _>>()?;
        Ok(RulesFile { shell, network })
    }
}

/// How to write a `[network]` entry or a `[[network.rules]]` host.
const HOST_HINT: &str = "write HOST or HOST:PORT: `github.com`, `*.example.org` (subdomains), `index.example.com:443`, `10.0.0.5:5432`, `[::1]:443`";

/// Deserialises TOML text; a syntax or schema error names `name:line:col`, with a hint for
/// its message.
fn from_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    name: &str,
    hint: impl Fn(&str) -> Option<&'static str>,
) -> Result<T, PolicyError> {
    toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        PolicyError::invalid(
            Location::at(name, text, offset),
            e.message().trim().to_string(),
            hint(e.message()),
        )
    })
}

fn hint_for_serde(message: &str) -> Option<&'static str> {
    if message.contains("unknown field") {
        Some("remove the key or fix its spelling; unknown keys are refused so that a typo never drops a protection")
    } else if message.contains("missing field") {
        Some("add the key")
    } else if message.contains("invalid type") {
        Some("check the value's type against the policy format")
    } else {
        None
    }
}

pub(crate) struct Cx<'a> {
    name: &'a str,
    text: &'a str,
    base: &'a Path,
    lines: error::Lines,
}

impl Cx<'_> {
    fn loc<T>(&self, s: &Spanned<T>) -> Location {
        self.lines.locate(self.name, self.text, s.span().start)
    }

    fn err<T>(&self, at: &Spanned<T>, message: impl Into<String>, hint: &str) -> PolicyError {
        PolicyError::invalid(self.loc(at), message, Some(hint))
    }

    fn choice<T: Copy>(
        &self,
        value: &Option<Spanned<String>>,
        parse: impl Fn(&str) -> Option<T>,
        default: T,
        key: &str,
        allowed: &str,
    ) -> Result<T, PolicyError> {
        match value {
            None => Ok(default),
            Some(v) => parse(v.get_ref()).ok_or_else(|| {
                self.err(
                    v,
                    format!("invalid {key} `{}`", v.get_ref()),
                    &format!("use one of: {allowed}"),
                )
            }),
        }
    }

    /// Resolves a path from the file: `~/` is the home directory, relative is against `base`.
    fn path(&self, value: &Spanned<String>) -> Result<PathBuf, PolicyError> {
        let s = value.get_ref();
        if s.is_empty() {
            return Err(self.err(value, "empty path", "write `.` for the policy's directory"));
        }
        if s.contains(['\0', '\n', '\r']) {
            return Err(self.err(
                value,
                "path contains a NUL or newline character",
                "rename the directory; such paths cannot be passed safely to every backend",
            ));
        }
        let p = if let Some(rest) = s.strip_prefix("~/") {
            let home = std::env::var_os("HOME").ok_or_else(|| {
                self.err(
                    value,
                    "`~` used but HOME is not set",
                    "write an absolute path",
                )
            })?;
            PathBuf::from(home).join(rest)
        } else {
            self.base.join(s)
        };
        Ok(cordon_fs::links::lexical(&p))
    }

    fn existing_dir(&self, value: &Spanned<String>, what: &str) -> Result<PathBuf, PolicyError> {
        let p = self.path(value)?;
        match std::fs::canonicalize(&p) {
            Ok(c) if c.is_dir() => Ok(c),
            Ok(_) => Err(self.err(
                value,
                format!("{what} `{}` is not a directory", p.display()),
                "a root must be a directory",
            )),
            Err(e) => Err(self.err(
                value,
                format!("{what} `{}` does not exist ({e})", p.display()),
                "create the directory or fix the path; relative paths are relative to the policy file",
            )),
        }
    }

    fn duration(&self, value: &Spanned<String>) -> Result<Duration, PolicyError> {
        parse_duration(value.get_ref()).ok_or_else(|| {
            self.err(
                value,
                format!("invalid duration `{}`", value.get_ref()),
                "write a number with a unit: 500ms, 30s, 5m, 2h",
            )
        })
    }

    fn size(&self, value: &Spanned<String>) -> Result<u64, PolicyError> {
        parse_size(value.get_ref()).ok_or_else(|| {
            self.err(
                value,
                format!("invalid size `{}`", value.get_ref()),
                "write bytes with an optional unit: 4096, 512K, 2G",
            )
        })
    }

    fn count(&self, value: &Spanned<i64>, what: &str) -> Result<u64, PolicyError> {
        u64::try_from(*value.get_ref())
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                self.err(
                    value,
                    format!("{what} must be a positive number"),
                    "use 1 or more",
                )
            })
    }

    fn version(&self, version: &Option<Spanned<i64>>) -> Result<(), PolicyError> {
        match version {
            None => {
                return Err(PolicyError::invalid(
                    Location::at(self.name, self.text, 0),
                    "missing `version`",
                    Some("add `version = 1` at the top"),
                ))
            }
            Some(v) if *v.get_ref() != 1 => {
                return Err(self.err(
                    v,
                    format!("unsupported policy version {}", v.get_ref()),
                    "this cordon reads `version = 1`",
                ))
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn build(&self, raw: raw::RawPolicy) -> Result<Policy, PolicyError> {
        self.version(&raw.version)?;
        let sandbox = self.sandbox(raw.sandbox)?;
        let shell = self.shell(raw.shell)?;
        let mut tools = BTreeMap::new();
        for (name, tool) in raw.tools {
            let loc = self.loc(&tool);
            let tool = tool.into_inner();
            check_name(&name, &loc, "tool")?;
            let approval = self.choice(
                &tool.approval,
                Action::parse,
                Action::Ask,
                "tool approval",
                "allow, ask, deny",
            )?;
            tools.insert(
                name,
                ToolConfig {
                    approval,
                    location: loc,
                },
            );
        }
        let approval = self.approval(raw.approval)?;
        let network = match &raw.network {
            Some(n) => {
                let section = self.network(n)?;
                // Only the proxy enforces the section: under `deny` it would be dead text, and
                // under `allow` its deny list would protect nothing.
                if sandbox.network != Network::Proxy {
                    return Err(self.err(
                        n,
                        "the [network] section takes effect only with `[sandbox] network = \"proxy\"`",
                        "set network = \"proxy\" in [sandbox] to reach exactly these hosts, or remove the [network] section",
                    ));
                }
                section
            }
            None => NetworkPolicy::default(),
        };
        let credentials = self.credentials(&raw.credentials, &sandbox)?;
        let mcp = match &raw.mcp {
            Some(m) => self.mcp(m)?,
            None => McpPolicy::default(),
        };
        Ok(Policy {
            source: self.name.to_string(),
            path: None,
            sandbox,
            shell,
            tools,
            approval,
            network,
            credentials,
            mcp,
            trust_stores: trust::store_dirs(|name| std::env::var_os(name)),
        })
    }

    fn sandbox(&self, raw: raw::RawSandbox) -> Result<Sandbox, PolicyError> {
        let backend = self.choice(
            &raw.backend,
            Backend::parse,
            Backend::Auto,
            "backend",
            "auto, landlock, bwrap, seatbelt, none",
        )?;
        let require_os_sandbox = raw.require_os_sandbox.as_ref().is_none_or(|v| *v.get_ref());
        if backend == Backend::None && require_os_sandbox {
            let at = raw
                .backend
                .as_ref()
                .expect("backend was parsed from a value");
            return Err(self.err(
                at,
                "backend `none` runs commands unconfined, but `require_os_sandbox` is true",
                "set `require_os_sandbox = false` to accept unconfined runs, or pick another backend",
            ));
        }
        let network = self.choice(
            &raw.network,
            |s| match s {
                "deny" => Some(Network::Deny),
                "allow" => Some(Network::Allow),
                "proxy" => Some(Network::Proxy),
                _ => None,
            },
            Network::Deny,
            "network",
            "deny, allow, proxy",
        )?;

        let mut extra_read = Vec::new();
        let mut extra_read_written = Vec::new();
        for p in &raw.extra_read {
            let path = self.path(p)?;
            if !path.exists() {
                return Err(self.err(
                    p,
                    format!("extra_read path `{}` does not exist", path.display()),
                    "remove it or fix the path",
                ));
            }
            extra_read.push(std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()));
            extra_read_written.push(path);
        }

        let git = self.choice(
            &raw.git,
            |s| match s {
                "writable" => Some(GitDir::Writable),
                "protect" => Some(GitDir::Protect),
                _ => None,
            },
            GitDir::Writable,
            "git",
            "writable, protect",
        )?;

        let mut protected = Vec::new();
        for p in &raw.protected {
            let s = p.get_ref();
            if s.is_empty()
                || s.contains(['\0', '\n', '\r'])
                || Path::new(s).components().any(|c| c == Component::ParentDir)
            {
                return Err(self.err(
                    p,
                    format!("invalid protected path `{s}`"),
                    "write a path inside a writable root, without `..`, e.g. `.git/hooks`",
                ));
            }
            // Relative protected paths apply inside every writable root, so they stay relative.
            protected.push(if Path::new(s).is_absolute() {
                cordon_fs::links::lexical(Path::new(s))
            } else {
                PathBuf::from(s)
            });
        }

        let mut paths = Vec::new();
        for (name, table) in &raw.paths {
            let loc = self.loc(table);
            let t = table.get_ref();
            check_name(name, &loc, "root")?;
            let written = self.path(&t.root)?;
            let root = self.existing_dir(&t.root, "root")?;
            let mode = self.choice(
                &t.mode,
                |s| match s {
                    "ro" => Some(Mode::ReadOnly),
                    "rw" => Some(Mode::ReadWrite),
                    _ => None,
                },
                Mode::ReadOnly,
                "mode",
                "ro, rw",
            )?;
            if mode == Mode::ReadWrite && root == Path::new("/") {
                return Err(self.err(
                    &t.root,
                    "root `/` is read-write: that grants the whole filesystem",
                    "run from a project directory, or name the directories to write (relative roots resolve against the policy file, or the current directory for the default)",
                ));
            }
            let mut suffixes = Vec::new();
            for s in &t.suffixes {
                if !s.get_ref().starts_with('.')
                    || s.get_ref().len() < 2
                    || s.get_ref().contains('/')
                {
                    return Err(self.err(
                        s,
                        format!("invalid suffix `{}`", s.get_ref()),
                        "write suffixes with their dot, e.g. `.md`",
                    ));
                }
                suffixes.push(s.get_ref().clone());
            }
            if let Some(other) = paths.iter().find(|p: &&PathRoot| p.root == root) {
                if other.mode != mode {
                    return Err(self.err(
                        &t.root,
                        format!(
                            "root `{}` is declared twice with different modes ({} and {name})",
                            root.display(),
                            other.name
                        ),
                        "declare each directory once",
                    ));
                }
            }
            paths.push(PathRoot {
                name: name.clone(),
                root,
                written,
                mode,
                exec: t.exec.unwrap_or(true),
                suffixes,
                read_approval: t.read_approval.unwrap_or(false),
                write_approval: t.write_approval.unwrap_or(false),
            });
        }

        let mut env = Vec::new();
        for v in &raw.env {
            let name = v.get_ref();
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(self.err(
                    v,
                    format!("invalid variable name `{name}`"),
                    "list names only, e.g. `CARGO_HOME`",
                ));
            }
            if is_loader_variable(name) {
                return Err(self.err(
                    v,
                    format!("`{name}` changes how programs are loaded and never passes into the sandbox"),
                    "remove it from sandbox.env",
                ));
            }
            env.push(name.clone());
        }

        let l = &raw.limits;
        let limits = Limits {
            timeout: l.timeout.as_ref().map(|v| self.duration(v)).transpose()?,
            memory: l.memory.as_ref().map(|v| self.size(v)).transpose()?,
            file_size: l.file_size.as_ref().map(|v| self.size(v)).transpose()?,
            open_files: l
                .open_files
                .as_ref()
                .map(|v| self.count(v, "open_files"))
                .transpose()?,
            processes: l
                .processes
                .as_ref()
                .map(|v| self.count(v, "processes"))
                .transpose()?,
            cpu_time: l
                .cpu_time
                .as_ref()
                .map(|v| self.duration(v).map(|d| d.as_secs().max(1)))
                .transpose()?,
        };

        Ok(Sandbox {
            backend,
            require_os_sandbox,
            network,
            system_read: raw.system_read.unwrap_or(true),
            extra_read,
            extra_read_written,
            protected,
            git,
            paths,
            env,
            limits,
        })
    }

    fn shell(&self, raw: raw::RawShell) -> Result<Shell, PolicyError> {
        let default = self.choice(
            &raw.default,
            Action::parse,
            Action::Ask,
            "shell default",
            "allow, ask, deny",
        )?;
        let mut rules = Vec::new();
        for rule in &raw.rules {
            let location = self.loc(rule);
            let r = rule.get_ref();
            let compile = if r.exact {
                Pattern::exact
            } else {
                Pattern::new
            };
            let pattern = compile(r.pattern.get_ref()).map_err(|e| {
                self.err(
                    &r.pattern,
                    format!("invalid pattern: {e}"),
                    "patterns are words separated by spaces, with *, ? and [..] globs inside words",
                )
            })?;
            let action = self.action(&r.action)?;
            let example = |s: &Spanned<String>| Example {
                line: s.get_ref().clone(),
                location: self.loc(s),
            };
            rules.push(ShellRule {
                pattern,
                action,
                reason: r.reason.clone(),
                matches: r.matches.iter().map(example).collect(),
                not_match: r.not_match.iter().map(example).collect(),
                location,
            });
        }
        Ok(Shell { default, rules })
    }

    /// The `[mcp]` section (see [`mcp`]): its default and its `SERVER/TOOL` rules.
    fn mcp(&self, raw: &Spanned<raw::RawMcp>) -> Result<McpPolicy, PolicyError> {
        let m = raw.get_ref();
        let default = self.choice(
            &m.default,
            Action::parse,
            Action::Ask,
            "mcp default",
            "allow, ask, deny",
        )?;
        // Every argument name a rule names, in order: the key's words after SERVER/TOOL.
        let mut arg_names = std::collections::BTreeSet::new();
        for rule in &m.rules {
            let Some(args) = &rule.get_ref().args else {
                continue;
            };
            if args.get_ref().is_empty() {
                return Err(self.err(
                    args,
                    "empty mcp argument patterns: `args = {}` would name no argument",
                    "leave `args` out for a rule on the tool, or name an argument, e.g. args = { path = \"/etc/**\" }",
                ));
            }
            for (name, glob) in args.get_ref() {
                if let Err(why) = mcp::check_arg(name, glob) {
                    return Err(self.err(
                        args,
                        format!("invalid mcp argument pattern `{name} = {glob:?}`: {why}"),
                        "write args = { NAME = \"GLOB\" } with an argument's name and a glob \
                         without spaces, e.g. args = { path = \"/etc/**\" }",
                    ));
                }
                arg_names.insert(name.clone());
            }
        }
        let arg_names: Vec<String> = arg_names.into_iter().collect();
        let mut rules = Vec::new();
        for rule in &m.rules {
            let r = rule.get_ref();
            let text = r.pattern.get_ref();
            // One token: the key is `SERVER/TOOL`, a single word.
            if text.split_whitespace().count() != 1 || !text.contains('/') {
                return Err(self.err(
                    &r.pattern,
                    format!("invalid mcp pattern `{text}`: it must be one SERVER/TOOL word"),
                    "write SERVER/TOOL with globs inside, e.g. fs/write_* or */delete_*",
                ));
            }
            let source = match &r.args {
                Some(args) => mcp::rule_source(text, &arg_names, args.get_ref()),
                None => text.clone(),
            };
            let pattern = Pattern::new(&source).map_err(|e| {
                self.err(
                    &r.pattern,
                    format!("invalid mcp pattern: {e}"),
                    "write SERVER/TOOL with globs inside, e.g. fs/write_* or */delete_*",
                )
            })?;
            let action = self.action(&r.action)?;
            // Said as written, not as the compiled token pattern (which pads unnamed arguments).
            let reason = r.reason.clone().or_else(|| {
                r.args.as_ref().map(|args| {
                    let named: Vec<String> = args
                        .get_ref()
                        .iter()
                        .map(|(n, g)| format!("{n} = {g:?}"))
                        .collect();
                    format!(
                        "rule `{text}` with args {{ {} }} says {}",
                        named.join(", "),
                        action.as_str()
                    )
                })
            });
            rules.push(ShellRule {
                pattern,
                action,
                reason,
                matches: Vec::new(),
                not_match: Vec::new(),
                location: self.loc(rule),
            });
        }
        Ok(McpPolicy {
            location: Some(self.loc(raw)),
            default,
            rules,
            arg_names,
        })
    }

    /// A rule's `action`.
    fn action(&self, value: &Spanned<String>) -> Result<Action, PolicyError> {
        Action::parse(value.get_ref()).ok_or_else(|| {
            self.err(
                value,
                format!("invalid action `{}`", value.get_ref()),
                "use one of: allow, ask, deny",
            )
        })
    }

    /// A rules file's `[[network.rules]]` table as a rule over the `network` tool's key.
    fn network_rule(&self, raw: &Spanned<raw::RawNetworkRule>) -> Result<ShellRule, PolicyError> {
        let r = raw.get_ref();
        let location = self.loc(raw);
        let entry = network::parse_rule(r.host.get_ref(), location.clone()).map_err(|why| {
            self.err(
                &r.host,
                format!("invalid network.rules host: {why}"),
                HOST_HINT,
            )
        })?;
        let action = self.action(&r.action)?;
        Ok(ShellRule {
            pattern: entry.pattern,
            action,
            reason: Some(r.reason.clone().unwrap_or_else(|| {
                format!(
                    "`{}` is remembered as {} ({location})",
                    entry.written,
                    action.as_str()
                )
            })),
            matches: Vec::new(),
            not_match: Vec::new(),
            location,
        })
    }

    fn network(&self, raw: &Spanned<raw::RawNetwork>) -> Result<NetworkPolicy, PolicyError> {
        let n = raw.get_ref();
        let default = self.choice(
            &n.default,
            |s| match s {
                "deny" => Some(NetworkDefault::Deny),
                "ask" => Some(NetworkDefault::Ask),
                _ => None,
            },
            NetworkDefault::Deny,
            "network default",
            "deny, ask",
        )?;
        let rules = |list: &[Spanned<String>], key: &str| {
            list.iter()
                .map(|e| {
                    network::parse_rule(e.get_ref(), self.loc(e)).map_err(|why| {
                        self.err(e, format!("invalid network.{key} entry: {why}"), HOST_HINT)
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let allow = rules(&n.allow, "allow")?;
        let deny = rules(&n.deny, "deny")?;
        let mut hosts: Vec<network::HostEntry> = Vec::new();
        for (name, value) in &n.hosts {
            let bad = |why: String| {
                self.err(
                    value,
                    format!("invalid network.hosts entry `{name}`: {why}"),
                    "map a host name to one IPv4 or IPv6 address: \"build.internal\" = \"10.0.0.7\"",
                )
            };
            let normalized = match network::Host::parse(name).map_err(|e| bad(e.to_string()))? {
                network::Host::Name(n) => n,
                network::Host::Addr(_) => {
                    return Err(bad("the key must be a name, not an address".into()))
                }
            };
            let text = value.get_ref();
            let inner = text
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .unwrap_or(text);
            let addr = match inner.parse::<std::net::IpAddr>() {
                Ok(a) if !inner.contains('%') => a.to_canonical(),
                _ => return Err(bad(format!("`{text}` is not an IP address"))),
            };
            if let Some(other) = hosts.iter().find(|h| h.name == normalized) {
                return Err(bad(format!(
                    "`{normalized}` is already mapped at {} (names are compared after IDNA normalisation)",
                    other.location
                )));
            }
            hosts.push(network::HostEntry {
                name: normalized,
                addr,
                location: self.loc(value),
            });
        }
        hosts.sort_by(|a, b| a.name.cmp(&b.name));
        let upstream_ca = match &n.upstream_ca {
            None => None,
            Some(v) => {
                let p = self.path(v)?;
                if !p.is_file() {
                    return Err(self.err(
                        v,
                        format!("network.upstream_ca `{}` is not a file", p.display()),
                        "name a PEM file of CA certificates that cordon's proxy trusts for upstream hosts, besides the system's",
                    ));
                }
                Some(p)
            }
        };
        let requests = self.request_rules(&n.requests)?;
        let mut forwards: Vec<network::Forward> = Vec::new();
        for (local, to) in &n.forward {
            let bad = |why: String| {
                self.err(
                    to,
                    format!("invalid network.forward entry `{local}`: {why}"),
                    "map a loopback port inside the sandbox to one destination: \"127.0.0.1:5432\" = \"db.internal:5432\"",
                )
            };
            let listen = network::Target::parse(local).map_err(|e| bad(e.to_string()))?;
            if !listen.host.addr().is_some_and(|a| a.is_loopback()) {
                return Err(bad(
                    "the key is 127.0.0.1:PORT or [::1]:PORT (the sandbox's own loopback)".into(),
                ));
            }
            let target = network::Target::parse(to.get_ref()).map_err(|e| bad(e.to_string()))?;
            if let Some(other) = forwards.iter().find(|f| f.port == listen.port) {
                return Err(bad(format!(
                    "port {} is already forwarded ({})",
                    listen.port, other.location
                )));
            }
            // A forward relays bytes as they are: the requests on it could not be decided one
            // by one, so a request rule for its destination would be walked around.
            if let Some(r) = requests.iter().find(|r| r.host.matches(&target)) {
                return Err(bad(format!(
                    "its destination {target} is named by the request rule `{}` ({}), which a forwarded port (bytes relayed as they are) would walk around",
                    r.host.written, r.rule.location
                )));
            }
            forwards.push(network::Forward {
                port: listen.port,
                to: target,
                location: self.loc(to),
            });
        }
        forwards.sort_by_key(|f| f.port);
        Ok(NetworkPolicy {
            upstream_ca,
            requests,
            forwards,
            location: Some(self.loc(raw)),
            default,
            allow,
            deny,
            hosts,
        })
    }

    fn approval(&self, raw: raw::RawApproval) -> Result<Approval, PolicyError> {
        let mode = self.choice(
            &raw.mode,
            |s| match s {
                "interactive" => Some(ApprovalMode::Interactive),
                "approve-all" => Some(ApprovalMode::ApproveAll),
                "strict" => Some(ApprovalMode::Strict),
                "deny" => Some(ApprovalMode::Deny),
                _ => None,
            },
            ApprovalMode::Interactive,
            "approval mode",
            "interactive, approve-all, strict, deny",
        )?;
        let timeout = match &raw.timeout {
            Some(v) => {
                let d = self.duration(v)?;
                if d.is_zero() {
                    return Err(self.err(
                        v,
                        "approval timeout must be more than zero",
                        "an unanswered request is denied after this time; write e.g. 5m",
                    ));
                }
                d
            }
            None => Duration::from_secs(300),
        };
        let doom_loop = match &raw.doom_loop {
            Some(v) => u32::try_from(*v.get_ref()).map_err(|_| {
                self.err(
                    v,
                    "doom_loop must be 0 (off) or a positive count",
                    "write e.g. 3",
                )
            })?,
            None => 3,
        };
        let var = |name: &str| std::env::var_os(name);
        let audit_log = match &raw.audit_log {
            Some(v) => AuditLog::Configured(self.path(v)?),
            None => AuditLog::default_from(var),
        };
        let mut other_audit_logs = Vec::new();
        for default in [
            AuditLog::default_from(var),
            AuditLog::default_from(|name| (name != "XDG_STATE_HOME").then(|| var(name)).flatten()),
        ] {
            if let Some(p) = default.path() {
                if Some(p) != audit_log.path() && !other_audit_logs.iter().any(|o| o == p) {
                    other_audit_logs.push(p.to_path_buf());
                }
            }
        }
        Ok(Approval {
            mode,
            timeout,
            doom_loop,
            audit_log,
            other_audit_logs,
        })
    }
}

/// Variables that change how the dynamic loader or libc behaves. They never reach a confined
/// child, whatever the policy says.
pub fn is_loader_variable(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || matches!(
            name,
            "GCONV_PATH"
                | "GETCONF_DIR"
                | "GLIBC_TUNABLES"
                | "HOSTALIASES"
                | "LOCALDOMAIN"
                | "LOCPATH"
                | "MALLOC_TRACE"
                | "NIS_PATH"
                | "NLSPATH"
                | "RESOLV_HOST_CONF"
                | "RES_OPTIONS"
                | "TMPDIR"
                | "TZDIR"
        )
}

/// Names of roots and tools: letters, digits, `_` and `-`.
fn check_name(name: &str, loc: &Location, what: &str) -> Result<(), PolicyError> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Ok(());
    }
    Err(PolicyError::Invalid {
        location: loc.clone(),
        message: format!("invalid {what} name `{name}`"),
        hint: Some(format!("{what} names use letters, digits, `_` and `-`")),
    })
}

/// Parses `500ms`, `30s`, `5m`, `2h`, `1d`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let ms = match unit {
        "ms" => n,
        "s" => n.checked_mul(1000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

/// Parses `4096`, `512K`, `64M`, `2G` (binary units).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&s[..i], 1 << 20),
        (i, 'G' | 'g') => (&s[..i], 1 << 30),
        (i, 'T' | 't') => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()?
        .checked_mul(mult)
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests;
