//! The shell tool's reading of a line: every simple command bash would run (its words, the key a
//! rule matches, whether it is a wrapper that only carries another) and the concerns the reading
//! raised (unparsed syntax, opaque code, writes outside the roots or to cordon's own files), each
//! weighed `ask` or `deny`. Facts, never a rule's decision: the gate turns them into an
//! `approval::Request` and the approval engine's one evaluator decides, so what `cordon check`
//! prints is what `cordon exec` does.

use cordon_fs::links::{lexical, Links};
use std::path::{Component, Path, PathBuf};

use cordon_policy::{basename, names_system_program, Action, Network, Policy};

pub use crate::shell::Concern as Found;
use crate::shell::{ParsedLine, SimpleCommand};

/// Where the line runs, to judge redirections.
#[derive(Debug, Clone)]
pub struct ShellContext {
    /// The directory the line runs in.
    pub cwd: PathBuf,
    /// Roots the policy makes writable.
    pub writable: Vec<PathBuf>,
    /// cordon's own files and directories ([`policy_files`]): a write to one is denied,
    /// whatever the roots say, so that a command never grants itself rules or erases the
    /// record of what it did.
    pub policy_files: Vec<PathBuf>,
    /// The policy's `sandbox.network`: under `deny`, a redirection to `/dev/tcp/…` is denied.
    pub network: Network,
    /// The home directory the line's `~` stands for, if known.
    pub home: Option<PathBuf>,
    /// The `PATH` the line's shell searches for command names, in order (empty: not known);
    /// absolute entries with their symlinks resolved ([`ShellContext::for_policy`] does), as
    /// they are compared with the writable roots by name.
    pub search_path: Vec<PathBuf>,
}

impl ShellContext {
    /// The context for `policy`'s writable roots, own files and network setting, for a line
    /// run in `cwd`; `~` is `$HOME`.
    pub fn for_policy(policy: &Policy, cwd: PathBuf) -> ShellContext {
        ShellContext {
            cwd,
            writable: policy
                .sandbox
                .paths
                .iter()
                .filter(|p| p.mode == cordon_policy::Mode::ReadWrite)
                .map(|p| p.root.clone())
                .collect(),
            policy_files: policy_files(policy, |name| std::env::var_os(name)),
            network: policy.sandbox.network,
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute()),
            // The sandbox passes PATH on, or gives the system directories in this order.
            // One lookup of each name on the way for all entries (they share `/usr`, `$HOME`).
            search_path: match std::env::var_os("PATH") {
                Some(p) => {
                    let mut links = Links::default();
                    std::env::split_paths(&p)
                        .map(|e| {
                            if e.is_absolute() {
                                links.real(&lexical(&e))
                            } else {
                                e
                            }
                        })
                        .collect()
                }
                None => cordon_policy::SYSTEM_BIN_DIRS
                    .iter()
                    .map(PathBuf::from)
                    .collect(),
            },
        }
    }
}

/// The audit log's head file beside `log` (`LOG.head`), as the audit writer names it
/// (`cordon_approval::audit::head_path`; a test keeps the two in step, since this crate does not
/// depend on the approval layer).
pub fn audit_head_path(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(".head");
    PathBuf::from(s)
}

