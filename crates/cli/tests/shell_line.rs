//! Issue 13 through the binary: `exec -c` runs the line with bash where installed (the shell
//! the analysis models), and `check`/`exec` judge writes to cordon's own files and network
//! redirections as the shell tool does.

mod common;
use common::{cordon, stderr, stdout, workspace};

const ALLOW_ALL: &str = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\n";

#[test]
fn exec_c_runs_bash_where_installed() {
    let d = workspace(ALLOW_ALL);
    let o = cordon(
        d.path(),
        &[
            "exec",
            "-c",
            "if [[ -n $BASH_VERSION ]]; then echo bash; else echo sh; fi",
        ],
    );
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    let want = if bash { "bash\n" } else { "sh\n" };
    // dash has no `[[`: it fails the test and prints `sh`.
    assert_eq!(stdout(&o), want, "{}", stderr(&o));
}

#[test]
fn check_denies_writes_to_the_policy_and_network_redirections() {
    let d = workspace(ALLOW_ALL);
    for (line, rule) in [
        ("echo x >> cordon.toml", "builtin:policy-file"),
        (
            "echo '[[shell.rules]]' > cordon.rules.toml",
            "builtin:policy-file",
        ),
        ("cat < /dev/tcp/127.0.0.1/9", "builtin:network"),
    ] {
        let o = cordon(d.path(), &["check", "--json", "shell", "-c", line]);
        assert_eq!(o.status.code(), Some(2), "a deny exits 2: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["decision"], "deny", "{line}: {v}");
        assert_eq!(v["rule"], rule, "{line}: {v}");
    }
    // exec refuses it before anything runs, and the policy is untouched.
    let before = std::fs::read(d.path().join("cordon.toml")).unwrap();
    let o = cordon(d.path(), &["exec", "-c", "echo 'x = 1' >> cordon.toml"]);
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("cordon: denied"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.path().join("cordon.toml")).unwrap(), before);
}

#[test]
fn check_asks_for_a_command_named_by_path() {
    let d = workspace(
        "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n",
    );
    for (line, want) in [
        ("ls", "allow"),
        ("/usr/bin/ls", "allow"),
        ("./ls", "ask"),
        ("/tmp/evil/ls", "ask"),
    ] {
        let o = cordon(d.path(), &["check", "--json", "shell", "-c", line]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["decision"], want, "{line}: {v}");
    }
}
