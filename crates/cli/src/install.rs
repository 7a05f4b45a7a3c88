//! `cordon install|uninstall HOST [--project|--user]`, and the hosts part of `cordon doctor`.
//!
//! Each host keeps its hooks in a JSON settings file:
//!
//! | host        | project                  | user                        | event        |
//! |-------------|--------------------------|-----------------------------|--------------|
//! | Claude Code | `.claude/settings.json`  | `~/.claude/settings.json`   | `PreToolUse` |
//! | Codex       | `.codex/hooks.json`      | `$CODEX_HOME/hooks.json` (`~/.codex`) | `PreToolUse` |
//! | Gemini CLI  | `.gemini/settings.json`  | `~/.gemini/settings.json`   | `BeforeTool` |
//!
//! Install adds one matcher group `{matcher, hooks: [{type: "command", command, timeout}]}`
//! whose command runs `cordon hook HOST`; it is idempotent, replaces an older cordon entry,
//! keeps every other key and entry, and writes a backup (`FILE.cordon-backup`) before changing
//! a file. Uninstall removes only cordon's entries.
//!
//! Fail closed: none of the three hosts has a documented "block when the hook fails" setting
//! (a crash or a missing binary lets the tool run), but all three block on exit 2 with a reason
//! on stderr. So the command is wrapped: `… hook HOST || { echo 'cordon: …' >&2; exit 2; }`
//! turns any failure of cordon itself into a block. A hook the host kills at its timeout lets
//! the call run, so the hook blocks by its own deadline first ([`crate::hook::DEADLINE`], 10 s)
//! and install sets the host's timeout to [`HOST_TIMEOUT`] (30 s); `doctor` reports a timeout
//! that does not leave the hook its deadline.
//!
//! Whether the host loads the hook at all comes from the host's own trust records: Codex's
//! hook trust ([`crate::codex_trust`]), Gemini CLI's folder trust ([`crate::gemini_trust`]:
//! without a named scope, an untrusted folder gets the hook in the user's settings).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde_json::{json, Map, Value};

use crate::gemini_trust::Trust;
use crate::hook::{quote, Host, DEADLINE, HOST_TIMEOUT};
use crate::{Error, Exit};

#[derive(Args)]
pub struct InstallArgs {
    /// The agent host.
    host: Host,
    /// This project's settings (in the current directory; the default).
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// Your user settings (under HOME).
    #[arg(long)]
    user: bool,
    /// The policy the hook decides under (default: ./cordon.toml in the host's cwd if
    /// trusted, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The hook's deadline (`cordon hook --deadline`; default 10s): a call still undecided
    /// then is blocked, well before the host's hook timeout (30 s, set by install).
    #[arg(long, value_name = "DURATION", value_parser = crate::hook_deadline, conflicts_with = "mcp")]
    deadline: Option<Duration>,
    /// Instead of the hook: run each of the host's stdio MCP servers under `cordon mcp wrap`
    /// (uninstall: restore them).
    #[arg(long)]
    mcp: bool,
    /// Codex only: who sandboxes the commands cordon allows. `auto` (the default): Codex's
    /// sandbox stays on with cordon's inside it, except as root, where it is handed to
    /// cordon; `codex`: keep Codex's; `cordon`: turn Codex's off in its config.toml.
    #[arg(long, value_enum, value_name = "WHO")]
    sandbox: Option<crate::codex_sandbox::Sandbox>,
}

/// `cordon uninstall`'s arguments: install's, without the ones that only shape what install
/// writes (`--deadline`, `--sandbox`): uninstall removes cordon's entries whatever they were, so
/// those flags are a usage error naming the flag rather than silently ignored.
#[derive(Args)]
pub struct UninstallArgs {
    /// The agent host.
    host: Host,
    /// This project's settings (in the current directory; the default).
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// Your user settings (under HOME).
    #[arg(long)]
    user: bool,
    /// The policy the hook was installed with (Codex: its audit log's directory is taken out
    /// of Codex's writable roots again).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Restore the host's stdio MCP servers that install --mcp wrapped.
    #[arg(long)]
    mcp: bool,
}

impl From<UninstallArgs> for InstallArgs {
    fn from(a: UninstallArgs) -> InstallArgs {
        InstallArgs {
            host: a.host,
            project: a.project,
            user: a.user,
            policy: a.policy,
            deadline: None,
            mcp: a.mcp,
            sandbox: None,
        }
    }
}

