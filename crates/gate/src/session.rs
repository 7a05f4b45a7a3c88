//! Named sessions (`cordon exec --session NAME`, or `CORDON_SESSION`): what an agent run
//! approved "for this session", and the doom-loop count, carried from one `cordon exec` to
//! the next.
//!
//! A session lives in `$XDG_RUNTIME_DIR/cordon/sessions/NAME.json` (else
//! `~/.local/state/cordon/sessions/`), a directory of mode 0700. The file is read and written
//! under an exclusive lock held from before the decision until the decision is saved, so two
//! calls of one session are decided one after the other; it is replaced atomically (write,
//! fsync, rename), so a crash leaves the old state or the new one. A session directory inside
//! a writable root is refused: the sandboxed command could forge its own grants. A run of
//! another session, or without one, may still have had it in reach (run from HOME without
//! `XDG_RUNTIME_DIR`), so each save is pinned in the operator's trust store
//! ([`cordon_policy::trust`]) and a session file that does not match its pin is refused.

use std::path::{Path, PathBuf};

use cordon_approval::{Engine, Key};
use cordon_policy::trust::{FileText, Pinned, TrustStore};

use crate::Error;
use serde_json::{json, Value};

/// How long a call waits for another call of its session, once it said it waits: that one may
/// be asking a person, who may take a while (a day: no call waits for ever).
const SESSION_WAIT: std::time::Duration = std::time::Duration::from_secs(86_400);

/// An open session, locked until dropped.
pub struct Session {
    pub name: String,
    path: PathBuf,
    /// Its directory, opened without a link at any component cordon made.
    dir: cordon_fs::safe::Dir,
    store: TrustStore,
    _lock: cordon_fs::lock::FileLock,
    /// The audit log's session id for this session's records (32 hex digits).
    pub id: String,
    grants: Vec<(String, Key)>,
    doom: (Option<u64>, u32),
    /// The roots the caller decides over ([`scope`]); `None` for a caller that only lists or
    /// revokes grants.
    scope: Option<String>,
    /// The roots the grants were saved under.
    saved_scope: Option<String>,
}

/// The tools whose keys name no location: a command's words, an MCP server's tool and its
/// arguments. Every other tool's key names a path by its root's *name* (`ws/.envrc`), which
/// another policy gives to another directory.
const PLACELESS: [&str; 2] = ["shell", "mcp"];

/// What a file tool's key means: each root's name and its real directory. A session is shared
/// by name (`--session`, `CORDON_SESSION`) across projects, and a grant for `write_file
/// ws/.claude/settings.json` given where `ws` is one project's directory allowed the same
/// write, unasked, in another project whose root is also named `ws`.
pub fn scope(policy: &cordon_policy::Policy) -> String {
    let mut roots: Vec<(String, String)> = policy
        .sandbox
        .paths
        .iter()
        .map(|p| {
            let real = std::fs::canonicalize(&p.root).unwrap_or_else(|_| p.root.clone());
            (p.name.clone(), real.to_string_lossy().into_owned())
        })
        .collect();
    roots.sort();
    json!(roots).to_string()
}

/// The directory sessions live in.
pub fn dir() -> Result<PathBuf, Error> {
    let (anchor, rel) = place("sessions")?;
    Ok(anchor.join(rel))
}

/// Where cordon's per-user directory `leaf` (`sessions`, `host-grants`) lives, as (anchor,
/// the rest): the anchor is the operator's (`$XDG_RUNTIME_DIR`, else `$HOME`), the rest is
/// cordon's own (`cordon/LEAF`, else `.local/state/cordon/LEAF`), created and walked without
/// following a link.
fn place(leaf: &str) -> Result<(PathBuf, PathBuf), Error> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    if let Some(r) = runtime {
        return Ok((r, Path::new("cordon").join(leaf)));
    }
    match std::env::var_os("HOME").map(PathBuf::from) {
        Some(h) if h.is_absolute() => Ok((h, Path::new(".local/state/cordon").join(leaf))),
        _ => Err(Error::failure(
            "no place for sessions: neither XDG_RUNTIME_DIR nor HOME is set",
        )),
    }
}

