//! A sandbox prepared once and run many times (the MCP server's way) grants each run what the
//! policy's paths name at that run, not what they named when it was prepared: the Landlock
//! backend opens the rules' paths once, and a run must notice a path that now names another
//! file (a system file replaced by a rename, a directory deleted and made again).

#![cfg(target_os = "linux")]

use cordon_ossandbox::{prepare, Command, Io, Machine, Outcome};
use cordon_policy::{Backend, Policy};

fn grep(dir: &std::path::Path, word: &str, file: &str) -> Command {
    Command {
        program: "/bin/grep".into(),
        args: vec!["-q".into(), word.into(), dir.join(file).into_os_string()],
        cwd: dir.join("ws"),
        timeout: None,
    }
}

#[test]
fn landlock_runs_follow_paths_replaced_since_prepare() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir(base.join("ws")).expect("mkdir ws");
    std::fs::create_dir(base.join("data")).expect("mkdir data");
    std::fs::write(base.join("data/f"), "first\n").expect("write");
    std::fs::write(base.join("info.txt"), "first\n").expect("write");
    std::fs::write(base.join("secret.txt"), "second\n").expect("write");
    let policy = Policy::parse(
        "version = 1\n[sandbox]\nextra_read = [\"data\", \"info.txt\"]\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "cordon.toml",
        &base,
    )
    .expect("policy");
    let sandbox = prepare(&policy, &Machine::probe(), Backend::Landlock)
        .unwrap_or_else(|e| panic!("Landlock must be usable here: {e}"));
    let status = |c: Command| match sandbox.run(c, Io::default()).expect("run").exit {
        Ok(Outcome::Exited(code)) => code,
        other => panic!("the command did not exit: {other:?}"),
    };
    // grep -q: 0 found, 1 not found, 2 cannot read the file.
    assert_eq!(status(grep(&base, "first", "info.txt")), 0);
    assert_eq!(status(grep(&base, "first", "data/f")), 0);
    assert_eq!(
        status(grep(&base, "second", "secret.txt")),
        2,
        "a file outside the policy is not readable"
    );

    // Replaced the way editors, package managers and resolvers replace files: a new file
    // renamed over the old name. And a directory deleted and made again.
    std::fs::write(base.join("info.new"), "second\n").expect("write");
    std::fs::rename(base.join("info.new"), base.join("info.txt")).expect("rename");
    std::fs::remove_dir_all(base.join("data")).expect("rm data");
    std::fs::create_dir(base.join("data")).expect("mkdir data");
    std::fs::write(base.join("data/f"), "second\n").expect("write");
    assert_eq!(
        status(grep(&base, "second", "info.txt")),
        0,
        "the file now at a granted name is readable"
    );
    assert_eq!(
        status(grep(&base, "second", "data/f")),
        0,
        "the directory now at a granted name is readable"
    );
    // The file that was granted is not reachable through another name it has now.
    std::fs::rename(base.join("info.txt"), base.join("moved.txt")).expect("rename");
    std::fs::rename(base.join("secret.txt"), base.join("info.txt")).expect("rename");
    assert_eq!(status(grep(&base, "second", "info.txt")), 0);
    assert_eq!(
        status(grep(&base, "second", "moved.txt")),
        2,
        "a file that left the granted name is not readable at its new one"
    );
}