/// Where a host's hooks are configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The operator's home from `var` (the environment): absolute, or no place to install.
pub fn home_of(var: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Error> {
    var("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .ok_or_else(|| Error::failure("HOME is not set to an absolute path"))
}

/// The settings file of `host` in `scope` (`cwd`: the project; `var`: the environment), as
/// the directory cordon trusts (the project, HOME, CODEX_HOME: the operator chose it) and the
/// path below it, which cordon walks without following a link (a sandboxed command could have
/// planted `.claude -> /elsewhere` in the project, or in HOME when it was writable).
pub fn settings_place(
    host: Host,
    scope: Scope,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, PathBuf), Error> {
    let home = || crate::install::home_of(var);
    let (anchor, rel) = match (host, scope) {
        (Host::Claude, Scope::Project) => (cwd.to_path_buf(), ".claude/settings.json"),
        (Host::Claude, Scope::User) => (home()?, ".claude/settings.json"),
        (Host::Codex, Scope::Project) => (cwd.to_path_buf(), ".codex/hooks.json"),
        (Host::Codex, Scope::User) => match var("CODEX_HOME").map(PathBuf::from) {
            Some(h) if h.is_absolute() => (h, "hooks.json"),
            _ => (home()?, ".codex/hooks.json"),
        },
        (Host::Gemini, Scope::Project) => (cwd.to_path_buf(), ".gemini/settings.json"),
        (Host::Gemini, Scope::User) => (home()?, ".gemini/settings.json"),
        (Host::Copilot | Host::Opencode, _) => {
            return crate::install_file::place(host, scope, cwd, var)
        }
    };
    Ok((anchor, PathBuf::from(rel)))
}

/// The largest settings file cordon edits.
const MAX_SETTINGS: u64 = 16 << 20;

/// The text of a settings file, read without following a link below `anchor`.
fn read_settings(anchor: &Path, rel: &Path) -> Result<Option<String>, Error> {
    match cordon_fs::safe::read(anchor, rel, MAX_SETTINGS) {
        Ok(None) => Ok(None),
        Ok(Some(b)) => String::from_utf8(b).map(Some).map_err(|_| {
            Error::failure(format!("{} is not UTF-8 text", anchor.join(rel).display()))
        }),
        Err(e) => Err(Error::failure(e)),
    }
}

/// The host's pre-tool event.
pub fn event(host: Host) -> &'static str {
    match host {
        Host::Claude | Host::Codex => "PreToolUse",
        Host::Gemini => "BeforeTool",
        Host::Copilot => "preToolUse",
        Host::Opencode => "tool.execute.before",
    }
}

/// The line a blocked failure of cordon itself prints (the hosts need a non-empty reason).
const FAILED: &str = "cordon: the cordon hook failed (see above); the call is blocked";

/// The hook command: cordon by absolute path, wrapped so that any failure blocks.
pub fn hook_command(
    exe: &Path,
    host: Host,
    policy: Option<&Path>,
    deadline: Option<Duration>,
) -> Result<String, Error> {
    let exe = exe
        .to_str()
        .ok_or_else(|| Error::failure("the cordon binary's path is not UTF-8"))?;
    let mut c = format!("{} hook {}", quote(exe), host.arg());
    if let Some(p) = policy {
        let p = p
            .to_str()
            .ok_or_else(|| Error::failure("the policy's path is not UTF-8"))?;
        c.push_str(" --policy ");
        c.push_str(&quote(p));
    }
    if let Some(d) = deadline {
        c.push_str(&format!(" --deadline {}ms", d.as_millis()));
    }
    c.push_str(&format!(" || {{ echo {} >&2; exit 2; }}", quote(FAILED)));
    Ok(c)
}

/// Whether a hook command is cordon's hook for `host`.
fn is_cordon(command: &str, host: Host) -> bool {
    command.contains("cordon") && command.contains(&format!(" hook {}", host.arg()))
}

/// Whether cordon's command blocks when cordon itself fails.
fn fails_closed(command: &str) -> bool {
    command.contains("|| {") && command.trim_end().ends_with("exit 2; }")
}

/// The matcher group cordon adds.
fn group(host: Host, command: &str) -> Value {
    let timeout = HOST_TIMEOUT.as_secs();
    match host {
        // Every tool: cordon defers on the ones it does not map. `timeout` in seconds (Claude
        // Code's default is 60 s, Codex's 600 s).
        Host::Claude | Host::Codex => json!({
            "matcher": "*",
            "hooks": [{ "type": "command", "command": command, "timeout": timeout }],
        }),
        // Not edited here: their hook file is cordon's own (`install_file`).
        Host::Copilot | Host::Opencode => Value::Null,
        // Gemini's matcher is a regular expression; its timeout is in milliseconds (default
        // 60 000).
        Host::Gemini => json!({
            "matcher": ".*",
            "hooks": [{ "type": "command", "name": "cordon", "command": command, "timeout": timeout * 1000 }],
        }),
    }
}

/// The hook commands in one matcher group.
fn commands(group: &Value) -> impl Iterator<Item = &str> {
    group["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["command"].as_str())
}

/// Cordon's hook entries for `host` in `settings`: the command and the host's timeout for it in
/// seconds (`None`: not set, the host's default).
fn cordon_entries(settings: &Value, host: Host) -> Vec<(String, Option<f64>)> {
    let unit = if host == Host::Gemini { 1000.0 } else { 1.0 };
    settings["hooks"][event(host)]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter_map(|h| {
            let c = h["command"].as_str().filter(|c| is_cordon(c, host))?;
            Some((c.to_string(), h["timeout"].as_f64().map(|t| t / unit)))
        })
        .collect()
}

/// The host's own hook timeout when the entry sets none, in seconds (Claude Code and Gemini
/// CLI: 60 s; Codex: 600 s, as `codex app-server`'s `hooks/list` reports it).
fn default_timeout(host: Host) -> f64 {
    match host {
        Host::Codex => 600.0,
        Host::Claude | Host::Gemini => 60.0,
        // Not reported from here: their own modules say what their timeouts do.
        Host::Copilot | Host::Opencode => f64::INFINITY,
    }
}

/// Removes cordon's hooks for `host` from `settings`; how many went.
fn remove(settings: &mut Value, host: Host) -> usize {
    let Some(groups) = settings
        .get_mut("hooks")
        .and_then(|h| h.get_mut(event(host)))
        .and_then(Value::as_array_mut)
    else {
        return 0;
    };
    let mut removed = 0;
    for g in groups.iter_mut() {
        if let Some(hooks) = g.get_mut("hooks").and_then(Value::as_array_mut) {
            let before = hooks.len();
            hooks.retain(|h| !h["command"].as_str().is_some_and(|c| is_cordon(c, host)));
            removed += before - hooks.len();
        }
    }
    // Groups cordon emptied go too; others stay as they were.
    groups.retain(|g| !(g["hooks"].as_array().is_some_and(Vec::is_empty) && removed > 0));
    removed
}

/// What install or uninstall did.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    Added,
    Replaced,
    Removed(usize),
}

/// Installs (or with `add = false` removes) cordon's hook in the settings file `rel` below
/// `anchor`. Every read and write of the file and its backup goes through
/// [`cordon_fs::safe`]: a link anywhere below `anchor` is refused, never followed.
pub fn edit(
    anchor: &Path,
    rel: &Path,
    host: Host,
    command: &str,
    add: bool,
) -> Result<Change, Error> {
    let file = anchor.join(rel);
    let file = file.as_path();
    let text = read_settings(anchor, rel)?;
    let mut settings: Value = match text.as_deref().map(str::trim) {
        None | Some("") => Value::Object(Map::new()),
        Some(t) => serde_json::from_str(t).map_err(|e| {
            Error::failure(format!(
                "{} is not valid JSON ({e}); fix it first",
                file.display()
            ))
        })?,
    };
    if !settings.is_object() {
        return Err(Error::failure(format!(
            "{} does not hold a JSON object",
            file.display()
        )));
    }
    if settings.get("hooks").is_some_and(|h| !h.is_object()) {
        return Err(Error::failure(format!(
            "{}: `hooks` is not an object",
            file.display()
        )));
    }
    let present: Vec<String> = settings["hooks"][event(host)]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| commands(g).map(String::from).collect::<Vec<_>>())
        .filter(|c| is_cordon(c, host))
        .collect();
    let change = if add {
        if present.len() == 1 && present[0] == command {
            return Ok(Change::Unchanged);
        }
        let replaced = remove(&mut settings, host) > 0;
        let hooks = settings
            .as_object_mut()
            .ok_or_else(|| Error::failure("settings are not an object"))?
            .entry("hooks")
            .or_insert_with(|| json!({}));
        let groups = hooks
            .as_object_mut()
            .ok_or_else(|| Error::failure("`hooks` is not an object"))?
            .entry(event(host))
            .or_insert_with(|| json!([]));
        groups
            .as_array_mut()
            .ok_or_else(|| Error::failure(format!("`hooks.{}` is not a list", event(host))))?
            .push(group(host, command));
        if replaced {
            Change::Replaced
        } else {
            Change::Added
        }
    } else {
        match remove(&mut settings, host) {
            0 => return Ok(Change::Unchanged),
            n => Change::Removed(n),
        }
    };
    let mut out = serde_json::to_string_pretty(&settings).map_err(Error::failure)?;
    out.push('\n');
    write_with_backup(anchor, rel, text.as_deref(), &out)?;
    Ok(change)
}

