//! Who sandboxes the commands cordon allows under Codex: Codex's own sandbox with cordon's
//! inside it, or cordon alone. Written to Codex's `config.toml` next to the `hooks.json`
//! install wrote (the project's `.codex/config.toml`, or `$CODEX_HOME/config.toml`), which
//! Codex reads for a trusted project.
//!
//! Codex's `workspace-write` sandbox (its default for a trusted project, `--full-auto`) runs
//! every command, cordon's rewritten `cordon exec` included, in a user namespace with no
//! capabilities, a seccomp filter refusing inet and netlink sockets, and everything but the
//! project and /tmp read-only. As an unprivileged user cordon stacks its own sandbox inside
//! (bubblewrap in Codex's network namespace; see `cordon_ossandbox::Outer`), and only needs
//! one directory of its own writable: install adds `LOGDIR/codex`
//! ([`cordon_policy::CODEX_STATE_DIR`]) to `sandbox_workspace_write.writable_roots`, where the
//! runs Codex's hook rewrites (`cordon exec --state codex`) keep their audit log and scans.
//! Never the log's own directory: everything Codex runs without cordon (a `!` command, an MCP
//! server, a call whose hook timed out) writes what Codex's sandbox lets it, and there lie the
//! hook's log, the scans every other run acts on, sessions and host grants. As
//! root Codex's sandbox leaves cordon no capabilities, so bubblewrap cannot start and the
//! protected paths (cordon.rules.toml, .git's configuration) cannot be kept: install hands the
//! sandboxing to cordon (`sandbox_mode = "danger-full-access"`) and says what that costs.

use std::path::{Path, PathBuf};

use toml_edit::{value, Array, DocumentMut, Item, Table};

use crate::Error;

/// `cordon install codex --sandbox WHO`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Sandbox {
    /// Codex's sandbox stays on with cordon's inside, except as root, where it is handed to
    /// cordon (Codex's sandbox leaves root no capabilities to build cordon's).
    Auto,
    /// Keep Codex's sandbox on; cordon runs inside it and adds its own.
    Codex,
    /// Turn Codex's sandbox off in its config (`sandbox_mode = "danger-full-access"`):
    /// cordon alone confines what it allows.
    Cordon,
}

impl Sandbox {
    /// `auto` decided for the user running install (who runs Codex).
    pub fn resolve(self) -> Sandbox {
        match self {
            Sandbox::Auto if rustix::process::geteuid().is_root() => Sandbox::Cordon,
            Sandbox::Auto => Sandbox::Codex,
            s => s,
        }
    }
}

/// The comment on the `sandbox_mode` install writes: uninstall removes only a marked one.
const MARK: &str = "# cordon install codex --sandbox cordon: cordon confines every command it allows; Codex's own sandbox is off";

/// Codex's config file beside `hooks` (the hooks.json path relative to `anchor`).
fn config_rel(hooks: &Path) -> PathBuf {
    hooks.with_file_name("config.toml")
}

const MAX_CONFIG: u64 = 1 << 20;

fn read(anchor: &Path, rel: &Path) -> Result<(DocumentMut, Option<String>), Error> {
    let text = match cordon_fs::safe::read(anchor, rel, MAX_CONFIG) {
        Ok(None) => None,
        Ok(Some(b)) => Some(String::from_utf8(b).map_err(|_| {
            Error::failure(format!("{} is not UTF-8 text", anchor.join(rel).display()))
        })?),
        Err(e) => return Err(Error::failure(e)),
    };
    let doc = text
        .as_deref()
        .unwrap_or("")
        .parse::<DocumentMut>()
        .map_err(|e| {
            Error::failure(format!(
                "{} is not valid TOML: {e}",
                anchor.join(rel).display()
            ))
        })?;
    Ok((doc, text))
}

/// The directory `cordon exec` writes inside Codex's sandbox: `LOGDIR/codex` beside the audit
/// log `policy` records to (see the module's documentation), when it lies outside the project
/// (inside, it is writable already).
pub fn audit_dir(policy: Option<&Path>, cwd: &Path) -> Result<Option<PathBuf>, Error> {
    let policy = cordon_policy::Policy::discover(policy, cwd).map_err(Error::failure)?;
    let Some(log) = policy.approval.audit_log.path() else {
        return Ok(None);
    };
    Ok(log
        .parent()
        .filter(|d| !d.starts_with(cwd))
        .map(|d| d.join(cordon_policy::CODEX_STATE_DIR)))
}

