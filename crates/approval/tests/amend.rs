//! "Approve always": the rules file, de-duplication, concurrent writers, and the round trip
//! back into the engine as persisted grants.

use std::sync::{Arc, Barrier};

use cordon_approval::amend::{self, RULES_FILE_HEADER};
use cordon_approval::{Amendment, Answer, By, Engine, Key, Outcome, Request, Rules};
use cordon_policy::{Action, Policy};

fn am(line: &str) -> Amendment {
    Amendment::for_key("shell", &Key::split(line)).unwrap()
}

#[test]
fn append_writes_exactly_what_it_returns_and_dedups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cordon.rules.toml");
    let a = am("cargo build");
    let shown = a.to_toml();
    let wrote = amend::append(&path, &a).unwrap().unwrap();
    assert_eq!(wrote, format!("{RULES_FILE_HEADER}{shown}"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), wrote);
    assert_eq!(
        amend::append(&path, &a).unwrap(),
        None,
        "same pattern+action: no-op"
    );
    let b = am("rm *.tmp");
    assert_eq!(amend::append(&path, &b).unwrap().unwrap(), b.to_toml());
    let rules = amend::load(&path).unwrap();
    let pats: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
    assert_eq!(pats, ["cargo build", r"rm \*.tmp"]);
    assert!(rules.iter().all(|r| r.action == Action::Allow));
    assert!(amend::load(&dir.path().join("missing.toml"))
        .unwrap()
        .is_empty());
}

#[test]
fn append_refuses_to_break_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cordon.toml");
    let text = "version = 1\nshell.rules = []\n";
    std::fs::write(&path, text).unwrap();
    assert!(amend::append(&path, &am("ls")).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "unchanged");
}

#[test]
fn concurrent_writers_each_rule_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("cordon.rules.toml"));
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..10 {
                    amend::append(&path, &am(&format!("tool{t} run {i}"))).unwrap();
                    amend::append(&path, &am(&format!("shared run {i}"))).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = std::fs::read_to_string(&*path).unwrap();
    assert_eq!(text.matches("version = 1").count(), 1);
    let rules = amend::load(&path).unwrap();
    let mut pats: Vec<String> = rules
        .iter()
        .map(|r| r.pattern.as_str().to_string())
        .collect();
    assert_eq!(pats.len(), 8 * 10 + 10);
    pats.sort();
    pats.dedup();
    assert_eq!(pats.len(), 90, "each rule exactly once");
}

#[test]
fn always_round_trip_becomes_a_persisted_grant() {
    let dir = tempfile::tempdir().unwrap();
    let policy_path = dir.path().join("cordon.toml");
    std::fs::write(
        &policy_path,
        "version = 1\n[[shell.rules]]\npattern = \"git push --force*\"\naction = \"deny\"\n",
    )
    .unwrap();
    let rules_path = amend::rules_file_for(&policy_path);
    let policy = Policy::load(&policy_path).unwrap();
    let mut e = Engine::new(&policy);
    for line in ["git push --force", "npm test"] {
        let req = Request::shell("1", vec![Key::split(line)]);
        let Outcome::Allowed { amendments, .. } = e.answer(&req, Answer::Always) else {
            panic!()
        };
        for a in &amendments {
            amend::append(&rules_path, a).unwrap();
        }
    }
    // A new session: the grants come back from the file; the deny still wins.
    let mut rules = Rules::from_policy(&policy);
    rules.add_persisted(amend::load(&rules_path).unwrap());
    let mut e = Engine::with_rules(rules, &policy);
    let o = e.evaluate(&Request::shell("2", vec![Key::split("npm test")]));
    assert!(matches!(o.by(), By::PersistedGrant { .. }), "{o:?}");
    assert!(o.is_allowed());
    let o = e.evaluate(&Request::shell("3", vec![Key::split("git push --force")]));
    assert!(
        matches!(o.by(), By::Rule { .. }) && !o.is_allowed(),
        "{o:?}"
    );
}
