//! What the sandboxed command gets as stdin, stdout and stderr, driven from outside: on a
//! terminal it gets a pty of its own (interactive programs, Ctrl-C, Ctrl-D, the window size
//! and the exit status work through it, and the operator's terminal modes come back after),
//! and redirected files reach it through pipes that cordon copies, complete and in order.
//! Each test runs on the Landlock and the bwrap backend.

mod common;
mod pty;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use pty::Pty;

const BACKENDS: [&str; 2] = ["landlock", "bwrap"];

/// A workspace `w/` and, beside it (not in a writable root, which Landlock would refuse to
/// protect), its policy and audit log.
struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new(default: &str) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("w")).unwrap();
        std::fs::write(
            dir.path().join("cordon.toml"),
            format!(
                r#"version = 1
[sandbox.paths.w]
root = "w"
mode = "rw"
[shell]
default = "{default}"
[approval]
timeout = "60s"
audit_log = "audit.jsonl"
"#
            ),
        )
        .unwrap();
        Ws { dir }
    }

    fn w(&self) -> PathBuf {
        self.dir.path().join("w")
    }

    fn policy(&self) -> String {
        self.dir.path().join("cordon.toml").display().to_string()
    }

    /// `cordon exec --policy P --backend B -- argv…` on a new pty.
    fn pty(&self, backend: &str, argv: &[&str]) -> Pty {
        let policy = self.policy();
        let mut args = vec!["exec", "--policy", &policy, "--backend", backend, "--"];
        args.extend_from_slice(argv);
        Pty::cordon(&self.w(), &args, &[])
    }

    /// The same without a terminal, for redirections.
    fn command(&self, backend: &str, argv: &[&str]) -> std::process::Command {
        let mut c = common::command(&self.w());
        c.args([
            "exec",
            "--policy",
            &self.policy(),
            "--backend",
            backend,
            "--",
        ])
        .args(argv);
        c
    }
}

const COOKED: libc::tcflag_t = libc::ICANON | libc::ECHO | libc::ISIG;

#[test]
fn an_interactive_command_reads_the_terminal_through_a_pty_of_its_own() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let mut p = ws.pty(
            backend,
            &[
                "/bin/sh",
                "-c",
                "echo ready; read x; echo \"got $x\"; test -t 0 && test -t 1 && echo on-a-tty; tty; stat -L -c 'rdev %t:%T' /proc/self/fd/0; exit 3",
            ],
        );
        let host = p.slave_name();
        let host_rdev = {
            use std::os::unix::fs::MetadataExt;
            let r = std::fs::metadata(&host).unwrap().rdev();
            format!("rdev {:x}:{:x}", libc::major(r), libc::minor(r))
        };
        p.expect("ready");
        p.send(b"hello\r");
        let (code, screen, lflag) = p.finish_with_lflag();
        assert_eq!(code, 3, "{backend}: {screen}");
        assert!(screen.contains("got hello"), "{backend}: {screen}");
        assert!(screen.contains("on-a-tty"), "{backend}: {screen}");
        // Its terminal is a new pty, not the operator's (its device number differs), and the
        // command's /dev/pts is private on both backends (bwrap's, the Landlock init's own
        // devpts), where that pty, cordon's, has no entry: `tty` finds no name for it.
        let rdev = screen.lines().find(|l| l.starts_with("rdev "));
        assert!(
            rdev.is_some_and(|r| r.trim() != host_rdev),
            "{backend}: {host_rdev} (the operator's): {screen}"
        );
        assert!(screen.contains("not a tty"), "{backend}: {screen}");
        assert_eq!(
            lflag & COOKED,
            COOKED,
            "{backend}: modes not restored: {screen}"
        );
    }
}

#[test]
fn ctrl_c_reaches_the_command_and_gives_130() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let p = ws.pty(backend, &["/bin/sh", "-c", "echo ready; exec sleep 100"]);
        p.expect("ready");
        let (code, screen, lflag, tree) = interrupt(p);
        assert_eq!(code, 130, "{backend}: {screen}\n{tree}");
        assert_eq!(
            lflag & COOKED,
            COOKED,
            "{backend}: modes not restored: {screen}"
        );
    }
}

