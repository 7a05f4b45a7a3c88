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
