//! The audit log: one JSON line per decision, hash-chained, durable before the tool runs.
//!
//! # Format
//!
//! A log is a file of JSON Lines (UTF-8, one object per line, `\n`-terminated). Each line is
//! one [`Record`], its fields in this order (`deferred_to`, `note` and `repair` only when set):
//!
//! ```text
//! {"v":1,"time":"2025-06-01T12:00:00.123Z","session":"3f2a9c1e5b7d40a1b2c3d4e5f6a7b8c9",
//!  "seq":0,"request":"9c0d…","tool":"shell","keys":[["git","status"],["ls","-la"]],
//!  "args_digest":"5e1b…","preview":"git status && ls -la","decision":"allow",
//!  "by":{"kind":"rule","at":"/w/cordon.toml:8:1","pattern":"git *"},
//!  "reason":"rule `git *` says allow","prev":"0000000000000000000000000000000000000000000000000000000000000000"}
//! ```
//!
//! (shown wrapped; on disk it is one line). `seq` counts records in the file from 0 with no
//! gaps. `prev` is the SHA-256 (hex) of the previous line's exact bytes without its newline,
//! 64 zeros for the first record. `args_digest` is the SHA-256 of the arguments' canonical
//! JSON ([`canonical_json`]): whoever holds the arguments can prove which call a record is
//! about without the log storing them. `by` says what decided: a rule (`file:line:col` and
//! pattern), the default, a built-in check, a mode, the user, a timeout, the doom-loop
//! guard, a session or persisted grant, or a failed approval channel (see [`By`]). One kind
//! records no decision before a call but what cordon found after it ran: `by` is
//! `{"kind":"after-run"}`, `request` the run's, one key `[KIND, PATH]` per file the run left
//! that makes the operator's tools run code ([`Record::after_run`]). Another records a
//! connection through cordon's network proxy, at its opening and at its close (or its
//! refusal): `by` is `{"kind":"connection"}`, tool `network`, one key `["network",
//! "HOST:PORT"]`, and a `connection` field with the protocol, host, port, the address
//! connected to, the rule that decided, bytes each way and the duration
//! ([`Record::connection`]).
//!
//! Beside the log, `FILE.head` holds the last record's `seq` and hash
//! (`{"v":1,"seq":41,"hash":"…"}`), replaced atomically after each append.
//!
//! # Writing: durable before the tool runs
//!
//! [`AuditLog::append`] takes an exclusive `flock` on the file, reads its last line to link
//! to it (`prev`, `seq`), writes the whole new line with **one** `write` call (the file is
//! opened `O_APPEND`), `fdatasync`s it, updates the head file, and only then returns. A
//! caller runs the tool only after `append` returned `Ok`, so a tool never runs without its
//! record on disk; if the log cannot be written the caller must not run the tool (fail
//! closed). Writers in several processes (or threads, each with its own [`AuditLog`])
//! interleave whole records and keep one unbroken chain.
//!
//! # Crashes
//!
//! Earlier records are never rewritten. A crash (even `SIGKILL`) during a `write` can only
//! leave the *last* line incomplete, without its newline: a **torn tail**. Its decision
//! never took effect, because `append` had not returned. [`verify`] reports it as
//! [`ProblemKind::TornTail`], apart from tampering. The next `append` copies the torn bytes to
//! `FILE.torn-STAMP-RAND` (fsynced), truncates them away, and says so in its record's `repair`
//! field, so nothing is silently dropped. A state no crash leaves — a last line that is complete
//! but not a valid record, a head file that is missing or disagrees with the log by more than
//! the one record a crash between the two writes explains — makes the writer refuse
//! ([`crate::Error::Inconsistent`]), and the tool does not run, until a person looks and moves the log
//! aside: appending would bury the evidence. A head file one record behind is accepted and
//! noted in the next record's `repair` field.
//!
//! # What `verify` detects, and the threat model
//!
//! [`verify`] rebuilds the chain and names the line at fault: a changed record (the next
//! record's `prev`, or the head file for the last one, no longer matches), deleted records
//! (a `seq` gap where the chain breaks; deleted final records through the head file),
//! inserted or duplicated lines (not reachable in the chain), reordered lines (reachable,
//! but out of file order), malformed lines and a torn tail.
//!
//! The chain has **no secret key**. It detects accidental corruption and any tampering that
//! does not also rewrite every later record and the head file. Someone who can write the
//! file can recompute the whole chain from the point of the change (or write a whole new
//! log), and `verify` will call that log intact. Keep the log where the audited agent cannot
//! write — outside the sandbox's writable roots, or under `sandbox.protected` — and ship it
//! (or just its head hash) somewhere append-only if you need evidence against its owner.
//! Without the head file, deleting the last records is not detectable. When a crash came
//! between a record and its head update, the head is one record behind and the last record
//! is covered by the chain alone; `verify` notes that.
//!
//! ```
//! use cordon_approval::audit::{self, AuditLog, By, ProblemKind, Record};
//! use cordon_policy::Action;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("audit.jsonl");
//! let mut log = AuditLog::open(&path).unwrap();
//! for cmd in ["git status", "ls -la", "rm -rf /"] {
//!     let (decision, by) = if cmd.starts_with("rm") {
//!         (Action::Deny, By::Rule { at: "cordon.toml:9:1".into(), pattern: "rm -rf *".into() })
//!     } else {
//!         (Action::Allow, By::Default)
//!     };
//!     let record = Record::new("shell", decision, by, "example")
//!         .keys([cmd.split(' ')])
//!         .args(&serde_json::json!({ "command": cmd }))
//!         .preview(cmd);
//!     log.append(&record).unwrap(); // durable when this returns
//! }
//! let report = audit::verify(&path).unwrap();
//! assert!(report.is_intact());
//! assert_eq!(report.records, 3);
//!
//! // Rewrite the denial as an allow: the chain no longer matches.
//! let text = std::fs::read_to_string(&path).unwrap();
//! std::fs::write(&path, text.replace(r#""decision":"deny""#, r#""decision":"allow""#)).unwrap();
//! let report = audit::verify(&path).unwrap();
//! assert_eq!(report.problems[0].line, 3);
//! assert_eq!(report.problems[0].kind, ProblemKind::Modified);
//! ```

mod record;
mod util;
mod verify;
mod writer;

pub use record::{
    preview, AfterRunFinding, By, Connection, Record, FORMAT_VERSION, PREVIEW_MAX, ZERO_HASH,
};
pub use util::{canonical_json, new_id, rfc3339, sha256_hex};
pub use verify::{verify, Problem, ProblemKind, Report};
pub use writer::{head_path, lock_path, Appended, AuditLog, LOCK_DEADLINE};

/// The threat model in one sentence, for tools that print a verdict.
pub const THREAT_MODEL: &str = "the hash chain has no secret key: it detects edits, deletions, \
insertions and reordering, but not a complete rewrite of the log and its head file by someone \
who can write them";
