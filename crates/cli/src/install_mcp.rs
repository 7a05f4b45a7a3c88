//! `cordon install|uninstall HOST --mcp`: each stdio MCP server the host starts is run under
//! `cordon mcp wrap --name NAME -- ORIGINAL_COMMAND ORIGINAL_ARGS…` (docs/mcp.md), and
//! `cordon doctor` lists which are.
//!
//! | host        | project          | user                       | table        |
//! |-------------|------------------|----------------------------|--------------|
//! | Claude Code | `.mcp.json`      | `~/.claude.json`           | `mcpServers` |
//! | Gemini CLI  | `.gemini/settings.json` | `~/.gemini/settings.json` | `mcpServers` |
//! | Codex       | `.codex/config.toml` | `$CODEX_HOME/config.toml` (`~/.codex`) | `[mcp_servers.NAME]` |
//!
//! An entry `{"command": C, "args": A, …}` becomes `{"command": CORDON, "args": ["mcp",
//! "wrap", ("--policy", P,) "--name", NAME, "--", C, A…], …}`, every other key kept (`env`,
//! `cwd`, `type`, `timeout`, …): the original is the tail after `--`, so uninstall restores it
//! exactly. Idempotent (a wrapped entry is left as it is); remote servers (`url`, `httpUrl`)
//! and names that cannot be a `SERVER` key are left alone and said so. The file is read and
//! written through [`cordon_fs::safe`] below the project or HOME (a link is refused, never
//! followed), with a backup (`FILE.cordon-backup`) of what was there before.
//!
//! Codex's TOML is edited in place (`toml_edit`): comments, layout and every other key stay.
//!
//! Claude Code also keeps servers per project inside `~/.claude.json`
//! (`projects.PATH.mcpServers`, its "local" scope): a project install rewrites the entry of
//! the current directory (its path as given and resolved) there too, a user install every
//! project's along with the top-level `mcpServers`; uninstall restores the same ones.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::hook::Host;
use crate::install::{backup_name, Scope};
use crate::{Error, Exit};

/// The largest configuration file cordon edits.
const MAX_FILE: u64 = 16 << 20;

/// Where `host` keeps its MCP servers in `scope`: the directory cordon trusts and the path
/// below it, walked without following a link.
pub fn place(
    host: Host,
    scope: Scope,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, PathBuf), Error> {
    let home = || crate::install::home_of(var);
    let (anchor, rel) = match (host, scope) {
        (Host::Claude, Scope::Project) => (cwd.to_path_buf(), ".mcp.json"),
        (Host::Claude, Scope::User) => (home()?, ".claude.json"),
        (Host::Gemini, Scope::Project) => (cwd.to_path_buf(), ".gemini/settings.json"),
        (Host::Gemini, Scope::User) => (home()?, ".gemini/settings.json"),
        (Host::Codex, Scope::Project) => (cwd.to_path_buf(), ".codex/config.toml"),
        (Host::Codex, Scope::User) => match var("CODEX_HOME").map(PathBuf::from) {
            Some(h) if h.is_absolute() => (h, "config.toml"),
            _ => (home()?, ".codex/config.toml"),
        },
        (Host::Copilot | Host::Opencode, _) => {
            return Err(Error::failure(format!(
                "`--mcp` does not support {} yet: only claude, codex and gemini",
                host.arg()
            )))
        }
    };
    Ok((anchor, PathBuf::from(rel)))
}

/// What became of one server entry.
#[derive(Debug, PartialEq, Eq)]
pub enum Done {
    Wrapped(String),
    Restored(String),
    Skipped(String, &'static str),
}

/// Whether `entry` already runs under `cordon mcp wrap`: its arguments start `mcp wrap` and
/// hold the `--` that ends the wrapper's own.
fn wrapped_tail(entry: &Value) -> Option<(String, Vec<Value>)> {
    let args = entry.get("args")?.as_array()?;
    if args.first()?.as_str()? != "mcp" || args.get(1)?.as_str()? != "wrap" {
        return None;
    }
    let end = args.iter().position(|a| a == "--")?;
    let command = args.get(end + 1)?.as_str()?.to_string();
    Some((command, args[end + 2..].to_vec()))
}

/// Which `mcpServers` tables of a JSON configuration file an install touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tables {
    /// The top-level `mcpServers`.
    Top,
    /// The top-level one and every `projects.PATH.mcpServers` (Claude's `~/.claude.json`).
    TopAndProjects,
    /// `projects.PATH.mcpServers` for these paths only.
    Projects(Vec<String>),
}

