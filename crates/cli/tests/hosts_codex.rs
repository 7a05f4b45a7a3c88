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
use std::process::Output;

use hosts_support::scenario::{self, finish, installed_ok, Env, Host, Install};
use hosts_support::{codex_config, host_bin, unprivileged, Mock, Turn};
use serde_json::{json, Value};

/// Codex with its CODEX_HOME in HOME, the project trusted in Codex's config, cordon installed
/// in the project.
struct Codex(Env);

impl Host for Codex {
    const SHELL: &'static str = "exec_command";
    const NAME: &'static str = "Codex";
    const SLUG: &'static str = "codex";
    const KEY: &'static str = "CORDON_MOCK_KEY";
    const EXIT_3: Option<&'static str> = Some("exited with code 3");

    fn env(&self) -> &Env {
        &self.0
    }

    fn run(&self, mock: &Mock) -> Output {
        self.run_with(mock, &[])
    }

    fn shell(line: &str) -> Turn {
        Turn {
            tool: Self::SHELL.into(),
            input: json!({ "cmd": line }),
        }
    }
}

impl Install for Codex {
    /// Installed with `codex` on hand to record Codex's trust in the hook: install must say
    /// that Codex trusts it.
    fn installed(user: Option<(u32, u32)>, bin: &Path, extra: &[&str]) -> Codex {
        let (s, o) = Codex::install(user, Some(&host_bin("codex")), bin, extra);
        let o = installed_ok(o);
        assert!(
            common::stdout(&o).contains("Codex trusts the hook"),
            "{}",
            common::stdout(&o)
        );
        s
    }
}

impl Codex {
    /// The project trusted in Codex, then `cordon install codex --project --policy
    /// cordon.toml EXTRA` by `bin`, whatever its outcome; `codex`: the program install may use
    /// to record Codex's trust (None: a path that does not exist).
    fn install(
        user: Option<(u32, u32)>,
        codex: Option<&Path>,
        bin: &Path,
        extra: &[&str],
    ) -> (Codex, Output) {
        let e = Env::new(user);
        let codex_home = e.home().join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(codex_home.join("config.toml"), codex_config(e.dir())).unwrap();
        let s = Codex(e);
        let o = s
            .cordon(bin, codex)
            .args(["install", "codex", "--project", "--policy"])
            .arg(s.0.policy())
            .args(extra)
            .output()
            .unwrap();
        (s, o)
    }

    /// The cordon binary `bin` in the project with this HOME and CODEX_HOME; `codex` as
    /// CORDON_CODEX.
    fn cordon(&self, bin: &Path, codex: Option<&Path>) -> std::process::Command {
        let mut c = self.0.cordon(bin);
        c.env("CODEX_HOME", self.0.home().join(".codex")).env(
            "CORDON_CODEX",
            codex.map_or_else(|| self.0.dir().join("no-codex"), Path::to_path_buf),
        );
        c
    }

    /// `codex exec` against `mock` in the project, no trust bypassed, Codex's own sandbox off
    /// (`-s danger-full-access`), `extra` arguments before the prompt.
    fn run_with(&self, mock: &Mock, extra: &[&str]) -> Output {
        let codex_home = self.0.home().join(".codex");
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
        let mut c = self.0.host("codex");
        c.args([
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
        ])
        .args(extra)
        .arg("run the scripted tool call")
        .env("CODEX_HOME", &codex_home)
        .env("CORDON_MOCK_KEY", "sk-cordon-test");
        finish(c)
    }
}

/// One scripted shell turn: the one tool result that came back to the model.
fn turn(s: &Codex, line: &str) -> String {
    scenario::turn(s, Codex::shell(line))
}

#[test]
fn codex_deny_reaches_the_model_and_nothing_runs() {
    scenario::deny(&Codex::new(None));
}

#[test]
fn codex_allow_runs_confined_with_output_exit_cwd_env_intact() {
    scenario::allow(&Codex::new(None));
}

#[test]
fn codex_allow_as_an_unprivileged_user() {
    scenario::allow(&Codex::new(unprivileged()));
}

/// `cordon doctor`'s line for Codex in the project, with `codex` to ask.
fn doctor_codex(s: &Codex, codex: Option<&Path>) -> String {
    let o = s
        .cordon(Path::new(env!("CARGO_BIN_EXE_cordon")), codex)
        .arg("doctor")
        .output()
        .unwrap();
    let out = common::stdout(&o);
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq(["codex", "project"]))
        .unwrap_or_else(|| panic!("no codex project line in:\n{out}"))
        .to_string()
}

