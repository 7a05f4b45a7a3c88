//! Codex CLI for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install codex` and driven by the project's mock model server (Responses API).
//!
//! Codex runs a project's hooks only in a trusted project and only once the hook itself is
//! trusted (the record its `/hooks` review writes): `cordon install codex` records that trust
//! through Codex itself, and these tests run Codex without any bypass flag. The project is
//! trusted in Codex's config; Codex's own sandbox is off (`-s danger-full-access`): cordon
//! confines what it allows. Without the trust record Codex skips the hook silently; `cordon
//! doctor` says so, from Codex's own report.

mod common;
mod hosts_support;

use std::fmt::Write;
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
    /// Project trusted in Codex, cordon installed; `codex`: the program `install` may use to
    /// record Codex's trust (None: a path that does not exist).
    fn new(user: Option<(u32, u32)>, codex: Option<&Path>) -> (Setup, Output) {
        Setup::with_binary(user, codex, Path::new(env!("CARGO_BIN_EXE_cordon")))
    }

    /// As [`Setup::new`], installed by the cordon binary `bin`.
    fn with_binary(user: Option<(u32, u32)>, codex: Option<&Path>, bin: &Path) -> (Setup, Output) {
        Setup::with_args(user, codex, bin, &[])
    }

    /// As [`Setup::with_binary`], with `extra` arguments to `cordon install codex`.
    fn with_args(
        user: Option<(u32, u32)>,
        codex: Option<&Path>,
        bin: &Path,
        extra: &[&str],
    ) -> (Setup, Output) {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        let home = tempfile::tempdir().unwrap();
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
        let install = s.cordon(codex);
        let o = Command::new(bin)
            .current_dir(s.dir())
            .envs(install.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .args(["install", "codex", "--project", "--policy"])
            .arg(s.dir().join("cordon.toml"))
            .args(extra)
            .output()
            .unwrap();
        (s, o)
    }

    /// Set up with cordon's hook trusted in Codex by `cordon install codex`.
    fn trusted(user: Option<(u32, u32)>) -> Setup {
        let (s, o) = Setup::new(user, Some(&host_bin("codex")));
        assert!(
            o.status.success(),
            "install: {}{}",
            common::stdout(&o),
            common::stderr(&o)
        );
        assert!(
            common::stdout(&o).contains("Codex trusts the hook"),
            "{}",
            common::stdout(&o)
        );
        s
    }

    /// `cordon` in the project with this HOME and CODEX_HOME; `codex` as CORDON_CODEX.
    fn cordon(&self, codex: Option<&Path>) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cordon"));
        c.current_dir(self.dir())
            .env("HOME", self.home.path())
            .env("CODEX_HOME", self.home.path().join(".codex"))
            .env(
                "CORDON_CODEX",
                codex.map_or_else(|| self.dir().join("no-codex"), Path::to_path_buf),
            );
        c
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    /// `codex exec` against `mock` in the project, no trust bypassed.
    fn run_codex(&self, mock: &Mock) -> Output {
        self.run_codex_with(mock, &[])
    }

    /// As [`Setup::run_codex`], with `extra` arguments before the prompt.
    fn run_codex_with(&self, mock: &Mock, extra: &[&str]) -> Output {
        let home = self.home.path();
        let codex_home = home.join(".codex");
        for d in [".state", ".config", ".runtime", ".codex"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        // The model provider: appended to the config Codex and install wrote (in place of
        // the one an earlier run of this setup appended, which is last).
        let file = codex_home.join("config.toml");
        let mut text = std::fs::read_to_string(&file).unwrap();
        if let Some(i) = text.find("\n[model_providers.mock]") {
            text.truncate(i);
        }
        write!(
            text,
            "\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\n\
             wire_api = \"responses\"\nenv_key = \"CORDON_MOCK_KEY\"\n",
            mock.base_url()
        )
        .unwrap();
        std::fs::write(&file, text).unwrap();
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
            // The mock (its provider table is appended above; a provider named before its
            // table exists makes Codex's config fail to load, hooks included).
            "-c",
            "model_provider=\"mock\"",
            "-c",
            "model=\"mock-model\"",
        ]);
        c.args(extra)
            .arg("run the scripted tool call")
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
fn turn(s: &Setup, line: &str) -> String {
    let t = shell(line);
    let mock = Mock::start(t.clone());
    let o = s.run_codex(&mock);
    mock.the_one_result("Codex", &t.tool, &o)
}

#[test]
fn codex_deny_reaches_the_model_and_nothing_runs() {
    let s = Setup::trusted(None);
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "touch ran-before-deny; rm -rf keep");
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir());
    assert!(!s.dir().join("ran-before-deny").exists(), "{r}");
}

#[test]
fn codex_allow_runs_confined_with_output_exit_cwd_env_intact() {
    allow(Setup::trusted(None));
}

#[test]
fn codex_allow_as_an_unprivileged_user() {
    allow(Setup::trusted(unprivileged()));
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

/// `cordon doctor`'s line for Codex in the project, with `codex` to ask.
fn doctor_codex(s: &Setup, codex: Option<&Path>) -> String {
    let o = s.cordon(codex).arg("doctor").output().unwrap();
    let out = common::stdout(&o);
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq(["codex", "project"]))
        .unwrap_or_else(|| panic!("no codex project line in:\n{out}"))
        .to_string()
}

