//! The bwrap backend's inner stage, run for real outside bwrap: it must apply exactly the
//! ruleset it is given (plus the rules it opens itself), pass nothing of cordon's to the
//! command, and refuse (125, the command never started) on anything it cannot do.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::bwrap::{inner_args, INNER_STAGE};
use crate::landlock::{kernel_abi, prepare};
use crate::profile::{Access, PathRule, Profile};
use cordon_policy::{Limits, Network};

struct Fixture {
    dir: tempfile::TempDir,
    inner: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("cordon-inner");
    std::fs::write(&inner, INNER_STAGE).unwrap();
    std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir(dir.path().join("allowed")).unwrap();
    std::fs::write(dir.path().join("allowed/a.txt"), "inside\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "secret\n").unwrap();
    Fixture { dir, inner }
}

fn rule(path: &Path, access: Access) -> PathRule {
    PathRule {
        path: path.to_path_buf(),
        access,
        origin: "test".into(),
    }
}

/// The system directories a shell needs, read-only and executable.
fn system() -> Vec<PathRule> {
    ["/usr", "/bin", "/lib", "/lib64", "/etc/ld.so.cache"]
        .iter()
        .map(Path::new)
        .filter(|p| p.exists())
        .map(|p| rule(&std::fs::canonicalize(p).unwrap(), Access::READ_EXEC))
        .collect()
}

fn ruleset(rules: Vec<PathRule>) -> OwnedFd {
    let profile = Profile {
        rules,
        protected: vec![],
        network: Network::Deny,
        limits: Limits::default(),
        forwards: Vec::new(),
    };
    prepare(&profile, kernel_abi()).unwrap().fd
}

/// Runs the inner stage with `args`, passing `fd` (close-on-exec cleared) the way bwrap does.
fn run(inner: &Path, fd: Option<&OwnedFd>, args: Vec<std::ffi::OsString>) -> Output {
    let raw = fd.map(|f| f.as_raw_fd());
    let mut cmd = Command::new(inner);
    // The checked working directory every call here passes (`cwd /`).
    cmd.args(args).current_dir("/");
    // SAFETY: the closure runs in the forked child before exec and makes one fcntl call
    // (async-signal-safe, no allocation; the error path only reads errno). `fd` is an open
    // descriptor of ours: the caller's OwnedFd outlives `cmd.output()`, and the child has its
    // own copy; clearing close-on-exec there does not touch ours.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = raw {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

fn sh(script: &str) -> [std::ffi::OsString; 3] {
    ["/bin/sh".into(), "-c".into(), script.into()]
}

#[test]
fn applies_the_ruleset_and_the_rules_it_opens_itself() {
    let f = fixture();
    let fd = ruleset(system());
    // `allowed` is opened by the inner stage itself (as /proc and /dev are inside bwrap);
    // a missing path is skipped, as on the host.
    let inside = vec![
        rule(&f.dir.path().join("allowed"), Access::READ),
        rule(&f.dir.path().join("missing"), Access::READ),
    ];
    let script = format!(
        "cat {0}/allowed/a.txt; cat {0}/secret.txt || echo DENIED; touch {0}/allowed/new || echo RO",
        f.dir.path().display()
    );
    let out = run(
        &f.inner,
        Some(&fd),
        inner_args(
            fd.as_raw_fd(),
            &inside,
            kernel_abi(),
            Path::new("/"),
            sh(&script),
        ),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, "inside\nDENIED\nRO\n", "{out:?}");
    assert!(!f.dir.path().join("allowed/new").exists());
}

#[test]
fn nothing_of_cordon_reaches_the_command() {
    let f = fixture();
    let mut rules = system();
    rules.push(rule(Path::new("/proc"), Access::READ));
    let fd = ruleset(rules);
    let out = run(
        &f.inner,
        Some(&fd),
        inner_args(
            fd.as_raw_fd(),
            &[],
            kernel_abi(),
            Path::new("/"),
            sh("ls /proc/self/fd"),
        ),
    );
    // 0-2, and the descriptor `ls` opened to list the directory.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "0\n1\n2\n3\n",
        "{out:?}"
    );
}

#[test]
fn refuses_without_a_ruleset_and_runs_nothing() {
    let f = fixture();
    let marker = f.dir.path().join("ran");
    let touch = sh(&format!("touch {}", marker.display()));
    // Descriptor 0 is not a ruleset: landlock_restrict_self fails, the command never starts.
    let out = run(
        &f.inner,
        None,
        inner_args(0, &[], kernel_abi(), Path::new("/"), touch.clone()),
    );
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("cordon: inner stage: landlock_restrict_self")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(!marker.exists());

    // Malformed arguments: refused the same way.
    for args in [
        vec![],
        vec!["x".into()],
        vec!["3".into(), "1".into(), "/tmp".into(), "12".into()],
        vec!["3".into(), "0".into(), "/bin/true".into()],
        vec!["3".into(), "0".into(), "--".into()],
    ] {
        let out = run(&f.inner, None, args.clone());
        assert_eq!(out.status.code(), Some(125), "{args:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("cordon: inner stage: "));
    }
}

/// The working directory entered (by bwrap's `--chdir`, or the zygote) is not the one cordon
/// checked, as when a component was swapped for a link after the check: 125, nothing runs.
#[test]
fn refuses_a_working_directory_other_than_the_checked_one() {
    let f = fixture();
    let fd = ruleset(system());
    let marker = f.dir.path().join("ran");
    let touch = sh(&format!("touch {}", marker.display()));
    // `run` starts it in `/`; the checked directory named is another.
    let out = run(
        &f.inner,
        Some(&fd),
        inner_args(fd.as_raw_fd(), &[], kernel_abi(), f.dir.path(), touch),
    );
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "cordon: the working directory {} changed after cordon checked it (the run entered /): refusing to run there; run the command again\n",
            f.dir.path().display()
        )
    );
    assert!(!marker.exists());
}