/// Writes `out` over the host file `rel` below `anchor` (atomically, keeping the file's
/// permissions; a new file is the owner's only: it names programs to run), after a backup
/// (`FILE.cordon-backup`) of `old`, the text that was there. Every step goes through
/// [`cordon_fs::safe`]: a link anywhere below `anchor` is refused, never followed. The one
/// writer of hook settings (`install`) and MCP settings (`install --mcp`).
pub fn write_with_backup(
    anchor: &Path,
    rel: &Path,
    old: Option<&str>,
    out: &str,
) -> Result<(), Error> {
    // A cordon run going over this file would take the write for its command's change at its
    // after-run scan and undo it: install said it installed, and cordon's hook was gone.
    let target = std::fs::canonicalize(anchor)
        .unwrap_or_else(|_| anchor.to_path_buf())
        .join(rel);
    let going = cordon_gate::live_runs_over(&target).map_err(|why| {
        Error::failure(format!(
            "{}: cannot tell whether a cordon run over it is going ({why}), and its after-run scan would take this change for its command's and undo it; check that marker, then run this again",
            crate::term::clean(&target.display().to_string()),
        ))
    })?;
    if let Some(root) = going.first() {
        return Err(Error::failure(format!(
            "{}: a cordon run over {} is going, and its after-run scan would take this change for its command's and undo it; run this again once it has ended",
            crate::term::clean(&target.display().to_string()),
            crate::term::clean(&root.display().to_string())
        )));
    }
    let root = cordon_fs::safe::Dir::anchor(anchor).map_err(Error::failure)?;
    let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => root.create_dirs(p, 0o755).map_err(Error::failure)?,
        None => root,
    };
    let name = Path::new(
        rel.file_name()
            .ok_or_else(|| Error::failure("the settings file has no name"))?,
    );
    let mode = dir
        .stat_at(name)
        .map_err(Error::failure)?
        .map_or(0o600, |st| st.st_mode & 0o777);
    if let Some(t) = old {
        dir.write(&backup_name(name), t.as_bytes(), mode)
            .map_err(|e| Error::failure(format!("backup: {e}")))?;
    }
    // Atomic: a crash leaves the old file or the new one.
    dir.write(name, out.as_bytes(), mode)
        .map_err(Error::failure)
}

