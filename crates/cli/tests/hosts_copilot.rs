//! GitHub Copilot CLI for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install copilot --user` and driven by the project's mock model server: Copilot's
//! own provider setting (`COPILOT_PROVIDER_TYPE=anthropic`, `COPILOT_PROVIDER_BASE_URL`) points
//! it at the mock's Anthropic Messages API, and `COPILOT_OFFLINE=true` keeps it off the network.
//!
//! User-level hooks (`~/.copilot/hooks/*.json`) load in every folder and in prompt mode (`-p`);
//! a project's `.github/hooks` loads in `-p` only in a folder Copilot trusts. Copilot's own
//! tool approval is left on (no `--allow-all-tools`): cordon's `allow` is what lets a call run.

mod common;
mod hosts_support;
mod pty;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use hosts_support::{host_bin, unprivileged, wait_deadline, Mock, Turn, POLICY};
use serde_json::json;

struct Setup {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
    user: Option<(u32, u32)>,
}

impl Setup {
    fn new(user: Option<(u32, u32)>) -> Setup {
        Setup::with_binary(user, Path::new(env!("CARGO_BIN_EXE_cordon")))
    }

    /// As [`Setup::new`], installed by the cordon binary `bin`.
    fn with_binary(user: Option<(u32, u32)>, bin: &Path) -> Setup {
        Setup::installed(user, bin, "--user")
    }