/// cordon's own files for `policy`, which no tool call may write: the policy file and its
/// `cordon.rules.toml` ("approve always" rules), the audit log and its directory (also the
/// per-user default logs), the trust store (`$XDG_CONFIG_HOME/cordon`, else
/// `~/.config/cordon`) and the session store (`$XDG_RUNTIME_DIR/cordon`, else
/// `~/.local/state/cordon`, where `cordon exec --session` keeps its grants). `var` reads
/// the environment; relative values are ignored, as the XDG specification says.
pub fn policy_files(
    policy: &Policy,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(file) = policy.file() {
        out.push(file);
    }
    out.extend(policy.rules_file());
    // The log, its head file, its writer's lock, the after-run scans' markers beside it and
    // its directory, unless a writable root is that directory or lies inside it (then every
    // write there would be refused; the OS sandbox draws the same line).
    let writable: Vec<&Path> = policy
        .sandbox
        .paths
        .iter()
        .filter(|p| p.mode == cordon_policy::Mode::ReadWrite)
        .map(|p| p.root.as_path())
        .collect();
    let logs = policy.approval.audit_log.path().into_iter();
    for log in logs.chain(
        policy
            .approval
            .other_audit_logs
            .iter()
            .map(PathBuf::as_path),
    ) {
        out.push(log.to_path_buf());
        out.push(audit_head_path(log));
        let mut lock = log.as_os_str().to_os_string();
        lock.push(".lock");
        out.push(PathBuf::from(lock));
        if let Some(parent) = log.parent() {
            out.push(parent.join(cordon_policy::SCANS_DIR));
        }
        let dir = log
            .parent()
            .filter(|d| !writable.iter().any(|w| w.starts_with(d)));
        out.extend(dir.map(Path::to_path_buf));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = absolute("HOME");
    match absolute("XDG_CONFIG_HOME") {
        Some(c) => out.push(c.join("cordon")),
        None => out.extend(home.as_ref().map(|h| h.join(".config/cordon"))),
    }
    if let Some(r) = absolute("XDG_RUNTIME_DIR") {
        out.push(r.join("cordon"));
    }
    out.extend(home.as_ref().map(|h| h.join(".local/state/cordon")));
    out.sort();
    out.dedup();
    out
}

/// How much a [`Concern`] weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A person should look before it runs.
    Ask,
    /// It must never run, whatever the rules say.
    Deny,
}

impl Level {
    /// The level as the policy's action (`ask` or `deny`).
    pub fn action(self) -> Action {
        match self {
            Level::Ask => Action::Ask,
            Level::Deny => Action::Deny,
        }
    }
}

/// Something the reading of a line found that its commands' keys do not capture, weighed: an
/// environment variable, a write outside the roots, code that cannot be seen, a line outside
/// the analysed subset. Facts, not a decision: the approval engine combines them with the
/// rules (a concern is never covered by a session grant).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concern {
    /// `ask` or `deny`.
    pub level: Level,
    /// What was found and why it matters, one line.
    pub reason: String,
    /// The built-in check that found it (`unparsed`, `environment`, `redirect`, …).
    pub check: &'static str,
    /// What the parser found, when the concern comes from the parse.
    pub found: Option<Found>,
    /// For an option's effect (`find . -delete`): the command's key and the option word an
    /// explicit allow rule on that key must name to lift the concern.
    pub lift: Option<(Vec<String>, String)>,
}

/// Where the line may be before each command: the working directory, and each directory a
/// `cd`/`pushd` before it names literally (from each place it may already be; a `cd` that
/// fails, or one in a branch or a subshell, may leave it anywhere of these). A target only
/// known at run time adds none.
fn cd_bases(parsed: &ParsedLine, cx: &ShellContext) -> Vec<Vec<PathBuf>> {
    const MAX_BASES: usize = 16;
    let mut bases = vec![cx.cwd.clone()];
    let mut at = Vec::with_capacity(parsed.commands.len());
    for c in &parsed.commands {
        at.push(bases.clone());
        let is_cd = c
            .words
            .first()
            .is_some_and(|w| matches!(cordon_policy::basename(w), "cd" | "pushd"));
        if !is_cd || c.reading {
            continue;
        }
        let Some(target) = c.words.iter().skip(1).find(|w| !w.starts_with('-')) else {
            continue;
        };
        if target.contains(['$', '`', '*', '?', '[', '{', '\\']) {
            continue;
        }
        let new: Vec<PathBuf> = if let Some(rest) = target.strip_prefix('~') {
            match (&cx.home, rest.is_empty() || rest.starts_with('/')) {
                (Some(home), true) => vec![home.join(rest.trim_start_matches('/'))],
                _ => Vec::new(),
            }
        } else {
            bases.iter().map(|b| b.join(target)).collect()
        };
        for b in new {
            let b = PathBuf::from(crate::shell::lexical_path(&b.to_string_lossy()));
            if !bases.contains(&b) && bases.len() < MAX_BASES {
                bases.push(b);
            }
        }
    }
    at
}

