//! The audit log against real files: the chain, tampering of every kind, concurrent writers
//! (threads and processes), and crashes (a writer SIGKILLed mid-record, a write cut short).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cordon_approval::audit::{self, AuditLog, By, ProblemKind, Record, Report, ZERO_HASH};
use cordon_policy::Action;

/// Environment variables that turn this test binary into a helper process.
const CHILD_MODE: &str = "CORDON_AUDIT_TEST_CHILD";
const CHILD_PATH: &str = "CORDON_AUDIT_TEST_PATH";

fn record(i: usize) -> Record {
    let cmd = format!("echo {i}");
    Record::new(
        "shell",
        if i % 3 == 2 {
            Action::Deny
        } else {
            Action::Allow
        },
        By::Default,
        format!("reason {i}"),
    )
    .keys([cmd.split(' ')])
    .args(&serde_json::json!({ "command": cmd }))
    .preview(&cmd)
}

fn log_with(n: usize) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path).unwrap();
    for i in 0..n {
        log.append(&record(i)).unwrap();
    }
    (d, path)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(
        path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
}

/// The head kept in the log's attribute (`user.cordon.head`): `(seq, hash)`.
fn head_of(path: &Path) -> Option<(u64, String)> {
    let f = std::fs::File::open(path).unwrap();
    let mut buf = [0u8; 64];
    let n = rustix::fs::fgetxattr(&f, audit::HEAD_XATTR, &mut buf[..]).ok()?;
    assert_eq!((n, buf[0]), (41, b'2'));
    let seq = u64::from_le_bytes(buf[1..9].try_into().unwrap());
    let hash: String = buf[9..41].iter().map(|b| format!("{b:02x}")).collect();
    Some((seq, hash))
}

/// Sets the head attribute as cordon's writer does (or to `raw` bytes).
fn set_head(path: &Path, seq: u64, hash: &str) {
    let mut v = vec![b'2'];
    v.extend_from_slice(&seq.to_le_bytes());
    for i in 0..32 {
        v.push(u8::from_str_radix(&hash[2 * i..2 * i + 2], 16).unwrap());
    }
    set_head_raw(path, &v);
}

fn set_head_raw(path: &Path, v: &[u8]) {
    let f = std::fs::File::open(path).unwrap();
    rustix::fs::fsetxattr(&f, audit::HEAD_XATTR, v, rustix::fs::XattrFlags::empty()).unwrap();
}

fn remove_head(path: &Path) {
    let f = std::fs::File::open(path).unwrap();
    rustix::fs::fremovexattr(&f, audit::HEAD_XATTR).unwrap();
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap()
}

/// (line, kind) of each problem.
fn found(r: &Report) -> Vec<(usize, ProblemKind)> {
    r.problems.iter().map(|p| (p.line, p.kind)).collect()
}