#[test]
fn doctor_reports_what_codex_reports_of_the_trust() {
    let s = Codex::new(None);
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
    let (s, o) = Codex::install(None, None, Path::new(env!("CARGO_BIN_EXE_cordon")), &[]);
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
    assert!(s.0.dir().join("ran-unhooked").exists(), "{r}");
    assert!(!r.contains("cordon"), "{r}");
}

/// With the cordon binary gone after install (hook trusted), the call is blocked.
#[test]
fn codex_missing_cordon_binary_blocks() {
    scenario::missing_binary::<Codex>();
}

/// An ask: the host cannot ask through the hook, so the call is blocked with cordon's reason.
#[test]
fn codex_ask_is_blocked_with_its_reason() {
    scenario::ask(&Codex::new(None));
}

/// Codex's hook timeout is 30 s as install sets it.
#[test]
fn codex_hook_deadline_blocks_an_undecided_call() {
    scenario::deadline::<Codex>();
}

/// Codex's own file tool, `apply_patch` (offered as a freeform tool to Codex's own models:
/// the mock answers as `gpt-5.5`): a patch inside the project is applied; one naming a file
/// outside the project's roots is denied by cordon and nothing is written, including with the
/// header indented (issue 21: Codex trims a header line, so ` *** Add File: /x` adds `/x`).
#[test]
fn codex_apply_patch_inside_applies_outside_is_denied() {
    apply_patch(Codex::new(None));
}

#[test]
fn codex_apply_patch_as_an_unprivileged_user() {
    apply_patch(Codex::new(unprivileged()));
}

fn apply_patch(s: Codex) {
    let patch = |header: &str, path: &Path| {
        let t = Turn {
            tool: "apply_patch".into(),
            input: json!(format!(
                "*** Begin Patch\n{header}{}\n+hi\n*** End Patch\n",
                path.display()
            )),
        };
        let mock = Mock::start(t.clone());
        let o = s.run_with(&mock, &["-c", "model=\"gpt-5.5\""]);
        mock.the_one_result("Codex", &t.tool, &o)
    };
    let inside = s.0.dir().join("inside.txt");
    let r = patch("*** Add File: ", &inside);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "hi\n", "{r}");

    let outside = s.0.home().join("outside.txt");
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

/// Issue 21 class 5 (round 10): Codex applies a patch given to `exec_command` as
/// `apply_patch <<'EOF' … EOF` itself, in place of running it (seen: with no hook, Codex 0.171
/// added a file in the home this way). Behind cordon's hook the line is rewritten to `cordon
/// exec …` before Codex looks at it, so Codex never takes it for a patch: bash runs it
/// confined, finds no `apply_patch`, and nothing outside the roots is written. Guards the
/// rewrite: a line let through unchanged would be applied by Codex, unconfined.
#[test]
fn codex_apply_patch_in_an_exec_command_heredoc_is_not_applied_by_codex() {
    // As root and as the unprivileged user (round 11: seconds each).
    for user in [None, unprivileged()] {
        let s = Codex::new(user);
        let outside = s.0.home().join("planted-by-heredoc.txt");
        let t = Codex::shell(&format!(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {}\n+hi\n*** End Patch\nEOF\n",
            outside.display()
        ));
        let mock = Mock::start(t.clone());
        let o = s.run_with(&mock, &["-c", "model=\"gpt-5.5\""]);
        let r = mock.the_one_result("Codex", &t.tool, &o);
        assert!(!outside.exists(), "Codex wrote {}: {r}", outside.display());
        assert!(r.contains("apply_patch: command not found"), "{r}");
    }
}

/// Issue 21 class 5 (round 8): Codex's newer releases resolve a patch path `~/x` from the
/// home; Codex 0.171 takes `~` as a name in the cwd. cordon decides both readings, so a patch
/// adding `~/x` is refused as outside every root, and Codex writes neither file.
#[test]
fn codex_apply_patch_under_tilde_is_refused_as_the_homes_file() {
    let s = Codex::new(None);
    let t = Turn {
        tool: "apply_patch".into(),
        input: json!("*** Begin Patch\n*** Add File: ~/planted-by-tilde.txt\n+hi\n*** End Patch\n"),
    };
    let mock = Mock::start(t.clone());
    let o = s.run_with(&mock, &["-c", "model=\"gpt-5.5\""]);
    let r = mock.the_one_result("Codex", &t.tool, &o);
    for written in [
        s.0.home().join("planted-by-tilde.txt"),
        s.0.dir().join("~/planted-by-tilde.txt"),
    ] {
        assert!(!written.exists(), "Codex wrote {}: {r}", written.display());
    }
    assert!(
        r.contains("cordon: denied") && r.contains("outside every root"),
        "not cordon's refusal: {r}"
    );
}

