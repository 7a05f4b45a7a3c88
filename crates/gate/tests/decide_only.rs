//! A gate whose front end never runs calls (`FrontEnd::Host`, `cordon hook`): it
//! decides and records shell calls without preparing a sandbox, and refuses to run them.

use cordon_gate::{nobody, Command, FrontEnd, Gate, Options, Output, RunOptions};

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
    o.front_end = FrontEnd::Host("claude-code".into());
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
            ..RunOptions::default()
        },
    );
    let Err(e) = ran else {
        panic!("a gate that never runs ran a call");
    };
    assert_eq!(e.exit_code(), 125);
    assert!(e.to_string().contains("does not run calls"), "{e}");
    assert!(!ws.path().join("made").exists());
}

/// The gate for `policy` (the workspace `ws` its one writable root, default `ask`), with
/// `front_end`, its audit log in `state`.
fn asking_gate(ws: &std::path::Path, state: &std::path::Path, front_end: FrontEnd) -> Gate {
    let policy = state.join("cordon.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.workspace]\nroot = \"{}\"\nmode = \"rw\"\n[shell]\ndefault = \"ask\"\n[approval]\naudit_log = \"{}/audit.jsonl\"\n",
            ws.display(),
            state.display()
        ),
    )
    .unwrap();
    let mut o = Options::new(ws.to_path_buf());
    o.policy = Some(policy);
    o.front_end = front_end;
    Gate::open(o).unwrap()
}

fn records(state: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(state.join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_agent_hosts_ask_stays_an_ask_deferred_to_the_host() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let gate = asking_gate(
        ws.path(),
        state.path(),
        FrontEnd::Host("claude-code".into()),
    );
    let call = gate
        .shell(Command::Line("touch made".into()), None)
        .unwrap();
    // The asker is never asked: the host's own prompt is.
    let d = gate.decide(&call, &mut |_: &cordon_gate::Request,
                                     _: &cordon_gate::Pending,
                                     _| {
        panic!("a host's ask was put to the asker")
    });
    assert!(d.is_ask(), "{}", d.message());
    assert!(!d.is_allowed());
    assert_eq!(d.exit_code(), 126);
    let r = records(state.path());
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["decision"], "ask");
    assert_eq!(r[0]["deferred_to"], "claude-code");
    assert_eq!(r[0]["client"], "claude-code");
    assert_eq!(r[0]["by"]["kind"], "default");
    assert!(
        !r[0]["reason"].as_str().unwrap().contains("terminal"),
        "{r:?}"
    );
}

#[test]
fn nobody_to_ask_denies_saying_how_to_approve() {
    for (front_end, says) in [
        (FrontEnd::Terminal, "no terminal to ask on"),
        (FrontEnd::Mcp, "cannot ask its user"),
    ] {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let gate = asking_gate(ws.path(), state.path(), front_end.clone());
        let call = gate
            .shell(Command::Line("touch made".into()), None)
            .unwrap();
        let d = gate.decide(&call, &mut nobody());
        assert!(!d.is_allowed() && !d.is_ask(), "{front_end:?}");
        assert_eq!(d.exit_code(), 126);
        assert_eq!(d.by(), Some(&cordon_gate::By::NobodyToAsk));
        assert!(d.reason().contains(says), "{front_end:?}: {}", d.reason());
        assert!(d.reason().contains("a rule in"), "{}", d.reason());
        let r = records(state.path());
        assert_eq!(r[0]["decision"], "deny");
        assert_eq!(r[0]["by"]["kind"], "nobody-to-ask");
        assert!(r[0].get("deferred_to").is_none());
    }
}

#[test]
fn a_check_gate_explains_what_the_others_decide() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let check = asking_gate(ws.path(), state.path(), FrontEnd::Check);
    let call = check
        .shell(Command::Line("touch made".into()), None)
        .unwrap();
    let x = check.explain(&call).unwrap();
    assert_eq!(x.action(), cordon_policy::Action::Ask);
    assert_eq!(x.keys.len(), 1);
    assert!(x.keys[0].by_default);
    let d = check.decide(&call, &mut nobody());
    assert_eq!(d.exit_code(), 125, "a check gate never decides");
    assert!(
        !state.path().join("audit.jsonl").exists(),
        "nothing recorded"
    );
}
