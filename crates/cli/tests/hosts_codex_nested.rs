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
use std::process::{Command, Output};

use hosts_support::scenario::{self, finish, Env, Host};
use hosts_support::{codex_config, host_bin, unprivileged, Mock, Turn};
use serde_json::json;

/// A git project trusted in Codex, HOME under /var/tmp, cordon installed.
struct Setup(Env);

/// One way of running Codex on a [`Setup`]: `sandbox` as `-s` (None: Codex's own default for
/// `exec`, as the project's configuration leaves it).
struct Nested<'a>(&'a Setup, Option<&'static str>);

impl Host for Nested<'_> {
    const SHELL: &'static str = "exec_command";
    const NAME: &'static str = "Codex";
    const SLUG: &'static str = "nested";
    const KEY: &'static str = "CORDON_MOCK_KEY";
    const EXIT_3: Option<&'static str> = Some("exited with code 3");
    /// Codex's sandbox alone leaves /tmp writable: cordon's private /tmp is what keeps it, so
    /// this proves cordon's layer is there.
    const PRIVATE_TMP: bool = true;

    fn env(&self) -> &Env {
        &self.0 .0
    }

    fn run(&self, mock: &Mock) -> Output {
        self.0.run_codex(mock, self.1)
    }

    fn shell(line: &str) -> Turn {
        Turn {
            tool: Self::SHELL.into(),
            input: json!({ "cmd": line }),
        }
    }
}

impl Setup {
    /// A git project trusted in Codex, HOME under /var/tmp, cordon installed (`extra`: more
    /// arguments to `cordon install codex`), whatever install's outcome.
    fn new(user: Option<(u32, u32)>, extra: &[&str]) -> (Setup, Output) {
        let e = Env::with_home(user, tempfile::tempdir_in("/var/tmp").unwrap());
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(e.dir())
            .output()
            .unwrap();
        assert!(git.status.success());
        let codex_home = e.home().join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(codex_home.join("config.toml"), codex_config(e.dir())).unwrap();
        let s = Setup(e);
        // Install runs as the user who runs Codex.
        s.0.give();
        let mut install = s.cordon();
        if let Some((uid, gid)) = user {
            use std::os::unix::process::CommandExt;
            install.uid(uid).gid(gid);
        }
        let o = install
            .args(["install", "codex", "--project", "--policy"])
            .arg(s.0.policy())
            .args(extra)
            .output()
            .unwrap();
        (s, o)
    }

    /// As [`Setup::new`]; install must succeed and report Codex's trust.
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

    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let home = self.0.home();
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
        self.0.dir()
    }

    /// `codex exec` against `mock` in the project, `sandbox` as `-s` (None: Codex's own
    /// default for `exec`, as the project's configuration leaves it).
    fn run_codex(&self, mock: &Mock, sandbox: Option<&str>) -> Output {
        let home = self.0.home();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
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
        let mut c = self.0.host("codex");
        c.args(["exec", "--skip-git-repo-check"]);
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
                home.join("catalog.json").display()
            ),
            "run the scripted tool call",
        ])
        .env("CODEX_HOME", home.join(".codex"))
        .env("CORDON_MOCK_KEY", "sk-cordon-test");
        finish(c)
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

fn turn(s: &Setup, line: &str, sandbox: Option<&'static str>) -> String {
    scenario::turn(&Nested(s, sandbox), Nested::shell(line))
}

const WW: Option<&'static str> = Some("workspace-write");

fn allow(s: &Setup, sandbox: Option<&'static str>) {
    scenario::allow(&Nested(s, sandbox));
}

fn deny(s: &Setup, sandbox: Option<&'static str>) {
    scenario::deny(&Nested(s, sandbox));
}