/// Opens (creating, 0700) cordon's per-user directory `leaf` (see [`place`]), refused when it
/// lies in one of `roots` (the sandboxed command could forge what cordon keeps there) and when
/// a link is planted at any component cordon made (an earlier run that had the place in reach
/// could re-point `cordon` or `LEAF` at a directory of its choice, and cordon would write its
/// files there). Returns the directory and its canonical path. `what` names it in refusals;
/// `in_root(dir, root)` is the refusal of a directory in a root.
pub(crate) fn open_private_dir(
    leaf: &str,
    what: &str,
    in_root: &dyn Fn(&Path, &Path) -> String,
    roots: &[PathBuf],
) -> Result<(cordon_fs::safe::Dir, PathBuf), Error> {
    let (anchor, rel) = place(leaf)?;
    let dir = anchor.join(&rel);
    let refuse_in_roots = |real: &Path| -> Result<(), Error> {
        for w in roots {
            let w = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
            if real.starts_with(&w) {
                return Err(Error::failure(in_root(real, &w)));
            }
        }
        Ok(())
    };
    // Refused before anything is created: a refused store must leave nothing behind
    // (directories made in a writable root change what the next run there protects).
    refuse_in_roots(&existing_prefix_canonical(&dir))?;
    let opened = cordon_fs::safe::Dir::anchor(&anchor)
        .and_then(|a| a.create_dirs(&rel, 0o700))
        .map_err(|e| Error::failure(format!("{what} {}: {e}", dir.display())))?;
    // No link below the anchor: its canonical path and the rest name the directory opened.
    let real = std::fs::canonicalize(&anchor)
        .map_err(|e| Error::failure(format!("{what} {}: {e}", dir.display())))?
        .join(&rel);
    // Again on what exists now: the anchor may lead elsewhere than its prefix did.
    refuse_in_roots(&real)?;
    Ok((opened, real))
}

/// `path` with its longest existing prefix made canonical and the rest as written: where a
/// directory that does not exist yet would be created.
fn existing_prefix_canonical(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(c)) => {
                rest.push(c.to_os_string());
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Checks a session name: 1–64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub fn valid_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::failure(format!(
            "invalid session name {:?}: use 1-64 letters, digits, `.`, `_` or `-`, not starting with `.`",
            crate::clean(name)
        )))
    }
}

impl Session {
    /// Opens (creating) session `name`, locked. `writable` are the roots the sandboxed command
    /// may write: a session directory inside one is refused. `scope` is the caller's policy's
    /// [`scope`] (`None` for a caller that only lists or revokes grants).
    pub fn open(name: &str, writable: &[PathBuf], scope: Option<String>) -> Result<Session, Error> {
        valid_name(name)?;
        let (dir, real) = open_private_dir(
            "sessions",
            "session directory",
            &|dir, root| {
                format!(
                "session directory {} lies in the writable root {}: the sandboxed command could forge its own grants (set XDG_RUNTIME_DIR elsewhere)",
                dir.display(),
                root.display()
            )
            },
            writable,
        )?;
        let path = real.join(format!("{name}.json"));
        let lock_name = PathBuf::from(format!("{name}.lock"));
        let open_lock = || {
            dir.open_read_append(&lock_name, 0o600, true)
                .map_err(|e| Error::failure(format!("session `{name}`: cannot open its lock: {e}")))
        };
        // Said only after a second: a brief wait (another decision of this same process, a
        // run's other connection) is no news, and the terminal may be lent to a question then.
        // The holder may be asking a person: no deadline after that, as before.
        let cannot = |e: cordon_fs::lock::Error| {
            Error::failure(format!("session `{name}`: cannot lock: {e}"))
        };
        let lock = match cordon_fs::lock::FileLock::exclusive(
            open_lock()?,
            std::time::Duration::from_secs(1),
        ) {
            Ok(l) => l,
            Err(cordon_fs::lock::Error::TimedOut { .. }) => {
                eprintln!(
                    "cordon: waiting for session `{name}`: another call of it is being decided"
                );
                cordon_fs::lock::FileLock::exclusive(open_lock()?, SESSION_WAIT).map_err(cannot)?
            }
            Err(e) => return Err(cannot(e)),
        };
        let mut s = Session {
            name: name.to_string(),
            path,
            dir,
            store: TrustStore::from_env(),
            _lock: lock,
            id: String::new(),
            grants: Vec::new(),
            doom: (None, 0),
            scope,
            saved_scope: None,
        };
        // Never through a link, a regular file only (a FIFO planted at the name must not hang
        // the call), at most 1 MiB.
        let file_name = PathBuf::from(format!("{name}.json"));
        match s.dir.read(&file_name, 1 << 20) {
            Ok(Some(bytes)) => {
                let text = String::from_utf8(bytes).map_err(|_| {
                    Error::failure(format!("session file {}: not UTF-8", s.path.display()))
                })?;
                s.store
                    .check(
                        &FileText {
                            path: s.path.clone(),
                            text: text.clone(),
                        },
                        Pinned::Session,
                    )
                    .map_err(Error::failure)?;
                s.parse(text.as_bytes())?
            }
            Ok(None) => {
                s.id = cordon_approval::audit::new_id()
                    .map_err(|e| Error::failure(format!("session `{name}`: no random id: {e}")))?;
            }
            Err(e) => {
                return Err(Error::failure(format!(
                    "session `{name}`: cannot read: {e}"
                )))
            }
        }
        Ok(s)
    }