/// A reading's path (`rm -rf ../../usr`) as absolute ones, one for each base it may be
/// relative to (`bases`, for `~+` too), the home for `~`; under a base only known when the line
/// runs (`~user`), the worst: what follows its last `..`, from `/`.
fn anchored(path: &str, cx: &ShellContext, bases: &[PathBuf]) -> Vec<String> {
    let join =
        |base: &Path, rest: &str| crate::shell::lexical_path(&format!("{}/{rest}", base.display()));
    if let Some(rest) = path.strip_prefix("~+") {
        bases.iter().map(|b| join(b, rest)).collect()
    } else if path == "~" || path.starts_with("~/") {
        match &cx.home {
            Some(home) => vec![join(home, &path[1..])],
            None => vec![path.to_string()],
        }
    } else if path.starts_with('~') {
        let rest = path.find('/').map_or("", |at| &path[at..]);
        match rest.rfind("/..") {
            Some(at) => vec![join(Path::new("/"), &rest[at + 3..])],
            None => vec![path.to_string()],
        }
    } else if path.starts_with('/') {
        vec![path.to_string()]
    } else {
        bases.iter().map(|b| join(b, path)).collect()
    }
}

/// A command that needs no decision of its own unless a rule names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// `wrapper` (it runs its command as it is; that command is among the line's) or
    /// `state-only` (a builtin that only reads or sets the shell's own state).
    pub check: &'static str,
    /// Why, one line.
    pub reason: String,
}

/// One simple command as bash will run it.
#[derive(Debug, Clone)]
pub struct CommandReading {
    /// The command.
    pub command: SimpleCommand,
    /// The words a rule matches: the key the option tables normalised ([`SimpleCommand::key`]),
    /// with the program as written (an allow rule on a bare name holds only for the program
    /// the PATH finds, never for `./git`).
    pub key: Vec<String>,
    /// Set when the command needs no decision of its own unless a rule names it (a
    /// transparent wrapper such as `timeout 300` or `bash -c`, or `cd src`).
    pub passes: Option<Pass>,
}

/// What a shell line means: the commands bash will run and the concerns the reading raised.
/// Decided by the approval engine, never here.
#[derive(Debug, Clone)]
pub struct ShellReading {
    /// Every simple command, in the order bash meets them.
    pub commands: Vec<CommandReading>,
    /// Everything the keys do not capture, in the order found.
    pub concerns: Vec<Concern>,
}

impl ShellReading {
    /// The most severe concern (the first among equals), if any.
    pub fn worst(&self) -> Option<&Concern> {
        self.concerns
            .iter()
            .fold(None, |acc: Option<&Concern>, c| match acc {
                Some(a) if a.level >= c.level => Some(a),
                _ => Some(c),
            })
    }
}

