//! `cordon audit verify|show [FILE]`: FILE defaults to the log `cordon exec` writes under the
//! policy (`approval.audit_log`, else the per-user default). (`cordon exec`'s records are
//! written by the approval engine, before the command runs.)

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use cordon_approval::audit::{self, Record};

use crate::term::clean;

mod report;
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
    /// Print the log readably, one line per record (does not verify it), or the records as
    /// they are (`--json`), filtered.
    Show(ShowArgs),
    /// Per day: calls, allows, asks, denials, the most denied commands, the hosts contacted
    /// (allowed/denied, bytes), after-run findings.
    Summary(FilterArgs),
    /// Write one self-contained HTML page (no network): the chain's verification status, a
    /// timeline of the records, filters.
    Report(ReportArgs),
}

#[derive(Args)]
struct ShowArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// Print the matching records as the log holds them (JSON Lines).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct FilterArgs {
    #[command(flatten)]
    log: LogArg,
    /// Only records on or after DATE (`YYYY-MM-DD`, `today`, or an RFC 3339 time; UTC).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only records on or before DATE (a date includes its whole day).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Only records with this decision: allow, ask or deny.
    #[arg(long, value_name = "DECISION")]
    decision: Option<String>,
    /// Only records of this tool (`shell`, `network`, …).
    #[arg(long, value_name = "TOOL")]
    tool: Option<String>,
    /// Only records of sessions whose id starts with this.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
}

#[derive(Args)]
struct ReportArgs {
    #[command(flatten)]
    log: LogArg,
    /// Where to write the page.
    #[arg(long, value_name = "FILE")]
    html: PathBuf,
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

/// The logs a command reads: the one named, or the one `cordon exec` writes under the
/// policy and, beside it, the log of the runs Codex starts in its own sandbox
/// (`LOGDIR/codex/audit.jsonl`, [`cordon_policy::CODEX_STATE_DIR`]) where it exists: those
/// runs' decisions and after-run findings are recorded there, not in the policy's log.
struct Logs {
    main: PathBuf,
    /// The Codex runs' log, when no FILE was named and it exists.
    apart: Option<PathBuf>,
}

/// How a record from the Codex runs' log is marked in `show`: that log lies where what Codex
/// runs without cordon can write (docs/hooks.md), so it is never taken for the policy's.
const APART_TAG: &str = "[codex log]";

impl Logs {
    /// Each log, with the tag its records carry in `show` (none for the main log).
    fn each(&self) -> Vec<(&Path, Option<&'static str>)> {
        std::iter::once((self.main.as_path(), None))
            .chain(self.apart.as_deref().map(|a| (a, Some(APART_TAG))))
            .collect()
    }
}

impl LogArg {
    /// The log named, or the one `cordon exec` writes under the policy.
    fn resolve(self) -> Result<PathBuf, Error> {
        Ok(self.logs()?.main)
    }

    /// The log named, or the one `cordon exec` writes under the policy and the Codex runs'
    /// beside it ([`Logs`]).
    fn logs(self) -> Result<Logs, Error> {
        if let Some(file) = self.file {
            return Ok(Logs {
                main: file,
                apart: None,
            });
        }
        let (_, policy) = crate::load_policy(self.policy.as_deref())?;
        match policy.approval.audit_log.path() {
            Some(p) => Ok(Logs {
                main: p.to_path_buf(),
                apart: p
                    .parent()
                    .map(|d| d.join(cordon_policy::CODEX_STATE_DIR).join("audit.jsonl"))
                    // A regular file only: a link or a FIFO planted there by what Codex
                    // runs without cordon is not read.
                    .filter(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_file())),
            }),
            None => Err(Error::failure(
                "no audit log to read: the policy sets no approval.audit_log, and neither XDG_STATE_HOME nor HOME is an absolute path; name the FILE",
            )),
        }
    }
}

pub fn run(args: AuditArgs) -> Exit {
    match args.command {
        AuditCmd::Verify(a) => {
            let logs = a.logs()?;
            let mut worst = 0;
            for (file, _) in logs.each() {
                worst = worst.max(verify(file)?);
            }
            Ok(worst)
        }
        AuditCmd::Show(a) => {
            let filter = Filter::new(&a.filter)?;
            show(&a.filter.log.logs()?, &filter, a.json)
        }
        AuditCmd::Summary(a) => {
            let filter = Filter::new(&a)?;
            let logs = a.log.logs()?;
            let files: Vec<&Path> = logs.each().into_iter().map(|(f, _)| f).collect();
            report::summary(&files, &filter)
        }
        AuditCmd::Report(a) => report::html(&a.log.resolve()?, &a.html),
    }
}

/// The records `show` and `summary` keep.
pub(crate) struct Filter {
    since: Option<String>,
    until: Option<String>,
    decision: Option<cordon_policy::Action>,
    tool: Option<String>,
    session: Option<String>,
}