/// `FILE.cordon-backup`.
pub fn backup_name(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".cordon-backup");
    file.with_file_name(name)
}

fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// `cordon install|uninstall`.
pub fn run(args: InstallArgs, add: bool) -> Exit {
    let mut scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    if args.mcp {
        return crate::install_mcp::run(args.host, scope, args.policy.as_deref(), add);
    }
    if args.sandbox.is_some() && args.host != Host::Codex {
        return Err(Error::failure(
            "--sandbox is for codex only (the other hosts have no sandbox of their own to hand over)",
        ));
    }
    if matches!(args.host, Host::Copilot | Host::Opencode) {
        return crate::install_file::run(args.host, scope, args.policy.as_deref(), add);
    }
    let cwd = crate::current_dir()?;
    // Gemini CLI loads a project's hooks only in a folder it trusts: without a named scope, an
    // untrusted folder gets the hook in the user's settings, which it loads everywhere.
    let gemini_trust = (args.host == Host::Gemini && scope == Scope::Project)
        .then(|| crate::gemini_trust::folder(&cwd, &env_var));
    match &gemini_trust {
        Some(Trust::Trusted(why)) => println!(
            "Gemini CLI trusts this folder ({}): it loads the project's hooks",
            crate::term::clean(why)
        ),
        Some(Trust::Untrusted(why) | Trust::Unknown(why)) if !args.project => {
            println!(
                "Gemini CLI does not trust this folder ({}): it would skip a hook in the \
                 project's settings (and `--skip-trust` runs without them), so cordon {} \
                 your user settings instead, which Gemini CLI loads in every folder",
                crate::term::clean(why),
                if add {
                    "installs in"
                } else {
                    "uninstalls from"
                }
            );
            if let (true, Some(p)) = (add, &args.policy) {
                println!(
                    "note: the hook names --policy {}: in every folder Gemini CLI runs in, calls \
                     are decided under that policy",
                    crate::term::clean(&p.display().to_string())
                );
            }
            scope = Scope::User;
        }
        _ => {}
    }
    let (anchor, rel) = settings_place(args.host, scope, &cwd, &env_var)?;
    let file = anchor.join(&rel);
    let exe = std::env::current_exe()
        .map_err(|e| Error::failure(format!("cannot find the cordon binary: {e}")))?;
    let policy = args
        .policy
        .as_deref()
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Error::failure(format!("--policy: {e}")))?;
    let command = hook_command(&exe, args.host, policy.as_deref(), args.deadline)?;
    let shown = crate::term::clean(&file.display().to_string());
    match edit(&anchor, &rel, args.host, &command, add) {
        Ok(Change::Unchanged) if add => {
            println!("{shown}: cordon's hook is already there; nothing changed")
        }
        Ok(Change::Unchanged) => println!("{shown}: no cordon hook to remove; nothing changed"),
        Ok(c) => {
            let what = match c {
                Change::Added => format!("added hooks.{} → {command}", event(args.host)),
                Change::Replaced => format!(
                    "replaced cordon's hooks.{} entry → {command}",
                    event(args.host)
                ),
                Change::Removed(n) => {
                    format!("removed {n} cordon hook(s) from hooks.{}", event(args.host))
                }
                Change::Unchanged => String::new(),
            };
            println!("{shown}: {}", crate::term::clean(&what));
            if file.exists() && backup_name(&file).exists() {
                println!(
                    "backup: {}",
                    crate::term::clean(&backup_name(&file).display().to_string())
                );
            }
        }
        Err(e) => return Err(e),
    }
    if args.host == Host::Codex {
        // Who sandboxes: written before the trust, whose failure exits 1 with the step left.
        let who = args.sandbox.unwrap_or(crate::codex_sandbox::Sandbox::Auto);
        // The audit log's directory comes from the policy; one that cannot be read now (not
        // trusted yet) leaves it out, said, rather than failing the install.
        let audit = match crate::codex_sandbox::audit_dir(policy.as_deref(), &cwd) {
            Ok(dir) => dir,
            Err(e) => {
                if add {
                    eprintln!(
                        "cordon: warning: cannot read the policy ({}), so its audit log's directory is not made writable in Codex's sandbox; inside it `cordon exec` will refuse to run until it is (install again once the policy is trusted)",
                        e
                    );
                }
                None
            }
        };
        let said = crate::codex_sandbox::apply(&anchor, &rel, who, audit.as_deref(), add)?;
        for line in said {
            println!("{line}");
        }
    }
    if add && args.host == Host::Codex {
        codex_trust(&cwd, &file, &command)?;
    }
    // Interactive Claude Code runs no hook, user or project, in a folder it does not trust yet.
    if add && args.host == Host::Claude {
        if let Trust::Untrusted(why) | Trust::Unknown(why) = claude_trust(&cwd, &env_var) {
            println!(
                "note: an interactive Claude Code runs no hook in this folder until its trust \
                 dialog is accepted ({why}); {CLAUDE_STEP} (claude -p runs hooks without it)"
            );
        }
    }
    if let (true, Some(Trust::Untrusted(why) | Trust::Unknown(why))) = (add, &gemini_trust) {
        if scope == Scope::Project {
            return Err(Error::failure(format!(
                "the hook is in place but Gemini CLI will not run it: it does not trust this \
                 folder ({}); {GEMINI_STEP}",
                crate::term::clean(why)
            )));
        }
    }
    Ok(0)
}

