//! "Approve always": the rules file, de-duplication, concurrent writers, and the round trip
//! back into the engine as persisted grants.

use std::sync::{Arc, Barrier};

use cordon_approval::amend::{self, RULES_FILE_HEADER};
use cordon_approval::{Amendment, Answer, By, Engine, Error, Key, Outcome, Request, Rules};
use cordon_policy::trust::{self, Follow, TrustStore};
use cordon_policy::{Action, Policy, PolicyError};

/// A trust store of the test's own, beside its files.
fn mkfifo(path: &std::path::Path) {
    use rustix::fs::{FileType, Mode, CWD};
    rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}

fn store(dir: &tempfile::TempDir) -> TrustStore {
    TrustStore::at(dir.path().join("config/cordon"))
}

fn am(line: &str) -> Amendment {
    Amendment::for_key("shell", &Key::split(line)).unwrap()
}

#[test]
fn append_writes_exactly_what_it_returns_and_dedups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cordon.rules.toml");
    let st = store(&dir);
    let a = am("cargo build");
    let shown = a.to_toml();
    let wrote = amend::append(&path, &st, &a).unwrap().unwrap();
    assert_eq!(wrote, format!("{RULES_FILE_HEADER}{shown}"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), wrote);
    assert_eq!(
        amend::append(&path, &st, &a).unwrap(),
        None,
        "same pattern+action: no-op"
    );
    let b = am("rm *.tmp");
    assert_eq!(amend::append(&path, &st, &b).unwrap().unwrap(), b.to_toml());
    let rules = amend::load(&path, &st).unwrap().shell;
    let pats: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
    assert_eq!(pats, ["cargo build", r"rm \*.tmp"]);
    assert!(rules.iter().all(|r| r.action == Action::Allow));
    assert!(amend::load(&dir.path().join("missing.toml"), &st)
        .unwrap()
        .shell
        .is_empty());
}

#[test]
fn append_refuses_to_break_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cordon.toml");
    let text = "version = 1\nshell.rules = []\n";
    std::fs::write(&path, text).unwrap();
    let st = store(&dir);
    st.trust(&trust::read_file(&path, Follow::Never).unwrap())
        .unwrap();
    let e = amend::append(&path, &st, &am("ls")).unwrap_err();
    // The appended table would repeat the `shell.rules` key: refused as the parser sees it.
    assert!(
        matches!(&e, Error::Policy(PolicyError::Invalid { message, .. }) if message == "duplicate key"),
        "{e:?}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "unchanged");
}

