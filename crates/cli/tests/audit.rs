//! `cordon exec` records every decision before it runs anything; `cordon audit verify|show`.

mod common;
use common::{cordon, stderr, stdout};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

fn workspace(audit_log: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let policy = format!(
        r#"version = 1
[sandbox.paths.w]
root = "."
mode = "rw"
[shell]
default = "ask"
[[shell.rules]]
pattern = "cat *"
action = "allow"
[[shell.rules]]
pattern = "echo *"
action = "allow"
[[shell.rules]]
pattern = "rm *"
action = "deny"
reason = "no deleting here"
[approval]
audit_log = "{audit_log}"
"#
    );
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    common::trust(d.path());
    d
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn exec_writes_its_record_before_the_command_runs() {
    // A log outside the workspace, in a read-only root, so that the command can read it (a
    // log in a writable root is hidden from it: see below).
    let logs = tempfile::tempdir().unwrap();
    let logs_dir = std::fs::canonicalize(logs.path()).unwrap();
    let log = logs_dir.join("audit.jsonl");
    let d = workspace(log.to_str().unwrap());
    let policy = d.path().join("cordon.toml");
    let before = std::fs::read_to_string(&policy).unwrap();
    let rule_line = before.lines().count() + 4;
    let text = before
        + &format!(
            "[sandbox.paths.logs]\nroot = {:?}\nmode = \"ro\"\n\
             [[shell.rules]]\npattern = \"cat /**/audit.jsonl\"\naction = \"allow\"\n",
            logs_dir.to_str().unwrap()
        );
    std::fs::write(&policy, text).unwrap();
    common::trust(d.path());
    // The command reads the log: its own record is already there.
    let o = cordon(d.path(), &["exec", "--", "cat", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let seen: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
    assert_eq!(seen["seq"], 0);
    assert_eq!(seen["decision"], "allow");
    assert_eq!(seen["tool"], "shell");
    assert_eq!(
        seen["keys"],
        serde_json::json!([["cat", log.to_str().unwrap()]])
    );
    assert_eq!(seen["preview"], format!("cat {}", log.display()));
    assert_eq!(seen["by"]["kind"], "rule");
    assert_eq!(seen["by"]["pattern"], "cat /**/audit.jsonl");
    let at = seen["by"]["at"].as_str().unwrap();
    assert!(at.ends_with(&format!("/cordon.toml:{rule_line}:1")), "{at}");
    assert_eq!(seen["prev"], "0".repeat(64));
    assert_eq!(records(&log), [seen]);
}

#[test]
fn a_log_in_the_workspace_is_hidden_from_the_command() {
    let d = workspace("audit.jsonl");
    let o = cordon(d.path(), &["exec", "--", "cat", "audit.jsonl"]);
    // The decision is recorded (durably) before the command starts, so the log is not empty
    // while `cat` runs: empty output means the command saw none of it. (bwrap refuses the
    // read; the Landlock backend's init covers the log with /dev/null, which reads empty.)
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    // Recorded all the same.
    assert_eq!(records(&d.path().join("audit.jsonl")).len(), 1);
}

#[test]
fn every_kind_of_decision_is_recorded() {
    let d = workspace("audit.jsonl");
    let log = d.path().join("audit.jsonl");
    // Denied by a rule: recorded, then refused as before.
    let o = cordon(d.path(), &["exec", "--", "rm", "-rf", "x"]);
    assert_eq!(o.status.code(), Some(126));
    assert!(stderr(&o).starts_with("cordon: denied: `rm -rf x`: no deleting here"));
    // An ask with no terminal: denied, nobody to ask.
    let o = cordon(d.path(), &["exec", "--", "touch", "asked"]);
    assert_eq!(o.status.code(), Some(126));
    assert!(!d.path().join("asked").exists());
    // An ask allowed by --approve-all, denied by --strict.
    let o = cordon(d.path(), &["exec", "--approve-all", "--", "touch", "asked"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.path().join("asked").exists());
    let o = cordon(
        d.path(),
        &["exec", "--strict", "-c", "touch strict && echo hi"],
    );
    assert_eq!(o.status.code(), Some(126));

    let r = records(&log);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0]["decision"], "deny");
    assert_eq!(r[0]["by"]["pattern"], "rm *");
    assert_eq!(r[0]["reason"], "no deleting here");
    assert_eq!(r[1]["decision"], "deny");
    assert_eq!(r[1]["by"], serde_json::json!({"kind": "nobody-to-ask"}));
    assert!(r[1]["reason"].as_str().unwrap().contains("no terminal"));
    assert_eq!(r[2]["decision"], "allow");
    assert_eq!(
        r[2]["by"],
        serde_json::json!({"kind": "mode", "mode": "approve-all"})
    );
    assert_eq!(r[3]["decision"], "deny");
    assert_eq!(
        r[3]["by"],
        serde_json::json!({"kind": "mode", "mode": "strict"})
    );
    assert_eq!(
        r[3]["keys"],
        serde_json::json!([["touch", "strict"], ["echo", "hi"]])
    );
    // Each cordon process is its own session; the chain spans them.
    for (i, rec) in r.iter().enumerate() {
        assert_eq!(rec["seq"], i as u64);
    }
    assert_ne!(r[0]["session"], r[1]["session"]);
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn the_log_is_relative_to_the_policy_file() {
    let d = workspace("logs/audit.jsonl");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let o = cordon(
        &d.path().join("sub"),
        &["exec", "--policy", "../cordon.toml", "--", "echo", "hi"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records(&d.path().join("logs/audit.jsonl")).len(), 1);
    assert!(!d.path().join("sub/logs").exists());
}

#[test]
fn an_unwritable_log_stops_the_command() {
    let d = workspace("blocker/audit.jsonl");
    std::fs::write(d.path().join("blocker"), "a file, not a directory").unwrap();
    let o = cordon(d.path(), &["exec", "--approve-all", "--", "touch", "ran"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("cordon: audit log "), "{e}");
    assert!(
        e.contains("blocker/audit.jsonl: cannot create its directory"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!d.path().join("ran").exists(), "the command must not run");
    // A denial that cannot be recorded is cordon's failure too (by a rule, by the mode).
    for args in [
        &["exec", "--", "rm", "x"][..],
        &["exec", "--", "touch", "ran"][..],
    ] {
        let o = cordon(d.path(), args);
        assert_eq!(o.status.code(), Some(125));
        assert!(
            stderr(&o).starts_with("cordon: audit log "),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_tampered_log_stops_the_next_command() {
    let d = workspace("audit.jsonl");
    for word in ["one", "two", "three"] {
        let o = cordon(d.path(), &["exec", "--", "echo", word]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    // Make the last line something no crash leaves (a complete line that is not a record):
    // appending would bury it; the writer refuses, nothing runs. (The writer reads only the
    // end of the log; `cordon audit verify` checks the whole chain.)
    let log = d.path().join("audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[2] = lines[2].replace("\"decision\":\"allow\"", "\"decision\":\"maybe\"");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let o = cordon(d.path(), &["exec", "--approve-all", "--", "touch", "ran"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("refusing to append"), "{}", stderr(&o));
    assert!(!d.path().join("ran").exists());
}

/// A changed last record (or a changed head) with a whole chain: the head alone stands
/// against it, and on Landlock a sandboxed command can change a file's attributes — so it is
/// said loudly in the next record and by `verify`, but it does not stop the operator's work
/// (issue 25; before, it refused every later run).
#[test]
fn a_changed_last_record_is_said_not_a_stop() {
    let d = workspace("audit.jsonl");
    for word in ["one", "two"] {
        let o = cordon(d.path(), &["exec", "--", "echo", word]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let log = d.path().join("audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replace("echo two", "echo TWO")).unwrap();
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = cordon(d.path(), &["exec", "--", "echo", "three"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let last = records(&log).pop().unwrap();
    assert!(
        last["repair"]
            .as_str()
            .unwrap()
            .starts_with("HEAD MISMATCH"),
        "{last}"
    );
}

#[test]
fn verify_reports_intact_logs_and_tampering_by_line() {
    let d = workspace("audit.jsonl");
    for word in ["one", "two", "three"] {
        let o = cordon(d.path(), &["exec", "--", "echo", word]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("audit.jsonl: 3 record(s), seq 0..2, "),
        "{out}"
    );
    assert!(out.lines().next().unwrap().ends_with(": intact"), "{out}");
    assert!(out.contains("no secret key"), "{out}");
    assert_eq!(stderr(&o), "");

    // Turn the second record's allow into a deny.
    let path = d.path().join("audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let edited = lines[1].replace(r#""decision":"allow""#, r#""decision":"deny""#);
    assert_ne!(edited, lines[1]);
    std::fs::write(&path, format!("{}\n{edited}\n{}\n", lines[0], lines[2])).unwrap();
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with("cordon: audit.jsonl:2: changed after it was written"),
        "{e}"
    );
    assert!(stdout(&o).contains("1 problem(s) found"), "{}", stdout(&o));

    // A torn tail is told apart from tampering.
    std::fs::write(&path, &text).unwrap();
    let mut torn = text.clone().into_bytes();
    torn.extend_from_slice(br#"{"v":1,"time":"20"#);
    std::fs::write(&path, torn).unwrap();
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("cordon: audit.jsonl:4: torn tail"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("complete records intact; torn tail"),
        "{}",
        stdout(&o)
    );
    // ...and the next exec moves it aside and goes on.
    let o = cordon(d.path(), &["exec", "--", "echo", "four"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("torn tail of 17 bytes"),
        "{}",
        stdout(&o)
    );

    let o = cordon(d.path(), &["audit", "verify", "missing.jsonl"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).starts_with("cordon: audit log missing.jsonl: cannot open"));
}

#[test]
fn show_prints_one_readable_line_per_record() {
    let d = workspace("audit.jsonl");
    let o = cordon(d.path(), &["exec", "--", "echo", "hi\u{1b}[2J"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cordon(d.path(), &["exec", "--", "rm", "-r", "x"]);
    assert_eq!(o.status.code(), Some(126));
    let o = cordon(d.path(), &["audit", "show", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    let r = records(&d.path().join("audit.jsonl"));
    let session = &r[0]["session"].as_str().unwrap()[..8];
    let time = r[0]["time"].as_str().unwrap();
    assert!(
        lines[0].starts_with(&format!(
            "{time} {session} #0 allow shell echo hi\\u{{1b}}[2J by "
        )),
        "{out}"
    );
    assert!(
        lines[0].contains("/cordon.toml:10:1 (echo *): rule `echo *` says allow"),
        "{out}"
    );
    assert!(!out.contains('\u{1b}'), "control characters are escaped");
    assert!(lines[1].contains(" #1 deny  shell rm -r x by "), "{out}");
    assert!(lines[1].ends_with("(rm *): no deleting here"), "{out}");

    std::fs::write(d.path().join("bad.jsonl"), "{}\n").unwrap();
    let o = cordon(d.path(), &["audit", "show", "bad.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("cordon: bad.jsonl:1: not an audit record"));
}

/// `cordon exec` in an empty directory (the embedded default policy) with the given
/// environment changes.
fn default_policy_exec(dir: &Path, env: &[(&str, Option<&Path>)], argv: &[&str]) -> Output {
    let mut c = common::command(dir);
    c.arg("exec").arg("--").args(argv);
    for (name, value) in env {
        match value {
            Some(v) => c.env(name, v),
            None => c.env_remove(name),
        };
    }
    c.output().unwrap()
}

#[test]
fn a_policy_without_a_log_records_in_the_users_state_directory() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let env = [("XDG_STATE_HOME", Some(state.path()))];
    let o = default_policy_exec(ws.path(), &env, &["touch", "made"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Denied by the embedded default's rules: recorded too, and nothing runs.
    let o = default_policy_exec(ws.path(), &env, &["git", "reset", "--hard", "HEAD~1"]);
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));

    let log = state.path().join("cordon/audit.jsonl");
    let r = records(&log);
    let decisions: Vec<_> = r.iter().map(|r| r["decision"].clone()).collect();
    assert_eq!(decisions, ["allow", "deny"]);
    assert_eq!(r[0]["keys"], serde_json::json!([["touch", "made"]]));
    assert_eq!(r[1]["by"]["kind"], "rule");
    // Private: the records hold every command line.
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state.path().join("cordon")), 0o700);
    assert_eq!(mode(&log), 0o600);

    // `audit verify` and `audit show` without a FILE read the same log.
    let mut verify = common::command(ws.path());
    verify
        .args(["audit", "verify"])
        .env("XDG_STATE_HOME", state.path());
    let v = verify.output().unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", stderr(&v));
    assert!(
        stdout(&v).starts_with(&format!("{}: 2 record(s)", log.display())),
        "{}",
        stdout(&v)
    );
    let mut show = common::command(ws.path());
    show.args(["audit", "show"])
        .env("XDG_STATE_HOME", state.path());
    let s = show.output().unwrap();
    assert_eq!(s.status.code(), Some(0), "{}", stderr(&s));
    assert!(
        stdout(&s).contains("git reset --hard HEAD~1"),
        "{}",
        stdout(&s)
    );

    // Without XDG_STATE_HOME: under HOME.
    let home = tempfile::tempdir().unwrap();
    let env = [("XDG_STATE_HOME", None), ("HOME", Some(home.path()))];
    let o = default_policy_exec(ws.path(), &env, &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        records(&home.path().join(".local/state/cordon/audit.jsonl")).len(),
        1
    );
}

#[test]
fn nowhere_to_record_is_a_refusal_and_nothing_runs() {
    let ws = tempfile::tempdir().unwrap();
    // Neither variable usable (a relative XDG_STATE_HOME is ignored, as the XDG spec says).
    let rel = Path::new("relative/state");
    let o = default_policy_exec(
        ws.path(),
        &[("XDG_STATE_HOME", Some(rel)), ("HOME", None)],
        &["touch", "made"],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cordon: nowhere to record decisions"),
        "{err}"
    );
    assert!(!ws.path().join("made").exists());
    assert!(!ws.path().join("relative").exists());

    // A default place that cannot be created: refused with a hint, nothing runs.
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let o = default_policy_exec(
        ws.path(),
        &[("XDG_STATE_HOME", Some(blocker.path()))],
        &["touch", "made"],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cordon: audit log "), "{err}");
    assert!(err.contains("set approval.audit_log"), "{err}");
    assert!(!ws.path().join("made").exists());
}

#[test]
fn a_log_named_through_a_symlink_in_the_workspace_is_refused() {
    // Dotfile managers link `~/.local` into a repository; run from HOME, that link lies in the
    // writable root, and a command could re-point it away from the log's history.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("dotfiles/local")).unwrap();
    std::os::unix::fs::symlink("dotfiles/local", home.path().join(".local")).unwrap();
    let env = [("XDG_STATE_HOME", None), ("HOME", Some(home.path()))];
    let o = default_policy_exec(home.path(), &env, &["touch", "made"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is named through the symlink"), "{err}");
    assert!(err.contains("/.local inside the writable root"), "{err}");
    assert!(!home.path().join("made").exists());
    assert!(
        !home.path().join("dotfiles/local/state").exists(),
        "nothing recorded"
    );
    // The same link outside the writable root is followed as usual.
    let ws = tempfile::tempdir().unwrap();
    let o = default_policy_exec(ws.path(), &env, &["touch", "made"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        records(&home.path().join("dotfiles/local/state/cordon/audit.jsonl")).len(),
        1
    );
}

#[test]
fn root_does_not_record_into_another_users_home() {
    // `sudo -E cordon exec …` keeps the user's HOME: root must not create (or follow links)
    // in it. CI runs the tests as root; the check is about what root does.
    assert!(
        rustix::process::geteuid().is_root(),
        "run the CLI tests as root (CI does)"
    );
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(65534), Some(65534)).unwrap();
    let env = [("XDG_STATE_HOME", None), ("HOME", Some(home.path()))];
    let o = default_policy_exec(ws.path(), &env, &["touch", "made"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("belongs to uid 65534"), "{err}");
    assert!(!ws.path().join("made").exists());
    assert!(
        !home.path().join(".local").exists(),
        "nothing created in it"
    );

    // A link the user planted in a home root owns: refused, not followed.
    let home = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let link = home.path().join(".local");
    std::os::unix::fs::symlink(target.path(), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let env = [("XDG_STATE_HOME", None), ("HOME", Some(home.path()))];
    let o = default_policy_exec(ws.path(), &env, &["touch", "made"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/.local belongs to uid 65534"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_dir(target.path()).unwrap().next().is_none());
}

/// `show`'s filters, `--json`, and `summary`.
#[test]
fn show_filters_and_summary() {
    let d = workspace("audit.jsonl");
    let o = cordon(d.path(), &["exec", "--", "echo", "hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cordon(d.path(), &["exec", "--", "rm", "-r", "x"]);
    assert_eq!(o.status.code(), Some(126));
    let show = |args: &[&str]| {
        let mut a = vec!["audit", "show"];
        a.extend_from_slice(args);
        a.push("audit.jsonl");
        let o = cordon(d.path(), &a);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(show(&[]).lines().count(), 2);
    let denied = show(&["--decision", "deny"]);
    assert_eq!(denied.lines().count(), 1, "{denied}");
    assert!(denied.contains("rm -r x"), "{denied}");
    assert_eq!(show(&["--since", "today"]).lines().count(), 2);
    assert_eq!(show(&["--until", "2000-01-01"]).lines().count(), 0);
    assert_eq!(show(&["--tool", "network"]).lines().count(), 0);
    assert_eq!(show(&["--tool", "shell"]).lines().count(), 2);
    let r = records(&d.path().join("audit.jsonl"));
    // Each `cordon exec` is a session of its own.
    let session = &r[0]["session"].as_str().unwrap()[..6];
    assert_eq!(show(&["--session", session]).lines().count(), 1);
    assert_eq!(show(&["--session", "zz"]).lines().count(), 0);
    // --json: the log's own lines.
    let json = show(&["--json", "--decision", "allow"]);
    let text = std::fs::read_to_string(d.path().join("audit.jsonl")).unwrap();
    assert_eq!(json, format!("{}\n", text.lines().next().unwrap()));
    let o = cordon(
        d.path(),
        &["audit", "show", "--since", "yesterday", "audit.jsonl"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a date"), "{}", stderr(&o));

    let o = cordon(d.path(), &["audit", "summary", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 call(s): 1 allowed, 0 asked, 1 denied"),
        "{out}"
    );
    assert!(out.contains("denied 1x: rm -r x"), "{out}");
}

/// `report --html`: rendered by a real headless Chromium (from the distribution; .ci/run
/// installs it), its script run: the rows, the filter from the address, the chain's status,
/// and a record's markup shown as text, never parsed.
#[test]
fn the_html_report_renders_in_a_real_browser() {
    let chromium = Path::new("/usr/bin/chromium");
    assert!(
        chromium.exists(),
        "Chromium is needed to test the HTML report: apt-get install chromium (.ci/run does)"
    );
    let d = workspace("audit.jsonl");
    let o = cordon(
        d.path(),
        &["exec", "--", "echo", "<img src=x onerror=alert(1)>"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cordon(d.path(), &["exec", "--", "rm", "-r", "x"]);
    assert_eq!(o.status.code(), Some(126));
    // A command whose text a browser would show as another: reordered by a bidirectional
    // override, with a Cyrillic `с` for `c`. Shown escaped, as on the terminal (issue 21,
    // round 9; the page drew them raw).
    let o = cordon(
        d.path(),
        &[
            "exec",
            "--",
            "echo",
            "\u{441}url evil.example \u{202e}hs.tsil",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = d.path().join("report.html");
    let o = cordon(
        d.path(),
        &[
            "audit",
            "report",
            "--html",
            page.to_str().unwrap(),
            "audit.jsonl",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network"
    );
    let render = |fragment: &str| {
        let profile = tempfile::tempdir().unwrap();
        let o = std::process::Command::new("timeout")
            .arg("120")
            .arg(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--dump-dom")
            .arg(format!("file://{}{fragment}", page.display()))
            .output()
            .unwrap();
        assert!(o.status.success(), "chromium: {}", stderr(&o));
        stdout(&o)
    };
    let dom = render("");
    assert!(dom.contains(r#"<span id="shown">3</span>"#), "{dom}");
    assert!(dom.contains("intact: 3 record(s)"), "{dom}");
    assert_eq!(dom.matches(r#"<tr class="rec "#).count(), 3, "{dom}");
    assert!(
        dom.contains(r"echo \u{441}url evil.example \u{202e}hs.tsil"),
        "{dom}"
    );
    assert!(
        !dom.contains('\u{441}') && !dom.contains('\u{202e}'),
        "{dom}"
    );
    // The agent's markup is text in the page, not an element.
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;"), "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    let dom = render("#decision=deny");
    assert!(dom.contains(r#"<span id="shown">1</span>"#), "{dom}");
    assert!(dom.contains(r#"<tr class="rec deny">"#), "{dom}");
    assert!(!dom.contains(r#"<tr class="rec allow">"#), "{dom}");
}

/// The hook decides without preparing the sandbox (it never runs anything; `cordon exec`
/// prepares it for what the hook allowed), but still refuses a log named through a link in
/// the writable root, as `cordon exec` does: the call is not allowed and nothing is recorded.
#[test]
fn the_hook_refuses_a_log_named_through_a_symlink_in_the_workspace() {
    use std::io::Write;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("dotfiles/local")).unwrap();
    std::os::unix::fs::symlink("dotfiles/local", home.path().join(".local")).unwrap();
    let input = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": home.path(),
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "echo hi"}, "tool_use_id": "t"
    });
    let mut c = common::command(home.path());
    c.args(["hook", "claude"])
        .env_remove("XDG_STATE_HOME")
        .env("HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(!out.contains(r#""allow""#), "{out}");
    assert!(
        format!("{out}{err}").contains("is named through the symlink"),
        "{out}{err}"
    );
    assert!(
        !home.path().join("dotfiles/local/state").exists(),
        "nothing recorded"
    );
    // The same link outside the writable root is followed: the hook decides and records.
    let ws = tempfile::tempdir().unwrap();
    let input = input.to_string().replace(
        &home.path().display().to_string(),
        &ws.path().display().to_string(),
    );
    let mut c = common::command(ws.path());
    c.args(["hook", "claude"])
        .env_remove("XDG_STATE_HOME")
        .env("HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        stdout(&o).contains(r#""allow""#),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert_eq!(
        records(&home.path().join("dotfiles/local/state/cordon/audit.jsonl")).len(),
        1
    );
}

/// A call blocked after its decision was recorded (the hook's deadline passed after `allow`
/// was written; the record the hook writes then, built here by the same function): `show`
/// marks the allow as blocked by the refusal that follows, and `summary` counts one call,
/// denied (refused by cordon) — not an allowed call plus a denied one.
#[test]
fn a_call_blocked_after_its_allow_shows_and_counts_as_blocked() {
    use cordon_approval::audit::{AuditLog, By, Record};
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path).unwrap();
    let request = cordon_approval::Request::new(
        "call-1",
        "shell",
        vec![cordon_approval::Key::new(["touch", "x"])],
    );
    let allow = Record::new(
        "shell",
        cordon_policy::Action::Allow,
        By::Builtin {
            tag: "default".into(),
        },
        "the shell default is allow",
    )
    .request("call-1")
    .keys([["touch", "x"]])
    .preview("touch x");
    log.append(&allow).unwrap();
    let late = cordon_approval::refusal_record(
        &request,
        "deadline",
        "blocked after its decision was recorded: no decision within the hook's 10 s deadline",
    );
    log.append(&late).unwrap();

    let o = cordon(d.path(), &["audit", "show", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains(" allow ") && lines[0].ends_with("[then blocked: #1]"),
        "{out}"
    );
    assert!(
        lines[1].contains("refusal deny") && lines[1].contains("by builtin:deadline"),
        "{out}"
    );

    let o = cordon(d.path(), &["audit", "summary", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("1 call(s): 0 allowed, 0 asked, 1 denied (1 refused by cordon)"),
        "{out}"
    );
    assert!(out.contains("denied 1x: touch x"), "{out}");
}

/// The runs Codex starts in its own sandbox record to `LOGDIR/codex/audit.jsonl` (the state
/// apart, docs/hooks.md): `cordon audit` without a FILE read only the policy's log, so their
/// decisions and after-run findings were not in the view. Now `show` merges them in time
/// order, each marked as the Codex runs' log's, `verify` checks both chains and `summary`
/// counts both; a named FILE is read alone.
#[test]
fn the_codex_runs_log_beside_the_policys_is_read_too_and_marked() {
    let d = workspace("logs/audit.jsonl");
    let logs = std::fs::canonicalize(d.path()).unwrap().join("logs");
    std::fs::create_dir_all(logs.join("codex")).unwrap();
    let o = cordon(d.path(), &["exec", "--", "echo", "main"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A run recording to the log apart, as a `--state codex` run does.
    let apart = logs.join("codex/audit.jsonl");
    let e = workspace(apart.to_str().unwrap());
    let o = cordon(e.path(), &["exec", "--", "echo", "apart"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records(&apart).len(), 1);

    let o = cordon(d.path(), &["audit", "show"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("echo main") && !lines[0].contains("[codex log]"),
        "{out}"
    );
    assert!(
        lines[1].contains("echo apart") && lines[1].ends_with(" [codex log]"),
        "{out}"
    );

    let o = cordon(d.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for log in [logs.join("audit.jsonl"), apart.clone()] {
        assert!(
            out.contains(&format!("{}: 1 record(s)", log.display())),
            "{out}"
        );
    }
    let o = cordon(d.path(), &["audit", "summary"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 call"), "{}", stdout(&o));

    // A broken chain there fails verify as the main log's would.
    let mut text = std::fs::read_to_string(&apart).unwrap();
    text = text.replace("apart", "apArt");
    std::fs::write(&apart, text).unwrap();
    let o = cordon(d.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));

    // A FILE named is read alone.
    let o = cordon(d.path(), &["audit", "show", "logs/audit.jsonl"]);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
}
