//! Gemini CLI's folder trust, read the way Gemini CLI 0.61 reads it (its
//! `packages/core/src/utils/trust.ts` and `packages/cli/src/config/{settings,trustedFolders}.ts`):
//!
//! - `GEMINI_RESTRICTED_MODE=true` or `GEMINI_CLI_TRUST_WORKSPACE=false` → untrusted;
//!   `GEMINI_CLI_TRUST_WORKSPACE=true` → trusted (what `--skip-trust` sets, but only after the
//!   settings were loaded: the project's settings, and so its hooks, are already dropped).
//! - `security.folderTrust.enabled` (system-defaults, user, then system settings; default
//!   `true`): when `false` every folder is trusted.
//! - Else the trust file (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else
//!   `~/.gemini/trustedFolders.json`): `{ "PATH": "TRUST_FOLDER" | "TRUST_PARENT" |
//!   "DO_NOT_TRUST" }`. Of the rules whose folder (the parent of PATH for `TRUST_PARENT`)
//!   contains the project (both resolved through links), the longest PATH wins; no rule means
//!   untrusted.
//!
//! An untrusted folder's `.gemini/settings.json` is not loaded at all: its hooks never run, and
//! headless Gemini refuses to start there unless given `--skip-trust`, which then runs without
//! them. User settings (`~/.gemini/settings.json`) are loaded in every folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Error;

/// Whether Gemini CLI trusts a folder, and why (one clause, for a person).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    Trusted(String),
    Untrusted(String),
    /// The trust file or settings could not be read: Gemini itself refuses to start then.
    Unknown(String),
}

