//! The real-host tests' mock model server (crates/cli/tests/hosts_support) as a program, for
//! `benches/hosts-latency.sh`: `hosts-mock TOOL INPUT_JSON` prints its base URL, then answers
//! every host run with that one tool call (and text once the result came back) until its
//! stdin closes. It listens on 127.0.0.1 only.

#[path = "../tests/hosts_support/mod.rs"]
mod hosts_support;

use std::io::{Read, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(tool), Some(input)) = (args.next(), args.next()) else {
        eprintln!("usage: hosts-mock TOOL INPUT_JSON");
        std::process::exit(2);
    };
    let input = serde_json::from_str(&input).unwrap_or_else(|e| {
        eprintln!("hosts-mock: INPUT_JSON is not JSON: {e}");
        std::process::exit(2);
    });
    let mock = hosts_support::Mock::start(hosts_support::Turn { tool, input });
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", mock.base_url());
    let _ = out.flush();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