/// Issue 21 class 5 (round 9): Codex's `write_stdin` types into a session `exec_command` left
/// running, and Codex runs no hook for it; cordon decided the command line, not the keys. So
/// the command reads nothing. On a terminal (`tty: true`): `less a.txt` (allowed) gets
/// `!rm -rf keep` (which the policy denies), which less ran before cordon gave it nothing to
/// read (seen). On pipes: `tee got` would copy what is typed; Codex 0.171 itself gives a
/// session without a terminal a closed stdin (seen with the old cordon too), so that case
/// guards a Codex that would not.
#[test]
fn codex_write_stdin_reaches_no_command_cordon_decided() {
    for (tty, cmd, keys) in [
        (true, "less a.txt", "!rm -rf keep; touch typed\nq"),
        (false, "tee got", "touch typed\n"),
    ] {
        let s = Codex::new(None);
        std::fs::create_dir(s.0.dir().join("keep")).unwrap();
        std::fs::write(s.0.dir().join("a.txt"), "a\n").unwrap();
        let steps: Vec<hosts_support::Step> = vec![
            Box::new(move |_: &Value, _: &[String]| {
                Some(Turn {
                    tool: "exec_command".into(),
                    input: json!({ "cmd": cmd, "tty": tty, "yield_time_ms": 3000 }),
                })
            }),
            // To the session the first call left running (its output names it), else to one
            // that does not exist: Codex answers that to the model and nothing is typed.
            Box::new(move |_: &Value, results: &[String]| {
                let id = results[0]
                    .split("session ID ")
                    .nth(1)
                    .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(1);
                Some(Turn {
                    tool: "write_stdin".into(),
                    input: json!({ "session_id": id, "chars": keys, "yield_time_ms": 3000 }),
                })
            }),
        ];
        let mock = Mock::chain(steps);
        let o = s.run(&mock);
        let results = mock.tool_results();
        let shown = format!(
            "{cmd}: results: {results:?}\nstdout: {}\nstderr: {}",
            common::stdout(&o),
            common::stderr(&o)
        );
        // Both calls reached Codex's tools, the first one through cordon (its run wrote the
        // hook's record): the test is void if the keys were never sent.
        assert_eq!(results.len(), 2, "{shown}");
        assert!(!results[0].contains("cordon: "), "{shown}");
        let got = std::fs::read_to_string(s.0.dir().join("got")).unwrap_or_default();
        assert!(
            !s.0.dir().join("typed").exists() && s.0.dir().join("keep").exists() && got.is_empty(),
            "what Codex typed into `{cmd}` reached it: {shown}"
        );
    }
}

/// Issue 21 class 5 (round 9): Codex offers `multi_agent_v1` (`spawn_agent`, `send_input`,
/// `wait_agent`, …); a sub-agent it spawns runs its own `exec_command`, which comes to the
/// hook too and is decided: `rm -rf keep` is denied and nothing of the line runs.
#[test]
fn codex_a_subagents_calls_are_decided_too() {
    const TASK: &str = "cordon-subagent-task";
    let s = Codex::new(None);
    std::fs::create_dir(s.0.dir().join("keep")).unwrap();
    // The sub-agent's conversation: its task is a user message (the parent's holds it only
    // in its own spawn_agent call).
    let sub = |req: &Value| {
        req["input"].as_array().into_iter().flatten().any(|i| {
            i["type"] == "message" && i["role"] == "user" && i["content"].to_string().contains(TASK)
        })
    };
    let steps: Vec<hosts_support::Step> = vec![
        Box::new(move |req: &Value, _: &[String]| {
            Some(if sub(req) {
                Codex::shell("touch sub-ran; rm -rf keep")
            } else {
                Turn {
                    tool: "multi_agent_v1/spawn_agent".into(),
                    input: json!({ "message": TASK }),
                }
            })
        }),
        // The parent waits for the agent it spawned (its id is in the result).
        Box::new(move |req: &Value, results: &[String]| {
            let id = serde_json::from_str::<Value>(&results[0]).ok()?["agent_id"]
                .as_str()?
                .to_string();
            (!sub(req)).then(|| Turn {
                tool: "multi_agent_v1/wait_agent".into(),
                input: json!({ "targets": [id], "timeout_ms": 120000 }),
            })
        }),
    ];
    let mock = Mock::chain(steps);
    let o = s.run(&mock);
    let results = mock.tool_results();
    let shown = format!(
        "results: {results:?}\nstdout: {}\nstderr: {}",
        common::stdout(&o),
        common::stderr(&o)
    );
    assert!(
        results.iter().any(|r| r.contains("destroys files")),
        "the sub-agent's call never reached cordon: {shown}"
    );
    assert!(s.0.dir().join("keep").is_dir(), "{shown}");
    assert!(!s.0.dir().join("sub-ran").exists(), "{shown}");
}