/// Reads a parsed line in its context: every command with its key, and the concerns.
pub fn assess(parsed: &ParsedLine, cx: &ShellContext) -> ShellReading {
    let planted = plantable_path_entries(cx);
    // After `cd` (`pushd`, `popd`) a relative target is relative to a directory the line
    // chose: it is not judged inside the roots.
    let moves = parsed.commands.iter().any(|c| {
        c.words
            .first()
            .is_some_and(|w| matches!(cordon_policy::basename(w), "cd" | "pushd" | "popd"))
    });
    let mut concerns = Vec::new();
    let bases = cd_bases(parsed, cx);
    let commands: Vec<CommandReading> = parsed
        .commands
        .iter()
        .zip(&bases)
        .flat_map(|(c, bases)| {
            let mut key = c.key.clone();
            if let (Some(k), Some(w)) = (key.first_mut(), c.words.first()) {
                k.clone_from(w);
            }
            // A reading's path, from where it may be: the working directory and where the
            // line's `cd`s may have gone, the home (one reading for each).
            // Only rm's readings end in a path (git's end in what the command named).
            let path_reading = c.reading && c.words.first().is_some_and(|w| basename(w) == "rm");
            let keys: Vec<Vec<String>> = match key.split_last() {
                Some((path, head)) if path_reading => anchored(path, cx, bases)
                    .into_iter()
                    .map(|p| head.iter().cloned().chain([p]).collect())
                    .collect(),
                _ => vec![key],
            };
            keys.into_iter().map(move |key| (c, key))
        })
        .map(|(c, key)| {
            let name = c.words.first().map_or("", String::as_str);
            // A wrapper that runs its command as it is (`timeout`, `nice`, `bash -c`) is decided
            // by that command, unless a rule names the wrapper; only the real program, not one
            // named by another path.
            let passes = if c.transparent && names_system_program(name) {
                Some(Pass {
                    check: "wrapper",
                    reason: format!(
                        "`{name}` runs its command as it is; that command is decided by its own rules"
                    ),
                })
            } else if c.reading {
                // A canonical spelling of the command before it, there for the rules to see.
                Some(Pass {
                    check: "reading",
                    reason: format!(
                        "`{}` is how the rules read `{}`",
                        c.words.join(" "),
                        c.text
                    ),
                })
            } else if c.state_only && state_only_allowed(c, parsed, cx) {
                // A builtin that only reads or sets the shell's state: allowed as a careful
                // operator would (`true`, `[ -f x ]`, `set -e`, `cd src`), unless a rule names it.
                Some(Pass {
                    check: "state-only",
                    reason: format!(
                        "`{}` only reads or sets the shell's own state",
                        c.words.join(" ")
                    ),
                })
            } else {
                None
            };
            if !planted.is_empty() {
                if let Some(entry) = c.words.first().and_then(|n| shadowed(n, &planted, cx)) {
                    concerns.push(Concern {
                        level: Level::Ask,
                        reason: format!(
                            "`{}` is looked up on the PATH, whose entry `{}` the line can write to: the program that runs may be one the line puts there",
                            c.words[0],
                            entry.display()
                        ),
                        check: "path",
                        found: None,
                        lift: None,
                    });
                }
            }
            CommandReading {
                command: c.clone(),
                key,
                passes,
            }
        })
        .collect();
    let made = made_git_dirs(parsed, cx);
    // Code found at a path inside the writable roots is the project's: no effect there.
    let in_project = |path: &str| (!moves || path.starts_with('/')) && writes_inside(path, cx);
    let effects = commands.iter().flat_map(|v| {
        v.command
            .effects
            .iter()
            .filter(|e| !e.path.as_deref().is_some_and(in_project))
            .map(|e| {
                (
                    Found::OptionEffect(e.detail.clone()),
                    Some((v.key.clone(), e.option.to_string())),
                )
            })
    });
    let found = parsed
        .concerns
        .iter()
        .cloned()
        .map(|c| (c, None))
        .chain(effects)
        .filter_map(|(c, lift)| {
            let (level, check, reason) = match &c {
                Found::WriteRedirect(target) if moves && !target.starts_with(['/', '~']) => {
                    weigh(&c)
                }
                Found::WriteRedirect(target) => {
                    if let Some(file) = writes_policy_file(target, cx) {
                        policy_file_concern(target, &file)
                    } else if let Some(why) = writes_surface(target, cx, &made) {
                        (
                            Level::Ask,
                            "surface",
                            format!(
                                "`{target}` is written, on the persistence surface, which a program of the operator's runs outside any sandbox: {why}"
                            ),
                        )
                    } else if writes_inside(target, cx) {
                        return None;
                    } else {
                        weigh(&c)
                    }
                }
                Found::Network(_) if cx.network == Network::Deny => (
                    Level::Deny,
                    "network",
                    format!(
                        "{c}, and the policy denies network access (sandbox.network = \"deny\")"
                    ),
                ),
                _ => weigh(&c),
            };
            Some(Concern {
                level,
                reason,
                check,
                found: Some(c),
                lift,
            })
        });
    concerns.extend(found);
    if commands.is_empty() {
        concerns.push(Concern {
            level: Level::Ask,
            reason: "no command found in the line".into(),
            check: "empty",
            found: None,
            lift: None,
        });
    }
    ShellReading { commands, concerns }
}

