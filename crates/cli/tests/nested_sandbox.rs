//! `cordon exec` inside another sandbox: Codex's own (`codex sandbox`, Codex 0.171's Linux
//! sandbox with its `workspace-write` settings, from `scripts/test-deps.sh`), as the user the
//! tests run as and as the unprivileged `cordon-test`. Inside it every process is in a user
//! namespace without capabilities, under no_new_privs and a seccomp filter refusing inet and
//! netlink sockets, with everything but the project and /tmp read-only. cordon must apply
//! every layer it still can, record what it could not, and refuse only what it cannot enforce,
//! naming the outer sandbox and the setting that would let it run.

mod common;
mod hosts_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use hosts_support::{host_bin, unprivileged, wait_deadline, POLICY};

/// A git project (the workspace root `root` below it holds the policy's writable root),
/// CODEX_HOME outside /tmp (Codex makes its helpers there), the audit log in /tmp (which
/// Codex's sandbox leaves writable), owned by `user`.
struct Outer {
    project: tempfile::TempDir,
    codex_home: tempfile::TempDir,
    state: tempfile::TempDir,
    /// Outside cordon's roots, in /tmp, which Codex's sandbox leaves writable.
    other: tempfile::TempDir,
    user: Option<(u32, u32)>,
}

impl Outer {
    fn new(user: Option<(u32, u32)>, policy: &str) -> Outer {
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        assert!(Command::new("git")
            .args(["init", "-q"])
            .current_dir(p)
            .status()
            .unwrap()
            .success());
        // Codex's sandbox binds these read-only and fails on a missing one.
        for d in [
            ".agents", ".codex", ".aws", ".ssh", ".gnupg", ".docker", ".kube", ".config", "sub",
        ] {
            std::fs::create_dir_all(p.join(d)).unwrap();
        }
        std::fs::write(p.join("cordon.toml"), policy).unwrap();
        let o = Outer {
            project,
            codex_home: tempfile::tempdir_in("/var/tmp").unwrap(),
            state: tempfile::tempdir().unwrap(),
            other: tempfile::tempdir().unwrap(),
            user,
        };
        if let Some((uid, gid)) = user {
            for d in [
                o.project.path(),
                o.codex_home.path(),
                o.state.path(),
                o.other.path(),
            ] {
                assert!(Command::new("chown")
                    .arg("-R")
                    .arg(format!("{uid}:{gid}"))
                    .arg(d)
                    .status()
                    .unwrap()
                    .success());
            }
        }
        o
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    /// `cordon exec --policy cordon.toml -- sh -c LINE` in `cwd` (below the project), inside
    /// Codex's `workspace-write` sandbox.
    fn exec(&self, cwd: &Path, line: &str) -> Output {
        let mut c = Command::new(host_bin("codex"));
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            c.uid(uid).gid(gid);
        }
        c.current_dir(cwd)
            .args(["sandbox", "-c", "sandbox_mode=\"workspace-write\"", "--"])
            .arg(env!("CARGO_BIN_EXE_cordon"))
            .arg("exec")
            .arg("--policy")
            .arg(self.dir().join("cordon.toml"))
            .args(["--", "sh", "-c", line])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", self.codex_home.path())
            .env("CODEX_HOME", self.codex_home.path())
            .env("XDG_STATE_HOME", self.state.path())
            .env("XDG_CONFIG_HOME", self.state.path().join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        wait_deadline(c.spawn().unwrap(), Duration::from_secs(120))
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state.path().join("cordon/audit.jsonl")).unwrap_or_default()
    }

    fn root(&self) -> bool {
        self.user.is_none() && rustix::process::geteuid().is_root()
    }
}

/// A script of writes the kernel must refuse (in a file, out of the line's static analysis,
/// so only the sandbox can stop them), written to `cwd`; and a host /tmp file that must not
/// appear (Codex's sandbox alone leaves /tmp writable: cordon's private /tmp keeps it).
fn probes(o: &Outer, cwd: &Path, extra: &str) -> (String, PathBuf) {
    let host_tmp = PathBuf::from(format!(
        "/tmp/cordon-nested-{}-{}",
        std::process::id(),
        o.user.map_or(0, |u| u.0)
    ));
    std::fs::write(
        cwd.join("probe.sh"),
        format!(
            "echo x > /etc/cordon-nested-probe || echo etc-refused\n\
             echo x > {}/outside || echo outside-refused\n\
             echo x > {}\necho ok > made\necho uid=$(id -u)\n{extra}\n",
            o.other.path().display(),
            host_tmp.display()
        ),
    )
    .unwrap();
    if let Some((uid, gid)) = o.user {
        std::os::unix::fs::chown(cwd.join("probe.sh"), Some(uid), Some(gid)).unwrap();
    }
    ("sh ./probe.sh".into(), host_tmp)
}

