//! The real-host tests' mock model server (crates/cli/tests/hosts_support) as a program, for
//! `benches/hosts-latency.sh` and `scripts/fuzz-host-files.py`: `hosts-mock TOOL INPUT_JSON
//! [TOOL INPUT_JSON ...]` prints its base URL, then answers every host run with that one tool
//! call (and text once the result came back) until its stdin closes; with more than one pair,
//! the calls one after the other in one conversation (a Read before an Edit: Claude Code edits
//! only a file it has read). It listens on 127.0.0.1 only.

#[path = "../tests/hosts_support/mod.rs"]
mod hosts_support;

use std::io::{Read, Write};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || !args.len().is_multiple_of(2) {
        eprintln!("usage: hosts-mock TOOL INPUT_JSON [TOOL INPUT_JSON ...]");
        std::process::exit(2);
    }
    let turns: Vec<hosts_support::Turn> = args
        .chunks(2)
        .map(|p| hosts_support::Turn {
            tool: p[0].clone(),
            input: serde_json::from_str(&p[1]).unwrap_or_else(|e| {
                eprintln!("hosts-mock: INPUT_JSON is not JSON: {e}");
                std::process::exit(2);
            }),
        })
        .collect();
    let mock = if turns.len() == 1 {
        hosts_support::Mock::start(turns.into_iter().next().unwrap())
    } else {
        let steps = turns
            .into_iter()
            .map(|t| -> hosts_support::Step { Box::new(move |_, _| Some(t.clone())) })
            .collect();
        hosts_support::Mock::chain(steps)
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", mock.base_url());
    let _ = out.flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
