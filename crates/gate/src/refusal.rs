//! Refusal records: when cordon refuses, for its own reasons, what a policy allowed or what it
//! was asked to open (the sandbox cannot be built, the remembered rules cannot be used, the
//! session cannot be kept), the log says so beside the decisions — where a record can still
//! be written — so that an allow in the log is never the last word on a call that did not run.

use super::*;

impl Gate {
    /// Records a refusal of the allowed `call` that `run` could not run: cordon's own failure
    /// (exit 125), not the command's (126 cannot execute, 127 not found, which the command's
    /// own exit status reports). Best effort: the error is what the caller returns either way;
    /// a record that cannot be written is said in its message.
    pub(crate) fn refused_run(&self, call: &Call, e: Error) -> Error {
        if e.exit_code() != EXIT_FAILURE {
            return e;
        }
        let reason = format!("allowed, but not run: {e}");
        match lock(&self.engine).record_refusal(&call.request, &reason) {
            Ok(()) => e,
            Err(rec) => {
                let detail = format!("(the refusal could not be recorded either: {rec})");
                let lines = e.detail();
                let mut lines: Vec<&str> = lines.iter().map(String::as_str).collect();
                lines.push(&detail);
                Error::new(e.exit_code(), &e).with_detail(lines)
            }
        }
    }
}

/// Records in the policy's audit log that the gate refused to open (`e`: the remembered rules,
/// the session, a mode the policy forbids) — only once the log's path was checked not to be
/// named through a link in a writable root (the caller's duty), and only for a gate that
/// records (never `cordon check`). Best effort: `e` is returned either way.
pub(crate) fn refused_open(policy: &Policy, front_end: &FrontEnd, e: Error) -> Error {
    if *front_end == FrontEnd::Check {
        return e;
    }
    let Some(path) = policy.approval.audit_log.path() else {
        return e;
    };
    // The default place only when it is the caller's own, as the gate itself checks.
    if matches!(
        policy.approval.audit_log,
        cordon_policy::AuditLog::Default(_)
    ) && paths::owned_by_caller(path).is_err()
    {
        return e;
    }
    let tool = match front_end {
        FrontEnd::Terminal => "exec",
        FrontEnd::Mcp => "mcp",
        FrontEnd::Host(_) => "hook",
        FrontEnd::Check => "check",
    };
    let reason = format!("cordon refused to start: {e}");
    if let Ok(mut log) = cordon_approval::audit::AuditLog::open(path) {
        if let Err(rec) = log.append(&cordon_approval::audit::Record::refusal(tool, reason)) {
            tracing::warn!(log = %path.display(), "the refusal could not be recorded: {rec}");
        }
    }
    e
}

impl Gate {
    /// Records that the call `request`, whose decision is in the log (an allow, or an ask
    /// deferred to the host), was blocked after all because of `category` (`deadline`: the
    /// hook's deadline passed after the decision was recorded, and the host was told to block
    /// it; `cancelled`: an MCP client cancelled the call while it ran, and it was killed):
    /// a refusal record for the call's id after its decision, durable when this returns `Ok`.
    /// Takes the engine only to find its writer: a decision still being made on another
    /// thread holds the engine, not this. Without an audit log: `Ok`.
    pub fn record_blocked(
        &self,
        request: &Request,
        category: &str,
        reason: &str,
    ) -> Result<(), Error> {
        let Some(log) = lock(&self.engine).audit_log() else {
            return Ok(());
        };
        log.append(&cordon_approval::refusal_record(request, category, reason))
            .map(|_| ())
            .map_err(|e| Error::failure(format!("audit log {e}")))
    }
}
