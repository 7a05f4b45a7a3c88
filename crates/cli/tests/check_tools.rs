//! `cordon check TOOL key=value…` for the file tools and `[tools.NAME]` tools: the decision,
//! reason, rule, keys and preview (human and JSON), and the usage errors (exit 125). Nothing
//! is ever executed.

mod common;
use common::{cordon, stderr, stdout};
use std::path::Path;

use serde_json::{json, Value};

fn json_of(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let o = cordon(dir, &all);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    // The exit code is the decision's: 0 allow, 1 ask, 2 deny.
    let code = match v["decision"].as_str() {
        Some("allow") => 0,
        Some("ask") => 1,
        _ => 2,
    };
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    v
}

const POLICY: &str = r#"version = 1
[sandbox.paths.notes]
root = "notes"
mode = "rw"
write_approval = true
[sandbox.paths.docs]
root = "docs"
mode = "ro"
suffixes = [".md"]
[tools.send_email]
approval = "ask"
"#;

/// `cordon check --json --policy POLICY write_file path=PATH content=x` run by `cmd` (its
/// environment set by the caller): the decision and the rule that made it.
fn decide_write(cmd: &mut std::process::Command, policy: &Path, path: &Path) -> (String, String) {
    let o = cmd
        .args(["check", "--json", "--policy"])
        .arg(policy)
        .arg("write_file")
        .arg(format!("path={}", path.display()))
        .arg("content=x")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    (
        v["decision"].as_str().unwrap_or_default().to_string(),
        v["rule"].as_str().unwrap_or_default().to_string(),
    )
}

