//! `cordon policy trust|untrust`, and how a refusal of a file cordon found shows itself: one
//! `cordon: ` line naming the file and the command to run, then (for a changed file) what
//! changed, bounded and safe for the terminal. The attacks themselves, through a sandboxed
//! command, are in the escape suite (`tests/tests/trust_escape.rs`).

mod common;
use common::{command, stderr, stdout};
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// `cordon ARGS…` in `dir`, killed (and the test failed) if it does not end within a minute:
/// a FIFO named like a policy or session must not hang it.
fn bounded(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = command(dir);
    c.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // Unreaped until the thread's wait returns, so the pid is still the child's.
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            panic!("`cordon {}` hung", args.join(" "));
        }
    }
}

fn mkfifo(path: &Path) {
    use rustix::fs::{FileType, Mode, CWD};
    rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}

const POLICY: &str = "version = 1\n[sandbox]\nbackend = \"landlock\"\n[sandbox.paths.w]\nroot = \"sub\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n";

#[test]
fn trust_and_untrust_say_what_they_did() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let file = d.path().join("cordon.toml");
    std::fs::write(&file, POLICY).unwrap();
    let real = std::fs::canonicalize(&file).unwrap();
    let o = bounded(d.path(), &["exec", "--", "true"], &[]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!("cordon: {}: not trusted: ", file.display()))
            && stderr(&o).contains(&format!("`cordon policy trust {}`", real.display())),
        "{}",
        stderr(&o)
    );

    let o = bounded(d.path(), &["policy", "trust"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sum = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .unwrap();
    let sum = stdout(&sum).split_whitespace().next().unwrap().to_string();
    assert_eq!(
        stdout(&o),
        format!("trusted {} (sha256 {sum})\n", real.display())
    );
    let o = bounded(d.path(), &["exec", "--", "true"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // The store: private directories, one private entry.
    use std::os::unix::fs::PermissionsExt;
    let store = common::config_home().join("cordon/trusted");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(store.parent().unwrap()), 0o700);
    let entry = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains(&format!("path = \"{}\"", real.display()))
        })
        .expect("an entry for the file");
    assert_eq!(mode(&entry), 0o600);

    let o = bounded(d.path(), &["policy", "untrust", "cordon.toml"], &[]);
    assert_eq!(
        stdout(&o),
        format!("no longer trusted: {}\n", real.display())
    );
    let o = bounded(d.path(), &["policy", "untrust", "cordon.toml"], &[]);
    assert_eq!(stdout(&o), format!("{} was not trusted\n", real.display()));
    let o = bounded(d.path(), &["exec", "--", "true"], &[]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));

    // A file that does not load is trusted as it is, with a warning; using it says why.
    std::fs::write(&file, "version = 1\nnetwrok = 1\n").unwrap();
    let o = bounded(d.path(), &["policy", "trust"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("cordon: warning: it does not load: ")
            && stderr(&o).contains("unknown field `netwrok`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_rules_file_is_checked_as_a_rules_file_when_trusted() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("cordon.rules.toml");
    // Remembered network rules: valid in a rules file, unknown to a policy.
    std::fs::write(
        &file,
        "version = 1\n[[network.rules]]\nhost = \"api.example.org:443\"\naction = \"allow\"\n",
    )
    .unwrap();
    let o = bounded(d.path(), &["policy", "trust", "cordon.rules.toml"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "a valid rules file loads");
    // A rules file holding what only a policy may: trusted, with the warning.
    std::fs::write(&file, "version = 1\n[sandbox]\nnetwork = \"allow\"\n").unwrap();
    let o = bounded(d.path(), &["policy", "trust", "cordon.rules.toml"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("cordon: warning: it does not load: "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_changed_file_shows_what_changed_bounded_and_safe_for_the_terminal() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let file = d.path().join("cordon.toml");
    std::fs::write(&file, POLICY).unwrap();
    common::trust(d.path());
    // Escape sequences that would rewrite the terminal, and far too many lines.
    let mut changed = POLICY.replace("landlock", "none\u{1b}]0;owned\u{7}\u{1b}[2J");
    for i in 0..2000 {
        changed.push_str(&format!("# line {i}\n"));
    }
    std::fs::write(&file, &changed).unwrap();
    for args in [
        &["exec", "--", "true"][..],
        &["check", "shell", "--", "ls"],
        &["profile", "--format", "landlock"],
        &["policy", "test"],
    ] {
        let o = bounded(d.path(), args, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {err}");
        let first = err.lines().next().unwrap();
        assert!(
            first.starts_with(&format!(
                "cordon: {}: changed since you trusted it",
                file.display()
            )),
            "{first}"
        );
        assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
        assert!(
            err.lines()
                .any(|l| l == "+backend = \"none\\u{1b}]0;owned\\u{7}\\u{1b}[2J\""),
            "{err}"
        );
        assert!(err.lines().any(|l| l == "-backend = \"landlock\""), "{err}");
        assert!(err.lines().count() <= 205, "{}", err.lines().count());
        assert!(err.trim_end().ends_with("of the diff left out)"), "{err}");
    }
}

#[test]
fn special_files_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    mkfifo(&d.path().join("cordon.toml"));
    for args in [
        &["exec", "--", "true"][..],
        &["policy", "trust"],
        &["check", "shell", "--", "ls"],
    ] {
        let o = bounded(d.path(), args, &[]);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("not a regular file (a FIFO)"),
            "{}",
            stderr(&o)
        );
    }
    // Named with --policy, too.
    let fifo = d.path().join("cordon.toml");
    let o = bounded(
        d.path(),
        &["exec", "--policy", fifo.to_str().unwrap(), "--", "true"],
        &[],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let o = bounded(
        d.path(),
        &["exec", "--policy", "/dev/zero", "--", "true"],
        &[],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains("character device"), "{}", stderr(&o));
    // A session file that is a FIFO.
    let run = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(run.path().join("cordon/sessions")).unwrap();
    mkfifo(&run.path().join("cordon/sessions/s.json"));
    let o = bounded(
        d.path(),
        &["session", "show", "s"],
        &[("XDG_RUNTIME_DIR", run.path())],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

/// A session file cordon did not save (forged by a command that could write the sessions
/// directory during another run) is refused, not taken as grants.
#[test]
fn a_forged_session_is_refused() {
    let d = common::workspace(
        "version = 1\n[sandbox]\nbackend = \"landlock\"\n[sandbox.paths.w]\nroot = \"sub\"\nmode = \"rw\"\n[shell]\ndefault = \"ask\"\n",
    );
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let run = tempfile::tempdir().unwrap();
    let env = [("XDG_RUNTIME_DIR", run.path())];
    // A genuine session: cordon saves (and pins) it; it opens again.
    let o = bounded(d.path(), &["session", "revoke", "s"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bounded(d.path(), &["exec", "--session", "s", "--", "true"], &env);
    assert_eq!(
        o.status.code(),
        Some(126),
        "asks, no terminal: {}",
        stderr(&o)
    );
    // Forged: a grant for the command, with the session's own id.
    let file = run.path().join("cordon/sessions/s.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let forged = serde_json::json!({
        "v": 1, "id": saved["id"], "grants": [{"tool": "shell", "key": ["true"]}],
        "doom": {"last": null, "count": 0},
    });
    std::fs::write(&file, format!("{forged}\n")).unwrap();
    for args in [
        &["exec", "--session", "s", "--", "true"][..],
        &["session", "show", "s"],
    ] {
        let o = bounded(d.path(), args, &env);
        assert_eq!(o.status.code(), Some(125), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with(&format!(
                "cordon: session file {}: it is not as cordon saved it",
                std::fs::canonicalize(&file).unwrap().display()
            )),
            "{}",
            stderr(&o)
        );
    }
    // Deleted, the session starts afresh.
    std::fs::remove_file(&file).unwrap();
    let o = bounded(d.path(), &["session", "show", "s"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
