//! A gate whose front end never runs calls (`Options::runs = false`, `cordon hook`): it
//! decides and records shell calls without preparing a sandbox, and refuses to run them.

use cordon_gate::{nobody, Command, Gate, Options, Output, RunOptions};

#[test]
fn decides_and_records_but_never_runs() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let policy = state.path().join("cordon.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.workspace]\nroot = \"{}\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n[approval]\naudit_log = \"{}/audit.jsonl\"\n",
            ws.path().display(),
            state.path().display()
        ),
    )
    .unwrap();
    let mut o = Options::new(ws.path().to_path_buf());
    o.policy = Some(policy);
    o.client = Some("claude-code".into());
    o.runs = false;
    let gate = Gate::open(o).unwrap();
    let call = gate
        .shell(Command::Line("touch made".into()), None)
        .unwrap();
    let d = gate.decide(&call, &mut nobody());
    assert!(d.is_allowed(), "{}", d.message());
    let log = std::fs::read_to_string(state.path().join("audit.jsonl")).unwrap();
    assert!(log.contains("\"client\":\"claude-code\""), "{log}");
    let ran = gate.run(
        &call,
        &d,
        RunOptions {
            timeout: None,
            output: Output::Capture { limit: 1024 },
            cancel: None,
            ask: None,
        },
    );
    let Err(e) = ran else {
        panic!("a gate that never runs ran a call");
    };
    assert_eq!(e.code, 125);
    assert!(e.message.contains("does not run calls"), "{}", e.message);
    assert!(!ws.path().join("made").exists());
}