/// [`rewrite`] over the `tables` of `config`; a project's entries are reported as
/// `NAME (project PATH)`.
pub fn rewrite_tables(
    config: &mut Value,
    tables: &Tables,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Vec<Done> {
    let mut done = Vec::new();
    if matches!(tables, Tables::Top | Tables::TopAndProjects) {
        done.extend(rewrite(config, exe, policy, add));
    }
    let Some(projects) = config.get_mut("projects").and_then(Value::as_object_mut) else {
        return done;
    };
    for (path, project) in projects.iter_mut() {
        let wanted = match tables {
            Tables::Top => false,
            Tables::TopAndProjects => true,
            Tables::Projects(paths) => paths.contains(path),
        };
        if !wanted {
            continue;
        }
        let at = |n: String| format!("{n} (project {path})");
        done.extend(
            rewrite(project, exe, policy, add)
                .into_iter()
                .map(|d| match d {
                    Done::Wrapped(n) => Done::Wrapped(at(n)),
                    Done::Restored(n) => Done::Restored(at(n)),
                    Done::Skipped(n, why) => Done::Skipped(at(n), why),
                }),
        );
    }
    done
}

/// Rewrites the servers of `config` (the file's JSON): wraps each with `exe` (and `policy`),
/// or with `add = false` restores each wrapped one.
pub fn rewrite(config: &mut Value, exe: &str, policy: Option<&str>, add: bool) -> Vec<Done> {
    let mut done = Vec::new();
    let Some(servers) = config.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return done;
    };
    for (name, entry) in servers.iter_mut() {
        let Some(obj) = entry.as_object_mut() else {
            done.push(Done::Skipped(name.clone(), "not an object"));
            continue;
        };
        let tail = wrapped_tail(&Value::Object(obj.clone()));
        if !add {
            if let Some((command, args)) = tail {
                obj.insert("command".into(), Value::String(command));
                if args.is_empty() {
                    obj.remove("args");
                } else {
                    obj.insert("args".into(), Value::Array(args));
                }
                done.push(Done::Restored(name.clone()));
            }
            continue;
        }
        if tail.is_some() {
            done.push(Done::Skipped(name.clone(), "already wrapped"));
            continue;
        }
        let Some(command) = obj.get("command").and_then(Value::as_str).map(String::from) else {
            done.push(Done::Skipped(
                name.clone(),
                "not a stdio server (no command): left as it is",
            ));
            continue;
        };
        if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
            done.push(Done::Skipped(
                name.clone(),
                "its name cannot be a SERVER key (a `/` or a space): rename it first",
            ));
            continue;
        }
        let original: Vec<Value> = match obj.get("args") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => {
                done.push(Done::Skipped(name.clone(), "its args are not a list"));
                continue;
            }
        };
        let mut args: Vec<Value> = vec!["mcp".into(), "wrap".into()];
        if let Some(p) = policy {
            args.extend(["--policy".into(), p.into()]);
        }
        args.extend([
            "--name".into(),
            name.clone().into(),
            "--".into(),
            command.into(),
        ]);
        args.extend(original);
        obj.insert("command".into(), Value::String(exe.to_string()));
        obj.insert("args".into(), Value::Array(args));
        done.push(Done::Wrapped(name.clone()));
    }
    done
}

/// What to make of one server whose `command` and `args` are given (`None`: absent): the
/// new command and arguments, `None` to leave it, or why it is left alone. For Codex's TOML.
fn rewrite_one(
    name: &str,
    command: Option<&str>,
    args: Option<Vec<String>>,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Result<Option<(String, Vec<String>)>, &'static str> {
    let args = args.unwrap_or_default();
    let wrapped = args.len() >= 2 && args[0] == "mcp" && args[1] == "wrap";
    let tail = wrapped
        .then(|| args.iter().position(|a| a == "--"))
        .flatten()
        .filter(|end| *end + 1 < args.len());
    if !add {
        return Ok(tail.map(|end| (args[end + 1].clone(), args[end + 2..].to_vec())));
    }
    if wrapped {
        return Err("already wrapped");
    }
    let Some(command) = command else {
        return Err("not a stdio server (no command): left as it is");
    };
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err("its name cannot be a SERVER key (a `/` or a space): rename it first");
    }
    let mut out: Vec<String> = vec!["mcp".into(), "wrap".into()];
    if let Some(p) = policy {
        out.extend(["--policy".into(), p.into()]);
    }
    out.extend(["--name".into(), name.into(), "--".into(), command.into()]);
    out.extend(args);
    Ok(Some((exe.to_string(), out)))
}

