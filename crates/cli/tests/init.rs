//! `cordon init`: the starter policy it writes loads, passes its own examples, is trusted as
//! written (so `exec` takes it without a trust error), decides as its comments say, and
//! protects a git repository's configuration for real (under bwrap, which this policy needs:
//! the file itself lies in the writable workspace).

mod common;
use common::{command, stderr, stdout};
use std::path::Path;
use std::process::{Output, Stdio};

/// `cordon ARGS…` in `dir`, no terminal.
fn cordon(dir: &Path, args: &[&str]) -> Output {
    command(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn sha256(path: &Path) -> String {
    let o = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils) is needed");
    stdout(&o).split_whitespace().next().unwrap().to_string()
}

/// `git init` in `dir`: real git, as the operator would have made the repository.
fn git_init(dir: &Path) {
    let o = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .output()
        .expect("git is needed for this test (Debian package `git`)");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `cordon check --json shell -c LINE` in `dir`: (decision, reason).
fn decision(dir: &Path, line: &str) -> (String, String) {
    let o = cordon(dir, &["check", "--json", "shell", "-c", line]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{line}: {e}: {}{}", stdout(&o), stderr(&o)));
    (
        v["decision"].as_str().unwrap().to_string(),
        v["reason"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn fresh_directory_gets_a_trusted_policy_that_loads_and_passes_its_examples() {
    let d = tempfile::tempdir().unwrap();
    let o = cordon(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let file = d.path().join("cordon.toml");
    let real = std::fs::canonicalize(&file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    // Not a repository: .git stays writable, so that `git init` works.
    assert!(text.contains("\ngit = \"writable\""), "{text}");
    assert!(!text.contains("\ngit = \"protect\""), "{text}");
    // What it wrote and that it is trusted, with the hash `cordon policy trust` prints.
    let out = stdout(&o);
    assert!(out.contains(&format!("wrote {}", file.display())), "{out}");
    assert!(
        out.contains(&format!(
            "trusted {} (sha256 {})",
            real.display(),
            sha256(&file)
        )),
        "{out}"
    );
    // Every example passes (the template has some), through discovery: it is trusted.
    let o = cordon(d.path(), &["policy", "test"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let summary = stdout(&o).lines().last().unwrap().to_string();
    assert!(summary.ends_with(" passed, 0 failed"), "{summary}");
    let passed: usize = summary.split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= 10, "{summary}");
}

#[test]
fn the_policy_documents_every_key() {
    let d = tempfile::tempdir().unwrap();
    assert!(cordon(d.path(), &["init"]).status.success());
    let text = std::fs::read_to_string(d.path().join("cordon.toml")).unwrap();
    for key in [
        "version",
        "backend",
        "require_os_sandbox",
        "network",
        "system_read",
        "extra_read",
        "protected",
        "git",
        "env",
        "root",
        "mode",
        "exec",
        "suffixes",
        "read_approval",
        "write_approval",
        "timeout",
        "default",
        "pattern",
        "action",
        "reason",
        "match",
        "not_match",
        "[tools.",
        "approval",
        "doom_loop",
        "audit_log",
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start_matches("# ").starts_with(key))
            .unwrap_or_else(|| panic!("no `{key}` in\n{text}"));
        // Each key carries its comment on its line or the line above.
        let i = text.lines().position(|l| l == line).unwrap();
        let above = if i > 0 {
            text.lines().nth(i - 1).unwrap()
        } else {
            ""
        };
        assert!(
            line.contains('#') || above.starts_with('#'),
            "`{key}` has no comment: {line}"
        );
    }
}

#[test]
fn decisions_follow_the_rules_it_wrote() {
    let d = tempfile::tempdir().unwrap();
    git_init(d.path());
    assert!(cordon(d.path(), &["init"]).status.success());
    for (line, want, reason) in [
        ("git status", "allow", ""),
        ("git log --oneline -5", "allow", ""),
        ("git diff --stat && ls -la", "allow", ""),
        ("git push origin main", "ask", "publishes work"),
        (
            "git push --force origin main",
            "deny",
            "rewrites remote history",
        ),
        (
            "git push origin main --force",
            "deny",
            "rewrites remote history",
        ),
        ("git push -f origin main", "deny", "rewrites remote history"),
        (
            "git reset --hard HEAD~1",
            "deny",
            "destroys uncommitted work",
        ),
        ("rm -rf /", "deny", "deletes the whole filesystem"),
        (
            "rm -rf /usr",
            "deny",
            "recursive delete of a top-level directory",
        ),
        (
            "sudo make install",
            "deny",
            "no privilege escalation from the agent",
        ),
        ("cargo build", "ask", ""),
        // A read-only rule does not allow what an option writes.
        ("git log --output=/tmp/x", "ask", ""),
    ] {
        let (got, why) = decision(d.path(), line);
        assert_eq!(got, want, "`{line}`: {why}");
        assert!(why.contains(reason), "`{line}`: {why}");
    }
}

#[test]
fn git_repository_configuration_stays_read_only_under_exec() {
    let d = tempfile::tempdir().unwrap();
    git_init(d.path());
    let o = cordon(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("a git repository"), "{}", stdout(&o));
    let text = std::fs::read_to_string(d.path().join("cordon.toml")).unwrap();
    assert!(text.contains("\ngit = \"protect\""), "{text}");
    // Landlock, its init keeping the configuration read-only (as root too, where it can make
    // its mount namespace: this machine can).
    assert!(
        stdout(&o).contains("on this machine it runs on landlock"),
        "{}",
        stdout(&o)
    );

    // exec takes the trusted file: no trust error, an allowed command runs.
    let o = cordon(d.path(), &["exec", "--", "git", "status", "--short"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("cordon.toml"), "{}", stdout(&o));
    // An unmatched command asks, and with no terminal is denied (126), not run.
    let o = cordon(d.path(), &["exec", "--", "touch", "made"]);
    assert_eq!(o.status.code(), Some(126), "{}", stderr(&o));
    assert!(!d.path().join("made").exists());

    // Approved, a write into the workspace works; into .git's hooks and config, the kernel
    // refuses it.
    let config = std::fs::read(d.path().join(".git/config")).unwrap();
    let o = cordon(
        d.path(),
        &[
            "exec",
            "--approve-all",
            "-c",
            "echo ok > made; echo x > .git/hooks/pre-commit; echo '[core]' >> .git/config; true",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("made")).unwrap(),
        "ok\n"
    );
    assert!(!d.path().join(".git/hooks/pre-commit").exists());
    assert_eq!(std::fs::read(d.path().join(".git/config")).unwrap(), config);
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );

    // Every decision is in the log the policy names, and the chain verifies.
    assert!(d.path().join(".cordon/audit.jsonl").is_file());
    let o = cordon(d.path(), &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn an_existing_file_is_kept_unless_forced_and_then_backed_up() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("cordon.toml");
    std::fs::write(&file, "# mine\n").unwrap();
    let o = cordon(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(125));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!("cordon: {} already exists", file.display()))
            && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "# mine\n");
    assert!(!d.path().join("cordon.toml.bak").exists());

    let o = cordon(d.path(), &["init", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bak = d.path().join("cordon.toml.bak");
    assert_eq!(std::fs::read_to_string(&bak).unwrap(), "# mine\n");
    assert!(
        stdout(&o).contains(&format!("to {}", bak.display())),
        "{}",
        stdout(&o)
    );
    let first = std::fs::read_to_string(&file).unwrap();
    assert!(first.starts_with("# cordon policy for this project"));
    assert!(cordon(d.path(), &["exec", "--", "ls"]).status.success());

    // Again: the earlier backup is not overwritten either.
    let o = cordon(d.path(), &["init", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&bak).unwrap(), "# mine\n");
    assert_eq!(
        std::fs::read_to_string(d.path().join("cordon.toml.bak.1")).unwrap(),
        first
    );

    // A directory under the name is refused even with --force, and left alone.
    let e = tempfile::tempdir().unwrap();
    std::fs::create_dir(e.path().join("cordon.toml")).unwrap();
    let o = cordon(e.path(), &["init", "--force"]);
    assert_eq!(o.status.code(), Some(125));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(e.path().join("cordon.toml").is_dir());
}

/// A symlink planted under the name is moved aside, never written through.
#[test]
fn a_link_under_the_name_is_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("elsewhere");
    std::fs::write(&target, "keep\n").unwrap();
    std::os::unix::fs::symlink(&target, d.path().join("cordon.toml")).unwrap();
    let o = cordon(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    let o = cordon(d.path(), &["init", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(std::fs::symlink_metadata(d.path().join("cordon.toml.bak"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!std::fs::symlink_metadata(d.path().join("cordon.toml"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A linked work tree (`.git` is a gitdir file): protected whole, so a command cannot re-point
/// it, and the file says why git cannot reach the repository from here.
#[test]
fn a_linked_work_tree_keeps_its_gitdir_file() {
    let d = tempfile::tempdir().unwrap();
    let main = d.path().join("main");
    std::fs::create_dir(&main).unwrap();
    git_init(&main);
    let git = |dir: &Path, args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    git(&main, &["commit", "-q", "--allow-empty", "-m", "x"]);
    git(&main, &["worktree", "add", "-q", "../linked"]);
    let linked = d.path().join("linked");
    let gitfile = std::fs::read(linked.join(".git")).unwrap();

    let o = cordon(&linked, &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(linked.join("cordon.toml")).unwrap();
    assert!(text.contains("\ngit = \"protect\""), "{text}");
    assert!(text.contains("(a linked work tree)"), "{text}");

    let o = cordon(
        &linked,
        &[
            "exec",
            "--approve-all",
            "-c",
            "echo 'gitdir: /tmp' > .git; true",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(linked.join(".git")).unwrap(), gitfile);
}

/// Round 10 (redwrite23): `cordon init` killed with SIGKILL at its write of the policy (by the
/// real strace, `-e inject` at its first `write`: the policy's text) left an empty
/// `cordon.toml` under the name. The next `cordon init` refused it ("already exists"), and a
/// `cordon policy trust` trusted the empty file, which then failed every call. Now the policy is
/// written whole under a temporary name and renamed onto its name without replacing anything: a
/// kill leaves no `cordon.toml`, and the next `cordon init` writes and trusts it.
#[test]
fn init_killed_at_its_write_leaves_no_part_of_the_policy() {
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    git_init(d.path());
    let inner = command(d.path());
    let mut c = std::process::Command::new("strace");
    c.args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=write"])
        .args(["-e", "inject=write:error=EIO:signal=SIGKILL:when=1", "--"])
        .arg(inner.get_program())
        .arg("init")
        .current_dir(d.path())
        .stdin(Stdio::null());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let o = c
        .output()
        .expect("strace is needed for this test (Debian package `strace`)");
    assert!(
        o.status.signal() == Some(9) || o.status.code() == Some(137),
        "not killed: {:?} {}",
        o.status,
        stderr(&o)
    );
    let p = d.path().join("cordon.toml");
    assert!(
        std::fs::symlink_metadata(&p).is_err(),
        "a part of the policy is under its name: {:?}",
        std::fs::read_to_string(&p)
    );
    let o = cordon(d.path(), &["init"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(decision(d.path(), "git status").0, "allow");
    assert_eq!(decision(d.path(), "git push --force origin main").0, "deny");
}
