//! Connections through the engine: the `[network]` section as the `network` tool's rules, with
//! the shell rules' machinery unchanged — deny wins, the default, session grants, modes, no
//! asking without a terminal, and the audit log.

use std::path::Path;

use cordon_approval::{audit, Answer, By, Engine, Key, Outcome, Request};
use cordon_policy::network::Target;
use cordon_policy::{ApprovalMode, Policy};

fn policy(body: &str) -> Policy {
    // The section takes effect under `network = "proxy"`, appended so that lines stay put.
    let proxy = if body.contains("[network]") {
        "[sandbox]\nnetwork = \"proxy\"\n"
    } else {
        ""
    };
    Policy::parse(
        &format!("version = 1\n{body}{proxy}"),
        "p.toml",
        Path::new("/"),
    )
    .unwrap()
}

fn conn(target: &str) -> Request {
    let t = Target::parse(target).unwrap();
    Request::new("c", "network", vec![Key::new(t.key())])
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Allowed { .. } => "allow",
        Outcome::Denied { .. } => "deny",
        Outcome::Ask(_) => "ask",
    }
}

const SECTION: &str = "[network]\ndefault = \"ask\"\nallow = [\"*.example.org\", \"index.example.net:443\"]\ndeny = [\"evil.example.org\"]\n";

#[test]
fn deny_wins_allow_matches_default_asks() {
    let mut e = Engine::new(&policy(SECTION));
    e.set_doom_loop(0);
    let o = e.evaluate(&conn("a.example.org:443"));
    assert_eq!(kind(&o), "allow");
    assert_eq!(
        o.by().to_string(),
        "rule p.toml:4:10 (network *.example.org:*)"
    );
    let o = e.evaluate(&conn("evil.example.org:443"));
    assert_eq!(kind(&o), "deny");
    assert_eq!(
        o.by().to_string(),
        "rule p.toml:5:9 (network evil.example.org:*)"
    );
    assert_eq!(kind(&e.evaluate(&conn("index.example.net:443"))), "allow");
    assert_eq!(kind(&e.evaluate(&conn("index.example.net:80"))), "ask");
    assert_eq!(kind(&e.evaluate(&conn("github.com:443"))), "ask");
    // A shell rule never decides a connection, nor a network entry a command.
    let mut e = Engine::new(&policy(&format!(
        "[[shell.rules]]\npattern = \"*\"\naction = \"allow\"\n{SECTION}"
    )));
    assert_eq!(kind(&e.evaluate(&conn("github.com:443"))), "ask");
}

#[test]
fn without_a_section_every_connection_is_denied() {
    let mut e = Engine::new(&policy(""));
    let o = e.evaluate(&conn("github.com:443"));
    assert_eq!(kind(&o), "deny");
    assert!(
        o.reason().contains("no [network] section"),
        "{}",
        o.reason()
    );
}

#[test]
fn session_grants_modes_and_no_terminal() {
    let mut e = Engine::new(&policy(SECTION));
    e.set_doom_loop(0);
    let req = conn("github.com:443");
    assert_eq!(kind(&e.evaluate(&req)), "ask");
    let o = e.answer(&req, Answer::Session);
    assert_eq!(kind(&o), "allow");
    let o = e.evaluate(&conn("GitHub.com:443"));
    assert_eq!((kind(&o), o.by()), ("allow", &By::SessionGrant));
    // The grant is for that host and port only.
    assert_eq!(kind(&e.evaluate(&conn("github.com:22"))), "ask");

    let mut e = Engine::new(&policy(SECTION));
    e.set_mode(ApprovalMode::ApproveAll);
    assert_eq!(kind(&e.evaluate(&conn("github.com:443"))), "allow");
    assert_eq!(
        kind(&e.evaluate(&conn("evil.example.org:443"))),
        "deny",
        "no mode relaxes a deny"
    );
    e.set_mode(ApprovalMode::Strict);
    assert_eq!(kind(&e.evaluate(&conn("github.com:443"))), "deny");
    assert_eq!(kind(&e.evaluate(&conn("index.example.net:443"))), "allow");
    e.set_mode(ApprovalMode::Interactive);
    let o = e.evaluate(&conn("github.com:443"));
    assert_eq!(kind(&o), "ask", "an ask stays an ask");
    let o = e.conclude(
        &conn("github.com:443"),
        Err(cordon_approval::AskError::NobodyToAsk("nobody".into())),
        false,
    );
    assert_eq!(kind(&o), "deny", "nobody to ask: denied");
}

#[test]
fn decisions_are_recorded_and_the_chain_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = Engine::new(&policy(SECTION));
    e.set_audit(audit::AuditLog::open(&log).unwrap());
    e.evaluate(&conn("index.example.net:443"));
    e.evaluate(&conn("evil.example.org:443"));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(
        text.contains(r#""tool":"network","keys":[["network","index.example.net:443"]]"#),
        "{text}"
    );
    assert!(audit::verify(&log).unwrap().is_intact());
}

#[test]
fn connection_records_carry_the_connection_and_chain() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut w = audit::AuditLog::open(&log).unwrap();
    let conn = |event: &str, up, down| audit::Connection {
        event: event.into(),
        id: 7,
        protocol: "http-connect".into(),
        host: "index.example.net".into(),
        port: 443,
        addr: Some("203.0.113.10:443".into()),
        rule: "p.toml:3:10 (network index.example.net:443)".into(),
        bytes_up: up,
        bytes_down: down,
        duration_ms: 12,
    };
    w.append(&audit::Record::connection(true, "", conn("open", 0, 0)))
        .unwrap();
    w.append(&audit::Record::connection(
        true,
        "",
        conn("close", 517, 4096),
    ))
    .unwrap();
    let mut refused = conn("close", 0, 0);
    refused.host = "evil.example.org".into();
    refused.addr = None;
    w.append(&audit::Record::connection(
        false,
        "refused by the policy",
        refused,
    ))
    .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<audit::Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[1].by, audit::By::Connection);
    assert_eq!(records[1].keys, [["network", "index.example.net:443"]]);
    let c = records[1].connection.as_ref().unwrap();
    assert_eq!((c.bytes_up, c.bytes_down, c.port), (517, 4096, 443));
    assert_eq!(
        records[1].preview,
        "close index.example.net:443 (http-connect) via 203.0.113.10:443: 517 bytes up, 4096 down, 12 ms"
    );
    assert_eq!(records[2].decision, cordon_policy::Action::Deny);
    assert!(text.contains(r#""by":{"kind":"connection"}"#), "{text}");
    assert!(audit::verify(&log).unwrap().is_intact());
    // An edited byte count breaks the chain.
    std::fs::write(&log, text.replace(r#""bytes_up":517"#, r#""bytes_up":5"#)).unwrap();
    assert!(!audit::verify(&log).unwrap().is_intact());
}
