//! Codex CLI for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install codex` and driven by the project's mock model server (Responses API).
//!
//! Codex runs a project's hooks only in a trusted project and only once the hook itself is
//! trusted (recorded by its `/hooks` review); `--dangerously-bypass-hook-trust` runs them
//! without that record. These tests trust the project in Codex's config and pass that flag,
//! with Codex's own sandbox off (`-s danger-full-access`): cordon confines what it allows.
//! One test shows what Codex does with an untrusted hook: it skips it, silently.

mod common;
mod hosts_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use hosts_support::{host_bin, unprivileged, wait_deadline, Mock, Turn, POLICY};
use serde_json::json;

/// A project, and a HOME holding CODEX_HOME; run as `user` when set.
struct Setup {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
    user: Option<(u32, u32)>,
}

impl Setup {
    fn new(user: Option<(u32, u32)>) -> Setup {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let home = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .current_dir(project.path())
            .env("HOME", home.path())
            .env("CODEX_HOME", home.path().join(".codex"))
            .args(["install", "codex", "--project", "--policy"])
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

    /// `codex exec` against `mock` in the project; `bypass`: pass
    /// `--dangerously-bypass-hook-trust`.
    fn run_codex(&self, mock: &Mock, bypass: bool) -> Output {
        let home = self.home.path();
        let codex_home = home.join(".codex");
        for d in [".state", ".config", ".runtime", ".codex"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        let project = self.dir().canonicalize().unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "model = \"mock-model\"\nmodel_provider = \"mock\"\n\
                 check_for_update_on_startup = false\n\n\
                 [model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\n\
                 wire_api = \"responses\"\nenv_key = \"CORDON_MOCK_KEY\"\n\n\
                 [analytics]\nenabled = false\n\n\
                 [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                mock.base_url(),
                project.display()
            ),
        )
        .unwrap();
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
        let mut c = Command::new(host_bin("codex"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir()).args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
        ]);
        if bypass {
            c.arg("--dangerously-bypass-hook-trust");
        }
        c.arg("run the scripted tool call")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("CODEX_HOME", &codex_home)
            .env("CORDON_MOCK_KEY", "sk-cordon-test")
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

fn shell(line: &str) -> Turn {
    Turn {
        tool: "exec_command".into(),
        input: json!({ "cmd": line }),
    }
}

/// One scripted turn: the one tool result that came back to the model.
fn turn(s: &Setup, line: &str, bypass: bool) -> String {
    let t = shell(line);
    let mock = Mock::start(t.clone());
    let o = s.run_codex(&mock, bypass);
    let results = mock.tool_results();
    assert!(
        mock.offered(&t.tool),
        "Codex never offered {}: {}\n{}",
        t.tool,
        common::stdout(&o),
        common::stderr(&o)
    );
    assert_eq!(
        results.len(),
        1,
        "one tool result expected; codex: {}\n{}\nresults: {results:?}",
        common::stdout(&o),
        common::stderr(&o)
    );
    results[0].clone()
}

#[test]
fn codex_deny_reaches_the_model_and_nothing_runs() {
    let s = Setup::new(None);
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "touch ran-before-deny; rm -rf keep", true);
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

#[test]
fn codex_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::new(None));
}

#[test]
fn codex_allow_as_an_unprivileged_user() {
    allow(Setup::new(unprivileged()));
}

fn allow(s: Setup) {
    let probe = format!("/etc/cordon-hosts-codex-probe-{}", std::process::id());
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
        "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$CORDON_MOCK_KEY.\"; sh ./probe.sh; \
         echo out > made.txt; exit 3",
        true,
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
    assert!(r.lines().any(|l| l == format!("uid={uid}")), "{r}");
    assert!(r.contains("exited with code 3"), "{r}");
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

/// What the host does, which `cordon doctor` must not hide: in a trusted project, a hook
/// nobody trusted in Codex's `/hooks` review is not run, and nothing says so.
#[test]
fn codex_skips_an_untrusted_hook_silently() {
    let s = Setup::new(None);
    // cordon would ask (`git push`): Codex runs it without asking anyone.
    let r = turn(&s, "touch ran-unhooked && git push", false);
    assert!(s.dir().join("ran-unhooked").exists(), "{r}");
    assert!(!r.contains("cordon"), "{r}");
}