/// Writes (`add`) or removes cordon's part of Codex's config beside the hooks file
/// `anchor/hooks`; returns what to print.
pub fn apply(
    anchor: &Path,
    hooks: &Path,
    who: Sandbox,
    audit_dir: Option<&Path>,
    add: bool,
) -> Result<Vec<String>, Error> {
    let rel = config_rel(hooks);
    let shown = crate::term::clean(&anchor.join(&rel).display().to_string());
    let (mut doc, old) = read(anchor, &rel)?;
    let mut said = Vec::new();
    let ours = |doc: &DocumentMut| {
        doc.as_table()
            .key("sandbox_mode")
            .and_then(|k| k.leaf_decor().prefix())
            .and_then(|p| p.as_str())
            .is_some_and(|p| p.contains(MARK))
    };
    let dir = audit_dir.map(|d| d.to_string_lossy().into_owned());
    // What install wrote before the state apart: the log's own directory, which an upgrade
    // must take out of Codex's reach.
    let before = audit_dir
        .and_then(Path::parent)
        .map(|d| d.to_string_lossy().into_owned());
    // cordon's writable root for its state, and a sandbox_mode it wrote, go first.
    if ours(&doc) {
        doc.remove("sandbox_mode");
    }
    if let (Some(dir), Some(t)) = (
        &dir,
        doc.get_mut("sandbox_workspace_write")
            .and_then(Item::as_table_mut),
    ) {
        if let Some(roots) = t.get_mut("writable_roots").and_then(Item::as_array_mut) {
            roots.retain(|v| v.as_str() != Some(dir) && v.as_str() != before.as_deref());
            if roots.is_empty() {
                t.remove("writable_roots");
            }
        }
        if t.is_empty() {
            doc.remove("sandbox_workspace_write");
        }
    }
    if add {
        match who.resolve() {
            Sandbox::Cordon => {
                doc["sandbox_mode"] = value("danger-full-access");
                if let Some(mut key) = doc.key_mut("sandbox_mode") {
                    key.leaf_decor_mut().set_prefix(format!("{MARK}\n"));
                }
                said.push(format!(
                    "{shown}: sandbox_mode = \"danger-full-access\": Codex's own sandbox is OFF and cordon confines every shell command Codex runs through the hook; what the hook does not see (a skipped or timed-out hook, Codex's MCP servers, a user's own `!` command) runs unconfined"
                ));
            }
            _ => {
                if let Some(dir) = &dir {
                    let t = doc
                        .entry("sandbox_workspace_write")
                        .or_insert_with(|| Item::Table(Table::new()))
                        .as_table_mut()
                        .ok_or_else(|| {
                            Error::failure("`sandbox_workspace_write` is not a table")
                        })?;
                    let roots = t
                        .entry("writable_roots")
                        .or_insert_with(|| value(Array::new()))
                        .as_array_mut()
                        .ok_or_else(|| {
                            Error::failure("`sandbox_workspace_write.writable_roots` is not a list")
                        })?;
                    roots.push(dir.as_str());
                    create_dir(Path::new(dir))?;
                }
                said.push(format!(
                    "{shown}: Codex's sandbox stays on and cordon runs inside it, adding its own{}",
                    dir.as_ref().map_or(String::new(), |d| format!(
                        " (sandbox_workspace_write.writable_roots += {}, where the runs Codex starts keep cordon's state apart from the hook's; cordon hides it from the commands it runs)",
                        crate::term::clean(d)
                    ))
                ));
            }
        }
    }
    let text = doc.to_string();
    if old.as_deref().unwrap_or("") == text {
        return Ok(said);
    }
    // The one link-safe writer of a host's file, with the backup of what was there.
    crate::install::write_with_backup(anchor, &rel, old.as_deref(), &text)?;
    Ok(said)
}

/// Creates the audit log's directory (Codex binds a writable root only if it exists), from
/// its nearest existing ancestor, without following a link below that.
fn create_dir(dir: &Path) -> Result<(), Error> {
    let base = dir
        .ancestors()
        .find(|a| a.exists())
        .ok_or_else(|| Error::failure(format!("{}: no part of it exists", dir.display())))?;
    let rest = dir.strip_prefix(base).map_err(Error::failure)?;
    if rest.as_os_str().is_empty() {
        return Ok(());
    }
    cordon_fs::safe::Dir::anchor(base)
        .and_then(|d| d.create_dirs(rest, 0o700))
        .map(drop)
        .map_err(|e| Error::failure(format!("cannot create {}: {e}", dir.display())))
}