/// The trust file Gemini CLI reads.
pub fn trust_file(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = var("GEMINI_CLI_TRUSTED_FOLDERS_PATH") {
        return Some(PathBuf::from(p));
    }
    var("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".gemini/trustedFolders.json"))
}

/// A JSON file as Gemini reads it (`None`: absent). Gemini strips comments first; cordon does
/// not, so a file with comments is reported as unreadable rather than guessed at.
fn read_json(path: &Path) -> Result<Option<Value>, Error> {
    // (Never blocking on a FIFO left at the name.)
    match cordon_fs::safe::read_followed(path, 64 << 20) {
        Ok(None) => Ok(None),
        Err(e) => Err(Error::failure(format!("cannot read {e}"))),
        Ok(Some(t)) if t.trim_ascii().is_empty() => Ok(None),
        Ok(Some(t)) => serde_json::from_slice(&t)
            .map(Some)
            .map_err(|e| Error::failure(format!("cannot parse {} ({e})", path.display()))),
    }
}

/// `security.folderTrust.enabled` as Gemini merges it (system settings override user settings,
/// which override the system defaults); `true` when nobody sets it.
fn folder_trust_enabled(var: &dyn Fn(&str) -> Option<String>) -> Result<bool, Error> {
    let system = var("GEMINI_CLI_SYSTEM_SETTINGS_PATH").map_or_else(
        || PathBuf::from("/etc/gemini-cli/settings.json"),
        PathBuf::from,
    );
    let defaults = system.with_file_name("system-defaults.json");
    let user = var("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".gemini/settings.json"));
    let mut enabled = true;
    for file in [Some(defaults), user, Some(system)].into_iter().flatten() {
        if let Some(v) = read_json(&file)? {
            if let Some(b) = v["security"]["folderTrust"]["enabled"].as_bool() {
                enabled = b;
            }
        }
    }
    Ok(enabled)
}

/// Whether Gemini CLI, started in `folder` with this environment, trusts it.
pub fn folder(folder: &Path, var: &dyn Fn(&str) -> Option<String>) -> Trust {
    if var("GEMINI_RESTRICTED_MODE").as_deref() == Some("true") {
        return Trust::Untrusted("GEMINI_RESTRICTED_MODE=true is set".into());
    }
    match var("GEMINI_CLI_TRUST_WORKSPACE").as_deref() {
        Some("false") => return Trust::Untrusted("GEMINI_CLI_TRUST_WORKSPACE=false is set".into()),
        Some("true") => return Trust::Trusted("GEMINI_CLI_TRUST_WORKSPACE=true is set".into()),
        _ => {}
    }
    match folder_trust_enabled(var) {
        Err(e) => return Trust::Unknown(e.to_string()),
        Ok(false) => {
            return Trust::Trusted(
                "folder trust is off (security.folderTrust.enabled = false)".into(),
            )
        }
        Ok(true) => {}
    }
    let Some(file) = trust_file(var) else {
        return Trust::Unknown("HOME is not set to an absolute path".into());
    };
    let rules = match read_json(&file) {
        Err(e) => return Trust::Unknown(e.to_string()),
        Ok(None) => {
            return Trust::Untrusted(format!("{} does not exist", file.display()));
        }
        Ok(Some(Value::Object(m))) => m,
        Ok(Some(_)) => {
            return Trust::Unknown(format!("{} is not a JSON object", file.display()));
        }
    };
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let here = real(folder);
    let mut best: Option<(&str, &str)> = None;
    for (path, level) in &rules {
        let Some(level) = level.as_str() else {
            return Trust::Unknown(format!(
                "{}: the rule for {path} is not a string",
                file.display()
            ));
        };
        let rule = Path::new(path);
        let scope = match level {
            "TRUST_PARENT" => rule.parent().unwrap_or(rule),
            "TRUST_FOLDER" | "DO_NOT_TRUST" => rule,
            other => {
                return Trust::Unknown(format!(
                    "{}: unknown trust level {other:?} for {path}",
                    file.display()
                ))
            }
        };
        if here.starts_with(real(scope)) && best.is_none_or(|(p, _)| path.len() > p.len()) {
            best = Some((path, level));
        }
    }
    match best {
        Some((path, "DO_NOT_TRUST")) => {
            Trust::Untrusted(format!("{} marks {path} DO_NOT_TRUST", file.display()))
        }
        Some((path, level)) => Trust::Trusted(format!("{} marks {path} {level}", file.display())),
        None => Trust::Untrusted(format!("no rule in {} covers it", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trust(home: &Path, folder: &Path, rules: Value) -> Trust {
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(home.join(".gemini/trustedFolders.json"), rules.to_string()).unwrap();
        let h = home.to_str().unwrap().to_string();
        let sys = home.join("no-system.json").to_str().unwrap().to_string();
        super::folder(folder, &move |k| match k {
            "HOME" => Some(h.clone()),
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => Some(sys.clone()),
            _ => None,
        })
    }

    /// A FIFO at a settings file is unreadable at once, not waited on.
    #[test]
    fn a_fifo_at_a_settings_file_is_not_waited_on() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("settings.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(read_json(&fifo).is_err()));
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("reading a FIFO blocked");
        assert!(refused);
    }

    #[test]
    fn the_longest_rule_wins_and_parent_means_the_parent() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let proj = root.join("a/proj");
        std::fs::create_dir_all(&proj).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let r = |v: Value| trust(&root, &proj, v);
        assert!(matches!(r(serde_json::json!({})), Trust::Untrusted(_)));
        assert!(matches!(
            r(serde_json::json!({ s(&proj): "TRUST_FOLDER" })),
            Trust::Trusted(_)
        ));
        // TRUST_PARENT of a sibling trusts the parent, so the project too.
        assert!(matches!(
            r(serde_json::json!({ s(&root.join("a/other")): "TRUST_PARENT" })),
            Trust::Trusted(_)
        ));
        // A longer DO_NOT_TRUST under a trusted parent wins.
        assert!(matches!(
            r(serde_json::json!({ s(&root.join("a")): "TRUST_FOLDER", s(&proj): "DO_NOT_TRUST" })),
            Trust::Untrusted(_)
        ));
        // A sibling's TRUST_FOLDER covers nothing here.
        assert!(matches!(
            r(serde_json::json!({ s(&root.join("a/projx")): "TRUST_FOLDER" })),
            Trust::Untrusted(_)
        ));
        assert!(matches!(
            r(serde_json::json!({ s(&proj): "MAYBE" })),
            Trust::Unknown(_)
        ));
    }
}