#[test]
fn concurrent_writers_each_rule_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("cordon.rules.toml"));
    let st = Arc::new(store(&dir));
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (path, st, barrier) = (path.clone(), st.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..10 {
                    amend::append(&path, &st, &am(&format!("tool{t} run {i}"))).unwrap();
                    amend::append(&path, &st, &am(&format!("shared run {i}"))).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = std::fs::read_to_string(&*path).unwrap();
    assert_eq!(text.matches("version = 1").count(), 1);
    let rules = amend::load(&path, &st).unwrap().shell;
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
    let st = store(&dir);
    let policy = Policy::load(&policy_path).unwrap();
    let mut e = Engine::new(&policy);
    for line in ["git push --force", "npm test"] {
        let req = Request::shell("1", vec![Key::split(line)]);
        let Outcome::Allowed { amendments, .. } = e.answer(&req, Answer::Always) else {
            panic!()
        };
        for a in &amendments {
            amend::append(&rules_path, &st, a).unwrap();
        }
    }
    // A new session: the grants come back from the file; the deny still wins.
    let mut rules = Rules::from_policy(&policy);
    rules.add_persisted(amend::load(&rules_path, &st).unwrap());
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

fn refusal(line: &str) -> Error {
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
        assert!(matches!(e, Error::Interpreter { .. }), "{line}: {e}");
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
            Error::PathProgram { program: p } => assert_eq!(p, program, "{line}"),
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
        Error::Interpreter { .. }
    ));
    // The engine refuses the whole "always" answer; nothing is persisted.
    let policy = Policy::parse("version = 1\n", "cordon.toml", std::path::Path::new("/")).unwrap();
    let mut e = Engine::new(&policy);
    let req = Request::shell("1", vec![Key::split("ls"), Key::split("./deploy.sh")]);
    assert!(matches!(
        Amendment::for_request(&req),
        Err(Error::PathProgram { program }) if program == "./deploy.sh"
    ));
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
    let e = amend::append(&rules, &store(&d), &a).unwrap_err();
    // Refused by the link-safe walk, which names the link.
    assert!(
        matches!(&e, Error::RulesFile { source, .. }
            if source.to_string().starts_with(&format!("{} is a symbolic link", rules.display()))),
        "{e:?}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "");
}

/// The rules file is appended to and truncated in place (under its lock), so a second name
/// would be changed with it: a command that can write the policy's directory (a run under
/// another policy, or from a parent directory) hard-links the rules file's name to a file of
/// its choice, and the operator's next "approve always" writes rules into that file, behind
/// the after-run scan. Refused, naming the count, and neither name is touched.
#[test]
fn append_and_retract_never_write_through_a_hard_link() {
    let d = tempfile::tempdir().unwrap();
    let st = store(&d);
    let other = d.path().join("other");
    // Empty: a rules file that would be accepted and appended to.
    std::fs::write(&other, "").unwrap();
    let rules = d.path().join("cordon.rules.toml");
    std::fs::hard_link(&other, &rules).unwrap();
    let refused = |e: Error| {
        assert!(
            matches!(&e, Error::RulesFile { source, .. } if source.to_string().contains("2 names")),
            "{e:?}"
        );
    };
    refused(amend::append(&rules, &st, &am("cargo test")).unwrap_err());
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "");
    // A rule cordon wrote, then a second name for the file: taking it back would cut the
    // other name short too.
    std::fs::remove_file(&rules).unwrap();
    let wrote = amend::append(&rules, &st, &am("cargo test"))
        .unwrap()
        .unwrap();
    std::fs::remove_file(&other).unwrap();
    std::fs::hard_link(&rules, &other).unwrap();
    refused(amend::retract(&rules, &st, &wrote).unwrap_err());
    assert_eq!(std::fs::read_to_string(&other).unwrap(), wrote);
}

/// Rules a command planted or edited (content the trust store does not pin) are refused by
/// `load`, and `append` never builds on (and so never re-pins) them; what cordon itself wrote,
/// and what the operator trusted, loads.
#[test]
fn rules_not_pinned_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let st = store(&d);
    let path = d.path().join("cordon.rules.toml");
    let untrusted = |e: Error, why: &str| match e {
        Error::Policy(PolicyError::Untrusted(u)) => {
            let msg = u.to_string();
            assert!(msg.contains(why), "{msg}");
            assert!(
                msg.contains(&format!("cordon policy trust {}", u.path.display())),
                "{msg}"
            );
        }
        other => panic!("{other}"),
    };
    // Planted.
    let planted = "version = 1\n[[shell.rules]]\npattern = \"*\"\naction = \"allow\"\n";
    std::fs::write(&path, planted).unwrap();
    untrusted(amend::load(&path, &st).unwrap_err(), "not trusted");
    untrusted(
        amend::append(&path, &st, &am("ls")).unwrap_err(),
        "not trusted",
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        planted,
        "untouched"
    );
    // A header alone, or nothing, grants nothing: no trust needed.
    for harmless in ["", "\n", RULES_FILE_HEADER] {
        std::fs::write(&path, harmless).unwrap();
        assert!(amend::load(&path, &st).unwrap().shell.is_empty());
    }
    // What cordon wrote loads; an edit after it is refused with what changed.
    std::fs::remove_file(&path).unwrap();
    amend::append(&path, &st, &am("cargo test")).unwrap();
    assert_eq!(amend::load(&path, &st).unwrap().shell.len(), 1);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        b"[[shell.rules]]\npattern = \"*\"\naction = \"allow\"\n",
    )
    .unwrap();
    let e = amend::load(&path, &st).unwrap_err();
    let Error::Policy(p) = &e else { panic!("{e}") };
    assert!(p.diff().unwrap().contains("+pattern = \"*\""), "{e}");
    untrusted(e, "changed since");
    untrusted(
        amend::append(&path, &st, &am("ls")).unwrap_err(),
        "changed since",
    );
    // The operator trusts the edit: it loads, and cordon appends to it.
    st.trust(&trust::read_file(&path, Follow::Never).unwrap())
        .unwrap();
    assert_eq!(amend::load(&path, &st).unwrap().shell.len(), 2);
    let wrote = amend::append(&path, &st, &am("ls")).unwrap().unwrap();
    assert_eq!(amend::load(&path, &st).unwrap().shell.len(), 3);
    // Retracting re-pins the shorter content.
    assert!(amend::retract(&path, &st, &wrote).unwrap());
    assert_eq!(amend::load(&path, &st).unwrap().shell.len(), 2);
    // A FIFO planted as the rules file is refused at once.
    std::fs::remove_file(&path).unwrap();
    mkfifo(&path);
    let e = amend::load(&path, &st).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

