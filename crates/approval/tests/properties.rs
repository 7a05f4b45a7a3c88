//! Property tests with a small seeded generator: the compiled, indexed, grouped engine agrees
//! with a plain reading of the brief's semantics on random policies and requests.

use cordon_approval::{resolve_mode, rule, Engine, Key, Outcome, Request, Rules};
use cordon_policy::{Action, ApprovalMode, Pattern, Policy, ShellRule};

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

const FIRST: &[&str] = &["git", "npm", "g*", "*", "ls", "/usr/bin/git", "n?m"];
const REST: &[&str] = &["push", "status", "*", "-f*", "x", "**", "st[a-z]tus"];
const KEY_FIRST: &[&str] = &["git", "/usr/bin/git", "/bin/git", "npm", "ls", "gx"];
const KEY_REST: &[&str] = &["push", "status", "-f", "-fx", "x", "a/b"];
const ACTIONS: [Action; 3] = [Action::Allow, Action::Ask, Action::Deny];

fn random_rules(rng: &mut Rng) -> Vec<(String, Action)> {
    (0..rng.below(12))
        .map(|_| {
            let mut p = rng.pick(FIRST).to_string();
            for _ in 0..rng.below(3) {
                p.push(' ');
                p.push_str(rng.pick(REST));
            }
            (p, ACTIONS[rng.below(3)])
        })
        .collect()
}

fn random_key(rng: &mut Rng) -> Key {
    let mut w = vec![rng.pick(KEY_FIRST)];
    for _ in 0..rng.below(4) {
        w.push(rng.pick(KEY_REST));
    }
    Key::new(w)
}

/// The brief, read plainly: an explicit deny wins; else the last match; else the default.
fn reference(rules: &[(String, Action)], default: Action, key: &Key) -> Action {
    let matching: Vec<Action> = rules
        .iter()
        .filter(|(p, _)| Pattern::new(p).unwrap().matches(key.words()))
        .map(|(_, a)| *a)
        .collect();
    if matching.contains(&Action::Deny) {
        Action::Deny
    } else {
        matching.last().copied().unwrap_or(default)
    }
}

fn shell_rules(rules: &[(String, Action)], from: usize) -> Vec<ShellRule> {
    rules
        .iter()
        .enumerate()
        .map(|(i, (p, a))| rule("gen", from + i, p, *a, None).unwrap())
        .collect()
}

/// An engine whose rules are split at `split` into policy rules and persisted rules.
fn engine(rules: &[(String, Action)], split: usize, default: Action) -> Engine {
    let text = format!("version = 1\n[shell]\ndefault = \"{}\"\n", default.as_str());
    let policy = Policy::parse(&text, "p.toml", std::path::Path::new("/")).unwrap();
    let mut r = Rules::from_policy(&policy);
    r.add(
        "shell",
        shell_rules(&rules[..split], 0),
        cordon_approval::Origin::Policy,
    )
    .unwrap();
    r.add_persisted(shell_rules(&rules[split..], split));
    let mut e = Engine::with_rules(r, &policy);
    e.set_doom_loop(0);
    e
}

fn action(o: &Outcome) -> Action {
    match o {
        Outcome::Allowed { .. } => Action::Allow,
        Outcome::Denied { .. } => Action::Deny,
        Outcome::NeedsAnswer(_) => Action::Ask,
    }
}

#[test]
fn engine_agrees_with_the_reference() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..3000 {
        let rules = random_rules(&mut rng);
        let default = ACTIONS[rng.below(3)];
        let split = rng.below(rules.len() + 1);
        let mut e = engine(&rules, split, default);
        let keys: Vec<Key> = (0..1 + rng.below(3))
            .map(|_| random_key(&mut rng))
            .collect();
        let want = keys
            .iter()
            .map(|k| reference(&rules, default, k))
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
                resolve_mode(want, mode, true).0,
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