#[test]
fn doctor_reports_what_codex_reports_of_the_trust() {
    let s = Setup::trusted(None);
    let line = doctor_codex(&s, Some(&host_bin("codex")));
    assert!(line.contains("loaded: Codex trusts it"), "{line}");
    // Without a codex to ask, doctor says it does not know, never "loaded".
    let line = doctor_codex(&s, None);
    assert!(
        line.contains("UNKNOWN") && !line.contains("loaded"),
        "{line}"
    );
}

/// Without the trust record (no `codex` for install to ask): install fails naming the step,
/// doctor reports what Codex will do, and Codex indeed skips the hook, silently.
#[test]
fn codex_untrusted_hook_install_fails_doctor_says_so_and_codex_skips_it() {
    let (s, o) = Setup::new(None, None);
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert!(
        common::stderr(&o).contains("open /hooks in Codex"),
        "{}",
        common::stderr(&o)
    );
    let line = doctor_codex(&s, Some(&host_bin("codex")));
    assert!(
        line.contains("present but NOT RUN: Codex reports it untrusted"),
        "{line}"
    );
    // cordon would ask (`git push`): Codex runs it without asking anyone.
    let r = turn(&s, "touch ran-unhooked && git push");
    assert!(s.dir().join("ran-unhooked").exists(), "{r}");
    assert!(!r.contains("cordon"), "{r}");
}

/// With the cordon binary gone after install (hook trusted), the call is blocked.
#[test]
fn codex_missing_cordon_binary_blocks() {
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("cordon");
    std::fs::copy(env!("CARGO_BIN_EXE_cordon"), &copy).unwrap();
    let (s, o) = Setup::with_binary(None, Some(&host_bin("codex")), &copy);
    assert!(o.status.success(), "install: {}", common::stderr(&o));
    std::fs::remove_file(&copy).unwrap();
    let r = turn(&s, "touch ran-without-cordon");
    assert!(!s.dir().join("ran-without-cordon").exists(), "{r}");
    assert!(r.contains("the call is blocked"), "{r}");
}

/// An ask: the host cannot ask through the hook, so the call is blocked with cordon's reason
/// and how a person runs it.
#[test]
fn codex_ask_is_blocked_with_its_reason() {
    let s = Setup::trusted(None);
    let r = turn(&s, "touch ran-before-ask && git push");
    assert!(!s.dir().join("ran-before-ask").exists(), "{r}");
    assert!(r.contains("publishes commits"), "{r}");
}

/// A decision that cannot be made in time (the audit log's lock held): the hook blocks the
/// call when its deadline passes, with a reason saying so, long before Codex's hook timeout
/// (30 s as install sets it), after which Codex would run it.
#[test]
fn codex_hook_deadline_blocks_an_undecided_call() {
    let (s, o) = Setup::with_args(
        None,
        Some(&host_bin("codex")),
        Path::new(env!("CARGO_BIN_EXE_cordon")),
        &["--deadline", "2s"],
    );
    assert!(o.status.success(), "install: {}", common::stderr(&o));
    let (_log, _lock) = hosts_support::audit_lock_held(&s.dir().join("cordon.toml"));
    let r = turn(&s, "touch ran-after-deadline");
    assert!(!s.dir().join("ran-after-deadline").exists(), "{r}");
    assert!(
        r.contains("no decision within the hook's 2 s deadline") && r.contains("audit log's lock"),
        "{r}"
    );
}

/// Codex's own file tool, `apply_patch` (offered as a freeform tool to Codex's own models:
/// the mock answers as `gpt-5.5`): a patch inside the project is applied; one naming a file
/// outside the project's roots is denied by cordon and nothing is written, including with the
/// header indented (issue 21: Codex trims a header line, so ` *** Add File: /x` adds `/x`).
#[test]
fn codex_apply_patch_inside_applies_outside_is_denied() {
    apply_patch(Setup::trusted(None));
}

#[test]
fn codex_apply_patch_as_an_unprivileged_user() {
    apply_patch(Setup::trusted(unprivileged()));
}

fn apply_patch(s: Setup) {
    let patch = |header: &str, path: &Path| {
        let t = Turn {
            tool: "apply_patch".into(),
            input: json!(format!(
                "*** Begin Patch\n{header}{}\n+hi\n*** End Patch\n",
                path.display()
            )),
        };
        let mock = Mock::start(t.clone());
        let o = s.run_codex_with(&mock, &["-c", "model=\"gpt-5.5\""]);
        mock.the_one_result("Codex", &t.tool, &o)
    };
    let inside = s.dir().join("inside.txt");
    let r = patch("*** Add File: ", &inside);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "hi\n", "{r}");

    let outside = s.home.path().join("outside.txt");
    let r = patch("*** Add File: ", &outside);
    assert!(!outside.exists(), "Codex wrote {}: {r}", outside.display());
    assert!(
        r.contains("cordon: denied") && r.contains("outside every root"),
        "not cordon's refusal: {r}"
    );

    let r = patch(" *** Add File: ", &outside);
    assert!(!outside.exists(), "Codex wrote {}: {r}", outside.display());
    assert!(
        r.contains("cordon: denied") && r.contains("outside every root"),
        "not cordon's refusal: {r}"
    );
}
