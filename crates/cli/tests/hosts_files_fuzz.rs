//! Issue 21 class 5 (round 12): Claude Code's, Gemini CLI's and Copilot CLI's file tools read
//! their input at least as leniently by cordon's hook as by the host. The corpus
//! (`hosts_support/host_file_calls.json`) is what `scripts/fuzz-host-files.py` found the real
//! host writing outside the project or on the persistence surface with its own gate off and a
//! hook that allows: `..`, `//`, `/./`, `~`, a symlinked component, a trailing slash, an
//! alias key (`path` for `file_path`), a second path key, an extra field. Each is made again
//! by the real host against the project's mock model, with a hook that records its input and
//! allows (so the corpus still means something for this host: it must write there), and the
//! recorded input is then given to `cordon hook HOST` as install wires it: it must refuse.
//! This is the parser differential alone; the sandbox backends and the user do not enter it.

mod common;
mod hosts_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hosts_support::{host_bin, wait_deadline, Mock, Step, Turn};
use serde_json::{json, Value};

const POLICY: &str =
    "version = 1\n[sandbox.paths.workspace]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n";
/// The surface in the project the corpus writes, as cordon lists it
/// (`crates/policy/src/surface.rs`: git's config and hooks, not every file in `.git`; the hosts'
/// settings; CLAUDE.md and GEMINI.md are instructions, deliberately off it).
const SURFACE: &[&str] = &[
    ".git/config",
    ".git/hooks/",
    ".claude/settings",
    ".gemini/settings",
    ".vscode/tasks.json",
    ".envrc",
    "cordon.toml",
    ".mcp.json",
];
/// The host's own records of the session (they quote the tool's input), not the tool's writes.
const HOST_STATE: &[&str] = &[
    "home/.claude/projects/",
    "home/.claude/file-history/",
    "home/.claude/todos/",
    "home/.claude/shell-snapshots/",
    "home/.claude/statsig/",
    "home/.claude/session-env/",
    "home/.claude/history.jsonl",
    "home/.claude.json",
    "home/.gemini/tmp/",
    "home/.gemini/history/",
    "home/.copilot/session-state/",
    "home/.copilot/logs/",
    "home/.state/",
    "home/.cache/",
    "rec/",
];
const MARK: &str = "FUZZMARK";

/// BASE/{proj,home,out,rec}: the files the corpus names hold `victim` (an edit has something
/// to replace; a notebook, in its one cell), `proj/lnk` links to `out`, `proj/lnkgit` to `.git`; the host's hook records
/// its input in `rec` and allows.
fn tree(host: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    fill(&base, host);
    (t, base)
}

/// [`tree`]'s files in `base`.
fn fill(base: &Path, host: &str) {
    for d in [
        "proj/sub",
        "proj/.git",
        "proj/.claude",
        "proj/.gemini",
        "proj/.vscode",
        "home/.gemini",
        "out",
        "rec",
    ] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(base.join("proj/cordon.toml"), POLICY).unwrap();
    for f in [
        "proj/ok.txt",
        "proj/sub/ok.txt",
        "proj/.envrc",
        "proj/.git/config",
        "proj/.claude/settings.local.json",
        "proj/.gemini/settings.json",
        "proj/.vscode/tasks.json",
        "proj/.mcp.json",
        "proj/CLAUDE.md",
        "proj/GEMINI.md",
        "out/x.txt",
        "home/x.txt",
        "home/.bashrc",
        "proj/x.txt",
    ] {
        // A JSON file stays JSON: a host that reads it refuses to start on anything else.
        let text = if f.ends_with(".json") {
            "{\"victim\": 1}\n"
        } else {
            "victim\n"
        };
        std::fs::write(base.join(f), text).unwrap();
    }
    let notebook = json!({ "cells": [{ "cell_type": "code", "id": "c1", "source": "victim",
        "metadata": {}, "outputs": [], "execution_count": null }],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5 });
    for f in ["out/n.ipynb", "home/n.ipynb", "proj/n.ipynb"] {
        std::fs::write(base.join(f), notebook.to_string()).unwrap();
    }
    std::os::unix::fs::symlink(base.join("out"), base.join("proj/lnk")).unwrap();
    std::os::unix::fs::symlink(base.join("proj/.git"), base.join("proj/lnkgit")).unwrap();
    let record = format!(
        "f=$(mktemp {}/rec/XXXXXX); cat > \"$f\"; exit 0",
        base.display()
    );
    if host == "claude" {
        let s = json!({ "hooks": { "PreToolUse": [{ "matcher": "*", "hooks": [
            { "type": "command", "command": record, "timeout": 30 }]}]}});
        std::fs::write(base.join("proj/.claude/settings.json"), s.to_string()).unwrap();
    } else if host == "copilot" {
        std::fs::create_dir_all(base.join("home/.copilot/hooks")).unwrap();
        let s = json!({ "version": 1, "hooks": { "preToolUse": [
            { "type": "command", "bash": record, "timeoutSec": 30 }]}});
        std::fs::write(base.join("home/.copilot/hooks/rec.json"), s.to_string()).unwrap();
    } else {
        let s = json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "privacy": { "usageStatisticsEnabled": false },
            "general": { "enableAutoUpdate": false },
            "hooks": { "BeforeTool": [{ "matcher": ".*", "hooks": [
                { "type": "command", "name": "rec", "command": record, "timeout": 30000 }]}]}});
        std::fs::write(base.join("home/.gemini/settings.json"), s.to_string()).unwrap();
        let trusted = json!({ base.join("proj").to_str().unwrap(): "TRUST_FOLDER" });
        std::fs::write(
            base.join("home/.gemini/trustedFolders.json"),
            trusted.to_string(),
        )
        .unwrap();
    }
}