/// A link planted at any component of the rules file's path — a directory on the way, the
/// policy's own directory, the file itself — is refused with a message that names it, and
/// nothing is written (or created) where it points: not only a link at the file's name.
#[test]
fn a_link_at_each_component_of_the_rules_path_is_refused_and_named() {
    let base = tempfile::tempdir().unwrap();
    let s = store(&base);
    let real = base.path().canonicalize().unwrap();
    let dir = real.join("ws/sub");
    std::fs::create_dir_all(&dir).unwrap();
    let elsewhere = real.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("sub")).unwrap();
    let file = dir.join("cordon.rules.toml");
    assert!(amend::append(&file, &s, &am("make")).unwrap().is_some());
    for (at, target) in [
        ("ws", elsewhere.clone()),
        ("ws/sub", elsewhere.join("sub")),
        ("ws/sub/cordon.rules.toml", elsewhere.join("victim")),
    ] {
        let planted = real.join(at);
        let moved = real.join("moved");
        std::fs::rename(&planted, &moved).unwrap();
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        for result in [
            amend::append(&file, &s, &am("cargo test")).map(|_| ()),
            amend::retract(&file, &s, "anything").map(|_| ()),
            amend::ensure(&file).map(|_| ()),
        ] {
            let e = result.unwrap_err().to_string();
            assert!(
                e.contains(&format!("{} is a symbolic link", planted.display())),
                "{at}: {e}"
            );
        }
        assert!(!elsewhere.join("sub/cordon.rules.toml").exists(), "{at}");
        assert!(!elsewhere.join("victim").exists(), "{at}");
        std::fs::remove_file(&planted).unwrap();
        std::fs::rename(&moved, &planted).unwrap();
    }
    // Put back, the file is used again.
    assert!(amend::append(&file, &s, &am("cargo test"))
        .unwrap()
        .is_some());
}

const CHILD_PATH: &str = "CORDON_TEST_AMEND_CHILD_PATH";

/// A rule whose write the disk cut short (ENOSPC; here RLIMIT_FSIZE, which the kernel reports
/// the same way to `write`) leaves the rules file as it was: the remembered rules still load,
/// and the next "approve always" appends to whole content. A torn tail was neither the pinned
/// content nor valid rules: every later run refused the file until it was edited by hand.
#[test]
fn a_rule_cut_short_by_a_full_disk_leaves_the_file_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let st = store(&d);
    let path = d.path().join("cordon.rules.toml");
    amend::append(&path, &st, &am("cargo build"))
        .unwrap()
        .unwrap();
    let before = std::fs::read_to_string(&path).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "full_disk_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_PATH, &path)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(42), "the child's checks failed");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    amend::load(&path, &st).unwrap();
    amend::append(&path, &st, &am("cargo test"))
        .unwrap()
        .unwrap();
    assert_eq!(amend::load(&path, &st).unwrap().shell.len(), 2);
}