/// Codex's file tool (`apply_patch`, executed by Codex itself, decided by cordon's hook): a
/// plain file is written; cordon's own rules file is not, and the model gets cordon's refusal.
fn file_tool(s: &Setup, sandbox: Option<&'static str>) {
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

fn ask(s: &Setup, sandbox: Option<&'static str>) {
    scenario::ask(&Nested(s, sandbox));
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

/// Issue 21 (round 8): what Codex runs without cordon — its hook skipped, as for a call whose
/// hook timed out, a user's `!` command or an MCP server — runs in Codex's sandbox with the
/// writable roots install added. None of them may hold state cordon trusts elsewhere: the
/// hook's audit log and the scans' markers and listings beside it (which every later run acts
/// on: a marker deleted is a dead run never scanned). Only the state apart, where the runs
/// Codex starts record, is writable there; the hook's log stays intact.
#[test]
fn what_codex_runs_without_cordon_cannot_write_cordons_state() {
    let (s, _) = Setup::installed(unprivileged(), &[]);
    let state = s.0.home().join(".state/cordon");
    // A hooked run first: the hook records in the log, the run it rewrote in the state apart,
    // which cordon keeps from the command it runs (in a script: only the sandbox stops it).
    std::fs::write(
        s.dir().join("hooked.sh"),
        format!(
            "echo hooked-ran\necho x > {} || echo hooked-refused-apart\n",
            state.join("codex/from-hooked").display()
        ),
    )
    .unwrap();
    let r = turn(&s, "sh ./hooked.sh", WW);
    assert!(
        r.contains("hooked-ran") && r.contains("hooked-refused-apart"),
        "{r}"
    );
    assert!(!state.join("codex/from-hooked").exists(), "{r}");
    let records = |log: &Path| std::fs::read_to_string(log).unwrap_or_default();
    let (main, apart) = (state.join("audit.jsonl"), state.join("codex/audit.jsonl"));
    assert!(
        records(&main).contains("hooked.sh"),
        "the hook's record: {main:?}"
    );
    assert!(
        records(&apart).contains("hooked.sh"),
        "the run's record: {apart:?}"
    );
    let before = records(&main);
    // Codex skips the hook now: the call runs in Codex's sandbox alone.
    std::fs::remove_file(s.dir().join(".codex/hooks.json")).unwrap();
    let mut script = String::new();
    for f in ["audit.jsonl", "scans/forged", "forged"] {
        let p = state.join(f);
        script.push_str(&format!(
            "echo forged >> {p} && echo 'wrote {f}' || echo 'refused {f}'\n",
            p = p.display()
        ));
    }
    script.push_str(&format!(
        "echo x > {} && echo wrote-apart\n",
        state.join("codex/probe").display()
    ));
    std::fs::write(s.dir().join("forge.sh"), script).unwrap();
    let r = turn(&s, "sh ./forge.sh", WW);
    // The write apart proves the command ran, in Codex's sandbox with install's root.
    assert!(r.contains("wrote-apart"), "{r}");
    for f in ["audit.jsonl", "scans/forged", "forged"] {
        assert!(r.contains(&format!("refused {f}")), "{f}: {r}");
    }
    assert_eq!(records(&main), before);
    assert!(!state.join("scans/forged").exists() && !state.join("forged").exists());
    let o = s
        .cordon()
        .args(["audit", "verify"])
        .arg(&main)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        common::stdout(&o),
        common::stderr(&o)
    );
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
    let state = s.0.home().join(".state/cordon/codex");
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

/// Round 12: cordon's state apart in the home gone (a fresh home's first run after the state
/// was cleared, or an install whose directory was removed since). Codex's sandbox leaves the
/// log's directory read-only, so the run Codex starts cannot make it: the hook, which runs
/// outside Codex's sandbox, makes it before it answers, and the first call runs.
#[test]
fn user_first_call_runs_when_the_state_apart_is_missing() {
    let (s, _) = Setup::installed(unprivileged(), &[]);
    let state = s.0.home().join(".state/cordon");
    std::fs::remove_dir_all(&state).unwrap();
    let r = turn(&s, "echo first-call-ran", WW);
    assert!(r.contains("first-call-ran"), "{r}");
    assert!(state.join("codex/audit.jsonl").is_file(), "{r}");
}
