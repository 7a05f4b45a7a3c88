//! After `cordon exec`'s run: what the command left in the writable roots that makes the
//! operator's tools run code (the scan and the quarantine are `cordon_ossandbox::planted`).
//! Each finding is one `cordon: warning:` line on stderr and all of them one audit record
//! (`by: after-run`), appended by the same writer as the decision, so the chain stays
//! verifiable. The command's own exit status stands: the warnings and the record are the
//! signal, and the files are already moved aside.

use std::path::{Path, PathBuf};

use cordon_approval::audit::{AfterRunFinding, AuditLog, Record};
use cordon_ossandbox::planted::{Change, Finding, Handling, MissingPlace, Snapshot};

use crate::clean;

/// What is watched before the run.
pub struct Before {
    snapshot: Snapshot,
    /// The default trust-store places in the roots that do not exist (the existing ones are
    /// kept from the command by the sandbox).
    stores: Vec<MissingPlace>,
}

/// The watched paths of `roots` before the run.
pub fn before(roots: &[PathBuf]) -> Before {
    let stores = cordon_policy::trust::store_dirs(|n| std::env::var_os(n))
        .iter()
        .flat_map(|place| {
            // As the roots are: canonical, for what exists of it.
            let place = cordon_ossandbox::profile::canonical(place, &|p| std::fs::canonicalize(p));
            roots
                .iter()
                .filter_map(move |r| MissingPlace::watch(r, &place))
        })
        .collect();
    Before {
        snapshot: Snapshot::take(roots),
        stores,
    }
}

/// Compares with `before`, moves aside what appeared or changed, warns and records.
pub fn report(before: &Before, roots: &[PathBuf], log: &Path, session: &str, request: &str) {
    let stores = before.stores.iter().filter_map(MissingPlace::check);
    let before = &before.snapshot;
    let after = Snapshot::take_with(roots, cordon_ossandbox::planted::MAX_ENTRIES, Some(before));
    for (s, when) in [(before, "before"), (&after, "after")] {
        if s.truncated {
            eprintln!(
                "cordon: warning: the scan for files that make the operator's tools run code stopped after {} entries {when} the run: what lies beyond in {} was not checked",
                cordon_ossandbox::planted::MAX_ENTRIES,
                clean(&roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "))
            );
        }
    }
    let mut findings = after.findings_since(before);
    findings.extend(stores);
    if findings.is_empty() {
        return;
    }
    for f in &findings {
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
