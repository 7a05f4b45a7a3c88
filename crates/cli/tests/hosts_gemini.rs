//! Gemini CLI for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install gemini --user` and driven by the project's mock model server (Gemini API).
//!
//! Gemini CLI runs project hooks only in a folder it trusts (`~/.gemini/trustedFolders.json`),
//! and `--skip-trust` ignores them; user-level hooks (`~/.gemini/settings.json`) are what these
//! tests install. The folder is trusted so that `--yolo` is honoured: Gemini CLI's own approval
//! is off and cordon's hook is the gate.

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
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let home = tempfile::tempdir().unwrap();
        let gemini = home.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        // The operator's settings before install (install keeps every other key): an API
        // key as the auth, no usage statistics, no update checks.
        std::fs::write(
            gemini.join("settings.json"),
            json!({
                "security": { "auth": { "selectedType": "gemini-api-key" } },
                "privacy": { "usageStatisticsEnabled": false },
                "general": { "disableAutoUpdate": true },
            })
            .to_string(),
        )
        .unwrap();
        let canon = project.path().canonicalize().unwrap();
        std::fs::write(
            gemini.join("trustedFolders.json"),
            json!({ canon.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
        )
        .unwrap();
        let o = Command::new(bin)
            .current_dir(project.path())
            .env("HOME", home.path())
            .args(["install", "gemini", "--user", "--policy"])
            .arg(project.path().join("cordon.toml"))
            .output()
            .unwrap();
        assert!(o.status.success(), "install: {}", common::stderr(&o));
        Setup {
            project,
            home,
            user,
        }
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    fn run_gemini(&self, mock: &Mock) -> Output {
        let home = self.home.path();
        for d in [".state", ".config", ".runtime"] {
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
        let mut c = Command::new(host_bin("gemini"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            // A model named: Gemini CLI routes no request through its classifier model.
            .args([
                "-p",
                "run the scripted tool call",
                "--yolo",
                "-m",
                "gemini-2.5-flash",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("GEMINI_API_KEY", "cordon-test-key")
            .env("GOOGLE_GEMINI_BASE_URL", mock.base_url())
            .env("GEMINI_TELEMETRY_ENABLED", "false")
            .env("CORDON_HOSTS_PROBE", "probe-value")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        wait_deadline(c.spawn().unwrap(), Duration::from_secs(240))
    }
}

fn turn(s: &Setup, line: &str) -> String {
    let t = Turn {
        tool: "run_shell_command".into(),
        input: json!({ "command": line }),
    };
    let mock = Mock::start(t.clone());
    let o = s.run_gemini(&mock);
    mock.the_one_result("Gemini CLI", &t.tool, &o)
}

#[test]
fn gemini_deny_reaches_the_model_and_nothing_runs() {
    let s = Setup::new(None);
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "touch ran-before-deny; rm -rf keep");
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

#[test]
fn gemini_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::new(None));
}

#[test]
fn gemini_allow_as_an_unprivileged_user() {
    allow(Setup::new(unprivileged()));
}

fn allow(s: Setup) {
    let probe = format!("/etc/cordon-hosts-gemini-probe-{}", std::process::id());
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
        "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$GEMINI_API_KEY.\"; sh ./probe.sh; \
         echo out > made.txt; exit 3",
    );
    let canon = s.dir().canonicalize().unwrap();
    assert!(r.contains(canon.to_str().unwrap()), "{r}");
    assert!(r.contains("env=probe-value key=."), "{r}");
    assert!(
        r.contains("etc-refused") && r.contains("home-refused"),
        "{r}"
    );
    let uid = s
        .user
        .map_or_else(|| rustix::process::geteuid().as_raw(), |u| u.0);
    assert!(r.contains(&format!("uid={uid}")), "{r}");
    assert!(r.contains("Exit Code: 3"), "{r}");
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

/// With the cordon binary gone after install, the call is blocked.
#[test]
fn gemini_missing_cordon_binary_blocks() {
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("cordon");
    std::fs::copy(env!("CARGO_BIN_EXE_cordon"), &copy).unwrap();
    let s = Setup::with_binary(None, &copy);
    std::fs::remove_file(&copy).unwrap();
    let r = turn(&s, "touch ran-without-cordon");
    assert!(!s.dir().join("ran-without-cordon").exists(), "{r}");
    assert!(r.contains("the call is blocked"), "{r}");
}

/// An ask: the host cannot ask through the hook, so the call is blocked with cordon's reason
/// and how a person runs it.
#[test]
fn gemini_ask_is_blocked_with_its_reason() {
    let s = Setup::new(None);
    let r = turn(&s, "touch ran-before-ask && git push");
    assert!(!s.dir().join("ran-before-ask").exists(), "{r}");
    assert!(r.contains("publishes commits"), "{r}");
}
