//! The gate end to end: a real policy file, the real sandbox, the real audit log.

use std::path::Path;

use cordon_gate::{Command, Gate, Options, Output, RunOptions};

/// A workspace and, outside it, a policy (its shell default `deny`; `echo`, `seq`, `touch`,
/// `sleep` allowed, `rm` ask; writes in the workspace only) and its audit log. Outside, so
/// that the Landlock backend (which cannot keep a file in a writable root read-only) runs it.
fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let policy = format!(
        r#"version = 1
[sandbox]
backend = "auto"
[sandbox.paths.workspace]
root = "{}"
mode = "rw"
[shell]
default = "deny"
[[shell.rules]]
pattern = "echo"
action = "allow"
[[shell.rules]]
pattern = "seq"
action = "allow"
[[shell.rules]]
pattern = "touch"
action = "allow"
[[shell.rules]]
pattern = "sh probe.sh"
action = "allow"
[[shell.rules]]
pattern = "sleep"
action = "allow"
[[shell.rules]]
pattern = "rm"
action = "ask"
[approval]
audit_log = "{}/audit.jsonl"
"#,
        ws.path().display(),
        state.path().display()
    );
    std::fs::write(state.path().join("cordon.toml"), policy).unwrap();
    (ws, state)
}

fn open(ws: &Path, state: &Path, client: Option<&str>) -> Gate {
    let mut o = Options::new(ws.to_path_buf());
    o.policy = Some(state.join("cordon.toml"));
    o.client = client.map(String::from);
    Gate::open(o).unwrap()
}

fn capture(limit: usize) -> RunOptions {
    RunOptions {
        timeout: None,
        output: Output::Capture { limit },
        cancel: None,
        ask: None,
        ..RunOptions::default()
    }
}

fn records(state: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(state.join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_allowed_command_runs_confined_its_output_captured_and_its_decision_recorded() {
    let (ws, state) = workspace();
    let gate = open(ws.path(), state.path(), Some("test-client"));
    // The write outside the roots is inside a script: on the line the analysis would ask for
    // it; the kernel is what stops what a script does.
    std::fs::write(ws.path().join("probe.sh"), "touch /etc/cordon-gate-test\n").unwrap();
    let call = gate
        .shell(
            Command::Line("echo hello; echo oops >&2; sh probe.sh".into()),
            None,
        )
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    assert!(d.is_allowed(), "{}", d.message());
    let ran = gate.run(&call, &d, capture(1 << 20)).unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello\n");
    let err = String::from_utf8_lossy(&ran.stderr);
    assert!(err.starts_with("oops\n"), "{err}");
    // The kernel refused the write outside the workspace.
    assert_ne!(ran.exit_code, 0);
    assert!(
        err.contains("Read-only file system") || err.contains("Permission denied"),
        "{err}"
    );
    assert!(!Path::new("/etc/cordon-gate-test").exists());
    assert!(!ran.truncated);
    let r = records(state.path());
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["request"], call.id());
    assert_eq!(r[0]["client"], "test-client");
    assert_eq!(r[0]["decision"], "allow");
}

#[test]
fn output_past_the_limit_is_dropped_and_said_so() {
    let (ws, state) = workspace();
    let gate = open(ws.path(), state.path(), None);
    let call = gate
        .shell(Command::Argv(vec!["seq".into(), "1000000".into()]), None)
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    let ran = gate.run(&call, &d, capture(100)).unwrap();
    assert_eq!(ran.exit_code, 0);
    assert_eq!(ran.stdout.len(), 100);
    assert!(ran.stdout.starts_with(b"1\n2\n3\n"));
    assert!(ran.truncated);
}

#[test]
fn a_denied_or_unanswered_call_never_runs_and_is_recorded() {
    let (ws, state) = workspace();
    let gate = open(ws.path(), state.path(), None);
    // Nobody to ask: `rm` (ask) is denied; the shell default denies `ls`.
    std::fs::write(ws.path().join("keep"), "x").unwrap();
    for line in ["rm keep", "ls"] {
        let call = gate.shell(Command::Line(line.into()), None).unwrap();
        let d = gate.decide(&call, &mut cordon_gate::nobody());
        assert!(!d.is_allowed());
        assert_eq!(d.exit_code(), 126, "{}", d.message());
        assert!(d.message().starts_with(&format!("denied: `{line}`")));
        let e = gate.run(&call, &d, capture(10)).unwrap_err();
        assert_eq!(e.exit_code(), 126);
    }
    assert!(ws.path().join("keep").exists());
    let r = records(state.path());
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|r| r["decision"] == "deny"));
}

