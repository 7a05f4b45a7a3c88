//! Decisions per second against policies of 10 … 10,000 shell rules, on one core.
//!
//! `cargo run --release -p cordon-approval --example decide_bench`
//!
//! Two scenarios, each a policy of N rules and 1,024 request keys to cycle through; every
//! decision goes through the whole engine (rules, session memory, doom loop, mode) and yields
//! an owned `Outcome`.
//!
//! - `spread`: N − 10 rules over N/4 distinct literal command names (`cmdK sub…`, allow / ask /
//!   deny), plus 10 rules whose first token is a glob (checked for every command). Keys hit a
//!   rule, name a command no rule names (the default decides), or match a glob rule.
//! - `one-command`: all N rules start with `git` (a git worker's policy): `git *` and
//!   `git push --force*` first, then `git <sub> …` over 12 subcommands with literal arguments,
//!   globs with a literal prefix (`arg7-*`, `--opt7=*`, `ref7/**`) and a shared `*` followed
//!   by a literal. Keys hit each kind of rule, or only `git *`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cordon_approval::{Engine, Key, Request};
use cordon_policy::Policy;

const ACTIONS: [&str; 3] = ["allow", "ask", "deny"];
const SUBS: [&str; 12] = [
    "push", "pull", "fetch", "commit", "log", "diff", "checkout", "branch", "tag", "merge",
    "rebase", "stash",
];

fn parse(rules: impl IntoIterator<Item = (String, &'static str)>) -> Policy {
    let mut text = String::from("version = 1\n[shell]\ndefault = \"ask\"\n");
    for (pattern, action) in rules {
        text.push_str(&format!(
            "[[shell.rules]]\npattern = \"{pattern}\"\naction = \"{action}\"\n"
        ));
    }
    Policy::parse(&text, "bench.toml", std::path::Path::new("/")).unwrap()
}

fn spread_policy(n: usize) -> Policy {
    let names = (n / 4).max(1);
    let indexed = (0..n.saturating_sub(10)).map(|i| {
        let pattern = match i % 4 {
            0 => format!("cmd{} sub{}", i % names, i % 7),
            1 => format!("cmd{} sub{} --flag*", i % names, i % 5),
            2 => format!("cmd{}", i % names),
            _ => format!("cmd{} * x{}", i % names, i % 3),
        };
        (pattern, ACTIONS[i % 3])
    });
    let globs = (0..10.min(n)).map(|g| (format!("tool{g}* --x*"), "ask"));
    parse(indexed.chain(globs))
}

fn spread_requests(n: usize) -> Vec<Vec<String>> {
    let names = (n / 4).max(1);
    (0..1024)
        .map(|i| match i % 4 {
            0 => vec![
                format!("cmd{}", i % names),
                format!("sub{}", i % 7),
                "a".into(),
            ],
            1 => vec![
                format!("cmd{}", (i * 7) % names),
                format!("sub{}", i % 5),
                "--flag=1".into(),
            ],
            2 => vec![format!("other{i}"), "arg".into()],
            _ => vec![format!("tool{}x", i % 10), "--x1".into()],
        })
        .collect()
}

fn git_policy(n: usize) -> Policy {
    let head = [
        ("git *".to_string(), "ask"),
        ("git push --force*".to_string(), "deny"),
    ];
    let rest = (0..n.saturating_sub(head.len())).map(|i| {
        let sub = SUBS[i % SUBS.len()];
        let pattern = match (i / SUBS.len()) % 5 {
            0 => format!("git {sub} arg{i}"),
            1 => format!("git {sub} arg{i}-*"),
            2 => format!("git {sub} --opt{i}=*"),
            3 => format!("git {sub} * file{i}"),
            _ => format!("git {sub} ref{i}/**"),
        };
        (pattern, ACTIONS[i % 3])
    });
    parse(head.into_iter().take(n).chain(rest))
}

fn git_requests(n: usize) -> Vec<Vec<String>> {
    (0..1024usize)
        .map(|i| {
            // A rule index spread over the policy (so keys hit early and late rules alike).
            let r = (i * 7919) % n.max(1);
            let sub = SUBS[i % SUBS.len()].to_string();
            let w: Vec<String> = match i % 6 {
                0 => vec![sub, format!("arg{r}")],
                1 => vec![sub, format!("arg{r}-x"), "y".into()],
                2 => vec![sub, format!("--opt{r}=v")],
                3 => vec![sub, "some".into(), format!("file{r}")],
                4 => vec!["push".into(), "--force-with-lease".into(), "origin".into()],
                _ => vec!["status".into(), "--short".into()],
            };
            std::iter::once("git".to_string()).chain(w).collect()
        })
        .collect()
}

/// Decisions per second through the whole engine, over about one second.
fn measure(policy: &Policy, keys: Vec<Vec<String>>) -> f64 {
    let mut engine = Engine::new(policy);
    let reqs: Vec<Request> = keys
        .into_iter()
        .enumerate()
        .map(|(i, w)| Request::shell(i.to_string(), vec![Key::new(w)]))
        .collect();
    // Warm up (compiles lazily built glob matchers).
    for r in &reqs {
        black_box(engine.evaluate(r));
    }
    let mut count: u64 = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        for r in &reqs {
            black_box(engine.evaluate(black_box(r)));
        }
        count += reqs.len() as u64;
    }
    count as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    println!(
        "{:<12} {:>8} {:>16} {:>12}",
        "scenario", "rules", "decisions/s", "ns/decision"
    );
    type Scenario = (
        &'static str,
        fn(usize) -> Policy,
        fn(usize) -> Vec<Vec<String>>,
    );
    let scenarios: [Scenario; 2] = [
        ("spread", spread_policy, spread_requests),
        ("one-command", git_policy, git_requests),
    ];
    for (name, policy, keys) in scenarios {
        for n in [10, 100, 1_000, 10_000] {
            let rate = measure(&policy(n), keys(n));
            println!("{name:<12} {n:>8} {rate:>16.0} {:>12.1}", 1e9 / rate);
        }
    }
}