fn workspace() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cordon.toml"), POLICY).unwrap();
    std::fs::create_dir(d.path().join("notes")).unwrap();
    std::fs::create_dir(d.path().join("docs")).unwrap();
    std::fs::write(d.path().join("notes/a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(d.path().join("docs/r.md"), "# r\n").unwrap();
    common::trust(d.path());
    d
}

#[test]
fn write_file_human_output_shows_decision_rule_and_preview() {
    let d = workspace();
    let o = cordon(
        d.path(),
        &["check", "write_file", "path=notes/b.txt", "content=hi"],
    );
    assert_eq!(o.status.code(), Some(1), "an ask exits 1: {}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "decision: ask\n\
         reason:   the root `notes` sets write_approval = true\n\
         rule:     builtin:write_approval\n\
         mode:     interactive\n\
         keys:     write_file notes/b.txt\n\
         summary:  create notes/b.txt (2 bytes)\n\
         preview:\n  hi\n"
    );
    assert!(!d.path().join("notes/b.txt").exists(), "check runs nothing");
}

#[test]
fn edit_file_json_has_the_diff() {
    let d = workspace();
    let v = json_of(
        d.path(),
        &["edit_file", "path=notes/a.txt", "old=two", "new=2"],
    );
    assert_eq!(
        v,
        json!({
            "tool": "edit_file",
            "decision": "ask",
            "reason": "the root `notes` sets write_approval = true",
            "rule": "builtin:write_approval",
            "keys": ["edit_file", "notes/a.txt"],
            "summary": "edit notes/a.txt (+1 -1 lines)",
            "preview": {
                "type": "diff",
                "unified": "--- a/notes/a.txt\n+++ b/notes/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
            },
            // The steps beyond the rules: the mode, no session grant, no doom loop.
            "mode": "interactive",
            "session_grant": false,
            "doom_loop": null
        })
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("notes/a.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn denials_name_the_builtin_check() {
    let d = workspace();
    let cases: &[(&[&str], &str)] = &[
        (&["read_file", "path=notes/../cordon.toml"], "builtin:path"),
        (&["read_file", "path=/etc/passwd"], "builtin:path"),
        (&["read_file", "path=elsewhere/x"], "builtin:path"),
        (
            &["write_file", "path=docs/n.md", "content=x"],
            "builtin:mode",
        ),
        (&["read_file", "path=docs/x.txt"], "builtin:suffix"),
        (&["delete_file", "path=docs/r.md"], "builtin:mode"),
    ];
    for (args, rule) in cases {
        let v = json_of(d.path(), args);
        assert_eq!(v["decision"], "deny", "{args:?}: {v}");
        assert_eq!(v["rule"], *rule, "{args:?}: {v}");
        assert!(!v["reason"].as_str().unwrap().is_empty());
    }
    let v = json_of(d.path(), &["read_file", "path=docs/r.md"]);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["rule"], "default");
    assert_eq!(
        v["preview"],
        json!({"type": "content", "text": "# r\n", "truncated_bytes": 0})
    );
    let v = json_of(d.path(), &["list_dir", "path=notes"]);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["keys"], json!(["list_dir", "notes"]));
}

#[test]
fn configured_tool_gets_its_approval_from_the_policy() {
    let d = workspace();
    let v = json_of(d.path(), &["send_email", "to=bob", "subject=hi"]);
    assert_eq!(v["decision"], "ask");
    let rule = v["rule"].as_str().unwrap();
    assert!(
        rule.ends_with("/cordon.toml:10:1 ([tools.send_email])"),
        "{rule}"
    );
    assert_eq!(
        v["keys"],
        json!(["send_email", "{\"subject\":\"hi\",\"to\":\"bob\"}"])
    );
}

#[test]
fn arguments_after_double_dash_work_too() {
    let d = workspace();
    let v = json_of(
        d.path(),
        &["write_file", "--", "path=notes/c.txt", "content=-x"],
    );
    assert_eq!(v["summary"], "create notes/c.txt (2 bytes)");
}

#[test]
fn usage_errors_exit_125_with_one_line() {
    let d = workspace();
    let cases: &[(&[&str], &str)] = &[
        (
            &["check", "nope", "a=b"],
            "cordon: unknown tool `nope`; known tools: attach_file, delete_file, edit_file, list_dir, read_file, send_email, shell, write_file",
        ),
        (
            &["check", "write_file", "path=notes/a.txt"],
            "cordon: write_file: missing argument `content`",
        ),
        (
            &["check", "read_file", "path=notes/a.txt", "bogus=1"],
            "cordon: read_file: unknown argument `bogus`; read_file takes: path",
        ),
        (
            &["check", "read_file", "notes/a.txt"],
            "cordon: read_file: expected key=value, got `notes/a.txt`",
        ),
        (
            &["check", "read_file", "path=notes/a.txt", "path=x"],
            "cordon: read_file: argument `path` given twice",
        ),
        (
            &["check", "read_file", "-c", "x"],
            "cordon: read_file: -c is for shell",
        ),
        (
            &["check", "edit_file", "path=notes/a.txt", "old=o", "new=x"],
            "cordon: edit_file: `old` occurs 2 times in `notes/a.txt`; it must occur exactly once",
        ),
        (
            &["check", "read_file", "path=notes/missing.txt"],
            "cordon: read_file: `notes/missing.txt` does not exist",
        ),
        (
            &["check", "shell", "ls"],
            "cordon: shell: unexpected `ls`; give -c STRING or -- PROG ARGS",
        ),
    ];
    for (args, want) in cases {
        let o = cordon(d.path(), args);
        assert_eq!(o.status.code(), Some(125), "{args:?}");
        let e = stderr(&o);
        assert!(e.starts_with(want), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn builtin_tool_in_tools_table_is_a_policy_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        "version = 1\n[tools.write_file]\napproval = \"allow\"\n",
    )
    .unwrap();
    common::trust(d.path());
    let o = cordon(d.path(), &["check", "read_file", "path=x"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("/cordon.toml:2:1: [tools.write_file] configures a built-in tool"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn default_policy_workspace_root() {
    // No cordon.toml: the embedded default's root `workspace` is the current directory.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.txt"), "x").unwrap();
    let v = json_of(d.path(), &["read_file", "path=workspace/a.txt"]);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["keys"], json!(["read_file", "workspace/a.txt"]));
    let v = json_of(d.path(), &["write_file", "path=a.txt", "content=y"]);
    assert_eq!(v["decision"], "deny", "paths start with a root name: {v}");
}

/// `check` decides a file call as the gate does for real: from the tool's facts, with the
/// mode (`--approve-all`, `--strict`) and the persistence surface, never from a verdict of the
/// tool's own. A surface write in a root that allows writes without approval asks.
#[test]
fn check_decides_file_calls_with_the_mode_and_the_surface() {
    let d = workspace();
    std::fs::create_dir(d.path().join("ws")).unwrap();
    let policy = format!("{POLICY}[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n");
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    common::trust(d.path());
    let write = ["write_file", "path=notes/b.txt", "content=hi"];
    let with = |flag: &str| {
        let mut args = vec![flag];
        args.extend_from_slice(&write);
        json_of(d.path(), &args)
    };
    let v = with("--approve-all");
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("allow"), Some("mode approve-all")),
        "{v}"
    );
    assert_eq!(v["mode"], "approve-all");
    let v = with("--strict");
    assert_eq!(v["decision"], "deny", "{v}");
    let v = json_of(d.path(), &["write_file", "path=ws/a.txt", "content=x"]);
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("allow"), Some("default")),
        "{v}"
    );
    let v = json_of(d.path(), &["write_file", "path=ws/.envrc", "content=x"]);
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("ask"), Some("builtin:surface")),
        "{v}"
    );
    // A refusal stays one under --approve-all.
    let v = json_of(
        d.path(),
        &["--approve-all", "write_file", "path=docs/n.md", "content=x"],
    );
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("deny"), Some("builtin:mode")),
        "{v}"
    );
    assert!(!d.path().join("ws/.envrc").exists() && !d.path().join("notes/b.txt").exists());
}