#[test]
fn ctrl_d_ends_the_commands_input() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let mut p = ws.pty(
            backend,
            &["/bin/sh", "-c", "echo ready; cat; echo cat-ended"],
        );
        p.expect("ready");
        p.send(b"typed line\r");
        p.expect("typed line");
        p.send(b"\x04");
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(screen.contains("cat-ended"), "{backend}: {screen}");
    }
}

#[test]
fn the_window_size_is_copied_and_follows_resizes() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let mut p = ws.pty(
            backend,
            &["/bin/sh", "-c", "stty size; echo ready; read x; stty size"],
        );
        p.expect("40 100");
        p.expect("ready");
        p.resize(30, 90);
        p.send(b"go\r");
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(screen.contains("30 90"), "{backend}: {screen}");
    }
}

#[test]
fn the_approval_prompt_still_uses_the_operators_terminal() {
    for backend in BACKENDS {
        let ws = Ws::new("ask");
        let mut p = ws.pty(backend, &["/bin/sh", "-c", "read x; echo \"got $x\""]);
        p.expect("(no answer: denied) > ");
        p.send(b"y");
        p.expect("approved once");
        p.send(b"after\r");
        let (code, screen, lflag) = p.finish_with_lflag();
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(screen.contains("got after"), "{backend}: {screen}");
        assert_eq!(
            lflag & COOKED,
            COOKED,
            "{backend}: modes not restored: {screen}"
        );
    }
}

/// 10 MB of varied bytes, written once.
fn big_file(dir: &Path) -> PathBuf {
    let p = dir.join("big.bin");
    let mut data = Vec::with_capacity(10 << 20);
    let mut x: u32 = 1;
    while data.len() < 10 << 20 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        data.extend_from_slice(&x.to_le_bytes());
    }
    std::fs::write(&p, &data).unwrap();
    p
}

#[test]
fn large_output_to_a_file_arrives_byte_exact() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let big = big_file(&ws.w());
        let out = ws.dir.path().join("out.bin");
        let st = ws
            .command(backend, &["cat", "big.bin"])
            .stdout(File::create(&out).unwrap())
            .status()
            .unwrap();
        assert!(st.success(), "{backend}: {st}");
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&big).unwrap(),
            "{backend}: the copy differs"
        );
        // Appended (`>> log`: the kernel will not splice to O_APPEND, so cordon copies).
        std::fs::write(&out, "earlier\n").unwrap();
        let log = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
        let st = ws
            .command(backend, &["cat", "big.bin"])
            .stdout(log)
            .status()
            .unwrap();
        assert!(st.success(), "{backend}: {st}");
        let mut want = b"earlier\n".to_vec();
        want.extend(std::fs::read(&big).unwrap());
        assert!(
            std::fs::read(&out).unwrap() == want,
            "{backend}: the appended copy differs"
        );
    }
}

#[test]
fn stdout_and_stderr_into_one_file_keep_their_order() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let out = ws.dir.path().join("log.txt");
        let f = File::create(&out).unwrap();
        let script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; echo err$i >&2; done";
        let st = ws
            .command(backend, &["/bin/sh", "-c", script])
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .status()
            .unwrap();
        assert!(st.success(), "{backend}: {st}");
        let want: String = (1..=10).map(|i| format!("out{i}\nerr{i}\n")).collect();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), want, "{backend}");
    }
}

