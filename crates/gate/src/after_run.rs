//! After a run: what the command left in the writable roots that makes the operator's tools
//! run code (the sandbox's after-run scan found it and moved it aside, see
//! `cordon_ossandbox::Ran::findings`). Each finding is one `cordon: warning:` line on stderr
//! and all of them one audit record (`by: after-run`), appended by the same writer as the
//! decision, so the chain stays verifiable. The command's own exit status stands: the warnings
//! and the record are the signal, and the files are already moved aside.

use std::path::{Path, PathBuf};

use cordon_approval::audit::{AfterRunFinding, AuditLog, Record};
use cordon_ossandbox::{Change, Finding, Handling, SCAN_MAX_ENTRIES};

use crate::clean;

/// Warns about and records `findings`; says where the scan stopped early (`truncated`: when,
/// `before` or `after` the run).
pub fn report(
    findings: &[Finding],
    truncated: &[&str],
    roots: &[PathBuf],
    log: &Path,
    session: &str,
    request: &str,
) {
    for when in truncated {
        eprintln!(
            "cordon: warning: the scan for files that make the operator's tools run code stopped after {SCAN_MAX_ENTRIES} entries {when} the run: what lies beyond in {} was not checked",
            clean(&roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "))
        );
    }
    if findings.is_empty() {
        return;
    }
    for f in findings {
        eprintln!("cordon: warning: {}", clean(&f.message()));
    }
    let record = Record::after_run(
        "shell",
        request,
        &findings.iter().map(entry).collect::<Vec<_>>(),
    );
    let written = AuditLog::open(log).and_then(|l| l.with_session(session).append(&record));
    if let Err(e) = written {
        eprintln!(
            "cordon: warning: what the run left could not be recorded in the audit log: {}",
            clean(&e.to_string())
        );
    }
}

fn entry(f: &Finding) -> AfterRunFinding {
    AfterRunFinding {
        kind: f.what.tag().into(),
        path: f.path.display().to_string(),
        change: match f.change {
            Change::Appeared => "appeared",
            Change::Changed => "changed",
        }
        .into(),
        why: f.why.clone(),
        handling: match &f.handling {
            Handling::Quarantined(to) => format!("moved aside to {}", to.display()),
            Handling::Restored(to) => {
                format!("moved aside to {}, earlier content restored", to.display())
            }
            Handling::Reported(why) => format!("left in place: {why}"),
        },
    }
}
