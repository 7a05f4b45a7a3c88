//! `cordon install|uninstall copilot|opencode`, and their part of `cordon doctor`: hosts wired
//! by a file of cordon's own rather than an entry in a shared settings file.
//!
//! | host        | project                         | user                                              |
//! |-------------|---------------------------------|---------------------------------------------------|
//! | Copilot CLI | `.github/hooks/cordon.json`     | `$COPILOT_HOME/hooks/cordon.json` (`~/.copilot`)   |
//! | opencode    | `.opencode/plugin/cordon.js`    | `$XDG_CONFIG_HOME/opencode/plugin/cordon.js` (`~/.config`) |
//!
//! Copilot CLI loads every `*.json` in its hooks directories; cordon's file holds one
//! `preToolUse` command hook running `cordon hook copilot`. opencode loads every plugin file in
//! its `plugin/` directories; cordon's runs `cordon hook opencode` before each tool
//! ([`crate::hook::opencode::plugin_source`]).
//!
//! Same guarantees as the shared files (`install.rs`): idempotent (the same file again changes
//! nothing), a backup (`FILE.cordon-backup`) before an older cordon file is replaced or
//! removed, every read and write through [`cordon_fs::safe`] below the directory the operator
//! chose (the project, HOME, COPILOT_HOME, XDG_CONFIG_HOME), a link anywhere below it refused.
//! A file of that name that is not cordon's is never overwritten or removed.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hook::{opencode, quote, Host};
use crate::install::{backup_name, Scope};
use crate::{Error, Exit};

/// The largest hook file cordon reads back.
const MAX_FILE: u64 = 1 << 20;

/// Copilot's hook timeout, seconds (its default is 30). Past it, Copilot's own approval
/// decides as if there were no hook.
pub const COPILOT_TIMEOUT_SEC: u64 = 30;

/// Where cordon's file for `host` goes in `scope`: the directory cordon trusts and the path
/// below it, walked without following a link.
pub fn place(
    host: Host,
    scope: Scope,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, PathBuf), Error> {
    let home = || crate::install::home_of(var);
    let abs_var = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let (anchor, rel) = match (host, scope) {
        (Host::Copilot, Scope::Project) => (cwd.to_path_buf(), ".github/hooks/cordon.json"),
        (Host::Copilot, Scope::User) => match abs_var("COPILOT_HOME") {
            Some(h) => (h, "hooks/cordon.json"),
            None => (home()?, ".copilot/hooks/cordon.json"),
        },
        (Host::Opencode, Scope::Project) => (cwd.to_path_buf(), ".opencode/plugin/cordon.js"),
        (Host::Opencode, Scope::User) => match abs_var("XDG_CONFIG_HOME") {
            Some(x) => (x, "opencode/plugin/cordon.js"),
            None => (home()?, ".config/opencode/plugin/cordon.js"),
        },
        (other, _) => {
            return Err(Error::failure(format!(
                "{} is wired in its settings file, not a file of cordon's",
                other.arg()
            )))
        }
    };
    Ok((anchor, PathBuf::from(rel)))
}

/// The deny Copilot reads when cordon itself fails: its reason reaches the model (an exit 2
/// would too block, but says only "hook exited with code 2").
const COPILOT_FAILED: &str = r#"{"permissionDecision":"deny","permissionDecisionReason":"cordon: the cordon hook failed; the call is blocked"}"#;

/// Copilot's hook command: cordon by absolute path; any failure of cordon is a deny.
pub fn copilot_command(exe: &Path, policy: Option<&Path>) -> Result<String, Error> {
    let exe = exe
        .to_str()
        .ok_or(crate::hook::Error::NotUtf8("the cordon binary's"))?;
    let mut c = format!("{} hook copilot", quote(exe));
    if let Some(p) = policy {
        let p = p
            .to_str()
            .ok_or(crate::hook::Error::NotUtf8("the policy's"))?;
        c.push_str(" --policy ");
        c.push_str(&quote(p));
    }
    c.push_str(&format!(
        " || {{ echo {}; exit 0; }}",
        quote(COPILOT_FAILED)
    ));
    Ok(c)
}

/// The whole file cordon writes for `host`.
pub fn content(host: Host, exe: &Path, policy: Option<&Path>) -> Result<String, Error> {
    match host {
        Host::Copilot => {
            let v = json!({
                "version": 1,
                "hooks": { "preToolUse": [{
                    "type": "command",
                    "bash": copilot_command(exe, policy)?,
                    "timeoutSec": COPILOT_TIMEOUT_SEC,
                }]},
            });
            let mut s = serde_json::to_string_pretty(&v).map_err(Error::failure)?;
            s.push('\n');
            Ok(s)
        }
        Host::Opencode => Ok(opencode::plugin_source(exe, policy)?),
        other => Err(Error::failure(format!(
            "{} has no file of cordon's",
            other.arg()
        ))),
    }
}

