//! The wrapped MCP servers of `cordon mcp wrap`: the server itself, run once under the
//! prepared sandbox with its stdio piped to the wrapper ([`Gate::serve`]), and each of its
//! tool calls as a call of tool `mcp` keyed `SERVER/TOOL` ([`Gate::mcp_tool`]), decided by the
//! policy's `[mcp]` section with the engine's one evaluator — session grants, modes, the doom
//! loop and the audit record included. The gate never runs an `mcp` call itself: the wrapper
//! relays an allowed call to the server ([`Gate::run`] of one refuses: no such tool).

use cordon_approval::audit::{By as AuditBy, Record as AuditRecord, SharedLog};
use cordon_policy::mcp::{self, MCP_TOOL};
use cordon_tools::tool::{Assessment, Presentation, Preview};

use super::*;

/// How much of a call's arguments the person is shown in the preview.
const PREVIEW_LIMIT: usize = 4096;

/// Argument names whose values are not written into the audit log or shown: credentials an
/// agent passes to a tool.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "private_key",
];

impl Gate {
    /// A tool call of the wrapped MCP server `server`: tool `mcp`, one key `SERVER/TOOL` and
    /// the arguments the `[[mcp.rules]]` name ([`cordon_policy::McpPolicy::key_words`]),
    /// the arguments recorded (values of credential-like names redacted, see
    /// [`redact`]). Decide it with [`Gate::decide_async`]; the wrapper relays it when allowed.
    pub fn mcp_tool(&self, server: &str, tool: &str, args: &serde_json::Value) -> Call {
        let key = mcp::key(server, tool);
        let args = redact(args);
        // Matched redacted, as recorded: a credential never reaches the audit log's keys.
        let words = self.policy.mcp.key_words(server, tool, &args);
        let mut shown_args = serde_json::to_string_pretty(&args).unwrap_or_default();
        if shown_args.len() > PREVIEW_LIMIT {
            let mut end = PREVIEW_LIMIT;
            while !shown_args.is_char_boundary(end) {
                end -= 1;
            }
            shown_args.truncate(end);
            shown_args.push_str("\n…");
        }
        let preview = format!("{key}\narguments: {shown_args}");
        // The summary is what the audit record's preview keeps (its first 200 characters):
        // the key and the redacted arguments.
        let presentation = Presentation::new(
            format!("{key} {args}"),
            Preview::Text {
                text: preview.clone(),
            },
        );
        let args = serde_json::json!({ "server": server, "tool": tool, "arguments": args });
        let id = cordon_approval::audit::new_id().unwrap_or_default();
        // The tool has no opinion: the `[mcp]` rules decide, in one place.
        let request = Request::new(id, MCP_TOOL, vec![Key::new(words)])
            .with_presentation(presentation.clone())
            .with_args(args.clone());
        let assessment =
            Assessment::new(MCP_TOOL, args, vec![key.clone()]).with_presentation(presentation);
        Call {
            request,
            shown: clean(&key),
            preview,
            what: What::File(Box::new(assessment)),
        }
    }

