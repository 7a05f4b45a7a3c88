//! The engine: precedence, keys, modes, memory, doom loop, timeouts, channels, tools.

use std::path::Path;
use std::time::{Duration, Instant};

use cordon_approval::{
    rule, Answer, ApprovalError, AskError, AsyncAsker, By, Concern, Engine, Key, Origin, Outcome,
    Pending, Request, RuleRef, Rules,
};
use cordon_policy::{Action, ApprovalMode, Policy};

fn policy(body: &str) -> Policy {
    Policy::parse(&format!("version = 1\n{body}"), "p.toml", Path::new("/")).unwrap()
}

fn r(pattern: &str, action: &str) -> String {
    format!("[[shell.rules]]\npattern = \"{pattern}\"\naction = \"{action}\"\n")
}

fn sh(line: &str) -> Request {
    Request::shell("id", vec![Key::split(line)])
}

fn shs(lines: &[&str]) -> Request {
    Request::shell("id", lines.iter().map(|l| Key::split(l)).collect())
}

fn engine(body: &str) -> Engine {
    let mut e = Engine::new(&policy(body));
    e.set_doom_loop(0);
    e
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Allowed { .. } => "allow",
        Outcome::Denied { .. } => "deny",
        Outcome::Ask(_) => "ask",
    }
}

fn never(_: &Request, _: &Pending, _: Instant) -> Result<Answer, AskError> {
    panic!("nobody should be asked")
}

#[test]
fn last_match_then_default() {
    let mut e = engine(&format!("{}{}", r("npm *", "ask"), r("npm test", "allow")));
    let o = e.evaluate(&sh("npm test"));
    assert_eq!(kind(&o), "allow");
    assert_eq!(o.by().to_string(), "rule p.toml:5:1 (npm test)");
    assert_eq!(kind(&e.evaluate(&sh("npm install"))), "ask");
    let o = e.evaluate(&sh("ls"));
    assert_eq!(
        o.by(),
        &By::Default {
            tool: "shell".into()
        }
    );
    assert_eq!(kind(&o), "ask", "secure default");
}

#[test]
fn explicit_deny_beats_session_and_persisted_grants() {
    let p = policy(&format!(
        "{}{}",
        r("git push --force*", "deny"),
        r("git *", "ask")
    ));
    let mut rules = Rules::from_policy(&p);
    let persisted = cordon_approval::Origin::Persisted;
    let forced = rule("rules.toml", 0, "git push --force", Action::Allow, None).unwrap();
    rules.add("shell", vec![forced], persisted).unwrap();
    let pull = rule("rules.toml", 1, "git pull", Action::Allow, None).unwrap();
    rules.add("shell", vec![pull], persisted).unwrap();
    let mut e = Engine::with_rules(rules, &p);
    e.set_doom_loop(0);
    e.memory_mut()
        .grant("shell", Key::split("git push --force"));
    let o = e.evaluate(&sh("git push --force"));
    assert_eq!(kind(&o), "deny");
    assert!(matches!(o.by(), By::Rule { pattern, .. } if pattern == "git push --force*"));
    assert!(matches!(
        o.result(),
        Err(ApprovalError::DeniedByRule { .. })
    ));
    // A persisted grant relaxes an ask and says so.
    let o = e.evaluate(&sh("git pull"));
    assert_eq!(kind(&o), "allow");
    assert_eq!(
        o.by().to_string(),
        "persisted grant rules.toml:2:1 (git pull)"
    );
    // approve-all does not relax a deny either.
    e.set_mode(ApprovalMode::ApproveAll);
    assert_eq!(kind(&e.evaluate(&sh("git push --force"))), "deny");
}

#[test]
fn several_keys_get_the_most_restrictive() {
    let mut e = engine(&format!(
        "[shell]\ndefault = \"allow\"\n{}{}",
        r("rm", "deny"),
        r("curl", "ask")
    ));
    assert_eq!(kind(&e.evaluate(&shs(&["ls", "echo hi"]))), "allow");
    assert_eq!(kind(&e.evaluate(&shs(&["ls", "curl x"]))), "ask");
    let o = e.evaluate(&shs(&["curl x", "rm -rf /", "ls"]));
    assert_eq!(kind(&o), "deny");
    assert!(matches!(o.by(), By::Rule { pattern, .. } if pattern == "rm"));
}

