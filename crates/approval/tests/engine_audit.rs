//! Every final outcome of the engine — evaluated, answered, cascaded, timed out, unanswered —
//! lands in the audit log before the engine hands it out, and a log that cannot be written
//! denies.

use std::path::Path;
use std::time::Duration;

use cordon_approval::audit::{self, canonical_json, AuditLog, Record};
use cordon_approval::{
    Answer, ApprovalError, AskError, AsyncAsker, By, Engine, Key, Outcome, Pending, Request,
};
use cordon_policy::Policy;
use serde_json::json;

/// An engine whose asks time out after `timeout`: short only where a timeout is the point (an
/// answered batch must not race the clock: each record is fsynced, which takes milliseconds).
fn engine_with(log: &Path, timeout: &str) -> Engine {
    let text = format!("version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\n[approval]\ntimeout = \"{timeout}\"\n");
    let mut e = Engine::new(&Policy::parse(&text, "p.toml", Path::new("/")).unwrap());
    e.set_doom_loop(0);
    e.set_audit(AuditLog::open(log).unwrap().with_session("ab".repeat(16)));
    e
}

fn engine(log: &Path) -> Engine {
    engine_with(log, "50ms")
}

fn req(id: &str, line: &str) -> Request {
    Request::shell(id, vec![Key::split(line)]).with_args(json!({ "command": line }))
}

fn records(log: &Path) -> Vec<Record> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn digest(v: &serde_json::Value) -> String {
    audit::sha256_hex(canonical_json(v).as_bytes())
}

#[test]
fn a_batch_records_every_request_once_with_what_decided_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = engine_with(&log, "10m");
    let turn = vec![
        req("allowed", "ls -la"),
        req("denied", "rm -rf x"),
        req("session", "make"),
        req("covered", "make"),
        req("substituted", "cargo build"),
        req("noted", "cargo test"),
        req("left", "git push"),
    ];
    let mut b = e.batch(turn);
    // Evaluated outcomes are on disk before the batch is even answered.
    let early = records(&log);
    assert_eq!(
        early.iter().map(|r| r.request.as_str()).collect::<Vec<_>>(),
        ["allowed", "denied"]
    );
    b.answer("session", Answer::Session).unwrap();
    b.approve_with_args("substituted", json!({"command": "cargo build --release"}))
        .unwrap();
    b.reject("noted", Some("use nextest".into()), false)
        .unwrap();
    let done = b.finish();
    assert_eq!(done.len(), 7);

    let rs = records(&log);
    let by: Vec<(&str, &str, String)> = rs
        .iter()
        .map(|r| (r.request.as_str(), r.decision.as_str(), r.by.to_string()))
        .collect();
    assert_eq!(
        by,
        [
            ("allowed", "allow", "p.toml:2:1 (ls)".to_string()),
            ("denied", "deny", "p.toml:5:1 (rm)".to_string()),
            ("session", "allow", "user".to_string()),
            ("covered", "allow", "session-grant".to_string()),
            ("substituted", "allow", "user".to_string()),
            ("noted", "deny", "user".to_string()),
            ("left", "deny", "unanswered".to_string()),
        ]
    );
    for r in &rs {
        assert_eq!(r.session, "ab".repeat(16));
        assert_eq!(r.tool, "shell");
    }
    assert_eq!(rs[0].keys, [["ls", "-la"]]);
    assert_eq!(rs[0].args_digest, digest(&json!({"command": "ls -la"})));
    assert_eq!(
        rs[4].args_digest,
        digest(&json!({"command": "cargo build --release"})),
        "the substituted arguments are what was approved"
    );
    assert_eq!(
        rs[4].note.as_deref(),
        Some("arguments substituted by the user")
    );
    assert_eq!(rs[5].note.as_deref(), Some("use nextest"));
    assert!(audit::verify(&log).unwrap().is_intact());
}

#[test]
fn timeouts_and_lost_channels_are_recorded() {
    struct Silent;
    impl AsyncAsker for Silent {
        async fn ask(&mut self, _: &Request, _: &Pending) -> Result<Answer, AskError> {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(Answer::Once)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = engine(&log);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let o = rt.block_on(e.decide(&req("t", "make"), &mut Silent));
    assert_eq!(o.by(), &By::TimedOut);
    let mut lost = |_: &Request, _: &Pending, _| Err(AskError::Lost("tty closed".into()));
    let o = e.decide_blocking(&req("l", "make"), &mut lost);
    assert_eq!(o.by(), &By::ChannelLost);
    let rs = records(&log);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].by.to_string(), "timeout");
    assert_eq!(rs[1].by.to_string(), "channel");
    assert!(rs[1].reason.contains("tty closed"));
    assert!(audit::verify(&log).unwrap().is_intact());
}

#[test]
fn a_log_that_cannot_be_written_denies_even_an_allowed_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = engine(&log);
    assert!(e.evaluate(&req("1", "ls")).is_allowed());
    // Damage no crash explains: the writer refuses to append after it.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .map(|mut f| std::io::Write::write_all(&mut f, b"{\"not\":\"a record\"}\n"))
        .unwrap()
        .unwrap();
    let o = e.evaluate(&req("2", "ls"));
    assert_eq!(o.by(), &By::AuditFailed, "{o:?}");
    assert!(matches!(o.result(), Err(ApprovalError::AuditFailed { .. })));
    assert!(o.reason().contains("audit log"), "{}", o.reason());
    // A denial stays a denial, and says the record is missing.
    let o = e.evaluate(&req("3", "rm x"));
    assert!(matches!(o, Outcome::Denied { .. }));
    assert_eq!(o.by(), &By::AuditFailed);
    assert!(
        o.reason().contains("(deny by rule p.toml:5:1 (rm)"),
        "{}",
        o.reason()
    );
    assert_eq!(
        records_prefix(&log),
        1,
        "nothing was appended after the damage"
    );
}

