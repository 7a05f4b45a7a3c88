//! Codex CLI for real with its OWN sandbox on (issue 23, nested sandboxes): `codex exec -s
//! workspace-write` (what `--full-auto` and a trusted project's default give), cordon's hook
//! trusted by `cordon install codex`, driven by the project's mock model server.
//!
//! HOME lies outside /tmp, as a real one does: Codex's sandbox makes it read-only (only the
//! project and /tmp stay writable), so cordon's state there (the audit log) must be made
//! writable by install, or the run fails. As an unprivileged user cordon runs inside Codex's
//! sandbox and stacks its own (bubblewrap in Codex's network namespace); as root, where
//! Codex's sandbox leaves cordon no capabilities, cordon refuses what it cannot enforce and
//! says what to change.

mod common;
mod hosts_support;

use std::io::Write;
use std::path::{Path, PathBuf};
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
    /// A git project trusted in Codex, HOME under /var/tmp, cordon installed (`extra`: more
    /// arguments to `cordon install codex`); install must succeed and report Codex's trust.
    fn new(user: Option<(u32, u32)>, extra: &[&str]) -> (Setup, Output) {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(project.path())
            .output()
            .unwrap();
        assert!(git.status.success());
        let home = tempfile::tempdir_in("/var/tmp").unwrap();
        let codex_home = home.path().join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "check_for_update_on_startup = false\n\n\
                 [analytics]\nenabled = false\n\n\
                 [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                project.path().canonicalize().unwrap().display()
            ),
        )
        .unwrap();
        let s = Setup {
            project,
            home,
            user,
        };
        // Install runs as the user who runs Codex.
        s.chown();
        let mut install = s.cordon();
        if let Some((uid, gid)) = user {
            use std::os::unix::process::CommandExt;
            install.uid(uid).gid(gid);
        }
        let o = install
            .args(["install", "codex", "--project", "--policy"])
            .arg(s.dir().join("cordon.toml"))
            .args(extra)
            .output()
            .unwrap();
        (s, o)
    }

    fn installed(user: Option<(u32, u32)>, extra: &[&str]) -> (Setup, String) {
        let (s, o) = Setup::new(user, extra);
        let out = common::stdout(&o);
        assert!(
            o.status.success() && out.contains("Codex trusts the hook"),
            "install: {out}{}",
            common::stderr(&o)
        );
        (s, out)
    }

    fn chown(&self) {
        if let Some((uid, gid)) = self.user {
            for p in [self.dir(), self.home.path()] {
                let o = Command::new("chown")
                    .arg("-R")
                    .arg(format!("{uid}:{gid}"))
                    .arg(p)
                    .output()
                    .unwrap();
                assert!(o.status.success());
            }
        }
    }

    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let home = self.home.path();
        vec![
            ("HOME", home.to_path_buf()),
            ("CODEX_HOME", home.join(".codex")),
            ("XDG_STATE_HOME", home.join(".state")),
            ("XDG_CONFIG_HOME", home.join(".config")),
            ("XDG_RUNTIME_DIR", home.join(".runtime")),
        ]
    }

    /// `cordon` in the project with this HOME; Codex for install to record its trust.
    fn cordon(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cordon"));
        c.current_dir(self.dir())
            .envs(self.env())
            .env("CORDON_CODEX", host_bin("codex"));
        c
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    /// `codex exec` against `mock` in the project, `sandbox` as `-s` (None: Codex's own
    /// default for `exec`, as the project's configuration leaves it).
    fn run_codex(&self, mock: &Mock, sandbox: Option<&str>) -> Output {
        let home = self.home.path();
        for d in [".state", ".config", ".runtime", ".codex"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::write(home.join("catalog.json"), CATALOG).unwrap();
        // The model provider: this turn's mock, in place of an earlier turn's.
        let config = home.join(".codex/config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        let kept = text
            .split(MOCK_TABLE)
            .next()
            .unwrap()
            .trim_end()
            .to_string();
        let mut f = std::fs::File::create(&config).unwrap();
        write!(
            f,
            "{kept}\n\n{MOCK_TABLE}\nname = \"mock\"\nbase_url = \"{}/v1\"\n\
             wire_api = \"responses\"\nenv_key = \"CORDON_MOCK_KEY\"\n",
            mock.base_url()
        )
        .unwrap();
        drop(f);
        self.chown();
        let mut c = Command::new(host_bin("codex"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            .args(["exec", "--skip-git-repo-check"]);
        if let Some(mode) = sandbox {
            c.args(["-s", mode]);
        }
        c.args([
            "-c",
            "model_provider=\"mock\"",
            "-c",
            "model=\"mock-model\"",
            // A catalog entry for the mock model, so that Codex offers it apply_patch.
            "-c",
            &format!(
                "model_catalog_json=\"{}\"",
                self.home.path().join("catalog.json").display()
            ),
            "run the scripted tool call",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .envs(self.env())
        .env("CORDON_MOCK_KEY", "sk-cordon-test")
        .env("CORDON_HOSTS_PROBE", "probe-value")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        wait_deadline(c.spawn().unwrap(), Duration::from_secs(240))
    }
}

/// Codex's model catalog entry for the mock model (`ModelInfo` in codex-rs
/// protocol/src/openai_models.rs): without one Codex does not offer `apply_patch` (a
/// freeform tool, which the mock answers with a `custom_tool_call`).
const CATALOG: &str = r#"{"models":[{"slug":"mock-model","display_name":"Mock","description":null,
"supported_reasoning_levels":[],"shell_type":"unified_exec","visibility":"list",
"supported_in_api":true,"priority":1,"availability_nux":null,"upgrade":null,
"base_instructions":"You are a test model.","supports_reasoning_summaries":false,
"support_verbosity":false,"default_verbosity":null,"apply_patch_tool_type":"freeform",
"truncation_policy":{"mode":"bytes","limit":10000},"supports_parallel_tool_calls":false,
"experimental_supported_tools":[]}]}"#;

/// The provider table each turn writes last in CODEX_HOME's config.
const MOCK_TABLE: &str = "[model_providers.mock]";

fn shell(line: &str) -> Turn {
    Turn {
        tool: "exec_command".into(),
        input: json!({ "cmd": line }),
    }
}

fn turn(s: &Setup, line: &str, sandbox: Option<&str>) -> String {
    let t = shell(line);
    let mock = Mock::start(t.clone());
    let o = s.run_codex(&mock, sandbox);
    mock.the_one_result("Codex", &t.tool, &o)
}

const WW: Option<&str> = Some("workspace-write");

/// The allowed scenario: output, exit code, cwd and env intact; the kernel refuses writes to
/// /etc and to HOME outside the project, and a write to /tmp never reaches the host's /tmp
/// (which Codex's sandbox alone leaves writable: cordon's private /tmp is what keeps it, so
/// this proves cordon's layer is there).
fn allow(s: &Setup, sandbox: Option<&str>) -> String {
    let probe = format!("/etc/cordon-nested-probe-{}", std::process::id());
    let tmp = format!("/tmp/cordon-nested-probe-{}", std::process::id());
    let outside = s.home.path().join("outside-probe");
    std::fs::write(
        s.dir().join("probe.sh"),
        format!(
            "echo x > {probe} || echo etc-refused\necho x > {} || echo home-refused\n\
             echo x > {tmp} || echo tmp-refused\necho uid=$(id -u)\n",
            outside.display()
        ),
    )
    .unwrap();
    let r = turn(
        s,
        "pwd; echo \"env=$CORDON_HOSTS_PROBE key=$CORDON_MOCK_KEY.\"; sh ./probe.sh; \
         echo out > made.txt; exit 3",
        sandbox,
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
    for p in [Path::new(&probe), Path::new(&tmp), &outside] {
        assert!(!p.exists(), "{} was written: unconfined", p.display());
    }
    assert_eq!(
        std::fs::read_to_string(s.dir().join("made.txt")).unwrap(),
        "out\n"
    );
    r
}

fn deny(s: &Setup, sandbox: Option<&str>) {
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(s, "touch ran-before-deny; rm -rf keep", sandbox);
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

/// Codex's file tool (`apply_patch`, executed by Codex itself, decided by cordon's hook): a
/// plain file is written; cordon's own rules file is not, and the model gets cordon's refusal.
fn file_tool(s: &Setup, sandbox: Option<&str>) {
    let patch = |name: &str| Turn {
        tool: "apply_patch".into(),
        input: serde_json::Value::String(format!(
            "*** Begin Patch\n*** Add File: {name}\n+hello\n*** End Patch\n"
        )),
    };
    let run = |t: Turn| {
        let mock = Mock::start(t.clone());
        let o = s.run_codex(&mock, sandbox);
        mock.the_one_result("Codex", &t.tool, &o)
    };
    let r = run(patch("notes.txt"));
    assert_eq!(
        std::fs::read_to_string(s.dir().join("notes.txt")).unwrap(),
        "hello\n",
        "{r}"
    );
    let r = run(patch("cordon.rules.toml"));
    let rules = s.dir().join("cordon.rules.toml");
    assert!(
        !std::fs::read_to_string(&rules).is_ok_and(|t| t.contains("hello")),
        "Codex wrote {}: {r}",
        rules.display()
    );
    assert!(r.contains("cordon: "), "not cordon's refusal: {r}");
}

fn ask(s: &Setup, sandbox: Option<&str>) {
    let r = turn(s, "touch ran-before-ask && git push", sandbox);
    assert!(!s.dir().join("ran-before-ask").exists(), "{r}");
    assert!(r.contains("publishes commits"), "{r}");
}

/// `cordon doctor`'s line for Codex in the project.
fn doctor_codex(s: &Setup) -> String {
    let o = s.cordon().arg("doctor").output().unwrap();
    let out = common::stdout(&o);
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq(["codex", "project"]))
        .unwrap_or_else(|| panic!("no codex project line in:\n{out}"))
        .to_string()
}

/// An unprivileged user, Codex's sandbox kept on (`auto`): cordon runs inside it, stacked;
/// every scenario, Codex's own file tool included.
#[test]
fn user_inside_codex_workspace_write_deny_allow_ask_file_tool() {
    let (s, out) = Setup::installed(unprivileged(), &[]);
    assert!(
        out.contains("Codex's sandbox stays on and cordon runs inside it")
            && out.contains("writable_roots"),
        "{out}"
    );
    let line = doctor_codex(&s);
    assert!(line.contains("cordon runs inside it"), "{line}");
    deny(&s, WW);
    allow(&s, WW);
    ask(&s, WW);
    file_tool(&s, WW);
}

/// The same user with `codex exec`'s own default (no `-s`).
#[test]
fn user_inside_codex_exec_default() {
    let (s, _) = Setup::installed(unprivileged(), &[]);
    allow(&s, None);
}

/// Root, `auto`: Codex's sandbox would leave cordon no capabilities, so install hands the
/// sandboxing to cordon in the project's config, says so, and doctor says Codex's is off;
/// `codex exec` with its defaults then runs what cordon allows confined by cordon.
#[test]
fn root_hands_sandboxing_to_cordon_and_every_scenario_works() {
    let (s, out) = Setup::installed(None, &[]);
    assert!(
        out.contains("sandbox_mode = \"danger-full-access\"")
            && out.contains("Codex's own sandbox is OFF"),
        "{out}"
    );
    let line = doctor_codex(&s);
    assert!(line.contains("Codex's sandbox: OFF here"), "{line}");
    deny(&s, None);
    allow(&s, None);
    ask(&s, None);
    file_tool(&s, None);
}

/// Root with Codex's sandbox forced on (`-s workspace-write` beats the project's config):
/// cordon cannot keep the protected paths there and refuses, naming Codex's setting; nothing
/// runs.
#[test]
fn root_inside_codex_workspace_write_is_refused_naming_the_setting() {
    let (s, _) = Setup::installed(None, &["--sandbox", "codex"]);
    let r = turn(&s, "touch ran-nested", WW);
    assert!(!s.dir().join("ran-nested").exists(), "{r}");
    assert!(
        r.contains("inside Codex's sandbox") && r.contains("-s danger-full-access"),
        "{r}"
    );
}

/// Install writes only its own part of the project's Codex config and uninstall takes only
/// that back: the operator's own keys stay, a sandbox_mode install did not write stays.
#[test]
fn install_and_uninstall_touch_only_their_own_codex_settings() {
    let (s, _) = Setup::installed(None, &["--sandbox", "cordon"]);
    let config = s.dir().join(".codex/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("--sandbox cordon") && text.contains("sandbox_mode = \"danger-full-access\""),
        "{text}"
    );
    // The operator adds a key of their own; switching to `codex` drops cordon's sandbox_mode
    // and adds the audit directory as a writable root; uninstall removes that again.
    std::fs::write(&config, format!("{text}\napproval_policy = \"never\"\n")).unwrap();
    let o = s
        .cordon()
        .args([
            "install",
            "codex",
            "--project",
            "--sandbox",
            "codex",
            "--policy",
        ])
        .arg(s.dir().join("cordon.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(&config).unwrap();
    let state = s.home.path().join(".state/cordon");
    assert!(!text.contains("sandbox_mode"), "{text}");
    assert!(
        text.contains(&format!("writable_roots = [\"{}\"]", state.display())),
        "{text}"
    );
    assert!(
        state.is_dir(),
        "the writable root must exist for Codex to bind it"
    );
    let o = s
        .cordon()
        .args(["uninstall", "codex", "--project", "--policy"])
        .arg(s.dir().join("cordon.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        !text.contains("writable_roots") && !text.contains("sandbox_mode"),
        "{text}"
    );
    assert!(text.contains("approval_policy = \"never\""), "{text}");
    // A sandbox_mode of the operator's own is never removed.
    std::fs::write(&config, "sandbox_mode = \"read-only\"\n").unwrap();
    let o = s
        .cordon()
        .args(["uninstall", "codex", "--project"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "sandbox_mode = \"read-only\"\n"
    );
}
