//! Property tests with a small seeded generator: the compiled, indexed, grouped engine agrees
//! with a plain reading of the brief's semantics on random policies and requests.
//!
//! The generator draws tokens from small vocabularies, so rules share leading tokens (the
//! index's trie paths), put globs at every position (with and without a literal prefix, `**`,
//! classes, alternatives, escapes, multi-byte prefixes) and mix prefix and exact rules.

use cordon_approval::{resolve_mode, Engine, Key, Outcome, Request, RuleRef, RuleSet, Rules};
use cordon_policy::{Action, ApprovalMode, Location, Pattern, Policy, Shell, ShellRule};

/// xorshift64*: deterministic, seedable, good enough for test inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

// `git` and `push` repeat so that many rules share their leading tokens.
const FIRST: &[&str] = &[
    "git",
    "git",
    "git",
    "npm",
    "g*",
    "*",
    "ls",
    "/usr/bin/git",
    "n?m",
    "gi?",
    "/usr/bin/*",
    "**",
    "{git,npm}",
    "é*",
];
const REST: &[&str] = &[
    "push",
    "push",
    "status",
    "origin",
    "main",
    "*",
    "-f*",
    "--force*",
    "x",
    "**",
    "st[a-z]tus",
    "st*",
    "push*",
    "or?gin",
    "*.rs",
    "a/*",
    "a/b",
    "ma{in,ster}",
    "é",
    "é*",
    "\\*",
];
const KEY_FIRST: &[&str] = &[
    "git",
    "git",
    "/usr/bin/git",
    "/bin/git",
    "./git",
    "npm",
    "ls",
    "gx",
    "é",
    "éa",
    "git/",
];
const KEY_REST: &[&str] = &[
    "push",
    "push",
    "status",
    "origin",
    "main",
    "master",
    "-f",
    "-fx",
    "--force",
    "--force-with-lease",
    "x",
    "a/b",
    "a/c",
    "b.rs",
    "st",
    "stxtus",
    "é",
    "éé",
    "*",
];
const ACTIONS: [Action; 3] = [Action::Allow, Action::Ask, Action::Deny];

#[derive(Debug, Clone)]
struct Gen {
    pattern: String,
    action: Action,
    exact: bool,
}

impl Gen {
    fn compile(&self) -> Pattern {
        if self.exact {
            Pattern::exact(&self.pattern).unwrap()
        } else {
            Pattern::new(&self.pattern).unwrap()
        }
    }
}

fn random_rules(rng: &mut Rng, max: usize) -> Vec<Gen> {
    (0..rng.below(max))
        .map(|_| {
            let mut p = rng.pick(FIRST).to_string();
            for _ in 0..rng.below(4) {
                p.push(' ');
                p.push_str(rng.pick(REST));
            }
            Gen {
                pattern: p,
                action: ACTIONS[rng.below(3)],
                exact: rng.below(4) == 0,
            }
        })
        .collect()
}

fn random_key(rng: &mut Rng) -> Key {
    let mut w = vec![rng.pick(KEY_FIRST)];
    for _ in 0..rng.below(5) {
        w.push(rng.pick(KEY_REST));
    }
    Key::new(w)
}

/// The brief, read plainly, rule by rule: the index of the first matching deny, else of the
/// last match.
fn reference_rule(rules: &[ShellRule], key: &Key) -> Option<usize> {
    let matching: Vec<usize> = (0..rules.len())
        .filter(|&i| rules[i].pattern.matches(key.words()))
        .collect();
    let deny = matching
        .iter()
        .copied()
        .find(|&i| rules[i].action == Action::Deny);
    deny.or(matching.last().copied())
}

/// The brief's action: the deciding rule's, else the default. An allow through a rule that
/// names a program by its bare name holds for that name, or its path in a system directory,
/// only; any other path asks (issue 13, class 4).
///
/// A deny rule that names an option matches wherever the option stands: the key with one
/// option word (after the first two words) moved right after the program name or after its
/// first operand, matched by a deny rule, is denied (issue 26: the engine, not the shell tool,
/// applies it).
fn reference(rules: &[ShellRule], default: Action, key: &Key) -> Action {
    let action = reference_direct(rules, default, key);
    if action == Action::Deny {
        return action;
    }
    let words = key.words();
    for (i, word) in words.iter().enumerate().skip(2) {
        if !word.starts_with('-') || word == "-" || word == "--" {
            continue;
        }
        for at in [1, 2] {
            if at >= i {
                continue;
            }
            let mut moved = words.to_vec();
            let option = moved.remove(i);
            moved.insert(at, option);
            if rules
                .iter()
                .any(|r| r.action == Action::Deny && r.pattern.matches(&moved))
            {
                return Action::Deny;
            }
        }
    }
    action
}

