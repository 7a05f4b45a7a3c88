//! Deferred approvals: batches, cascades, timeouts, channels.

use std::path::Path;
use std::time::{Duration, Instant};

use cordon_approval::{
    Answer, AskError, AsyncAsker, By, Engine, Error, Key, Outcome, Pending, Request,
};
use cordon_policy::Policy;
use serde_json::json;

fn engine() -> Engine {
    let text = "version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\n";
    let mut e = Engine::new(&Policy::parse(text, "p.toml", Path::new("/")).unwrap());
    e.set_doom_loop(0);
    e
}

fn req(id: &str, lines: &[&str]) -> Request {
    Request::shell(id, lines.iter().map(|l| Key::split(l)).collect())
}

fn turn() -> Vec<Request> {
    vec![
        req("a", &["ls"]),
        req("b", &["make"]),
        req("c", &["make", "make test"]),
        req("d", &["make test"]),
        req("e", &["rm -rf x"]),
        req("f", &["cargo build"]),
    ]
}

fn ids(pending: Vec<(&Request, &Pending)>) -> Vec<String> {
    pending.into_iter().map(|(r, _)| r.id.clone()).collect()
}

#[test]
fn pending_lists_only_asks() {
    let mut e = engine();
    let b = e.batch(turn());
    assert_eq!(ids(b.pending()), ["b", "c", "d", "f"]);
    assert!(b.outcome("a").unwrap().is_allowed());
    assert_eq!(b.outcome("e").unwrap().by().tag(), "rule");
}

#[test]
fn session_on_one_resolves_what_it_now_covers() {
    let mut e = engine();
    let mut b = e.batch(turn());
    b.answer("b", Answer::Session).unwrap();
    assert_eq!(ids(b.pending()), ["c", "d", "f"], "c needs `make test` too");
    b.answer("d", Answer::Session).unwrap();
    assert_eq!(ids(b.pending()), ["f"], "c now covered");
    assert_eq!(b.outcome("c").unwrap().by(), &By::SessionGrant);
    assert!(b.outcome("c").unwrap().reason().contains("`d`"));
    assert!(matches!(
        b.answer("c", Answer::Once),
        Err(Error::AlreadyDecided(id)) if id == "c"
    ));
    assert!(matches!(
        b.answer("zz", Answer::Once),
        Err(Error::UnknownId(id)) if id == "zz"
    ));
    let out = b.finish();
    assert_eq!(
        out[5].outcome.by(),
        &By::Unanswered,
        "an unanswered request is denied"
    );
    assert!(!out[5].outcome.is_allowed());
    assert_eq!(e.memory().len(), 2);
}

#[test]
fn reject_with_cancel_rest_denies_the_others() {
    let mut e = engine();
    let mut b = e.batch(turn());
    b.approve_with_args("b", json!({"target": "all"})).unwrap();
    b.reject("c", Some("not now".into()), true).unwrap();
    assert!(b.is_done());
    let out = b.finish();
    assert!(out[1].outcome.is_allowed());
    assert_eq!(out[1].args, Some(json!({"target": "all"})));
    let Outcome::Denied { note, .. } = &out[2].outcome else {
        panic!()
    };
    assert_eq!(note.as_deref(), Some("not now"));
    for i in [3, 5] {
        assert!(
            out[i].outcome.reason().contains("cancelled"),
            "{:?}",
            out[i]
        );
    }
    assert!(
        out[0].outcome.is_allowed(),
        "decided requests are untouched"
    );
}

#[test]
fn reject_without_cancel_keeps_the_rest_and_abort_ends_all() {
    let mut e = engine();
    let mut b = e.batch(turn());
    b.reject("b", None, false).unwrap();
    assert_eq!(ids(b.pending()), ["c", "d", "f"]);
    b.answer("c", Answer::Abort).unwrap();
    assert!(b.is_done());
    let out = b.finish();
    assert!(out[3..]
        .iter()
        .filter(|r| r.request.id != "e")
        .all(|r| r.outcome.by() == &By::Abort));
}

#[test]
fn approve_all_and_deny_all() {
    let mut e = engine();
    let mut b = e.batch(turn());
    b.approve_all();
    let out = b.finish();
    assert_eq!(out.iter().filter(|r| r.outcome.is_allowed()).count(), 5);
    assert!(e.memory().is_empty(), "once grants nothing");
    let mut b = e.batch(turn());
    b.deny_all(Some("stop".into()));
    let out = b.finish();
    assert_eq!(out.iter().filter(|r| r.outcome.is_allowed()).count(), 1);
}

#[test]
fn run_blocking_asks_in_order_under_one_deadline() {
    let mut e = engine();
    e.set_timeout(Duration::from_millis(100));
    let mut asked = Vec::new();
    let mut b = e.batch(turn());
    let mut asker = |r: &Request, _: &Pending, _: Instant| {
        asked.push(r.id.clone());
        match r.id.as_str() {
            "b" | "c" => Ok(Answer::Session),
            _ => {
                std::thread::sleep(Duration::from_millis(150));
                Ok(Answer::Once)
            }
        }
    };
    b.run_blocking(&mut asker);
    let out = b.finish();
    assert_eq!(asked, ["b", "c", "f"], "d was covered before its turn");
    assert_eq!(out[3].outcome.by(), &By::SessionGrant);
    assert_eq!(out[5].outcome.by(), &By::TimedOut);
}

