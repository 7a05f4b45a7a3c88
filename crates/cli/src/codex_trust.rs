//! Codex's hook trust, read and recorded by Codex itself.
//!
//! Codex (0.171) runs a hook only once it is trusted: its `/hooks` review stores
//! `hooks.state."KEY".trusted_hash = "sha256:…"` in `$CODEX_HOME/config.toml`, and a hook whose
//! current hash differs is skipped — silently in `codex exec`. Rather than re-derive Codex's
//! key and hash format, cordon asks Codex: `codex app-server` (JSON-RPC, one object a line on
//! stdio) answers `hooks/list` with each hook's `key`, `currentHash` and `trustStatus`, and
//! records trust through `config/batchWrite` — the same record its review writes. Only
//! cordon's own hook, with the exact command `install` wrote, is ever trusted this way.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::Error;

/// How long one answer of Codex may take (generous: a loaded machine, a cold start).
const DEADLINE: Duration = Duration::from_secs(30);

/// One hook as Codex sees it.
#[derive(Debug, Clone)]
pub struct HookState {
    pub key: String,
    pub hash: String,
    /// `trusted`, `untrusted`, `modified`, `managed`, as Codex says.
    pub status: String,
    pub command: String,
    pub source: PathBuf,
}

/// The `codex` program: `$CORDON_CODEX`, else `codex` on PATH.
pub fn program(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = var("CORDON_CODEX") {
        return Some(PathBuf::from(p));
    }
    let path = var("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("codex"))
        .find(|p| p.is_file())
}

/// A running `codex app-server`, killed when dropped.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next: u64,
}

impl Session {
    fn start(codex: &Path, cwd: &Path) -> Result<Session, Error> {
        let mut child = Command::new(codex)
            .arg("app-server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                Error::failure(format!(
                    "cannot start `{} app-server`: {e}",
                    codex.display()
                ))
            })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| Error::failure("codex app-server: no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::failure("codex app-server: no stdout"))?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut s = Session {
            child,
            stdin,
            lines,
            next: 1,
        };
        s.call(
            "initialize",
            json!({ "clientInfo": { "name": "cordon", "version": env!("CARGO_PKG_VERSION") } }),
        )?;
        s.send(&json!({ "jsonrpc": "2.0", "method": "initialized" }))?;
        Ok(s)
    }

    fn send(&mut self, v: &Value) -> Result<(), Error> {
        writeln!(self.stdin, "{v}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| Error::failure(format!("codex app-server: {e}")))
    }

    /// One request; its `result`, or Codex's error.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let line = self.lines.recv_timeout(DEADLINE).map_err(|_| {
                Error::failure(format!(
                    "codex app-server gave no answer to {method} within {DEADLINE:?}"
                ))
            })?;
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["id"] != json!(id) {
                continue; // a notification, or another answer
            }
            if let Some(e) = v.get("error") {
                return Err(Error::failure(format!("codex app-server {method}: {e}")));
            }
            return Ok(v["result"].clone());
        }
    }

    /// Every hook Codex loads for `cwd`.
    fn hooks(&mut self, cwd: &Path) -> Result<Vec<HookState>, Error> {
        let r = self.call("hooks/list", json!({ "cwds": [cwd] }))?;
        let mut out = Vec::new();
        for entry in r["data"].as_array().into_iter().flatten() {
            for h in entry["hooks"].as_array().into_iter().flatten() {
                let s = |k: &str| h[k].as_str().unwrap_or_default().to_string();
                out.push(HookState {
                    key: s("key"),
                    hash: s("currentHash"),
                    status: s("trustStatus"),
                    command: s("command"),
                    source: PathBuf::from(s("sourcePath")),
                });
            }
        }
        Ok(out)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The hooks Codex loads for `cwd`, as Codex reports them.
pub fn list(codex: &Path, cwd: &Path) -> Result<Vec<HookState>, Error> {
    Session::start(codex, cwd)?.hooks(cwd)
}

/// Records Codex's trust in the hook from `source` whose command is exactly `command`, through
/// Codex; returns its key once Codex reports it trusted.
pub fn trust(codex: &Path, cwd: &Path, source: &Path, command: &str) -> Result<String, Error> {
    let mut s = Session::start(codex, cwd)?;
    let mine = |hooks: Vec<HookState>| {
        hooks
            .into_iter()
            .find(|h| h.source == source && h.command == command)
    };
    let h = mine(s.hooks(cwd)?).ok_or_else(|| {
        Error::failure(format!(
            "Codex does not load the hook from {} (is the project trusted in Codex?)",
            source.display()
        ))
    })?;
    if h.status == "trusted" {
        return Ok(h.key);
    }
    s.call(
        "config/batchWrite",
        json!({ "edits": [{
            "keyPath": "hooks.state",
            "value": { h.key.clone(): { "trusted_hash": h.hash } },
            "mergeStrategy": "upsert",
        }] }),
    )?;
    match mine(s.hooks(cwd)?) {
        Some(after) if after.status == "trusted" => Ok(after.key),
        Some(after) => Err(Error::failure(format!(
            "Codex reports the hook {}",
            after.status
        ))),
        None => Err(Error::failure("the hook is gone from Codex's list")),
    }
}