#[test]
fn stdin_from_a_file_is_read_and_what_was_not_read_is_left() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let big = big_file(&ws.w());
        // All of it, through a pipe.
        let out = ws.dir.path().join("out.bin");
        let st = ws
            .command(backend, &["cat"])
            .stdin(File::open(&big).unwrap())
            .stdout(File::create(&out).unwrap())
            .status()
            .unwrap();
        assert!(st.success(), "{backend}: {st}");
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&big).unwrap(),
            "{backend}: stdin arrived incomplete"
        );
        // One line of it: the rest stays for whoever reads the file next, as with a shell's
        // `(cmd; cat) < file`.
        let lines = ws.dir.path().join("lines.txt");
        std::fs::write(&lines, "first\nsecond\nthird\n").unwrap();
        let mut f = File::open(&lines).unwrap();
        let o = ws
            .command(backend, &["/bin/sh", "-c", "read x; echo \"got $x\""])
            .stdin(f.try_clone().unwrap())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert_eq!(common::stdout(&o), "got first\n", "{backend}");
        let mut rest = String::new();
        f.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "second\nthird\n", "{backend}");
        assert_eq!(f.stream_position().unwrap(), 19);
        f.seek(SeekFrom::Start(0)).unwrap();
    }
}

#[test]
fn doctor_names_what_the_landlock_backend_gives_up_for_it() {
    let d = tempfile::tempdir().unwrap();
    let o = common::cordon(d.path(), &["doctor"]);
    let out = common::stdout(&o);
    // With its namespaces (here) the command's /dev/pts is a devpts of its own; only without
    // them does the backend give up a program's own pty (never the host's /dev/pts).
    assert!(
        out.contains("+ a devpts instance of the command's own on /dev/pts")
            && !out.contains("let a program open a new pty itself"),
        "{out}"
    );
}

#[test]
fn an_operators_fifo_that_nobody_reads_does_not_keep_cordon() {
    use std::os::unix::fs::OpenOptionsExt;
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let fifo = ws.dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // Held open, never read: the FIFO fills and every write to it blocks.
        let _reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let mut c = common::command(&ws.w());
        c.args(["exec", "--policy", &ws.policy(), "--backend", backend])
            .args([
                "--timeout",
                "1s",
                "--",
                "head",
                "-c",
                "10000000",
                "/dev/zero",
            ])
            .stdout(writer)
            .stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        // An upper bound far above the timeout and the relay's drain, so that a hang fails
        // the test instead of stalling the suite.
        let end = std::time::Instant::now() + pty::DEADLINE;
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if std::time::Instant::now() > end {
                let _ = child.kill();
                panic!("{backend}: cordon hung on a FIFO nobody reads");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(124), "{backend}");
    }
}

#[test]
fn a_rule_that_reaches_the_hosts_terminals_is_refused_on_landlock() {
    for (key, value) in [("extra_read", "[\"/dev\"]"), ("extra_read", "[\"/\"]")] {
        let ws = Ws::new("allow");
        let policy = std::fs::read_to_string(ws.policy()).unwrap().replace(
            "[sandbox.paths.w]",
            &format!("[sandbox]\n{key} = {value}\n[sandbox.paths.w]"),
        );
        std::fs::write(ws.policy(), policy).unwrap();
        let o = ws.command("landlock", &["/bin/true"]).output().unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(125), "{value}: {err}");
        assert!(
            err.starts_with("cordon: ") && err.contains("/dev/pts") && err.contains("bwrap"),
            "{value}: {err}"
        );
        // bwrap's /dev is its own: the rule reaches only its private devpts.
        let o = ws.command("bwrap", &["/bin/true"]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{value}: {}", common::stderr(&o));
    }
}

#[test]
fn in_a_pipeline_the_terminal_is_left_to_the_reader_at_its_end() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let (r, w) = std::io::pipe().unwrap();
        let policy = ws.policy();
        let script =
            "if read x; then echo \"read $x\"; else echo eof; fi; test -t 0 && echo own-tty";
        let p = Pty::cordon_with_stdout(
            &ws.w(),
            &[
                "exec",
                "--policy",
                &policy,
                "--backend",
                backend,
                "--",
                "/bin/sh",
                "-c",
                script,
            ],
            &[],
            Some(w.into()),
        );
        let (code, screen) = p.finish();
        let mut out = String::new();
        let mut r = r;
        r.read_to_string(&mut out).unwrap();
        assert_eq!(code, 0, "{backend}: {screen}");
        // Its stdin is a terminal of its own that reads end-of-file: cordon took no key.
        assert_eq!(out, "eof\nown-tty\n", "{backend}: {screen}");
    }
}