/// The host's run against `mock` in the project, its own gate off (Claude Code
/// `bypassPermissions`, Gemini CLI `--yolo`, Copilot CLI `--allow-all-tools`): the recording hook is the only one.
fn run(host: &str, base: &Path, mock: &Mock) -> std::process::Output {
    let home = base.join("home");
    let mut c = Command::new(host_bin(host));
    c.current_dir(base.join("proj"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if host == "claude" {
        c.args([
            "-p",
            "run the scripted tool call",
            "--output-format",
            "json",
        ])
        .args(["--max-turns", "4", "--permission-mode", "bypassPermissions"])
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("ANTHROPIC_API_KEY", "sk-cordon-test")
        // Claude Code refuses bypassPermissions as root outside a sandbox it is told of.
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1");
    } else if host == "copilot" {
        c.args(["-p", "run the scripted tool call", "--allow-all-tools"])
            .env("COPILOT_PROVIDER_TYPE", "anthropic")
            .env("COPILOT_PROVIDER_BASE_URL", mock.base_url())
            .env("COPILOT_PROVIDER_API_KEY", "cordon-test-key")
            .env("COPILOT_MODEL", "claude-sonnet-4-5")
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false");
    } else {
        c.args([
            "-p",
            "run the scripted tool call",
            "--yolo",
            "-m",
            "gemini-2.5-flash",
        ])
        .env("GEMINI_API_KEY", "cordon-test-key")
        .env("GOOGLE_GEMINI_BASE_URL", mock.base_url())
        .env("GEMINI_TELEMETRY_ENABLED", "false");
    }
    wait_deadline(c.spawn().unwrap(), std::time::Duration::from_secs(90))
}

/// The files under `base` holding the marker, relative to it, the host's records left out.
fn marked(base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let kind = e.file_type().unwrap();
            if HOST_STATE.iter().any(|s| rel.starts_with(s)) || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .is_ok_and(|b| b.windows(MARK.len()).any(|w| w == MARK.as_bytes()))
            {
                out.push(rel);
            }
        }
    }
    out
}

/// `cordon hook HOST --policy proj/cordon.toml` on the recorded input: whether it allowed.
fn cordon_allows(host: &str, base: &Path, input: &[u8]) -> (bool, String) {
    use std::io::Write;
    let mut child = common::command(&base.join("proj"))
        .env("HOME", base.join("home"))
        .args(["hook", host, "--policy"])
        .arg(base.join("proj/cordon.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let o = child.wait_with_output().unwrap();
    let out = common::stdout(&o);
    let refused = !o.status.success()
        || ["\"deny\"", "\"ask\"", "\"block\""]
            .iter()
            .any(|w| out.contains(w));
    (!refused, format!("{out}{}", common::stderr(&o)))
}

fn replay(host: &str) {
    let corpus: Vec<Value> =
        serde_json::from_str(include_str!("hosts_support/host_file_calls.json")).unwrap();
    let mine: Vec<&Value> = corpus.iter().filter(|c| c["host"] == host).collect();
    assert!(mine.len() >= 5, "{host}: {} variants", mine.len());
    for c in mine {
        let (_t, base) = tree(host);
        // The calls' paths name BASE (the tree) and their text the marker.
        let calls = c["calls"]
            .to_string()
            .replace("BASE", base.to_str().unwrap());
        let calls: Vec<(String, Value)> = serde_json::from_str(&calls).unwrap();
        let tool = calls.last().unwrap().0.clone();
        let steps: Vec<Step> = calls
            .into_iter()
            .map(|(tool, input)| -> Step {
                let t = Turn { tool, input };
                Box::new(move |_, _| Some(t.clone()))
            })
            .collect();
        let mock = Mock::chain(steps);
        let o = run(host, &base, &mock);
        let wrote = marked(&base);
        let acted = wrote.iter().any(|w| {
            w.strip_prefix("proj/")
                .is_none_or(|r| SURFACE.iter().any(|s| r.starts_with(s)))
        });
        assert!(
            acted,
            "{host} no longer writes outside or on the surface on {c}: wrote {wrote:?}\n{}{}",
            common::stdout(&o),
            common::stderr(&o)
        );
        let recorded: Vec<Vec<u8>> = std::fs::read_dir(base.join("rec"))
            .unwrap()
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        // cordon is asked of the tree as the host found it (an edit's old text is still
        // there; cordon refuses an edit whose old text does not occur): made again in place.
        std::fs::remove_dir_all(&base).unwrap();
        std::fs::create_dir(&base).unwrap();
        fill(&base, host);
        let mut asked = 0;
        for input in recorded {
            let v: Value = serde_json::from_slice(&input).unwrap();
            // Copilot CLI's hook input is camelCase.
            if v.get("tool_name").unwrap_or(&v["toolName"]) != tool.as_str() {
                continue;
            }
            asked += 1;
            let (allowed, said) = cordon_allows(host, &base, &input);
            assert!(
                !allowed,
                "{host}: cordon allowed {c} (the host wrote {wrote:?}): {said}"
            );
        }
        assert!(asked > 0, "{host}: the hook never saw {tool} for {c}");
    }
}

#[test]
fn claude_file_tools_corpus_written_outside_is_refused_by_cordon() {
    replay("claude");
}

#[test]
fn gemini_file_tools_corpus_written_outside_is_refused_by_cordon() {
    replay("gemini");
}

#[test]
fn copilot_file_tools_corpus_written_outside_is_refused_by_cordon() {
    replay("copilot");
}
