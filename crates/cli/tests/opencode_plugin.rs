//! cordon's opencode plugin (the file `cordon install opencode` writes), run by node outside
//! opencode: every way `cordon hook opencode` can fail blocks the call, an allow merges the
//! rewrite, no answer defers. The real opencode runs it in `hosts_opencode.rs`; these are the
//! branches a real host run cannot reach on demand (a hook that hangs, that prints garbage).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// node, from PATH (`scripts/test-deps.sh` installs it); fails naming the script.
fn node() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("node"))
            .find(|n| n.is_file())
    });
    found.expect("node is missing: run scripts/test-deps.sh (it installs node)")
}

/// The installed plugin's text, with `cordon` (and the deadline, when given) replaced.
fn plugin(dir: &Path, cordon: Option<&Path>, deadline_ms: Option<u64>) -> PathBuf {
    let o = common::command(dir)
        .env("HOME", dir)
        .args(["install", "opencode"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let file = dir.join(".opencode/plugin/cordon.js");
    let mut text = std::fs::read_to_string(&file).unwrap();
    if let Some(c) = cordon {
        let real = Value::String(env!("CARGO_BIN_EXE_cordon").into()).to_string();
        let fake = Value::String(c.to_str().unwrap().into()).to_string();
        assert!(text.contains(&real));
        text = text.replace(&real, &fake);
    }
    if let Some(ms) = deadline_ms {
        assert!(text.contains("const DEADLINE_MS = 60000;"));
        text = text.replace(
            "const DEADLINE_MS = 60000;",
            &format!("const DEADLINE_MS = {ms};"),
        );
    }
    let out = dir.join("plugin-under-test.mjs");
    std::fs::write(&out, text).unwrap();
    out
}

/// Calls the plugin's `tool.execute.before` once for a bash `command`: whether it threw, its
/// message, and the args after.
fn call(dir: &Path, plugin: &Path, command: &str) -> (bool, String, Value) {
    let driver = dir.join("driver.mjs");
    std::fs::write(
        &driver,
        r#"const [plugin, dir, command] = process.argv.slice(2);
const { Cordon } = await import(plugin);
const hooks = await Cordon({ directory: dir });
const output = { args: { command, description: "d" } };
let threw = false, message = "";
try {
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, output);
} catch (e) {
  threw = true;
  message = e.message;
}
console.log(JSON.stringify({ threw, message, args: output.args }));
"#,
    )
    .unwrap();
    let o = Command::new(node())
        .arg(&driver)
        .arg(plugin)
        .arg(dir)
        .arg(command)
        .env("XDG_STATE_HOME", common::state_home())
        .env("XDG_CONFIG_HOME", common::config_home())
        .output()
        .unwrap();
    assert!(o.status.success(), "node: {}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    (
        v["threw"] == true,
        v["message"].as_str().unwrap_or_default().to_string(),
        v["args"].clone(),
    )
}

fn fake(dir: &Path, script: &str) -> PathBuf {
    let p = dir.join("fake-cordon");
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn the_real_hook_through_the_plugin_rewrites_and_denies() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("cordon.toml"),
        "version = 1\n[sandbox.paths.workspace]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"rm -rf\"\naction = \"deny\"\nreason = \"destroys files\"\n",
    )
    .unwrap();
    common::trust(ws.path());
    let p = plugin(ws.path(), None, None);
    let (threw, msg, args) = call(ws.path(), &p, "ls -la");
    assert!(!threw, "{msg}");
    let c = args["command"].as_str().unwrap();
    assert!(
        c.starts_with(&format!(
            "'{}' exec --from-hook",
            env!("CARGO_BIN_EXE_cordon")
        )) && c.ends_with("-c='ls -la'"),
        "{c}"
    );
    assert_eq!(args["description"], "d", "other arguments are kept");
    let (threw, msg, args) = call(ws.path(), &p, "rm -rf src");
    assert!(threw && msg.contains("destroys files"), "{msg}");
    assert_eq!(args["command"], "rm -rf src");
}

#[test]
fn every_failure_of_the_hook_blocks_and_silence_defers() {
    let ws = tempfile::tempdir().unwrap();
    let d = ws.path();
    for (script, want) in [
        ("echo boom >&2; exit 3", "boom"),
        ("cat >/dev/null; echo 'not json'", "not JSON"),
        (
            r#"cat >/dev/null; echo '{"decision":"deny","reason":"nope"}'"#,
            "nope",
        ),
        // An answer that is neither allow nor deny blocks too.
        (
            r#"cat >/dev/null; echo '{"decision":"maybe"}'"#,
            "the call is blocked",
        ),
        ("kill -9 $$", "the call is blocked"),
    ] {
        let p = plugin(d, Some(&fake(d, script)), None);
        let (threw, msg, args) = call(d, &p, "touch x");
        assert!(threw, "{script}: did not block");
        assert!(msg.contains(want), "{script}: {msg}");
        assert_eq!(args["command"], "touch x", "{script}");
    }
    // A missing binary.
    let p = plugin(d, Some(&d.join("no-such-cordon")), None);
    let (threw, msg, _) = call(d, &p, "touch x");
    assert!(threw && msg.contains("the call is blocked"), "{msg}");
    // No answer at all (exit 0): opencode decides, the args are untouched.
    let p = plugin(d, Some(&fake(d, "cat >/dev/null")), None);
    let (threw, msg, args) = call(d, &p, "touch x");
    assert!(!threw, "{msg}");
    assert_eq!(args["command"], "touch x");
}

/// A hook that does not answer within the plugin's deadline is killed and the call blocked
/// (the deadline shortened from 60 s for the test; the code path is the same).
#[test]
fn a_hook_past_its_deadline_is_killed_and_blocks() {
    let ws = tempfile::tempdir().unwrap();
    let d = ws.path();
    let p = plugin(d, Some(&fake(d, "exec sleep 30")), Some(1000));
    let start = std::time::Instant::now();
    let (threw, msg, _) = call(d, &p, "touch x");
    assert!(
        threw && msg.contains("did not answer within 1000 ms"),
        "{msg}"
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(25),
        "{:?}",
        start.elapsed()
    );
}
