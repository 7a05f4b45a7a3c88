//! Property (issue 13): a line that runs a denied command anywhere is never allowed, whatever
//! else it holds and however deeply the command sits in the shell's syntax.

use cordon_approval::RuleSet;
use cordon_policy::{Action, Policy};
use cordon_tools::assess::ShellContext;
use cordon_tools::shell::parse;
use judge::assess;
use proptest::prelude::*;

#[path = "support/denied_anywhere.rs"]
mod denied_anywhere;
#[path = "support/judge.rs"]
mod judge;

fn judge() -> (RuleSet, ShellContext) {
    let dir = std::env::temp_dir();
    let policy = Policy::parse(denied_anywhere::POLICY, "p.toml", &dir).unwrap();
    (
        RuleSet::new(&policy.shell),
        ShellContext::for_policy(&policy, dir),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_denied_command_anywhere_is_never_allowed(
        choices in prop::collection::vec(any::<u16>(), 12..40),
        word in ".{0,24}",
    ) {
        let (rules, cx) = judge();
        let mut at = 0;
        let mut pick = |n: usize| {
            let c = choices[at % choices.len()] as usize;
            at += 1;
            c % n
        };
        let line = denied_anywhere::line(&mut pick, &word);
        let a = assess(&parse(&line), &rules, &cx);
        prop_assert_ne!(a.decision.action, Action::Allow, "{:?} was allowed: {:?}", line, a.decision);
    }
}

/// Every spelling in every position, once: the generator's whole table is covered.
#[test]
fn every_spelling_in_every_position() {
    let (rules, cx) = judge();
    let mut allowed = Vec::new();
    for d in 0..denied_anywhere::DENIED.len() {
        for p in 0..40 {
            // First choice: the spelling; then one wrap at position `p` with the first
            // harmless command.
            let script = [d, 0, 0, p];
            let mut at = 0;
            let mut pick = |n: usize| {
                let c = script.get(at).copied().unwrap_or(0);
                at += 1;
                c % n
            };
            let line = denied_anywhere::line(&mut pick, "w");
            let a = assess(&parse(&line), &rules, &cx);
            if a.decision.action == Action::Allow {
                allowed.push(format!("{line:?}"));
            }
        }
    }
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
}

/// Lines the fuzz target found allowed, kept.
#[test]
fn fuzz_findings() {
    let (rules, cx) = judge();
    for line in [
        // A `case` pattern's `)` inside `$(…)` in a here-document ended the substitution early.
        "cat <<EOF\n$(case x in x) if echo 'a)); d` ec?o $[?a[i]}; )'; then \"rm\" x; fi;; esac)\nEOF",
        "cat <<EOF\n$(echo ')'; \"rm\" x)\nEOF",
        "cat <<EOF\n$(echo \"$(echo \")\")\"; \"rm\" x)\nEOF",
    ] {
        let a = assess(&parse(line), &rules, &cx);
        assert_ne!(a.decision.action, Action::Allow, "{line:?}: {:?}", a.decision);
    }
}