    /// Installed with `scope` (`--user` or `--project`).
    fn installed(user: Option<(u32, u32)>, bin: &Path, scope: &str) -> Setup {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let home = tempfile::tempdir().unwrap();
        let o = Command::new(bin)
            .current_dir(project.path())
            .env("HOME", home.path())
            .env_remove("COPILOT_HOME")
            .args(["install", "copilot", scope, "--policy"])
            .arg(project.path().join("cordon.toml"))
            .output()
            .unwrap();
        assert!(o.status.success(), "install: {}", common::stderr(&o));
        let file = match scope {
            "--user" => home.path().join(".copilot/hooks/cordon.json"),
            _ => project.path().join(".github/hooks/cordon.json"),
        };
        assert!(file.is_file());
        Setup {
            project,
            home,
            user,
        }
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    fn run_copilot(&self, mock: &Mock) -> Output {
        self.run_copilot_with(mock, &[], &[])
    }

    /// Copilot with extra arguments and environment.
    fn run_copilot_with(&self, mock: &Mock, args: &[&str], env: &[(&str, &str)]) -> Output {
        let home = self.home.path();
        for d in [".state", ".config", ".runtime", ".cache"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        if let Some((uid, gid)) = self.user {
            for p in [self.dir(), home] {
                let o = Command::new("chown")
                    .arg("-R")
                    .arg(format!("{uid}:{gid}"))
                    .arg(p)
                    .output()
                    .unwrap();
                assert!(o.status.success());
            }
        }
        let mut c = Command::new(host_bin("copilot"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            .args(["-p", "run the scripted tool call"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("COPILOT_PROVIDER_TYPE", "anthropic")
            .env("COPILOT_PROVIDER_BASE_URL", mock.base_url())
            .env("COPILOT_PROVIDER_API_KEY", "cordon-test-key")
            .env("COPILOT_MODEL", "claude-sonnet-4-5")
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("CORDON_HOSTS_PROBE", "probe-value")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"))
            .envs(env.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        wait_deadline(c.spawn().unwrap(), Duration::from_secs(240))
    }
}

fn turn_with(s: &Setup, t: Turn) -> String {
    let mock = Mock::start(t.clone());
    let o = s.run_copilot(&mock);
    mock.the_one_result("Copilot CLI", &t.tool, &o)
}

fn turn(s: &Setup, line: &str) -> String {
    turn_with(
        s,
        Turn {
            tool: "bash".into(),
            input: json!({ "command": line, "description": "scripted" }),
        },
    )
}

#[test]
fn copilot_deny_reaches_the_model_and_nothing_runs() {
    let s = Setup::new(None);
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "touch ran-before-deny; rm -rf keep");
    assert!(
        r.contains("cordon: denied") && r.contains("destroys files"),
        "{r}"
    );
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

#[test]
fn copilot_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::new(None));
}

#[test]
fn copilot_allow_as_an_unprivileged_user() {
    allow(Setup::new(unprivileged()));
}

fn allow(s: Setup) {
    let probe = format!("/etc/cordon-hosts-copilot-probe-{}", std::process::id());
    let outside = s.home.path().join("outside-probe");
    // The writes sit in a script, out of the line's static analysis: only the kernel sandbox
    // can stop them (as root nothing else would stop the /etc one).
    std::fs::write(
        s.dir().join("probe.sh"),
        format!(
            "echo x > {probe} || echo etc-refused\necho x > {} || echo home-refused\n\
             echo uid=$(id -u)\n",
            outside.display()
        ),
    )
    .unwrap();
    let r = turn(
        &s,
        "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$COPILOT_PROVIDER_API_KEY.\"; sh ./probe.sh; \
         echo out > made.txt; exit 3",
    );
    let canon = s.dir().canonicalize().unwrap();
    assert!(r.contains(canon.to_str().unwrap()), "{r}");
    // The sandbox passes only the policy's variables: not the host's API key.
    assert!(r.contains("env=probe-value key=."), "{r}");
    assert!(
        r.contains("etc-refused") && r.contains("home-refused"),
        "{r}"
    );
    let uid = s
        .user
        .map_or_else(|| rustix::process::geteuid().as_raw(), |u| u.0);
    assert!(r.contains(&format!("uid={uid}")), "{r}");
    assert!(r.contains("exit code 3"), "{r}");
    assert!(
        !Path::new(&probe).exists(),
        "{probe} was written: unconfined"
    );
    assert!(!outside.exists(), "{} was written", outside.display());
    assert_eq!(
        std::fs::read_to_string(s.dir().join("made.txt")).unwrap(),
        "out\n"
    );
}

/// With the cordon binary gone after install, the call is denied, and the model reads why.
#[test]
fn copilot_missing_cordon_binary_blocks() {
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("cordon");
    std::fs::copy(env!("CARGO_BIN_EXE_cordon"), &copy).unwrap();
    let s = Setup::with_binary(None, &copy);
    std::fs::remove_file(&copy).unwrap();
    let r = turn(&s, "touch ran-without-cordon");
    assert!(!s.dir().join("ran-without-cordon").exists(), "{r}");
    assert!(r.contains("the call is blocked"), "{r}");
}

/// An ask: cordon answers a deny that names the reason and how a person runs it.
#[test]
fn copilot_ask_is_denied_with_its_reason_and_how() {
    let s = Setup::new(None);
    let r = turn(&s, "touch ran-before-ask && git push");
    assert!(!s.dir().join("ran-before-ask").exists(), "{r}");
    assert!(r.contains("publishes commits"), "{r}");
    assert!(r.contains("a person runs it in a terminal"), "{r}");
}

/// Copilot's file tools are decided too: `create` inside the workspace is allowed and
/// written; `create` of a hook file (which would unhook cordon next session) is denied.
#[test]
fn copilot_file_tools_are_decided() {
    let s = Setup::new(None);
    let ok = s.dir().join("notes.txt");
    let r = turn_with(
        &s,
        Turn {
            tool: "create".into(),
            input: json!({ "path": ok, "file_text": "hello\n" }),
        },
    );
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "hello\n", "{r}");

    let s = Setup::new(None);
    let hook = s.dir().join(".github/hooks/other.json");
    let r = turn_with(
        &s,
        Turn {
            tool: "create".into(),
            input: json!({ "path": hook, "file_text": "{}" }),
        },
    );
    assert!(r.contains("configures the agent host's hooks"), "{r}");
    assert!(!hook.exists(), "{r}");
}

/// A project's `.github/hooks` (in a git repository) runs in prompt mode only when Copilot
/// trusts the folder or is told to (`GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`); otherwise Copilot skips it without
/// a word, and a command the policy denies runs. `cordon doctor` says so rather than
/// "loaded".
#[test]
fn copilot_project_hook_runs_only_in_a_trusted_or_opted_in_folder() {
    let s = Setup::installed(None, Path::new(env!("CARGO_BIN_EXE_cordon")), "--project");
    // Copilot looks for .github/hooks at the root of a git repository (outside one it loads
    // no project hooks at all, opted in or not: checked with 1.0.102).
    let o = Command::new("git")
        .args(["init", "-q"])
        .current_dir(s.dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "git init: {}", common::stderr(&o));
    let t = Turn {
        tool: "bash".into(),
        input: json!({ "command": "touch ran-here; rm -rf keep", "description": "scripted" }),
    };
    std::fs::create_dir(s.dir().join("keep")).unwrap();

    let mock = Mock::start(t.clone());
    let o = s.run_copilot_with(
        &mock,
        &[],
        &[("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS", "true")],
    );
    let r = mock.the_one_result("Copilot CLI", &t.tool, &o);
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir() && !s.dir().join("ran-here").exists());

    // Not opted in, the folder not trusted: Copilot skips the project's hooks. With its own
    // approval off (--allow-all-tools, as a headless run would), the denied command runs.
    let mock = Mock::start(t.clone());
    let o = s.run_copilot_with(&mock, &["--allow-all-tools"], &[]);
    let r = mock.the_one_result("Copilot CLI", &t.tool, &o);
    assert!(!r.contains("cordon"), "{r}");
    assert!(s.dir().join("ran-here").exists(), "{r}");
    assert!(!s.dir().join("keep").exists(), "{r}");

    let o = common::command(s.dir())
        .env("HOME", s.home.path())
        .env_remove("COPILOT_HOME")
        .arg("doctor")
        .output()
        .unwrap();
    let line = common::stdout(&o)
        .lines()
        .find(|l| l.contains("copilot-cli") && l.contains("project"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("wired, fails closed") && line.contains("only in a folder it trusts"),
        "{line}"
    );
}

/// A hook past Copilot's `timeoutSec` is no decision at all: Copilot's own approval decides,
/// which in `-p` denies, and with `--allow-all-tools` runs the command unconfined. This is the
/// limitation `install` and `doctor` state ("a hook timeout lets it run"); cordon's hook made
/// slow here by a `sleep` in front of it, with a 2 s timeout.
#[test]
fn copilot_hook_timeout_leaves_the_call_to_copilots_own_approval() {
    let s = Setup::new(None);
    let file = s.home.path().join(".copilot/hooks/cordon.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let hook = &mut v["hooks"]["preToolUse"][0];
    hook["bash"] = json!(format!("sleep 20; {}", hook["bash"].as_str().unwrap()));
    hook["timeoutSec"] = json!(2);
    std::fs::write(&file, v.to_string()).unwrap();
    let t = Turn {
        tool: "bash".into(),
        input: json!({ "command": "touch ran-after-timeout", "description": "scripted" }),
    };

    let mock = Mock::start(t.clone());
    let o = s.run_copilot(&mock);
    let r = mock.the_one_result("Copilot CLI", &t.tool, &o);
    assert!(!r.contains("cordon"), "{r}");
    assert!(!s.dir().join("ran-after-timeout").exists(), "{r}");

    let mock = Mock::start(t.clone());
    let o = s.run_copilot_with(&mock, &["--allow-all-tools"], &[]);
    let r = mock.the_one_result("Copilot CLI", &t.tool, &o);
    assert!(
        s.dir().join("ran-after-timeout").exists(),
        "Copilot now blocks a timed-out hook: update docs/hooks.md and doctor. {r}"
    );
}

/// `cordon install copilot --mcp --user` wraps the stdio server in Copilot's own
/// `mcp-config.json`, and the real Copilot CLI then starts it through `cordon mcp wrap`: a tool
/// the policy's `[mcp]` denies never reaches the server (its reason reaches the model, nothing
/// is written), an allowed one does. Copilot's own approval is off (`--allow-all-tools`) so
/// that cordon is what decides; no hook is installed (the MCP path alone).
#[test]
fn copilot_mcp_server_runs_under_cordon_mcp_wrap() {
    mcp(None);
}

/// The same with Copilot CLI, and so `cordon mcp wrap` and the server, running as an
/// unprivileged user (bwrap in an unprivileged user namespace).
#[test]
fn copilot_mcp_server_as_an_unprivileged_user() {
    mcp(unprivileged());
}

fn mcp(user: Option<(u32, u32)>) {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = project.path().canonicalize().unwrap();
    let server = host_bin("mcp-server-filesystem");
    // The server's own files (node_modules) readable and runnable inside the sandbox.
    let deps = server.ancestors().nth(4).unwrap();
    let policy = format!(
        "{POLICY}\n[sandbox.paths.deps]\nroot = {deps:?}\nmode = \"ro\"\nexec = true\n\n\
         [mcp]\ndefault = \"allow\"\n\n[[mcp.rules]]\npattern = \"fs/write_*\"\n\
         action = \"deny\"\nreason = \"the filesystem server may only read\"\n\n\
         [[mcp.rules]]\npattern = \"fs/read_*\"\nargs = {{ path = \"**/secret.txt\" }}\n\
         action = \"deny\"\nreason = \"the secret stays unread\"\n"
    );
    std::fs::write(dir.join("cordon.toml"), policy).unwrap();
    std::fs::write(dir.join("notes.txt"), "cordon-mcp-probe\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "cordon-secret\n").unwrap();
    let config = home.path().join(".copilot/mcp-config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        json!({"mcpServers": {"fs": {
            "type": "local",
            "command": server,
            "args": [dir],
            "tools": ["*"],
        }}})
        .to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .current_dir(&dir)
        .env("HOME", home.path())
        .env_remove("COPILOT_HOME")
        .args(["install", "copilot", "--mcp", "--user", "--policy"])
        .arg(dir.join("cordon.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "install: {}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["fs"]["command"],
        env!("CARGO_BIN_EXE_cordon")
    );
    let s = Setup {
        project,
        home,
        user,
    };
    let mut offered = Vec::new();
    let mut run = |tool: &str, input: serde_json::Value| {
        let t = Turn {
            tool: tool.into(),
            input,
        };
        let mock = Mock::start(t.clone());
        let o = s.run_copilot_with(&mock, &["--allow-all-tools"], &[]);
        offered = mock
            .requests()
            .iter()
            .flat_map(|r| r["tools"].as_array().cloned().unwrap_or_default())
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect();
        mock.the_one_result("Copilot CLI", tool, &o)
    };
    // Denied on its argument: the server never reads it; cordon's reason is the tool result.
    let denied = run("fs-read_text_file", json!({"path": dir.join("secret.txt")}));
    assert!(denied.contains("the secret stays unread"), "{denied}");
    assert!(!denied.contains("cordon-secret"), "{denied}");
    // Allowed: through the wrapper to the server and back.
    let read = run("fs-read_text_file", json!({"path": dir.join("notes.txt")}));
    assert!(read.contains("cordon-mcp-probe"), "{read}");
    // A tool the rules deny outright is left out of tools/list by cordon mcp wrap: Copilot
    // never offers it, while the server's other tools come through.
    assert!(
        offered.iter().any(|t| t == "fs-edit_file")
            && !offered.iter().any(|t| t == "fs-write_file"),
        "{offered:?}"
    );
}

/// Copilot CLI's interactive session (no `-p`), driven in a real pseudo-terminal through the
/// same mock model: the folder-trust dialog answered "Yes", a prompt typed, and cordon's
/// user-level hook then denies `rm -rf` (nothing runs; the reason reaches the model) and
/// rewrites an allowed line, which runs confined (a write to HOME, outside the policy's roots,
/// refused) without Copilot's own approval asking (the session is in "Manual Approval": had it
/// asked, no result would reach the model, since the test never answers).
#[test]
fn copilot_interactive_session_deny_and_allow() {
    interactive(Setup::new(None));
}

/// The same with Copilot CLI itself running as an unprivileged user.
#[test]
fn copilot_interactive_session_as_an_unprivileged_user() {
    interactive(Setup::new(unprivileged()));
}

fn interactive(s: Setup) {
    let home = s.home.path();
    for d in [".state", ".config", ".runtime", ".cache"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    if let Some((uid, gid)) = s.user {
        for p in [s.dir(), home] {
            let o = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(p)
                .output()
                .unwrap();
            assert!(o.status.success());
        }
    }
    let session = |t: Turn| -> String {
        let mock = Mock::start(t.clone());
        let mut c = Command::new(host_bin("copilot"));
        if let Some((uid, gid)) = s.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(s.dir())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("TERM", "xterm-256color")
            .env("COPILOT_PROVIDER_TYPE", "anthropic")
            .env("COPILOT_PROVIDER_BASE_URL", mock.base_url())
            .env("COPILOT_PROVIDER_API_KEY", "cordon-test-key")
            .env("COPILOT_MODEL", "claude-sonnet-4-5")
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"));
        let mut p = pty::Pty::spawn(c, None);
        p.expect("Do you trust the files in this folder?");
        p.send(b"\r"); // 1. Yes (this session)
        p.expect("Manual Approval");
        std::thread::sleep(Duration::from_secs(1));
        p.send(b"run the scripted tool call");
        std::thread::sleep(Duration::from_millis(500));
        p.send(b"\r");
        // Until the tool's result reaches the model (generous: a loaded 2-core machine).
        let end = std::time::Instant::now() + Duration::from_secs(180);
        while mock.tool_results().is_empty() && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(200));
        }
        std::thread::sleep(Duration::from_secs(1));
        let screen = p.kill();
        assert!(mock.offered(&t.tool), "Copilot never offered {}", t.tool);
        let results = mock.tool_results();
        assert_eq!(results.len(), 1, "{results:?}\nscreen:\n{screen}");
        results[0].clone()
    };
    let denied = session(Turn {
        tool: "bash".into(),
        input: json!({ "command": "touch ran-before-deny; rm -rf keep", "description": "scripted" }),
    });
    assert!(denied.contains("destroys files"), "{denied}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists());
    let outside = home.join("outside-probe");
    let allowed = session(Turn {
        tool: "bash".into(),
        input: json!({
            "command": format!(
                "echo interactive-ok > allowed.txt; touch {} 2>/dev/null; echo home=$?",
                outside.display()
            ),
            "description": "scripted",
        }),
    });
    assert_eq!(
        std::fs::read_to_string(s.dir().join("allowed.txt")).unwrap(),
        "interactive-ok\n"
    );
    assert!(allowed.contains("home=1"), "{allowed}");
    assert!(
        !outside.exists(),
        "the rewritten line ran unconfined: {allowed}"
    );
}
