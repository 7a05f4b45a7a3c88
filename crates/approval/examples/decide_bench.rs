//! Decisions per second against policies of 10 … 10,000 shell rules, on one core.
//!
//! `cargo run --release -p cordon-approval --example decide_bench`
//!
//! Each policy has N rules: N − 10 rules over N/4 distinct literal command names (`cmdK sub…`,
//! allow / ask / deny), plus 10 rules whose first token is a glob (checked for every command).
//! Requests cycle through 1,024 shell keys: commands that hit a rule, commands no rule names
//! (the default decides), and commands matching a glob rule. Every decision goes through the
//! whole engine (rules, session memory, doom loop, mode) and yields an owned `Outcome`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cordon_approval::{Engine, Key, Request};
use cordon_policy::Policy;

fn policy(n: usize) -> Policy {
    let mut text = String::from("version = 1\n[shell]\ndefault = \"ask\"\n");
    let names = (n / 4).max(1);
    for i in 0..n.saturating_sub(10) {
        let action = ["allow", "ask", "deny"][i % 3];
        let pattern = match i % 4 {
            0 => format!("cmd{} sub{}", i % names, i % 7),
            1 => format!("cmd{} sub{} --flag*", i % names, i % 5),
            2 => format!("cmd{}", i % names),
            _ => format!("cmd{} * x{}", i % names, i % 3),
        };
        text.push_str(&format!(
            "[[shell.rules]]\npattern = \"{pattern}\"\naction = \"{action}\"\n"
        ));
    }
    for g in 0..10.min(n) {
        text.push_str(&format!(
            "[[shell.rules]]\npattern = \"tool{g}* --x*\"\naction = \"ask\"\n"
        ));
    }
    Policy::parse(&text, "bench.toml", std::path::Path::new("/")).unwrap()
}

fn requests(n: usize) -> Vec<Request> {
    let names = (n / 4).max(1);
    (0..1024)
        .map(|i| {
            let words = match i % 4 {
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
            };
            Request::shell(i.to_string(), vec![Key::new(words)])
        })
        .collect()
}

fn main() {
    println!("{:>8} {:>16} {:>12}", "rules", "decisions/s", "ns/decision");
    for n in [10, 100, 1_000, 10_000] {
        let p = policy(n);
        let mut engine = Engine::new(&p);
        let reqs = requests(n);
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
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{n:>8} {:>16.0} {:>12.1}",
            count as f64 / secs,
            secs * 1e9 / count as f64
        );
    }
}