/// Round 6 (red21): the operator's own git configuration names hooks for every repository,
/// wherever they are: a `core.hooksPath` given absolute (or `~/`) in `~/.gitconfig`, or in
/// the environment git reads (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, `GIT_CONFIG_PARAMETERS`,
/// as `git -c` passes it on), is where the real git runs the operator's next commit's hooks
/// from, in any repository. A write there asked only when the written file was inside a
/// repository; in a root that is none it was allowed by the root's mode.
#[test]
fn the_operators_hooks_path_is_on_the_surface_outside_any_repository() {
    let d = workspace();
    let base = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir(base.join("ws")).unwrap();
    let policy = format!("{POLICY}[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n");
    std::fs::write(base.join("cordon.toml"), policy).unwrap();
    common::trust(&base);
    let home = base.join("home");
    std::fs::create_dir(&home).unwrap();
    let hooks = base.join("ws/hooks");
    let decide = |env: &[(&str, String)], path: &str| {
        let mut c = common::command(&base);
        c.env("HOME", &home)
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .args(["check", "--json", "write_file"])
            .arg(format!("path={path}"))
            .arg("content=x");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
        (
            v["decision"].as_str().unwrap_or_default().to_string(),
            v["rule"].as_str().unwrap_or_default().to_string(),
        )
    };
    let ask = ("ask".to_string(), "builtin:surface".to_string());
    let allow = ("allow".to_string(), "default".to_string());
    let env_count = vec![
        ("GIT_CONFIG_COUNT", "1".to_string()),
        ("GIT_CONFIG_KEY_0", "Core.HooksPath".to_string()),
        ("GIT_CONFIG_VALUE_0", hooks.display().to_string()),
    ];
    let env_params = vec![(
        "GIT_CONFIG_PARAMETERS",
        format!("'core.hookspath'='{}'", hooks.display()),
    )];
    std::fs::write(home.join(".gitconfig"), "").unwrap();
    assert_eq!(decide(&[], "ws/hooks/pre-commit"), allow, "no hooksPath");
    for env in [&env_count, &env_params] {
        assert_eq!(decide(env, "ws/hooks/pre-commit"), ask, "{env:?}");
        assert_eq!(decide(env, "ws/x"), allow, "{env:?}");
    }
    std::fs::write(
        home.join(".gitconfig"),
        format!("[core]\n\thooksPath = {}\n", hooks.display()),
    )
    .unwrap();
    assert_eq!(decide(&[], "ws/hooks/pre-commit"), ask);
    assert_eq!(decide(&[], "ws/hooks/deeper/x"), ask);
    assert_eq!(decide(&[], "ws/x"), allow);
    // Why: the real git runs what is written there, in a repository elsewhere, with each of
    // those configurations.
    std::fs::create_dir(&hooks).unwrap();
    let ran = base.join("ran");
    let hook = hooks.join("pre-commit");
    std::fs::write(&hook, format!("#!/bin/sh\necho x >> '{}'\n", ran.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let repo = base.join("elsewhere");
    let git = |env: &[(&str, String)], home: &Path, args: &[&str]| {
        let o = std::process::Command::new("git")
            .current_dir(&repo)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {o:?}");
    };
    std::fs::create_dir(&repo).unwrap();
    git(&[], &home, &["init", "-q"]);
    let empty = base.join("empty-home");
    std::fs::create_dir(&empty).unwrap();
    for (env, home) in [
        (&vec![], &home),
        (&env_count, &empty),
        (&env_params, &empty),
    ] {
        git(env, home, &["commit", "-q", "--allow-empty", "-m", "x"]);
    }
    let runs = std::fs::read_to_string(&ran).unwrap_or_default();
    assert_eq!(
        runs.lines().count(),
        3,
        "git did not run {} each time",
        hook.display()
    );
}

/// Round 6 (red21): git takes a relative `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` or
/// `XDG_CONFIG_HOME` at the top of the repository it runs in (seen with `git config
/// --show-origin` from a subdirectory), so with `GIT_CONFIG_GLOBAL=.gitconfig.local` in the
/// environment (a per-project setting, as direnv makes them) each repository's
/// `.gitconfig.local` is the operator's global configuration: its `core.fsmonitor` runs at the
/// next `git status`. cordon dropped relative values, and allowed the write.
#[test]
fn a_relative_global_git_configuration_is_on_the_surface() {
    let d = workspace();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let ws = base.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let policy = format!("{POLICY}[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n");
    std::fs::write(base.join("cordon.toml"), policy).unwrap();
    common::trust(&base);
    let home = base.join("home");
    std::fs::create_dir(&home).unwrap();
    let git = |dir: &Path, env: &[(&str, &str)], args: &[&str]| {
        let o = std::process::Command::new("git")
            .current_dir(dir)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .envs(env.iter().copied())
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {o:?}");
    };
    git(&ws, &[], &["init", "-q"]);
    std::fs::create_dir(ws.join("sub")).unwrap();
    let decide = |env: &[(&str, &str)], path: &str| {
        let mut c = common::command(&base);
        c.env("HOME", &home)
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("GIT_CONFIG_COUNT")
            .env_remove("GIT_CONFIG_PARAMETERS")
            .envs(env.iter().copied())
            // Named: a relative XDG_CONFIG_HOME moves cordon's trust store too.
            .args(["check", "--policy", "cordon.toml", "--json", "write_file"])
            .arg(format!("path={path}"))
            .arg("content=x");
        let o = c.output().unwrap();
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
        format!("{} {}", v["decision"], v["rule"])
    };
    let ask = "\"ask\" \"builtin:surface\"";
    let allow = "\"allow\" \"default\"";
    let global = [("GIT_CONFIG_GLOBAL", ".gitconfig.local")];
    let xdg = [("XDG_CONFIG_HOME", "cfg")];
    assert_eq!(decide(&[], "ws/.gitconfig.local"), allow);
    assert_eq!(decide(&global, "ws/.gitconfig.local"), ask);
    assert_eq!(decide(&global, "ws/sub/.gitconfig.local"), allow);
    assert_eq!(decide(&xdg, "ws/cfg/git/config"), ask);
    assert_eq!(decide(&global, "ws/x"), allow);
    // Round 8 (redsurf21): an absolute one in a root is the operator's file as much (it was
    // allowed: only what it includes was looked at).
    let absolute = ws.join("gcfg").display().to_string();
    for var in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"] {
        assert_eq!(decide(&[(var, absolute.as_str())], "ws/gcfg"), ask, "{var}");
    }
    // What it names is on the surface too, as from the home's `.gitconfig`.
    std::fs::write(ws.join(".gitconfig.local"), "[core]\n\thooksPath = hk\n").unwrap();
    assert_eq!(decide(&global, "ws/hk/pre-commit"), ask);
    // Why: the real git, run from a subdirectory, reads the top's file as its global one.
    let ran = base.join("ran");
    let absolute_global = [("GIT_CONFIG_GLOBAL", absolute.as_str())];
    for (env, file) in [
        (&global[..], ".gitconfig.local"),
        (&xdg[..], "cfg/git/config"),
        (&absolute_global[..], "gcfg"),
    ] {
        std::fs::create_dir_all(ws.join(file).parent().unwrap()).unwrap();
        std::fs::write(
            ws.join(file),
            format!(
                "[core]\n\tfsmonitor = \"echo {file} >> '{}'; false\"\n",
                ran.display()
            ),
        )
        .unwrap();
        git(&ws.join("sub"), env, &["status", "--short"]);
        std::fs::remove_file(ws.join(file)).unwrap();
    }
    let runs = std::fs::read_to_string(&ran).unwrap_or_default();
    for file in [".gitconfig.local", "cfg/git/config", "gcfg"] {
        assert!(
            runs.lines().any(|l| l == file),
            "git did not run {file}'s fsmonitor: {runs:?}"
        );
    }
}

/// Round 8 (redsurf21): with the home as a writable root, the home's surface is more than any
/// list names — `~/.local/bin/git` (the real `bash -l` with Debian's `.profile` takes it for
/// `git`), `~/.gdbinit` (the real gdb runs its `shell` lines at start), a Neovim `lua/` module,
/// `~/.kube/config` — and each was allowed by the root's mode. Every write under a dot-name of
/// the home or `~/bin` now asks; a project's files at the home stay allowed.
#[test]
fn every_dotfile_of_a_home_root_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".local/bin")).unwrap();
    let policy = base.join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.home]\nroot = \"{}\"\nmode = \"rw\"\n",
            home.display()
        ),
    )
    .unwrap();
    // What the operator's programs do with these files.
    std::fs::copy("/etc/skel/.profile", home.join(".profile")).unwrap();
    std::fs::write(home.join(".local/bin/git"), "#!/bin/sh\necho planted\n").unwrap();
    std::fs::set_permissions(
        home.join(".local/bin/git"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let marker = base.join("ran");
    std::fs::write(
        home.join(".gdbinit"),
        format!("shell touch {}\n", marker.display()),
    )
    .unwrap();
    let o = std::process::Command::new("bash")
        .args(["-lc", "git --version"])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(stdout(&o).trim(), "planted", "{}", stderr(&o));
    let o = std::process::Command::new("gdb")
        .args(["-batch", "-ex", "quit"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(marker.exists(), "gdb ran no ~/.gdbinit");
    let decide = |rel: &str| {
        decide_write(
            common::command(&base).env("HOME", &home),
            &policy,
            &home.join(rel),
        )
    };
    let ask = ("ask".to_string(), "builtin:surface".to_string());
    for rel in [
        ".local/bin/git",
        "bin/ls",
        ".gdbinit",
        ".config/nvim/lua/plugins.lua",
        ".kube/config",
        ".config/anything/at/all",
    ] {
        assert_eq!(decide(rel), ask, "{rel}");
    }
    for rel in ["proj/src/main.rs", "proj/README.md", "notes.txt"] {
        assert_eq!(decide(rel).0, "allow", "{rel}");
    }
    // A root of its own under a dot-name of the home (a dotfiles checkout) is a project: its
    // files are not all asked, only the home's listed surface.
    std::fs::create_dir_all(home.join(".dotfiles")).unwrap();
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.dots]\nroot = \"{}\"\nmode = \"rw\"\n",
            home.join(".dotfiles").display()
        ),
    )
    .unwrap();
    assert_eq!(decide(".dotfiles/README.md").0, "allow");
}