    fn parse(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let bad = |why: &str| {
            Error::failure(format!(
                "session file {} is damaged ({why}); delete it to start the session afresh",
                self.path.display()
            ))
        };
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(&e.to_string()))?;
        if v["v"] != 1 {
            return Err(bad("unknown version"));
        }
        let id = v["id"].as_str().ok_or_else(|| bad("no id"))?;
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("bad id"));
        }
        self.id = id.to_string();
        for g in v["grants"].as_array().ok_or_else(|| bad("no grants"))? {
            let tool = g["tool"]
                .as_str()
                .ok_or_else(|| bad("grant without tool"))?;
            let words = g["key"]
                .as_array()
                .ok_or_else(|| bad("grant without key"))?
                .iter()
                .map(|w| w.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("a key word is not a string"))?;
            self.grants.push((tool.to_string(), Key::new(words)));
        }
        let last = match &v["doom"]["last"] {
            Value::Null => None,
            n => Some(n.as_u64().ok_or_else(|| bad("bad doom-loop state"))?),
        };
        let count = v["doom"]["count"]
            .as_u64()
            .unwrap_or(0)
            .min(u64::from(u32::MAX)) as u32;
        self.doom = (last, count);
        self.saved_scope = v["roots"].as_str().map(String::from);
        Ok(())
    }

    /// The grants, sorted.
    pub fn grants(&self) -> &[(String, Key)] {
        &self.grants
    }

    /// Gives `engine` this session's grants and doom-loop state: a grant whose key names a
    /// path by a root's name only where the roots are those it was given under (else it is
    /// dropped at the next save: fail closed, the call asks again).
    pub fn restore(&self, engine: &mut Engine) {
        let same_roots = self.scope.is_some() && self.scope == self.saved_scope;
        for (tool, key) in &self.grants {
            if same_roots || PLACELESS.contains(&tool.as_str()) {
                engine.memory_mut().grant(tool, key.clone());
            }
        }
        engine.set_doom_state(self.doom);
    }

    /// Takes `engine`'s grants and doom-loop state and saves them.
    pub fn save_from(&mut self, engine: &Engine) -> Result<(), Error> {
        self.grants = engine.memory().list();
        self.doom = engine.doom_state();
        self.write()
    }

    /// Revokes the grants whose key starts with `words` (all when empty); how many went.
    pub fn revoke(&mut self, words: &[String]) -> Result<usize, Error> {
        let before = self.grants.len();
        self.grants.retain(|(_, k)| {
            !(k.words().len() >= words.len() && k.words()[..words.len()] == *words)
        });
        let gone = before - self.grants.len();
        self.write()?;
        Ok(gone)
    }

    fn write(&self) -> Result<(), Error> {
        let grants: Vec<Value> = self
            .grants
            .iter()
            .map(|(t, k)| json!({"tool": t, "key": k.words()}))
            .collect();
        let v = json!({
            "v": 1,
            "id": self.id,
            "grants": grants,
            "doom": {"last": self.doom.0, "count": self.doom.1},
            "roots": self.scope.as_ref().or(self.saved_scope.as_ref()),
        });
        let text = format!("{v}\n");
        // Pinned first: a crash between the two leaves a file that is refused, never one that
        // loads unpinned.
        self.store
            .trust(&FileText {
                path: self.path.clone(),
                text: text.clone(),
            })
            .map_err(|e| {
                Error::failure(format!(
                    "session `{}`: cannot pin its grants: {e}",
                    self.name
                ))
            })?;
        // Through fs::safe: atomic, and a link planted at the name is refused by name.
        let name = self.path.file_name().unwrap_or_default();
        self.dir
            .write(Path::new(name), text.as_bytes(), 0o600)
            .map_err(|e| Error::failure(format!("session `{}`: cannot save: {e}", self.name)))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn session_names() {
        for ok in ["agent-1", "run_2026.11.22", "A"] {
            assert!(valid_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(65)] {
            assert!(valid_name(bad).is_err(), "{bad}");
        }
    }
}
