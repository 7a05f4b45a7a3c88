//! The audit log's reliability harness (issue 25): kill -9 at random points, a full disk, a
//! log deleted or replaced under a live writer, 32 parallel writers. Each part counts wedged
//! logs, lost acknowledged records and misleading refusals, prints them, and requires 0.
//! Bounded to well under a minute on a loaded 2-core machine.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cordon_approval::audit::{self, AuditLog, By, Record};
use cordon_policy::Action;

const CHILD_MODE: &str = "CORDON_AUDIT_HARNESS_CHILD";

fn record(i: usize, pad: usize) -> Record {
    let cmd = format!("echo {i} {}", "x".repeat(pad));
    Record::new("shell", Action::Allow, By::Default, format!("reason {i}"))
        .keys([cmd.split(' ')])
        .args(&serde_json::json!({ "command": cmd }))
        .preview(&cmd)
}

fn hashes(path: &Path) -> HashSet<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| audit::sha256_hex(l.as_bytes()))
        .collect()
}

/// The child: appends until killed, printing each acknowledged record's hash.
#[test]
fn child_writer() {
    let Some(path) = std::env::var_os(CHILD_MODE) else {
        return;
    };
    let mut log = AuditLog::open(PathBuf::from(path)).unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        // Some records span pages, so a kill can cut a write short.
        let a = log.append(&record(i, (i * 1237) % 9000)).unwrap();
        writeln!(out, "{}", a.hash).unwrap();
        out.flush().unwrap();
    }
}

/// A cheap random number (the harness needs no cryptographic randomness).
fn rand_below(n: u64) -> u64 {
    let mut buf = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .unwrap();
    u64::from_le_bytes(buf) % n
}

