//! The audit log's costs (issue 25), run by benches/audit-append.sh: one durable append
//! (median of N, each its own process-style open + append), and 100 records appended at once
//! by 100 threads, each with its own writer (one sync each) and through one
//! [`audit::SharedLog`] (group commit).
//!
//! `cargo run --release -p cordon-approval --example audit_bench -- DIR`

use std::time::{Duration, Instant};

use cordon_approval::audit::{self, AuditLog, By, Record};
use cordon_policy::Action;

fn record(i: usize) -> Record {
    let cmd = format!("curl https://index.example.org/{i}");
    Record::new("network", Action::Allow, By::Default, "bench")
        .keys([["network".to_string(), format!("index.example.org:{i}")]])
        .args(&serde_json::json!({ "command": cmd }))
        .preview(&cmd)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("DIR"));
    // A fresh directory each run: the log, its lock and (before issue 25) its head file.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench-audit.jsonl");
    // One append as `cordon hook` makes it: open, append (one fsync), drop.
    let mut one = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        AuditLog::open(&path).unwrap().append(&record(i)).unwrap();
        one.push(t.elapsed());
    }
    println!(
        "open+append (durable), median of 200: {:.3} ms",
        median(one).as_secs_f64() * 1000.0
    );
    // 100 records at once, one writer each (each pays its own sync).
    let runs = 5;
    let mut separate = Vec::new();
    let mut grouped = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        std::thread::scope(|s| {
            for i in 0..100 {
                let p = &path;
                s.spawn(move || AuditLog::open(p).unwrap().append(&record(i)).unwrap());
            }
        });
        separate.push(t.elapsed());
        let shared = audit::SharedLog::new(AuditLog::open(&path).unwrap());
        let t = Instant::now();
        std::thread::scope(|s| {
            for i in 0..100 {
                let l = &shared;
                s.spawn(move || l.append(&record(i)).unwrap());
            }
        });
        grouped.push(t.elapsed());
    }
    println!(
        "100 parallel records, a writer each: median of {runs} {:.1} ms",
        median(separate).as_secs_f64() * 1000.0
    );
    println!(
        "100 parallel records, one SharedLog (group commit): median of {runs} {:.1} ms",
        median(grouped).as_secs_f64() * 1000.0
    );
    assert!(audit::verify(&path).unwrap().is_intact());
}
