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
