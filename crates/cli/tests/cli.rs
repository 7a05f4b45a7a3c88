//! The `cordon` binary's contract: exit codes, `cordon: ` refusal lines, `check --json`,
//! policy errors with their locations, and `doctor`. (The escape suite in `tests/` covers
//! what the sandbox enforces.)

mod common;
use common::{cordon, stderr, workspace};
use std::process::Command;

const ALLOW_GIT: &str = r#"version = 1
[sandbox.paths.w]
root = "."
mode = "rw"
[shell]
default = "ask"
[[shell.rules]]
pattern = "git *"
action = "allow"
[[shell.rules]]
pattern = "git push --force*"
action = "deny"
reason = "rewrites remote history"
"#;

#[test]
fn check_json_explains_each_command() {
    let d = workspace(ALLOW_GIT);
    let o = cordon(
        d.path(),
        &[
            "check",
            "--json",
            "shell",
            "-c",
            "git status && git push --force origin",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "a deny exits 2: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["reason"], "rewrites remote history");
    let rule = v["rule"].as_str().unwrap();
    assert!(rule.starts_with(d.path().to_str().unwrap()), "{rule}");
    assert!(
        rule.ends_with("/cordon.toml:10:1 (git push --force*)"),
        "{rule}"
    );
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 2);
    assert_eq!(cmds[0]["decision"], "allow");
    assert_eq!(cmds[0]["words"], serde_json::json!(["git", "status"]));
    assert_eq!(cmds[1]["decision"], "deny");
}

#[test]
fn check_argv_form_and_default() {
    let d = workspace(ALLOW_GIT);
    let o = cordon(d.path(), &["check", "--json", "shell", "--", "ls", "-la"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["rule"], "default");
}

#[test]
fn check_never_allows_what_it_cannot_parse() {
    let d = workspace("version = 1\n[shell]\ndefault = \"allow\"\n");
    let o = cordon(d.path(), &["check", "--json", "shell", "-c", "echo $(("]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(v["decision"], "allow", "{v}");
}

#[test]
fn check_runs_nothing() {
    // The workspace is a writable root, so that `touch marker` is allowed (outside the roots
    // the analysis would ask) and what is checked is only that check runs nothing.
    let d = workspace(
        "version = 1\n[shell]\ndefault = \"allow\"\n[sandbox.paths.ws]\nroot = \".\"\nmode = \"rw\"\n",
    );
    let o = cordon(d.path(), &["check", "shell", "-c", "touch marker"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("decision: allow"));
    assert!(!d.path().join("marker").exists());
}

#[test]
fn bad_policy_exits_125_with_location() {
    let d = workspace("version = 1\n[sandbox]\nnetwrok = \"deny\"\n");
    for args in [
        &["exec", "--", "true"][..],
        &["check", "shell", "--", "true"][..],
    ] {
        let o = cordon(d.path(), args);
        assert_eq!(o.status.code(), Some(125));
        let e = stderr(&o);
        let want = format!(
            "cordon: {}/cordon.toml:3:1: unknown field `netwrok`",
            d.path().display()
        );
        assert!(e.starts_with(&want), "{e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn failing_policy_example_exits_125() {
    let d = workspace("version = 1\n[[shell.rules]]\npattern = \"rm -rf\"\naction = \"deny\"\nmatch = [\"rm -i x\"]\n");
    let o = cordon(d.path(), &["exec", "--", "true"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("/cordon.toml:5:10: example `rm -i x` does not match"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explicit_policy_file_and_missing_one() {
    let d = workspace(ALLOW_GIT);
    let other = d.path().join("other.toml");
    std::fs::write(&other, "version = 1\n[shell]\ndefault = \"deny\"\n").unwrap();
    let o = cordon(
        d.path(),
        &[
            "check",
            "--json",
            "--policy",
            other.to_str().unwrap(),
            "shell",
            "--",
            "git",
            "status",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    let o = cordon(
        d.path(),
        &["exec", "--policy", "/nonexistent/p.toml", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).starts_with("cordon: /nonexistent/p.toml: cannot read policy"));
}

#[test]
fn usage_errors_exit_125() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(cordon(d.path(), &["exec"]).status.code(), Some(125));
    assert_eq!(cordon(d.path(), &["frobnicate"]).status.code(), Some(125));
    assert_eq!(
        cordon(d.path(), &["exec", "--backend", "docker", "--", "true"])
            .status
            .code(),
        Some(125)
    );
    assert_eq!(cordon(d.path(), &["--help"]).status.code(), Some(0));
}

#[test]
fn ask_without_terminal_is_refused_unless_approve_all() {
    let d = workspace(ALLOW_GIT);
    let o = cordon(d.path(), &["exec", "--", "touch", "asked"]);
    assert_eq!(o.status.code(), Some(126));
    assert!(
        stderr(&o).contains("no terminal to ask on"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("asked").exists());
    let o = cordon(d.path(), &["exec", "--approve-all", "--", "touch", "asked"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.path().join("asked").exists());
    let o = cordon(d.path(), &["exec", "--strict", "--", "touch", "strict"]);
    assert_eq!(o.status.code(), Some(126));
}

#[test]
fn deny_wins_even_with_approve_all() {
    let d = workspace(ALLOW_GIT);
    let o = cordon(
        d.path(),
        &[
            "exec",
            "--approve-all",
            "-c",
            "git push --force origin main",
        ],
    );
    assert_eq!(o.status.code(), Some(126));
    assert!(stderr(&o)
        .starts_with("cordon: denied: `git push --force origin main`: rewrites remote history"));
}

/// The Landlock backend keeps protected paths read-only with mounts of its own (in the
/// command's mount namespace): the run goes ahead, the missing `.git` is covered for the run
/// only (its placeholder is gone after it), and `cordon profile` lists the mounts.
#[test]
fn protected_paths_run_on_landlock_with_its_own_mounts() {
    let d = workspace("version = 1\n[sandbox]\nbackend = \"landlock\"\nprotected = [\".git/hooks\"]\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n");
    let o = cordon(d.path(), &["exec", "--", "touch", "ran"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.path().join("ran").exists());
    assert!(!d.path().join(".git").exists(), "the placeholder was left");
    let o = cordon(d.path(), &["profile", "--format", "landlock"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"protected_mounts\"") && out.contains("/dev/null, read-only"),
        "{out}"
    );
}

/// `cordon profile --format landlock` lists the init's `/dev/null` covers of the operator's git
/// configuration (which git dies on when Landlock leaves it unreadable): an existing file in
/// HOME, not a missing one.
#[test]
fn landlock_profile_lists_the_covers_of_the_operators_git_config() {
    let d = workspace("version = 1\n[sandbox]\nbackend = \"landlock\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n");
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    std::fs::write(home_path.join(".gitconfig"), "[user]\n").unwrap();
    let o = common::command(d.path())
        .env("HOME", &home_path)
        .args(["profile", "--format", "landlock"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let paths: Vec<&str> = v["user_config_mounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    let gitconfig = home_path.join(".gitconfig");
    assert_eq!(paths, [gitconfig.to_str().unwrap()], "{v}");
    assert_eq!(v["user_config_mounts"][0]["mount"], "/dev/null, read-only");
}

/// On Landlock's read-only tree the run's private TMPDIR is the command's `/tmp`, as on
/// bwrap, where nothing the command needs lies under /tmp: a program that writes `/tmp/x` by
/// name works (it failed with "Read-only file system" once `auto` picked Landlock for a
/// project holding its policy, where bwrap had given it a private /tmp), and the host's /tmp
/// is neither listed nor written. A root under /tmp keeps the TMPDIR at its own path.
#[test]
fn landlocks_private_tmpdir_is_the_commands_tmp() {
    let policy = "version = 1\n[sandbox]\nbackend = \"landlock\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n";
    // A root outside /tmp, holding its policy (/var/tmp: the checkout, and with it the
    // tests' target directory, may itself lie under /tmp).
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    common::trust(d.path());
    let marker = format!("cordon-tmp-test-{}", std::process::id());
    let line = format!(
        "echo \"$TMPDIR\" > seen && echo x > /tmp/{marker} && cat /tmp/{marker} >> seen && ls -A /tmp >> seen"
    );
    // (The shell analysis asks for a write it cannot place in a root: answered here.)
    let o = cordon(d.path(), &["exec", "--approve-all", "-c", &line]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let seen = std::fs::read_to_string(d.path().join("seen")).unwrap();
    assert_eq!(seen, format!("/tmp\nx\n{marker}\n"), "{seen}");
    assert!(
        !std::path::Path::new("/tmp").join(&marker).exists(),
        "the command wrote the host's /tmp"
    );
    // A root under /tmp: covering /tmp would hide it, so the TMPDIR stays where it is.
    let d = workspace(policy);
    let o = cordon(d.path(), &["exec", "-c", "echo \"$TMPDIR\" > seen"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let seen = std::fs::read_to_string(d.path().join("seen")).unwrap();
    assert!(seen.contains("/cordon-run-"), "{seen}");
}

#[test]
fn none_backend_needs_an_explicit_opt_out() {
    let d = workspace("version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n");
    let o = cordon(
        d.path(),
        &["exec", "--backend", "none", "--", "touch", "ran"],
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("refusing to run unconfined"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("ran").exists());
}

#[test]
fn seatbelt_is_refused_off_macos_even_without_require() {
    let d = workspace("version = 1\n[sandbox]\nrequire_os_sandbox = false\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n");
    let o = cordon(
        d.path(),
        &["exec", "--backend", "seatbelt", "--", "touch", "ran"],
    );
    assert_eq!(o.status.code(), Some(125));
    let err = stderr(&o);
    assert!(
        err.starts_with("cordon: ") && err.contains("only on macOS"),
        "{err}"
    );
    assert!(!d.path().join("ran").exists());
}

#[test]
fn doctor_reports_live_probes() {
    let d = tempfile::tempdir().unwrap();
    let o = cordon(d.path(), &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("landlock         ok   ABI"), "{out}");
    assert!(out.contains("seccomp          ok"), "{out}");
    assert!(
        out.contains("what the landlock backend alone cannot do"),
        "{out}"
    );
    assert!(out.contains("bwrap            ok"), "{out}");
    assert!(out.contains("\n  auto      -> "), "{out}");
    assert!(
        out.contains("symlink inside a writable root") && out.contains("(a hard link)"),
        "{out}"
    );
}

#[test]
fn child_gets_the_policy_limits() {
    let d = workspace(
        "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[sandbox.limits]\nopen_files = 64\nfile_size = \"1M\"\ncpu_time = \"30s\"\n[shell]\ndefault = \"allow\"\n",
    );
    let o = cordon(
        d.path(),
        &["exec", "-c", "ulimit -n; ulimit -c; ulimit -f; ulimit -t"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // `exec -c` runs bash where installed, whose `ulimit -f` counts 1024-byte blocks; dash
    // counts 512-byte ones.
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    let blocks = if bash { "1024" } else { "2048" };
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("64\n0\n{blocks}\n30\n")
    );
}

/// A policy limit above cordon's own hard limit is the hard limit (the stricter one), not a
/// refusal of every run: under `ulimit -n 1024` the default's `open_files = 4096` made every
/// run fail (125, "resource limits: Operation not permitted", saying neither what nor what to
/// do; found by redwrite21).
#[test]
fn a_policy_limit_above_the_hard_limit_is_the_hard_limit() {
    let d = workspace(
        "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[sandbox.limits]\nopen_files = 4096\n[shell]\ndefault = \"allow\"\n",
    );
    let mut c = common::command(d.path());
    c.args(["exec", "-c", "ulimit -n; ulimit -Hn"]);
    // SAFETY: setrlimit between fork and exec touches only the child's own limits.
    unsafe {
        use std::os::unix::process::CommandExt;
        c.pre_exec(|| {
            let l = libc::rlimit {
                rlim_cur: 1024,
                rlim_max: 1024,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &l) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1024\n1024\n");
}

/// Under a file-size limit (`ulimit -f`) that cordon's own writes reach, cordon refuses with a
/// line that says so instead of dying of SIGXFSZ without a word (redmine21); the command still
/// gets SIGXFSZ's default action (the runners put it back, as SIGPIPE's).
#[test]
fn a_file_size_limit_is_a_refusal_with_a_line_not_a_silent_death() {
    // Its own audit log, small: the shared one of the tests' state directory is large.
    let d = workspace(
        "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n[approval]\naudit_log = \"log/audit.jsonl\"\n",
    );
    let run = |bytes: u64, line: &str| {
        let mut c = common::command(d.path());
        c.args(["exec", "-c", line]);
        // SAFETY: setrlimit between fork and exec touches only the child's own limits.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(move || {
                let l = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                match libc::setrlimit(libc::RLIMIT_FSIZE, &l) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
        c.output().unwrap()
    };
    let o = run(64, "true");
    assert_eq!(o.status.code(), Some(125), "{o:?}");
    assert!(
        stderr(&o).starts_with("cordon: ") && stderr(&o).contains("File too large"),
        "{}",
        stderr(&o)
    );
    let o = run(
        1 << 20,
        "head -c 2000000 /dev/zero > big; echo \"inner=$?\"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // 128 + SIGXFSZ (25): the command died of the signal, as it would outside cordon.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "inner=153\n",
        "{}",
        stderr(&o)
    );
}

#[test]
fn policy_timeout_kills_the_tree() {
    let d = workspace(
        "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[sandbox.limits]\ntimeout = \"300ms\"\n[shell]\ndefault = \"allow\"\n",
    );
    let start = std::time::Instant::now();
    let o = cordon(d.path(), &["exec", "-c", "sleep 30; touch late"]);
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("cordon: timed out after"),
        "{}",
        stderr(&o)
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert!(!d.path().join("late").exists());
}

#[test]
fn nothing_outlives_the_run_not_even_a_new_session() {
    let d = workspace("version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n");
    // A unique duration marks the escaped process (sleep accepts fractions).
    let marker = format!("301.{}", std::process::id());
    let line = format!("setsid sleep {marker} & sleep 0.2; echo started");
    // (The shell analysis asks for a write it cannot place in a root: answered here.)
    let o = cordon(d.path(), &["exec", "--approve-all", "-c", &line]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "started\n");
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "a process outlived cordon: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn policy_test_reports_every_example() {
    let d = workspace("version = 1\n[[shell.rules]]\npattern = \"rm -rf\"\naction = \"deny\"\nmatch = [\"rm -rf x\", \"rm -i x\", \"sudo rm -rf /\"]\nnot_match = [\"echo rm -rf\"]\n");
    let o = cordon(d.path(), &["policy", "test"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(
        lines[1].starts_with("FAIL ")
            && lines[1].contains("cordon.toml:5:22: example `rm -i x` does not match"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("ok   ") && lines[2].contains("`sudo rm -rf /` matches"),
        "wrappers are seen through: {out}"
    );
    assert_eq!(lines[4], "3 passed, 1 failed");
    let good = workspace("version = 1\n[[shell.rules]]\npattern = \"rm -rf\"\naction = \"deny\"\nmatch = [\"rm -rf x\"]\n");
    assert_eq!(
        cordon(good.path(), &["policy", "test"]).status.code(),
        Some(0)
    );
    assert_eq!(
        cordon(good.path(), &["policy", "test", "/nonexistent.toml"])
            .status
            .code(),
        Some(125)
    );
}

#[test]
fn approve_all_cannot_loosen_a_strict_or_deny_policy() {
    for mode in ["strict", "deny"] {
        let d = workspace(&format!("{ALLOW_GIT}[approval]\nmode = \"{mode}\"\n"));
        let marker = d.path().join("ran");
        let o = cordon(
            d.path(),
            &[
                "exec",
                "--approve-all",
                "--",
                "touch",
                marker.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(125), "{mode}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!(
                "cordon: --approve-all cannot loosen the policy's approval.mode = \"{mode}\""
            )) && err.lines().count() == 1,
            "{err}"
        );
        assert!(!marker.exists());
    }
    // An interactive policy may be run with --approve-all (the operator's choice).
    let d = workspace(ALLOW_GIT);
    let o = cordon(d.path(), &["exec", "--approve-all", "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// bwrap's own failure (here: too few file descriptors left to build the sandbox; a symlink
/// that made a mount fail is now refused by cordon before bwrap starts) is cordon's failure,
/// 125 — not the command's status — and the command never ran. (4, not 8: without
/// `--json-status-fd` bwrap opens no /proc/CHILD/ns files, and builds this view with 8.)
#[test]
fn bwrap_setup_failure_is_125() {
    let d = workspace(
        "version = 1\n[shell]\ndefault = \"allow\"\n[sandbox.limits]\nopen_files = 4\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n",
    );
    let marker = d.path().join("ran");
    let o = cordon(
        d.path(),
        &[
            "exec",
            "--backend",
            "bwrap",
            "--",
            "touch",
            marker.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().any(|l| l.starts_with("bwrap: ")),
        "bwrap says why: {err}"
    );
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("cordon: sandbox setup failed"),
        "{err}"
    );
    assert!(!marker.exists());
    // A command that fails on its own keeps its status.
    let o = cordon(
        d.path(),
        &["exec", "--backend", "bwrap", "--", "sh", "-c", "exit 7"],
    );
    assert_eq!(
        o.status.code(),
        Some(125),
        "still the same unbuildable view: {}",
        stderr(&o)
    );
    let d = workspace("version = 1\n[shell]\ndefault = \"allow\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n");
    let o = cordon(
        d.path(),
        &["exec", "--backend", "bwrap", "--", "sh", "-c", "exit 7"],
    );
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
}

#[test]
fn only_variables_the_command_inherits_count_as_inherited() {
    // The command's shell gets the scrubbed environment: a name outside it that the line
    // assigns without exporting reaches no program, whatever its case; one inside it does.
    let allow = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n";
    let decision = |dir: &std::path::Path, line: &str, env: &[(&str, &str)]| {
        let o = common::command(dir)
            .args(["check", "--json", "shell", "-c", line])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["decision"].as_str().unwrap().to_string()
    };
    let d = workspace(allow);
    for line in [
        // After `--`: a value only known at run time where git reads options could be
        // `--output=FILE` (issue 13, class 3), which asks.
        "for FILE in x; do git log -- \"$FILE\"; done",
        "read -r VERSION < VERSION; git tag \"$VERSION\"",
        "http_proxy=http://evil; git fetch",
    ] {
        assert_eq!(
            decision(d.path(), line, &[("http_proxy", "http://p")]),
            "allow",
            "{line}"
        );
    }
    assert_eq!(decision(d.path(), "HOME=/tmp/x; git log", &[]), "ask");
    // A name the policy passes through (`sandbox.env`) is inherited. (GOPATH: an inherited
    // `GIT_DIR` makes every line ask, being read by git, whose options the analysis reads.)
    let d2 = workspace(&format!(
        "{allow}[sandbox]\nenv = [\"GOPATH\", \"GIT_DIR\"]\n"
    ));
    let gopath = [("GOPATH", "/go")];
    assert_eq!(decision(d2.path(), "GOPATH=/x; ls", &gopath), "ask");
    assert_eq!(decision(d2.path(), "ls", &gopath), "allow");
    assert_eq!(decision(d2.path(), "ls", &[("GIT_DIR", "/repo")]), "ask");
}