/// The default policy (its remembered-rules file inside the writable root): bwrap stacked
/// inside Codex's sandbox, in Codex's network namespace, as a user; refused as root.
fn default_policy(user: Option<(u32, u32)>) {
    let o = Outer::new(user, POLICY);
    let (line, host_tmp) = probes(
        &o,
        o.dir(),
        "echo x >> cordon.rules.toml || echo rules-refused",
    );
    let out = o.exec(o.dir(), &line);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    if o.root() {
        // bwrap cannot start as root without capabilities, and Landlock cannot keep the
        // rules file read-only: refused, naming Codex and what lets cordon run.
        assert_eq!(out.status.code(), Some(125), "{stdout}{stderr}");
        assert!(
            stderr.contains("root without capabilities inside Codex's sandbox")
                && stderr.contains("-s danger-full-access")
                && stderr.contains("cordon.rules.toml"),
            "{stderr}"
        );
        assert!(!o.dir().join("made").exists());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    for want in ["etc-refused", "outside-refused", "rules-refused"] {
        assert!(stdout.contains(want), "{want}: {stdout}{stderr}");
    }
    assert!(o.dir().join("made").exists() && !o.other.path().join("outside").exists());
    // bwrap's placeholder for the missing rules file may stay; the write never landed.
    let rules = std::fs::read_to_string(o.dir().join("cordon.rules.toml")).unwrap_or_default();
    assert!(
        !rules.lines().any(|l| l == "x"),
        "the rules file was written: {rules:?}"
    );
    assert!(
        !host_tmp.exists(),
        "{} reached the host's /tmp",
        host_tmp.display()
    );
    // Everything the policy asks is enforced (the network by cordon's seccomp and Codex's):
    // nothing recorded as less.
    assert!(!o.audit().contains("enforced less"), "{}", o.audit());
}

#[test]
fn default_policy_inside_codex_as_the_test_user() {
    default_policy(None);
}

#[test]
fn default_policy_inside_codex_as_an_unprivileged_user() {
    default_policy(unprivileged());
}

/// A policy with nothing protected inside its writable root (`sub`; the rules file lies
/// above it): as root, Landlock + seccomp alone, the gap named on stderr and in the audit.
fn unprotected_policy(user: Option<(u32, u32)>) {
    let policy = POLICY
        .replace("root = \".\"", "root = \"sub\"")
        .replace("[sandbox]\n", "[sandbox]\ngit = \"writable\"\n");
    let o = Outer::new(user, &policy);
    let (line, host_tmp) = probes(&o, &o.dir().join("sub"), "");
    let out = o.exec(&o.dir().join("sub"), &line);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    for want in ["etc-refused", "outside-refused"] {
        assert!(stdout.contains(want), "{want}: {stdout}{stderr}");
    }
    assert!(o.dir().join("sub/made").exists());
    assert!(!o.other.path().join("outside").exists());
    assert!(
        !host_tmp.exists(),
        "{} reached the host's /tmp",
        host_tmp.display()
    );
    let gap = "running as root without capabilities inside Codex's sandbox";
    if o.root() {
        assert!(
            stderr.contains(&format!("cordon: warning: {gap}")),
            "{stderr}"
        );
        let audit = o.audit();
        assert!(
            audit.contains(&format!("\"enforcement\":\"partial: {gap}")),
            "{audit}"
        );
    } else {
        assert!(!stderr.contains(gap), "{stderr}");
    }
}

#[test]
fn unprotected_policy_inside_codex_as_the_test_user() {
    unprotected_policy(None);
}

#[test]
fn unprotected_policy_inside_codex_as_an_unprivileged_user() {
    unprotected_policy(unprivileged());
}

/// `sandbox.network = "proxy"` needs loopback of the command's own, which Codex's sandbox
/// refuses (netlink): refused, naming Codex's setting.
#[test]
fn proxy_inside_codex_is_refused_naming_the_setting() {
    let policy = POLICY.replace("[sandbox]\n", "[sandbox]\nnetwork = \"proxy\"\n");
    let o = Outer::new(unprivileged(), &policy);
    let out = o.exec(o.dir(), "echo ran > made");
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("sandbox_workspace_write.network_access = true")
            && stderr.contains("Codex's sandbox"),
        "{stderr}"
    );
    assert!(!o.dir().join("made").exists());
}
