//! `cordon check network HOST:PORT`: the `[network]` section's verdict on a connection, from a
//! real policy file (deny wins, subdomains, ports, the default, IDNA), and garbage refused.

mod common;
use common::{cordon, stderr, stdout};

use serde_json::Value;

const POLICY: &str = r#"version = 1
[network]
default = "ask"
allow = ["index.example.net:443", "files.example.net:443", "*.example.org", "bücher.example:80", "10.0.0.5:5432", "[::1]:8080"]
deny = ["evil.example.org", "10.0.0.5"]
[sandbox]
network = "proxy"
"#;

fn workspace() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cordon.toml"), POLICY).unwrap();
    common::trust(d.path());
    d
}

fn verdict(d: &tempfile::TempDir, target: &str) -> (String, String, String) {
    let o = cordon(d.path(), &["check", "--json", "network", target]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The exit code is the decision's: 0 allow, 1 ask, 2 deny.
    let code = ["allow", "ask", "deny"]
        .iter()
        .position(|d| v["decision"] == *d)
        .unwrap() as i32;
    assert_eq!(o.status.code(), Some(code), "{target}: {}", stderr(&o));
    (
        v["decision"].as_str().unwrap().to_string(),
        v["keys"][1].as_str().unwrap().to_string(),
        v["rule"].as_str().unwrap().to_string(),
    )
}

#[test]
fn the_network_section_decides_host_and_port() {
    let d = workspace();
    let at = d.path().join("cordon.toml").canonicalize().unwrap();
    let at = at.display();
    let cases = [
        (
            "index.example.net:443",
            "allow",
            "index.example.net:443",
            format!("{at}:4:10 (network index.example.net:443)"),
        ),
        (
            "Index.Example.NET.:443",
            "allow",
            "index.example.net:443",
            format!("{at}:4:10 (network index.example.net:443)"),
        ),
        (
            "index.example.net:80",
            "ask",
            "index.example.net:80",
            "default".into(),
        ),
        (
            "a.b.example.org:22",
            "allow",
            "a.b.example.org:22",
            format!("{at}:4:60 (network *.example.org:*)"),
        ),
        (
            "example.org:443",
            "ask",
            "example.org:443",
            "default".into(),
        ),
        // Deny wins over the subdomain allow, whatever the order.
        (
            "Evil.Example.org:443",
            "deny",
            "evil.example.org:443",
            format!("{at}:5:9 (network evil.example.org:*)"),
        ),
        (
            "BÜCHER.example:80",
            "allow",
            "xn--bcher-kva.example:80",
            format!("{at}:4:77 (network xn--bcher-kva.example:80)"),
        ),
        // The address is denied on every port: the deny entry wins over `10.0.0.5:5432`.
        (
            "10.0.0.5:5432",
            "deny",
            "10.0.0.5:5432",
            format!("{at}:5:29 (network 10.0.0.5:*)"),
        ),
        (
            "[::ffff:10.0.0.5]:5432",
            "deny",
            "10.0.0.5:5432",
            format!("{at}:5:29 (network 10.0.0.5:*)"),
        ),
        (
            "[::1]:8080",
            "allow",
            "[::1]:8080",
            format!("{at}:4:115 (network \\[::1\\]:8080)"),
        ),
        ("[0::1]:8081", "ask", "[::1]:8081", "default".into()),
    ];
    for (target, decision, key, rule) in cases {
        assert_eq!(
            verdict(&d, target),
            (decision.to_string(), key.to_string(), rule),
            "{target}"
        );
    }
}

#[test]
fn human_output_and_garbage() {
    let d = workspace();
    let o = cordon(
        d.path(),
        &["check", "network", "target=files.example.net:443"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "decision: allow\nreason:   `files.example.net:443` is in the [network] allow list"
        ),
        "{out}"
    );
    assert!(
        out.contains("keys:     network files.example.net:443\n"),
        "{out}"
    );
    for (args, needle) in [
        (vec!["check", "network", "0x7f.1:80"], "reads as a number"),
        (vec!["check", "network", "github.com"], "has no port"),
        (vec!["check", "network", "::1:80"], "in brackets"),
        (vec!["check", "network", "a:1", "b:2"], "give one HOST:PORT"),
        (vec!["check", "network"], "give one HOST:PORT"),
    ] {
        let o = cordon(d.path(), &args);
        assert_eq!(o.status.code(), Some(125), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.starts_with("cordon: network: ") && e.contains(needle),
            "{args:?}: {e}"
        );
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn no_network_section_denies_every_host_and_tools_cannot_take_the_name() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cordon.toml"), "version = 1\n").unwrap();
    common::trust(d.path());
    let (decision, _, rule) = verdict(&d, "github.com:443");
    assert_eq!((decision.as_str(), rule.as_str()), ("deny", "default"));

    std::fs::write(
        d.path().join("cordon.toml"),
        "version = 1\n[tools.network]\napproval = \"allow\"\n",
    )
    .unwrap();
    common::trust(d.path());
    let o = cordon(d.path(), &["check", "read_file", "path=x"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("[tools.network] configures a built-in tool"),
        "{}",
        stderr(&o)
    );
}

/// `cordon check network METHOD URL`: a request on a terminated host, decided by
/// `[[network.requests]]` after its connection (a connection not allowed is what is shown).
#[test]
fn a_request_is_checked_by_method_and_url() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[network]\nallow = [\"api.example.org\"]\n\
         [[network.requests]]\nmethod = \"GET\"\nurl = \"api.example.org/repos/**\"\naction = \"allow\"\n\
         [[network.requests]]\nmethod = \"POST\"\nurl = \"api.example.org\"\naction = \"ask\"\n\
         [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.example.org\"\naction = \"deny\"\n\
         [[network.requests]]\nmethod = \"*\"\nurl = \"api.example.org/admin/**\"\naction = \"deny\"\n",
    )
    .unwrap();
    common::trust(d.path());
    for (method, url, decision, key) in [
        (
            "GET",
            "https://api.example.org/repos/a/b?page=2",
            "allow",
            "api.example.org:443/repos/a/b",
        ),
        (
            "get",
            "https://API.example.org:443/users",
            "allow",
            "api.example.org:443/users",
        ),
        (
            "POST",
            "https://api.example.org/issues",
            "ask",
            "api.example.org:443/issues",
        ),
        (
            "DELETE",
            "https://api.example.org/repos/a",
            "deny",
            "api.example.org:443/repos/a",
        ),
        // Round 8 (issue 21): decided on what the server reads, as the proxy decides it.
        (
            "GET",
            "https://api.example.org/%61dmin/x",
            "deny",
            "api.example.org:443/admin/x",
        ),
        (
            "GET",
            "https://api.example.org/admin;x/y",
            "deny",
            "api.example.org:443/admin/y",
        ),
    ] {
        let o = cordon(d.path(), &["check", "--json", "network", method, url]);
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
        assert_eq!(v["decision"], decision, "{method} {url}: {v}");
        assert_eq!(v["tool"], "http", "{v}");
        assert_eq!(v["keys"][2], key, "{v}");
        let code = ["allow", "ask", "deny"]
            .iter()
            .position(|x| *x == decision)
            .unwrap() as i32;
        assert_eq!(o.status.code(), Some(code));
    }
    // A path servers resolve differently is refused, as the proxy refuses it.
    let o = cordon(
        d.path(),
        &[
            "check",
            "network",
            "GET",
            "https://api.example.org/repos/../admin/x",
        ],
    );
    // Refused (126), as the gate refuses what it cannot decide.
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(stderr(&o).contains("`..` segment"), "{}", stderr(&o));
    // The connection decides first.
    let o = cordon(
        d.path(),
        &[
            "check",
            "--json",
            "network",
            "GET",
            "https://other.example.org/x",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["decision"].as_str(), v["tool"].as_str()),
        (Some("deny"), Some("network"))
    );
    // Not an https:// URL: a usage error.
    let o = cordon(
        d.path(),
        &["check", "network", "GET", "http://api.example.org/"],
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("is not an https:// URL"),
        "{}",
        stderr(&o)
    );
}