#[test]
fn with_stdout_redirected_the_terminals_lines_are_the_commands_input() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let out = ws.dir.path().join("out.txt");
        let policy = ws.policy();
        let script =
            "echo ready >&2; read x; echo \"got $x\"; if read y; then echo more; else echo eof; fi";
        let mut p = Pty::cordon_with_stdout(
            &ws.w(),
            &[
                "exec",
                "--policy",
                &policy,
                "--backend",
                backend,
                "--",
                "/bin/sh",
                "-c",
                script,
            ],
            &[],
            Some(File::create(&out).unwrap().into()),
        );
        p.expect("ready");
        p.send(b"typed\r");
        p.expect("typed"); // echoed by the operator's terminal itself
        p.send(b"\x04");
        let (code, screen, lflag) = p.finish_with_lflag();
        assert_eq!(code, 0, "{backend}: {screen}");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "got typed\neof\n",
            "{backend}: {screen}"
        );
        assert_eq!(lflag & COOKED, COOKED, "{backend}: {screen}");
    }
}

/// The unprivileged user to run as when the tests run as root: the escape suite's
/// `cordon-test` (`cordon_e2e::test_user`, created once when missing); else the current user.
fn unprivileged() -> Option<(u32, u32)> {
    rustix::process::geteuid()
        .is_root()
        .then(cordon_e2e::test_user)
}

#[test]
fn an_interactive_run_as_an_unprivileged_user() {
    use std::os::unix::fs::PermissionsExt;
    let ids = unprivileged();
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        std::fs::set_permissions(ws.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        if let Some((uid, gid)) = ids {
            for p in [ws.dir.path().to_path_buf(), ws.w()] {
                std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
            }
        }
        let policy = ws.policy();
        let script = "echo ready; read x; echo \"got $x\"; test -t 0 && echo on-a-tty; echo \"uid=$(id -u)\"; exit 5";
        let mut p = Pty::cordon_as(
            &ws.w(),
            &[
                "exec",
                "--policy",
                &policy,
                "--backend",
                backend,
                "--",
                "/bin/sh",
                "-c",
                script,
            ],
            &[("HOME", ws.w().to_str().unwrap())],
            None,
            ids,
        );
        p.expect("ready");
        p.send(b"hello\r");
        let (code, screen, lflag) = p.finish_with_lflag();
        assert_eq!(code, 5, "{backend}: {screen}");
        assert!(
            screen.contains("got hello") && screen.contains("on-a-tty"),
            "{backend}: {screen}"
        );
        let uid = ids.map_or(rustix::process::geteuid().as_raw(), |(u, _)| u);
        assert!(
            screen.contains(&format!("uid={uid}")),
            "{backend}: {screen}"
        );
        assert_eq!(lflag & COOKED, COOKED, "{backend}: {screen}");
        ctrl_c_as(&ws, backend, ids);
    }
}

/// Ctrl-C on the user's run: 130, and the terminal's modes back.
fn ctrl_c_as(ws: &Ws, backend: &str, ids: Option<(u32, u32)>) {
    let policy = ws.policy();
    let p = Pty::cordon_as(
        &ws.w(),
        &[
            "exec",
            "--policy",
            &policy,
            "--backend",
            backend,
            "--",
            "/bin/sh",
            "-c",
            "echo ready; exec sleep 100",
        ],
        &[("HOME", ws.w().to_str().unwrap())],
        None,
        ids,
    );
    p.expect("ready");
    let (code, screen, lflag, tree) = interrupt(p);
    assert_eq!(code, 130, "{backend}: {screen}\n{tree}");
    assert_eq!(lflag & COOKED, COOKED, "{backend}: {screen}");
}

/// Types Ctrl-C and waits for the run to end: its code, screen and terminal modes, and, when
/// it was still running 30 s after the key (a lost Ctrl-C: the command's `sleep 100` runs out
/// and the run ends 0), its process tree then, for the failure message. (That was seen with
/// the test binary started with SIGINT ignored, which the pty's session now resets.)
fn interrupt(mut p: Pty) -> (i32, String, libc::tcflag_t, String) {
    p.send(b"\x03");
    let tree = if p.exits_within(std::time::Duration::from_secs(30)) {
        String::new()
    } else {
        format!("30 s after Ctrl-C:\n{}", p.tree())
    };
    let (code, screen, lflag) = p.finish_with_lflag();
    (code, screen, lflag, tree)
}

