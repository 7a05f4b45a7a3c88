//! `cordon install|uninstall HOST --mcp`: each stdio MCP server the host starts is run under
//! `cordon mcp wrap --name NAME -- ORIGINAL_COMMAND ORIGINAL_ARGS…` (docs/mcp.md), and
//! `cordon doctor` lists which are.
//!
//! | host        | project          | user                       | table        |
//! |-------------|------------------|----------------------------|--------------|
//! | Claude Code | `.mcp.json`      | `~/.claude.json`           | `mcpServers` |
//! | Gemini CLI  | `.gemini/settings.json` | `~/.gemini/settings.json` | `mcpServers` |
//! | Codex       | `.codex/config.toml` | `$CODEX_HOME/config.toml` (`~/.codex`) | `[mcp_servers.NAME]` |
//! | Copilot CLI | `.mcp.json`, `.github/mcp.json` | `$COPILOT_HOME/mcp-config.json` (`~/.copilot`) | `mcpServers` |
//! | opencode    | `opencode.json(c)`, `.opencode/opencode.json(c)` | `$XDG_CONFIG_HOME/opencode/{config,opencode}.json(c)` (`~/.config`), and `$OPENCODE_CONFIG_DIR/opencode.json(c)` when set | `mcp` |
//!
//! Copilot CLI and opencode read several files of a scope and merge them: each that exists is
//! rewritten. opencode's local server is `{"type": "local", "command": [C, A…]}`: its
//! `command` list becomes `[CORDON, "mcp", "wrap", …, "--", C, A…]` (`rewrite_opencode`).
//! Files with comments (JSONC, which opencode accepts) are refused, not rewritten without them.
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

/// The files where `host` keeps its MCP servers in `scope`: the directory cordon trusts and
/// the path below it, walked without following a link. Claude Code, Codex and Gemini CLI read
/// one; Copilot CLI and opencode read every one of theirs that exists and merge them.
pub fn places(
    host: Host,
    scope: Scope,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    let abs_var = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = || crate::install::home_of(var);
    let many = |anchor: PathBuf, rels: &[&str]| {
        rels.iter()
            .map(|r| (anchor.clone(), PathBuf::from(r)))
            .collect()
    };
    Ok(match (host, scope) {
        // Copilot CLI 1.0.102: the workspace's `.mcp.json` and `.github/mcp.json` (loaded in a
        // folder it trusts); the user's `mcp-config.json` in its home.
        (Host::Copilot, Scope::Project) => {
            many(cwd.to_path_buf(), &[".mcp.json", ".github/mcp.json"])
        }
        (Host::Copilot, Scope::User) => match abs_var("COPILOT_HOME") {
            Some(h) => many(h, &["mcp-config.json"]),
            None => many(home()?, &[".copilot/mcp-config.json"]),
        },
        // opencode 1.18: `opencode.json(c)` in the project and its `.opencode`; the global
        // `config.json`, `opencode.json`, `opencode.jsonc` in `$XDG_CONFIG_HOME/opencode`.
        (Host::Opencode, Scope::Project) => many(
            cwd.to_path_buf(),
            &[
                "opencode.json",
                "opencode.jsonc",
                ".opencode/opencode.json",
                ".opencode/opencode.jsonc",
            ],
        ),
        // With `OPENCODE_CONFIG_DIR` set, opencode also reads that directory's
        // `opencode.json(c)`, after the global files (so its servers win): read from opencode
        // 1.18.33's `ConfigPaths.directories`, which appends the variable's directory.
        (Host::Opencode, Scope::User) => {
            let (anchor, dir) = match abs_var("XDG_CONFIG_HOME") {
                Some(x) => (x, "opencode"),
                None => (home()?, ".config/opencode"),
            };
            let mut files: Vec<(PathBuf, PathBuf)> =
                ["config.json", "opencode.json", "opencode.jsonc"]
                    .iter()
                    .map(|f| (anchor.clone(), Path::new(dir).join(f)))
                    .collect();
            if let Some(extra) = abs_var("OPENCODE_CONFIG_DIR") {
                files.extend(many(extra, &["opencode.json", "opencode.jsonc"]));
            }
            files
        }
        _ => vec![place(host, scope, cwd, var)?],
    })
}

/// Where Claude Code, Codex or Gemini CLI keeps its MCP servers in `scope` (see [`places`]).
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
                "{} reads several MCP files (install_mcp::places)",
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