#[test]
fn modes_resolve_asks_only() {
    let body = format!("{}{}", r("ok", "allow"), r("no", "deny"));
    for (mode, ask) in [
        (ApprovalMode::ApproveAll, "allow"),
        (ApprovalMode::Strict, "deny"),
        (ApprovalMode::Deny, "deny"),
        (ApprovalMode::Interactive, "ask"),
    ] {
        let mut e = engine(&body);
        e.set_mode(mode);
        assert_eq!(kind(&e.evaluate(&sh("maybe"))), ask, "{mode:?}");
        assert_eq!(kind(&e.evaluate(&sh("ok"))), "allow", "{mode:?}");
        assert_eq!(kind(&e.evaluate(&sh("no"))), "deny", "{mode:?}");
        if mode != ApprovalMode::Interactive {
            assert_eq!(e.evaluate(&sh("maybe")).by(), &By::Mode(mode));
        }
    }
    // An ask stays an ask, whoever can answer it; a front end with nobody to ask concludes
    // it as a denial that says so.
    let mut e = engine("");
    let o = e.evaluate(&sh("x"));
    assert_eq!(kind(&o), "ask");
    let o = e.conclude(
        &sh("x"),
        Err(AskError::NobodyToAsk(
            "no terminal to ask on: allow it with a rule".into(),
        )),
        false,
    );
    assert_eq!(kind(&o), "deny");
    assert_eq!(o.by(), &By::NobodyToAsk);
    assert_eq!(o.reason(), "no terminal to ask on: allow it with a rule");
}

#[test]
fn explain_is_evaluate_without_side_effects() {
    let body = format!(
        "{}{}{}",
        r("git *", "allow"),
        r("git push*", "ask"),
        r("rm *", "deny")
    );
    let mut e = Engine::new(&policy(&body));
    e.set_doom_loop(3);
    let calls = [
        shs(&["git status", "git push origin"]),
        sh("git status"),
        sh("git status"),
        sh("git status"),
        sh("rm -rf x"),
        sh("ls"),
        sh("git push"),
        sh("git push"),
    ];
    for (i, req) in calls.iter().enumerate() {
        let before = (e.doom_state(), e.memory().len());
        let x = e.explain(req);
        let again = e.explain(req);
        assert_eq!(x, again, "call {i}: explain changes nothing");
        assert_eq!((e.doom_state(), e.memory().len()), before, "call {i}");
        let o = e.evaluate(req);
        assert_eq!(x.outcome, o, "call {i}: explain says what evaluate does");
        if i == 6 {
            e.answer(req, Answer::Session);
        }
    }
    // The steps are there to show: each key's rule, the doom loop, the session grant.
    let x = e.explain(&shs(&["git status", "git push origin"]));
    assert_eq!(x.keys.len(), 2);
    assert_eq!(x.keys[0].verdict.action, Action::Allow);
    assert_eq!(x.keys[1].verdict.action, Action::Ask);
    assert_eq!(x.rules.action, Action::Ask);
    assert!(!x.session_grant);
    e.set_doom_loop(0);
    let x = e.explain(&sh("git push"));
    assert!(x.session_grant, "granted for the session at call 6");
    assert_eq!(x.outcome.by(), &By::SessionGrant);
    e.set_doom_loop(2);
    let x = e.explain(&sh("git push"));
    assert_eq!((x.in_a_row, x.doom_loop), (3, true));
    assert_eq!(x.action(), Action::Ask);
    let x = e.explain(&sh("ls"));
    assert!(x.keys[0].by_default);
    e.set_mode(ApprovalMode::ApproveAll);
    let x = e.explain(&sh("ls"));
    assert_eq!(x.action(), Action::Allow);
    assert_eq!(x.by(), &By::Mode(ApprovalMode::ApproveAll));
}