/// `cordon doctor`'s words on Codex's sandbox, from the config beside the hooks file.
pub fn report(anchor: &Path, hooks: &Path) -> String {
    let rel = config_rel(hooks);
    match read(anchor, &rel) {
        Err(e) => format!("; Codex's sandbox: UNKNOWN ({e})"),
        Ok((doc, _)) => {
            let mode = match doc.get("sandbox_mode").and_then(Item::as_str) {
                Some("danger-full-access") => "; Codex's sandbox: OFF here (sandbox_mode = \"danger-full-access\"): cordon alone confines what the hook allows, and what the hook does not see runs unconfined".into(),
                Some(m) => format!("; Codex's sandbox: {} here, cordon runs inside it", crate::term::clean(m)),
                None => "; Codex's sandbox: Codex's default here (workspace-write for a trusted project), cordon runs inside it".into(),
            };
            mode + &state_exposed(&doc)
        }
    }
}

/// An install from before the state apart made the log's own directory a writable root,
/// where what Codex runs without cordon can rewrite the hook's log and the scans' markers:
/// doctor names it and the step that takes it away. Known by what it holds (an audit log)
/// and its name (not the directory apart).
fn state_exposed(doc: &DocumentMut) -> String {
    let roots = doc
        .get("sandbox_workspace_write")
        .and_then(|t| t.get("writable_roots"))
        .and_then(Item::as_array);
    let exposed = roots
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(Path::new))
        .find(|r| {
            r.file_name() != Some(cordon_policy::CODEX_STATE_DIR.as_ref())
                && r.join("audit.jsonl").is_file()
        });
    match exposed {
        Some(r) => format!(
            "; EXPOSED: Codex's sandbox makes cordon's state {} writable to what Codex runs without cordon (an install from before the state apart): run `cordon install codex` again",
            crate::term::clean(&r.display().to_string())
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An install from before the state apart made the log's own directory writable in
    /// Codex's sandbox: a new install replaces it with the directory apart, and uninstall
    /// takes both away; the operator's own roots stay.
    #[test]
    fn install_takes_the_logs_own_directory_out_of_codexs_writable_roots() {
        let d = tempfile::tempdir().unwrap();
        let logdir = d.path().join("state/cordon");
        let apart = logdir.join(cordon_policy::CODEX_STATE_DIR);
        std::fs::create_dir_all(d.path().join(".codex")).unwrap();
        let config = d.path().join(".codex/config.toml");
        std::fs::write(
            &config,
            format!(
                "[sandbox_workspace_write]\nwritable_roots = [\"{}\", \"/mine\"]\n",
                logdir.display()
            ),
        )
        .unwrap();
        let hooks = Path::new(".codex/hooks.json");
        let roots = || {
            let doc: DocumentMut = std::fs::read_to_string(&config).unwrap().parse().unwrap();
            doc.get("sandbox_workspace_write")
                .and_then(|t| t.get("writable_roots"))
                .and_then(Item::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().unwrap().to_string())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        apply(d.path(), hooks, Sandbox::Codex, Some(&apart), true).unwrap();
        assert_eq!(roots(), ["/mine".to_string(), apart.display().to_string()]);
        assert!(apart.is_dir());
        apply(d.path(), hooks, Sandbox::Codex, Some(&apart), false).unwrap();
        assert_eq!(roots(), ["/mine".to_string()]);
    }

    /// doctor names an old install's exposed state directory, and is quiet after a new one.
    #[test]
    fn doctor_names_the_logs_own_directory_as_a_writable_root() {
        let d = tempfile::tempdir().unwrap();
        let logdir = d.path().join("state/cordon");
        let apart = logdir.join(cordon_policy::CODEX_STATE_DIR);
        std::fs::create_dir_all(&apart).unwrap();
        std::fs::write(logdir.join("audit.jsonl"), "").unwrap();
        std::fs::write(apart.join("audit.jsonl"), "").unwrap();
        std::fs::create_dir_all(d.path().join(".codex")).unwrap();
        let config = d.path().join(".codex/config.toml");
        let hooks = Path::new(".codex/hooks.json");
        let with = |root: &Path| {
            std::fs::write(
                &config,
                format!(
                    "[sandbox_workspace_write]\nwritable_roots = [\"/mine\", \"{}\"]\n",
                    root.display()
                ),
            )
            .unwrap();
            report(d.path(), hooks)
        };
        let old = with(&logdir);
        assert!(
            old.contains("EXPOSED") && old.contains(&logdir.display().to_string()),
            "{old}"
        );
        let new = with(&apart);
        assert!(!new.contains("EXPOSED"), "{new}");
    }
}