/// Round 9 (redsurf22): the operator keeps dotfiles in a checkout that is a root, linked into
/// the home as GNU stow does, the link at the file's own name (`~/.bashrc ->
/// dotfiles/bashrc`), the home itself in no root. `write_file dotfiles/bashrc` was allowed by
/// the root's mode, and the real `bash -i` ran it. The home's surface is now resolved through
/// a link at its end too (and a dangling one, whose target the write creates), wherever the
/// checkout lies (under the home or not).
#[test]
fn a_dotfile_kept_in_a_root_through_a_link_at_its_name_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let home = base.join("home");
    for (dots, under_home) in [(home.join("dotfiles"), true), (base.join("dots"), false)] {
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(dots.join("nvim")).unwrap();
        let policy = base.join("p.toml");
        std::fs::write(
            &policy,
            format!(
                "version = 1\n[sandbox.paths.dots]\nroot = \"{}\"\nmode = \"rw\"\n",
                dots.display()
            ),
        )
        .unwrap();
        let marker = base.join("ran");
        let _ = std::fs::remove_file(&marker);
        std::fs::write(dots.join("bashrc"), format!("touch {}\n", marker.display())).unwrap();
        std::os::unix::fs::symlink(dots.join("bashrc"), home.join(".bashrc")).unwrap();
        // Dangling: the write would create what git reads as its global configuration.
        std::os::unix::fs::symlink(dots.join("gitconfig"), home.join(".gitconfig")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::os::unix::fs::symlink(dots.join("claude.json"), home.join(".claude/settings.json"))
            .unwrap();
        // What the operator's shell does with the link.
        let o = std::process::Command::new("bash")
            .args(["-ic", "true"])
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(marker.exists(), "bash ran no ~/.bashrc: {}", stderr(&o));
        let decide = |file: &str| {
            decide_write(
                common::command(&base).env("HOME", &home),
                &policy,
                &dots.join(file),
            )
        };
        let ask = ("ask".to_string(), "builtin:surface".to_string());
        for file in ["bashrc", "gitconfig", "claude.json"] {
            assert_eq!(decide(file), ask, "{file} (under the home: {under_home})");
        }
        assert_eq!(
            decide("README.md").0,
            "allow",
            "under the home: {under_home}"
        );
        // A tool no list names, linked at a name in `~/.config`: its directory is the home's
        // configuration, as `~/.config/ghostty/` itself is.
        std::fs::create_dir_all(dots.join("ghostty")).unwrap();
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::os::unix::fs::symlink(dots.join("ghostty"), home.join(".config/ghostty")).unwrap();
        assert_eq!(
            decide("ghostty/ghostty.conf"),
            ask,
            "under the home: {under_home}"
        );
        assert_eq!(decide("ghosttyx/notes").0, "allow");
        // A link at a dot-name naming the root itself: a project of its own, as a root
        // under `~/.dotfiles` is.
        std::os::unix::fs::symlink(&dots, home.join(".dots")).unwrap();
        assert_eq!(decide("notes/todo.md").0, "allow");
    }
}