#[test]
fn a_deferred_ask_is_recorded_as_an_ask() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut e = engine("");
    e.set_audit(cordon_approval::audit::AuditLog::open(&log).unwrap());
    let req = sh("make");
    let Outcome::Ask(p) = e.evaluate(&req) else {
        panic!("an ask")
    };
    let o = e.defer(&req, p.clone(), "claude-code");
    assert_eq!(o, Outcome::Ask(p));
    let text = std::fs::read_to_string(&log).unwrap();
    let rec: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(rec["decision"], "ask");
    assert_eq!(rec["deferred_to"], "claude-code");
    assert_eq!(rec["by"]["kind"], "default");
    assert!(
        text.find("\"decision\"").unwrap() < text.find("\"deferred_to\"").unwrap()
            && text.find("\"deferred_to\"").unwrap() < text.find("\"by\"").unwrap(),
        "deferred_to right after decision: {text}"
    );
    let report = cordon_approval::audit::verify(&log).unwrap();
    assert!(report.is_intact(), "{report:?}");

    // Nobody to ask: recorded as a denial by nobody_to_ask.
    let o = e.conclude(&req, Err(AskError::NobodyToAsk("nobody".into())), false);
    assert_eq!(o.by(), &By::NobodyToAsk);
    let text = std::fs::read_to_string(&log).unwrap();
    let rec: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(rec["decision"], "deny");
    assert_eq!(rec["by"]["kind"], "nobody-to-ask");
    assert!(cordon_approval::audit::verify(&log).unwrap().is_intact());
}

#[test]
fn tool_pre_approval_survives_strict_mode() {
    let mut e = engine("[tools.send_email]\napproval = \"allow\"\n[tools.nuke]\napproval = \"deny\"\n[approval]\nmode = \"strict\"\n");
    let o = e.evaluate(&Request::new(
        "1",
        "send_email",
        vec![Key::split("send_email bob")],
    ));
    assert_eq!(kind(&o), "allow");
    assert!(matches!(o.by(), By::ToolConfig { tool, .. } if tool == "send_email"));
    assert_eq!(
        kind(&e.evaluate(&Request::new("2", "nuke", vec![]))),
        "deny"
    );
    // An unconfigured tool without verdict asks, which strict denies.
    assert_eq!(
        kind(&e.evaluate(&Request::new("3", "other", vec![]))),
        "deny"
    );
}

