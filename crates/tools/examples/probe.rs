//! Decides shell lines (one per line on standard input) under the outside review's policy and
//! prints each decision with the tool's concerns: a quick look at the analyser while working.
//!
//!     printf '%s\n' 'ls; rm x' | cargo run -q -p cordon-tools --example probe

use std::io::BufRead;

use cordon_approval::RuleSet;
use cordon_policy::Policy;
use cordon_tools::assess::ShellContext;
use cordon_tools::shell::parse;
use judge::assess;

#[path = "../tests/support/judge.rs"]
mod judge;
#[path = "../tests/support/review.rs"]
mod review;

fn main() {
    let dir = std::env::temp_dir();
    let text = format!(
        "version = 1\n{}\n[sandbox.paths.ws]\nroot = \".\"\nmode = \"rw\"\n",
        review::REVIEW_RULES
    );
    let policy = Policy::parse(&text, "p.toml", &dir).expect("policy");
    let rules = RuleSet::new(&policy.shell);
    let cx = ShellContext::for_policy(&policy, dir);
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin").replace("\\n", "\n");
        let parsed = parse(&line);
        let a = assess(&parsed, &rules, &cx);
        println!("{:?}\t{line:?}", a.decision.action);
        for c in &parsed.commands {
            println!("    cmd {:?} key {:?}", c.words, c.key);
        }
        for c in &parsed.concerns {
            println!("    concern {c}");
        }
    }
}
