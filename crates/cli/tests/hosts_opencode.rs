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
use std::process::{Command, Output};

use hosts_support::scenario::{self, finish, Definition, Env, Host, Install};
use hosts_support::{host_bin, unprivileged, Mock, Turn, POLICY};
use serde_json::json;

/// opencode with cordon's plugin installed (`--user` unless the test says otherwise).
struct Opencode(Env);

impl Host for Opencode {
    const SHELL: &'static str = "bash";
    const NAME: &'static str = "opencode";
    const SLUG: &'static str = "opencode";
    const KEY: &'static str = "ANTHROPIC_API_KEY";
    // opencode gives the model the output only, not the exit status.
    const EXIT_3: Option<&'static str> = None;
    const LINES: bool = false;
    const DENY_SAYS: &'static [&'static str] = &["cordon: denied"];
    /// cordon answers an ask with a deny that names how a person runs it.
    const ASK_SAYS: &'static [&'static str] = &["a person runs it in a terminal"];

    fn env(&self) -> &Env {
        &self.0
    }

    /// `opencode run` against `mock`: its `anthropic` provider's `baseURL` is the mock.
    fn run(&self, mock: &Mock) -> Output {
        self.run_model(mock, None, json!({}))
    }
}

impl Opencode {
    /// As [`Host::run`] with the model `model` (None: claude-sonnet-4-5), declared in the
    /// mock's provider (opencode picks the tools it offers by the model's name: a `gpt-`
    /// model gets `apply_patch` in place of `edit` and `write`), and the keys of `more` added
    /// to opencode's config.
    fn run_model(&self, mock: &Mock, model: Option<&str>, more: serde_json::Value) -> Output {
        self.run_args(mock, model, more, &[])
    }

    /// As [`Opencode::run_model`], with `args` before the prompt (`--command NAME`: the
    /// operator's `/NAME`, the prompt its arguments).
    fn run_args(
        &self,
        mock: &Mock,
        model: Option<&str>,
        more: serde_json::Value,
        args: &[&str],
    ) -> Output {
        let mut provider = json!({ "options": {
            "baseURL": format!("{}/v1", mock.base_url()),
            "apiKey": "cordon-test-key",
        }});
        if let Some(m) = model {
            provider["models"] = json!({ m: {} });
        }
        let mut config = json!({
            "autoupdate": false,
            "share": "disabled",
            "provider": { "anthropic": provider },
            "model": format!("anthropic/{}", model.unwrap_or("claude-sonnet-4-5")),
        });
        for (k, v) in more.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        let mut c = self.0.host("opencode");
        c.arg("run")
            .args(args)
            .arg("run the scripted tool call")
            .env("OPENCODE_CONFIG_CONTENT", config.to_string())
            .env("OPENCODE_DISABLE_MODELS_FETCH", "true")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "true")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "true")
            .env("ANTHROPIC_API_KEY", "cordon-test-key")
            .env("npm_config_offline", "true");
        finish(c)
    }
}

impl Install for Opencode {
    fn installed(user: Option<(u32, u32)>, bin: &Path, extra: &[&str]) -> Opencode {
        Opencode::scoped(user, bin, "--user", extra)
    }
}

impl Opencode {
    /// `cordon install opencode SCOPE --policy cordon.toml EXTRA` (`--user` or `--project`);
    /// the plugin must be where that scope puts it.
    fn scoped(user: Option<(u32, u32)>, bin: &Path, scope: &str, extra: &[&str]) -> Opencode {
        let files = (
            ".config/opencode/plugin/cordon.js",
            ".opencode/plugin/cordon.js",
        );
        Opencode(scenario::install_file(
            user,
            bin,
            ("opencode", scope, extra),
            "XDG_CONFIG_HOME",
            files,
        ))
    }
}

#[test]
fn opencode_deny_reaches_the_model_and_nothing_runs() {
    scenario::deny(&Opencode::new(None));
}

#[test]
fn opencode_allow_runs_confined_with_output_exit_cwd_env_intact() {
    scenario::allow(&Opencode::new(None));
}

#[test]
fn opencode_allow_as_an_unprivileged_user() {
    scenario::allow(&Opencode::new(unprivileged()));
}

#[test]
fn opencode_missing_cordon_binary_blocks() {
    scenario::missing_binary::<Opencode>();
}

#[test]
fn opencode_ask_is_denied_with_its_reason_and_how() {
    scenario::ask(&Opencode::new(None));
}

/// opencode's `write` of a plugin (which could unhook cordon next session) is denied.
#[test]
fn opencode_file_tools_are_decided() {
    let write = |path: &Path, content: &str| Turn {
        tool: "write".into(),
        input: json!({ "filePath": path, "content": content }),
    };
    let s = Opencode::new(None);
    let (plugin, says) = (
        ".opencode/plugin/other.js",
        "configures the agent host's hooks",
    );
    scenario::file_write(&s, write, plugin, "export const X = 1;", says);
}

/// The project-level plugin (`.opencode/plugin/cordon.js`) is loaded the same way.
#[test]
fn opencode_project_plugin_denies() {
    let cordon = Path::new(env!("CARGO_BIN_EXE_cordon"));
    scenario::deny(&Opencode::scoped(None, cordon, "--project", &[]));
}

/// `cordon install opencode --mcp --user` wraps the local server in opencode's own
/// `opencode.json` (its `command` list), and the real opencode then starts it through `cordon
/// mcp wrap`: a read the policy's `[mcp]` denies on its argument never reaches the server (the
/// reason reaches the model), an allowed one does, and a tool denied outright is not offered.
#[test]
fn opencode_mcp_server_runs_under_cordon_mcp_wrap() {
    mcp(Opencode::new(None));
}

