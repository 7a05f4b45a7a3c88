//! A line's reading decided as the gate decides it: the reading ([`cordon_tools::assess`])
//! turned into an `approval::Request` and explained by the approval engine's one evaluator.
//! The tests pin what the two come to together, in the shape they were written against (one
//! decision per command and per concern).
#![allow(dead_code)]

use cordon_approval::{By, Concern, Engine, Key, KeyExplained, Origin, Passing, Request, Rules};
use cordon_approval::{Decision, RuleRef, RuleSet};
use cordon_policy::{Action, Policy};
use cordon_tools::assess::{Found, ShellContext};
use cordon_tools::shell::{ParsedLine, SimpleCommand};

/// One simple command and the engine's verdict on its key.
#[derive(Debug, Clone)]
pub struct CommandVerdict {
    pub command: SimpleCommand,
    pub decision: Decision,
    /// `None` for a command that passed (a transparent wrapper, a state-only builtin) with
    /// no rule naming it.
    pub key: Option<Vec<String>>,
}

/// The whole line, decided.
#[derive(Debug, Clone)]
pub struct ShellAssessment {
    pub decision: Decision,
    pub commands: Vec<CommandVerdict>,
    /// The parser's concerns that stand (no allow rule lifted them), with their weight.
    pub concerns: Vec<(Found, Decision)>,
}

fn rule_ref(by: &By) -> RuleRef {
    match by {
        By::Rule { location, pattern } | By::PersistedGrant { location, pattern } => {
            RuleRef::Rule {
                location: location.clone(),
                pattern: pattern.clone(),
            }
        }
        By::Tool(r) => r.clone(),
        _ => RuleRef::Default,
    }
}

fn decision(k: &KeyExplained) -> Decision {
    Decision {
        action: k.verdict.action,
        reason: k.verdict.reason.clone(),
        rule: if k.by_default {
            RuleRef::Default
        } else {
            rule_ref(&k.verdict.by)
        },
    }
}

/// An engine with `rules` (shell rules and default), interactive, no doom loop.
pub fn engine(rules: &RuleSet) -> Engine {
    let mut r = Rules::new();
    r.add("shell", rules.rules().to_vec(), Origin::Policy)
        .expect("the rules compile");
    r.set_default("shell", rules.default_action());
    let policy = Policy::parse("version = 1\n", "p.toml", std::path::Path::new("/")).unwrap();
    let mut e = Engine::with_rules(r, &policy);
    e.set_doom_loop(0);
    e.set_mode(cordon_policy::ApprovalMode::Interactive);
    e
}

/// The request the gate builds from a reading (crates/gate/src/call.rs `shell_request`).
pub fn request(reading: &cordon_tools::assess::ShellReading) -> Request {
    let keys = reading
        .commands
        .iter()
        .filter(|c| c.passes.is_none())
        .map(|c| Key::new(c.key.clone()).with_known(c.command.known.clone()))
        .collect();
    let mut req = Request::shell("t", keys);
    for c in &reading.commands {
        if let Some(p) = &c.passes {
            req = req.with_passing(Passing {
                key: Key::new(c.key.clone()).with_known(c.command.known.clone()),
                check: p.check,
                reason: p.reason.clone(),
            });
        }
    }
    for c in &reading.concerns {
        req = req.with_concern(Concern {
            action: c.level.action(),
            reason: c.reason.clone(),
            check: c.check,
            lift: c.lift.clone().map(|(k, o)| (Key::new(k), o)),
        });
    }
    req
}

/// Reads `parsed` in `cx` and decides it with `rules`.
pub fn assess(parsed: &ParsedLine, rules: &RuleSet, cx: &ShellContext) -> ShellAssessment {
    let reading = cordon_tools::assess::assess(parsed, cx);
    let req = request(&reading);
    let x = engine(rules).explain(&req);
    let decided = reading
        .commands
        .iter()
        .filter(|c| c.passes.is_none())
        .count();
    let (mut d, mut p) = (0, decided);
    let commands = reading
        .commands
        .iter()
        .map(|c| {
            let k = if c.passes.is_none() {
                d += 1;
                &x.keys[d - 1]
            } else {
                p += 1;
                &x.keys[p - 1]
            };
            let passed = matches!(k.verdict.by, By::Tool(RuleRef::Builtin(_)));
            CommandVerdict {
                command: c.command.clone(),
                decision: decision(k),
                key: (!passed).then(|| c.key.clone()),
            }
        })
        .collect();
    let concerns = reading
        .concerns
        .iter()
        .filter(|c| {
            !c.lift.as_ref().is_some_and(|(key, option)| {
                x.keys.iter().any(|k| {
                    k.key.words() == key.as_slice()
                        && k.verdict.action == Action::Allow
                        && matches!(&k.verdict.by, By::Rule { pattern, .. } | By::PersistedGrant { pattern, .. }
                            if pattern.split(' ').any(|t| t == option))
                })
            })
        })
        .filter_map(|c| {
            c.found.clone().map(|f| {
                (
                    f,
                    Decision {
                        action: c.level.action(),
                        reason: c.reason.clone(),
                        rule: RuleRef::Builtin(c.check),
                    },
                )
            })
        })
        .collect();
    ShellAssessment {
        decision: Decision {
            action: x.action(),
            reason: x.reason().to_string(),
            rule: rule_ref(x.by()),
        },
        commands,
        concerns,
    }
}
