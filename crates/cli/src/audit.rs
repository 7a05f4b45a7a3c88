//! `cordon audit verify|show [FILE]`: FILE defaults to the log `cordon exec` writes under the
//! policy (`approval.audit_log`, else the per-user default). (`cordon exec`'s records are
//! written by the approval engine, before the command runs.)

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use cordon_approval::audit::{self, Record};

use crate::term::clean;
use crate::{Error, Exit};

#[derive(Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCmd,
}

#[derive(Subcommand)]
enum AuditCmd {
    /// Check the log's hash chain, seq numbers and head file. Exit 0 when intact, 1 when a
    /// problem was found (each printed as `cordon: FILE:LINE: …`).
    Verify(LogArg),
    /// Print the log readably, one line per record (does not verify it).
    Show(LogArg),
}

#[derive(Args)]
struct LogArg {
    /// Policy file whose log is meant when FILE is not given (default: ./cordon.toml, else
    /// the embedded default).
    #[arg(long, value_name = "FILE", conflicts_with = "file")]
    policy: Option<PathBuf>,
    /// The audit log (JSON Lines). Default: the policy's `approval.audit_log`, else
    /// `$XDG_STATE_HOME/cordon/audit.jsonl` (`~/.local/state/cordon/audit.jsonl`).
    file: Option<PathBuf>,
}

impl LogArg {
    /// The log named, or the one `cordon exec` writes under the policy.
    fn resolve(self) -> Result<PathBuf, Error> {
        if let Some(file) = self.file {
            return Ok(file);
        }
        let (_, policy) = crate::load_policy(self.policy.as_deref())?;
        match policy.approval.audit_log.path() {
            Some(p) => Ok(p.to_path_buf()),
            None => Err(Error::failure(
                "no audit log to read: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path; name the FILE",
            )),
        }
    }
}

pub fn run(args: AuditArgs) -> Exit {
    let (arg, verify_it) = match args.command {
        AuditCmd::Verify(a) => (a, true),
        AuditCmd::Show(a) => (a, false),
    };
    let file = arg.resolve()?;
    if verify_it {
        verify(&file)
    } else {
        show(&file)
    }
}

fn verify(file: &Path) -> Exit {
    let report = audit::verify(file).map_err(|e| Error::failure(format!("audit log {e}")))?;
    let shown = file.display();
    for p in &report.problems {
        eprintln!("cordon: {shown}:{}: {}", p.line, clean(&p.message));
    }
    let span = match (&report.first_seq, &report.last_seq) {
        (Some(a), Some(b)) => format!(
            ", seq {a}..{b}, {} .. {}",
            clean(report.first_time.as_deref().unwrap_or("?")),
            clean(report.last_time.as_deref().unwrap_or("?"))
        ),
        _ => String::new(),
    };
    let verdict = if report.is_intact() {
        "intact".to_string()
    } else if !report.tampered() {
        "complete records intact; torn tail (an interrupted write)".to_string()
    } else {
        format!("{} problem(s) found", report.problems.len())
    };
    println!("{shown}: {} record(s){span}: {verdict}", report.records);
    for n in &report.notes {
        println!("note: {}", clean(n));
    }
    println!("note: {}", audit::THREAT_MODEL);
    Ok(if report.is_intact() { 0 } else { 1 })
}

fn show(file: &Path) -> Exit {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::failure(format!("audit log {}: cannot read: {e}", file.display())))?;
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    let mut bad = false;
    for (i, line) in parts.iter().enumerate() {
        match serde_json::from_slice::<Record>(line) {
            Ok(r) => println!("{}", one_line(&r)),
            Err(e) => {
                bad = true;
                eprintln!(
                    "cordon: {}:{}: not an audit record: {}",
                    file.display(),
                    i + 1,
                    clean(&e.to_string())
                );
            }
        }
    }
    if !tail.is_empty() {
        bad = true;
        eprintln!(
            "cordon: {}:{}: torn tail: {} bytes without a newline (an interrupted write)",
            file.display(),
            parts.len() + 1,
            tail.len()
        );
    }
    Ok(if bad { 1 } else { 0 })
}

/// `TIME SESSION #SEQ DECISION TOOL KEYS by BY: REASON [note: NOTE]`, every field made safe
/// for a terminal.
fn one_line(r: &Record) -> String {
    let keys = if r.keys.is_empty() {
        r.preview.clone()
    } else {
        r.keys
            .iter()
            .map(|k| k.join(" "))
            .collect::<Vec<_>>()
            .join(" ; ")
    };
    let mut s = format!(
        "{} {} #{} {:<5} {} {} by {}: {}",
        r.time,
        r.session.get(..8).unwrap_or(&r.session),
        r.seq,
        r.decision.as_str(),
        r.tool,
        audit::preview(&keys),
        r.by,
        r.reason
    );
    if let Some(n) = &r.note {
        s.push_str(&format!(" [note: {n}]"));
    }
    if r.connection.is_some() {
        // A proxy's connection record: its preview says what moved where.
        s.push_str(&format!(" [{}]", r.preview));
    }
    if r.repair.is_some() {
        s.push_str(" [writer repair: see the record]");
    }
    clean(&s)
}