#[test]
fn records_form_a_chain_with_seq_and_head() {
    let (_d, path) = log_with(5);
    let ls = lines(&path);
    assert_eq!(ls.len(), 5);
    let mut prev = ZERO_HASH.to_string();
    let mut session = None;
    for (i, l) in ls.iter().enumerate() {
        let v = json(l);
        assert_eq!(v["v"], 1);
        assert_eq!(v["seq"], i as u64);
        assert_eq!(v["prev"], prev.as_str(), "line {}", i + 1);
        assert_eq!(v["tool"], "shell");
        assert_eq!(v["keys"], serde_json::json!([["echo", i.to_string()]]));
        assert_eq!(v["by"], serde_json::json!({"kind": "default"}));
        assert_eq!(v["decision"], if i % 3 == 2 { "deny" } else { "allow" });
        let t = v["time"].as_str().unwrap();
        assert!(
            t.len() == 24 && t.ends_with('Z') && &t[10..11] == "T",
            "{t}"
        );
        assert_eq!(v["session"].as_str().unwrap().len(), 32);
        assert_eq!(v["request"].as_str().unwrap().len(), 32);
        // one session per AuditLog
        assert_eq!(*session.get_or_insert(v["session"].clone()), v["session"]);
        // field order is the documented one
        assert!(l.starts_with(r#"{"v":1,"time":""#), "{l}");
        assert!(l.contains(r#","prev":""#) && l.ends_with("\"}"), "{l}");
        prev = audit::sha256_hex(l.as_bytes());
    }
    // The head is in the log's own attribute (one sync covers both); no head file.
    assert_eq!(head_of(&path), Some((4, prev)));
    assert!(!audit::head_path(&path).exists());
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert_eq!((r.lines, r.records), (5, 5));
    assert_eq!((r.first_seq, r.last_seq), (Some(0), Some(4)));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn a_new_writer_continues_the_chain_of_the_file() {
    let (_d, path) = log_with(3);
    let mut log = AuditLog::open(&path).unwrap();
    let a = log.append(&record(3)).unwrap();
    assert_eq!(a.seq, 3);
    assert_eq!(a.torn_moved_to, None);
    let ls = lines(&path);
    assert_eq!(
        json(&ls[3])["prev"],
        audit::sha256_hex(ls[2].as_bytes()).as_str()
    );
    assert_ne!(json(&ls[3])["session"], json(&ls[2])["session"]);
    assert_eq!(a.hash, audit::sha256_hex(ls[3].as_bytes()));
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// Applies `edit` to the lines of a fresh 10-record log and verifies.
fn tampered(edit: impl FnOnce(&mut Vec<String>)) -> Report {
    let (d, path) = log_with(10);
    let mut ls = lines(&path);
    edit(&mut ls);
    write_lines(&path, &ls);
    let r = audit::verify(&path).unwrap();
    drop(d);
    r
}

#[test]
fn an_edited_field_is_found_at_its_line() {
    for line in [1, 5, 9, 10] {
        let r = tampered(|ls| {
            let l = &mut ls[line - 1];
            *l = l.replace(&format!("\"reason {}\"", line - 1), "\"all fine\"");
        });
        assert_eq!(found(&r), [(line, ProblemKind::Modified)], "edit at {line}");
        assert!(r.tampered());
    }
    // The decision itself, on a denied record.
    let r = tampered(|ls| ls[2] = ls[2].replace(r#""decision":"deny""#, r#""decision":"allow""#));
    assert_eq!(found(&r), [(3, ProblemKind::Modified)]);
    // The seq field.
    let r = tampered(|ls| ls[4] = ls[4].replace(r#""seq":4,"#, r#""seq":40,"#));
    assert_eq!(r.problems[0].line, 5, "{:?}", r.problems);
    // The prev field: the line whose link was rewritten is reported.
    let r = tampered(|ls| {
        let v = json(&ls[5]);
        let old = v["prev"].as_str().unwrap().to_string();
        ls[5] = ls[5].replace(&old, &"ab".repeat(32));
    });
    assert_eq!(r.problems[0].line, 6, "{:?}", r.problems);
    // Whitespace only is still a change.
    let r = tampered(|ls| ls[6] = ls[6].replacen(':', ": ", 1));
    assert_eq!(found(&r), [(7, ProblemKind::Modified)]);
}

#[test]
fn a_deleted_record_is_found_where_it_was() {
    let r = tampered(|ls| {
        ls.remove(4);
    });
    assert_eq!(found(&r), [(5, ProblemKind::Missing)], "{:?}", r.problems);
    assert!(r.problems[0]
        .message
        .contains("1 record(s) missing before this line (seq 4..=4)"));
    let r = tampered(|ls| {
        ls.drain(3..6);
    });
    assert_eq!(found(&r), [(4, ProblemKind::Missing)], "{:?}", r.problems);
    let r = tampered(|ls| {
        ls.remove(0);
    });
    assert_eq!(found(&r), [(1, ProblemKind::Missing)], "{:?}", r.problems);
    // The last records: only the head file can tell.
    let r = tampered(|ls| {
        ls.truncate(8);
    });
    assert_eq!(found(&r), [(9, ProblemKind::Missing)], "{:?}", r.problems);
    assert!(r.problems[0]
        .message
        .contains("2 record(s) missing at the end"));
    let r = tampered(|ls| ls.clear());
    assert_eq!(found(&r), [(1, ProblemKind::Missing)], "{:?}", r.problems);
}

#[test]
fn an_inserted_line_is_found_at_its_line() {
    // A copy of an earlier record.
    let r = tampered(|ls| {
        let copy = ls[2].clone();
        ls.insert(4, copy);
    });
    assert_eq!(found(&r), [(5, ProblemKind::Inserted)], "{:?}", r.problems);
    // A forgery that links correctly to the line before it and takes its seq.
    let r = tampered(|ls| {
        let mut v = json(&ls[4]);
        v["reason"] = "forged".into();
        v["prev"] = audit::sha256_hex(ls[3].as_bytes()).into();
        ls.insert(4, v.to_string());
    });
    assert_eq!(found(&r), [(5, ProblemKind::Inserted)], "{:?}", r.problems);
    // Garbage.
    let r = tampered(|ls| ls.insert(7, "{\"hello\":1}".into()));
    assert_eq!(found(&r), [(8, ProblemKind::BadRecord)], "{:?}", r.problems);
    // An empty line.
    let r = tampered(|ls| ls.insert(2, String::new()));
    assert_eq!(found(&r), [(3, ProblemKind::BadRecord)], "{:?}", r.problems);
    // Records appended at the end with correct links look exactly like records whose head
    // updates were killed: noted (the head is behind), not called forged — the next writer
    // repairs it (issue 25: honest records must not look inserted).
    let r = tampered(|ls| {
        for seq in 10..12 {
            let mut v = json(&ls[9]);
            v["seq"] = seq.into();
            v["prev"] = audit::sha256_hex(ls.last().unwrap().as_bytes()).into();
            ls.push(v.to_string());
        }
    });
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(r.notes[0].contains("2 record(s) behind"), "{:?}", r.notes);
}

#[test]
fn a_head_one_record_behind_is_noted_by_verify_and_by_the_next_record() {
    // One record appended without updating the head file looks exactly like a crash between
    // the two writes: accepted, but noted, by verify and in the next record.
    let (_d, path) = log_with(4);
    let mut ls = lines(&path);
    let mut v = json(&ls[3]);
    v["seq"] = 4.into();
    v["prev"] = audit::sha256_hex(ls[3].as_bytes()).into();
    ls.push(v.to_string());
    write_lines(&path, &ls);
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(r.notes[0].contains("1 record(s) behind"), "{:?}", r.notes);
    AuditLog::open(&path).unwrap().append(&record(5)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("the head was 1 record(s) behind: seq 4..=4"),
        "{last}"
    );
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(
        r.notes[0].starts_with("line 6: the head was 1 record(s) behind"),
        "{:?}",
        r.notes
    );
}

#[test]
fn the_writer_refuses_to_bury_evidence() {
    // Two records deleted at the end: no crash explains it (the head is two ahead). The
    // chain left is whole, so the head alone stands against it (and on Landlock a sandboxed
    // command can change a file's attributes): the next record says so loudly, and the
    // operator's work goes on.
    let (_d, path) = log_with(4);
    let mut ls = lines(&path);
    ls.truncate(2);
    write_lines(&path, &ls);
    assert!(audit::verify(&path).unwrap().tampered());
    AuditLog::open(&path).unwrap().append(&record(9)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("HEAD MISMATCH: the head recorded seq 3"),
        "{last}"
    );
    // A record changed in the middle: the chain is broken, and appending would bury it.
    let (_d, path) = log_with(4);
    let mut ls = lines(&path);
    ls[1] = ls[1].replace("reason 1", "reason X");
    write_lines(&path, &ls);
    let (seq, _) = head_of(&path).unwrap();
    set_head(&path, seq + 5, &audit::sha256_hex(b"x"));
    let before = std::fs::read(&path).unwrap();
    let e = AuditLog::open(&path)
        .unwrap()
        .append(&record(9))
        .unwrap_err();
    assert!(
        matches!(e, cordon_approval::Error::Inconsistent { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("its chain is broken"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    // The last record deleted: the head one ahead is also what a power failure before the
    // sync leaves (that decision was never handed out). Reported by verify, then repaired
    // by the next writer with a record that names the missing one.
    let (_d, path) = log_with(4);
    let mut ls = lines(&path);
    let gone = audit::sha256_hex(ls.pop().unwrap().as_bytes());
    write_lines(&path, &ls);
    let r = audit::verify(&path).unwrap();
    assert_eq!(found(&r), [(4, ProblemKind::Missing)], "{:?}", r.problems);
    AuditLog::open(&path).unwrap().append(&record(9)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains(&format!("seq 3 (hash {gone})")),
        "{last}"
    );
    // A garbled head attribute (what a sandboxed command on Landlock could do) stops
    // nobody: the chain decides, and the record says so.
    let (_d, path) = log_with(3);
    set_head_raw(&path, b"garbage");
    AuditLog::open(&path).unwrap().append(&record(3)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("head attribute user.cordon.head was unreadable"),
        "{last}"
    );
    assert!(audit::verify(&path).unwrap().is_intact());
    // The whole log emptied: said in the new first record.
    let (_d, path) = log_with(2);
    std::fs::write(&path, "").unwrap();
    AuditLog::open(&path).unwrap().append(&record(9)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("the log was empty, but its head recorded seq 1"),
        "{last}"
    );
    // No head, with a whole chain from seq 0 (a new log whose first appends were killed
    // before their heads): repaired, said in the next record.
    let (_d, path) = log_with(2);
    remove_head(&path);
    AuditLog::open(&path).unwrap().append(&record(2)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("the log had no head"),
        "{last}"
    );
    assert!(audit::verify(&path).unwrap().is_intact());
    // No head and a chain that does not reach seq 0: refused.
    let (_d, path) = log_with(4);
    remove_head(&path);
    let mut ls = lines(&path);
    ls.remove(1);
    write_lines(&path, &ls);
    let e = AuditLog::open(&path)
        .unwrap()
        .append(&record(9))
        .unwrap_err();
    assert!(e.to_string().contains("has no head"), "{e}");
}

#[test]
fn swapped_lines_are_found() {
    let r = tampered(|ls| ls.swap(4, 5));
    assert_eq!(found(&r), [(6, ProblemKind::Reordered)], "{:?}", r.problems);
    assert!(r.problems[0].message.contains("right after line 4"));
    let r = tampered(|ls| ls.swap(0, 1));
    assert_eq!(found(&r).len(), 1, "{:?}", r.problems);
    assert!(found(&r)[0].0 <= 2);
    let r = tampered(|ls| ls.swap(8, 9));
    assert_eq!(found(&r).len(), 1, "{:?}", r.problems);
    assert!(matches!(found(&r)[0], (9 | 10, ProblemKind::Reordered)));
    let r = tampered(|ls| ls.swap(2, 7));
    assert!(r.tampered());
    assert!(
        r.problems.iter().all(|p| (3..=8).contains(&p.line)),
        "{:?}",
        r.problems
    );
}

#[test]
fn the_head_file_guards_the_end() {
    // Without it, the last records can be dropped unseen: the documented limit, and a note.
    let (_d, path) = log_with(4);
    remove_head(&path);
    let mut ls = lines(&path);
    ls.pop();
    write_lines(&path, &ls);
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact());
    assert!(r.notes[0].contains("no head"), "{:?}", r.notes);
    // A head one record behind (cordon killed between the two writes) is accepted, noted.
    let (_d, path) = log_with(4);
    let ls = lines(&path);
    set_head(&path, 2, &audit::sha256_hex(ls[2].as_bytes()));
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(r.notes[0].contains("1 record(s) behind"), "{:?}", r.notes);
    // A damaged head is a problem.
    set_head_raw(&path, b"nonsense");
    let r = audit::verify(&path).unwrap();
    assert_eq!(found(&r), [(5, ProblemKind::Head)]);
}

#[test]
fn a_full_rewrite_is_not_detected_as_documented() {
    // The threat model, stated by a test: without a key, whoever rewrites the whole chain and
    // the head file wins. If this ever fails, update the docs.
    let (_d, path) = log_with(4);
    let mut prev = ZERO_HASH.to_string();
    let mut out = Vec::new();
    for l in lines(&path) {
        let mut v = json(&l);
        v["decision"] = "allow".into();
        v["prev"] = prev.clone().into();
        let line = serde_json::to_string(&serde_json::from_value::<Record>(v).unwrap()).unwrap();
        prev = audit::sha256_hex(line.as_bytes());
        out.push(line);
    }
    write_lines(&path, &out);
    set_head(&path, 3, &prev);
    assert!(audit::verify(&path).unwrap().is_intact());
}

#[test]
fn a_torn_tail_is_reported_as_such_and_moved_aside_by_the_next_writer() {
    let (d, path) = log_with(3);
    let whole = std::fs::read(&path).unwrap();
    let torn = br#"{"v":1,"time":"2025-06-01T12:00:00.000Z","session":"ab"#;
    let mut bytes = whole.clone();
    bytes.extend_from_slice(torn);
    std::fs::write(&path, &bytes).unwrap();

    let r = audit::verify(&path).unwrap();
    assert_eq!(found(&r), [(4, ProblemKind::TornTail)]);
    assert!(!r.tampered());
    assert_eq!(r.records, 3);
    assert!(r.problems[0].message.contains("not tampering"));

    let mut log = AuditLog::open(&path).unwrap();
    let a = log.append(&record(3)).unwrap();
    assert_eq!(a.seq, 3);
    let moved = a.torn_moved_to.expect("the torn tail was moved");
    assert_eq!(moved.parent().unwrap(), d.path());
    assert!(moved
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("audit.jsonl.torn-"));
    assert_eq!(std::fs::read(&moved).unwrap(), torn);
    let now = std::fs::read(&path).unwrap();
    assert_eq!(
        &now[..whole.len()],
        &whole[..],
        "earlier records are never rewritten"
    );
    let last = json(lines(&path).last().unwrap());
    let repair = last["repair"].as_str().unwrap();
    assert!(
        repair.contains(&format!("torn tail of {} bytes", torn.len())),
        "{repair}"
    );
    assert!(repair.contains("after seq 2"), "{repair}");
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("line 4: an interrupted write")),
        "{:?}",
        r.notes
    );
}

#[test]
fn a_corrupt_last_record_stops_the_writer() {
    let (_d, path) = log_with(2);
    let mut ls = lines(&path);
    ls.push("not json".into());
    write_lines(&path, &ls);
    let before = std::fs::read(&path).unwrap();
    let mut log = AuditLog::open(&path).unwrap();
    let e = log.append(&record(9)).unwrap_err();
    assert!(
        matches!(e, cordon_approval::Error::Inconsistent { .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("its last line is not a valid record"),
        "{e}"
    );
    assert!(e.to_string().contains("refusing to append"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
}

#[test]
fn an_unopenable_path_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("file"), "").unwrap();
    let e = AuditLog::open(d.path().join("file/audit.jsonl")).unwrap_err();
    assert!(e.to_string().contains("cannot create its directory"), "{e}");
    let e = AuditLog::open(d.path()).unwrap_err();
    assert!(matches!(e, cordon_approval::Error::Io { .. }), "{e}");
    let e = audit::verify(d.path().join("missing")).unwrap_err();
    assert!(
        matches!(&e, cordon_approval::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
}

#[test]
fn concurrent_threads_interleave_whole_records() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    std::thread::scope(|s| {
        for t in 0..8 {
            let path = &path;
            s.spawn(move || {
                // This test is about whole records, not speed: on a loaded machine eight
                // threads fsyncing in turn can keep one waiting past the default deadline.
                let mut log = AuditLog::open(path)
                    .unwrap()
                    .with_lock_deadline(Duration::from_secs(120));
                for i in 0..50 {
                    log.append(&record(t * 1000 + i)).unwrap();
                }
            });
        }
    });
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert_eq!(r.records, 400);
    let ls = lines(&path);
    let mut seqs: Vec<u64> = ls
        .iter()
        .map(|l| json(l)["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..400).collect::<Vec<_>>());
    seqs.dedup();
    assert_eq!(seqs.len(), 400);
    let mut sessions = std::collections::HashMap::new();
    for l in &ls {
        *sessions
            .entry(json(l)["session"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    assert_eq!(sessions.len(), 8);
    assert!(sessions.values().all(|&n| n == 50));
}

fn spawn_child(mode: &str, path: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_MODE, mode)
        .env(CHILD_PATH, path)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The helper processes' entry point (does nothing in a normal run).
#[test]
fn child_process_entry() {
    let (Ok(mode), Ok(path)) = (std::env::var(CHILD_MODE), std::env::var(CHILD_PATH)) else {
        return;
    };
    let mut log = AuditLog::open(&path).unwrap();
    match mode.as_str() {
        "append50" => {
            for i in 0..50 {
                log.append(&record(i)).unwrap();
            }
        }
        "forever" => {
            // Small records, and every third one large (2 MiB), so that kills land both
            // between and inside writes.
            let big = "x".repeat(2 << 20);
            for i in 0.. {
                let mut r = record(i);
                if i % 3 == 2 {
                    r = r.keys([["echo", big.as_str()]]);
                }
                log.append(&r).unwrap();
            }
        }
        "fsize" => {
            // A write cut short by RLIMIT_FSIZE must leave the file as it was.
            let len = std::fs::metadata(&path).unwrap().len();
            // SAFETY: SIG_IGN installs no handler, so no code of ours runs in signal context;
            // it only turns the SIGXFSZ an oversized write would raise into EFBIG. This is a
            // child process of its own: the disposition affects nothing else.
            let old = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
            assert_ne!(old, libc::SIG_ERR);
            rustix::process::setrlimit(
                rustix::process::Resource::Fsize,
                rustix::process::Rlimit {
                    current: Some(len + 100),
                    maximum: None,
                },
            )
            .unwrap();
            let big = "y".repeat(10_000);
            let e = log.append(&record(7).keys([[big.as_str()]])).unwrap_err();
            assert!(e.to_string().contains("cannot write the record"), "{e}");
            assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
            std::process::exit(42);
        }
        other => panic!("unknown child mode {other}"),
    }
}

#[test]
fn concurrent_processes_keep_one_chain() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let children: Vec<Child> = (0..4).map(|_| spawn_child("append50", &path)).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert_eq!(r.records, 200);
    assert_eq!(r.last_seq, Some(199));
}

#[test]
fn a_write_cut_short_leaves_nothing_behind() {
    let (_d, path) = log_with(3);
    let before = std::fs::read(&path).unwrap();
    let status = spawn_child("fsize", &path).wait().unwrap();
    assert_eq!(status.code(), Some(42), "the child's checks failed");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// A few random-ish milliseconds from the kernel.
fn random_ms(lo: u64, hi: u64) -> u64 {
    let id = audit::new_id().unwrap();
    lo + u64::from_str_radix(&id[..8], 16).unwrap() % (hi - lo)
}

/// Waits until the log is caught mid-write (it does not end with a newline). The bound only
/// keeps a broken writer from hanging the test: on a loaded machine the child can be starved
/// for seconds, and catching it takes as long as it takes.
fn caught_mid_write(path: &Path) -> bool {
    use std::os::unix::fs::FileExt;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut last = [0u8; 1];
    while std::time::Instant::now() < deadline {
        let len = f.metadata().unwrap().len();
        if len > 0 && f.read_exact_at(&mut last, len - 1).is_ok() && last[0] != b'\n' {
            return true;
        }
    }
    false
}

#[test]
fn sigkill_mid_record_never_corrupts_complete_records() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut torn_seen = 0;
    let mut records = 0;
    for round in 0..10 {
        let mut child = spawn_child("forever", &path);
        if round % 2 == 0 {
            // At a random moment.
            std::thread::sleep(Duration::from_millis(random_ms(30, 300)));
        } else {
            // The moment a record is seen half-written.
            while !path.exists() {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(
                caught_mid_write(&path),
                "round {round}: never saw a write in progress"
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let r = audit::verify(&path).unwrap();
        assert!(
            !r.tampered(),
            "round {round}: a crash must not look like tampering: {:?}",
            r.problems
        );
        if !r.is_intact() {
            assert_eq!(found(&r), [(r.lines + 1, ProblemKind::TornTail)]);
            torn_seen += 1;
        }
        assert!(r.records >= records, "complete records are never lost");

        // The next writer goes on from the last complete record, moving a torn tail aside.
        let mut log = AuditLog::open(&path).unwrap();
        let a = log.append(&record(999)).unwrap();
        assert_eq!(a.seq as usize, r.records);
        assert_eq!(a.torn_moved_to.is_some(), !r.is_intact());
        if let Some(moved) = &a.torn_moved_to {
            std::fs::remove_file(moved).unwrap(); // keep the temp dir small
        }
        let after = audit::verify(&path).unwrap();
        assert!(after.is_intact(), "round {round}: {:?}", after.problems);
        assert_eq!(after.records, r.records + 1);
        records = after.records;
    }
    eprintln!("{torn_seen} of 10 kills left a torn tail; {records} records");
    // Killing a writer caught mid-write tears its record at least once in five tries: the
    // torn-tail path above was exercised for real, not only by the hand-made tail.
    assert!(torn_seen >= 1, "no kill tore a record");
}

// ---------------------------------------------------------------------------------------------
// Links planted beside the log. The log's directory may be writable by the command a record is
// about (a log in a writable root); cordon, possibly root, must never write through a link
// there: it would truncate and overwrite whatever the link points to.

/// A file outside the log's directory that a planted link points to, and its content.
fn victim(content: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let v = d.path().join("victim");
    std::fs::write(&v, content).unwrap();
    (d, v)
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn a_link_at_the_head_temporary_name_is_never_followed() {
    let (d, path) = log_with(2);
    let (_v, victim) = victim("precious\n");
    // The name the writer used to write the head through (and a few more it might pick),
    // each a link to the victim, and one to a file that does not exist yet.
    let missing = victim.with_file_name("created");
    for name in [
        "audit.jsonl.head.tmp",
        "audit.jsonl.head.tmp-0",
        ".audit.jsonl.head.tmp",
    ] {
        std::os::unix::fs::symlink(&victim, d.path().join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&missing, d.path().join("audit.jsonl.tmp")).unwrap();

    let mut log = AuditLog::open(&path).unwrap();
    let a = log.append(&record(2)).unwrap();
    assert_eq!(a.seq, 2);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!missing.exists(), "a file was created through a link");
    // The links are left as they were, and the head is in the log's attribute.
    assert!(is_symlink(&d.path().join("audit.jsonl.head.tmp")));
    assert!(!audit::head_path(&path).exists());
    assert_eq!(head_of(&path), Some((2, a.hash.clone())));
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact(), "{:?}", r.problems);
    assert_eq!(r.records, 3);
    // Nothing else is left behind: the temporary file was renamed over the head.
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".head.tmp-") && n != "audit.jsonl.head.tmp-0")
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn a_head_replaced_by_a_link_is_refused_and_reported() {
    // What the attack left behind under the old writer (a log from before the head moved
    // into the attribute): the head file is a link to a file that holds the right head
    // (cordon wrote it through the link).
    let (d, path) = log_with(2);
    let head = audit::head_path(&path);
    let (seq, hash) = head_of(&path).unwrap();
    remove_head(&path);
    let text = format!("{{\"v\":1,\"seq\":{seq},\"hash\":\"{hash}\"}}\n");
    let (_v, victim) = victim(&text);
    std::os::unix::fs::symlink(&victim, &head).unwrap();
    let before = std::fs::read(&path).unwrap();

    let mut log = AuditLog::open(&path).unwrap();
    let e = log.append(&record(2)).unwrap_err();
    assert!(
        matches!(e, cordon_approval::Error::Inconsistent { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("symlink"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing appended");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), text);
    assert!(
        is_symlink(&head),
        "the link is left for a person to look at"
    );
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(
        names.len(),
        3,
        "no temporary file left behind (the log, its head, its lock)"
    );

    // verify does not call it intact either.
    let r = audit::verify(&path).unwrap();
    assert_eq!(found(&r), [(3, ProblemKind::Head)], "{:?}", r.problems);
    assert!(
        r.problems[0].message.contains("symlink"),
        "{:?}",
        r.problems
    );

    // A link to nothing, in the head's place, is refused too (not created through).
    std::fs::remove_file(&head).unwrap();
    let missing = victim.with_file_name("created");
    std::os::unix::fs::symlink(&missing, &head).unwrap();
    let e = log.append(&record(2)).unwrap_err();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert!(!missing.exists());
}

#[test]
fn a_log_that_is_a_link_is_refused_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    // No trailing newline: followed, the writer would take it for a torn tail, save it aside
    // and truncate the victim, then write a record into it.
    let (_v, victim) = victim("precious");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let opened = AuditLog::open(&path).map(|mut log| log.append(&record(0)));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let e = opened.expect_err("a symlinked log was opened");
    assert!(e.to_string().contains("symlink"), "{e}");

    // A link to nothing: following it would create the file it names.
    std::fs::remove_file(&path).unwrap();
    let missing = victim.with_file_name("created");
    std::os::unix::fs::symlink(&missing, &path).unwrap();
    let e = AuditLog::open(&path).unwrap_err();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert!(!missing.exists(), "a file was created through a link");

    // A second name for the log (a hard link) could make it some other file: refused.
    std::fs::remove_file(&path).unwrap();
    std::fs::hard_link(&victim, &path).unwrap();
    let e = AuditLog::open(&path).unwrap_err();
    assert!(e.to_string().contains("hard links"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn a_log_directory_that_is_a_link_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), d.path().join(".cordon")).unwrap();
    let e = AuditLog::open(d.path().join(".cordon/audit.jsonl")).unwrap_err();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn a_torn_tail_is_moved_aside_beside_planted_links_without_following_them() {
    let (d, path) = log_with(2);
    let (_v, victim) = victim("precious\n");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"v\":1,\"torn");
    std::fs::write(&path, &bytes).unwrap();
    std::os::unix::fs::symlink(&victim, d.path().join("audit.jsonl.head.tmp")).unwrap();
    let mut log = AuditLog::open(&path).unwrap();
    let a = log.append(&record(2)).unwrap();
    let moved = a.torn_moved_to.unwrap();
    assert!(!is_symlink(&moved));
    assert_eq!(std::fs::read(&moved).unwrap(), b"{\"v\":1,\"torn");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// The writer locks `FILE.lock`, not the log: whoever can read the log (a sandboxed command
/// under a read-only root) can `flock` it, and must not be able to stop the next append.
#[test]
fn a_lock_on_the_log_itself_stops_nobody() {
    let (_d, path) = log_with(1);
    let held = std::fs::File::open(&path).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let mut log = AuditLog::open(&path)
        .unwrap()
        .with_lock_deadline(Duration::from_millis(200));
    assert_eq!(log.append(&record(1)).unwrap().seq, 1);
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// A lock held by something else is waited for only so long: the append fails (and the
/// caller refuses to run) instead of hanging.
#[test]
fn a_lock_held_elsewhere_fails_the_append_after_the_deadline() {
    let (_d, path) = log_with(1);
    let lock = audit::lock_path(&path);
    assert!(lock.is_file(), "the writer makes FILE.lock beside the log");
    let held = std::fs::File::open(&lock).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockShared).unwrap();
    let mut log = AuditLog::open(&path)
        .unwrap()
        .with_lock_deadline(Duration::from_millis(100));
    let e = log.append(&record(1)).unwrap_err().to_string();
    // The refusal names the real holder: this process.
    assert!(
        e.contains("cannot lock the audit log")
            && e.contains("gave up")
            && e.contains(&format!("pid {}", std::process::id())),
        "{e}"
    );
    assert_eq!(lines(&path).len(), 1, "nothing was written");
    drop(held);
    assert_eq!(log.append(&record(1)).unwrap().seq, 1);
}

/// The lock file is opened like every other file beside the log: never through a symlink,
/// and only a regular file.
#[test]
fn a_planted_lock_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let victim = d.path().join("victim");
    std::fs::write(&victim, "v").unwrap();
    std::os::unix::fs::symlink(&victim, audit::lock_path(&path)).unwrap();
    let e = AuditLog::open(&path).unwrap_err().to_string();
    assert!(e.contains("lock file") && e.contains("symlink"), "{e}");
    std::fs::remove_file(audit::lock_path(&path)).unwrap();
    std::fs::create_dir(audit::lock_path(&path)).unwrap();
    let e = AuditLog::open(&path).unwrap_err();
    assert!(
        matches!(&e, cordon_approval::Error::Io { what, .. } if what.contains("lock file")),
        "{e:?}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "v");
}

/// Record kinds: a decision names none; a connection's events, an after-run finding, a
/// refusal and a repair say what they are; an ask handed to the host's prompt says so.
#[test]
fn record_kinds_and_the_deferred_ask() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path).unwrap();
    log.append(&record(0)).unwrap();
    let ask = Record::new("shell", Action::Ask, By::Default, "no rule").deferred_to("claude");
    log.append(&ask).unwrap();
    log.append(&Record::refusal("shell", "the sandbox could not be built"))
        .unwrap();
    log.append(&Record::repair_only("the head moved")).unwrap();
    let c = audit::Connection {
        event: "close".into(),
        id: 1,
        protocol: "http-connect".into(),
        host: "index.example.org".into(),
        port: 443,
        addr: None,
        rule: "default".into(),
        bytes_up: 10,
        bytes_down: 20,
        duration_ms: 3,
    };
    log.append(&Record::connection(true, "allowed", c)).unwrap();
    let ls = lines(&path);
    assert!(!ls[0].contains("\"kind\":\"decision\""), "{}", ls[0]);
    assert!(
        ls[1].contains(r#""decision":"ask","deferred_to":"claude","by""#),
        "{}",
        ls[1]
    );
    assert!(ls[2].contains(r#""seq":2,"kind":"refusal""#), "{}", ls[2]);
    assert!(ls[3].contains(r#""kind":"repair""#), "{}", ls[3]);
    assert!(ls[4].contains(r#""kind":"connection""#), "{}", ls[4]);
    let kinds: Vec<audit::Kind> = ls
        .iter()
        .map(|l| serde_json::from_str::<Record>(l).unwrap().kind)
        .collect();
    use audit::Kind::*;
    assert_eq!(kinds, [Decision, Decision, Refusal, Repair, Connection]);
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// A log from before the head moved into the attribute: read as it is, migrated by the
/// next append (said in its record), the old head file and the temporary files killed head
/// updates left (`FILE.head.tmp-*`) removed.
#[test]
fn an_old_log_is_migrated_and_its_head_leftovers_swept() {
    let (d, path) = log_with(3);
    let (seq, hash) = head_of(&path).unwrap();
    remove_head(&path);
    std::fs::write(
        audit::head_path(&path),
        format!("{{\"v\":1,\"seq\":{seq},\"hash\":\"{hash}\"}}\n"),
    )
    .unwrap();
    for r in ["0011aabb", "ccdd2233"] {
        std::fs::write(d.path().join(format!("audit.jsonl.head.tmp-{r}")), "x").unwrap();
    }
    let r = audit::verify(&path).unwrap();
    assert!(r.is_intact() && r.notes.is_empty(), "{r:?}");
    AuditLog::open(&path).unwrap().append(&record(3)).unwrap();
    let last = json(lines(&path).last().unwrap());
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .contains("the head moved from"),
        "{last}"
    );
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["audit.jsonl", "audit.jsonl.lock"]);
    assert_eq!(head_of(&path).unwrap().0, 3);
    assert!(audit::verify(&path).unwrap().is_intact());
}

/// A link planted at each component of the log's path below the anchor (a directory on the
/// way, the log's own directory, the log itself) is refused, named, and nothing is written
/// where it points.
#[test]
fn the_writer_refuses_a_link_at_each_component_below_its_anchor_and_names_it() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let elsewhere = base.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("b")).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    let rel = Path::new("a/b/audit.jsonl");
    // Fine without links: created, and writable.
    {
        let mut log = AuditLog::open_beneath(&root, rel).unwrap();
        log.append(&Record::new("shell", Action::Allow, By::Default, "ok"))
            .unwrap();
    }
    for (at, target) in [
        ("a", elsewhere.clone()),
        ("a/b", elsewhere.join("b")),
        ("a/b/audit.jsonl", elsewhere.join("victim")),
    ] {
        let planted = root.join(at);
        let moved = base.path().join("moved");
        std::fs::rename(&planted, &moved).unwrap();
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let e = AuditLog::open_beneath(&root, rel).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{} is a symbolic link", planted.display()))
                || e.contains("it is a symlink"),
            "{at}: {e}"
        );
        assert!(
            e.contains(&planted.display().to_string()) || at.ends_with(".jsonl"),
            "{at}: {e}"
        );
        assert!(!elsewhere.join("b/audit.jsonl").exists(), "{at}");
        assert!(!elsewhere.join("victim").exists(), "{at}");
        std::fs::remove_file(&planted).unwrap();
        std::fs::rename(&moved, &planted).unwrap();
    }
}