/// Round 8 (redsurf21): a directory the environment makes the operator's configuration
/// directory (`XDG_CONFIG_HOME`) inside a root holds git's global configuration — the real git
/// runs its `core.fsmonitor` at a `git status` in any repository — and the after-run scan
/// watched it there, but the file tools allowed `write_file cfg/git/config` (and every other
/// file there) by the root's mode. Every write there now asks, as under the home's `.config`.
#[test]
fn a_configuration_directory_the_environment_moves_into_a_root_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("cfg/git")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::create_dir_all(base.join("repo")).unwrap();
    let policy = base.join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.ws]\nroot = \"{}\"\nmode = \"rw\"\n",
            ws.display()
        ),
    )
    .unwrap();
    // What git does with it.
    let marker = base.join("ran");
    std::fs::write(
        ws.join("cfg/git/config"),
        format!(
            "[core]\n\tfsmonitor = \"touch {}; false\"\n",
            marker.display()
        ),
    )
    .unwrap();
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(base.join("repo"))
            .env("HOME", base.join("home"))
            .env("XDG_CONFIG_HOME", ws.join("cfg"))
            .env_remove("GIT_CONFIG_GLOBAL")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    };
    git(&["init", "-q"]);
    git(&["status", "--short"]);
    assert!(
        marker.exists(),
        "git ran no fsmonitor from $XDG_CONFIG_HOME/git/config"
    );
    let decide = |rel: &str, xdg: &Path| {
        decide_write(
            common::command(&base)
                .env("HOME", base.join("home"))
                .env("XDG_CONFIG_HOME", xdg),
            &policy,
            &ws.join(rel),
        )
    };
    let ask = ("ask".to_string(), "builtin:surface".to_string());
    for rel in ["cfg/git/config", "cfg/nvim/lua/x.lua", "cfg/anything"] {
        assert_eq!(decide(rel, &ws.join("cfg")), ask, "{rel}");
    }
    // And where `XDG_DATA_HOME` moves `~/.local/share` (direnv's allow list).
    let o = common::command(&base)
        .env("HOME", base.join("home"))
        .env("XDG_DATA_HOME", ws.join("data"))
        .args(["check", "--json", "--policy"])
        .arg(&policy)
        .arg("write_file")
        .arg(format!("path={}", ws.join("data/direnv/allow/x").display()))
        .arg("content=x")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "ask", "{}", stderr(&o));
    // Elsewhere in the root, and the same file where the environment names another place.
    assert_eq!(decide("src/main.rs", &ws.join("cfg")).0, "allow");
    assert_eq!(
        decide("cfg/anything", &base.join("home/.config")).0,
        "allow"
    );
}