    /// Runs the MCP server `server` (`argv`) once under the sandbox the gate prepared — the
    /// policy's roots, protected paths, environment allow-list and network (with the proxy and
    /// its allow-list under `network = "proxy"`) — with `stdio` in place of cordon's
    /// descriptors, until it exits or `cancel` kills its tree; then the after-run scan. The
    /// server is the operator's own command line, so no rule decides it; its tool calls are
    /// decided one by one ([`Gate::mcp_tool`]). `sandbox.limits.timeout` bounds a command, not
    /// a server that lives as long as its client's session: it does not apply here.
    ///
    /// The audit log gets a record of the start (made durable before the server runs: one
    /// that cannot be written refuses the start) and one of the exit, both `tool: "mcp"`,
    /// `by: builtin` (`mcp-server-start`, `mcp-server-exit`), the command line as their key,
    /// and the run's id as `request` (`request`, or a new one) — the id the after-run record of
    /// what the server left in the writable roots carries too, and what a [`crate::Watch`]
    /// found while the server was idle.
    pub fn serve(
        &self,
        server: &str,
        argv: &[String],
        stdio: cordon_ossandbox::ChildStdio,
        cancel: Option<Cancel>,
        request: Option<&str>,
    ) -> Result<Ran, Error> {
        if argv.is_empty() {
            return Err(Error::failure("nothing to run: an empty command"));
        }
        let cwd = self.serve_dir()?;
        let id = match request {
            Some(r) => r.to_string(),
            None => cordon_approval::audit::new_id().unwrap_or_default(),
        };
        let opts = RunOptions {
            // As good as none: the session ends the server, not a clock.
            timeout: Some(Duration::from_secs(10 * 365 * 24 * 3600)),
            output: Output::Inherit,
            cancel,
            ask: None,
            // The wrapped server's stdin is its MCP client's channel.
            input: Input::Inherit,
        };
        // The engine's writer where it has one (its records share syncs), else the gate's log.
        let log = match lock(&self.engine).audit_log() {
            Some(log) => log,
            None => std::sync::Arc::new(SharedLog::new(
                AuditLog::open(self.audit_log())
                    .map_err(|e| Error::failure(format!("audit log {e}")))?
                    .with_session(self.audit_session.clone()),
            )),
        };
        let record = |tag: &str, reason: String| {
            AuditRecord::new(
                MCP_TOOL,
                Action::Allow,
                AuditBy::Builtin { tag: tag.into() },
                reason,
            )
            .request(&id)
            .keys([argv.to_vec()])
            .args(&serde_json::json!({ "server": server, "argv": argv }))
            .preview(&format!("{server}: {}", argv.join(" ")))
        };
        let start = record(
            "mcp-server-start",
            format!(
                "cordon mcp wrap started the MCP server `{server}` in {}: the operator's own \
                 command line (no rule decides it); each of its tool calls is decided",
                cwd.display()
            ),
        );
        log.append(&start).map_err(|e| {
            Error::failure(format!(
                "the MCP server's start could not be recorded in the audit log, so it was not \
                 started: {e}"
            ))
        })?;
        let ran = self.run_shell(&id, argv, &cwd, opts, stdio, None);
        let how = match &ran {
            Ok(r) => format!("exited with status {}", r.exit_code),
            Err(e) => format!("could not run or was stopped: {e}"),
        };
        let exit = record(
            "mcp-server-exit",
            format!(
                "the MCP server `{server}` {how}; the after-run scan ran (what it found, if \
                 anything, is in an after-run record of the same request, as is what the live \
                 watch found while the server was idle; what the scan after each tool call \
                 found, in that call's)"
            ),
        );
        if let Err(e) = log.append(&exit) {
            eprintln!(
                "cordon: warning: the MCP server's exit could not be recorded in the audit log: {}",
                clean(&e.to_string())
            );
        }
        ran
    }

    /// Where [`Gate::serve`] runs the server: the gate's directory, which must lie in one of
    /// the policy's roots (refused, 126, otherwise: the sandbox could not enter it).
    pub fn serve_dir(&self) -> Result<PathBuf, Error> {
        self.call_cwd(Some(&self.cwd)).map_err(|e| {
            Error::Refused(format!(
                "{e}: start the MCP server in a directory inside a root (it runs there)"
            ))
        })
    }
}

/// `args` with the value of every object member whose name looks like a credential
/// (`token`, `api_key`, `password`, …, case-insensitive, `-` read as `_`) replaced by
/// `"[redacted]"`, at any depth.
pub fn redact(args: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match args {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let name = k.to_ascii_lowercase().replace('-', "_");
                    let secret = SECRET_NAMES
                        .iter()
                        .any(|s| name == *s || name.ends_with(&format!("_{s}")));
                    let v = if secret && !v.is_null() {
                        Value::String("[redacted]".into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        v => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_at_any_depth() {
        let v = serde_json::json!({
            "path": "/x", "api_key": "k", "headers": {"Authorization": "Bearer t", "x": 1},
            "list": [{"github-token": "g"}], "tokens": 3,
        });
        let r = redact(&v);
        assert_eq!(r["path"], "/x");
        assert_eq!(r["api_key"], "[redacted]");
        assert_eq!(r["headers"]["Authorization"], "[redacted]");
        assert_eq!(r["headers"]["x"], 1);
        assert_eq!(r["list"][0]["github-token"], "[redacted]");
        assert_eq!(r["tokens"], 3);
    }
}