/// [`rewrite`] for Codex's `config.toml` (`[mcp_servers.NAME]` tables, `command`, `args`),
/// every other key, comment and layout kept.
pub fn rewrite_toml(
    doc: &mut toml_edit::DocumentMut,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Vec<Done> {
    let mut done = Vec::new();
    let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return done;
    };
    for (name, entry) in servers.iter_mut() {
        let name = name.get().to_string();
        let Some(t) = entry.as_table_like_mut() else {
            done.push(Done::Skipped(name, "not a table"));
            continue;
        };
        let command = t.get("command").and_then(|c| c.as_str()).map(String::from);
        let args = match t.get("args") {
            None => None,
            Some(a) => match a.as_array() {
                Some(a) if a.iter().all(|v| v.as_str().is_some()) => Some(
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect(),
                ),
                _ => {
                    done.push(Done::Skipped(name, "its args are not a list of strings"));
                    continue;
                }
            },
        };
        match rewrite_one(&name, command.as_deref(), args, exe, policy, add) {
            Ok(Some((command, args))) => {
                set(t, "command", command.into());
                if args.is_empty() {
                    t.remove("args");
                } else {
                    let array: toml_edit::Array = args.iter().map(String::as_str).collect();
                    set(t, "args", array.into());
                }
                done.push(if add {
                    Done::Wrapped(name)
                } else {
                    Done::Restored(name)
                });
            }
            Ok(None) => {}
            Err(why) if add => done.push(Done::Skipped(name, why)),
            Err(_) => {}
        }
    }
    done
}

/// Sets `key` to `value`, keeping the comments and spacing around the old value.
fn set(t: &mut dyn toml_edit::TableLike, key: &str, mut value: toml_edit::Value) {
    match t.get_mut(key).and_then(toml_edit::Item::as_value_mut) {
        Some(old) => {
            *value.decor_mut() = old.decor().clone();
            *old = value;
        }
        None => {
            t.insert(key, toml_edit::Item::Value(value));
        }
    }
}

/// `cordon install|uninstall HOST --mcp`.
pub fn run(host: Host, scope: Scope, policy: Option<&Path>, add: bool) -> Exit {
    let cwd = crate::current_dir()?;
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (anchor, rel) = place(host, scope, &cwd, &var)?;
    let file = anchor.join(&rel);
    let shown = crate::term::clean(&file.display().to_string());
    let exe = std::env::current_exe()
        .map_err(|e| Error::failure(format!("cannot find the cordon binary: {e}")))?;
    let exe = exe
        .to_str()
        .ok_or_else(|| Error::failure("the cordon binary's path is not UTF-8"))?;
    let policy = policy
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Error::failure(format!("--policy: {e}")))?;
    let policy = match &policy {
        Some(p) => Some(
            p.to_str()
                .ok_or_else(|| Error::failure("--policy: the path is not UTF-8"))?,
        ),
        None => None,
    };
    let text = cordon_fs::safe::read(&anchor, &rel, MAX_FILE)
        .map_err(|e| Error::failure(e.to_string()))?;
    let Some(text) = text else {
        println!("{shown}: no such file; no MCP servers to wrap");
        if host == Host::Claude && scope == Scope::Project {
            return claude_local(&cwd, &var, exe, policy, add);
        }
        return Ok(0);
    };
    let text = String::from_utf8(text)
        .map_err(|_| Error::failure(format!("{shown} is not UTF-8 text")))?;
    let (done, out) = if host == Host::Codex {
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| {
            Error::failure(format!("{shown} is not valid TOML ({e}); fix it first"))
        })?;
        let done = rewrite_toml(&mut doc, exe, policy, add);
        (done, doc.to_string())
    } else {
        let mut config: Value = serde_json::from_str(&text).map_err(|e| {
            Error::failure(format!("{shown} is not valid JSON ({e}); fix it first"))
        })?;
        if !config.is_object() {
            return Err(Error::failure(format!(
                "{shown} does not hold a JSON object"
            )));
        }
        let tables = match (host, scope) {
            (Host::Claude, Scope::User) => Tables::TopAndProjects,
            _ => Tables::Top,
        };
        let done = rewrite_tables(&mut config, &tables, exe, policy, add);
        let mut out =
            serde_json::to_string_pretty(&config).map_err(|e| Error::failure(e.to_string()))?;
        out.push('\n');
        (done, out)
    };
    report_edit(&anchor, &rel, &text, &out, &done)?;
    // A project's servers in Claude's own file too: its "local" ones.
    if host == Host::Claude && scope == Scope::Project {
        claude_local(&cwd, &var, exe, policy, add)?;
    }
    Ok(0)
}

