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
    let sessions = crate::session::dir()?;
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

/// The grant directory, created 0700, checked to be out of the sandbox's reach and opened
/// without a link at any component cordon made (see `session::open_private_dir`).
fn open_dir(policy: &Policy) -> Result<(cordon_fs::safe::Dir, PathBuf), Error> {
    crate::session::open_private_dir(
        "host-grants",
        "host grant directory",
        &|dir, root| {
            format!(
            "host grant directory {} lies in {}, which the sandboxed command can reach: set XDG_RUNTIME_DIR elsewhere",
            dir.display(),
            root.display()
        )
        },
        &roots(policy),
    )
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
    let (grants, dir) = open_dir(policy)?;
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
    // Created exclusively and synced, never through a link.
    grants
        .create_new(Path::new(&format!("{id}.json")), text.as_bytes(), 0o600)
        .map_err(|e| Error::failure(format!("host grant {e}")))?;
    Ok(id)
}

/// A grant `cordon exec` was given to use: its id and the line it is to run.
#[derive(Debug, Clone)]
pub struct Claim {
    pub id: String,
    pub line: String,
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
    let (grants, dir) = open_dir(policy)?;
    let path = dir.join(format!("{id}.json"));
    // Claimed by renaming it away, so two runs cannot both use it; removed after reading.
    // Everything through the directory opened without links (a link at the name is moved, not
    // followed, and then refused as no regular file).
    let claimed = PathBuf::from(format!(".{id}.used"));
    let _ = grants.remove(&claimed); // a claim whose call died before removing it
    grants
        .rename_noreplace(Path::new(&format!("{id}.json")), &claimed)
        .map_err(|_| {
            refused(format!(
                "host grant {id}: none such (used, expired or never issued)"
            ))
        })?;
    let read = grants.read(&claimed, cordon_policy::trust::MAX_FILE_SIZE);
    let _ = grants.remove(&claimed);
    let store = TrustStore::from_env();
    let text = match read {
        Ok(Some(bytes)) => {
            String::from_utf8(bytes).map_err(|_| refused(format!("host grant {id}: not UTF-8")))?
        }
        Ok(None) => {
            return Err(refused(format!(
                "host grant {id}: none such (used, expired or never issued)"
            )))
        }
        Err(e) => return Err(refused(format!("host grant {id}: {e}"))),
    };
    let file = FileText {
        path: path.clone(),
        text,
    };
    let pinned = store.check(&file, Pinned::Session);
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