#[test]
fn a_decision_runs_only_its_own_call() {
    let (ws, state) = workspace();
    let gate = open(ws.path(), state.path(), None);
    let allowed = gate.shell(Command::Line("echo ok".into()), None).unwrap();
    let other = gate
        .shell(Command::Line("touch planted".into()), None)
        .unwrap();
    let d = gate.decide(&allowed, &mut cordon_gate::nobody());
    assert!(d.is_allowed());
    let e = gate.run(&other, &d, capture(10)).unwrap_err();
    assert_eq!(e.exit_code(), 126);
    assert!(!ws.path().join("planted").exists());
}

#[test]
fn a_cwd_outside_the_roots_is_refused_and_one_inside_is_used() {
    let (ws, state) = workspace();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let gate = open(ws.path(), state.path(), None);
    let outside = tempfile::tempdir().unwrap();
    let e = match gate.shell(Command::Line("echo x".into()), Some(outside.path())) {
        Err(e) => e,
        Ok(_) => panic!("a cwd outside the roots was accepted"),
    };
    assert_eq!(e.exit_code(), 126);
    assert!(e.to_string().contains("outside the policy's roots"), "{e}");
    let call = gate
        .shell(Command::Line("touch here".into()), Some(Path::new("sub")))
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    gate.run(&call, &d, capture(10)).unwrap();
    assert!(ws.path().join("sub/here").exists());
}

#[test]
fn file_calls_go_through_the_same_decision_and_log() {
    let (ws, state) = workspace();
    std::fs::write(ws.path().join("notes.txt"), "one\n").unwrap();
    let gate = open(ws.path(), state.path(), None);
    let call = gate
        .file(
            "read_file",
            serde_json::json!({"path": "workspace/notes.txt"}),
        )
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    assert!(d.is_allowed(), "{}", d.message());
    let ran = gate.run(&call, &d, capture(1 << 20)).unwrap();
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("one"),
        "{:?}",
        String::from_utf8_lossy(&ran.stdout)
    );
    // A path outside the roots: the tool's own verdict denies it, whatever the rules say;
    // the denial is recorded and nothing is read.
    let call = gate
        .file("read_file", serde_json::json!({"path": "/etc/passwd"}))
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    assert_eq!(d.exit_code(), 126, "{}", d.message());
    assert_eq!(
        gate.run(&call, &d, capture(1 << 20))
            .unwrap_err()
            .exit_code(),
        126
    );
    let r = records(state.path());
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["decision"], "deny");
    assert_eq!(r[0]["tool"], "read_file");
}

#[test]
fn concurrent_calls_each_get_their_own_run_on_bwrap() {
    concurrent_calls(cordon_policy::Backend::Bwrap);
}

#[test]
fn concurrent_calls_each_get_their_own_run_on_landlock() {
    concurrent_calls(cordon_policy::Backend::Landlock);
}

/// Several calls decided and run at once from one gate (an MCP server's calls in flight):
/// each run waits for its own child; none reaps or kills another's.
fn concurrent_calls(backend: cordon_policy::Backend) {
    let (ws, state) = workspace();
    let mut o = Options::new(ws.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    o.backend = Some(backend);
    let gate = std::sync::Arc::new(Gate::open(o).unwrap());
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let gate = gate.clone();
            std::thread::spawn(move || {
                let line = format!("sleep 0.3; echo call-{i}");
                let call = gate.shell(Command::Line(line), None).unwrap();
                let d = gate.decide(&call, &mut cordon_gate::nobody());
                assert!(d.is_allowed(), "{}", d.message());
                let ran = gate.run(&call, &d, capture(1024)).unwrap();
                (i, ran)
            })
        })
        .collect();
    for t in threads {
        let (i, ran) = t.join().unwrap();
        assert_eq!(ran.exit_code, 0, "{}", String::from_utf8_lossy(&ran.stderr));
        assert_eq!(String::from_utf8_lossy(&ran.stdout), format!("call-{i}\n"));
    }
    assert_eq!(records(state.path()).len(), 6);
}