/// Copilot's hook commands in a hook file's text (`bash`, or its `command` alias).
fn copilot_commands(text: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    v["hooks"]["preToolUse"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| [h["bash"].as_str(), h["command"].as_str()])
        .flatten()
        .map(String::from)
        .collect()
}

/// Whether `text` is a file cordon wrote for `host`.
fn is_cordons(host: Host, text: &str) -> bool {
    match host {
        Host::Copilot => {
            let c = copilot_commands(text);
            c.len() == 1 && c[0].contains(" hook copilot")
        }
        Host::Opencode => text.starts_with(opencode::PLUGIN_MARK),
        _ => false,
    }
}

fn read(anchor: &Path, rel: &Path) -> Result<Option<String>, Error> {
    match cordon_fs::safe::read(anchor, rel, MAX_FILE) {
        Ok(None) => Ok(None),
        Ok(Some(b)) => String::from_utf8(b).map(Some).map_err(|_| {
            Error::failure(format!("{} is not UTF-8 text", anchor.join(rel).display()))
        }),
        Err(e) => Err(Error::failure(e)),
    }
}

/// What install or uninstall did.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    Added,
    Replaced,
    Removed,
    /// Uninstall found no file.
    Absent,
}

/// Writes (`add`) or removes cordon's file `rel` below `anchor`; `text` is the file to write.
pub fn edit(anchor: &Path, rel: &Path, host: Host, text: &str, add: bool) -> Result<Change, Error> {
    let file = anchor.join(rel);
    let old = read(anchor, rel)?;
    if let Some(o) = &old {
        if add && o == text {
            return Ok(Change::Unchanged);
        }
        if !is_cordons(host, o) {
            return Err(Error::failure(format!(
                "{} exists and is not cordon's: left as it is (move it aside, then run this again)",
                file.display()
            )));
        }
    }
    let Some(old) = old else {
        if !add {
            return Ok(Change::Absent);
        }
        // A new file is the owner's only: it names a program the host runs.
        crate::install::write_with_backup(anchor, rel, None, text)?;
        return Ok(Change::Added);
    };
    if add {
        // The backup, then the new file atomically: a crash leaves the old file or the new one.
        crate::install::write_with_backup(anchor, rel, Some(&old), text)?;
        return Ok(Change::Replaced);
    }
    let root = cordon_fs::safe::Dir::anchor(anchor).map_err(Error::failure)?;
    let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => root.dir(p).map_err(Error::failure)?,
        None => root,
    };
    let name = Path::new(
        rel.file_name()
            .ok_or_else(|| Error::failure("the file has no name"))?,
    );
    let mode = dir
        .stat_at(name)
        .map_err(Error::failure)?
        .map_or(0o600, |st| st.st_mode & 0o777);
    dir.write(&backup_name(name), old.as_bytes(), mode)
        .map_err(|e| Error::failure(format!("backup: {e}")))?;
    dir.remove(name).map_err(Error::failure)?;
    Ok(Change::Removed)
}

/// What the host will do with a project-level file that cordon cannot see from here.
fn load_note(host: Host, scope: Scope) -> Option<&'static str> {
    match (host, scope) {
        (Host::Copilot, Scope::Project) => Some(
            "Copilot CLI loads .github/hooks only at the root of a git repository, only in a \
             folder it trusts, and in prompt mode (-p) only when it is trusted or \
             GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true or COPILOT_ALLOW_ALL=true; cordon cannot \
             read Copilot's trust record (`cordon install copilot --user` is loaded in every \
             folder)",
        ),
        (Host::Opencode, _) => Some(
            "opencode --pure (OPENCODE_PURE) loads no plugins, cordon's included; \
             OPENCODE_DISABLE_PROJECT_CONFIG skips the project's .opencode",
        ),
        _ => None,
    }
}

/// `cordon install|uninstall copilot|opencode`.
pub fn run(host: Host, scope: Scope, policy: Option<&Path>, add: bool) -> Exit {
    let cwd = crate::current_dir()?;
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (anchor, rel) = place(host, scope, &cwd, &var)?;
    let file = anchor.join(&rel);
    let shown = crate::term::clean(&file.display().to_string());
    let exe = std::env::current_exe()
        .map_err(|e| Error::failure(format!("cannot find the cordon binary: {e}")))?;
    let policy = policy
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Error::failure(format!("--policy: {e}")))?;
    let text = content(host, &exe, policy.as_deref())?;
    let what = match host {
        Host::Copilot => "preToolUse hook",
        _ => "tool.execute.before plugin",
    };
    match edit(&anchor, &rel, host, &text, add)? {
        Change::Unchanged => println!("{shown}: cordon's {what} is already there; nothing changed"),
        Change::Absent => println!("{shown}: no cordon {what} to remove; nothing changed"),
        c => {
            let did = match c {
                Change::Added => "added",
                Change::Replaced => "replaced",
                _ => "removed",
            };
            let runs = format!(
                "{} hook {}",
                crate::term::clean(&exe.display().to_string()),
                host.arg()
            );
            if add {
                println!("{shown}: {did} cordon's {what} → {runs}");
            } else {
                println!("{shown}: {did} cordon's {what}");
            }
            if backup_name(&file).exists() && c != Change::Added {
                println!(
                    "backup: {}",
                    crate::term::clean(&backup_name(&file).display().to_string())
                );
            }
        }
    }
    if add {
        if host == Host::Copilot {
            println!(
                "note: past its hook timeout ({COPILOT_TIMEOUT_SEC} s, timeoutSec) Copilot CLI leaves the call to its own approval (with --allow-all-tools it runs, unconfined); cordon failing or missing denies it"
            );
        }
        if let Some(n) = load_note(host, scope) {
            println!("note: {n}");
        }
        if host == Host::Copilot && scope == Scope::Project && !cwd.join(".git").exists() {
            println!(
                "warning: {} is not the root of a git repository: Copilot CLI will not load this hook here",
                crate::term::clean(&cwd.display().to_string())
            );
        }
    }
    Ok(0)
}