/// The child of a long-lived front end (the proxy): 4 threads, each writing a decision and
/// then an "open record" through one `SharedLog`, waiting for the decision only after the
/// second is written (as a proxied connection does: one group sync for both), and printing
/// both hashes once both are durable. Killed at random, including between the two writes
/// and during the shared sync.
#[test]
fn child_shared_writer() {
    let Some(path) = std::env::var_os(CHILD_MODE) else {
        return;
    };
    let log = std::sync::Arc::new(audit::SharedLog::new(
        AuditLog::open(PathBuf::from(path)).unwrap(),
    ));
    let out = std::sync::Arc::new(std::sync::Mutex::new(()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (log, out) = (log.clone(), out.clone());
            std::thread::spawn(move || {
                for i in 0.. {
                    let decision = log.write(&record(i * 4 + t, (i * 733) % 5000)).unwrap();
                    let open = log.write(&record(i * 4 + t, 10)).unwrap();
                    let d = log.durable(decision).unwrap();
                    let o = log.durable(open).unwrap();
                    let _g = out.lock().unwrap();
                    let mut stdout = std::io::stdout().lock();
                    writeln!(stdout, "{}\n{}", d.hash, o.hash).unwrap();
                    stdout.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn kill_9_at_random_points_never_wedges_or_loses_an_acknowledged_record() {
    kill_9_trials("child_writer", 60);
}

/// The same with the group commit of a long-lived front end: a decision and its connection's
/// open record written, then one sync for both, on 4 threads at once.
#[test]
fn kill_9_during_group_commits_of_decisions_and_open_records_never_wedges_or_loses_one() {
    kill_9_trials("child_shared_writer", 40);
}

fn kill_9_trials(child_test: &str, trials: usize) {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let exe = std::env::current_exe().unwrap();
    let (mut wedged, mut lost, mut repairs) = (0, 0, 0);
    let mut acked: Vec<String> = Vec::new();
    let started = Instant::now();
    for _ in 0..trials {
        let mut child = Command::new(&exe)
            .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
            .env(CHILD_MODE, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter(|l| l.len() == 64)
                .collect::<Vec<_>>()
        });
        // Wait until it has written something, then kill it at a random moment.
        std::thread::sleep(Duration::from_millis(20 + rand_below(60)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        acked.extend(reader.join().unwrap());
        // The next writer is never refused: whatever the kill left is repaired.
        match AuditLog::open(&path).and_then(|mut l| l.append(&record(0, 0))) {
            Ok(_) => {}
            Err(e) => {
                wedged += 1;
                eprintln!("wedged: {e}");
            }
        }
    }
    let present = hashes(&path);
    lost += acked.iter().filter(|h| !present.contains(*h)).count();
    let report = audit::verify(&path).unwrap();
    repairs += report
        .notes
        .iter()
        .filter(|n| n.contains("torn tail") || n.contains("behind"))
        .count();
    eprintln!(
        "kill -9 harness ({child_test}): {trials} kills in {:.1} s, {} acknowledged records, {} records in the \
         log, {repairs} repair records, {wedged} wedged, {lost} lost, verify: {}",
        started.elapsed().as_secs_f64(),
        acked.len(),
        report.records,
        if report.is_intact() {
            "intact"
        } else {
            "PROBLEMS"
        }
    );
    assert_eq!((wedged, lost), (0, 0));
    assert!(report.is_intact(), "{:?}", report.problems);
    assert!(
        acked.len() > trials,
        "the children wrote too little to test anything"
    );
}

#[test]
fn thirty_two_parallel_writers_are_never_refused() {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let (writers, each) = (32, 15);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(writers));
    let started = Instant::now();
    let results: Vec<(usize, Duration, Vec<String>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..writers)
            .map(|w| {
                let (path, barrier) = (path.clone(), barrier.clone());
                s.spawn(move || {
                    let mut log = AuditLog::open(&path).unwrap();
                    barrier.wait();
                    let (mut refused, mut worst) = (0, Duration::ZERO);
                    let mut acked = Vec::new();
                    for i in 0..each {
                        let t = Instant::now();
                        match log.append(&record(w * 1000 + i, 0)) {
                            Ok(a) => acked.push(a.hash),
                            Err(e) => {
                                refused += 1;
                                eprintln!("refused: {e}");
                            }
                        }
                        worst = worst.max(t.elapsed());
                    }
                    (refused, worst, acked)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let refused: usize = results.iter().map(|r| r.0).sum();
    let worst = results.iter().map(|r| r.1).max().unwrap();
    let present = hashes(&path);
    let lost = results
        .iter()
        .flat_map(|r| &r.2)
        .filter(|h| !present.contains(*h))
        .count();
    let report = audit::verify(&path).unwrap();
    eprintln!(
        "32 writers: {} appends in {:.2} s, longest append {:.0} ms, {refused} refused, {lost} \
         lost, verify: {}",
        writers * each,
        started.elapsed().as_secs_f64(),
        worst.as_secs_f64() * 1000.0,
        if report.is_intact() {
            "intact"
        } else {
            "PROBLEMS"
        }
    );
    assert_eq!((refused, lost), (0, 0));
    assert!(report.is_intact(), "{:?}", report.problems);
    assert_eq!(report.records, writers * each);
}

#[test]
fn a_log_deleted_or_replaced_under_a_live_writer_is_followed_and_said() {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path).unwrap();
    log.append(&record(0, 0)).unwrap();
    log.append(&record(1, 0)).unwrap();
    // Deleted (the log and its lock file, as `rm audit.jsonl*` would): the next record goes
    // into a new log at the name, which says what happened.
    for f in std::fs::read_dir(d.path()).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let a = log.append(&record(2, 0)).unwrap();
    assert_eq!(a.seq, 0, "a new log");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("had been deleted while a writer"), "{text}");
    assert!(audit::verify(&path).unwrap().is_intact());
    // Another writer (another process, say) sees the same file and lock.
    AuditLog::open(&path)
        .unwrap()
        .append(&record(3, 0))
        .unwrap();
    // Replaced by another log: the writer continues that file's chain.
    let other = d.path().join("other.jsonl");
    let mut o = AuditLog::open(&other).unwrap();
    for i in 0..3 {
        o.append(&record(10 + i, 0)).unwrap();
    }
    std::fs::rename(&other, &path).unwrap();
    let a = log.append(&record(4, 0)).unwrap();
    assert_eq!(a.seq, 3);
    let last = std::fs::read_to_string(&path).unwrap();
    assert!(
        last.lines()
            .last()
            .unwrap()
            .contains("had been replaced by another file"),
        "{last}"
    );
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// A full disk (a 1 MiB tmpfs mounted by the test; needs root, as CI runs): every refusal
/// says the disk is full, the log never holds a record whose append failed, and once space
/// is freed the next writer goes on — no wedge.
#[test]
fn a_full_disk_refuses_honestly_and_leaves_nothing_to_repair() {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    assert!(
        rustix::process::geteuid().is_root(),
        "this test mounts a small tmpfs and needs root (CI runs as root)"
    );
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "cordon-audit-test"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(ok.success(), "mount tmpfs");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(mnt.clone());
    let path = mnt.join("audit.jsonl");
    let mut log = AuditLog::open(&path).unwrap();
    log.append(&record(0, 0)).unwrap();
    // Fill the disk but for a few KiB.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.set_len(f.metadata().unwrap().len().saturating_sub(3 * 4096));
    f.sync_all().unwrap();
    drop(f);
    let (mut acked, mut refused, mut misleading) = (vec![], 0, 0);
    for i in 1..40 {
        match log.append(&record(i, 2500)) {
            Ok(a) => acked.push(a.hash),
            Err(e) => {
                refused += 1;
                if !e.to_string().contains("No space left on device") {
                    misleading += 1;
                    eprintln!("misleading refusal: {e}");
                }
            }
        }
        let r = audit::verify(&path).unwrap();
        assert!(r.is_intact(), "after append {i}: {:?}", r.problems);
    }
    let present = hashes(&path);
    let lost = acked.iter().filter(|h| !present.contains(*h)).count();
    let in_log = present.len();
    // Space freed: the next writer appends, nothing to repair.
    std::fs::remove_file(&filler).unwrap();
    let mut wedged = 0;
    if let Err(e) = AuditLog::open(&path).and_then(|mut l| l.append(&record(99, 0))) {
        wedged = 1;
        eprintln!("wedged: {e}");
    }
    let r = audit::verify(&path).unwrap();
    eprintln!(
        "full disk: {} acknowledged, {refused} refused ({misleading} misleading), {in_log} \
         records in the log, {lost} lost, {wedged} wedged after space was freed, verify: {}",
        acked.len(),
        if r.is_intact() { "intact" } else { "PROBLEMS" }
    );
    assert!(
        refused > 0,
        "the disk never filled: the test tested nothing"
    );
    assert_eq!((misleading, lost, wedged), (0, 0, 0));
    // Only acknowledged records (and the first) are in the log: a refused call is not in it.
    assert_eq!(in_log, acked.len() + 1);
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(r.notes.is_empty(), "nothing to repair: {:?}", r.notes);
}

/// Group commit: 100 records appended at once by 100 threads share syncs; every one is in the
/// log, the chain is whole, and each `append` returned only after a sync covering it.
#[test]
fn a_shared_log_groups_concurrent_records_into_few_syncs() {
    if std::env::var_os(CHILD_MODE).is_some() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let log = audit::SharedLog::new(AuditLog::open(&path).unwrap());
    log.append(&record(0, 0)).unwrap();
    let n = 100;
    let barrier = std::sync::Barrier::new(n);
    let started = Instant::now();
    let acked: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let (log, barrier) = (&log, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    log.append(&record(i, 0)).unwrap().hash
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let took = started.elapsed();
    let present = hashes(&path);
    assert!(acked.iter().all(|h| present.contains(h)));
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert_eq!(r.records, n + 1);
    eprintln!(
        "group commit: {n} parallel records in {:.1} ms",
        took.as_secs_f64() * 1000.0
    );
}
