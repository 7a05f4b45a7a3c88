//! Host grants: a host's user approved one exact call, and the `cordon exec` the hook wrote
//! for it may run it once. `cordon hook` issues them ([`issue`]); `cordon exec --host-grant`
//! consumes them ([`consume`]) and decides with an asker that answers "once".
//!
//! When the rules ask and the host can put the question to its user (Claude Code's `ask`),
//! the hook records a grant — the exact line, the directory it runs in, the policy's hash and
//! the host — under a random id, and rewrites the command to `cordon exec --host-grant ID`.
//! The user approves or declines in the host; if the command runs, `exec` consumes the grant
//! (it is deleted before the command starts), checks that everything matches, and records the
//! call as approved by the user. A grant is never issued for a deny, expires after
//! [`LIFETIME`], and is used at most once.
//!
//! Grants live beside the sessions (`$XDG_RUNTIME_DIR/cordon/host-grants`, else
//! `~/.local/state/cordon/host-grants`), a 0700 directory that must lie outside every root of
//! the policy, so the sandboxed command can neither read nor forge one; each grant is also
//! pinned in the operator's trust store, so one written by anything else is refused.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cordon_policy::trust::{FileText, Pinned, TrustStore};
use cordon_policy::Policy;

use crate::Error;
use serde_json::{json, Value};

/// How long a grant waits for the host's user to answer.
pub const LIFETIME: Duration = Duration::from_secs(15 * 60);

/// The grants' directory.
pub fn dir() -> Result<PathBuf, Error> {
    let sessions = crate::session::dir().map_err(Error::failure)?;
    Ok(sessions.with_file_name("host-grants"))
}

/// The policy's identity in a grant: the hash of its file, or the embedded default's name.
fn policy_id(policy: &Policy) -> String {
    match &policy.path {
        Some(p) => match cordon_policy::trust::read_file(p, cordon_policy::trust::Follow::Never) {
            Ok(f) => f.sha256(),
            Err(_) => format!("unreadable:{}", p.display()),
        },
        None => policy.source.clone(),
    }
}

/// Every root of the policy (read or write) and its extra read paths: the grant directory
/// must lie outside all of them.
fn roots(policy: &Policy) -> Vec<PathBuf> {
    let mut r: Vec<PathBuf> = policy
        .sandbox
        .paths
        .iter()
        .map(|p| p.root.clone())
        .collect();
    r.extend(policy.sandbox.extra_read.iter().cloned());
    r
}

/// The grant directory, created 0700, checked to be out of the sandbox's reach.
fn open_dir(policy: &Policy) -> Result<PathBuf, Error> {
    let d = dir()?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .map_err(|e| Error::failure(format!("host grant directory {}: {e}", d.display())))?;
    let real = std::fs::canonicalize(&d)
        .map_err(|e| Error::failure(format!("host grant directory {}: {e}", d.display())))?;
    for root in roots(policy) {
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        if real.starts_with(&root) {
            return Err(Error::failure(format!(
                "host grant directory {} lies in {}, which the sandboxed command can reach: set XDG_RUNTIME_DIR elsewhere",
                real.display(),
                root.display()
            )));
        }
    }
    Ok(real)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Records a grant for running `line` in `cwd` under `policy` once; returns its id.
pub fn issue(
    policy: &Policy,
    policy_file: Option<&Path>,
    cwd: &Path,
    line: &str,
    host: &str,
) -> Result<String, Error> {
    let dir = open_dir(policy)?;
    let id = cordon_approval::audit::new_id()
        .map_err(|e| Error::failure(format!("no random id: {e}")))?;
    let text = format!(
        "{}\n",
        json!({
            "v": 1,
            "host": host,
            "line": line,
            "cwd": cwd,
            "policy": policy_id(policy),
            "policy_file": policy_file,
            "expires": now() + LIFETIME.as_secs(),
        })
    );
    let path = dir.join(format!("{id}.json"));
    TrustStore::from_env()
        .trust(&FileText {
            path: path.clone(),
            text: text.clone(),
        })
        .map_err(|e| Error::failure(format!("cannot pin the host grant: {e}")))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| Error::failure(format!("host grant {}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::failure(format!("host grant {}: {e}", path.display())))?;
    Ok(id)
}

/// Consumes grant `id` for running `line` in `cwd` under `policy`: the grant is deleted
/// first, then checked. Returns the host whose user approved.
pub fn consume(id: &str, policy: &Policy, cwd: &Path, line: &str) -> Result<String, Error> {
    // Every way a grant does not hold is a refusal: the call is not run (126).
    let refused = |m: String| Error::Refused(crate::clean(&m));
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused(format!(
            "host grant `{}`: not a grant id",
            crate::clean(id)
        )));
    }
    let dir = open_dir(policy)?;
    let path = dir.join(format!("{id}.json"));
    // Claimed by renaming it away, so two runs cannot both use it; removed after reading.
    let claimed = dir.join(format!(".{id}.used"));
    std::fs::rename(&path, &claimed).map_err(|_| {
        refused(format!(
            "host grant {id}: none such (used, expired or never issued)"
        ))
    })?;
    let read = cordon_policy::trust::read_file(&claimed, cordon_policy::trust::Follow::Never);
    let _ = std::fs::remove_file(&claimed);
    let store = TrustStore::from_env();
    let file = read.map_err(|e| refused(format!("host grant {id}: {e}")))?;
    let pinned = store.check(
        &FileText {
            path: path.clone(),
            text: file.text.clone(),
        },
        Pinned::Session,
    );
    let _ = store.untrust(&path);
    pinned.map_err(|_| refused(format!("host grant {id}: not one cordon issued")))?;
    let v: Value = serde_json::from_str(&file.text)
        .map_err(|e| refused(format!("host grant {id}: damaged ({e})")))?;
    if v["v"] != 1 {
        return Err(refused(format!("host grant {id}: unknown version")));
    }
    if v["expires"].as_u64().is_none_or(|t| t < now()) {
        return Err(refused(format!("host grant {id}: expired")));
    }
    if v["line"].as_str() != Some(line) {
        return Err(refused(format!(
            "host grant {id}: issued for another command"
        )));
    }
    if v["cwd"].as_str().map(Path::new) != Some(cwd) {
        return Err(refused(format!(
            "host grant {id}: issued for another directory"
        )));
    }
    if v["policy"].as_str() != Some(policy_id(policy).as_str()) {
        return Err(refused(format!(
            "host grant {id}: issued under another policy (or the policy changed since)"
        )));
    }
    v["host"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| refused(format!("host grant {id}: names no host")))
}
