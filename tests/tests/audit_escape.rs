//! The audit log against the command it records, end to end (the real `cordon` binary, the
//! bwrap backend): a command must not be able to plant anything beside the log that makes a
//! later `cordon exec` — possibly root, outside the sandbox — write through a link to a file of
//! the command's choosing, or break the log while `cordon audit verify` still calls it intact.
//!
//! Each test runs three calls: one that creates the log, the attack, and one more that appends
//! after the attack. Run as whoever runs the suite (CI: root, where the danger is greatest).

// bubblewrap is Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_beside, describe};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `cordon`, built next to `cordon-attack` (`cargo build -p cordon-cli` or `cargo test
/// --workspace`).
fn cordon() -> PathBuf {
    cordon_beside(Path::new(env!("CARGO_BIN_EXE_cordon-attack")))
}

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    victim: PathBuf,
    policy: PathBuf,
}

const VICTIM: &str = "a file outside the workspace that only cordon itself could write\n";

impl Fixture {
    /// A workspace `ws/` (the policy's only writable root), the policy beside it (a policy in
    /// a writable root is a protected path of its own), and `outside/victim.txt`.
    fn new(audit_log: &str) -> Fixture {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-audit-")
            .tempdir_in("/tmp")
            .unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).unwrap();
        fs::create_dir(tmp.path().join("outside")).unwrap();
        fs::create_dir(tmp.path().join("policies")).unwrap();
        let victim = tmp.path().join("outside/victim.txt");
        fs::write(&victim, VICTIM).unwrap();
        let policy = tmp.path().join("policies/cordon.toml");
        fs::write(
            &policy,
            format!(
                "version = 1\n\
                 [sandbox]\nbackend = \"bwrap\"\nrequire_os_sandbox = true\nnetwork = \"deny\"\n\
                 [sandbox.paths.workspace]\nroot = \"../ws\"\nmode = \"rw\"\n\
                 [shell]\ndefault = \"allow\"\n\
                 [approval]\naudit_log = \"../ws/{audit_log}\"\n"
            ),
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            ws,
            victim,
            policy,
        }
    }

    /// `cordon exec --policy P -- /bin/sh -c SCRIPT`, in the workspace.
    fn exec(&self, script: &str) -> Output {
        let mut c = Command::new(cordon());
        c.arg("exec")
            .arg("--policy")
            .arg(&self.policy)
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.ws)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        c.output().unwrap()
    }

    /// [`Fixture::exec`] of `script` written to a file first: the shell tool denies a line that
    /// writes cordon's own files outright (issue 13), so an attack on the kernel layer runs
    /// from a script the tool cannot see, as a command that got past it would.
    fn exec_script(&self, script: &str) -> Output {
        fs::write(self.ws.join(".attack.sh"), script).unwrap();
        self.exec("/bin/sh ./.attack.sh")
    }

    fn verify(&self, log: &str) -> (Option<i32>, String) {
        let out = Command::new(cordon())
            .args([OsStr::new("audit"), OsStr::new("verify")])
            .arg(self.ws.join(log))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Links to the victim at every name the writer creates or replaces beside the log (the
/// head's temporary file under its old fixed name and the new random ones' prefix, the head
/// itself, a moved-aside torn tail), plus a plain file and a directory: the command must not
/// be able to add anything there.
fn plant(dir: &str, log: &str, victim: &Path) -> String {
    let v = victim.display();
    let mut s = String::new();
    for name in [
        format!("{log}.head.tmp"),
        format!("{log}.head.tmp-0000000000000000"),
        format!("{log}.torn-x"),
    ] {
        s.push_str(&format!("ln -s '{v}' '{dir}{name}'; "));
    }
    s.push_str(&format!(
        "ln -sf '{v}' '{dir}{log}.head'; touch '{dir}planted'; mkdir '{dir}planted-dir'; \
         echo fine > written.txt; true"
    ));
    s
}

#[test]
fn the_audit_logs_directory_is_read_only_inside_the_sandbox() {
    let fx = Fixture::new(".cordon/audit.jsonl");
    let out = fx.exec("true");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let dir = fx.ws.join(".cordon");
    // The head is in the log's own attribute (issue 25): no head file. `scans` holds the
    // after-run scan's markers while a run goes, and goes when empty: the listings the scan
    // keeps between runs (issue 23) are not kept in a directory inside a run's root (round
    // 12: a second line beside the kernel's read-only directory).
    assert_eq!(names(&dir), ["audit.jsonl", "audit.jsonl.lock"]);

    let out = fx.exec_script(&plant(".cordon/", "audit.jsonl", &fx.victim));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        names(&dir),
        ["audit.jsonl", "audit.jsonl.lock"],
        "the command created names in the audit log's directory\n{}",
        describe(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
        "{}",
        describe(&out)
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join("written.txt")).unwrap(),
        "fine\n",
        "the rest of the workspace stays writable\n{}",
        describe(&out)
    );

    let out = fx.exec("true");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(fs::read_to_string(&fx.victim).unwrap(), VICTIM);
    let (code, report) = fx.verify(".cordon/audit.jsonl");
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("3 record(s)"), "{report}");
}