/// A front end's refusal (the gate's `refuse`) is a deny concern: a rule allowing the tool,
/// a session grant and approve-all do not relax it, and the check that refused decides.
#[test]
fn a_front_ends_refusal_is_a_deny_concern_nothing_relaxes() {
    let mut e = engine("");
    let req = || {
        Request::new("1", "read_file", vec![Key::split("read_file a.txt")])
            .with_concern(Concern::new(Action::Deny, "paths", "roots"))
    };
    e.rules_mut()
        .add(
            "read_*",
            vec![rule("host", 0, "read_file *", Action::Allow, None).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    e.memory_mut()
        .grant("read_file", Key::split("read_file a.txt"));
    e.set_mode(ApprovalMode::ApproveAll);
    let o = e.evaluate(&req());
    assert_eq!(kind(&o), "deny");
    assert_eq!(o.by(), &By::Tool(RuleRef::Builtin("paths")));
    assert_eq!(o.reason(), "roots");
}

#[test]
fn tool_globs_and_order_across_groups() {
    let mut e = engine("");
    let rules = e.rules_mut();
    rules
        .add(
            "*_file",
            vec![rule("host", 0, "* **", Action::Ask, None).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    rules
        .add(
            "write_file",
            vec![rule("host", 1, "write_file notes/*", Action::Allow, None).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    rules
        .add(
            "{write,edit}_file",
            vec![rule("host", 2, "* .env", Action::Deny, Some("secrets")).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    let w = |p: &str| Request::new("1", "write_file", vec![Key::new(["write_file", p])]);
    assert_eq!(
        kind(&e.evaluate(&w("notes/a.txt"))),
        "allow",
        "later literal group wins"
    );
    assert_eq!(kind(&e.evaluate(&w("src/a.rs"))), "ask");
    let o = e.evaluate(&w(".env"));
    assert_eq!((kind(&o), o.reason()), ("deny", "secrets"));
    let rd = Request::new("1", "read_file", vec![Key::new(["read_file", ".env"])]);
    assert_eq!(
        kind(&e.evaluate(&rd)),
        "ask",
        "deny group does not match read_file"
    );
}

#[test]
fn session_grants_need_every_key_and_can_be_revoked() {
    let mut e = engine("");
    let req = shs(&["make", "make install"]);
    let Outcome::Ask(_) = e.evaluate(&req) else {
        panic!()
    };
    assert_eq!(kind(&e.answer(&req, Answer::Session)), "allow");
    assert_eq!(e.memory().len(), 2);
    let o = e.evaluate(&req);
    assert_eq!(o.by(), &By::SessionGrant);
    assert_eq!(
        kind(&e.evaluate(&shs(&["make", "make clean"]))),
        "ask",
        "all keys"
    );
    assert_eq!(kind(&e.evaluate(&sh("make"))), "allow");
    assert!(e.memory_mut().revoke("shell", &Key::split("make")));
    assert_eq!(kind(&e.evaluate(&sh("make"))), "ask");
    assert_eq!(
        e.memory().list(),
        vec![("shell".into(), Key::split("make install"))]
    );
}

#[test]
fn answers_map_to_typed_errors() {
    let mut e = engine("");
    let req = sh("x");
    assert_eq!(
        e.answer(&req, Answer::Deny).result(),
        Err(ApprovalError::Rejected)
    );
    assert_eq!(
        e.answer(&req, Answer::DenyWithNote("use y".into()))
            .result(),
        Err(ApprovalError::Corrected {
            note: "use y".into()
        })
    );
    assert_eq!(
        e.answer(&req, Answer::Abort).result(),
        Err(ApprovalError::Aborted)
    );
    assert_eq!(e.answer(&req, Answer::Once).result(), Ok(()));
}

#[test]
fn always_produces_an_amendment_or_says_why_not() {
    let mut e = engine("");
    let o = e.answer(&sh("cargo build --release"), Answer::Always);
    let Outcome::Allowed { amendments, .. } = &o else {
        panic!("{o:?}")
    };
    assert_eq!(amendments.len(), 1);
    assert_eq!(amendments[0].pattern, "cargo build --release");
    assert!(e
        .memory()
        .is_granted("shell", &Key::split("cargo build --release")));
    let o = e.answer(&sh("bash -c ls"), Answer::Always);
    let Outcome::Allowed {
        amendments, reason, ..
    } = &o
    else {
        panic!()
    };
    assert!(amendments.is_empty());
    assert!(
        reason.contains("approved once") && reason.contains("`bash`"),
        "{reason}"
    );
    assert!(!e.memory().is_granted("shell", &Key::split("bash -c ls")));
}

#[test]
fn doom_loop_raises_an_allow_to_ask() {
    let mut e = engine(&r("ls", "allow"));
    e.set_doom_loop(3);
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    let o = e.evaluate(&sh("ls"));
    assert_eq!(kind(&o), "ask");
    assert_eq!(o.by(), &By::DoomLoop { count: 3 });
    assert!(o.reason().contains("3 times in a row"), "{}", o.reason());
    assert_eq!(
        kind(&e.evaluate(&sh("ls -l"))),
        "allow",
        "a different call resets"
    );
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    // Off with 0.
    e.set_doom_loop(0);
    for _ in 0..10 {
        assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    }
    // Strict mode denies the doom-loop ask.
    e.set_doom_loop(2);
    e.set_mode(ApprovalMode::Strict);
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "deny");
}

#[test]
fn connections_neither_count_in_the_doom_loop_nor_break_it() {
    let mut e = Engine::new(&policy(&format!(
        "{}[sandbox]\nnetwork = \"proxy\"\n[network]\nallow = [\"index.example.org:443\"]\n",
        r("ls", "allow")
    )));
    e.set_doom_loop(3);
    let connect = || {
        Request::new(
            "c",
            "network",
            vec![Key::new(["network", "index.example.org:443"])],
        )
    };
    // A package manager's downloads: many connections to one host, all allowed.
    for _ in 0..20 {
        assert_eq!(kind(&e.evaluate(&connect())), "allow");
    }
    // The agent's own repeated call is still caught, connections in between or not.
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    e.evaluate(&connect());
    assert_eq!(kind(&e.evaluate(&sh("ls"))), "allow");
    e.evaluate(&connect());
    let o = e.evaluate(&sh("ls"));
    assert_eq!(o.by(), &By::DoomLoop { count: 3 });
}

#[test]
fn blocking_timeout_denies_with_a_readable_reason() {
    let mut e = engine("");
    e.set_timeout(Duration::from_millis(50));
    let mut slow = |_: &Request, _: &Pending, _: Instant| {
        std::thread::sleep(Duration::from_millis(120));
        Ok(Answer::Once) // too late: does not count
    };
    let o = e.decide_blocking(&sh("x"), &mut slow);
    assert_eq!(o.by(), &By::TimedOut);
    assert!(
        o.reason().contains("timed out") && o.reason().contains("50ms"),
        "{}",
        o.reason()
    );
    assert!(matches!(o.result(), Err(ApprovalError::TimedOut { .. })));
    let mut gives_up = |_: &Request, _: &Pending, d: Instant| {
        assert!(d > Instant::now());
        Err(AskError::TimedOut)
    };
    assert_eq!(
        e.decide_blocking(&sh("x"), &mut gives_up).by(),
        &By::TimedOut
    );
    let mut yes = |_: &Request, _: &Pending, _: Instant| Ok(Answer::Once);
    assert_eq!(e.decide_blocking(&sh("x"), &mut yes).by(), &By::User);
    // No ask, no asker call.
    let mut e = engine(&r("ok", "allow"));
    assert!(e.decide_blocking(&sh("ok"), &mut never).is_allowed());
}

#[test]
fn lost_channel_denies() {
    let mut e = engine("");
    let mut lost = |_: &Request, _: &Pending, _: Instant| Err(AskError::Lost("tty closed".into()));
    let o = e.decide_blocking(&sh("x"), &mut lost);
    assert_eq!(o.by(), &By::ChannelLost);
    assert!(o.reason().contains("tty closed"));
    assert!(matches!(o.result(), Err(ApprovalError::ChannelLost { .. })));
}

struct Forever;
impl AsyncAsker for Forever {
    async fn ask(&mut self, _: &Request, _: &Pending) -> Result<Answer, AskError> {
        std::future::pending().await
    }
}

struct Scripted(Vec<Result<Answer, AskError>>);
impl AsyncAsker for Scripted {
    async fn ask(&mut self, _: &Request, _: &Pending) -> Result<Answer, AskError> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        self.0.remove(0)
    }
}

#[tokio::test(start_paused = true)]
async fn async_timeout_and_channel() {
    let mut e = engine("");
    e.set_timeout(Duration::from_secs(300));
    let t0 = tokio::time::Instant::now();
    let o = e.decide(&sh("x"), &mut Forever).await;
    assert_eq!(o.by(), &By::TimedOut);
    assert!(o.reason().contains("5m"), "{}", o.reason());
    assert_eq!(t0.elapsed(), Duration::from_secs(300));
    let mut s = Scripted(vec![
        Ok(Answer::Session),
        Err(AskError::Lost("ws closed".into())),
    ]);
    assert_eq!(e.decide(&sh("y"), &mut s).await.by(), &By::User);
    assert_eq!(e.decide(&sh("y"), &mut s).await.by(), &By::SessionGrant);
    assert_eq!(e.decide(&sh("z"), &mut s).await.by(), &By::ChannelLost);
}

#[test]
fn disabled_tools_are_reported() {
    let mut e = engine(&format!(
        "{}[tools.nuke]\napproval = \"deny\"\n[tools.mail]\napproval = \"ask\"\n[tools.ok]\napproval = \"allow\"\n",
        r("ls", "allow")
    ));
    e.rules_mut()
        .add(
            "web_*",
            vec![rule("host", 0, "*", Action::Deny, Some("no network")).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    let names = |e: &Engine| {
        e.disabled_tools(["shell", "nuke", "mail", "ok", "web_fetch", "read_file"])
            .into_iter()
            .map(|d| d.tool)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&e), ["nuke", "web_fetch"]);
    let d = e.disabled_tools(["web_fetch"]);
    assert_eq!(d[0].reason, "no network");
    e.set_mode(ApprovalMode::Strict);
    assert_eq!(
        names(&e),
        ["nuke", "mail", "web_fetch"],
        "strict removes ask-only tools"
    );
    // A shell with default deny and no allow rule is removed; with one it is kept.
    let e = engine("[shell]\ndefault = \"deny\"\n");
    assert_eq!(names(&e), ["shell"]);
    let e = engine(&format!(
        "[shell]\ndefault = \"deny\"\n{}",
        r("ls", "allow")
    ));
    assert!(names(&e).is_empty());
}

#[test]
fn a_disabled_tool_is_denied_even_without_keys() {
    let mut e = engine("[tools.web_fetch]\napproval = \"allow\"\n");
    e.rules_mut()
        .add(
            "web_*",
            vec![rule("host", 0, "*", Action::Deny, Some("no network")).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    assert_eq!(e.disabled_tools(["web_fetch"])[0].tool, "web_fetch");
    // Reported disabled, so it must act so: a call with no keys is denied by the same rule.
    let o = e.evaluate(&Request::new("1", "web_fetch", vec![]));
    assert_eq!(kind(&o), "deny", "{o:?}");
    assert_eq!(o.reason(), "no network");
    // A tool no blanket rule covers keeps its default.
    let mut e = engine("[tools.web_fetch]\napproval = \"allow\"\n");
    assert_eq!(
        kind(&e.evaluate(&Request::new("1", "web_fetch", vec![]))),
        "allow"
    );
}

#[test]
fn a_session_grant_never_covers_a_concern() {
    let concern = cordon_approval::Concern::new(
        Action::Ask,
        "environment",
        "`GIT_PAGER=x` may change what the program runs",
    );
    let mut e = engine(&r("touch *", "ask"));
    let plain = sh("touch f");
    let with_concern = sh("touch f").with_concern(concern.clone());
    assert_eq!(kind(&e.answer(&plain, Answer::Session)), "allow");
    // The grant covers the keys...
    assert_eq!(e.evaluate(&plain).by(), &By::SessionGrant);
    // ...but not what the keys do not capture: that asks again, with the concern's reason.
    let o = e.evaluate(&with_concern);
    assert_eq!(kind(&o), "ask", "{o:?}");
    assert_eq!(o.reason(), concern.reason);
    // A rule's allow does not lift it either, and a concern that denies denies.
    let mut e = engine(&r("touch *", "allow"));
    assert_eq!(kind(&e.evaluate(&with_concern)), "ask");
    let deny = cordon_approval::Concern {
        action: Action::Deny,
        ..concern
    };
    assert_eq!(kind(&e.evaluate(&sh("touch f").with_concern(deny))), "deny");
}

#[test]
fn a_passing_key_is_allowed_unless_a_rule_names_it() {
    use cordon_approval::{Key, Passing};
    let passing = |words: &str| Passing {
        key: Key::split(words),
        check: "wrapper",
        reason: "runs its command as it is".into(),
    };
    // `timeout 60 pytest`: the wrapper passes, the command is decided by its rule.
    let e = engine(&r("pytest", "allow"));
    let req = sh("pytest").with_passing(passing("timeout 60"));
    let x = e.explain(&req);
    assert_eq!(x.action(), Action::Allow, "{x:?}");
    assert_eq!(x.keys.len(), 2);
    assert_eq!(x.keys[1].verdict.by, By::Tool(RuleRef::Builtin("wrapper")));
    // Only passing keys (`true` alone): allowed by their check as in a longer line, not by
    // the shell default (which asks here): check and exec agree on it.
    let only = cordon_approval::Request::shell("x", vec![]).with_passing(passing("true"));
    assert_eq!(e.explain(&only).action(), Action::Allow);
    // A rule that names the wrapper decides it like any key.
    let mut e = engine(&format!("{}{}", r("pytest", "allow"), r("timeout", "deny")));
    assert_eq!(kind(&e.evaluate(&req)), "deny");
}

#[test]
fn an_option_concern_is_lifted_only_by_an_allow_rule_naming_the_option() {
    use cordon_approval::{Concern, Key};
    let mut c = Concern::new(Action::Ask, "option-effect", "`-delete` deletes files");
    c.lift = Some((Key::split("find . -delete"), "-delete".into()));
    let req = sh("find . -delete").with_concern(c);
    let mut e = engine(&r("find", "allow"));
    assert_eq!(kind(&e.evaluate(&req)), "ask");
    let mut e = engine(&r("find * -delete", "allow"));
    assert_eq!(kind(&e.evaluate(&req)), "allow");
}

#[test]
fn a_deny_rule_on_an_option_matches_wherever_the_option_stands() {
    let mut e = engine(&format!(
        "{}{}",
        r("git *", "allow"),
        r("git push --force*", "deny")
    ));
    assert_eq!(
        kind(&e.evaluate(&sh("git push origin main --force"))),
        "deny"
    );
    assert_eq!(kind(&e.evaluate(&sh("git push origin main"))), "allow");
}

/// A file tool hands facts (the root that holds the path, whether it writes, a surface hit,
/// its refusals); the engine decides: the root's approval setting (else its mode's allow) is
/// the default of a key no rule matches, a rule decides over it, a surface write asks at least
/// (a rule's allow does not lower it, a grant for the key covers it), a refusal is final in
/// every mode.
#[test]
fn a_file_call_is_decided_from_its_facts_with_the_roots() {
    use cordon_approval::{Concern, FileAccess};
    let dir = tempfile::tempdir().unwrap();
    for d in ["notes", "docs", "ws"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let text = "version = 1\n\
        [sandbox.paths.notes]\nroot = \"notes\"\nmode = \"rw\"\nwrite_approval = true\n\
        [sandbox.paths.docs]\nroot = \"docs\"\nmode = \"ro\"\n\
        [sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n";
    let p = Policy::parse(text, "p.toml", dir.path()).unwrap();
    let mut e = Engine::new(&p);
    e.set_doom_loop(0);
    let file = |tool: &str, path: &str, root: &str, surface: Option<&str>| {
        let writes = tool != "read_file";
        Request::new("id", tool, vec![Key::new([tool, path])]).with_file(FileAccess {
            root: root.into(),
            writes,
            surface: surface.map(String::from),
        })
    };
    let decided = |e: &Engine, req: &Request| {
        let x = e.explain(req);
        let rule = match x.by() {
            By::Tool(r) => r.to_string(),
            other => other.tag().to_string(),
        };
        (x.action(), rule)
    };
    let read = file("read_file", "docs/r.md", "docs", None);
    assert_eq!(decided(&e, &read), (Action::Allow, "default".into()));
    assert!(e.explain(&read).reason().contains("(ro) allows reads"));
    let note = file("write_file", "notes/a.txt", "notes", None);
    assert_eq!(
        decided(&e, &note),
        (Action::Ask, "builtin:write_approval".into())
    );
    let plain = file("write_file", "ws/a.txt", "ws", None);
    assert_eq!(decided(&e, &plain), (Action::Allow, "default".into()));
    let hook = file("write_file", "ws/.envrc", "ws", Some("direnv runs it"));
    assert_eq!(decided(&e, &hook), (Action::Ask, "builtin:surface".into()));
    assert!(e.explain(&hook).reason().contains("direnv runs it"));
    // A read on the surface is no write: the root's mode decides.
    let peek = file("read_file", "ws/.envrc", "ws", Some("direnv runs it"));
    assert_eq!(decided(&e, &peek), (Action::Allow, "default".into()));
    // A root the engine's policy does not name: ask, never allow.
    let stray = file("write_file", "x/a.txt", "x", None);
    assert_eq!(decided(&e, &stray).0, Action::Ask);
    // A refusal is final, whatever the mode.
    let refused = file("write_file", "ws/a.txt", "ws", None).with_concern(Concern::new(
        Action::Deny,
        "protected",
        "inside a protected path",
    ));
    e.set_mode(ApprovalMode::ApproveAll);
    assert_eq!(
        decided(&e, &refused),
        (Action::Deny, "builtin:protected".into())
    );
    assert_eq!(
        decided(&e, &hook).0,
        Action::Allow,
        "approve-all allows the ask"
    );
    e.set_mode(ApprovalMode::Interactive);
    // A rule decides a key over the root's setting, as over `[shell] default`; the surface
    // still asks under it.
    e.rules_mut()
        .add(
            "write_file",
            vec![rule("host", 0, "write_file **", Action::Allow, None).unwrap()],
            Origin::Policy,
        )
        .unwrap();
    assert_eq!(decided(&e, &note).0, Action::Allow);
    assert_eq!(decided(&e, &hook), (Action::Ask, "builtin:surface".into()));
    // Round 10 of issue 21: a session grant for the key does not cover the surface ask. The
    // person approved the content they were shown; a grant for `write_file ws/.envrc` let every
    // later content of the file through unasked (as the shell's surface concern, no grant
    // covers it).
    e.memory_mut()
        .grant("write_file", Key::new(["write_file", "ws/.envrc"]));
    assert!(e.explain(&hook).session_grant);
    assert_eq!(decided(&e, &hook), (Action::Ask, "builtin:surface".into()));
    // Nor does answering "for the session" or "always" remember anything for it: the write is
    // approved once, and the outcome says why nothing was remembered.
    let mut e = Engine::new(&p);
    e.set_doom_loop(0);
    for answer in [Answer::Session, Answer::Always] {
        let o = e.answer(&hook, answer);
        assert!(o.is_allowed(), "{o:?}");
        assert!(o.reason().contains("asked for each write"), "{o:?}");
        assert!(matches!(&o, Outcome::Allowed { amendments, .. } if amendments.is_empty()));
        assert_eq!(decided(&e, &hook), (Action::Ask, "builtin:surface".into()));
        assert!(!e.explain(&hook).session_grant, "nothing granted");
    }
}

/// A shell key whose words marked `?` (any one word) or `+` (any words) are only known at run
/// time; the marks are dropped from the words.
fn unknown(line: &str) -> Request {
    use cordon_approval::Known;
    let (words, known): (Vec<&str>, Vec<Known>) = line
        .split_whitespace()
        .map(|w| match (w.strip_suffix('?'), w.strip_suffix('+')) {
            (Some(w), _) => (w, Known::OneWord),
            (_, Some(w)) => (w, Known::AnyWords),
            _ => (w, Known::Literal),
        })
        .unzip();
    Request::shell("id", vec![Key::new(words).with_known(known)])
}

/// Issue 21 round 8: a rule was matched against an unknown word's spelling, so `git push "$f"`
/// was allowed under a deny on `git push --force`. Where a deny or ask rule could match some
/// value of the unknown words, the allow is an ask (never a deny); a rule that no value could
/// reach leaves it allowed; an ask or deny stays what it was.
#[test]
fn a_rule_an_unknown_word_could_match_makes_an_allow_an_ask() {
    let mut e = engine(&format!(
        "[shell]\ndefault = \"allow\"\n{}{}{}{}",
        r("git push --force", "deny"),
        r("npm publish", "ask"),
        r("rm -[rRf]*[rRf] /*", "deny"),
        r("git status", "allow"),
    ));
    for line in [
        "git push \"$f\"?",
        "git push origin \"$f\"?",
        "git $cmd+",
        "git push $opts+ origin",
        "npm \"$verb\"?",
        "rm -rf \"$x\"?",
        "rm {xargs-input}+",
    ] {
        let o = e.evaluate(&unknown(line));
        assert_eq!(kind(&o), "ask", "{line}: {o:?}");
    }
    // The same words, all known: what they spell.
    assert_eq!(kind(&e.evaluate(&sh("git push \"$f\""))), "allow");
    // No value reaches a rule.
    for line in [
        "git commit -m \"$msg\"?",
        "git status \"$x\"?",
        "ls \"$dir\"?",
        "npm run \"$s\"?",
        "rm -rf *.o+",
        "rm -rf build/*+",
        "cargo build $flags+",
    ] {
        let o = e.evaluate(&unknown(line));
        assert_eq!(kind(&o), "allow", "{line}: {o:?}");
    }
    // The reason names the rule and the word.
    let o = e.evaluate(&unknown("git push \"$f\"?"));
    let Outcome::Ask(p) = &o else { unreachable!() };
    assert!(
        p.reason.contains("git push --force") && p.reason.contains("\"$f\""),
        "{}",
        p.reason
    );
    // A deny stays a deny; an ask never becomes an allow.
    assert_eq!(
        kind(&e.evaluate(&unknown("git push --force \"$x\"?"))),
        "deny"
    );
    assert_eq!(kind(&e.evaluate(&unknown("npm publish \"$x\"?"))), "ask");
}