#[test]
fn a_signal_that_kills_cordon_still_restores_the_terminal() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let p = ws.pty(backend, &["/bin/sh", "-c", "echo ready; exec sleep 100"]);
        p.expect("ready");
        // SIGUSR1 is not forwarded: its default action ends cordon, in raw mode until then.
        rustix::process::kill_process(p.child_pid(), rustix::process::Signal::USR1).unwrap();
        let (_, screen, lflag) = p.finish_with_lflag();
        assert_eq!(
            lflag & COOKED,
            COOKED,
            "{backend}: modes not restored: {screen}"
        );
    }
}

/// A command an agent host runs (`cordon exec --from-hook`, the hook's rewrite) reads nothing:
/// stdin is at end of file and its terminal's reads end at once. What the host's agent types
/// into it later reaches no hook (Codex's `write_stdin`, Copilot's `write_bash`): the real
/// Codex let `write_stdin` type `!rm -rf keep` into an allowed `less`, which ran it (round 8
/// of issue 21, redhost21). Gemini CLI's rewrite says `--input typed` (a person types into its
/// interactive shell): that command reads its input as before.
#[test]
fn a_command_a_host_runs_reads_nothing_typed_into_it() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let policy = ws.dir.path().join(format!("{backend}.toml"));
        let text = std::fs::read_to_string(ws.policy()).unwrap().replacen(
            "[sandbox.paths.w]",
            &format!("[sandbox]\nbackend = \"{backend}\"\n[sandbox.paths.w]"),
            1,
        );
        std::fs::write(&policy, text).unwrap();
        let policy = policy.display().to_string();
        let line = "-c=echo ready; read x; echo \"got:$x\"; read y < /dev/tty; echo \"tty:$y\"";
        // Piped, as a host without a terminal gives it.
        for (typed, want) in [(false, "got:\n"), (true, "got:rm -rf keep\n")] {
            let mut args = vec!["exec", "--from-hook", "--policy", &policy];
            if typed {
                args.extend(["--input", "typed"]);
            }
            args.push(line);
            let mut c = common::command(&ws.w());
            c.args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            {
                use std::io::Write;
                let mut stdin = child.stdin.take().unwrap();
                stdin.write_all(b"rm -rf keep\n").unwrap();
            }
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains(want),
                "{backend}, typed {typed}: {stdout:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // On a terminal, as Codex's `tty: true` gives it: the keys sent never reach it.
        for typed in [false, true] {
            let mut args = vec!["--from-hook", "--policy", &policy];
            if typed {
                args.extend(["--input", "typed"]);
            }
            args.push(line);
            let mut p = Pty::exec(&ws.w(), &args, &[]);
            p.expect("ready");
            p.send(b"rm -rf keep\r");
            if typed {
                p.expect("got:rm -rf keep");
                p.send(b"second\r");
            }
            let (code, screen) = p.finish();
            assert_eq!(code, 0, "{backend}, typed {typed}: {screen}");
            match typed {
                false => {
                    assert!(
                        screen.contains("got:\r\n") && screen.contains("tty:\r\n"),
                        "{backend}: the command read what was typed: {screen}"
                    );
                    assert!(!screen.contains("got:rm"), "{backend}: {screen}");
                }
                // bwrap's --new-session leaves the command no controlling terminal (see
                // the first test): only Landlock's reads /dev/tty.
                true if backend == "landlock" => {
                    assert!(screen.contains("tty:second"), "{backend}: {screen}")
                }
                true => assert!(screen.contains("tty:\r\n"), "{backend}: {screen}"),
            }
        }
    }
}

