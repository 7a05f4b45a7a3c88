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
//! The log's **head** — the last record's `seq` and hash, what guards the end of the log
//! against truncation — is kept in the log file's own extended attribute `user.cordon.head`
//! (a log from before, or a file system without attributes: in `FILE.head` beside it).
//!
//! # Writing: durable before the tool runs, one sync
//!
//! [`AuditLog::append`] takes an exclusive lock on `FILE.lock` ([`cordon_fs::lock`]: blocking,
//! with a deadline, naming the real holder when it passes), checks that the log's name is
//! still its file (a log deleted or replaced under a live writer is recreated or reopened, and
//! the next record says so), reads the last line and the head, writes the whole new line with
//! **one** `write` call (O_APPEND), sets the head attribute, and makes both durable with **one**
//! `fsync`; only then does it return. A caller runs the tool only after `append` returned
//! `Ok`; if anything fails (a full disk), the line is cut back and the head restored: a record
//! that was not made durable is not in the log. Writers in several processes (or threads,
//! each with its own [`AuditLog`]) interleave whole records and keep one unbroken chain;
//! threads of one long-lived process share a [`SharedLog`] (group commit: one sync for the
//! records written meanwhile).
//!
//! # Crashes
//!
//! Earlier records are never rewritten. Every state a crash, kill or full disk can leave is
//! repaired by the next writer, which says what it repaired in its record's `repair` field: a
//! torn tail (moved to `FILE.torn-STAMP-RAND`), a head behind by any number of records (kills
//! between a line and its head), one ahead (a power failure before the sync: that decision
//! was never handed out), no head on a new log, `FILE.head.tmp-*` left by the old head
//! updates. A head that disagrees with a chain that is whole from seq 0 is said loudly
//! (`HEAD MISMATCH`) but does not stop later runs (on the Landlock backend a sandboxed command
//! can change a file's attributes). A last line that is complete but not a record makes the
//! writer refuse ([`crate::Error::Inconsistent`]), and the tool does not run, until a person
//! looks and moves the log aside: appending would bury the evidence. Every case, with how
//! it arises, is in docs/audit.md.
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
//! Without the head, deleting the last records is not detectable. When kills came between
//! records and their head updates, the head is behind and the last records are covered by
//! the chain alone; `verify` notes that.
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
    preview, AfterRunFinding, By, Connection, Kind, Record, FORMAT_VERSION, PREVIEW_MAX, ZERO_HASH,
};
pub use util::{canonical_json, new_id, rfc3339, sha256_hex};
pub use verify::{verify, Problem, ProblemKind, Report};
pub use writer::{
    head_path, lock_path, Appended, AuditLog, SharedLog, Unsynced, HEAD_XATTR, LOCK_DEADLINE,
};

/// The threat model in one sentence, for tools that print a verdict.
pub const THREAT_MODEL: &str = "the hash chain has no secret key: it detects edits, deletions, \
insertions and reordering, but not a complete rewrite of the log and its head file by someone \
who can write them";