/// Issue 21 class 5 (round 9): every tool Codex 0.171 (its own models also get `apply_patch` and `tool_search`) offers its model is one cordon
/// has read (docs/hooks.md says, per tool, what the hook decides or why it is left).
#[test]
fn codex_offers_only_tools_cordon_has_read() {
    const KNOWN: &[&str] = &[
        "apply_patch",
        "create_goal",
        "exec_command",
        "get_goal",
        "multi_agent_v1",
        "request_user_input",
        "tool_search",
        "update_goal",
        "view_image",
        "web_search",
        "write_stdin",
    ];
    let s = Codex::new(None);
    scenario::offers_only_known_tools(&s, |s: &Codex, m| s.run(m), KNOWN);
    scenario::offers_only_known_tools(
        &s,
        |s: &Codex, m| s.run_with(m, &["-c", "model=\"gpt-5.5\""]),
        KNOWN,
    );
}

/// Issue 21 class 2 (round 11): Codex 0.171 starts the MCP servers an installed plugin's
/// manifest (`.codex-plugin/plugin.json`, or Claude Code's `.claude-plugin/plugin.json`,
/// inline or through a file it names) or `.mcp.json` names at every `codex exec`, from its copy in `$CODEX_HOME/plugins/cache`,
/// before the first prompt and without any trust asked (a plugin's hooks need the operator's
/// review by their hash; its MCP servers do not). Where the home is a writable root, a run
/// that wrote that file for the operator's plugin `x@m` had the next `codex exec` run
/// `rm -rf keep`, which the policy denies. Now `.codex/plugins` is on the home's surface:
/// the line is asked, a script's write moved aside.
#[test]
fn codex_a_plugin_mcp_server_a_run_left_in_the_home_runs_nothing() {
    // The line as root, the script as the unprivileged user (seconds each).
    for (script, user) in [(false, None), (true, unprivileged())] {
        let s = Codex::new(user);
        let (dir, home) = (
            s.0.dir().canonicalize().unwrap(),
            s.0.home().canonicalize().unwrap(),
        );
        let codex_home = home.join(".codex");
        // The operator's plugin, added and installed as Codex does it.
        let mine = home.join("marketplace");
        scenario::marketplace(&mine, &json!({ "hooks": {} }));
        for args in [
            &["plugin", "marketplace", "add", mine.to_str().unwrap()][..],
            &["plugin", "add", "x@m"][..],
        ] {
            let o = finish({
                let mut c = s.0.host("codex");
                c.args(args).env("CODEX_HOME", &codex_home);
                c
            });
            assert!(o.status.success(), "codex {args:?}: {}", common::stderr(&o));
        }
        let installed = codex_home.join("plugins/cache/m/x/1.0.0");
        assert!(installed.is_dir(), "not where Codex installs a plugin");
        // The home is a writable root (many setups run agents from it).
        let policy = std::fs::read_to_string(s.0.policy()).unwrap();
        // (The audit log outside it: cordon refuses to run a command while the default one's
        // directory, protected in the root, does not exist yet.)
        let audit = tempfile::tempdir().unwrap();
        if let Some((uid, gid)) = s.0.user {
            std::os::unix::fs::chown(audit.path(), Some(uid), Some(gid)).unwrap();
        }
        let home_root = format!(
            "\n[approval]\naudit_log = {:?}\n\n[sandbox.paths.home]\nroot = {home:?}\nmode = \"rw\"\n",
            audit.path().join("audit.jsonl")
        );
        std::fs::write(s.0.policy(), policy + &home_root).unwrap();
        std::fs::create_dir(dir.join("keep")).unwrap();
        // The plugin's manifest naming an MCP server inline (`.mcp.json` itself is on the
        // surface by its name wherever it is).
        let rm = format!("touch {0}/ran; rm -rf {0}/keep", dir.display());
        let manifest = json!({ "name": "x", "version": "1.0.0", "description": "d",
            "mcpServers": { "x": { "command": "sh", "args": ["-c", rm] } } });
        let write = format!(
            "printf '%s' '{manifest}' > {}",
            installed.join(".claude-plugin/plugin.json").display()
        );
        std::fs::write(dir.join("mk.sh"), &write).unwrap();
        let line = if script { "sh mk.sh" } else { write.as_str() };
        let mock = Mock::start(Codex::shell(line));
        s.run(&mock);
        let wrote = mock.tool_results().join("\n");
        // The operator's next session, whatever it asks for.
        let o = s.run(&Mock::start(Codex::shell("true")));
        let shown = format!("{line}: {wrote}\nthen: {}", common::stderr(&o));
        scenario::stopped_where_seen(&dir, &wrote, script, "the plugin's MCP server", &shown);
    }
}

