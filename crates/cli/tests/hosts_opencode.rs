//! opencode for real (the version pinned in `scripts/test-deps.sh`), wired by `cordon install
//! opencode --user` (cordon's plugin in `~/.config/opencode/plugin/`) and driven by the
//! project's mock model server: opencode's `anthropic` provider with its `baseURL` option
//! pointed at the mock's Anthropic Messages API (`OPENCODE_CONFIG_CONTENT`).
//!
//! Offline: no model list fetch, no update check, and npm (which opencode runs to add
//! `@opencode-ai/plugin` to its config directory, in the background) in offline mode, so it
//! fails at once; cordon's plugin needs nothing from it.

mod common;
mod hosts_support;

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
            .env_remove("XDG_CONFIG_HOME")
            .args(["install", "opencode", scope, "--policy"])
            .arg(project.path().join("cordon.toml"))
            .output()
            .unwrap();
        assert!(o.status.success(), "install: {}", common::stderr(&o));
        let file = match scope {
            "--user" => home.path().join(".config/opencode/plugin/cordon.js"),
            _ => project.path().join(".opencode/plugin/cordon.js"),
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

    fn run_opencode(&self, mock: &Mock) -> Output {
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
        let config = json!({
            "autoupdate": false,
            "share": "disabled",
            "provider": { "anthropic": { "options": {
                "baseURL": format!("{}/v1", mock.base_url()),
                "apiKey": "cordon-test-key",
            }}},
            "model": "anthropic/claude-sonnet-4-5",
        });
        let mut c = Command::new(host_bin("opencode"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            .args(["run", "run the scripted tool call"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("OPENCODE_CONFIG_CONTENT", config.to_string())
            .env("OPENCODE_DISABLE_MODELS_FETCH", "true")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "true")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "true")
            .env("ANTHROPIC_API_KEY", "cordon-test-key")
            .env("npm_config_offline", "true")
            .env("CORDON_HOSTS_PROBE", "probe-value")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        wait_deadline(c.spawn().unwrap(), Duration::from_secs(240))
    }
}

fn turn_with(s: &Setup, t: Turn) -> String {
    let mock = Mock::start(t.clone());
    let o = s.run_opencode(&mock);
    mock.the_one_result("opencode", &t.tool, &o)
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
fn opencode_deny_reaches_the_model_and_nothing_runs() {
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
fn opencode_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::new(None));
}

#[test]
fn opencode_allow_as_an_unprivileged_user() {
    allow(Setup::new(unprivileged()));
}

fn allow(s: Setup) {
    let probe = format!("/etc/cordon-hosts-opencode-probe-{}", std::process::id());
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
        "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$ANTHROPIC_API_KEY.\"; sh ./probe.sh; \
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
    // opencode gives the model the output only, not the exit status.
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

/// With the cordon binary gone after install, the plugin blocks the call, and the model reads
/// why.
#[test]
fn opencode_missing_cordon_binary_blocks() {
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
fn opencode_ask_is_denied_with_its_reason_and_how() {
    let s = Setup::new(None);
    let r = turn(&s, "touch ran-before-ask && git push");
    assert!(!s.dir().join("ran-before-ask").exists(), "{r}");
    assert!(r.contains("publishes commits"), "{r}");
    assert!(r.contains("a person runs it in a terminal"), "{r}");
}

/// opencode's file tools are decided too: `write` inside the workspace is allowed and written;
/// `write` of a plugin (which could unhook cordon next session) is denied.
#[test]
fn opencode_file_tools_are_decided() {
    let s = Setup::new(None);
    let ok = s.dir().join("notes.txt");
    let r = turn_with(
        &s,
        Turn {
            tool: "write".into(),
            input: json!({ "filePath": ok, "content": "hello\n" }),
        },
    );
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "hello\n", "{r}");

    let s = Setup::new(None);
    let hook = s.dir().join(".opencode/plugin/other.js");
    let r = turn_with(
        &s,
        Turn {
            tool: "write".into(),
            input: json!({ "filePath": hook, "content": "export const X = 1;" }),
        },
    );
    assert!(r.contains("configures the agent host's hooks"), "{r}");
    assert!(!hook.exists(), "{r}");
}

/// The project-level plugin (`.opencode/plugin/cordon.js`) is loaded the same way.
#[test]
fn opencode_project_plugin_denies() {
    let s = Setup::installed(None, Path::new(env!("CARGO_BIN_EXE_cordon")), "--project");
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "touch ran-before-deny; rm -rf keep");
    assert!(
        r.contains("cordon: denied") && r.contains("destroys files"),
        "{r}"
    );
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

/// `cordon install opencode --mcp --user` wraps the local server in opencode's own
/// `opencode.json` (its `command` list), and the real opencode then starts it through `cordon
/// mcp wrap`: a read the policy's `[mcp]` denies on its argument never reaches the server (the
/// reason reaches the model), an allowed one does, and a tool denied outright is not offered.
#[test]
fn opencode_mcp_server_runs_under_cordon_mcp_wrap() {
    mcp(Setup::new(None));
}

/// The same with opencode, and so `cordon mcp wrap` and the server, running as an
/// unprivileged user (bwrap in an unprivileged user namespace).
#[test]
fn opencode_mcp_server_as_an_unprivileged_user() {
    mcp(Setup::new(unprivileged()));
}

fn mcp(s: Setup) {
    let dir = s.dir().canonicalize().unwrap();
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
    let config = s.home.path().join(".config/opencode/opencode.json");
    std::fs::write(
        &config,
        json!({"mcp": {"fs": {"type": "local", "command": [server, dir], "enabled": true}}})
            .to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .current_dir(&dir)
        .env("HOME", s.home.path())
        .env_remove("XDG_CONFIG_HOME")
        .args(["install", "opencode", "--mcp", "--user", "--policy"])
        .arg(dir.join("cordon.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "install: {}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(v["mcp"]["fs"]["command"][0], env!("CARGO_BIN_EXE_cordon"));
    let mut offered = Vec::new();
    let mut run = |tool: &str, input: serde_json::Value| {
        let t = Turn {
            tool: tool.into(),
            input,
        };
        let mock = Mock::start(t.clone());
        let o = s.run_opencode(&mock);
        offered = mock
            .requests()
            .iter()
            .flat_map(|r| r["tools"].as_array().cloned().unwrap_or_default())
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect();
        assert!(
            mock.offered(tool),
            "opencode offered {offered:?}: {}\n{}",
            common::stdout(&o),
            common::stderr(&o)
        );
        mock.the_one_result("opencode", tool, &o)
    };
    let denied = run("fs_read_text_file", json!({"path": dir.join("secret.txt")}));
    assert!(denied.contains("the secret stays unread"), "{denied}");
    assert!(!denied.contains("cordon-secret"), "{denied}");
    let read = run("fs_read_text_file", json!({"path": dir.join("notes.txt")}));
    assert!(read.contains("cordon-mcp-probe"), "{read}");
    assert!(
        offered.iter().any(|t| t == "fs_edit_file")
            && !offered.iter().any(|t| t == "fs_write_file"),
        "{offered:?}"
    );
}