/// The weight of what the parser found: an ask, with the check that found it and why.
fn weigh(c: &Found) -> (Level, &'static str, String) {
    let (tag, reason) = match c {
        Found::Unparsed(why) => (
            "unparsed",
            format!("the line cannot be fully understood: {why}"),
        ),
        Found::DynamicCommand(w) => (
            "dynamic-command",
            format!("the command name `{w}` is only known at run time"),
        ),
        Found::Opaque(w) => (
            "opaque",
            format!("`{w}` runs code that cannot be checked in advance"),
        ),
        Found::WriteRedirect(t) => (
            "redirect",
            format!("`{t}` is written (a redirection or a program's option), outside the writable roots"),
        ),
        Found::OptionEffect(what) => (
            "option",
            format!("{what}, which the rule allowing the program does not name"),
        ),
        Found::LoaderVariable(v) => (
            "loader-variable",
            format!("`{v}` changes which code a program loads"),
        ),
        Found::Rebinding(v) => (
            "rebinding",
            format!("`{v}` changes what later commands mean, so the commands the rules allowed may not be the ones that run"),
        ),
        Found::Network(t) => (
            "network",
            format!("the redirection `{t}` connects to the network"),
        ),
        Found::DynamicRedirect(t) => (
            "dynamic-redirect",
            format!("input is redirected from `{t}`, only known at run time (it may be a network connection)"),
        ),
        Found::Outside(what) => (
            "outside-subset",
            format!("the line uses what the shell analysis does not model: {what}"),
        ),
        Found::Environment(v) => (
            "environment",
            match c.variable() {
                Some(name) if name != v => format!(
                    "`{v}` sets environment variable `{name}`, which may change what the program runs"
                ),
                Some(name) => format!(
                    "environment variable `{name}` may change what the program runs"
                ),
                None => format!(
                    "`{v}` may set or export variables that reach the programs it runs, which may change what they run"
                ),
            },
        ),
    };
    (Level::Ask, tag, reason)
}

/// Whether a target's text is the path bash opens: not empty, and without what bash expands
/// when the line runs (`$x`, `` `…` ``, globs, `~`, and braces: `> .git/hook{s..s}/pre-commit`
/// is one word after expansion, the hook). A quoted `{` in a name is taken as expanded too;
/// such names are rare, and they only ask.
fn known_path(target: &str) -> bool {
    !target.is_empty() && !target.contains(['$', '`', '*', '?', '[', '~', '{'])
}

/// Whether a [`SimpleCommand::state_only`] builtin is allowed where no rule names it: all are,
/// but `cd`/`pushd` only to an existing directory inside the writable roots (symlinks
/// followed), and with `..` only as the line's one change of directory (its target is judged
/// from where the line starts).
fn state_only_allowed(c: &SimpleCommand, parsed: &ParsedLine, cx: &ShellContext) -> bool {
    let name = c.words.first().map_or("", String::as_str);
    if !matches!(name, "cd" | "pushd") {
        return true;
    }
    let operands: Vec<&String> = c.words[1..]
        .iter()
        .filter(|w| !(w.starts_with('-') && w.len() > 1))
        .collect();
    let [target] = operands.as_slice() else {
        // `cd` alone goes home; `pushd` alone swaps the stack.
        return false;
    };
    // Not a directory whatever the workspace holds: `cd -` (also `cd -- -`) goes to
    // `$OLDPWD`, which an earlier call or the environment set, and `pushd +N` rotates the
    // stack an earlier call pushed. A directory named `-` or `+1` in the roots does not make
    // them a change to it.
    let stack = name == "pushd"
        && target.len() > 1
        && target.starts_with('+')
        && target[1..].bytes().all(|b| b.is_ascii_digit());
    if target.as_str() == "-" || stack {
        return false;
    }
    let changes = parsed
        .commands
        .iter()
        .filter(|c| {
            c.words
                .first()
                .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd" | "popd"))
        })
        .count();
    let up = Path::new(target.as_str())
        .components()
        .any(|p| p == Component::ParentDir);
    if (up && changes > 1) || !known_path(target) {
        return false;
    }
    // Lexically outside every root: no need to ask the file system.
    let path = lexical(&cx.cwd.join(target.as_str()));
    if !cx.writable.iter().any(|root| path.starts_with(root)) {
        return false;
    }
    match std::fs::canonicalize(&path) {
        Ok(real) => real.is_dir() && cx.writable.iter().any(|root| real.starts_with(root)),
        Err(_) => false,
    }
}