#[test]
fn exec_failures_are_126_and_127() {
    let f = fixture();
    let fd = ruleset(system());
    let out = run(
        &f.inner,
        Some(&fd),
        inner_args(
            fd.as_raw_fd(),
            &[],
            kernel_abi(),
            Path::new("/"),
            ["no-such-program-cordon".into()],
        ),
    );
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cordon: no-such-program-cordon: command not found\n"
    );
    // Landlock refuses to execute what lies outside the rules.
    let prog = f.dir.path().join("prog");
    std::fs::copy("/bin/true", &prog).unwrap();
    let fd = ruleset(system());
    let out = run(
        &f.inner,
        Some(&fd),
        inner_args(
            fd.as_raw_fd(),
            &[],
            kernel_abi(),
            Path::new("/"),
            [prog.into_os_string()],
        ),
    );
    assert_eq!(out.status.code(), Some(126), "{out:?}");
}

/// `sandbox.network = "proxy"`: the inner stage makes the proxy's listener, sends it over the
/// pair and starts the command only after cordon's "go"; without "go" nothing runs. (Here on
/// the host's network; under bwrap the same happens in the sandbox's namespace.)
#[test]
fn hands_the_proxys_listener_over_before_the_command_starts() {
    use crate::bwrap::with_proxy;
    use crate::run::ProxyHandoff;
    let f = fixture();
    let mut rules = system();
    rules.push(rule(Path::new("/proc"), Access::READ));
    let writable = Access {
        write: true,
        exec: false,
        device: false,
    };
    rules.push(rule(f.dir.path(), writable));
    let free_port = || {
        std::net::TcpListener::bind("[::]:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    for go in [true, false] {
        let fd = ruleset(rules.clone());
        let (mine, theirs) = crate::proxy::pair().unwrap();
        let port = free_port();
        let marker = f.dir.path().join(format!("ran-{go}"));
        let script = format!("touch {}; ls /proc/self/fd", marker.display());
        let args = with_proxy(
            inner_args(
                fd.as_raw_fd(),
                &[],
                kernel_abi(),
                Path::new("/"),
                sh(&script),
            ),
            port,
            theirs.as_raw_fd(),
            &[],
        );
        let raw = [fd.as_raw_fd(), theirs.as_raw_fd()];
        let mut cmd = Command::new(&f.inner);
        cmd.args(args)
            .current_dir("/")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // SAFETY: as in `run`: fcntl only (async-signal-safe) in the forked child, on
        // descriptors that `fd` and `theirs` keep open until after the spawn.
        unsafe {
            cmd.pre_exec(move || {
                for fd in raw {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        drop(theirs);
        drop(fd);
        let (tx, rx) = std::sync::mpsc::channel();
        let handoff = ProxyHandoff {
            port,
            listener: tx,
            forwards: Vec::new(),
        };
        if go {
            crate::proxy::hand_over(&mine, &handoff).unwrap();
            let listener = rx.recv().unwrap();
            assert_eq!(listener.local_addr().unwrap().port(), port);
        } else {
            // The proxy is gone: cordon receives the listener but cannot pass it on, and
            // never says "go".
            drop(rx);
            let e = crate::proxy::hand_over(&mine, &handoff).unwrap_err();
            assert!(e.to_string().contains("the proxy is gone"), "{e}");
            drop(mine);
        }
        let out = child.wait_with_output().unwrap();
        if go {
            // The listener and the pair stay with cordon: 0-2 and ls's own descriptor.
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "0\n1\n2\n3\n",
                "{out:?}"
            );
            assert!(marker.exists());
        } else {
            assert_eq!(out.status.code(), Some(125), "{out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr)
                    .starts_with("cordon: inner stage: cordon did not take the proxy's listener"),
                "{out:?}"
            );
            assert!(!marker.exists(), "the command ran without cordon's go");
        }
    }
    // A port of 0 is not the proxy's.
    let fd = ruleset(system());
    let out = run(
        &f.inner,
        Some(&fd),
        with_proxy(
            inner_args(
                fd.as_raw_fd(),
                &[],
                kernel_abi(),
                Path::new("/"),
                sh("true"),
            ),
            0,
            9,
            &[],
        ),
    );
    assert_eq!(out.status.code(), Some(125), "{out:?}");
}