/// Round 11 (redteam24): a root of `~/.config` with `XDG_CONFIG_HOME` unset is the same
/// directory as with `XDG_CONFIG_HOME=~/.config`, where every file configures a program of
/// the operator's and asks; unset, a file no list names (`foot/foot.ini`, whose `shell` the
/// terminal starts in every window; `ghostty/config`) was allowed by the root's mode. Now the
/// default place counts as the variable's.
#[test]
fn the_default_configuration_directory_as_a_root_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let home = base.join("home");
    let cfg = home.join(".config");
    std::fs::create_dir_all(&cfg).unwrap();
    let policy = base.join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.cfg]\nroot = \"{}\"\nmode = \"rw\"\n",
            cfg.display()
        ),
    )
    .unwrap();
    let ask = ("ask".to_string(), "builtin:surface".to_string());
    for rel in ["foot/foot.ini", "ghostty/config", "anything"] {
        for xdg in [Some(&cfg), None] {
            let mut c = common::command(&base);
            c.env("HOME", &home).env_remove("XDG_CONFIG_HOME");
            if let Some(x) = xdg {
                c.env("XDG_CONFIG_HOME", x);
            }
            assert_eq!(
                decide_write(&mut c, &policy, &cfg.join(rel)),
                ask,
                "{rel} {xdg:?}"
            );
        }
    }
}

