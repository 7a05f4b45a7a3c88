//! Claude Code for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install claude` and driven by the project's mock model server: the model asks for
//! one tool call and the test reads what came back to it.
//!
//! Scenarios: a denied shell call never runs and its reason reaches the model; an allowed one
//! is rewritten to `cordon exec` and runs kernel-confined (a write to /etc fails) with its
//! output, exit code, cwd and environment intact; an asked one does not run in headless mode;
//! a write by the host's own file tool to a persistence-surface path does not happen; with the
//! cordon binary gone the call is blocked.

mod common;
mod hosts_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use hosts_support::{host_bin, unprivileged, wait_deadline, Mock, Turn, POLICY};
use serde_json::json;

/// With `user` set (the tests run as root), the host runs as that unprivileged user and owns
/// both directories.
struct Setup {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
    user: Option<(u32, u32)>,
}

impl Setup {
    fn new() -> Setup {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let home = tempfile::tempdir().unwrap();
        Setup {
            project,
            home,
            user: None,
        }
    }

    /// As [`Setup::new`], the host run as the unprivileged user `cordon-test` when the tests
    /// run as root (as the current user otherwise).
    fn unprivileged() -> Setup {
        Setup {
            user: unprivileged(),
            ..Setup::new()
        }
    }

    /// Hands everything in the project and HOME to the unprivileged user, if any.
    fn give(&self) {
        fn chown_all(p: &Path, uid: u32, gid: u32) {
            std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
            if p.is_dir() && !p.is_symlink() {
                for e in std::fs::read_dir(p).unwrap() {
                    chown_all(&e.unwrap().path(), uid, gid);
                }
            }
        }
        if let Some((uid, gid)) = self.user {
            chown_all(self.project.path(), uid, gid);
            chown_all(self.home.path(), uid, gid);
        }
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    /// `cordon install claude --project --policy cordon.toml` with the binary `cordon`.
    fn install(&self, cordon: &Path) {
        self.install_with(cordon, &[]);
    }

    /// `cordon install claude --project --policy cordon.toml EXTRA`.
    fn install_with(&self, cordon: &Path, extra: &[&str]) {
        let o = Command::new(cordon)
            .current_dir(self.dir())
            .env("HOME", self.home.path())
            .args(["install", "claude", "--project", "--policy"])
            .arg(self.dir().join("cordon.toml"))
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "install: {}", common::stderr(&o));
    }

