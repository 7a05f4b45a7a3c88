//! Connections through the engine: the `[network]` section as the `network` tool's rules, with
//! the shell rules' machinery unchanged — deny wins, the default, session grants, modes, no
//! asking without a terminal, and the audit log.

use std::path::Path;

use cordon_approval::{audit, Answer, By, Engine, Key, Outcome, Request};
use cordon_policy::network::Target;
use cordon_policy::{ApprovalMode, Policy};

fn policy(body: &str) -> Policy {
    Policy::parse(&format!("version = 1\n{body}"), "p.toml", Path::new("/")).unwrap()
}

fn conn(target: &str) -> Request {
    let t = Target::parse(target).unwrap();
    Request::new("c", "network", vec![Key::new(t.key())])
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Allowed { .. } => "allow",
        Outcome::Denied { .. } => "deny",
        Outcome::NeedsAnswer(_) => "ask",
    }
}

const SECTION: &str = "[network]\ndefault = \"ask\"\nallow = [\"*.example.org\", \"pypi.org:443\"]\ndeny = [\"evil.example.org\"]\n";

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
    assert_eq!(kind(&e.evaluate(&conn("pypi.org:443"))), "allow");
    assert_eq!(kind(&e.evaluate(&conn("pypi.org:80"))), "ask");
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
    assert_eq!(kind(&e.evaluate(&conn("pypi.org:443"))), "allow");
    e.set_mode(ApprovalMode::Interactive);
    e.set_can_ask(false);
    let o = e.evaluate(&conn("github.com:443"));
    assert_eq!(kind(&o), "deny", "nobody to ask: denied");
}

#[test]
fn decisions_are_recorded_and_the_chain_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = Engine::new(&policy(SECTION));
    e.set_audit(audit::AuditLog::open(&log).unwrap());
    e.evaluate(&conn("pypi.org:443"));
    e.evaluate(&conn("evil.example.org:443"));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(
        text.contains(r#""tool":"network","keys":[["network","pypi.org:443"]]"#),
        "{text}"
    );
    assert!(audit::verify(&log).unwrap().is_intact());
}