/// The same with opencode, and so `cordon mcp wrap` and the server, running as an
/// unprivileged user (bwrap in an unprivileged user namespace).
#[test]
fn opencode_mcp_server_as_an_unprivileged_user() {
    mcp(Opencode::new(unprivileged()));
}

fn mcp(s: Opencode) {
    let dir = s.0.dir().canonicalize().unwrap();
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
    let config = s.0.home().join(".config/opencode/opencode.json");
    std::fs::write(
        &config,
        json!({"mcp": {"fs": {"type": "local", "command": [server, dir], "enabled": true}}})
            .to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .current_dir(&dir)
        .env("HOME", s.0.home())
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
        let o = s.run(&mock);
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

/// Issue 21 class 5 (round 8): opencode's `apply_patch` (offered to a `gpt-` model in place
/// of `edit` and `write`) takes a header's path trimmed as JavaScript trims, U+FEFF
/// included: `*** Add File:\u{feff}/x` adds `/x`. The operator has switched opencode's own
/// check of paths outside the project off (`external_directory`), leaving that to cordon:
/// before the fix cordon took the path as the relative name `\u{feff}/x`, allowed it, and
/// opencode wrote the file into the home; now cordon refuses it and nothing is written. A
/// file in the project is still added.
#[test]
fn opencode_apply_patch_path_is_read_as_opencode_trims_it() {
    let s = Opencode::new(None);
    let patch = |path: &str| {
        let t = Turn {
            tool: "apply_patch".into(),
            input: json!({
                "patchText": format!("*** Begin Patch\n*** Add File:{path}\n+hi\n*** End Patch")
            }),
        };
        let mock = Mock::start(t.clone());
        let o = s.run_model(
            &mock,
            Some("gpt-5-mock"),
            json!({ "permission": { "external_directory": "allow" } }),
        );
        mock.the_one_result("opencode", &t.tool, &o)
    };
    let inside = s.0.dir().join("inside.txt");
    let r = patch(" inside.txt");
    assert!(
        inside.is_file(),
        "opencode did not add {}: {r}",
        inside.display()
    );

    let outside = s.0.home().join("planted-by-bom.txt");
    let r = patch(&format!("\u{feff}{}", outside.display()));
    assert!(
        !outside.exists(),
        "opencode wrote {}: {r}",
        outside.display()
    );
    assert!(
        r.contains("cordon: denied") && r.contains("outside every root"),
        "not cordon's refusal: {r}"
    );
}

/// Round 8 of issue 21: a subagent's tool call (`task`, the `general` agent) comes to
/// cordon's plugin as the session's own do: its `rm -rf` is denied and does not run.
#[test]
fn opencode_a_subagents_calls_are_decided_too() {
    let s = Opencode::new(None);
    let keep = s.0.dir().join("keep");
    std::fs::create_dir(&keep).unwrap();
    let mock = Mock::script(vec![
        Turn {
            tool: "task".into(),
            input: json!({ "subagent_type": "general", "description": "clean up", "prompt": "clean up" }),
        },
        Turn {
            tool: "bash".into(),
            input: json!({ "command": "rm -rf keep", "description": "clean" }),
        },
    ]);
    let o = s.run(&mock);
    let results = mock.tool_results();
    assert!(keep.is_dir(), "the subagent ran rm -rf: {results:?}");
    assert!(
        results.iter().any(|r| r.contains("destroys files")),
        "not cordon's denial: {results:?}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 21 class 5 (round 10): a custom command (`.opencode/command/NAME.md`, also
/// `commands/` and `~/.config/opencode/command`) runs each ``!`cmd` `` of its template in a
/// shell when the operator runs `/NAME` (`opencode run --command NAME`), before the template
/// reaches the model, and no plugin hook sees that shell; a project's command of a built-in's
/// name replaces it (`/init` here). Before the fix cordon allowed the write and the operator's
/// next `/init` ran `rm -rf keep`, which the policy denies (opencode 1.18.33).
#[test]
fn opencode_a_command_an_earlier_run_wrote_does_not_run() {
    // As root and as the unprivileged user (round 12).
    for user in [None, unprivileged()] {
        let d = Definition {
            rel: ".opencode/command/init.md",
            text: "---\ndescription: set up\n---\n!`touch {dir}/ran; rm -rf {dir}/keep`\nSet up.\n",
            load: vec![Turn {
                tool: "bash".into(),
                input: json!({ "command": "cat .opencode/command/init.md", "description": "look" }),
            }],
            missing: "No such file",
        };
        // Every session is the operator's `/init`: the built-in one first, the one the run left
        // (if any) after.
        let init = |s: &Opencode, m: &Mock| s.run_args(m, None, json!({}), &["--command", "init"]);
        scenario::definition_an_earlier_run_wrote(d, user, init, |_, _| ());
    }
}

/// Issue 21 class 5 (round 9): every tool opencode 1.18.33 (a `gpt-` model also gets `apply_patch`) offers its model is one cordon
/// has read (docs/hooks.md says, per tool, what the hook decides or why it is left).
#[test]
fn opencode_offers_only_tools_cordon_has_read() {
    const KNOWN: &[&str] = &[
        "apply_patch",
        "bash",
        "edit",
        "glob",
        "grep",
        "read",
        "skill",
        "task",
        "todowrite",
        "webfetch",
        "write",
    ];
    let s = Opencode::new(None);
    scenario::offers_only_known_tools(&s, |s: &Opencode, m| s.run(m), KNOWN);
    scenario::offers_only_known_tools(
        &s,
        |s: &Opencode, m| s.run_model(m, Some("gpt-5-mock"), json!({})),
        KNOWN,
    );
}