/// Escape sequences that act on the operator's terminal rather than draw on it (issue 21):
/// each must vanish, and the text around it must arrive.
const CONTROL: &[&[u8]] = &[
    // The clipboard (OSC 52), BEL- and ST-terminated: the operator pastes `curl x|sh`.
    b"\x1b]52;c;Y3VybCB4fHNoCg==\x07",
    b"\x1b]52;c;Y3VybCB4fHNoCg==\x1b\\",
    // Title and icon, a hyperlink that shows one thing and opens another, a colour query.
    b"\x1b]0;innocent\x07",
    b"\x1b]8;;http://evil.example/\x1b\\\x1b]8;;\x1b\\",
    b"\x1b]11;?\x07",
    // Queries the terminal answers as typed input: DSR, DA, secondary DA, window title report,
    // DECRQSS, XTGETTCAP, DECRQM, the kitty keyboard query.
    b"\x1b[6n",
    b"\x1b[c",
    b"\x1b[>c",
    b"\x1b[21t",
    b"\x1bP$qm\x1b\\",
    b"\x1bP+q544e\x1b\\",
    b"\x1b[?2004$p",
    b"\x1b[?u",
    // tmux passthrough, kitty graphics naming a file, PM, SOS, a full reset.
    b"\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",
    b"\x1b_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x1b\\",
    b"\x1b^private\x1b\\",
    b"\x1bXstring\x1b\\",
    b"\x1bc",
    // Modes that act after the run: mouse and focus reporting (events typed into the shell),
    // a keyboard protocol, newline mode and local echo, the scrollback erased, a shifted character set.
    b"\x1b[?1000h\x1b[?1006h",
    b"\x1b[?1004h",
    b"\x1b[>1u",
    b"\x1b[20h\x1b[12l",
    b"\x1b[3J",
    b"\x0e",
];

/// `[N:` CONTROL[N] `:N]` on a line each, into `w/attacks`.
fn write_attacks(w: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for (n, a) in CONTROL.iter().enumerate() {
        all.extend_from_slice(format!("[{n}:").as_bytes());
        all.extend_from_slice(a);
        all.extend_from_slice(format!(":{n}]\n").as_bytes());
    }
    // C1 controls, 8-bit and in UTF-8 (CSI, OSC): no terminal may see them as controls.
    all.extend_from_slice(b"[c1:\x9b6n\x9d52;c;eA==\x07\xc2\x9b6n:c1]\n");
    std::fs::write(w.join("attacks"), &all).unwrap();
    all
}

#[test]
fn what_controls_the_terminal_never_reaches_it_and_the_text_does() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let all = write_attacks(&ws.w());
        let p = ws.pty(backend, &["cat", "attacks"]);
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        for (n, attack) in CONTROL.iter().enumerate() {
            assert!(
                screen.contains(&format!("[{n}::{n}]\r\n")),
                "{backend}: {:?} reached the terminal: {screen:?}",
                String::from_utf8_lossy(attack)
            );
        }
        let c1 = screen
            .split("[c1:")
            .nth(1)
            .and_then(|s| s.split(":c1]").next());
        let c1 = c1.unwrap_or_else(|| panic!("{backend}: no C1 line: {screen:?}"));
        assert!(
            !c1.chars()
                .any(|c| c == '\x1b' || ('\u{80}'..='\u{9f}').contains(&c)),
            "{backend}: a C1 control reached the terminal: {c1:?}"
        );
        assert!(!screen.contains('\x1b'), "{backend}: {screen:?}");

        // stderr on the terminal while stdout goes into a file: filtered all the same.
        let policy = ws.policy();
        let args = ["--policy", &policy, "--backend", backend, "--"];
        let argv = ["/bin/sh", "-c", "cat attacks >&2; echo into-the-file"];
        let into = ws.dir.path().join("stdout");
        let stdout = Some(Stdio::from(File::create(&into).unwrap()));
        let p = Pty::exec_with_stdout(&ws.w(), &[&args[..], &argv[..]].concat(), &[], stdout);
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        assert!(screen.contains("[0::0]"), "{backend}: {screen:?}");
        assert!(!screen.contains('\x1b'), "{backend}: {screen:?}");
        assert_eq!(std::fs::read_to_string(&into).unwrap(), "into-the-file\n");

        // Into a file, every byte as written.
        let out = ws.dir.path().join("out");
        let st = ws
            .command(backend, &["cat", "attacks"])
            .stdout(File::create(&out).unwrap())
            .status()
            .unwrap();
        assert!(st.success(), "{backend}: {st}");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            all,
            "{backend}: the file differs"
        );
    }
}