/// A log directly in the workspace: its directory is the writable root, which must stay
/// writable, so only the log and its head are protected and the command can add names
/// beside them. cordon's writer must not follow any of them.
#[test]
fn links_planted_beside_a_log_in_the_workspace_root_are_never_followed() {
    let fx = Fixture::new("audit.jsonl");
    let out = fx.exec("true");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    let out = fx.exec_script(&plant("", "audit.jsonl", &fx.victim));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        fs::symlink_metadata(fx.ws.join("audit.jsonl.head.tmp"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the attack could not plant its link, so this test proves nothing\n{}",
        describe(&out)
    );
    // The head is in the log's attribute (issue 25), so `audit.jsonl.head` is just a name in
    // the writable root: the command may plant a link there, and the writer, which reads a
    // head file only for a log without the attribute, never opens it.
    let out = fx.exec("true");
    assert_eq!(
        fs::read_to_string(&fx.victim).unwrap(),
        VICTIM,
        "cordon wrote through a planted link\n{}",
        describe(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let (code, report) = fx.verify("audit.jsonl");
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("3 record(s)"), "{report}");

    // A head file that is a link, beside a log from before the head moved into the
    // attribute (simulated: the attribute removed), stops the run: the record cannot be
    // written safely, so nothing runs (125), and verify does not call the log intact.
    let log = std::ffi::CString::new(
        fx.ws
            .join("audit.jsonl")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: two NUL-terminated strings that outlive the call.
    let removed = unsafe { libc::removexattr(log.as_ptr(), c"user.cordon.head".as_ptr()) };
    assert_eq!(removed, 0, "{}", std::io::Error::last_os_error());
    let _ = fs::remove_file(fx.ws.join("audit.jsonl.head"));
    std::os::unix::fs::symlink(&fx.victim, fx.ws.join("audit.jsonl.head")).unwrap();
    let out = fx.exec("echo ran > ran.txt");
    assert_eq!(out.status.code(), Some(125), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symlink"),
        "{}",
        describe(&out)
    );
    assert!(!fx.ws.join("ran.txt").exists());
    assert_eq!(fs::read_to_string(&fx.victim).unwrap(), VICTIM);
    let (code, report) = fx.verify("audit.jsonl");
    assert_ne!(code, Some(0), "{report}");
}

/// Issue 21, class 1: `cordon audit report --html FILE` writes outside the sandbox, often into
/// the project (a writable root). A command that planted a link at FILE (`report.html ->
/// ../outside/victim.txt`) must not get the operator's report written over the link's target:
/// refused with a line naming the link; the victim untouched.
#[test]
fn the_html_report_is_never_written_through_a_planted_link() {
    let fx = Fixture::new(".cordon/audit.jsonl");
    let out = fx.exec("echo first > first.txt");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // The command plants the link where the operator will write the report.
    let out = fx.exec_script(&format!(
        "ln -s '{}' report.html; mkdir -p pages; ln -s '{}' pages/audit.html; true",
        fx.victim.display(),
        fx.victim.display()
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    for name in ["report.html", "pages/audit.html"] {
        let at = fx.ws.join(name);
        assert!(fs::symlink_metadata(&at).unwrap().file_type().is_symlink());
        let out = Command::new(cordon())
            .args([
                OsStr::new("audit"),
                OsStr::new("report"),
                OsStr::new("--html"),
            ])
            .arg(&at)
            .arg(fx.ws.join(".cordon/audit.jsonl"))
            .current_dir(&fx.ws)
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{name}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&at.display().to_string()) && err.contains("symbolic link"),
            "{name}: the refusal does not name the link\n{}",
            describe(&out)
        );
        assert_eq!(
            fs::read_to_string(&fx.victim).unwrap(),
            VICTIM,
            "{name}: the report was written through the link"
        );
    }
    // Without a link: the page is written, private to the operator.
    let page = fx.ws.join("real.html");
    let out = Command::new(cordon())
        .args([
            OsStr::new("audit"),
            OsStr::new("report"),
            OsStr::new("--html"),
        ])
        .arg(&page)
        .arg(fx.ws.join(".cordon/audit.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fs::read_to_string(&page).unwrap().contains("<html"));
}

/// Issue 21, class 4: `cordon hook`, `cordon exec` and `cordon mcp` appending to one log at once
/// (an agent host's parallel calls, a wrapped MCP session beside them), with SIGKILLs among them:
/// some at random moments, some by strace at an append's `write`, its head's `fsetxattr` or its
/// `fsync`. Every call that was answered has its record, the chain verifies, no writer waits
/// past its deadline, and the next run is not refused. Root and the unprivileged user, Landlock
/// and bwrap.
#[test]
fn hook_exec_and_mcp_appending_at_once_with_kills_lose_nothing() {
    use cordon_e2e::{is_root, shell_workspace, test_user};
    use std::io::{BufRead, Write};
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    assert!(is_root(), "run the escape suite as root (CI does)");
    let cordon = cordon_e2e::cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")));
    for user in [false, true] {
        for backend in ["landlock", "bwrap"] {
            let ids = user.then(test_user);
            let (_tmp, root) = shell_workspace("audit-at-once", backend, ids);
            let what = format!("[user {user} {backend}]");
            let log = root.join("state/audit.jsonl");
            let policy = root.join("policies/cordon.toml");
            let command = |args: &[&str], kill: Option<(&str, u32)>| {
                let mut c = match kill {
                    Some((call, n)) => {
                        let mut c = Command::new("strace");
                        c.args(["-f", "-qq", "-o", "/dev/null", "-P"])
                            .arg(&log)
                            .args(["-e", "trace=write,fsetxattr,fsync", "-e"])
                            .arg(format!("inject={call}:error=EIO:signal=SIGKILL:when={n}"))
                            .arg("--")
                            .arg(cordon);
                        c
                    }
                    None => Command::new(cordon),
                };
                c.args(args)
                    .current_dir(root.join("ws"))
                    .env_clear()
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("HOME", root.join("home"))
                    .env("LANG", "C.UTF-8")
                    .env("TMPDIR", root.join("tmp"))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                if let Some((uid, gid)) = ids {
                    c.uid(uid).gid(gid);
                }
                c
            };
            let p = policy.to_str().unwrap();
            let ws = root.join("ws");
            let ws = &ws;
            // The command line of every call that was answered (its record's preview).
            let answered = std::sync::Mutex::new(Vec::<String>::new());
            let deadline = Instant::now() + Duration::from_secs(300);
            std::thread::scope(|s| {
                for i in 0..8u32 {
                    // Every third process of each kind: strace kills it at an append.
                    let kill = (i % 3 == 1).then(|| {
                        (
                            ["write", "fsetxattr", "fsync"][(i / 3 % 3) as usize],
                            1 + i % 2,
                        )
                    });
                    let (command, answered) = (&command, &answered);
                    s.spawn(move || {
                        let line = format!("git status {i}");
                        let input = serde_json::json!({"session_id": "s", "transcript_path": "/t",
                            "cwd": ws, "permission_mode": "default",
                            "hook_event_name": "PreToolUse", "tool_name": "Bash",
                            "tool_input": {"command": line}, "tool_use_id": format!("t{i}")});
                        let mut c = command(&["hook", "claude", "--policy", p], kill)
                            .stdin(Stdio::piped())
                            .spawn()
                            .unwrap();
                        let _ = c
                            .stdin
                            .take()
                            .unwrap()
                            .write_all(input.to_string().as_bytes());
                        if kill.is_none() && i % 3 == 2 {
                            std::thread::sleep(Duration::from_millis(u64::from(i) * 3));
                            let _ = c.kill();
                        }
                        let o = c.wait_with_output().unwrap();
                        if o.status.success() && o.stdout.starts_with(b"{") {
                            answered.lock().unwrap().push(line);
                        }
                    });
                    s.spawn(move || {
                        let line = format!("echo e{i}");
                        let mut c = command(
                            &[
                                "exec",
                                "--policy",
                                p,
                                "--approve-all",
                                "--",
                                "sh",
                                "-c",
                                &line,
                            ],
                            kill,
                        )
                        .stdin(Stdio::null())
                        .spawn()
                        .unwrap();
                        if kill.is_none() && i % 3 == 2 {
                            std::thread::sleep(Duration::from_millis(u64::from(i) * 5));
                            let _ = c.kill();
                        }
                        let o = c.wait_with_output().unwrap();
                        if o.status.success() {
                            answered.lock().unwrap().push(line);
                        }
                    });
                    s.spawn(move || {
                        let mut c = command(&["mcp", "--policy", p], kill)
                            .stdin(Stdio::piped())
                            .spawn()
                            .unwrap();
                        let mut stdin = c.stdin.take().unwrap();
                        let mut out = std::io::BufReader::new(c.stdout.take().unwrap());
                        let mut send = |v: serde_json::Value| {
                            writeln!(stdin, "{v}").is_ok() && stdin.flush().is_ok()
                        };
                        let mut answer = String::new();
                        send(serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "1"}}}));
                        let _ = out.read_line(&mut answer);
                        send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
                        for j in 0..3 {
                            let line = format!("echo m{i}-{j}");
                            send(serde_json::json!({"jsonrpc": "2.0", "id": j + 1,
                                "method": "tools/call", "params": {"name": "run_command",
                                "arguments": {"command": line}}}));
                            if kill.is_none() && i % 3 == 2 && j == 1 {
                                let _ = c.kill();
                                break;
                            }
                            answer.clear();
                            if out.read_line(&mut answer).unwrap_or(0) == 0 {
                                break; // killed
                            }
                            let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
                            if v["result"]["isError"] != serde_json::json!(true) && v.get("result").is_some() {
                                answered.lock().unwrap().push(line);
                            }
                        }
                        drop(stdin);
                        let _ = c.wait();
                    });
                }
            });
            assert!(
                Instant::now() < deadline,
                "{what}: a writer waited past five minutes"
            );
            let text = fs::read_to_string(&log).unwrap();
            let previews: Vec<String> = text
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|r| r["preview"].as_str().map(str::to_string))
                .collect();
            let answered = answered.into_inner().unwrap();
            eprintln!(
                "{what}: {} calls answered, {} records",
                answered.len(),
                previews.len()
            );
            assert!(
                answered.len() >= 12,
                "{what}: too few calls answered: {answered:?}"
            );
            for line in &answered {
                assert!(
                    previews.iter().any(|p| p.contains(line.as_str())),
                    "{what}: `{line}` was answered but has no record"
                );
            }
            let v = Command::new(cordon)
                .args(["audit", "verify"])
                .arg(&log)
                .output()
                .unwrap();
            assert_eq!(v.status.code(), Some(0), "{what}: {}", describe(&v));
            let next = command(
                &["exec", "--policy", p, "--approve-all", "--", "true"],
                None,
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
            assert_eq!(
                next.status.code(),
                Some(0),
                "{what}: the next run: {}",
                describe(&next)
            );
        }
    }
}