    /// `claude -p` against `mock`, in the project, with a deadline generous for a loaded
    /// machine; the host's outbound traffic other than the model is switched off.
    fn run_claude(&self, mock: &Mock) -> Output {
        // cordon's state, trust store and host grants: in this HOME, the host's user's own.
        let home = self.home.path();
        for d in [".state", ".config", ".runtime"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        self.give();
        let mut c = Command::new(host_bin("claude"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            .args([
                "-p",
                "run the scripted tool call",
                "--output-format",
                "json",
                "--max-turns",
                "3",
                // The operator lets the host edit files without asking: what stops a write
                // then is cordon's hook alone.
                "--permission-mode",
                "acceptEdits",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", self.home.path())
            .env("ANTHROPIC_BASE_URL", mock.base_url())
            .env("ANTHROPIC_API_KEY", "sk-cordon-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CORDON_HOSTS_PROBE", "probe-value")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        wait_deadline(child, Duration::from_secs(240))
    }
}

fn bash(command: &str) -> Turn {
    Turn {
        tool: "Bash".into(),
        input: json!({ "command": command, "description": "scripted by the test" }),
    }
}

/// One scripted turn: the tool results that came back to the model.
fn turn(s: &Setup, t: Turn) -> Vec<String> {
    let mock = Mock::start(t.clone());
    let o = s.run_claude(&mock);
    vec![mock.the_one_result("Claude Code", &t.tool, &o)]
}

#[test]
fn claude_deny_reaches_the_model_and_nothing_runs() {
    deny(Setup::new());
}

#[test]
fn claude_deny_as_an_unprivileged_user() {
    deny(Setup::unprivileged());
}

fn deny(s: Setup) {
    s.install(Path::new(env!("CARGO_BIN_EXE_cordon")));
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, bash("touch ran-before-deny; rm -rf keep"));
    assert!(r[0].contains("destroys files"), "{r:?}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists());
}

#[test]
fn claude_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::new());
}

#[test]
fn claude_allow_as_an_unprivileged_user() {
    allow(Setup::unprivileged());
}

fn allow(s: Setup) {
    s.install(Path::new(env!("CARGO_BIN_EXE_cordon")));
    let probe = format!("/etc/cordon-hosts-probe-{}", std::process::id());
    // Outside the project but the host's user's own: only the sandbox stops a write there.
    let outside = s.home.path().join("outside-probe");
    // The writes sit in a script, out of the line's static analysis: only the kernel sandbox
    // can stop them (as root nothing else would stop the /etc one).
    std::fs::write(
        s.dir().join("probe.sh"),
        format!(
            "echo x > {probe} || echo etc-refused\necho x > {} || echo home-refused\necho uid=$(id -u)\n",
            outside.display()
        ),
    )
    .unwrap();
    let line = "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$ANTHROPIC_API_KEY.\"; sh ./probe.sh; \
                echo out > made.txt; exit 3";
    let r = turn(&s, bash(line));
    let canon = s.dir().canonicalize().unwrap();
    assert!(r[0].contains(canon.to_str().unwrap()), "{r:?}");
    // The policy's `env` passes; the host's model key is not in the allow-list.
    assert!(r[0].contains("env=probe-value key=."), "{r:?}");
    assert!(r[0].contains("etc-refused"), "{r:?}");
    assert!(r[0].contains("home-refused"), "{r:?}");
    let uid = s
        .user
        .map_or_else(|| rustix::process::geteuid().as_raw(), |u| u.0);
    assert!(r[0].lines().any(|l| l == format!("uid={uid}")), "{r:?}");
    assert!(
        !outside.exists(),
        "{} was written: unconfined",
        outside.display()
    );
    assert!(r[0].contains("Exit code 3"), "{r:?}");
    assert!(
        !Path::new(&probe).exists(),
        "{probe} was written: unconfined"
    );
    assert_eq!(
        std::fs::read_to_string(s.dir().join("made.txt")).unwrap(),
        "out\n"
    );
}

#[test]
fn claude_ask_does_not_run_headless() {
    let s = Setup::new();
    s.install(Path::new(env!("CARGO_BIN_EXE_cordon")));
    let r = turn(&s, bash("touch ran-before-ask && git push"));
    assert!(!s.dir().join("ran-before-ask").exists(), "{r:?}");
    eprintln!("ask result: {r:?}");
    assert!(r[0].contains("publishes commits"), "{r:?}");
}

/// A Write by the host's own file tool: returns the tool result.
fn write_turn(s: &Setup, path: &Path, content: &str) -> String {
    let r = turn(
        s,
        Turn {
            tool: "Write".into(),
            input: json!({ "file_path": path, "content": content }),
        },
    );
    r[0].clone()
}

#[test]
fn claude_file_tool_write_to_surface_is_not_silent() {
    let s = Setup::new();
    s.install(Path::new(env!("CARGO_BIN_EXE_cordon")));
    // Control: an ordinary file in the rw root is written (the hook allows file tools).
    let plain = s.dir().join("notes.txt");
    let r = write_turn(&s, &plain, "notes\n");
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "notes\n", "{r}");
    // cordon's remembered rules are on the persistence surface, and Claude Code does not flag
    // the name as a sensitive file itself: the refusal is cordon's. (A new file: Claude Code
    // refuses to overwrite one it has not read, which would hide the hook's answer.)
    let rules = s.dir().join("cordon.rules.toml");
    let r = write_turn(&s, &rules, "version = 1\n");
    assert!(!rules.exists(), "the host wrote {}: {r}", rules.display());
    assert!(r.contains("cordon: "), "not cordon's refusal: {r}");
}

#[test]
fn claude_missing_cordon_binary_blocks() {
    let s = Setup::new();
    let bin = tempfile::tempdir().unwrap();
    let copy: PathBuf = bin.path().join("cordon");
    std::fs::copy(env!("CARGO_BIN_EXE_cordon"), &copy).unwrap();
    s.install(&copy);
    std::fs::remove_file(&copy).unwrap();
    let r = turn(&s, bash("touch ran-without-cordon"));
    assert!(!s.dir().join("ran-without-cordon").exists(), "{r:?}");
    assert!(r[0].contains("the call is blocked"), "{r:?}");
}

/// A decision that cannot be made in time (the audit log's lock held): the hook blocks the
/// call when its deadline passes, with a reason saying so, long before Claude Code's hook
/// timeout (30 s as install sets it), after which Claude Code would run it.
#[test]
fn claude_hook_deadline_blocks_an_undecided_call() {
    let s = Setup::new();
    s.install_with(
        Path::new(env!("CARGO_BIN_EXE_cordon")),
        &["--deadline", "2s"],
    );
    let (_log, _lock) = hosts_support::audit_lock_held(&s.dir().join("cordon.toml"));
    let r = turn(&s, bash("touch ran-after-deadline"));
    assert!(!s.dir().join("ran-after-deadline").exists(), "{r:?}");
    assert!(
        r[0].contains("no decision within the hook's 2 s deadline")
            && r[0].contains("audit log's lock"),
        "{r:?}"
    );
}

/// Claude Code's `disableAllHooks` (here in the project's local settings) switches every hook
/// off: doctor says cordon's hook is not run, and Claude Code indeed runs a line cordon denies.
#[test]
fn claude_disable_all_hooks_doctor_says_not_run_and_the_host_skips_it() {
    let s = Setup::new();
    s.install(Path::new(env!("CARGO_BIN_EXE_cordon")));
    std::fs::write(
        s.dir().join(".claude/settings.local.json"),
        json!({ "disableAllHooks": true }).to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .current_dir(s.dir())
        .env("HOME", s.home.path())
        .arg("doctor")
        .output()
        .unwrap();
    let out = common::stdout(&o);
    let line = out
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["claude-code", "project"]))
        .unwrap_or_else(|| panic!("no claude-code project line in:\n{out}"));
    assert!(
        line.contains("NOT RUN: disableAllHooks = true in"),
        "{line}"
    );
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, bash("rm -rf keep"));
    assert!(
        !s.dir().join("keep").exists(),
        "Claude Code ran cordon's hook: {r:?}"
    );
}