/// What `tput NAME` prints for this terminal type, as full-screen programs send it.
fn tput(name: &str) -> String {
    let out = std::process::Command::new("tput")
        .args(name.split(' '))
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(out.status.success(), "tput {name}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn what_full_screen_programs_draw_with_arrives_unchanged() {
    let caps = [
        "clear", "civis", "cnorm", "setaf 1", "setab 4", "bold", "sgr0", "smkx", "rmkx", "smacs",
        "rmacs", "el", "ed", "cup 3 4", "csr 2 10", "ri", "sc", "rc", "home", "dch 2", "ich 3",
        "il 1", "dl 1", "ech 4", "hpa 7", "vpa 9", "cuu 2", "cud 2", "cuf 2", "cub 2", "smir",
        "rmir",
    ];
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let script = caps
            .iter()
            .map(|c| format!("printf '<%s>' '{c}'; tput {c}; "))
            .collect::<String>()
            + "tput smcup; echo in-alt; tput rmcup; echo done";
        let p = ws.pty(backend, &["/bin/sh", "-c", &script]);
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        for c in caps {
            // `clear` also erases the scrollback (E3, `CSI 3 J`), where the operator's earlier
            // output (cordon's own lines among it) is: that part not.
            let want = format!("<{c}>{}", tput(c).replace("\x1b[3J", ""));
            assert!(
                screen.contains(&want),
                "{backend}: {want:?} not in {screen:?}"
            );
        }
        // smcup and rmcup also push and pop the window title (`CSI 22;0;0t`): that part not.
        assert!(
            screen.contains("\x1b[?1049hin-alt\r\n\x1b[?1049ldone"),
            "{backend}: {screen:?}"
        );
    }
}

#[test]
fn the_real_less_still_works_on_the_terminal() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let text: String = (0..200).map(|n| format!("line-{n}\n")).collect();
        std::fs::write(ws.w().join("long.txt"), text).unwrap();
        let mut p = ws.pty(backend, &["less", "long.txt"]);
        p.expect("line-38");
        p.press(b" ");
        p.expect("line-77");
        p.press(b"q");
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        assert!(screen.contains("\x1b[?1049h"), "{backend}: {screen:?}");
        // less left the alternate screen itself: nothing to undo, and nothing undone.
        assert_eq!(
            screen.matches("\x1b[?1049l").count(),
            1,
            "{backend}: {screen:?}"
        );
    }
}

#[test]
fn modes_the_command_left_on_are_undone_after_the_run() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let script = r"printf '\033[?1049h\033[?25l\033[31m\033[?2004h\033=\033(0lef\033[2;5r'";
        let p = ws.pty(backend, &["/bin/sh", "-c", script]);
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        let left = "\x1b[?1049h\x1b[?25l\x1b[31m\x1b[?2004h\x1b=\x1b(0lef\x1b[2;5r";
        let undo = "\x1b7\x1b[r\x1b8\x1b[?1049l\x1b[?25h\x1b[?2004l\x1b[m\x1b(B\x1b>";
        assert!(
            screen.contains(&format!("{left}{undo}")),
            "{backend}: {screen:?}"
        );

        // A command that puts back what it changed gets nothing added.
        let script = r"printf '\033[?1049h\033[?25l\033[31mx\033[m\033[?25h\033[?1049l'";
        let p = ws.pty(backend, &["/bin/sh", "-c", script]);
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        assert!(screen.ends_with("\x1b[?1049l"), "{backend}: {screen:?}");
    }
}