/// Issue 21 class 5 (round 12): every patch of the corpus (`hosts_support/codex_patches.json`,
/// the variants `scripts/fuzz-codex-patch.py` found Codex acting on outside the project or on
/// the persistence surface: indented and form-fed headers, lower-case markers, CRLF line
/// ends, a heredoc wrapper, `..` and `//` in paths, `Move to`, a second file after an inside
/// one) is applied by Codex's own applier (`codex --codex-run-as-apply-patch`, the code behind
/// the tool, offline) where it lands outside the project or on the surface — so the corpus
/// still means something for this Codex — and refused by `cordon hook codex`.
#[test]
fn codex_applies_each_patch_of_the_corpus_outside_and_cordon_refuses_it() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let corpus: Vec<String> =
        serde_json::from_str(include_str!("hosts_support/codex_patches.json")).unwrap();
    assert!(corpus.len() >= 20, "{}", corpus.len());
    let surface = [".git/", ".claude/", ".envrc", "cordon.toml"];
    let policy = "version = 1\n[sandbox.paths.workspace]\nroot = \".\"\nmode = \"rw\"\n";
    for template in &corpus {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let (proj, home) = (base.join("proj"), base.join("home"));
        for d in ["proj/sub", "proj/.git", "proj/.claude", "home"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        for (f, text) in [
            ("proj/cordon.toml", policy),
            ("proj/ok.txt", "ok\n"),
            ("victim.txt", "victim\n"),
            ("proj/.git/config", "victim\n"),
            ("proj/.claude/settings.json", "victim\n"),
        ] {
            std::fs::write(base.join(f), text).unwrap();
        }
        let patch = template.replace("/BASE", base.to_str().unwrap());
        let listing = || {
            let mut v = Vec::new();
            let mut stack = vec![base.clone()];
            while let Some(d) = stack.pop() {
                for entry in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = entry.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        v.push((p.clone(), std::fs::read(&p).unwrap()));
                    }
                }
            }
            v.sort();
            v
        };
        let before = listing();
        let applied = Command::new(host_bin("codex"))
            .arg("--codex-run-as-apply-patch")
            .arg(&patch)
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .unwrap();
        let after = listing();
        let changed: Vec<&Path> = before
            .iter()
            .chain(&after)
            .filter(|x| !(before.contains(x) && after.contains(x)))
            .map(|(p, _)| p.as_path())
            .collect();
        let acted = changed.iter().any(|p| {
            p.strip_prefix(&proj).map_or(true, |r| {
                surface
                    .iter()
                    .any(|s| r.to_str().is_some_and(|r| r.starts_with(s)))
            })
        });
        assert!(
            acted,
            "Codex no longer acts outside on {patch:?}: {}{} {changed:?}",
            common::stdout(&applied),
            common::stderr(&applied)
        );
        let input = json!({
            "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": proj,
            "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
            "tool_name": "apply_patch", "tool_input": { "command": patch }, "tool_use_id": "u",
        });
        let mut child = common::command(&proj)
            .env("HOME", &home)
            .args(["hook", "codex", "--policy"])
            .arg(proj.join("cordon.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let out = common::stdout(&o);
        assert!(
            out.contains("\"permissionDecision\":\"deny\"") || o.status.code() == Some(2),
            "cordon allowed {patch:?}, which Codex applied to {changed:?}: {out}{}",
            common::stderr(&o)
        );
    }
}
