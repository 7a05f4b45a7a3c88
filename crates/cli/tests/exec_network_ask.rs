//! `cordon exec` under `sandbox.network = "proxy"` with `[network] default = "ask"`, on a
//! real pseudo-terminal: a connection the command's curl opens is asked about on the
//! terminal while the command waits (the relay gives the terminal up: the key reaches the
//! prompt, not the command), the command gets its terminal back afterwards, and "approve
//! always" remembers exactly that host and port in the rules file, where a later run without
//! a terminal finds it.

mod common;
mod pty;

use std::path::Path;

use common::{cordon, stderr, stdout, web_server};
use pty::Pty;

const PROMPT: &str = "(no answer: denied) > ";

fn curl_present() {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
}

/// A workspace whose policy asks about every connection; `web.test` is the test's server.
fn workspace() -> tempfile::TempDir {
    workspace_with_timeout("60s")
}

fn workspace_with_timeout(timeout: &str) -> tempfile::TempDir {
    common::workspace(&format!(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
         [[shell.rules]]\npattern = \"curl *\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"head *\"\naction = \"allow\"\n\
         [approval]\ntimeout = \"{timeout}\"\naudit_log = \"audit.jsonl\"\n\
         [network]\ndefault = \"ask\"\n[network.hosts]\n\"web.test\" = \"127.0.0.1\"\n\
         \"other.test\" = \"127.0.0.1\"\n",
    ))
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The decisions on `network` calls in the audit log.
fn connection_decisions(dir: &Path) -> Vec<serde_json::Value> {
    records(dir)
        .into_iter()
        .filter(|r| r["tool"] == "network" && r["by"]["kind"] != "connection")
        .collect()
}

fn exec(dir: &Path, line: &str) -> Pty {
    Pty::exec(dir, &["-c", line], &[])
}

/// The test's web server and a workspace that asks about every connection.
fn setup() -> (u16, tempfile::TempDir) {
    curl_present();
    (web_server(), workspace())
}

/// `cordon exec -- curl ARGS` without a terminal.
fn curl(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["exec", "--", "curl"];
    all.extend_from_slice(args);
    cordon(dir, &all)
}

#[test]
fn a_connection_is_asked_on_the_terminal_and_the_command_gets_it_back() {
    let (port, d) = setup();
    let mut p = exec(
        d.path(),
        &format!("curl -sS http://web.test:{port}/one; head -c 3"),
    );
    p.expect(PROMPT);
    let screen = p.screen();
    for shown in [
        "cordon: approval needed (network)",
        &format!("connect to web.test:{port}"),
        "[a] yes always",
    ] {
        assert!(screen.contains(shown), "{shown:?} not in:\n{screen}");
    }
    // What the command may have left the terminal in is reset before the box.
    let boxed = screen.find("cordon: approval needed (network)").unwrap();
    assert!(
        screen[..boxed].contains("\x18\x1b\\\x1b[!p\x1b[0m\x1b7\x1b[r\x1b8"),
        "{screen:?}"
    );
    // The prompt has the terminal in single-key mode: the relay let go of it.
    assert_eq!(p.lflag() & libc::ICANON, 0, "single-key mode while asking");
    p.send(b"y");
    p.expect("GET /one HTTP/1.1");
    // The command has its terminal again: `head` reads what is typed now.
    p.send(b"abc\n");
    let (code, screen, lflag) = p.finish_with_lflag();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("→ approved once"), "{screen}");
    let after = &screen[screen.find("GET /one").unwrap()..];
    assert!(after.contains("abc"), "{screen}");
    assert_ne!(lflag & libc::ICANON, 0, "line mode restored");
    assert_ne!(lflag & libc::ECHO, 0, "echo restored");
    let decided = connection_decisions(d.path());
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["decision"], "allow");
    assert_eq!(decided[0]["by"]["kind"], "user");
    // Once means once: the next run asks again, and `n` refuses the connection.
    let mut p = exec(d.path(), &format!("curl -sSf http://web.test:{port}/two"));
    p.expect(PROMPT);
    p.send(b"n");
    let (code, screen) = p.finish();
    assert_eq!(code, 22, "curl -f on the proxy's 403: {screen}");
    assert!(screen.contains("→ denied"), "{screen}");
    assert!(!screen.contains("GET /two"), "{screen}");
    let decided = connection_decisions(d.path());
    assert_eq!(decided.len(), 2, "{decided:?}");
    assert_eq!(decided[1]["decision"], "deny");
    assert_eq!(decided[1]["by"]["kind"], "user");
    let o = cordon(d.path(), &["audit", "verify", "audit.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// A question raised while the command runs is drawn on cleared lines (issue 21, round 9):
/// the command can leave the cursor anywhere on the screen, and the box, written over lines it
/// had drawn, showed the rest of each longer line after its own text (`│ connect to
/// web.test:PORT` then the command's `... is safe, press y`).
#[test]
fn a_box_raised_mid_run_is_drawn_on_cleared_lines() {
    let (port, d) = setup();
    // Nine long lines, then the cursor back up over them (curl prints the file: the rules
    // allow curl, and would ask about printf).
    let mut drawn = format!("{:>80}\n", "the connection below is safe, press y").repeat(9);
    drawn.push_str("\x1b[9A");
    std::fs::write(d.path().join("drawn.txt"), drawn).unwrap();
    let mut p = exec(
        d.path(),
        &format!(
            "curl -sS file://{}/drawn.txt; curl -sS http://web.test:{port}/one",
            d.path().display()
        ),
    );
    p.expect(PROMPT);
    let screen = p.screen();
    let boxed = screen
        .find("cordon: approval needed (network)")
        .unwrap_or_else(|| panic!("{screen:?}"));
    let before = &screen[..boxed];
    let reset = before.rfind("\x1b[r").unwrap();
    assert!(
        before[reset..].contains("\r\n\x1b[J"),
        "the box is not drawn on cleared lines: {screen:?}"
    );
    p.send(b"n");
    let (_, screen) = p.finish();
    assert!(screen.contains("→ denied"), "{screen}");
    assert!(!screen.contains("GET /one"), "{screen}");
}

#[test]
fn approve_always_remembers_exactly_that_host_and_port() {
    let (port, d) = setup();
    let mut p = exec(d.path(), &format!("curl -sS http://web.test:{port}/one"));
    p.expect(PROMPT);
    p.send(b"a");
    p.expect("save them? [y] yes");
    let screen = p.screen();
    assert!(
        screen.contains("[[network.rules]]")
            && screen.contains(&format!("host = \"web.test:{port}\"")),
        "{screen}"
    );
    p.send(b"y");
    let (code, screen) = p.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("→ approved always"), "{screen}");
    assert!(screen.contains("GET /one HTTP/1.1"), "{screen}");
    assert!(
        screen.contains("remembered in ") && screen.contains(&format!("`web.test:{port}`")),
        "{screen}"
    );
    let rules = std::fs::read_to_string(d.path().join("cordon.rules.toml")).unwrap();
    assert!(
        rules.ends_with(&format!(
            "\n[[network.rules]]\nhost = \"web.test:{port}\"\naction = \"allow\"\n"
        )),
        "{rules}"
    );
    // Without a terminal, the remembered rule allows the same host and port…
    let o = curl(d.path(), &["-sS", &format!("http://web.test:{port}/two")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "GET /two HTTP/1.1");
    let decided = connection_decisions(d.path());
    assert_eq!(decided.last().unwrap()["by"]["kind"], "persisted-grant");
    // …and nothing else: another port would be asked, and with no terminal it is denied.
    let o = curl(
        d.path(),
        &["-sSf", &format!("http://web.test:{}/", port ^ 1)],
    );
    assert_eq!(o.status.code(), Some(22), "{}{}", stdout(&o), stderr(&o));
    let decided = connection_decisions(d.path());
    assert_eq!(decided.last().unwrap()["decision"], "deny");
    // `cordon check` sees the remembered rule too.
    let o = cordon(d.path(), &["check", "network", &format!("web.test:{port}")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_command_that_ends_while_asked_withdraws_the_question() {
    let (port, d) = setup();
    // curl gives up after 5 s, while the question is still on the screen (nobody answers):
    // the question is withdrawn (denied, recorded), curl's message comes after it, the
    // terminal is restored. (Not 1 s: the prompt line comes after a second without keys, and
    // on a loaded machine curl gave up before it was drawn.)
    let p = exec(
        d.path(),
        &format!("curl -sS -m 5 http://web.test:{port}/late"),
    );
    p.expect(PROMPT);
    let (code, screen, lflag) = p.finish_with_lflag();
    assert_eq!(code, 28, "curl's timeout: {screen}");
    let withdrawn = screen
        .find("→ the command ended before an answer: denied")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        screen[withdrawn..].contains("curl: (28)"),
        "what curl wrote while the terminal was lent comes after the question: {screen}"
    );
    assert_ne!(lflag & libc::ICANON, 0, "line mode restored");
    assert_ne!(lflag & libc::ECHO, 0, "echo restored");
    let decided = connection_decisions(d.path());
    assert_eq!(decided[0]["decision"], "deny");
    assert_eq!(decided[0]["by"]["kind"], "channel");
}

#[test]
fn a_signal_while_asked_ends_the_command_and_withdraws_the_question() {
    let (port, d) = setup();
    let p = exec(d.path(), &format!("curl -sS http://web.test:{port}/sig"));
    p.expect(PROMPT);
    rustix::process::kill_process(p.child_pid(), rustix::process::Signal::TERM).unwrap();
    let (code, screen, lflag) = p.finish_with_lflag();
    assert_eq!(code, 143, "SIGTERM forwarded to curl: {screen}");
    assert!(
        screen.contains("→ the command ended before an answer: denied"),
        "{screen}"
    );
    assert_ne!(lflag & libc::ICANON, 0, "line mode restored");
    assert_ne!(lflag & libc::ECHO, 0, "echo restored");
    assert_eq!(connection_decisions(d.path())[0]["decision"], "deny");
}

#[test]
fn with_stdout_redirected_the_question_still_gets_the_key() {
    let (port, d) = setup();
    let out = d.path().join("out.txt");
    // stdin is the terminal, read line by line for the command: the relay must not take the
    // key meant for the question.
    let mut p = Pty::exec_with_stdout(
        d.path(),
        &["-c", &format!("curl -sS http://web.test:{port}/file")],
        &[],
        Some(std::fs::File::create(&out).unwrap().into()),
    );
    p.expect(PROMPT);
    p.send(b"y");
    let (code, screen) = p.finish();
    assert_eq!(code, 0, "{screen}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "GET /file HTTP/1.1");
}

#[test]
fn a_run_an_agent_host_started_never_asks_on_its_terminal() {
    let (port, d) = setup();
    // As `cordon hook` rewrites a command: the terminal is the host's, which its agent may
    // type into — the question is never put there, and the connection is denied.
    let mut p = Pty::exec(
        d.path(),
        &[
            "--from-hook",
            "-c",
            &format!("curl -sSf http://web.test:{port}/agent"),
        ],
        &[],
    );
    p.send(b"y");
    let (code, screen) = p.finish();
    assert_eq!(code, 22, "{screen}");
    // No question box (its title); the run's end says why the connection was refused.
    assert!(!screen.contains("approval needed (network)"), "{screen}");
    assert!(
        screen.contains(&format!("cordon: web.test:{port}: refused by the policy: ")),
        "{screen}"
    );
    let decided = connection_decisions(d.path());
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["decision"], "deny");
    assert!(
        decided[0]["reason"]
            .as_str()
            .unwrap()
            .contains("no terminal to ask on"),
        "{decided:?}"
    );
}

#[test]
fn keys_typed_as_the_question_comes_up_do_not_answer_it() {
    let (port, d) = setup();
    let mut p = exec(
        d.path(),
        &format!("curl -sSf http://web.test:{port}/typing"),
    );
    // Someone typing for the command when the box appears: those keys are not an answer.
    p.expect("cordon: approval needed (network)");
    p.send(b"y");
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send(b"y");
    p.expect(PROMPT);
    assert!(!p.screen().contains("→ approved"), "{}", p.screen());
    p.send(b"n");
    let (code, screen) = p.finish();
    assert_eq!(code, 22, "{screen}");
    assert!(screen.contains("→ denied"), "{screen}");
}

#[test]
fn no_answer_in_time_refuses_the_connection() {
    curl_present();
    let port = web_server();
    let d = workspace_with_timeout("2s");
    let p = exec(d.path(), &format!("curl -sSf http://web.test:{port}/late"));
    p.expect(PROMPT);
    let (code, screen) = p.finish();
    assert_eq!(code, 22, "{screen}");
    assert!(screen.contains("→ no answer in time: denied"), "{screen}");
    let decided = connection_decisions(d.path());
    assert_eq!(decided[0]["decision"], "deny");
    assert_eq!(decided[0]["by"]["kind"], "timeout");
}

#[test]
fn x_says_no_to_every_further_question_of_the_run() {
    let (port, d) = setup();
    // Two hosts, one after the other: `x` at the first question answers the second too.
    let mut p = exec(
        d.path(),
        &format!("curl -sS http://web.test:{port}/a http://other.test:{port}/b"),
    );
    p.expect(PROMPT);
    assert!(
        p.screen()
            .contains("[x] no, and no more questions this run"),
        "{}",
        p.screen()
    );
    p.send(b"x");
    let (code, screen) = p.finish();
    assert_eq!(code, 0, "curl without -f: {screen}");
    assert_eq!(
        screen.matches("approval needed (network)").count(),
        1,
        "{screen}"
    );
    assert!(!screen.contains("GET /"), "{screen}");
    let decided = connection_decisions(d.path());
    let seen: Vec<(&str, &str, &str)> = decided
        .iter()
        .map(|r| {
            (
                r["keys"][0][1].as_str().unwrap(),
                r["decision"].as_str().unwrap(),
                r["by"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (format!("web.test:{port}").as_str(), "deny", "abort"),
            (format!("other.test:{port}").as_str(), "deny", "abort"),
        ],
        "{decided:?}"
    );
}

#[test]
fn with_output_into_a_pipe_nobody_is_asked() {
    let (port, d) = setup();
    // `cordon exec … | less`: the pipe's reader writes to the terminal on its own, so the
    // command's output could cover a question; the connection is denied instead.
    let mut p = Pty::exec_with_stdout(
        d.path(),
        &["-c", &format!("curl -sSf http://web.test:{port}/piped")],
        &[],
        Some(std::process::Stdio::piped()),
    );
    p.send(b"y");
    let (code, screen) = p.finish();
    assert_eq!(code, 22, "{screen}");
    assert!(!screen.contains("approval needed (network)"), "{screen}");
    let decided = connection_decisions(d.path());
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["decision"], "deny");
}

#[test]
fn a_question_in_a_session_does_not_hold_up_the_runs_other_connections() {
    curl_present();
    let port = web_server();
    let d = common::workspace(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
         [[shell.rules]]\npattern = \"curl *\"\naction = \"allow\"\n\
         [approval]\ntimeout = \"60s\"\naudit_log = \"audit.jsonl\"\n\
         [network]\ndefault = \"ask\"\nallow = [\"web.test\"]\n[network.hosts]\n\
         \"web.test\" = \"127.0.0.1\"\n\"other.test\" = \"127.0.0.1\"\n",
    );
    let mut p = Pty::exec(
        d.path(),
        &[
            "--session",
            "s1",
            "-c",
            &format!(
                "curl -sS --parallel --parallel-immediate http://other.test:{port}/asked http://web.test:{port}/allowed"
            ),
        ],
        &[],
    );
    p.expect(PROMPT);
    // While the question about other.test is open, web.test (allowed by a rule) is decided.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let allowed = connection_decisions(d.path())
            .iter()
            .any(|r| r["keys"][0][1] == format!("web.test:{port}") && r["decision"] == "allow");
        if allowed {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "web.test was never decided while the question was open: {:?}",
            connection_decisions(d.path())
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!p.screen().contains("waiting for"), "{}", p.screen());
    p.send(b"n");
    let (code, screen) = p.finish();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("GET /allowed HTTP/1.1"), "{screen}");
}

#[test]
fn connections_opened_at_once_are_asked_about_once() {
    let (port, d) = setup();
    // Three connections to one host at once (a package manager's parallel downloads): one
    // question; "for this run" answers the ones already waiting too.
    let mut p = exec(
        d.path(),
        &format!(
            "curl -sS --parallel --parallel-immediate http://web.test:{port}/1 http://web.test:{port}/2 http://web.test:{port}/3"
        ),
    );
    p.expect(PROMPT);
    p.send(b"s");
    let (code, screen) = p.finish();
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches("approval needed (network)").count(),
        1,
        "{screen}"
    );
    for n in 1..=3 {
        assert!(
            screen.contains(&format!("GET /{n} HTTP/1.1")),
            "{n}: {screen}"
        );
    }
    let decided = connection_decisions(d.path());
    assert_eq!(decided.len(), 3, "{decided:?}");
    assert!(
        decided.iter().all(|r| r["decision"] == "allow"),
        "{decided:?}"
    );
}
