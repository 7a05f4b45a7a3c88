//! Gemini CLI for real (the version pinned in `scripts/test-deps.sh`), wired by
//! `cordon install gemini --user` and driven by the project's mock model server (Gemini API).
//!
//! Gemini CLI runs project hooks only in a folder it trusts (`~/.gemini/trustedFolders.json`),
//! and `--skip-trust` ignores them; user-level hooks (`~/.gemini/settings.json`) are what most
//! of these tests install. The folder is trusted so that `--yolo` is honoured: Gemini CLI's own
//! approval is off and cordon's hook is the gate. `gemini_untrusted_folder_…` shows the
//! project's hook skipped in an untrusted folder, doctor saying so, and `cordon install gemini`
//! then wiring the user's settings.

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
        Setup::build(user, bin, true, &["--user"])
    }

    /// A project with the policy, a HOME with the operator's Gemini settings; the folder
    /// trusted in Gemini's trust file when `trusted`; `cordon install gemini ARGS --policy
    /// cordon.toml` run by `bin` (it must succeed).
    fn build(user: Option<(u32, u32)>, bin: &Path, trusted: bool, args: &[&str]) -> Setup {
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
        if trusted {
            std::fs::write(
                gemini.join("trustedFolders.json"),
                json!({ canon.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
            )
            .unwrap();
        }
        let s = Setup {
            project,
            home,
            user,
        };
        let o = s.cordon(bin, &[&["install", "gemini"], args].concat());
        assert!(o.status.success(), "install: {}", common::stderr(&o));
        s
    }

    /// `bin ARGS [--policy cordon.toml]` (the policy for install) in the project, this HOME.
    fn cordon(&self, bin: &Path, args: &[&str]) -> Output {
        let mut c = Command::new(bin);
        c.current_dir(self.dir())
            .env("HOME", self.home.path())
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
            .args(args);
        if args[0] == "install" {
            c.arg("--policy").arg(self.dir().join("cordon.toml"));
        }
        c.output().unwrap()
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    /// Gemini CLI headless with `--yolo` and `extra` arguments.
    fn run_gemini_with(&self, mock: &Mock, extra: &[&str]) -> Output {
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
            .args(extra)
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
    turn_with(s, shell(line), &[])
}

fn shell(line: &str) -> Turn {
    Turn {
        tool: "run_shell_command".into(),
        input: json!({ "command": line }),
    }
}

/// One scripted call of `t` by Gemini CLI run with `extra` arguments: the one tool result.
fn turn_with(s: &Setup, t: Turn, extra: &[&str]) -> String {
    let mock = Mock::start(t.clone());
    let o = s.run_gemini_with(&mock, extra);
    mock.the_one_result("Gemini CLI", &t.tool, &o)
}

/// `cordon doctor`'s gemini-cli line for `scope`.
fn doctor_line(s: &Setup, scope: &str) -> String {
    let o = s.cordon(Path::new(env!("CARGO_BIN_EXE_cordon")), &["doctor"]);
    let out = common::stdout(&o);
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq(["gemini-cli", scope]))
        .unwrap_or_else(|| panic!("no gemini-cli {scope} line in:\n{out}"))
        .to_string()
}

/// In a folder Gemini CLI does not trust, the project's hook is skipped: headless Gemini
/// refuses to start there, and `--skip-trust` (what its error message recommends) runs
/// without the project's settings, so a line cordon denies runs. Doctor says the hook is not
/// loaded and why; `cordon install gemini` then wires the user's settings, and the same line
/// is denied under `--skip-trust`.
#[test]
fn gemini_untrusted_folder_skips_the_project_hook_doctor_says_so_install_wires_the_user() {
    untrusted_folder(None);
}

#[test]
fn gemini_untrusted_folder_as_an_unprivileged_user() {
    untrusted_folder(unprivileged());
}

fn untrusted_folder(user: Option<(u32, u32)>) {
    let cordon = Path::new(env!("CARGO_BIN_EXE_cordon"));
    let s = Setup::build(user, cordon, false, &["--user"]);
    // Start over: only the project's hook, as `--project` writes it (install fails, saying why).
    let o = s.cordon(cordon, &["uninstall", "gemini", "--user"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = s.cordon(cordon, &["install", "gemini", "--project"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        common::stderr(&o).contains("Gemini CLI will not run it: it does not trust this folder"),
        "{}",
        common::stderr(&o)
    );
    let line = doctor_line(&s, "project");
    assert!(line.contains("present but NOT LOADED"), "{line}");
    assert!(line.contains("`--skip-trust` runs WITHOUT them"), "{line}");
    assert!(doctor_line(&s, "user").contains("not wired"));

    // What doctor said, for real: the denied line runs.
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn_with(&s, shell("rm -rf keep"), &["--skip-trust"]);
    assert!(
        !s.dir().join("keep").exists(),
        "Gemini CLI ran its project hook: {r}"
    );

    // A plain install: the user's settings, which Gemini CLI loads in an untrusted folder too.
    let o = s.cordon(cordon, &["install", "gemini"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("installs in your user settings"),
        "{}",
        common::stdout(&o)
    );
    assert!(doctor_line(&s, "user").contains("loaded: Gemini CLI reads user settings"));
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn_with(&s, shell("rm -rf keep"), &["--skip-trust"]);
    assert!(r.contains("destroys files"), "{r}");
    assert!(s.dir().join("keep").is_dir(), "{r}");
}

/// A decision that cannot be made in time (the audit log's lock held): the hook blocks the
/// call when its deadline passes, with a reason saying so, long before Gemini CLI's timeout
/// (which would run it).
#[test]
fn gemini_hook_deadline_blocks_an_undecided_call() {
    let s = Setup::build(
        None,
        Path::new(env!("CARGO_BIN_EXE_cordon")),
        true,
        &["--user", "--deadline", "2s"],
    );
    let (_log, _lock) = hosts_support::audit_lock_held(&s.dir().join("cordon.toml"));
    let r = turn(&s, "touch ran-after-deadline");
    assert!(!s.dir().join("ran-after-deadline").exists(), "{r}");
    assert!(
        r.contains("no decision within the hook's 2 s deadline") && r.contains("audit log's lock"),
        "{r}"
    );
}

/// Gemini CLI's file tools: `write_file` and `replace` in the project happen; onto the
/// persistence surface (cordon's remembered rules) they are refused by cordon, and the file
/// stays as it was.
#[test]
fn gemini_file_tools_write_file_and_replace() {
    let s = Setup::new(None);
    let write = |path: &Path, content: &str| {
        turn_with(
            &s,
            Turn {
                tool: "write_file".into(),
                input: json!({ "file_path": path, "content": content }),
            },
            &[],
        )
    };
    let replace = |path: &Path, old: &str, new: &str| {
        turn_with(
            &s,
            Turn {
                tool: "replace".into(),
                input: json!({ "file_path": path, "old_string": old, "new_string": new,
                               "instruction": "change it" }),
            },
            &[],
        )
    };
    let notes = s.dir().join("notes.txt");
    let r = write(&notes, "one\n");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one\n", "{r}");
    let r = replace(&notes, "one", "two");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "two\n", "{r}");

    let rules = s.dir().join("cordon.rules.toml");
    let r = write(&rules, "version = 1\n");
    assert!(!rules.exists(), "Gemini CLI wrote {}: {r}", rules.display());
    assert!(r.contains("cordon: "), "not cordon's refusal: {r}");

    // An existing one edited in place. (A path outside the project is refused by Gemini CLI
    // itself, "Path not in workspace", before any hook: it proves nothing about cordon.)
    std::fs::write(&rules, "version = 1\n").unwrap();
    let r = replace(&rules, "version = 1", "version = 2");
    assert_eq!(
        std::fs::read_to_string(&rules).unwrap(),
        "version = 1\n",
        "{r}"
    );
    assert!(r.contains("cordon: "), "not cordon's refusal: {r}");
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

/// Gemini CLI's `hooksConfig.disabled` naming `cordon` (the hook's name) switches cordon's hook
/// off: doctor says it is not run, and Gemini CLI indeed runs a line cordon denies.
#[test]
fn gemini_disabled_hook_doctor_says_not_run_and_the_host_skips_it() {
    let s = Setup::new(None);
    let file = s.home.path().join(".gemini/settings.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["hooksConfig"] = json!({ "disabled": ["cordon"] });
    std::fs::write(&file, v.to_string()).unwrap();
    let line = doctor_line(&s, "user");
    assert!(
        line.contains("NOT RUN: hooksConfig.disabled in") && line.contains("names `cordon`"),
        "{line}"
    );
    std::fs::create_dir(s.dir().join("keep")).unwrap();
    let r = turn(&s, "rm -rf keep");
    assert!(
        !s.dir().join("keep").exists(),
        "Gemini CLI ran cordon's hook: {r}"
    );
}
