//! Shell assessment speed: parsing a typical compound line (5 simple commands), reading it
//! (keys and concerns), and deciding the reading with the approval engine's one evaluator
//! against the embedded default policy's rules, as `cordon check` and `cordon exec` do.
//!
//!     cargo run --release -p cordon-tools --example assess_bench
//!
//! Target (issue 5): median <= 50 us for parse + reading + decision. Results:
//! docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cordon_policy::{Policy, DEFAULT_POLICY, DEFAULT_POLICY_NAME};
use cordon_tools::assess::{assess, ShellContext};
use cordon_tools::shell::parse;

// The request the gate builds from a reading.
#[path = "../tests/support/judge.rs"]
mod judge;

const LINE: &str =
    "cd /repo && git status --short && cargo build --release 2>&1 | tail -n 20; ls -la \"$HOME\"";

fn median(mut f: impl FnMut(), runs: usize) -> (Duration, Duration) {
    for _ in 0..runs / 10 {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[runs / 2], times[runs * 99 / 100])
}

fn main() {
    let dir = std::env::temp_dir();
    let policy = Policy::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME, &dir).expect("default policy");
    let engine = cordon_approval::Engine::new(&policy);
    let cx = ShellContext::for_policy(&policy, dir);
    assert_eq!(parse(LINE).commands.len(), 5);

    let runs = 20_000;
    let (p50, p99) = median(|| drop(black_box(parse(black_box(LINE)))), runs);
    println!("parse only:          median {p50:?}  p99 {p99:?}  ({runs} runs)");
    let (p50, p99) = median(
        || drop(black_box(assess(&parse(black_box(LINE)), &cx))),
        runs,
    );
    println!("parse + reading:     median {p50:?}  p99 {p99:?}");
    let (p50, p99) = median(
        || {
            let reading = assess(&parse(black_box(LINE)), &cx);
            drop(black_box(engine.explain(&judge::request(&reading))))
        },
        runs,
    );
    println!("parse + reading + decision: median {p50:?}  p99 {p99:?}  (target <= 50us)");
}
