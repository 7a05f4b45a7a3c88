//! Fuzz target: the shell tool's parser and assessment.
//!
//! - Any input, read as a line: parsing and assessing it returns (no panic; libFuzzer's
//!   `-timeout` catches a hang).
//! - The same input drives the generator of lines that run a denied command somewhere (the
//!   choices come from its bytes, the rest is a word placed in single quotes): such a line is
//!   never allowed.

#![no_main]

use std::sync::OnceLock;

use cordon_approval::RuleSet;
use cordon_policy::{Action, Policy};
use cordon_tools::assess::ShellContext;
use judge::assess;
use cordon_tools::shell::parse;
use libfuzzer_sys::fuzz_target;

// The reading decided by the approval engine, as the gate decides it.
#[path = "../../tests/support/judge.rs"]
mod judge;

#[path = "../../tests/support/denied_anywhere.rs"]
mod denied_anywhere;

fn judge() -> &'static (RuleSet, ShellContext) {
    static JUDGE: OnceLock<(RuleSet, ShellContext)> = OnceLock::new();
    JUDGE.get_or_init(|| {
        let dir = std::env::temp_dir();
        let policy = Policy::parse(denied_anywhere::POLICY, "p.toml", &dir).unwrap();
        (
            RuleSet::new(&policy.shell),
            ShellContext::for_policy(&policy, dir),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let (rules, cx) = judge();
    let text = String::from_utf8_lossy(data);
    let _ = assess(&parse(&text), rules, cx);

    // The first 16 bytes are choices, the rest the word.
    let (choices, word) = data.split_at(data.len().min(16));
    let word = String::from_utf8_lossy(word);
    let mut at = 0;
    let mut pick = |n: usize| {
        let c = choices.get(at).copied().unwrap_or(0) as usize;
        at += 1;
        c % n
    };
    let line = denied_anywhere::line(&mut pick, &word);
    let a = assess(&parse(&line), rules, cx);
    assert_ne!(
        a.decision.action,
        Action::Allow,
        "{line:?} was allowed: {:?}",
        a.decision
    );
});