/// Whether the line may leave `dir` a repository git reads configuration and hooks from: it
/// is one (`cordon_policy::surface::is_git_dir_by`), or it may become one before the line's
/// write lands in it: it does not exist yet (`git init --bare ev && cat x > ev/config`), it
/// holds part of one, or the line writes its `HEAD` (`made`), without which git takes no
/// directory for a repository.
fn may_be_git_dir(dir: &Path, made: &[PathBuf]) -> bool {
    let exists = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok();
    cordon_policy::surface::is_git_dir_by(exists)
        || ["HEAD", "commondir", "objects", "refs"]
            .iter()
            .any(|n| exists(n))
        || std::fs::symlink_metadata(dir).is_err()
        || made.iter().any(|m| m == dir)
}

/// The directories whose `HEAD` the line writes (literal targets, lexically from `cwd`): the
/// line may make each a repository.
fn made_git_dirs(parsed: &ParsedLine, cx: &ShellContext) -> Vec<PathBuf> {
    parsed
        .concerns
        .iter()
        .filter_map(|c| match c {
            Found::WriteRedirect(t) => Some(t.as_str()),
            _ => None,
        })
        .filter(|t| known_path(t))
        .map(|t| lexical(&cx.cwd.join(t)))
        .filter(|p| p.file_name().is_some_and(|n| n == "HEAD"))
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect()
}

/// Why a literal target inside a writable root is on the persistence surface
/// (`cordon_policy::surface`: git's configuration and hooks in any repository, `.envrc`, agent
/// and editor settings, MCP and build-tool configs, the home's dotfiles where a root holds
/// HOME), if it is: the file tools ask for such a write whatever the root's mode, and so does
/// a line that writes it (`echo … >> .git/config`, `sed -i … .envrc`, `sort -o .mcp.json`),
/// for a caller that runs the line without the sandbox's kernel profile and after-run scan.
fn writes_surface(target: &str, cx: &ShellContext, made: &[PathBuf]) -> Option<&'static str> {
    use cordon_policy::surface::{classify, classify_home, folded};
    if !known_path(target) {
        return None;
    }
    let path = lexical(&cx.cwd.join(target));
    // As written, and where the links on the way lead now (`ln -s .git g; echo >> g/config`).
    let real = std::fs::canonicalize(&path).ok().or_else(|| {
        let dir = std::fs::canonicalize(path.parent()?).ok()?;
        Some(dir.join(path.file_name()?))
    });
    [Some(path), real].into_iter().flatten().find_map(|path| {
        let root = cx.writable.iter().find(|r| path.starts_with(r))?;
        let rel = path.strip_prefix(root).ok()?;
        let home = cx.home.as_deref().and_then(|h| path.strip_prefix(h).ok());
        // As written, and as a filesystem that ignores case takes it (macOS by default, an
        // ext4 directory with `chattr +F`: `.ENVRC` is `.envrc`, `.Git/hooks` is `.git/hooks`).
        let at = |rel: &Path, is_git_dir: &dyn Fn(&Path) -> bool| {
            [Some(rel.to_path_buf()), folded(rel)]
                .into_iter()
                .flatten()
                .find_map(|rel| classify(&rel, is_git_dir))
        };
        // The names above the root count too, as for the file tools: in the root
        // `/p/.claude`, `settings.json` is Claude Code's settings; in `/p/.git/hooks`, each
        // file is a hook (`surface::within_root`). Above the root only a repository that is
        // there counts (the line makes none there; what it makes in the root is the first
        // reading's).
        let slash = Path::new("/");
        at(rel, &|d| may_be_git_dir(&root.join(d), made))
            .or_else(|| {
                at(path.strip_prefix(slash).ok()?, &|d| {
                    let dir = slash.join(d);
                    !dir.starts_with(root) && cordon_policy::surface::looks_like_git_dir(&dir)
                })
            })
            .or_else(|| {
                [home.map(Path::to_path_buf), home.and_then(folded)]
                    .into_iter()
                    .flatten()
                    .find_map(|rel| classify_home(&rel))
            })
            .map(|hit| hit.why)
    })
}