#[test]
fn run_blocking_lost_channel_denies_the_rest() {
    let mut e = engine();
    let mut b = e.batch(turn());
    let mut lost = |_: &Request, _: &Pending, _: Instant| Err(AskError::Lost("gone".into()));
    b.run_blocking(&mut lost);
    let out = b.finish();
    for i in [1, 2, 3, 5] {
        assert_eq!(out[i].outcome.by(), &By::ChannelLost);
    }
}

struct ById;
impl AsyncAsker for ById {
    async fn ask(&mut self, r: &Request, _: &Pending) -> Result<Answer, AskError> {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(if r.id == "b" {
            Answer::Session
        } else {
            Answer::Once
        })
    }
}

#[tokio::test(start_paused = true)]
async fn run_async_times_out_the_rest() {
    let mut e = engine();
    e.set_timeout(Duration::from_secs(150));
    let mut b = e.batch(turn());
    b.run(&mut ById).await;
    let out = b.finish();
    let by: Vec<&str> = out.iter().map(|r| r.outcome.by().tag()).collect();
    // b at 60s, c at 120s (needs `make test`), d would end at 180s > 150s, f past the deadline.
    assert_eq!(by, ["rule", "user", "user", "timeout", "rule", "timeout"]);
}

#[test]
fn an_answer_after_the_timeout_denies() {
    let mut e = engine();
    e.set_timeout(Duration::from_millis(30));
    let mut b = e.batch(turn());
    std::thread::sleep(Duration::from_millis(60));
    // Whatever the person says now comes too late: timed out, never allowed.
    let o = b.answer("b", Answer::Session).unwrap().clone();
    assert_eq!(o.by(), &By::TimedOut, "{o:?}");
    assert!(!o.is_allowed());
    let o = b.approve_with_args("f", json!({"x": 1})).unwrap().clone();
    assert_eq!(o.by(), &By::TimedOut);
    b.approve_all();
    for r in b.finish() {
        if ["b", "c", "d", "f"].contains(&r.request.id.as_str()) {
            assert_eq!(r.outcome.by(), &By::TimedOut, "{}", r.request.id);
        }
    }
    assert_eq!(e.memory().len(), 0, "a late session answer grants nothing");
}

#[test]
fn a_session_answer_does_not_cascade_over_a_concern() {
    let concern = cordon_approval::Concern::new(
        cordon_policy::Action::Ask,
        "environment",
        "`PAGER=x` may change what the program runs",
    );
    let mut e = engine();
    let mut b = e.batch(vec![
        req("a", &["make"]),
        req("b", &["make"]).with_concern(concern),
    ]);
    b.answer("a", Answer::Session).unwrap();
    assert_eq!(
        ids(b.pending()),
        ["b"],
        "the grant covers `make`, not the concern"
    );
}

/// The cascade decides through the one evaluator: a session grant covers another pending call
/// only when `Engine::explain` allows it by that grant — not when a wrapper a rule names
/// (`timeout`) or a concern stands beside the granted keys.
#[test]
fn a_cascade_allows_only_what_explain_allows() {
    use cordon_approval::{Concern, Passing};
    use cordon_policy::Action;
    let text = "version = 1\n[[shell.rules]]\npattern = \"timeout\"\naction = \"ask\"\n";
    let mut e = Engine::new(&Policy::parse(text, "p.toml", Path::new("/")).unwrap());
    e.set_doom_loop(0);
    let wrapped = req("w", &["make"]).with_passing(Passing {
        key: Key::split("timeout 5"),
        check: "wrapper",
        reason: "runs its command as it is".into(),
    });
    let concerned = req("c", &["make"]).with_concern(Concern::new(
        Action::Ask,
        "environment",
        "sets LD_PRELOAD",
    ));
    let turn = vec![req("m", &["make"]), wrapped, concerned, req("n", &["make"])];
    let mut b = e.batch(turn);
    assert_eq!(ids(b.pending()), ["m", "w", "c", "n"]);
    b.answer("m", Answer::Session).unwrap();
    assert_eq!(
        ids(b.pending()),
        ["w", "c"],
        "`timeout 5` is decided by a rule and not granted; the concern is in no key"
    );
    assert_eq!(b.outcome("n").unwrap().by(), &By::SessionGrant);
    // What the batch left pending, the evaluator asks about too; what it allowed, it allows.
    let out = b.finish();
    for r in &out {
        let x = e.explain(&r.request);
        assert_eq!(
            x.outcome.is_allowed(),
            r.outcome.is_allowed(),
            "{}: {:?}",
            r.request.id,
            x.outcome
        );
    }
}