/// Codex runs a new or changed hook only once trusted, and skips it silently otherwise: the
/// trust is recorded through Codex itself ([`crate::codex_trust`]), or install fails with the
/// step that would.
fn codex_trust(cwd: &Path, file: &Path, command: &str) -> Exit {
    let step = "open /hooks in Codex in this project and trust cordon's hook (until then Codex \
                skips it without a word)";
    let codex = crate::codex_trust::program(&env_var).ok_or_else(|| {
        Error::failure(format!(
            "the hook is in place but Codex will not run it yet: `codex` is not on PATH (or \
             CORDON_CODEX), so cordon cannot record Codex's trust in it; {step}"
        ))
    })?;
    match crate::codex_trust::trust(&codex, cwd, file, command) {
        Ok(key) => {
            println!(
                "Codex trusts the hook `{}` (recorded by Codex in its config.toml, hooks.state)",
                crate::term::clean(&key)
            );
            Ok(0)
        }
        Err(e) => Err(Error::failure(format!(
            "the hook is in place but Codex will not run it yet: {}; {step}",
            e
        ))),
    }
}

/// One line per host and scope for `cordon doctor`: whether cordon's hook is there, whether a
/// failure or a slow decision blocks, and whether the host will load it (from the host's own
/// trust records: Codex's through `codex app-server`, Gemini CLI's trust file).
pub fn report(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut lines = Vec::new();
    for host in Host::all() {
        for scope in [Scope::Project, Scope::User] {
            let Ok((anchor, rel)) = settings_place(host, scope, cwd, var) else {
                continue;
            };
            let shown = crate::term::clean(&anchor.join(&rel).display().to_string());
            let state = match read_settings(&anchor, &rel) {
                Ok(None) => "not wired (no file)".to_string(),
                Err(e) => format!("not wired: {}", e),
                Ok(Some(t)) => match serde_json::from_str::<Value>(&t) {
                    Err(_) => "not wired: the file is not valid JSON".to_string(),
                    Ok(v) => match cordon_entries(&v, host).first() {
                        None => "not wired".to_string(),
                        Some((c, timeout)) if fails_closed(c) => {
                            let deadline = deadline_of(c);
                            let mut s = format!(
                                "wired, fails closed (cordon failing, missing, or undecided after its {} s deadline blocks the call)",
                                deadline.as_secs_f64()
                            );
                            s.push_str(&timeout_state(host, *timeout, deadline));
                            match host {
                                Host::Codex => {
                                    s.push_str(&codex_state(cwd, &anchor.join(&rel), c, var));
                                    s.push_str(&crate::codex_sandbox::report(&anchor, &rel));
                                }
                                Host::Gemini => s.push_str(&gemini_state(scope, cwd, var)),
                                Host::Claude => {
                                    s.push_str(&claude_state(cwd, var));
                                    s.push_str(&claude_trust_state(cwd, var));
                                }
                                // Not in Host::all(): reported by their own modules.
                                Host::Copilot | Host::Opencode => {}
                            }
                            s
                        }
                        Some(_) => "wired, fails OPEN (reinstall: `cordon install` wraps the hook so a failure blocks)".to_string(),
                    },
                },
            };
            lines.push(format!(
                "  {:<12} {:<8} {shown}: {state}",
                host.client(),
                scope.name()
            ));
        }
    }
    lines
}