fn writes_inside(target: &str, cx: &ShellContext) -> bool {
    if !known_path(target) {
        return false;
    }
    let path = lexical(&cx.cwd.join(target));
    cx.writable
        .iter()
        .any(|root| Path::new(&path).starts_with(root))
        && leads_inside(&path, cx)
}

/// Whether a path inside the roots as written still is where the links on its way lead now:
/// `out -> /tmp/x` in the workspace makes `echo … > out` a write of `/tmp/x`, and a dangling
/// link is followed by bash's `>` to create its target (anywhere). A missing directory on the
/// way makes the write fail, so the path as written stands.
fn leads_inside(path: &Path, cx: &ShellContext) -> bool {
    let in_roots = |real: &Path| {
        cx.writable.iter().any(|root| {
            real.starts_with(root) || std::fs::canonicalize(root).is_ok_and(|r| real.starts_with(r))
        })
    };
    if let Ok(real) = std::fs::canonicalize(path) {
        return in_roots(&real);
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return false;
    }
    match (path.parent().map(std::fs::canonicalize), path.file_name()) {
        (Some(Ok(dir)), Some(name)) => in_roots(&dir.join(name)),
        _ => true,
    }
}

/// The `PATH` entries a line could put a program in: relative ones (the current directory,
/// wherever a `cd` took it) and those inside a writable root. Empty in the usual case, so the
/// lookups below cost nothing there.
fn plantable_path_entries(cx: &ShellContext) -> Vec<usize> {
    cx.search_path
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            !e.is_absolute() || {
                let e = lexical(e);
                cx.writable.iter().any(|w| e.starts_with(w))
            }
        })
        .map(|(i, _)| i)
        .collect()
}

/// For a bare command name (not a builtin): the first `PATH` entry the line could plant a
/// program in that bash would search before it finds the program there now.
fn shadowed<'c>(name: &str, planted: &[usize], cx: &'c ShellContext) -> Option<&'c Path> {
    if name.contains('/') || crate::shell::BUILTINS.contains(&name) {
        return None;
    }
    for (i, entry) in cx.search_path.iter().enumerate() {
        if planted.contains(&i) {
            return Some(entry);
        }
        if entry.join(name).is_file() {
            return None;
        }
    }
    None
}

/// The policy file a literal redirection target writes (by name or through a symlink), if any.
/// `~` and `~/…` stand for the home directory.
fn writes_policy_file(target: &str, cx: &ShellContext) -> Option<PathBuf> {
    if target.is_empty() || cx.policy_files.is_empty() {
        return None;
    }
    let expanded = match (target.strip_prefix('~'), &cx.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(target),
    };
    let named = lexical(&cx.cwd.join(expanded));
    // One lookup of each name on the way for the target and all of cordon's files: they
    // share their directories (`$HOME`, the state and config dirs), which the hook's
    // `>> file` lines otherwise read back a dozen times each.
    let mut links = Links::default();
    let resolved = links.real(&named);
    cx.policy_files
        .iter()
        .find(|f| {
            let f_real = links.real(f);
            [&named, &resolved]
                .iter()
                .any(|p| p.starts_with(f) || p.starts_with(&f_real))
        })
        .cloned()
}