/// What the kernel enforced is on record for every run that got less than the policy says:
/// an unconfined run (`backend = "none"`) gets an after-run record carrying its enforcement,
/// beside its decision; a fully confined run has its decision alone (the test above).
#[test]
fn a_run_with_less_than_full_enforcement_is_recorded_as_such() {
    let (ws, state) = workspace();
    let policy = std::fs::read_to_string(state.path().join("cordon.toml")).unwrap();
    let policy = policy.replace(
        "backend = \"auto\"\n",
        "backend = \"none\"\nrequire_os_sandbox = false\n",
    );
    std::fs::write(state.path().join("cordon.toml"), policy).unwrap();
    let gate = open(ws.path(), state.path(), None);
    let call = gate
        .shell(Command::Line("echo hello".into()), None)
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    assert!(d.is_allowed(), "{}", d.message());
    let ran = gate.run(&call, &d, capture(1 << 20)).unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello\n");
    let r = records(state.path());
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!(r[0]["decision"], "allow");
    assert!(r[0].get("enforcement").is_none(), "{:#}", r[0]);
    assert_eq!(r[1]["kind"], "after-run");
    assert_eq!(r[1]["request"], call.id());
    assert_eq!(
        r[1]["keys"],
        serde_json::json!([["enforcement", "unconfined"]])
    );
    let e = r[1]["enforcement"].as_str().expect("an enforcement field");
    assert!(
        e.starts_with("unconfined: backend `none` was requested"),
        "{e}"
    );
    let report = cordon_approval::audit::verify(state.path().join("audit.jsonl")).unwrap();
    assert!(report.is_intact(), "{report:?}");
}

#[test]
fn an_allowed_call_cordon_cannot_run_is_recorded_as_a_refusal_saying_why() {
    let (ws, state) = workspace();
    let gate = open(ws.path(), state.path(), None);
    let call = gate
        .shell(Command::Argv(vec!["touch".into(), "made".into()]), None)
        .unwrap();
    let d = gate.decide(&call, &mut cordon_gate::nobody());
    assert!(d.is_allowed(), "{}", d.message());
    // The after-run scan's marker directory beside the log cannot be made: cordon refuses to
    // run without it (a killed run's scan would be lost).
    std::fs::write(state.path().join("scans"), "not a directory").unwrap();
    let e = gate.run(&call, &d, capture(1 << 20)).unwrap_err();
    assert_eq!(e.exit_code(), 125, "{e}");
    assert!(!ws.path().join("made").exists());
    let r = records(state.path());
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[0]["decision"], "allow");
    assert_eq!(r[1]["kind"], "refusal");
    assert_eq!(r[1]["decision"], "deny");
    assert_eq!(r[1]["request"], call.id());
    let reason = r[1]["reason"].as_str().unwrap();
    assert!(reason.starts_with("allowed, but not run: "), "{reason}");
    assert!(reason.contains(&e.to_string()), "{reason} / {e}");
    let report = cordon_approval::audit::verify(state.path().join("audit.jsonl")).unwrap();
    assert!(report.is_intact(), "{report:?}");
}

#[test]
fn a_gate_that_refuses_to_open_over_its_remembered_rules_records_the_refusal() {
    let (ws, state) = workspace();
    std::fs::write(state.path().join("cordon.rules.toml"), "this is [not toml").unwrap();
    let mut o = Options::new(ws.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    let e = match Gate::open(o) {
        Ok(_) => panic!("a gate opened over unreadable remembered rules"),
        Err(e) => e,
    };
    assert_eq!(e.exit_code(), 125, "{e}");
    let r = records(state.path());
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["kind"], "refusal");
    assert_eq!(r[0]["tool"], "exec");
    let reason = r[0]["reason"].as_str().unwrap();
    assert_eq!(reason, format!("cordon refused to start: {e}"));
}