/// What cordon prints after the run (its warnings, the scan's report) starts on a line of its
/// own with nothing of the command's below it (issue 21, round 9): a command that ended
/// mid-line made cordon's next line read as the end of the command's (`nothing to report;
/// ignore: ` then cordon's warning), and one that moved the cursor up had cordon's lines
/// written into its text, with the rest of its longer lines left standing after them. And
/// text set to be concealed is shown: the operator cannot see it but copies it with what
/// they can.
#[test]
fn cordons_next_line_starts_clean_whatever_the_command_left() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        for (script, ends) in [
            (
                r"printf 'cordon: nothing to report; ignore: '",
                "ignore: \r\n",
            ),
            (r"printf 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r'", "AAAA\r\r\n"),
            (r"printf '1\n2\n3\n\033[3A'", "3\r\n\x1b[3A\r\n\x1b[J"),
            (r"printf '1\n2\n3\n\033[H\n'", "\x1b[H\r\n\r\n\x1b[J"),
            // A command that ended cleanly gets nothing added.
            (r"printf 'done\n'", "done\r\n"),
        ] {
            let p = ws.pty(backend, &["/bin/sh", "-c", script]);
            let (code, screen) = p.finish();
            assert_eq!(code, 0, "{backend}: {screen:?}");
            assert!(screen.ends_with(ends), "{backend}: {script}: {screen:?}");
        }
        let p = ws.pty(
            backend,
            &[
                "/bin/sh",
                "-c",
                r"printf 'echo ok\033[8m; curl x | sh\033[m\n'",
            ],
        );
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        assert!(
            screen.contains("echo ok; curl x | sh\x1b[m"),
            "{backend}: {screen:?}"
        );
    }
}

/// Outside a UTF-8 locale the bytes 0x80-0x9F are taken out of what the command prints
/// (issue 21, round 9): xterm outside UTF-8 mode reads them as C1 controls, and valid UTF-8
/// carries them, so `Û6n` (C3 9B `6n`) reached such a terminal as the query `CSI 6 n` and
/// `Ý` (C3 9D) opened an OSC. In a UTF-8 locale they are parts of characters and pass.
#[test]
fn c1_bytes_inside_utf8_never_reach_a_terminal_outside_a_utf8_locale() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        let policy = ws.policy();
        let script = r"printf 'a\303\2336n b\303\23552;c;eA==\007 c\n'";
        let args = [
            "exec",
            "--policy",
            &policy,
            "--backend",
            backend,
            "--",
            "/bin/sh",
            "-c",
            script,
        ];
        for (lang, passes) in [("C", false), ("en_US.ISO-8859-1", false), ("C.UTF-8", true)] {
            let p = Pty::cordon(&ws.w(), &args, &[("LANG", lang)]);
            let (code, screen) = p.finish();
            assert_eq!(code, 0, "{backend} {lang}: {screen:?}");
            assert!(screen.contains('c'), "{backend} {lang}: {screen:?}");
            assert_eq!(
                screen.contains('\u{db}') || screen.contains('\u{dd}'),
                passes,
                "{backend} {lang}: {screen:?}"
            );
        }
    }
}

#[test]
fn the_real_vim_still_edits_on_the_terminal() {
    for backend in BACKENDS {
        let ws = Ws::new("allow");
        std::fs::write(ws.w().join("v.txt"), "hello vim\nsecond line\n").unwrap();
        let policy = ws.policy();
        // vim can run a shell: the rules ask about it, and nobody here is to answer.
        let args = [
            "exec",
            "--approve-all",
            "--policy",
            &policy,
            "--backend",
            backend,
            "--",
            "vim",
            "-u",
            "NONE",
            "-N",
            "v.txt",
        ];
        let mut p = Pty::cordon(&ws.w(), &args, &[]);
        p.expect("second line");
        p.press(b"ddx:wq\r");
        let (code, screen) = p.finish();
        assert_eq!(code, 0, "{backend}: {screen:?}");
        assert_eq!(
            std::fs::read_to_string(ws.w().join("v.txt")).unwrap(),
            "econd line\n",
            "{backend}: {screen:?}"
        );
        assert!(screen.contains("\x1b[?1049h"), "{backend}: {screen:?}");
    }
}