fn reference_direct(rules: &[ShellRule], default: Action, key: &Key) -> Action {
    reference_rule(rules, key).map_or(default, |i| {
        let rule = &rules[i];
        let first = rule.pattern.as_str().split(' ').next().unwrap_or("");
        let by_name =
            !rule.pattern.is_exact() && !first.contains('/') && first != "*" && first != "**";
        let name = key.words()[0].as_str();
        let system = match name.rsplit_once('/') {
            None => true,
            Some((dir, base)) => {
                !matches!(base, "" | "." | "..") && cordon_approval::SYSTEM_BIN_DIRS.contains(&dir)
            }
        };
        if rule.action == Action::Allow && by_name && !system {
            Action::Ask
        } else {
            rule.action
        }
    })
}

/// Rule `i` sits on line `from + i + 1` of file `gen`.
fn shell_rules(rules: &[Gen], from: usize) -> Vec<ShellRule> {
    rules
        .iter()
        .enumerate()
        .map(|(i, g)| ShellRule {
            pattern: g.compile(),
            action: g.action,
            reason: None,
            matches: Vec::new(),
            not_match: Vec::new(),
            location: Location {
                file: "gen".into(),
                line: from + i + 1,
                col: 1,
            },
        })
        .collect()
}

/// An engine whose rules are split at `split` into policy rules and persisted rules.
fn engine(rules: &[Gen], split: usize, default: Action) -> Engine {
    let text = format!("version = 1\n[shell]\ndefault = \"{}\"\n", default.as_str());
    let policy = Policy::parse(&text, "p.toml", std::path::Path::new("/")).unwrap();
    let mut r = Rules::from_policy(&policy);
    r.add(
        "shell",
        shell_rules(&rules[..split], 0),
        cordon_approval::Origin::Policy,
    )
    .unwrap();
    r.add(
        "shell",
        shell_rules(&rules[split..], split),
        cordon_approval::Origin::Persisted,
    )
    .unwrap();
    let mut e = Engine::with_rules(r, &policy);
    e.set_doom_loop(0);
    e
}

fn action(o: &Outcome) -> Action {
    match o {
        Outcome::Allowed { .. } => Action::Allow,
        Outcome::Denied { .. } => Action::Deny,
        Outcome::Ask(_) => Action::Ask,
    }
}

#[test]
fn engine_agrees_with_the_reference() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..3000 {
        let rules = random_rules(&mut rng, 24);
        let default = ACTIONS[rng.below(3)];
        let split = rng.below(rules.len() + 1);
        let mut e = engine(&rules, split, default);
        let compiled = shell_rules(&rules, 0);
        let keys: Vec<Key> = (0..1 + rng.below(3))
            .map(|_| random_key(&mut rng))
            .collect();
        let want = keys
            .iter()
            .map(|k| reference(&compiled, default, k))
            .max()
            .unwrap();
        let req = Request::shell("p", keys.clone());
        let got = action(&e.evaluate(&req));
        assert_eq!(
            got, want,
            "case {case}: {rules:?} default {default:?} keys {keys:?}"
        );

        // Session grants for every key relax an ask, never a deny.
        for k in &keys {
            e.memory_mut().grant("shell", k.clone());
        }
        let granted = action(&e.evaluate(&req));
        let expect = if want == Action::Deny {
            Action::Deny
        } else {
            Action::Allow
        };
        assert_eq!(granted, expect, "case {case} with grants");
        e.memory_mut().clear();

        // Modes resolve exactly the asks.
        for mode in [
            ApprovalMode::ApproveAll,
            ApprovalMode::Strict,
            ApprovalMode::Deny,
        ] {
            e.set_mode(mode);
            assert_eq!(
                action(&e.evaluate(&req)),
                resolve_mode(want, mode).0,
                "case {case} {mode:?}"
            );
        }
    }
}

#[test]
fn grants_are_exact_keys() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let (a, b) = (random_key(&mut rng), random_key(&mut rng));
        let mut e = engine(&[], 0, Action::Ask);
        e.memory_mut().grant("shell", a.clone());
        let o = e.evaluate(&Request::shell("p", vec![b.clone()]));
        assert_eq!(action(&o) == Action::Allow, a == b, "{a} vs {b}");
    }
}

#[test]
fn rule_set_picks_the_reference_rule() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for case in 0..800 {
        let rules = random_rules(&mut rng, 64);
        let compiled = shell_rules(&rules, 0);
        let set = RuleSet::new(&Shell {
            default: Action::Ask,
            rules: compiled.clone(),
        });
        for _ in 0..32 {
            let key = random_key(&mut rng);
            let got = set.matching(key.words()).map(|d| match d.rule {
                RuleRef::Rule { location, .. } => location.line - 1,
                other => panic!("case {case}: {other:?}"),
            });
            assert_eq!(
                got,
                reference_rule(&compiled, &key),
                "case {case}: key {key} rules {rules:#?}"
            );
        }
    }
}