/// Writes the edit (when something changed) and then says what became of each entry.
fn report_edit(anchor: &Path, rel: &Path, text: &str, out: &str, done: &[Done]) -> Exit {
    let file = anchor.join(rel);
    let shown = crate::term::clean(&file.display().to_string());
    let changed = done
        .iter()
        .any(|d| matches!(d, Done::Wrapped(_) | Done::Restored(_)));
    // Written before anything is reported: a refused write (a planted link at the backup,
    // say) must not leave "now runs under" on the screen for an entry that does not.
    if changed {
        crate::install::write_with_backup(anchor, rel, Some(text), out)?;
    }
    for d in done {
        let line = match d {
            Done::Wrapped(n) => format!("{n}: now runs under `cordon mcp wrap`"),
            Done::Restored(n) => format!("{n}: restored to its own command"),
            Done::Skipped(n, why) => format!("{n}: {why}"),
        };
        println!("{shown}: {}", crate::term::clean(&line));
    }
    if !changed {
        println!("{shown}: nothing changed");
        return Ok(0);
    }
    println!(
        "backup: {}",
        crate::term::clean(&backup_name(&file).display().to_string())
    );
    Ok(0)
}

/// Claude Code's servers for the project `cwd` kept in `~/.claude.json`
/// (`projects.PATH.mcpServers`, PATH being the directory as given or resolved).
fn claude_local(
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Exit {
    let (anchor, rel) = place(Host::Claude, Scope::User, cwd, var)?;
    let shown = crate::term::clean(&anchor.join(&rel).display().to_string());
    let Some(text) = cordon_fs::safe::read(&anchor, &rel, MAX_FILE)
        .map_err(|e| Error::failure(e.to_string()))?
    else {
        return Ok(0);
    };
    let text = String::from_utf8(text)
        .map_err(|_| Error::failure(format!("{shown} is not UTF-8 text")))?;
    let mut config: Value = serde_json::from_str(&text)
        .map_err(|e| Error::failure(format!("{shown} is not valid JSON ({e}); fix it first")))?;
    let mut paths = vec![cwd.to_string_lossy().into_owned()];
    if let Ok(real) = std::fs::canonicalize(cwd) {
        paths.push(real.to_string_lossy().into_owned());
    }
    let done = rewrite_tables(&mut config, &Tables::Projects(paths), exe, policy, add);
    if done.is_empty() {
        // No entry for this project there: nothing to say about a file the user never named.
        return Ok(0);
    }
    let mut out =
        serde_json::to_string_pretty(&config).map_err(|e| Error::failure(e.to_string()))?;
    out.push('\n');
    report_edit(&anchor, &rel, &text, &out, &done)
}

/// `cordon doctor`'s lines: per host and scope, which MCP servers run wrapped.
pub fn report(cwd: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut lines = Vec::new();
    for host in Host::all() {
        for scope in [Scope::Project, Scope::User] {
            let Ok((anchor, rel)) = place(host, scope, cwd, var) else {
                continue;
            };
            let shown = crate::term::clean(&anchor.join(&rel).display().to_string());
            let servers = match cordon_fs::safe::read(&anchor, &rel, MAX_FILE) {
                Ok(None) => continue,
                Err(e) => {
                    lines.push(format!("  {shown}: {}", crate::term::clean(&e.to_string())));
                    continue;
                }
                Ok(Some(b)) if host == Host::Codex => {
                    match String::from_utf8_lossy(&b).parse::<toml_edit::DocumentMut>() {
                        Ok(doc) => Some(codex_servers(&doc)),
                        Err(_) => {
                            lines.push(format!("  {shown}: not valid TOML"));
                            continue;
                        }
                    }
                }
                Ok(Some(b)) => match serde_json::from_slice::<Value>(&b) {
                    Ok(v) => Some(json_servers(&v)),
                    Err(_) => {
                        lines.push(format!("  {shown}: not valid JSON"));
                        continue;
                    }
                },
            };
            for (name, entry) in servers.unwrap_or_else(Map::new) {
                let state = if wrapped_tail(&entry).is_some() {
                    "wrapped (cordon mcp wrap)"
                } else if entry.get("command").is_some() {
                    "NOT wrapped (cordon install --mcp wraps it)"
                } else {
                    "remote (not a stdio server; not wrapped)"
                };
                lines.push(format!(
                    "  {:<12} {shown}: {}: {state}",
                    host.client(),
                    crate::term::clean(&name)
                ));
            }
        }
    }
    lines
}

/// The servers of a JSON host's file: its `mcpServers`, and (Claude's `~/.claude.json`) each
/// project's, named `NAME (project PATH)`.
fn json_servers(config: &Value) -> Map<String, Value> {
    let mut out = config
        .get("mcpServers")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let projects = config.get("projects").and_then(Value::as_object);
    for (path, project) in projects.into_iter().flatten() {
        let servers = project.get("mcpServers").and_then(Value::as_object);
        for (name, entry) in servers.into_iter().flatten() {
            out.insert(format!("{name} (project {path})"), entry.clone());
        }
    }
    out
}

/// Codex's servers as the JSON hosts' entries (`command`, `args`, `url`), for the report.
fn codex_servers(doc: &toml_edit::DocumentMut) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(servers) = doc
        .get("mcp_servers")
        .and_then(toml_edit::Item::as_table_like)
    else {
        return out;
    };
    for (name, entry) in servers.iter() {
        let Some(t) = entry.as_table_like() else {
            continue;
        };
        let mut v = Map::new();
        for key in ["command", "url"] {
            if let Some(s) = t.get(key).and_then(|c| c.as_str()) {
                v.insert(key.into(), s.into());
            }
        }
        if let Some(a) = t.get("args").and_then(|a| a.as_array()) {
            let args: Vec<Value> = a
                .iter()
                .filter_map(|x| x.as_str())
                .map(Value::from)
                .collect();
            v.insert("args".into(), Value::Array(args));
        }
        out.insert(name.to_string(), Value::Object(v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrapping_is_idempotent_and_uninstall_restores_exactly() {
        let original = json!({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/"], "env": {"A": "1"}},
            "bare": {"command": "srv"},
            "remote": {"url": "https://mcp.example.org/sse"},
            "a/b": {"command": "x"},
        }, "other": 1});
        let mut c = original.clone();
        let done = rewrite(&mut c, "/usr/bin/cordon", Some("/p/cordon.toml"), true);
        assert!(done.contains(&Done::Wrapped("fs".into())), "{done:?}");
        assert_eq!(
            c["mcpServers"]["fs"],
            json!({"command": "/usr/bin/cordon", "args": ["mcp", "wrap", "--policy", "/p/cordon.toml", "--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"], "env": {"A": "1"}})
        );
        assert_eq!(c["mcpServers"]["remote"], original["mcpServers"]["remote"]);
        assert_eq!(c["mcpServers"]["a/b"], original["mcpServers"]["a/b"]);
        let again = c.clone();
        let done = rewrite(&mut c, "/usr/bin/cordon", Some("/p/cordon.toml"), true);
        assert!(
            !done.iter().any(|d| matches!(d, Done::Wrapped(_))),
            "{done:?}"
        );
        assert_eq!(c, again);
        rewrite(&mut c, "/usr/bin/cordon", None, false);
        assert_eq!(c, original);
    }
}

#[cfg(test)]
mod toml_tests {
    use super::*;

    const ORIGINAL: &str = "# my servers\nmodel = \"x\"\n\n[mcp_servers.fs]\n# the filesystem one\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/\"]\nenv = { A = \"1\" }\n\n[mcp_servers.remote]\nurl = \"https://mcp.example.org/mcp\"\n";

    #[test]
    fn codex_servers_are_wrapped_keeping_comments_and_restored() {
        let mut doc: toml_edit::DocumentMut = ORIGINAL.parse().unwrap();
        let done = rewrite_toml(&mut doc, "/usr/bin/cordon", None, true);
        assert_eq!(done[0], Done::Wrapped("fs".into()), "{done:?}");
        let text = doc.to_string();
        assert!(text.contains("# the filesystem one"), "{text}");
        assert!(text.contains("command = \"/usr/bin/cordon\""), "{text}");
        assert!(
            text.contains("\"--name\", \"fs\", \"--\", \"npx\", \"-y\""),
            "{text}"
        );
        assert!(text.contains("env = { A = \"1\" }"), "{text}");
        let mut again: toml_edit::DocumentMut = text.parse().unwrap();
        assert!(!rewrite_toml(&mut again, "/usr/bin/cordon", None, true)
            .iter()
            .any(|d| matches!(d, Done::Wrapped(_))));
        rewrite_toml(&mut doc, "/usr/bin/cordon", None, false);
        let servers = codex_servers(&doc);
        let want = codex_servers(&ORIGINAL.parse().unwrap());
        assert_eq!(servers, want);
        assert!(doc.to_string().contains("# the filesystem one"));
    }
}
