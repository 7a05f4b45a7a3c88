//! `cordon install|uninstall HOST [--project|--user]` and the hosts in `cordon doctor`, on
//! real settings files in temporary HOME and project directories.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

/// `cordon ARGS` in `project` with HOME (and nothing else of the user's) at `home`.
fn cordon(project: &Path, home: &Path, args: &[&str]) -> Output {
    common::command(project)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CLAUDE_CODE_SANDBOXED")
        .env_remove("CLAUDE_CODE_CUSTOM_OAUTH_URL")
        .args(args)
        .output()
        .unwrap()
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The hook commands under `hooks.EVENT` in `settings`.
fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(String::from))
        .collect()
}

#[test]
fn claude_project_install_is_idempotent_keeps_other_keys_and_uninstalls_only_cordon() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = json!({
        "permissions": {"allow": ["Bash(npm test)"]},
        "env": {"FOO": "1"},
        "hooks": {
            "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./fmt.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./done.sh"}]}]
        }
    });
    let original = serde_json::to_string_pretty(&before).unwrap();
    std::fs::write(&file, &original).unwrap();

    let o = cordon(
        project.path(),
        home.path(),
        &["install", "claude", "--project"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("added hooks.PreToolUse"),
        "{}",
        common::stdout(&o)
    );
    let after = read(&file);
    assert_eq!(after["permissions"], before["permissions"]);
    assert_eq!(after["env"], before["env"]);
    assert_eq!(after["hooks"]["Stop"], before["hooks"]["Stop"]);
    let cmds = commands(&after, "PreToolUse");
    assert_eq!(cmds.len(), 2);
    assert_eq!(cmds[0], "./fmt.sh");
    assert!(
        cmds[1].contains(" hook claude") && cmds[1].ends_with("exit 2; }"),
        "{}",
        cmds[1]
    );
    assert_eq!(after["hooks"]["PreToolUse"][1]["matcher"], "*");
    // The backup is the file as it was.
    let backup = project.path().join(".claude/settings.json.cordon-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);

    // Again: nothing changes, byte for byte.
    let text = std::fs::read_to_string(&file).unwrap();
    let o = cordon(project.path(), home.path(), &["install", "claude"]);
    assert!(o.status.success());
    assert!(
        common::stdout(&o).contains("already there"),
        "{}",
        common::stdout(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // Uninstall: cordon's entry goes, the rest stays.
    let o = cordon(
        project.path(),
        home.path(),
        &["uninstall", "claude", "--project"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("removed 1 cordon hook"),
        "{}",
        common::stdout(&o)
    );
    let gone = read(&file);
    assert_eq!(gone["hooks"], before["hooks"]);
    assert_eq!(gone["permissions"], before["permissions"]);
    let o = cordon(project.path(), home.path(), &["uninstall", "claude"]);
    assert!(common::stdout(&o).contains("nothing changed"));
    // The user's settings were never touched.
    assert!(!home.path().join(".claude").exists());
}

#[test]
fn codex_and_gemini_files_and_scopes() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // Without a `codex` to record its trust, the hook is written but install fails, naming
    // the step (Codex would skip the hook silently). With Codex: tests/hosts_codex.rs.
    let no_codex = project.path().join("no-codex");
    let o = common::command(project.path())
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .env("CORDON_CODEX", &no_codex)
        .args(["install", "codex", "--user"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert!(
        common::stderr(&o).contains("open /hooks in Codex"),
        "the trust step is named: {}",
        common::stderr(&o)
    );
    let codex = read(&home.path().join(".codex/hooks.json"));
    assert_eq!(
        codex.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["hooks"],
        "Codex refuses other top-level keys"
    );
    assert!(commands(&codex, "PreToolUse")[0].contains(" hook codex"));

    // CODEX_HOME moves the user's Codex directory.
    let codex_home = tempfile::tempdir().unwrap();
    let o = common::command(project.path())
        .env("HOME", home.path())
        .env("CODEX_HOME", codex_home.path())
        .env("CORDON_CODEX", &no_codex)
        .args(["install", "codex", "--user"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(codex_home.path().join("hooks.json").exists());

    // Asked for the project's file in a folder Gemini CLI does not trust: written, but
    // install fails saying Gemini will not run it (tests below).
    let o = cordon(
        project.path(),
        home.path(),
        &["install", "gemini", "--project", "--policy", "cordon.toml"],
    );
    assert_eq!(o.status.code(), Some(125), "{}", common::stderr(&o));
    let gemini = read(&project.path().join(".gemini/settings.json"));
    let group = &gemini["hooks"]["BeforeTool"][0];
    assert_eq!(group["matcher"], ".*");
    assert_eq!(group["hooks"][0]["timeout"], 30000, "milliseconds");
    let cmd = group["hooks"][0]["command"].as_str().unwrap();
    let policy = project.path().join("cordon.toml");
    assert!(
        cmd.contains(&format!("--policy '{}'", policy.display())),
        "{cmd}"
    );
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = project.path().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{ \"theme\": ").unwrap();
    let o = cordon(
        project.path(),
        home.path(),
        &["install", "gemini", "--project"],
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(
        common::stderr(&o).starts_with("cordon: ") && common::stderr(&o).contains("not valid JSON")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ \"theme\": ");
}

#[test]
fn the_installed_command_answers_and_fails_closed() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    assert!(cordon(project.path(), home.path(), &["install", "claude"])
        .status
        .success());
    let cmd = commands(
        &read(&project.path().join(".claude/settings.json")),
        "PreToolUse",
    )[0]
    .clone();
    let input = json!({"session_id": "s", "transcript_path": "/t", "cwd": project.path(),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}, "tool_use_id": "t"})
    .to_string();
    let run = |cmd: &str| {
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(cmd)
            .current_dir(project.path())
            .env("XDG_STATE_HOME", common::state_home())
            .env("XDG_CONFIG_HOME", common::config_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        // A wrapper that blocks without reading its input (the binary gone) may have exited
        // before the write: a host sees a broken pipe then too, and goes by the exit status.
        match child.stdin.take().unwrap().write_all(input.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.unwrap(),
        }
        child.wait_with_output().unwrap()
    };
    // As Claude Code runs it: a deny of the embedded default's rule.
    let o = run(&cmd);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    // The binary gone (moved, uninstalled): the wrapper blocks with a reason.
    let missing = cmd.replace(env!("CARGO_BIN_EXE_cordon"), "/nonexistent/cordon");
    let o = run(&missing);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("the cordon hook failed"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn doctor_reports_each_host_wired_and_failing_closed() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    assert!(cordon(project.path(), home.path(), &["install", "claude"])
        .status
        .success());
    // A cordon hook written by hand, without the wrapper: wired, but it fails open.
    let gemini = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        json!({"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "cordon hook gemini"}]}]}}).to_string(),
    )
    .unwrap();
    let o = cordon(project.path(), home.path(), &["doctor"]);
    let out = common::stdout(&o);
    let line = |host: &str, scope: &str| {
        out.lines()
            .find(|l| l.split_whitespace().take(2).eq([host, scope]))
            .unwrap_or_else(|| panic!("no {host} {scope} line in:\n{out}"))
            .to_string()
    };
    assert!(
        line("claude-code", "project").contains("wired, fails closed"),
        "{out}"
    );
    assert!(line("claude-code", "user").contains("not wired"), "{out}");
    assert!(line("codex", "project").contains("not wired"), "{out}");
    assert!(line("gemini-cli", "user").contains("fails OPEN"), "{out}");
}

/// `cordon doctor`'s line for `host` in `scope`.
fn doctor_line(project: &Path, home: &Path, host: &str, scope: &str) -> String {
    let out = common::stdout(&cordon(project, home, &["doctor"]));
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq([host, scope]))
        .unwrap_or_else(|| panic!("no {host} {scope} line in:\n{out}"))
        .to_string()
}

/// An interactive Claude Code (2.1.197) skips every hook until the folder is trusted: its trust
/// dialog accepted, recorded as `projects[PATH].hasTrustDialogAccepted` in `~/.claude.json` for
/// the folder or one above it (or `$CLAUDE_CONFIG_DIR/.claude.json`; `CLAUDE_CODE_SANDBOXED`
/// trusts every folder). doctor reads that record and says which, for both scopes.
#[test]
fn doctor_reads_claude_codes_workspace_trust() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    assert!(cordon(p, h, &["install", "claude"]).status.success());
    assert!(cordon(p, h, &["install", "claude", "--user"])
        .status
        .success());
    let canon = p.canonicalize().unwrap();
    let doctor = |env: &[(&str, &str)]| {
        let mut c = common::command(p);
        c.env("HOME", h).env_remove("CODEX_HOME");
        for k in [
            "CLAUDE_CONFIG_DIR",
            "CLAUDE_CODE_SANDBOXED",
            "CLAUDE_CODE_CUSTOM_OAUTH_URL",
        ] {
            c.env_remove(k);
        }
        c.envs(env.iter().copied());
        let out = common::stdout(&c.arg("doctor").output().unwrap());
        let line = |scope: &str| {
            out.lines()
                .find(|l| l.split_whitespace().take(2).eq(["claude-code", scope]))
                .unwrap_or_else(|| panic!("no claude-code {scope} line in:\n{out}"))
                .to_string()
        };
        (line("project"), line("user"))
    };
    let untrusted = "present but UNTRUSTED in interactive sessions";
    // No ~/.claude.json at all.
    let (proj, user) = doctor(&[]);
    let after = |l: &str| l.split_once(": wired").unwrap().1.to_string();
    assert!(!after(&proj).contains("  "), "{proj}");
    assert!(
        proj.contains(untrusted) && proj.contains("wired, fails closed"),
        "{proj}"
    );
    assert!(user.contains(untrusted), "{user}");
    assert!(proj.contains("run `claude` here once"), "{proj}");
    // A record for another folder, and an explicit false for this one.
    let config = |projects: Value| {
        let v = json!({"numStartups": 3, "projects": projects});
        std::fs::write(h.join(".claude.json"), v.to_string()).unwrap();
    };
    config(json!({"/elsewhere": {"hasTrustDialogAccepted": true},
                  canon.to_str().unwrap(): {"hasTrustDialogAccepted": false}}));
    assert!(doctor(&[]).0.contains(untrusted));
    // This folder trusted, by its resolved path.
    config(json!({canon.to_str().unwrap(): {"hasTrustDialogAccepted": true}}));
    let (proj, user) = doctor(&[]);
    let trusted = format!(
        "loaded: Claude Code trusts this folder (projects[\"{}\"].hasTrustDialogAccepted in {})",
        canon.display(),
        h.join(".claude.json").display()
    );
    assert!(
        proj.contains(&trusted) && !proj.contains("UNTRUSTED"),
        "{proj}"
    );
    assert!(user.contains(&trusted), "{user}");
    // A folder above it trusted: Claude Code trusts everything below.
    let parent = canon.parent().unwrap();
    config(json!({parent.to_str().unwrap(): {"hasTrustDialogAccepted": true}}));
    assert!(doctor(&[])
        .0
        .contains(&format!("projects[\"{}\"]", parent.display())));
    // CLAUDE_CONFIG_DIR moves the file; the one under HOME no longer counts.
    let dir = tempfile::tempdir().unwrap();
    let env = [("CLAUDE_CONFIG_DIR", dir.path().to_str().unwrap())];
    assert!(doctor(&env).0.contains(untrusted));
    std::fs::write(
        dir.path().join(".claude.json"),
        json!({"projects": {canon.to_str().unwrap(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
    )
    .unwrap();
    assert!(doctor(&env)
        .0
        .contains("loaded: Claude Code trusts this folder"));
    // CLAUDE_CODE_SANDBOXED: every folder trusted.
    config(json!({}));
    assert!(doctor(&[("CLAUDE_CODE_SANDBOXED", "1")])
        .0
        .contains("loaded: CLAUDE_CODE_SANDBOXED is set"));
    // A file that cannot be read as JSON: not guessed at.
    std::fs::write(h.join(".claude.json"), "{ not json").unwrap();
    let (proj, _) = doctor(&[]);
    assert!(
        proj.contains("workspace trust is UNKNOWN") && proj.contains("not valid JSON"),
        "{proj}"
    );
    assert!(!after(&proj).contains("  "), "{proj}");
    // Install says so too, with the step.
    std::fs::remove_file(h.join(".claude.json")).unwrap();
    let o = cordon(p, h, &["install", "claude", "--deadline", "3s"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let out = common::stdout(&o);
    assert!(
        out.contains("note: an interactive Claude Code runs no hook in this folder until its trust dialog is accepted")
            && out.contains("run `claude` here once and accept its trust dialog"),
        "{out}"
    );
}

/// Gemini CLI loads a project's hooks only in a folder its trust file trusts (the longest
/// matching rule wins; `--skip-trust` does not load them either). Install without a scope puts
/// the hook where Gemini will run it and says which; doctor reports what Gemini will do. The
/// real Gemini CLI doing just that: tests/hosts_gemini.rs.
#[test]
fn gemini_install_and_doctor_follow_geminis_folder_trust() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let trust = |rules: Value| {
        std::fs::create_dir_all(h.join(".gemini")).unwrap();
        std::fs::write(h.join(".gemini/trustedFolders.json"), rules.to_string()).unwrap();
    };
    let canon = p.canonicalize().unwrap();
    let canon = canon.to_str().unwrap();

    // Untrusted (no trust file): the user's settings, and it says why.
    let o = cordon(p, h, &["install", "gemini"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let out = common::stdout(&o);
    assert!(
        out.contains("Gemini CLI does not trust this folder")
            && out.contains("installs in your user settings"),
        "{out}"
    );
    assert!(!p.join(".gemini").exists());
    assert!(
        commands(&read(&h.join(".gemini/settings.json")), "BeforeTool")[0].contains(" hook gemini")
    );
    assert!(doctor_line(p, h, "gemini-cli", "user")
        .contains("loaded: Gemini CLI reads user settings in every folder"),);

    // The project's file asked for: written, but install fails, and doctor says it is not loaded.
    let o = cordon(p, h, &["install", "gemini", "--project"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        common::stderr(&o).contains("Gemini CLI will not run it: it does not trust this folder"),
        "{}",
        common::stderr(&o)
    );
    let line = doctor_line(p, h, "gemini-cli", "project");
    assert!(
        line.contains("present but NOT LOADED")
            && line.contains("`--skip-trust` runs WITHOUT them"),
        "{line}"
    );

    // Trusted by a TRUST_PARENT rule on a sibling: loaded; a plain install stays in the project.
    let sibling = format!(
        "{}/sibling",
        p.parent().unwrap().canonicalize().unwrap().display()
    );
    trust(json!({ sibling.clone(): "TRUST_PARENT" }));
    let line = doctor_line(p, h, "gemini-cli", "project");
    assert!(
        line.contains("loaded: Gemini CLI trusts this folder"),
        "{line}"
    );
    let o = cordon(p, h, &["install", "gemini"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("Gemini CLI trusts this folder")
            && common::stdout(&o).contains("already there"),
        "{}",
        common::stdout(&o)
    );

    // The trusted project's settings turn hooks off: every file's hook is then not run (the
    // real host skipping a disabled hook: tests/hosts_gemini.rs).
    let file = p.join(".gemini/settings.json");
    let mut v = read(&file);
    v["hooksConfig"] = json!({ "enabled": false });
    std::fs::write(&file, v.to_string()).unwrap();
    let line = doctor_line(p, h, "gemini-cli", "user");
    assert!(
        line.contains("NOT RUN: hooksConfig.enabled = false in"),
        "{line}"
    );

    // The longer DO_NOT_TRUST rule on the project itself wins (and the project's settings,
    // hooksConfig included, are then not read).
    trust(json!({ sibling: "TRUST_PARENT", canon: "DO_NOT_TRUST" }));
    let line = doctor_line(p, h, "gemini-cli", "project");
    assert!(
        line.contains("NOT LOADED") && line.contains("DO_NOT_TRUST"),
        "{line}"
    );
    let line = doctor_line(p, h, "gemini-cli", "user");
    assert!(
        line.contains("loaded: Gemini CLI reads user settings"),
        "{line}"
    );
}

/// The hook's deadline and the host's timeout: install writes both, doctor reads both, and a
/// host timeout that does not leave the hook its deadline is reported as running the call.
#[test]
fn install_sets_the_deadline_and_doctor_checks_the_hosts_timeout() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let o = cordon(p, h, &["install", "claude", "--deadline", "2s"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let file = p.join(".claude/settings.json");
    let mut v = read(&file);
    let entry = &v["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(entry["timeout"], 30, "seconds");
    assert!(
        entry["command"]
            .as_str()
            .unwrap()
            .contains(" --deadline 2000ms "),
        "{entry}"
    );
    let line = doctor_line(p, h, "claude-code", "project");
    assert!(
        line.contains("undecided after its 2 s deadline blocks the call"),
        "{line}"
    );
    assert!(!line.contains("RUNS"), "{line}");
    // A host timeout of 5 s: shorter than the default 10 s deadline plus start-up.
    let o = cordon(p, h, &["install", "claude"]);
    assert!(o.status.success());
    v = read(&file);
    v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(5);
    std::fs::write(&file, v.to_string()).unwrap();
    let line = doctor_line(p, h, "claude-code", "project");
    assert!(
        line.contains("10 s deadline") && line.contains("the host RUNS the call"),
        "{line}"
    );
    // Deadlines at or past the hosts' timeout are refused.
    let o = cordon(p, h, &["install", "claude", "--deadline", "30s"]);
    assert_eq!(o.status.code(), Some(125), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("below the hosts' 30 s hook timeout"));
}

/// `--deadline` and `--sandbox` shape what install writes; uninstall removes cordon's entries
/// whatever they were, so there they are a usage error naming the flag, and nothing changes.
#[test]
fn uninstall_refuses_the_flags_only_install_uses() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let o = cordon(p, h, &["install", "claude"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let file = p.join(".claude/settings.json");
    let before = std::fs::read(&file).unwrap();
    for (host, flag, value) in [
        ("claude", "--deadline", "2s"),
        ("codex", "--sandbox", "cordon"),
    ] {
        let o = cordon(p, h, &["uninstall", host, flag, value]);
        // cordon's usage errors exit 125, as its other failures before anything ran.
        assert_eq!(o.status.code(), Some(125), "{}", common::stderr(&o));
        let err = common::stderr(&o);
        assert!(
            err.contains(&format!("unexpected argument '{flag}'")),
            "{err}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }
    assert!(!p.join(".codex").exists());
    let o = cordon(p, h, &["uninstall", "claude"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(commands(&read(&file), "PreToolUse").is_empty());
}

/// Links a sandboxed command could have planted in the project (or in HOME, where it was a
/// writable root), one at each component of the settings file and its backup: install and
/// uninstall refuse each with a message naming the link, and the link's target is untouched.
#[test]
fn install_never_writes_through_a_planted_link() {
    // (what is planted, relative to the project or HOME; the link's name)
    type Plant = fn(&Path, &Path) -> &'static str;
    let plants: &[(&str, Plant)] = &[
        ("backup -> victim", |base, victim| {
            std::fs::create_dir_all(base.join(".claude")).unwrap();
            std::fs::write(base.join(".claude/settings.json"), r#"{"env": {"A": "1"}}"#).unwrap();
            std::os::unix::fs::symlink(victim, base.join(".claude/settings.json.cordon-backup"))
                .unwrap();
            ".claude/settings.json.cordon-backup"
        }),
        ("settings file -> victim", |base, victim| {
            std::fs::create_dir_all(base.join(".claude")).unwrap();
            std::os::unix::fs::symlink(victim, base.join(".claude/settings.json")).unwrap();
            ".claude/settings.json"
        }),
        (".claude -> outside directory", |base, victim| {
            std::os::unix::fs::symlink(victim.parent().unwrap(), base.join(".claude")).unwrap();
            ".claude"
        }),
        (
            ".claude -> foo with a crafted settings file and its backup -> victim",
            |base, victim| {
                std::fs::create_dir_all(base.join("foo")).unwrap();
                std::fs::write(base.join("foo/settings.json"), r#"{"env": {"A": "1"}}"#).unwrap();
                std::os::unix::fs::symlink(victim, base.join("foo/settings.json.cordon-backup"))
                    .unwrap();
                std::os::unix::fs::symlink("foo", base.join(".claude")).unwrap();
                ".claude"
            },
        ),
    ];
    for (what, plant) in plants {
        for scope in ["--project", "--user"] {
            for verb in ["install", "uninstall"] {
                let project = tempfile::tempdir().unwrap();
                let home = tempfile::tempdir().unwrap();
                let outside = tempfile::tempdir().unwrap();
                let victim = outside.path().join("settings.json");
                std::fs::write(&victim, "# the operator's ~/.bashrc\n").unwrap();
                let base = if scope == "--user" {
                    home.path()
                } else {
                    project.path()
                };
                let link = base.join(plant(base, &victim));
                let o = cordon(project.path(), home.path(), &[verb, "claude", scope]);
                let err = common::stderr(&o);
                let case = format!("{verb} {scope}, {what}");
                // Uninstall finds no cordon hook where it can read: nothing to change is fine.
                if verb == "install" || !o.status.success() {
                    assert!(!o.status.success(), "{case}: {}", common::stdout(&o));
                    assert!(
                        err.contains(&link.display().to_string()) && err.contains("symbolic link"),
                        "{case}: {err}"
                    );
                }
                assert_eq!(
                    std::fs::read_to_string(&victim).unwrap(),
                    "# the operator's ~/.bashrc\n",
                    "{case}"
                );
                assert_eq!(
                    std::fs::read_dir(outside.path()).unwrap().count(),
                    1,
                    "{case}: nothing created outside"
                );
            }
        }
    }
}

/// Claude Code's `disableAllHooks`: the last of user < project < local settings that sets it
/// decides (the real host skipping the hook: tests/hosts_claude.rs).
#[test]
fn doctor_reads_claude_codes_disable_all_hooks_by_precedence() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    assert!(cordon(p, h, &["install", "claude"]).status.success());
    std::fs::create_dir_all(h.join(".claude")).unwrap();
    std::fs::write(
        h.join(".claude/settings.json"),
        json!({ "disableAllHooks": true }).to_string(),
    )
    .unwrap();
    let line = doctor_line(p, h, "claude-code", "project");
    assert!(
        line.contains("NOT RUN: disableAllHooks = true in"),
        "{line}"
    );
    // The project's local settings set it back.
    std::fs::write(
        p.join(".claude/settings.local.json"),
        json!({ "disableAllHooks": false }).to_string(),
    )
    .unwrap();
    let line = doctor_line(p, h, "claude-code", "project");
    assert!(
        line.contains("wired, fails closed") && !line.contains("NOT RUN"),
        "{line}"
    );
}

/// Round 10 (redwrite23): `cordon install claude` while a cordon run over the project was
/// going said it installed, and the run's after-run scan then took the new settings for its
/// command's change: moved aside, the earlier ones restored, cordon's hook gone from Claude
/// Code's settings (the warning going to the run's caller, not to the operator). Now install
/// refuses while such a run is going, saying why; once it has ended, install works and stays.
#[test]
fn install_while_a_run_over_the_project_is_going_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    let (project, home) = (base.join("project"), base.join("home"));
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, "{\"x\": 1}\n").unwrap();
    // The default audit log (the tests' XDG_STATE_HOME): the run's marker lies beside it.
    let policy = base.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox]\nnetwork = \"deny\"\n[sandbox.paths.ws]\nroot = \"{}\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n",
            project.display()
        ),
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    let run = common::command(&project)
        .env("HOME", &home)
        .args(["exec", "--policy", policy, "--approve-all", "--"])
        .args(["sh", "-c", "touch started && exec sleep 3"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !project.join("started").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = cordon(&project, &home, &["install", "claude"]);
    let during = common::stderr(&o);
    let ran = run.wait_with_output().unwrap();
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    assert_eq!(
        o.status.code(),
        Some(125),
        "install during the run: {during}"
    );
    assert!(
        during.contains("a cordon run over") && during.contains("once it has ended"),
        "{during}"
    );
    assert_eq!(read(&settings), json!({"x": 1}), "{}", common::stderr(&ran));
    // Once the run has ended: installed, and a run after that leaves it in place.
    let o = cordon(&project, &home, &["install", "claude"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = common::command(&project)
        .env("HOME", &home)
        .args(["exec", "--policy", policy, "--approve-all", "--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        commands(&read(&settings), "PreToolUse")
            .iter()
            .any(|c| c.contains("cordon")),
        "{}",
        common::stderr(&o)
    );
}

/// Install's refusal and the after-run scan's overlap rule read "a run going" one way
/// (`after_run::live_runs`): a live marker (its lock held) that cannot be read counts as a run
/// over the path. Before, install skipped such a marker and wrote, while the overlap check took
/// it for a run over its roots: two readings of one thing, install's the lenient one. A marker
/// of a run going that install cannot read may be over the settings, and that run's scan would
/// undo the write; now install refuses, naming the marker, and installs once it is gone.
#[test]
fn install_is_refused_while_a_run_going_cannot_be_read() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    let (project, home, state) = (base.join("project"), base.join("home"), base.join("state"));
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let scans = state.join("cordon/scans");
    std::fs::create_dir_all(&scans).unwrap();
    // The default log exists beside the markers, as after any run.
    std::fs::write(state.join("cordon/audit.jsonl"), "").unwrap();
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, "{\"x\": 1}\n").unwrap();
    let marker = scans.join("run-1-0-0");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&marker)
        .unwrap();
    f.write_all(b"cordon after-run scan marker v1\nstarted x\n")
        .unwrap();
    // Held as a live cordon holds its marker: a record lock of this (another) process.
    rustix::fs::fcntl_lock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let install = || {
        common::command(&project)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", &state)
            .env_remove("CLAUDE_CONFIG_DIR")
            .args(["install", "claude"])
            .output()
            .unwrap()
    };
    let o = install();
    let err = common::stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(125),
        "install beside a live marker it cannot read: {err}"
    );
    assert!(
        err.contains("cannot tell whether a cordon run over it is going")
            && err.contains(&marker.display().to_string()),
        "{err}"
    );
    assert_eq!(read(&settings), json!({"x": 1}));
    drop(f);
    std::fs::remove_file(&marker).unwrap();
    let o = install();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(commands(&read(&settings), "PreToolUse")
        .iter()
        .any(|c| c.contains("cordon")));
}