/// The child of the test above (does nothing in a normal run).
#[test]
fn full_disk_child() {
    let Ok(path) = std::env::var(CHILD_PATH) else {
        return;
    };
    let path = std::path::PathBuf::from(path);
    let st = TrustStore::at(path.parent().unwrap().join("config/cordon"));
    let len = std::fs::metadata(&path).unwrap().len();
    // SAFETY: SIG_IGN installs no handler, so no code of ours runs in signal context; it only
    // turns the SIGXFSZ an oversized write would raise into EFBIG. This is a child process of
    // its own: the disposition affects nothing else.
    let old = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    assert_ne!(old, libc::SIG_ERR);
    rustix::process::setrlimit(
        rustix::process::Resource::Fsize,
        rustix::process::Rlimit {
            current: Some(len + 20),
            maximum: None,
        },
    )
    .unwrap();
    let long = format!("echo {}", "y".repeat(200));
    amend::append(&path, &st, &am(&long)).unwrap_err();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    std::process::exit(42);
}

const ENSURE_CHILD_PATH: &str = "CORDON_TEST_AMEND_ENSURE_CHILD_PATH";

/// The rules file `ensure` creates before a run (so that the sandbox can keep it read-only) is
/// whole or absent whatever moment a SIGKILL lands: it was created empty, then written (the old
/// `create_new`), and a kill between left a rules file without its header under the name,
/// which every later `ensure` took for the operator's file. Now it is written under a
/// temporary name and renamed onto the name without replacing anything (`create_whole`). The
/// child is killed at each of its calls in turn that open, write, rename or sync in the
/// directory or the file (strace's fault injection, `-P`: the calls on that directory's
/// descriptor or the file's), and after each the file is absent or holds the header, and a
/// second `ensure` leaves it whole.
#[test]
fn a_rules_file_ensure_made_is_whole_or_absent_after_a_kill() {
    use std::os::unix::process::ExitStatusExt;
    let mut killed_at = 0;
    let calls = "openat,write,renameat2,fsync";
    // strace counts each system call apart: the n-th of each.
    for (call, n) in calls.split(',').flat_map(|c| [(c, 1), (c, 2)]) {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cordon.rules.toml");
        let o = std::process::Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-P"])
            .arg(d.path())
            .arg("-P")
            .arg(&path)
            .args(["-e", &format!("trace={calls}")])
            .arg("-e")
            .arg(format!("inject={call}:error=EIO:signal=SIGKILL:when={n}"))
            .arg("--")
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "ensure_child", "--test-threads=1"])
            .env(ENSURE_CHILD_PATH, &path)
            .output()
            .expect("strace is needed for this test (Debian package `strace`)");
        let text = std::fs::read_to_string(&path).ok();
        assert!(
            text.is_none() || text.as_deref() == Some(amend::RULES_FILE_HEADER),
            "killed at {call} {n} ({:?}): the rules file is {text:?}",
            o.status
        );
        if o.status.signal() == Some(9) {
            killed_at += 1;
        }
        amend::ensure(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            amend::RULES_FILE_HEADER,
            "after the kill at {call} {n}"
        );
    }
    assert!(killed_at > 0, "the child was never killed");
}

/// The child of the test above (does nothing in a normal run).
#[test]
fn ensure_child() {
    let Ok(path) = std::env::var(ENSURE_CHILD_PATH) else {
        return;
    };
    assert!(amend::ensure(std::path::Path::new(&path)).unwrap());
}
