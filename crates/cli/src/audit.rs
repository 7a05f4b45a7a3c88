//! `cordon audit verify|show FILE`, and the record `cordon exec` writes before it runs a
//! command.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use cordon_approval::audit::{self, AuditLog, By, Record};
use cordon_approval::Decision;
use cordon_policy::{Action, ApprovalMode, Policy};
use cordon_tools::assess::ShellAssessment;

use crate::{refuse, EXIT_FAILURE};

#[derive(Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCmd,
}

#[derive(Subcommand)]
enum AuditCmd {
    /// Check the log's hash chain, seq numbers and head file. Exit 0 when intact, 1 when a
    /// problem was found (each printed as `cordon: FILE:LINE: …`).
    Verify {
        /// The audit log (JSON Lines).
        file: PathBuf,
    },
    /// Print the log readably, one line per record (does not verify it).
    Show {
        /// The audit log (JSON Lines).
        file: PathBuf,
    },
}

pub fn run(args: AuditArgs) -> i32 {
    match args.command {
        AuditCmd::Verify { file } => verify(&file),
        AuditCmd::Show { file } => show(&file),
    }
}

fn verify(file: &Path) -> i32 {
    let report = match audit::verify(file) {
        Ok(r) => r,
        Err(e) => return refuse(EXIT_FAILURE, format!("audit log {e}")),
    };
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
    if report.is_intact() {
        0
    } else {
        1
    }
}

fn show(file: &Path) -> i32 {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            return refuse(
                EXIT_FAILURE,
                format!("audit log {}: cannot read: {e}", file.display()),
            )
        }
    };
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
    if bad {
        1
    } else {
        0
    }
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
    if r.repair.is_some() {
        s.push_str(" [writer repair: see the record]");
    }
    clean(&s)
}

/// `s` with control characters and bidirectional overrides escaped, so that a logged
/// command cannot rewrite the terminal it is shown on.
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The audit record of one `cordon exec`: built once the command is assessed, written when
/// the final decision is known, before anything runs.
pub struct ExecAudit {
    log: Option<PathBuf>,
    template: Record,
    rules: Decision,
    mode: ApprovalMode,
    timeout: Duration,
    asked_at: Instant,
}

impl ExecAudit {
    /// `argv` is what would run, `shown` the command as the user gave it.
    pub fn new(
        policy: &Policy,
        mode: ApprovalMode,
        argv: &[String],
        cwd: &Path,
        shown: &str,
        a: &ShellAssessment,
    ) -> ExecAudit {
        let template = Record::new("shell", Action::Deny, By::Default, "")
            .keys(a.commands.iter().map(|c| c.command.words.clone()))
            .args(&serde_json::json!({ "argv": argv, "cwd": cwd }))
            .preview(shown);
        ExecAudit {
            log: policy.approval.audit_log.clone(),
            template,
            rules: a.decision.clone(),
            mode,
            timeout: policy.approval.timeout,
            asked_at: Instant::now(),
        }
    }

    /// Records the decision of the rules, as resolved by the mode (`why` is set when the mode
    /// changed an ask). `Err` carries the exit code when the log cannot be written.
    pub fn decided(&self, action: Action, why: Option<&str>) -> Result<(), i32> {
        let d = &self.rules;
        match why {
            None => self.write(action, By::from(&d.rule), d.reason.clone()),
            Some(why) => self.write(
                action,
                By::mode(self.mode),
                format!("{why}; the rules said ask: {} [{}]", d.reason, d.rule),
            ),
        }
    }

    /// Records a person's answer, or why there was none.
    pub fn answered(&self, answer: &Result<bool, String>) -> Result<(), i32> {
        match answer {
            Ok(true) => self.write(Action::Allow, By::User, "approved by the user".into()),
            Ok(false) => self.write(Action::Deny, By::User, "refused by the user".into()),
            Err(e) if self.asked_at.elapsed() >= self.timeout => {
                self.write(Action::Deny, By::Timeout, e.clone())
            }
            Err(e) => self.write(Action::Deny, By::Channel, e.clone()),
        }
    }

    fn write(&self, decision: Action, by: By, reason: String) -> Result<(), i32> {
        let Some(path) = &self.log else {
            return Ok(());
        };
        let mut record = self.template.clone();
        record.decision = decision;
        record.by = by;
        record.reason = reason;
        AuditLog::open(path)
            .and_then(|mut log| log.append(&record))
            .map(|_| ())
            .map_err(|e| refuse(EXIT_FAILURE, format!("audit log {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn clean_escapes_terminal_controls() {
        assert_eq!(clean("ls -la"), "ls -la");
        assert_eq!(clean("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(clean("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(clean("é…"), "é…");
    }
}
