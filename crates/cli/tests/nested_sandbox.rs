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
        // One Codex sandbox at a time in this process: Codex makes synthetic mount targets in
        // the shared /tmp (`/tmp/.aws`, …) and removes them afterwards, so a root run and a
        // user's run at once collide there (the user's Codex panicked: "failed to remove
        // synthetic bubblewrap mount target /tmp/.aws: Operation not permitted").
        static ONE_CODEX: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = ONE_CODEX.lock().unwrap_or_else(|e| e.into_inner());
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

/// A hand-made outer sandbox, as issue 23 describes one: bubblewrap with its own user, PID and
/// network namespaces, `/` read-only but for the project and the audit log's directory, no
/// capabilities (as Codex's: root there is root without any), and a seccomp filter (classic BPF written here, independent of
/// cordon's compiler) refusing `socket()` of AF_INET, AF_INET6 and AF_NETLINK with EPERM.
#[cfg(target_arch = "x86_64")]
fn in_hand_made_outer(o: &Outer, cwd: &Path, line: &str) -> Output {
    in_bwrap_outer(o, cwd, line, false)
}

/// [`in_hand_made_outer`]; `caps`: root keeps its capabilities in the outer's user namespace
/// (bwrap's default), where bwrap covers /proc/irq and /proc/bus with read-only mounts.
#[cfg(target_arch = "x86_64")]
fn in_bwrap_outer(o: &Outer, cwd: &Path, line: &str, caps: bool) -> Output {
    const LD_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    let prog: [(u16, u8, u8, u32); 10] = [
        (LD_ABS, 0, 0, 4),            // arch
        (JEQ, 0, 6, 0xc000_003e),     // AUDIT_ARCH_X86_64, else allow
        (LD_ABS, 0, 0, 0),            // syscall number
        (JEQ, 0, 4, 41),              // socket, else allow
        (LD_ABS, 0, 0, 16),           // args[0], the family
        (JEQ, 3, 0, 2),               // AF_INET
        (JEQ, 2, 0, 10),              // AF_INET6
        (JEQ, 1, 0, 16),              // AF_NETLINK
        (RET, 0, 0, 0x7fff_0000),     // SECCOMP_RET_ALLOW
        (RET, 0, 0, 0x0005_0000 | 1), // SECCOMP_RET_ERRNO | EPERM
    ];
    let mut bytes = Vec::new();
    for (code, jt, jf, k) in prog {
        bytes.extend_from_slice(&code.to_ne_bytes());
        bytes.push(jt);
        bytes.push(jf);
        bytes.extend_from_slice(&k.to_ne_bytes());
    }
    let bpf = o.other.path().join("outer.bpf");
    std::fs::write(&bpf, bytes).unwrap();
    // Inherited by bwrap (no O_CLOEXEC), which reads the filter from it.
    let fd = rustix::fs::open(&bpf, rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty()).unwrap();
    let fd_no = std::os::fd::AsRawFd::as_raw_fd(&fd);
    let mut c = Command::new("/usr/bin/bwrap");
    if let Some((uid, gid)) = o.user {
        use std::os::unix::process::CommandExt;
        c.uid(uid).gid(gid);
    }
    let bind = |c: &mut Command, p: &Path| {
        c.arg("--bind").arg(p).arg(p);
    };
    if !caps {
        c.args(["--cap-drop", "ALL"]);
    }
    c.args([
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]);
    for p in [o.dir(), o.state.path(), o.other.path()] {
        bind(&mut c, p);
    }
    // The binary under test, which may itself live below /tmp (a checkout there): the outer's
    // /tmp is a tmpfs of its own.
    let exe = Path::new(env!("CARGO_BIN_EXE_cordon"));
    c.arg("--ro-bind").arg(exe).arg(exe);
    c.arg("--seccomp")
        .arg(fd_no.to_string())
        .arg("--chdir")
        .arg(cwd)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .arg("exec")
        .arg("--policy")
        .arg(o.dir().join("cordon.toml"))
        .args(["--", "sh", "-c", line])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", o.codex_home.path())
        .env("XDG_STATE_HOME", o.state.path())
        .env("XDG_CONFIG_HOME", o.state.path().join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = wait_deadline(c.spawn().unwrap(), Duration::from_secs(120));
    drop(fd);
    out
}

/// Inside the hand-made outer sandbox: the outer's facts as cordon's doctor reports them,
/// then the same plan and confinement as inside Codex's.
#[cfg(target_arch = "x86_64")]
fn hand_made(user: Option<(u32, u32)>) {
    let o = Outer::new(user, POLICY);
    let (line, host_tmp) = probes(
        &o,
        o.dir(),
        "echo x >> cordon.rules.toml || echo rules-refused",
    );
    let out = in_hand_made_outer(&o, o.dir(), &line);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    if o.root() {
        // Root without capabilities: no bwrap, and the rules file inside the writable root
        // cannot be kept; refused, naming the outer sandbox and the way out.
        assert_eq!(out.status.code(), Some(125), "{stdout}{stderr}");
        assert!(
            stderr.contains("root without capabilities inside an outer sandbox")
                && stderr.contains("run cordon outside that sandbox"),
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
    let _ = host_tmp; // the outer's /tmp is a tmpfs of its own here
    assert!(!o.audit().contains("enforced less"), "{}", o.audit());
}

/// A rootless container's view: `unshare --user --map-root-user` (with its own network, PID
/// and mount namespaces and /proc). cordon is root there with capabilities, so its bwrap
/// runs, but nobody there may mknod: it keeps the outer's device nodes and names that gap on
/// stderr and in the audit, and everything else holds.
fn rootless_container(user: Option<(u32, u32)>) {
    let o = Outer::new(user, POLICY);
    let (line, host_tmp) = probes(
        &o,
        o.dir(),
        "echo x >> cordon.rules.toml || echo rules-refused",
    );
    let mut c = Command::new("unshare");
    if let Some((uid, gid)) = o.user {
        use std::os::unix::process::CommandExt;
        c.uid(uid).gid(gid);
    }
    c.args([
        "--user",
        "--map-root-user",
        "--net",
        "--pid",
        "--fork",
        "--mount",
        "--mount-proc",
    ])
    .current_dir(o.dir())
    .arg(env!("CARGO_BIN_EXE_cordon"))
    .arg("exec")
    .arg("--policy")
    .arg(o.dir().join("cordon.toml"))
    .args(["--", "sh", "-c", &line])
    .env_clear()
    .env("PATH", std::env::var_os("PATH").unwrap())
    .env("HOME", o.codex_home.path())
    .env("XDG_STATE_HOME", o.state.path())
    .env("XDG_CONFIG_HOME", o.state.path().join("config"))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let out = wait_deadline(c.spawn().unwrap(), Duration::from_secs(120));
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    for want in ["etc-refused", "outside-refused", "rules-refused", "uid=0"] {
        assert!(stdout.contains(want), "{want}: {stdout}{stderr}");
    }
    assert!(o.dir().join("made").exists() && !o.other.path().join("outside").exists());
    assert!(
        !host_tmp.exists(),
        "{} reached the host's /tmp",
        host_tmp.display()
    );
    let gap = "running as root in the user namespace of an outer sandbox, which refuses mknod";
    assert!(stderr.contains(gap), "{stderr}");
    assert!(
        o.audit()
            .contains(&format!("\"enforcement\":\"partial: {gap}")),
        "{}",
        o.audit()
    );
}

#[test]
fn rootless_container_outer_as_the_test_user() {
    rootless_container(None);
}

#[test]
fn rootless_container_outer_as_an_unprivileged_user() {
    rootless_container(unprivileged());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn hand_made_outer_sandbox_as_the_test_user() {
    hand_made(None);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn hand_made_outer_sandbox_as_an_unprivileged_user() {
    hand_made(unprivileged());
}

/// A rootful bwrap as the outer: root keeps its capabilities in the outer's user namespace,
/// but bwrap covered part of /proc, so no fresh /proc can be mounted in a user namespace:
/// cordon's bwrap cannot start. With protected paths in the root: refused, naming why; without:
/// Landlock + seccomp, the gap named. (As another user the outer covers nothing: all runs.)
#[cfg(target_arch = "x86_64")]
#[test]
fn rootful_bwrap_outer_with_proc_covered() {
    let o = Outer::new(None, POLICY);
    let (line, _) = probes(&o, o.dir(), "");
    let out = in_bwrap_outer(&o, o.dir(), &line, true);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    if !o.root() {
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert!(
            stdout.contains("etc-refused") && stdout.contains("outside-refused"),
            "{stdout}"
        );
        return;
    }
    assert_eq!(out.status.code(), Some(125), "{stdout}{stderr}");
    assert!(
        stderr.contains("part of /proc inside an outer sandbox is covered by another mount"),
        "{stderr}"
    );
    assert!(!o.dir().join("made").exists());
    let policy = POLICY
        .replace("root = \".\"", "root = \"sub\"")
        .replace("[sandbox]\n", "[sandbox]\ngit = \"writable\"\n");
    let o = Outer::new(None, &policy);
    let (line, _) = probes(&o, &o.dir().join("sub"), "");
    let out = in_bwrap_outer(&o, &o.dir().join("sub"), &line, true);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("etc-refused") && stdout.contains("outside-refused"),
        "{stdout}"
    );
    assert!(o.dir().join("sub/made").exists() && !o.other.path().join("outside").exists());
    let gap =
        "running as root (part of its /proc covered by another mount) inside an outer sandbox";
    assert!(stderr.contains(gap), "{stderr}");
    assert!(
        o.audit()
            .contains(&format!("\"enforcement\":\"partial: {gap}")),
        "{}",
        o.audit()
    );
}