/// Whether a JSON-with-comments settings file sets `disableAllHooks`: Copilot then runs no
/// hook from any file.
fn disables_all_hooks(text: &str) -> bool {
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str::<Value>(&json).is_ok_and(|v| v["disableAllHooks"] == true)
}

/// One line per host and scope for `cordon doctor`.
pub fn report(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut lines = Vec::new();
    for host in [Host::Copilot, Host::Opencode] {
        for scope in [Scope::Project, Scope::User] {
            let Ok((anchor, rel)) = place(host, scope, cwd, var) else {
                continue;
            };
            let shown = crate::term::clean(&anchor.join(&rel).display().to_string());
            let state = match read(&anchor, &rel) {
                Ok(None) => "not wired (no file)".to_string(),
                Err(e) => format!("not wired: {e}"),
                Ok(Some(t)) if !is_cordons(host, &t) => {
                    "not wired: the file is not cordon's".to_string()
                }
                Ok(Some(_)) => state(host, scope, cwd, var),
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

/// What the host will do with cordon's file.
fn state(host: Host, scope: Scope, cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> String {
    let mut s = match host {
        Host::Copilot => format!(
            "wired, fails closed (cordon failing or missing denies the call; past the {COPILOT_TIMEOUT_SEC} s hook timeout, Copilot's own approval decides: with --allow-all-tools it runs)"
        ),
        _ => format!(
            "wired, fails closed (cordon failing, missing or silent for {} s blocks the call)",
            opencode::PLUGIN_DEADLINE_MS / 1000
        ),
    };
    match host {
        Host::Copilot => {
            let home = var("COPILOT_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| var("HOME").map(|h| Path::new(&h).join(".copilot")));
            for f in ["settings.json", "config.json"] {
                let Some(h) = &home else { break };
                if let Ok(Some(t)) = read(h, Path::new(f)) {
                    if disables_all_hooks(&t) {
                        s = format!(
                            "present but SKIPPED: disableAllHooks is set in {} (Copilot runs no hook)",
                            crate::term::clean(&h.join(f).display().to_string())
                        );
                        return s;
                    }
                }
            }
            if scope == Scope::Project && !cwd.join(".git").exists() {
                return format!(
                    "present but NOT LOADED: {} is not the root of a git repository, where \
                     Copilot CLI looks for .github/hooks",
                    crate::term::clean(&cwd.display().to_string())
                );
            }
            if scope == Scope::Project {
                s.push_str("; ");
                s.push_str(load_note(host, scope).unwrap_or_default());
            }
        }
        _ => {
            if var("OPENCODE_PURE").is_some() {
                return "present but SKIPPED here: OPENCODE_PURE is set (opencode --pure loads no plugins)".into();
            }
            if scope == Scope::Project && var("OPENCODE_DISABLE_PROJECT_CONFIG").is_some() {
                return "present but SKIPPED here: OPENCODE_DISABLE_PROJECT_CONFIG is set".into();
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_file_is_cordons_and_fails_closed() {
        let t = content(Host::Copilot, Path::new("/bin/cordon"), None).unwrap();
        assert!(is_cordons(Host::Copilot, &t));
        let c = copilot_commands(&t);
        assert_eq!(c.len(), 1);
        assert!(
            c[0].starts_with("'/bin/cordon' hook copilot || { echo '{"),
            "{}",
            c[0]
        );
        assert!(!is_cordons(
            Host::Copilot,
            r#"{"hooks":{"preToolUse":[{"bash":"x"}]}}"#
        ));
        assert!(!is_cordons(Host::Opencode, "export const X = 1"));
    }

    #[test]
    fn disable_all_hooks_is_read_through_comments() {
        assert!(disables_all_hooks(
            "// managed\n{\n \"disableAllHooks\": true\n}"
        ));
        assert!(!disables_all_hooks("{\"disableAllHooks\": false}"));
    }
}