/// Round 8 (redsurf21): what the operator's environment makes a program load from a root — a
/// program in a directory on the PATH (the real bash runs `ROOT/bin/git` for `git`), a module
/// in a `PYTHONPATH` directory (the real python imports `ROOT/lib/json.py` for `json`), the
/// program a command variable (`GIT_SSH_COMMAND`) names — was written by the root's
/// mode. Each now asks; a file beside them that nothing names stays allowed.
#[test]
fn what_the_operators_environment_loads_from_a_root_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let ws = base.join("ws");
    for dir in ["bin", "lib", "src"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    let policy = base.join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.ws]\nroot = \"{}\"\nmode = \"rw\"\n",
            ws.display()
        ),
    )
    .unwrap();
    let path = format!("{}:/usr/bin:/bin", ws.join("bin").display());
    let pythonpath = ws.join("lib").display().to_string();
    // What the operator's programs do with them.
    std::fs::write(ws.join("bin/git"), "#!/bin/sh\necho planted\n").unwrap();
    std::fs::set_permissions(
        ws.join("bin/git"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(ws.join("lib/json.py"), "print('planted')\n").unwrap();
    let o = std::process::Command::new("/bin/bash")
        .args(["-c", "git --version"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(stdout(&o).trim(), "planted", "{}", stderr(&o));
    let o = std::process::Command::new("python3")
        .args(["-c", "import json"])
        .env("PYTHONPATH", &pythonpath)
        .output()
        .unwrap();
    assert_eq!(stdout(&o).trim(), "planted", "{}", stderr(&o));
    let ssh = format!("{} -v", ws.join("src/ssh.sh").display());
    let decide = |rel: &str| {
        decide_write(
            common::command(&base)
                .env("PATH", &path)
                .env("PYTHONPATH", &pythonpath)
                .env("GIT_SSH_COMMAND", &ssh),
            &policy,
            &ws.join(rel),
        )
    };
    let ask = ("ask".to_string(), "builtin:surface".to_string());
    for rel in [
        "bin/git",
        "bin/ls",
        "lib/json.py",
        "lib/pkg/mod.py",
        "src/ssh.sh",
    ] {
        assert_eq!(decide(rel), ask, "{rel}");
    }
    for rel in ["bin/sub/x", "src/main.rs", "README.md"] {
        assert_eq!(decide(rel).0, "allow", "{rel}");
    }
}

/// Round 9 (redsurf22): with `load_dotenv = true` in the operator's direnv configuration, the
/// real direnv takes a directory's `.env` at `cd` as it runs an `.envrc` — under a
/// `[whitelist] prefix`, a changed one without asking — and `write_file .env` was allowed by
/// the root's mode. It asks where that configuration says so; elsewhere `.env` is the
/// project's variables (`surface::NOT_ON_SURFACE`) and stays allowed.
#[test]
fn a_dotenv_the_operators_direnv_loads_is_on_the_surface() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let ws = base.join("ws");
    let home = base.join("home");
    let config = base.join("config");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(config.join("direnv")).unwrap();
    let policy = base.join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox.paths.ws]\nroot = \"{}\"\nmode = \"rw\"\n",
            ws.display()
        ),
    )
    .unwrap();
    let decide = |rel: &str| {
        decide_write(
            common::command(&base)
                .env("HOME", &home)
                .env("XDG_CONFIG_HOME", &config)
                .env_remove("DIRENV_CONFIG"),
            &policy,
            &ws.join(rel),
        )
        .0
    };
    assert_eq!(decide(".env"), "allow");
    std::fs::write(
        config.join("direnv/direnv.toml"),
        format!(
            "[global]\nload_dotenv = true\n[whitelist]\nprefix = [\"{}\"]\n",
            ws.display()
        ),
    )
    .unwrap();
    // What the real direnv does with a `.env` there, written after the whitelist.
    std::fs::write(ws.join("sub/.env"), "PLANTED=yes\n").unwrap();
    let o = std::process::Command::new("direnv")
        .args(["export", "json"])
        .current_dir(ws.join("sub"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_DATA_HOME", base.join("data"))
        .output()
        .expect("direnv is needed for this test (Debian package `direnv`)");
    assert!(
        stdout(&o).contains("\"PLANTED\": \"yes\""),
        "direnv did not load the .env: {} {}",
        stdout(&o),
        stderr(&o)
    );
    for rel in [".env", "sub/.env"] {
        assert_eq!(decide(rel), "ask", "{rel}");
    }
    assert_eq!(decide("sub/.env.example"), "allow");
    // A configuration that cannot be read as TOML: direnv's reading cannot be ruled out.
    std::fs::write(config.join("direnv/direnv.toml"), "[global\n").unwrap();
    assert_eq!(decide(".env"), "ask");
}
