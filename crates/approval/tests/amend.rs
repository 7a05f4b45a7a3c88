//! "Approve always": the rules file, de-duplication, concurrent writers, and the round trip
//! back into the engine as persisted grants.

use std::sync::{Arc, Barrier};

use cordon_approval::amend::{self, RULES_FILE_HEADER};
use cordon_approval::{AmendError, Amendment, Answer, By, Engine, Key, Outcome, Request, Rules};
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

fn refusal(line: &str) -> AmendError {
    match Amendment::for_key("shell", &Key::split(line)) {
        Ok(a) => panic!("{line}: approved always as {:?}", a.pattern),
        Err(e) => e,
    }
}

#[test]
fn always_is_refused_for_every_interpreter_and_wrapper_class() {
    for line in [
        // Shells, restricted or not.
        "rbash -c ls",
        "ksh93 x.sh",
        // Interpreters and REPLs.
        "ipython x.py",
        "ipython3 -c 1",
        "irb x.rb",
        "jshell x.jsh",
        "Rscript x.R",
        "julia x.jl",
        "java -jar x.jar",
        "java17 Main",
        "dotnet run",
        "sqlite3 db.sqlite .shell",
        // Dynamic loaders run as programs, by name or path.
        "ld-linux-x86-64.so.2 /bin/ls",
        "/lib64/ld-linux-x86-64.so.2 /bin/ls",
        "/lib/ld-linux-aarch64.so.1 /bin/ls",
        "ld.so /bin/ls",
        "/lib/ld-musl-x86_64.so.1 /bin/ls",
        // Runners, sandboxes, wrappers.
        "systemd-run --user ls",
        "firejail ls",
        "bwrap --ro-bind / / ls",
        "rlwrap ls",
        "unbuffer ls",
        "fakeroot ls",
        "sg wheel ls",
        "valgrind ls",
    ] {
        let e = refusal(line);
        assert!(matches!(e, AmendError::Interpreter { .. }), "{line}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("runs other code") && msg.contains("approve once or for this session"),
            "{msg}"
        );
    }
    // Names that merely look alike are not refused.
    for line in ["ldd /bin/ls", "javac Main.java", "lddtree x", "git status"] {
        assert!(
            Amendment::for_key("shell", &Key::split(line)).is_ok(),
            "{line}"
        );
    }
}

#[test]
fn always_is_refused_for_programs_named_by_a_path() {
    for (line, program) in [
        ("./script.sh", "./script.sh"),
        ("./build.sh --release", "./build.sh"),
        ("bin/tool run", "bin/tool"),
        ("/tmp/x", "/tmp/x"),
        ("/usr/local/bin/git status", "/usr/local/bin/git"),
        ("../git push", "../git"),
    ] {
        let e = refusal(line);
        match &e {
            AmendError::PathProgram { program: p } => assert_eq!(p, program, "{line}"),
            other => panic!("{line}: {other}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains("named by a path")
                && msg.contains("can change after it is approved")
                && msg.contains("approve once or for this session"),
            "{msg}"
        );
    }
    // A path in an argument is fine: only the program word matters.
    assert!(Amendment::for_key("shell", &Key::split("cat ./notes/a.txt")).is_ok());
    // An interpreter named by a path keeps the interpreter's reason.
    assert!(matches!(
        refusal("/usr/bin/python3 x.py"),
        AmendError::Interpreter { .. }
    ));
    // The engine refuses the whole "always" answer; nothing is persisted.
    let policy = Policy::parse("version = 1\n", "cordon.toml", std::path::Path::new("/")).unwrap();
    let mut e = Engine::new(&policy);
    let req = Request::shell("1", vec![Key::split("ls"), Key::split("./deploy.sh")]);
    assert!(Amendment::for_request(&req).is_err());
    let o = e.answer(&req, Answer::Always);
    let Outcome::Allowed {
        amendments, reason, ..
    } = &o
    else {
        panic!("{o:?}")
    };
    assert!(amendments.is_empty(), "{o:?}");
    assert!(
        reason.contains("approved once") && reason.contains("named by a path"),
        "{reason}"
    );
}

#[test]
fn append_never_writes_through_a_symlink() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    // Empty: a rules file that would be accepted and appended to, were it followed.
    std::fs::write(&victim, "").unwrap();
    let rules = d.path().join("cordon.rules.toml");
    std::os::unix::fs::symlink(&victim, &rules).unwrap();
    let a = Amendment::for_key("shell", &Key::split("cargo test")).unwrap();
    assert!(amend::append(&rules, &a).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "");
}