/// Whether the host waits for cordon's deadline: a host whose timeout passes first runs the
/// call (none of the three blocks on a timeout).
fn timeout_state(host: Host, timeout: Option<f64>, deadline: Duration) -> String {
    let t = timeout.unwrap_or_else(|| default_timeout(host));
    // Room for starting cordon on a loaded machine after the deadline.
    if t >= deadline.as_secs_f64() + 5.0 {
        String::new()
    } else {
        format!(
            "; but the host's hook timeout ({t} s) does not leave cordon its {} s deadline: \
             a slow decision times out and the host RUNS the call (`cordon install` sets {} s)",
            deadline.as_secs_f64(),
            HOST_TIMEOUT.as_secs()
        )
    }
}

/// The deadline cordon's hook `command` runs with (`--deadline`, else the default).
fn deadline_of(command: &str) -> Duration {
    command
        .split_once(" --deadline ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(cordon_policy::parse_duration)
        .unwrap_or(DEADLINE)
}

/// Whether Gemini CLI loads the hook in `scope`: user settings always; the project's only in a
/// folder it trusts ([`crate::gemini_trust`]).
fn gemini_state(scope: Scope, cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> String {
    let trust = crate::gemini_trust::folder(cwd, var);
    if let Some(off) = gemini_hooks_off(cwd, matches!(trust, Trust::Trusted(_)), var) {
        return off;
    }
    if scope == Scope::User {
        return "; loaded: Gemini CLI reads user settings in every folder".into();
    }
    match trust {
        Trust::Trusted(why) => format!(
            "; loaded: Gemini CLI trusts this folder ({})",
            crate::term::clean(&why)
        ),
        Trust::Untrusted(why) => format!(
            "; present but NOT LOADED: Gemini CLI does not trust this folder ({}), so it skips \
             the project's settings and their hooks (headless it refuses to start, and \
             `--skip-trust` runs WITHOUT them); {GEMINI_STEP}",
            crate::term::clean(&why)
        ),
        Trust::Unknown(why) => format!(
            "; NOT KNOWN to load: Gemini CLI's folder trust cannot be read ({}); {GEMINI_STEP}",
            crate::term::clean(&why)
        ),
    }
}

/// Whether Gemini CLI's merged settings switch cordon's hook off: `hooksConfig.enabled =
/// false` (the last of system-defaults < user < project (when trusted) < system settings that
/// sets it decides) turns every hook off; `hooksConfig.disabled` naming `cordon` (the hook's
/// `name`) in any of them turns cordon's off.
fn gemini_hooks_off(
    cwd: &Path,
    trusted: bool,
    var: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let system = var("GEMINI_CLI_SYSTEM_SETTINGS_PATH").map_or_else(
        || PathBuf::from("/etc/gemini-cli/settings.json"),
        PathBuf::from,
    );
    let mut files = vec![system.with_file_name("system-defaults.json")];
    if let Some(h) = var("HOME").map(PathBuf::from).filter(|h| h.is_absolute()) {
        files.push(h.join(".gemini/settings.json"));
    }
    if trusted {
        files.push(cwd.join(".gemini/settings.json"));
    }
    files.push(system);
    let mut enabled: Option<(bool, &PathBuf)> = None;
    let mut disabled_in = None;
    for f in &files {
        // (Never blocking on a FIFO a run left at the project's settings.)
        let Some(v) = cordon_fs::safe::read_followed(f, MAX_SETTINGS)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_slice::<Value>(&t).ok())
        else {
            continue;
        };
        if let Some(b) = v["hooksConfig"]["enabled"].as_bool() {
            enabled = Some((b, f));
        }
        let names = v["hooksConfig"]["disabled"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if names.iter().any(|n| n == "cordon") {
            disabled_in = Some(f);
        }
    }
    let shown = |f: &PathBuf| crate::term::clean(&f.display().to_string());
    match (enabled, disabled_in) {
        (Some((false, f)), _) => Some(format!(
            "; NOT RUN: hooksConfig.enabled = false in {}, so Gemini CLI runs no hook",
            shown(f)
        )),
        (_, Some(f)) => Some(format!(
            "; NOT RUN: hooksConfig.disabled in {} names `cordon`, so Gemini CLI skips it",
            shown(f)
        )),
        _ => None,
    }
}

/// Whether Claude Code's settings switch its hooks off (Claude Code 2.1: `disableAllHooks` in
/// the managed settings, or as the user < project < local settings merge it, runs no hook of
/// these files; managed `allowManagedHooksOnly` runs only the managed settings' hooks).
fn claude_state(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> String {
    let flag = |anchor: &Path, rel: &str, key: &str| -> Option<bool> {
        let t = read_settings(anchor, Path::new(rel)).ok()??;
        serde_json::from_str::<Value>(&t).ok()?[key].as_bool()
    };
    let managed = (Path::new("/etc"), "claude-code/managed-settings.json");
    for key in ["disableAllHooks", "allowManagedHooksOnly"] {
        if flag(managed.0, managed.1, key) == Some(true) {
            return format!(
                "; NOT RUN: Claude Code's managed settings (/etc/{}) set {key}, so it runs no hook \
                 of these files",
                managed.1
            );
        }
    }
    let home = var("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let mut layers = Vec::new();
    if let Some(h) = &home {
        layers.push((h.as_path(), ".claude/settings.json"));
    }
    layers.push((cwd, ".claude/settings.json"));
    layers.push((cwd, ".claude/settings.local.json"));
    // The last file that sets it decides.
    let set = layers
        .into_iter()
        .rev()
        .find_map(|(a, r)| Some((flag(a, r, "disableAllHooks")?, a.join(r))));
    match set {
        Some((true, file)) => format!(
            "; NOT RUN: disableAllHooks = true in {}, so Claude Code runs no hook",
            crate::term::clean(&file.display().to_string())
        ),
        _ => String::new(),
    }
}

/// Claude Code's own record of the workspace trust dialog (read from Claude Code 2.1.197's
/// code): its global config is `$CLAUDE_CONFIG_DIR/.config.json` (`~/.claude/.config.json`)
/// when that exists, else `.claude.json` in `$CLAUDE_CONFIG_DIR` or HOME (`.claude-custom-oauth.json`
/// under `CLAUDE_CODE_CUSTOM_OAUTH_URL`).
fn claude_config_file(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let abs = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = abs("CLAUDE_CONFIG_DIR").or_else(|| abs("HOME"))?;
    let dir = abs("CLAUDE_CONFIG_DIR").or_else(|| abs("HOME").map(|h| h.join(".claude")))?;
    let legacy = dir.join(".config.json");
    if legacy.exists() {
        return Some(legacy);
    }
    let suffix = if var("CLAUDE_CODE_CUSTOM_OAUTH_URL").is_some() {
        "-custom-oauth"
    } else {
        ""
    };
    Some(base.join(format!(".claude{suffix}.json")))
}

/// Whether Claude Code runs hooks in an interactive session in `cwd`. In 2.1.197 every hook
/// is skipped (`shouldSkipHookDueToTrust`) in an interactive session until the workspace is
/// trusted: `CLAUDE_CODE_SANDBOXED` set, the trust dialog accepted in this session, or
/// `projects[P].hasTrustDialogAccepted = true` in its config for the git root of the folder or
/// any folder from it up to `/`. `claude -p` runs hooks without that trust.
fn claude_trust(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> Trust {
    if var("CLAUDE_CODE_SANDBOXED")
        .is_some_and(|v| ["1", "true", "yes", "on"].contains(&v.to_ascii_lowercase().as_str()))
    {
        return Trust::Trusted(
            "CLAUDE_CODE_SANDBOXED is set, so Claude Code trusts every folder".into(),
        );
    }
    let Some(file) = claude_config_file(var) else {
        return Trust::Unknown("HOME is not set to an absolute path".into());
    };
    let shown = crate::term::clean(&file.display().to_string());
    // (Never blocking on a FIFO left at the name.)
    let config = match cordon_fs::safe::read_followed(&file, MAX_SETTINGS) {
        Ok(None) => Value::Null,
        Err(e) => {
            return Trust::Unknown(format!(
                "cannot read {shown}: {}",
                crate::term::clean(&e.to_string())
            ))
        }
        Ok(Some(t)) => match serde_json::from_slice(&t) {
            Ok(v) => v,
            Err(_) => return Trust::Unknown(format!("{shown} is not valid JSON")),
        },
    };
    // The folder as given and resolved (Claude Code keys by the resolved path of its working
    // directory) and every folder above them, the git root among them (a worktree's main
    // checkout is not followed).
    let mut keys: Vec<PathBuf> = cwd.ancestors().map(Path::to_path_buf).collect();
    if let Ok(real) = cwd.canonicalize() {
        keys.extend(real.ancestors().map(Path::to_path_buf));
    }
    let trusted = keys.iter().find(|k| {
        config["projects"][k.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] == true
    });
    match trusted {
        Some(k) => Trust::Trusted(format!(
            "Claude Code trusts this folder (projects[\"{}\"].hasTrustDialogAccepted in {shown})",
            crate::term::clean(&k.display().to_string())
        )),
        None => Trust::Untrusted(format!(
            "{shown} records no accepted trust dialog for this folder or one above it"
        )),
    }
}

/// What an interactive Claude Code does with the hook here, for `cordon doctor`.
fn claude_trust_state(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> String {
    match claude_trust(cwd, var) {
        Trust::Trusted(why) => format!("; loaded: {why}"),
        Trust::Untrusted(why) => format!(
            "; present but UNTRUSTED in interactive sessions: {why}, and until it is accepted \
             an interactive Claude Code runs no hook (claude -p runs them without it); {CLAUDE_STEP}"
        ),
        Trust::Unknown(why) => format!(
            "; Claude Code's workspace trust is UNKNOWN ({why}): an interactive session runs no \
             hook until its trust dialog is accepted"
        ),
    }
}

/// What makes an interactive Claude Code run hooks in a folder it does not trust yet.
const CLAUDE_STEP: &str = "run `claude` here once and accept its trust dialog";

/// What makes Gemini CLI run cordon's hook in a folder it does not trust.
const GEMINI_STEP: &str = "`cordon install gemini --user` wires it for every folder, or trust \
                           this folder in Gemini CLI (its trust prompt, or /permissions)";

/// What Codex itself says it will do with cordon's hook `command` from `file`.
fn codex_state(
    cwd: &Path,
    file: &Path,
    command: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> String {
    let Some(codex) = crate::codex_trust::program(var) else {
        return "; Codex's trust in it is UNKNOWN (`codex` not on PATH): Codex skips an \
                untrusted hook silently"
            .into();
    };
    match crate::codex_trust::list(&codex, cwd) {
        Err(e) => format!(
            "; Codex's trust in it is UNKNOWN ({}): Codex skips an untrusted hook silently",
            e
        ),
        Ok(hooks) => match hooks
            .iter()
            .find(|h| h.source == file && h.command == command)
        {
            Some(h) if h.status == "trusted" => "; loaded: Codex trusts it".into(),
            Some(h) => format!(
                "; present but NOT RUN: Codex reports it {} and skips it silently \
                 (`cordon install codex` records the trust, or open /hooks in Codex)",
                crate::term::clean(&h.status)
            ),
            None => {
                "; NOT LOADED: Codex does not list it (is the project trusted in Codex?)".into()
            }
        },
    }
}
