//! `cordon check` prints what `exec` decides — the one evaluator, with the mode, the
//! remembered rules and the session's grants — and exits 0 allow, 1 ask, 2 deny; a closed
//! pipe ends it quietly.

mod common;
use common::{cordon, stderr, stdout};

use serde_json::Value;

const WORKSPACE: &str = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n";

fn workspace(body: &str) -> tempfile::TempDir {
    workspace_in_mode(body, "")
}

/// A workspace whose `[approval]` table adds `approval` (e.g. a mode).
fn workspace_in_mode(body: &str, approval: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        format!("{WORKSPACE}{body}[approval]\naudit_log = \"audit.jsonl\"\n{approval}"),
    )
    .unwrap();
    common::trust(d.path());
    d
}

/// `cordon check --json ARGS…`: the exit code and the decision.
fn check(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let o = cordon(dir, &all);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

#[test]
fn the_exit_code_is_the_decision() {
    let d = workspace(
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\n",
    );
    for (argv, code, decision) in [
        (&["shell", "--", "ls"][..], 0, "allow"),
        (&["shell", "--", "touch", "x"], 1, "ask"),
        (&["shell", "--", "rm", "x"], 2, "deny"),
        (&["shell", "-c", "ls; rm x"], 2, "deny"),
    ] {
        let (got, v) = check(d.path(), argv);
        assert_eq!(got, Some(code), "{argv:?}: {v}");
        assert_eq!(v["decision"], decision, "{argv:?}: {v}");
    }
    // The human output exits the same way.
    let o = cordon(d.path(), &["check", "shell", "--", "touch", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("decision: ask\n"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("\nmode:     interactive\n"),
        "{}",
        stdout(&o)
    );
    assert!(
        !d.path().join("audit.jsonl").exists(),
        "check records nothing"
    );
}

#[test]
fn the_mode_decides_for_check_as_for_exec() {
    // approve-all in the policy: exec runs an ask without asking; check says allow.
    let d = workspace_in_mode("[shell]\ndefault = \"ask\"\n", "mode = \"approve-all\"\n");
    let (code, v) = check(d.path(), &["shell", "-c", "touch x"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["mode"], "approve-all");
    assert_eq!(v["rule"], "mode approve-all");
    let o = cordon(d.path(), &["exec", "-c", "touch x"]);
    assert_eq!(o.status.code(), Some(0), "exec agrees: {}", stderr(&o));
    assert!(d.path().join("x").exists());

    // The flags, as exec's.
    let d = workspace("[shell]\ndefault = \"ask\"\n");
    let (code, v) = check(d.path(), &["--approve-all", "shell", "-c", "touch y"]);
    assert_eq!((code, v["decision"].as_str()), (Some(0), Some("allow")));
    let (code, v) = check(d.path(), &["--strict", "shell", "-c", "touch y"]);
    assert_eq!((code, v["decision"].as_str()), (Some(2), Some("deny")));
    assert_eq!(v["rule"], "mode strict");
}

#[test]
fn check_network_sees_the_remembered_rules_as_exec_does() {
    let d = workspace(
        "[sandbox]\nnetwork = \"proxy\"\n[network]\ndefault = \"ask\"\nallow = [\"pkgs.example.org:443\"]\n",
    );
    let (code, v) = check(d.path(), &["network", "web.example.org:8080"]);
    assert_eq!(
        (code, v["decision"].as_str()),
        (Some(1), Some("ask")),
        "{v}"
    );
    // "Approve always" remembered this host and port (and the operator trusts the file).
    std::fs::write(
        d.path().join("cordon.rules.toml"),
        "version = 1\n[[network.rules]]\nhost = \"web.example.org:8080\"\naction = \"allow\"\n",
    )
    .unwrap();
    common::trust_file(d.path(), "cordon.rules.toml");
    let (code, v) = check(d.path(), &["network", "web.example.org:8080"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["decision"], "allow");
    let rule = v["rule"].as_str().unwrap();
    assert!(rule.contains("cordon.rules.toml:2:1"), "{rule}");
    // Another port is still the default's.
    let (code, _) = check(d.path(), &["network", "web.example.org:8081"]);
    assert_eq!(code, Some(1));
}

#[test]
fn a_closed_pipe_ends_check_quietly() {
    let d = workspace("[shell]\ndefault = \"deny\"\n");
    for json in [false, true] {
        let (reader, writer) = std::io::pipe().unwrap();
        // Nobody reads: every write gets EPIPE.
        drop(reader);
        let mut c = common::command(d.path());
        c.arg("check");
        if json {
            c.arg("--json");
        }
        let o = c
            .args(["shell", "-c", "rm -rf x; ls; cat y"])
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "the decision's code: {}",
            stderr(&o)
        );
        assert_eq!(stderr(&o), "", "no panic, no message");
    }
}

/// The seam (issue 26): the shell tool reads, the engine alone decides, so a line that is only
/// state-only builtins (`true`, `[ -n x ]`, `cd sub`) gets the same answer from
/// `check` and `exec` (before: check allow, exec ask), and an option's effect is lifted only by
/// an allow rule that names the option, in both.
#[test]
fn check_and_exec_agree_on_passing_commands_and_option_concerns() {
    let d = workspace(
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"find\"\naction = \"allow\"\n",
    );
    std::fs::create_dir(d.path().join("sub")).unwrap();
    for line in ["true", "[ -n x ]", "cd sub && true"] {
        let (code, v) = check(d.path(), &["shell", "-c", line]);
        assert_eq!(
            (code, v["decision"].as_str()),
            (Some(0), Some("allow")),
            "{line}: {v}"
        );
        // exec without a terminal: an ask would be refused (126); it runs.
        let o = cordon(d.path(), &["exec", "-c", line]);
        assert_eq!(o.status.code(), Some(0), "{line}: {}", stderr(&o));
    }
    // `find . -delete`: the rule allows `find`, not its `-delete`; the concern asks, in both.
    let (code, v) = check(d.path(), &["shell", "-c", "find sub -delete"]);
    assert_eq!(
        (code, v["decision"].as_str()),
        (Some(1), Some("ask")),
        "{v}"
    );
    let o = cordon(d.path(), &["exec", "-c", "find sub -delete"]);
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(
        d.path().join("sub").exists(),
        "an ask nobody answered never runs"
    );
    // A rule that names the option lifts it.
    let d = workspace(
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"find * -delete\"\naction = \"allow\"\n",
    );
    let (code, v) = check(d.path(), &["shell", "-c", "find sub -delete"]);
    assert_eq!(
        (code, v["decision"].as_str()),
        (Some(0), Some("allow")),
        "{v}"
    );
    assert_eq!(v["concerns"], serde_json::json!([]), "{v}");
}