fn records_prefix(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| serde_json::from_str::<Record>(l).is_ok())
        .count()
}

#[test]
fn an_always_rule_is_saved_before_its_record_and_a_failed_save_is_recorded_as_once() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = engine(&log);
    // The store sees the log as it was before the decision's record.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (seen2, log2) = (seen.clone(), log.clone());
    e.set_rule_store(move |a| {
        let before = std::fs::read_to_string(&log2)
            .unwrap_or_default()
            .lines()
            .count();
        seen2.lock().unwrap().push((a.pattern.clone(), before));
        if a.pattern.starts_with("make") {
            Ok(Some(a.to_toml()))
        } else {
            Err(cordon_approval::Error::RulesFile {
                path: "cordon.rules.toml".into(),
                source: std::io::Error::other("the rules file is read-only"),
            })
        }
    });
    let mut always = |_: &Request, _: &Pending, _| Ok(Answer::Always);
    match e.decide_blocking(&req("saved", "make all"), &mut always) {
        Outcome::Allowed {
            by,
            reason,
            amendments,
        } => {
            assert_eq!(by, By::User);
            assert_eq!(
                reason,
                "approved by the user always (rule saved: `make all`)"
            );
            assert!(amendments.is_empty(), "nothing left for the host to save");
        }
        other => panic!("{other:?}"),
    }
    match e.decide_blocking(&req("failed", "cargo build"), &mut always) {
        Outcome::Allowed { reason, .. } => assert_eq!(
            reason,
            "approved once by the user; the rule `cargo build` could not be saved: cordon.rules.toml: the rules file is read-only"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [("make all".to_string(), 0), ("cargo build".to_string(), 1)]
    );
    let r = records(&log);
    assert_eq!(r.len(), 2);
    assert!(r[0].reason.contains("rule saved"), "{:?}", r[0]);
    assert!(r[1].reason.contains("could not be saved"), "{:?}", r[1]);
    // A failed save grants nothing for the session either: the next identical call asks again.
    let mut once = |_: &Request, _: &Pending, _| Ok(Answer::Deny);
    match e.decide_blocking(&req("again", "cargo build"), &mut once) {
        Outcome::Denied { by, .. } => assert_eq!(by, By::User),
        other => panic!("{other:?}"),
    }
}

/// An engine like [`engine`] whose log the test holds, to count its syncs.
fn engine_shared(log: &Path) -> (Engine, std::sync::Arc<audit::SharedLog>) {
    let mut e = engine(log);
    let shared = std::sync::Arc::new(audit::SharedLog::new(
        AuditLog::open(log).unwrap().with_session("ab".repeat(16)),
    ));
    e.set_shared_audit(shared.clone());
    (e, shared)
}

#[test]
fn decisions_written_before_a_sync_share_it_and_each_is_handed_out_only_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let (mut e, shared) = engine_shared(&log);
    // The first record of a new log repairs its missing head and is synced alone.
    assert!(e.evaluate(&req("first", "ls")).is_allowed());
    let before = shared.syncs();
    // Two decisions written (as two threads would, one after the other under the engine's
    // lock), then both waited for: one sync covers both.
    let a = e.evaluate_unsynced(&req("a", "ls -la"));
    let b = e.evaluate_unsynced(&req("b", "rm -rf x"));
    assert_eq!(
        records(&log).len(),
        3,
        "both lines are written before any sync"
    );
    assert!(a.durable().is_allowed());
    assert!(matches!(
        b.durable(),
        Outcome::Denied {
            by: By::Rule { .. },
            ..
        }
    ));
    assert_eq!(shared.syncs() - before, 1, "one sync for the two records");
    let report = audit::verify(&log).unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.records, 3);
}

#[test]
fn concurrent_decisions_through_one_locked_engine_share_syncs_and_lose_none() {
    const THREADS: usize = 8;
    const CALLS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let (mut e, shared) = engine_shared(&log);
    assert!(e.evaluate(&req("first", "ls")).is_allowed());
    let before = shared.syncs();
    let engine = std::sync::Arc::new(std::sync::Mutex::new(e));
    let started = std::time::Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for i in 0..CALLS {
                    let id = format!("t{t}-{i}");
                    // As the gate does: written under the engine's lock, synced after it.
                    let decided = engine.lock().unwrap().evaluate_unsynced(&req(&id, "ls -l"));
                    let outcome = decided.durable();
                    assert!(outcome.is_allowed(), "{outcome:?}");
                    ids.push(id);
                }
                ids
            })
        })
        .collect();
    let ids: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let elapsed = started.elapsed();
    let syncs = shared.syncs() - before;
    let total = THREADS * CALLS;
    eprintln!(
        "{total} decisions on {THREADS} threads: {syncs} syncs, {:.1} ms (load: {})",
        elapsed.as_secs_f64() * 1e3,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    assert!(
        (syncs as usize) < total,
        "{syncs} syncs for {total} concurrent records: no group commit"
    );
    let recs = records(&log);
    assert_eq!(recs.len(), total + 1);
    for id in &ids {
        assert_eq!(recs.iter().filter(|r| &r.request == id).count(), 1, "{id}");
    }
    let report = audit::verify(&log).unwrap();
    assert!(report.is_intact(), "{report:?}");
}