/// [`rewrite`] for opencode's `mcp` table: a local server's `command` is one list, program
/// first; remote ones (`type: "remote"`, a `url`) are left alone.
pub fn rewrite_opencode(
    config: &mut Value,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Vec<Done> {
    let mut done = Vec::new();
    let Some(servers) = config.get_mut("mcp").and_then(Value::as_object_mut) else {
        return done;
    };
    for (name, entry) in servers.iter_mut() {
        let Some(obj) = entry.as_object_mut() else {
            if add {
                done.push(Done::Skipped(name.clone(), "not an object"));
            }
            continue;
        };
        if obj.get("type").and_then(Value::as_str) == Some("remote") || obj.contains_key("url") {
            if add {
                done.push(Done::Skipped(
                    name.clone(),
                    "remote (not a stdio server): left as it is",
                ));
            }
            continue;
        }
        let list = match obj.get("command") {
            None => None,
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Some(
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect::<Vec<_>>(),
            ),
            Some(_) => {
                if add {
                    done.push(Done::Skipped(
                        name.clone(),
                        "its command is not a list of strings",
                    ));
                }
                continue;
            }
        };
        let (command, args) = match list {
            Some(l) if !l.is_empty() => (Some(l[0].clone()), Some(l[1..].to_vec())),
            _ => (None, None),
        };
        match rewrite_one(name, command.as_deref(), args, exe, policy, add) {
            Ok(Some((command, args))) => {
                let list: Vec<Value> = std::iter::once(command)
                    .chain(args)
                    .map(Value::String)
                    .collect();
                obj.insert("command".into(), Value::Array(list));
                done.push(if add {
                    Done::Wrapped(name.clone())
                } else {
                    Done::Restored(name.clone())
                });
            }
            Ok(None) => {}
            Err(why) if add => done.push(Done::Skipped(name.clone(), why)),
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
    let files = places(host, scope, &cwd, &var)?;
    if let [(anchor, rel)] = files.as_slice() {
        if !edit_file(host, scope, anchor, rel, exe, policy, add)? {
            let shown = crate::term::clean(&anchor.join(rel).display().to_string());
            println!("{shown}: no such file; no MCP servers to wrap");
        }
    } else {
        let mut any = false;
        for (anchor, rel) in &files {
            any |= edit_file(host, scope, anchor, rel, exe, policy, add)?;
        }
        if !any {
            let looked: Vec<String> = files
                .iter()
                .map(|(a, r)| crate::term::clean(&a.join(r).display().to_string()))
                .collect();
            println!(
                "no MCP configuration file (looked for {}); no MCP servers to wrap",
                looked.join(", ")
            );
        }
    }
    // A project's servers in Claude's own file too: its "local" ones.
    if host == Host::Claude && scope == Scope::Project {
        claude_local(&cwd, &var, exe, policy, add)?;
    }
    Ok(0)
}

/// Wraps (or restores) the servers of one file; `false` when there is no such file.
fn edit_file(
    host: Host,
    scope: Scope,
    anchor: &Path,
    rel: &Path,
    exe: &str,
    policy: Option<&str>,
    add: bool,
) -> Result<bool, Error> {
    let file = anchor.join(rel);
    let shown = crate::term::clean(&file.display().to_string());
    let text = cordon_fs::safe::read(anchor, rel, MAX_FILE).map_err(Error::failure)?;
    let Some(text) = text else {
        return Ok(false);
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
        let mut done = match (host, scope) {
            (Host::Opencode, _) => rewrite_opencode(&mut config, exe, policy, add),
            (Host::Claude, Scope::User) => {
                rewrite_tables(&mut config, &Tables::TopAndProjects, exe, policy, add)
            }
            _ => rewrite_tables(&mut config, &Tables::Top, exe, policy, add),
        };
        // Copilot CLI also takes servers at the top level of `.mcp.json` (no `mcpServers`):
        // never left unwrapped without a word.
        if add && host == Host::Copilot && config.get("mcpServers").is_none() {
            for (name, entry) in config.as_object().into_iter().flatten() {
                if entry.get("command").is_some() {
                    done.push(Done::Skipped(
                        name.clone(),
                        "NOT wrapped: a server outside `mcpServers` (the form without it); move it \
                         under `mcpServers`, then run this again",
                    ));
                }
            }
        }
        let mut out =
            serde_json::to_string_pretty(&config).map_err(|e| Error::failure(e.to_string()))?;
        out.push('\n');
        (done, out)
    };
    report_edit(anchor, rel, &text, &out, &done)?;
    Ok(true)
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
    let hosts = Host::all()
        .into_iter()
        .chain([Host::Copilot, Host::Opencode]);
    for host in hosts {
        for scope in [Scope::Project, Scope::User] {
            let Ok(files) = places(host, scope, cwd, var) else {
                continue;
            };
            for (anchor, rel) in files {
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
                        Ok(v) if host == Host::Opencode => Some(opencode_servers(&v)),
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
    }
    lines
}

/// opencode's servers as the other hosts' entries (`command`, `args`, `url`), for the report.
fn opencode_servers(config: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let servers = config.get("mcp").and_then(Value::as_object);
    for (name, entry) in servers.into_iter().flatten() {
        let mut v = Map::new();
        if let Some(u) = entry.get("url") {
            v.insert("url".into(), u.clone());
        }
        if let Some(Value::Array(c)) = entry.get("command") {
            if let Some((first, rest)) = c.split_first() {
                v.insert("command".into(), first.clone());
                v.insert("args".into(), Value::Array(rest.to_vec()));
            }
        }
        out.insert(name.clone(), Value::Object(v));
    }
    out
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
