//! `cordon exec` under `sandbox.network = "proxy"`: curl in the sandbox reaches the allowed
//! name through cordon's proxy and nothing else; `cordon audit show` prints the connection
//! records and `cordon audit verify` finds the chain intact.

mod common;
use common::{cordon, stderr, stdout, web_server};

#[test]
fn exec_reaches_the_allowed_host_and_the_log_shows_the_connections() {
    assert!(
        std::path::Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let port = web_server();
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("audit.jsonl");
    std::fs::write(
        d.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
             [[shell.rules]]\npattern = \"curl *\"\naction = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\nallow = [\"web.test:{port}\"]\n[network.hosts]\n\"web.test\" = \"127.0.0.1\"\n",
            log.display()
        ),
    )
    .unwrap();
    common::trust(d.path());

    let o = cordon(
        d.path(),
        &[
            "exec",
            "--",
            "curl",
            "-sS",
            &format!("http://web.test:{port}/pip"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "GET /pip HTTP/1.1");
    // Another port of the same name is not allowed: the proxy's 403 says so.
    let o = cordon(
        d.path(),
        &[
            "exec",
            "--",
            "curl",
            "-sS",
            &format!("http://web.test:{}/", port ^ 1),
        ],
    );
    assert!(
        stdout(&o).starts_with(&format!(
            "cordon: the connection to web.test:{} is refused by the policy",
            port ^ 1
        )),
        "{}",
        stdout(&o)
    );

    let o = cordon(d.path(), &["audit", "verify", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains(": intact"), "{}", stdout(&o));
    let o = cordon(d.path(), &["audit", "show", log.to_str().unwrap()]);
    let out = stdout(&o);
    // exec's decision on curl, the connection's decision, its open and close; then the second
    // run's decision on curl, the refused connection's decision and its close.
    assert_eq!(out.lines().count(), 7, "{out}");
    assert!(
        out.lines().any(|l| l.contains(&format!(
            "allow network network web.test:{port} by connection"
        )) && l.contains(&format!(
            "[close web.test:{port} (http) via 127.0.0.1:{port}: "
        ))),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.contains(&format!(
            "deny  network network web.test:{} by rule",
            port ^ 1
        )) || l.contains(&format!(
            "deny  network network web.test:{} by default",
            port ^ 1
        ))),
        "{out}"
    );
}

/// A SIGTERM to cordon during a proxied run is forwarded to the command, which ends with it
/// (143), on both backends — not delivered to one of the proxy's threads, which would kill
/// cordon itself, unforwarded.
#[test]
fn a_signal_during_a_proxied_run_is_forwarded_to_the_command() {
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("w")).unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \"w\"\nmode = \"rw\"\n\
             [[shell.rules]]\npattern = \"sh *\"\naction = \"allow\"\n\
             [[shell.rules]]\npattern = \"touch **\"\naction = \"allow\"\n\
             [[shell.rules]]\npattern = \"sleep *\"\naction = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n[network]\nallow = [\"a.test:80\"]\n",
            state.path().join("audit.jsonl").display()
        ),
    )
    .unwrap();
    common::trust(d.path());
    for backend in ["landlock", "bwrap"] {
        let started = d.path().join("w/started");
        let _ = std::fs::remove_file(&started);
        let mut child = common::command(d.path())
            .args(["exec", "--backend", backend, "--", "sh", "-c"])
            .arg("touch w/started; exec sleep 60")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !started.exists() {
            if let Some(st) = child.try_wait().unwrap() {
                panic!("{backend}: cordon ended before the command started: {st}");
            }
            assert!(
                std::time::Instant::now() < end,
                "{backend}: the command never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.signal(), None, "{backend}: cordon was killed: {err}");
        assert_eq!(status.code(), Some(143), "{backend}: {err}");
    }
}

/// What the operator sees, rendered by a real terminal emulator (tmux): cordon's report of a
/// refused connection, printed after the run, is the last thing on the screen (issue 21, round
/// 9). The command printed lines that say all is well, then moved the cursor back up over
/// them: cordon's report was written over the first of them, and the rest stood below it, so
/// the screen ended with the command's "nothing was blocked" under cordon's refusal.
#[test]
fn cordons_report_after_the_run_is_not_followed_by_the_commands_text() {
    assert!(
        std::path::Path::new("/usr/bin/tmux").exists(),
        "this test renders the terminal with tmux: install it (apt-get install tmux)"
    );
    assert!(
        std::path::Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let d = common::workspace(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
         [shell]\ndefault = \"allow\"\n[network]\ndefault = \"deny\"\n",
    );
    std::fs::write(
        d.path().join("draw.sh"),
        "for i in 1 2 3 4 5 6; do printf '%90s\\n' 'all checks passed, nothing was blocked'; done\n\
         curl -s -o /dev/null http://blocked.example/\n\
         printf '\\033[6A'\n",
    )
    .unwrap();
    // The terminal runs this script: cordon with the tests' state and trust, then a marker.
    let run = d.path().join("run.sh");
    std::fs::write(
        &run,
        format!(
            "export XDG_STATE_HOME='{}' XDG_CONFIG_HOME='{}' LANG=C.UTF-8\nunset LC_ALL LC_CTYPE CORDON_POLICY CORDON_SESSION\n\
             cd '{}' && '{}' exec -- sh draw.sh; echo \"EXIT=$?\"; sleep 600\n",
            common::state_home().display(),
            common::config_home().display(),
            d.path().display(),
            env!("CARGO_BIN_EXE_cordon"),
        ),
    )
    .unwrap();
    let socket = format!("cordon-test-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = tmux(&[
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "30",
        &format!("sh {}", run.display()),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let screen = loop {
        let shown = String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
        if shown.contains("EXIT=") || std::time::Instant::now() > deadline {
            break shown;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    tmux(&["kill-server"]);
    assert!(screen.contains("EXIT=0"), "{screen}");
    let report = screen
        .find("cordon: blocked.example:80")
        .unwrap_or_else(|| panic!("no report on the screen:\n{screen}"));
    assert!(
        !screen[report..].contains("nothing was blocked"),
        "the command's text stands after cordon's report:\n{screen}"
    );
}