fn policy_file_concern(target: &str, file: &Path) -> (Level, &'static str, String) {
    (
        Level::Deny,
        "policy-file",
        format!(
            "output is redirected to `{target}`, which writes cordon's own file `{}` (the policy, its rules, the audit log, the trust or session store)",
            file.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::assess as decide;
    use cordon_approval::{RuleRef, RuleSet};

    fn rules(text: &str) -> (RuleSet, ShellContext) {
        let policy = cordon_policy::Policy::parse(text, "p.toml", Path::new("/")).unwrap();
        let cx = ShellContext::for_policy(&policy, PathBuf::from("/"));
        (RuleSet::new(&policy.shell), cx)
    }

    #[test]
    fn real_paths_follow_links_once_asked() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        symlink("a/b", base.join("rel")).unwrap();
        symlink(base.join("a"), base.join("abs")).unwrap();
        symlink("../../a/b/..", base.join("a/b/up")).unwrap();
        symlink("gone/x", base.join("dangling")).unwrap();
        let mut links = Links::default();
        for (p, want) in [
            ("rel", "a/b"),
            ("abs/b", "a/b"),
            ("rel/up", "a"),
            ("rel/..", "a"),
            ("abs/../rel", "a/b"),
            // A dangling link leads where a write would create its target; missing parts stay.
            ("dangling", "gone/x"),
            ("missing/y", "missing/y"),
        ] {
            let path = base.join(p);
            // With a fresh cache, then with one shared by every path (asked already or not).
            assert_eq!(Links::default().real(&path), base.join(want), "{p}");
            assert_eq!(links.real(&path), base.join(want), "{p}");
            assert_eq!(links.real(&path), base.join(want), "{p}");
        }
    }

    #[test]
    fn the_reading_is_facts_the_engine_decides() {
        let (_, cx) = rules("version = 1\n");
        let r = assess(
            &crate::shell::parse("timeout 60 ls && echo x > /etc/y"),
            &cx,
        );
        let keys: Vec<_> = r.commands.iter().map(|c| c.key.join(" ")).collect();
        assert_eq!(keys, ["timeout 60 ls", "ls", "echo x"]);
        assert_eq!(
            r.commands[0].passes.as_ref().map(|p| p.check),
            Some("wrapper")
        );
        assert!(r.commands[1].passes.is_none());
        let worst = r.worst().unwrap();
        assert_eq!((worst.level, worst.check), (Level::Ask, "redirect"));
        let empty = assess(&crate::shell::parse(""), &cx);
        assert_eq!(empty.concerns[0].check, "empty");
    }

    #[test]
    fn environment_variables_ask_unless_inert() {
        let (rules, cx) = rules("version = 1\n[shell]\ndefault = \"deny\"\n[[shell.rules]]\npattern = \"git log\"\naction = \"allow\"\n");
        let d = |line: &str| decide(&crate::shell::parse(line), &rules, &cx);
        let a = d("GIT_PAGER=\"touch /tmp/pwn\" git log");
        assert_eq!(a.decision.action, Action::Ask, "{:?}", a.decision);
        assert_eq!(a.decision.rule, RuleRef::Builtin("environment"));
        assert!(
            a.decision.reason.contains("`GIT_PAGER`")
                && a.decision
                    .reason
                    .contains("may change what the program runs"),
            "{}",
            a.decision.reason
        );
        for line in [
            "env GIT_SSH_COMMAND=x git log",
            "export HOME=/tmp/x; git log",
        ] {
            let a = d(line);
            let rules: Vec<_> = a.concerns.iter().map(|(_, d)| d.rule.clone()).collect();
            assert_eq!(rules, [RuleRef::Builtin("environment")], "{line}");
        }
        assert_eq!(
            d("LD_PRELOAD=/x.so git log").decision.rule,
            RuleRef::Builtin("loader-variable")
        );
        for line in [
            "LANG=C git log",
            "x=1; git log",
            "TERM=dumb NO_COLOR=1 git log",
        ] {
            let a = d(line);
            assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
        }
        // An explicit deny (here the default) still wins over the concern's ask.
        assert_eq!(d("GIT_PAGER=x git push").decision.action, Action::Deny);
    }

    #[test]
    fn a_planted_path_entry_asks_in_the_engine_too() {
        let dir = tempfile::tempdir().unwrap();
        let (rules, mut cx) =
            rules("version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n");
        cx.writable = vec![dir.path().to_path_buf()];
        cx.search_path = vec![
            dir.path().join("bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
        ];
        let a = decide(&crate::shell::parse("ls"), &rules, &cx);
        assert_eq!(a.decision.action, Action::Ask, "{:?}", a.decision);
        assert_eq!(a.decision.rule, RuleRef::Builtin("path"));
        // The concern is in the request the gate builds, so exec asks as check does.
        let reading = assess(&crate::shell::parse("ls"), &cx);
        assert_eq!(crate::judge::request(&reading).concerns[0].check, "path");
    }

    #[test]
    fn the_head_file_is_named_as_the_audit_writer_names_it() {
        let log = Path::new("/var/log/cordon/audit.jsonl");
        assert_eq!(audit_head_path(log), cordon_approval::audit::head_path(log));
    }
}