impl Filter {
    fn new(a: &FilterArgs) -> Result<Filter, Error> {
        let decision = match &a.decision {
            None => None,
            Some(d) => Some(cordon_policy::Action::parse(d).ok_or_else(|| {
                Error::new(
                    2,
                    format!("--decision {}: not allow, ask or deny", clean(d)),
                )
            })?),
        };
        Ok(Filter {
            since: a.since.as_deref().map(|d| bound(d, false)).transpose()?,
            until: a.until.as_deref().map(|d| bound(d, true)).transpose()?,
            decision,
            tool: a.tool.clone(),
            session: a.session.clone(),
        })
    }

    pub(crate) fn keeps(&self, r: &Record) -> bool {
        // Record times are RFC 3339 UTC with milliseconds: they compare as strings.
        self.since
            .as_ref()
            .is_none_or(|s| r.time.as_str() >= s.as_str())
            && self
                .until
                .as_ref()
                .is_none_or(|u| r.time.as_str() <= u.as_str())
            && self.decision.is_none_or(|d| r.decision == d)
            && self.tool.as_ref().is_none_or(|t| &r.tool == t)
            && self
                .session
                .as_ref()
                .is_none_or(|s| r.session.starts_with(s.as_str()))
    }
}

/// A `--since`/`--until` value as a time string that compares with the records': a date's
/// first (or last) millisecond, `today` (UTC), or an RFC 3339 time as given.
fn bound(d: &str, end: bool) -> Result<String, Error> {
    let date = if d == "today" {
        audit::rfc3339(std::time::SystemTime::now())[..10].to_string()
    } else {
        d.to_string()
    };
    let b = date.as_bytes();
    let is_date = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
    if is_date {
        return Ok(if end {
            format!("{date}T23:59:59.999Z")
        } else {
            format!("{date}T00:00:00.000Z")
        });
    }
    if b.len() >= 11 && b[10] == b'T' && b[..4].iter().all(u8::is_ascii_digit) {
        return Ok(date);
    }
    Err(Error::new(
        2,
        format!(
            "{}: not a date (YYYY-MM-DD, today, or an RFC 3339 time in UTC)",
            clean(d)
        ),
    ))
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

/// Prints the records of every log in `logs`: readably, one line each, in time order, those
/// of the Codex runs' log marked [`APART_TAG`]; or (`json`) each log's lines as it holds them,
/// log after log, with a line on stderr naming each log before its records.
fn show(logs: &Logs, filter: &Filter, json: bool) -> Exit {
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut bad = false;
    let many = logs.apart.is_some();
    for (file, tag) in logs.each() {
        if json && many {
            eprintln!(
                "cordon: the records of {} follow",
                clean(&file.display().to_string())
            );
        }
        bad |= show_one(file, tag, filter, json, &mut lines)?;
    }
    // Stable: a log's own order stays where times are equal.
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, line) in lines {
        println!("{line}");
    }
    Ok(if bad { 1 } else { 0 })
}

/// [`show`] of one log: JSON lines printed now, readable ones added to `lines` with their
/// time; whether a line was not a record.
fn show_one(
    file: &Path,
    tag: Option<&str>,
    filter: &Filter,
    json: bool,
    lines: &mut Vec<(String, String)>,
) -> Result<bool, Error> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::failure(format!("audit log {}: cannot read: {e}", file.display())))?;
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    let blocked = blocked_after(&parts);
    let mut bad = false;
    for (i, line) in parts.iter().enumerate() {
        match serde_json::from_slice::<Record>(line) {
            Ok(r) if !filter.keeps(&r) => {}
            // The line as the log holds it: the hash chain is over these bytes.
            Ok(_) if json => println!("{}", String::from_utf8_lossy(line)),
            Ok(r) => {
                let mut line = one_line(&r);
                if let Some(seq) = blocked.get(&(r.session.clone(), r.request.clone())) {
                    if r.kind.is_decision() && *seq > r.seq {
                        line.push_str(&format!(" [then blocked: #{seq}]"));
                    }
                }
                if let Some(tag) = tag {
                    line.push(' ');
                    line.push_str(tag);
                }
                lines.push((r.time.clone(), line));
            }
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
    Ok(bad)
}

/// The calls blocked after their decision was recorded (a refusal record for the same
/// session and request id: cordon could not run it, or the hook's deadline passed), by
/// (session, request id): the refusal's `seq`.
fn blocked_after(lines: &[&[u8]]) -> std::collections::HashMap<(String, String), u64> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_slice::<Record>(l).ok())
        .filter(|r| r.kind == audit::Kind::Refusal && !r.request.is_empty())
        .map(|r| ((r.session, r.request), r.seq))
        .collect()
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
    let decision = match (&r.kind, &r.deferred_to) {
        (k, _) if !k.is_decision() => format!("{} {}", k.as_str(), r.decision.as_str()),
        (_, Some(host)) => format!("ask (deferred to {host})"),
        _ => r.decision.as_str().to_string(),
    };
    let mut s = format!(
        "{} {} #{} {:<5} {} {} by {}: {}",
        r.time,
        r.session.get(..8).unwrap_or(&r.session),
        r.seq,
        decision,
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
