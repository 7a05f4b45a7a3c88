use std::fmt;

use cordon_policy::verdict::Known;
use cordon_policy::{basename, Action, ApprovalMode, Shell, ShellRule};
pub use cordon_policy::{names_system_program, SYSTEM_BIN_DIRS};

use crate::rule_index::RuleIndex;

pub use cordon_policy::verdict::{Decision, RuleRef};

/// Shell rules compiled for fast decisions: a trie over the rules' tokens, so a decision
/// follows only the paths the command's words take instead of trying every rule (see
/// `rule_index` for what stays linear).
#[derive(Debug, Clone)]
pub struct RuleSet {
    default: Action,
    rules: Vec<ShellRule>,
    /// Each rule's reason, rendered once.
    reasons: Vec<String>,
    index: RuleIndex,
}

impl RuleSet {
    pub fn new(shell: &Shell) -> RuleSet {
        let reasons = shell
            .rules
            .iter()
            .map(|r| {
                r.reason.clone().unwrap_or_else(|| {
                    format!("rule `{}` says {}", r.pattern.as_str(), r.action.as_str())
                })
            })
            .collect();
        RuleSet {
            default: shell.default,
            rules: shell.rules.clone(),
            reasons,
            index: RuleIndex::new(&shell.rules),
        }
    }

    pub fn default_action(&self) -> Action {
        self.default
    }

    /// The rules, in policy order.
    pub fn rules(&self) -> &[ShellRule] {
        &self.rules
    }

    /// Decides one simple command (its words, quoting already resolved; see
    /// [`RuleSet::matching_command`]).
    pub fn decide<S: AsRef<str>>(&self, words: &[S]) -> Decision {
        self.matching_command(words)
            .unwrap_or_else(|| self.fallback())
    }

    /// The rules' verdict on one key: the first matching deny, else the last matching rule;
    /// `None` when no rule matches (the caller applies its default).
    pub fn matching<S: AsRef<str>>(&self, words: &[S]) -> Option<Decision> {
        self.index.decide(words).map(|i| self.decision_of(i))
    }

    /// [`RuleSet::matching`] for a simple command, whose first word names a program.
    ///
    /// A rule whose pattern starts with a bare name (`ls`, `git status`, `npm run test*`)
    /// matches that name wherever the command names it, so a deny catches `/bin/rm` and `./rm`
    /// alike. An *allow* through such a rule holds only for the program the name finds on the
    /// `PATH`, or its path in a system directory ([`SYSTEM_BIN_DIRS`]: `/usr/bin/ls`): a
    /// command named by any other path (`./ls`, `/tmp/evil/ls`, `bin/git`, `~/bin/grep`) is
    /// not the program the rule meant, and the allow becomes an ask. A rule that allows every
    /// command (`*`, `**`) is not about a name and stays as it is.
    ///
    /// Rules compose as an operator reads them: for a program named by a path that is not a
    /// system one, a rule written with that path (`.venv/bin/pytest`) is about it, and a later
    /// rule on the bare name (`pytest`, about the program on the `PATH`) does not take its
    /// place. A deny still wins wherever it stands.
    pub fn matching_command<S: AsRef<str>>(&self, words: &[S]) -> Option<Decision> {
        let name = words.first().map_or("", |w| w.as_ref());
        let m = self.index.matches(words)?;
        let demoted = |i: usize| {
            let rule = &self.rules[i];
            let first = rule.pattern.as_str().split(' ').next().unwrap_or("");
            rule.action == Action::Allow
                && !rule.pattern.is_exact()
                && !first.contains('/')
                && !matches!(first, "*" | "**")
                && !names_system_program(name)
        };
        let i = match (m.first_deny, m.by_name, m.as_written) {
            (Some(deny), _, _) => deny,
            // The later rule on the bare name would only ask: the rule naming this path decides.
            (None, Some(b), Some(w)) if b > w && demoted(b) => w,
            (None, b, w) => b.max(w)?,
        };
        let decision = self.decision_of(i);
        let rule = &self.rules[i];
        let first = rule.pattern.as_str().split(' ').next().unwrap_or("");
        let by_basename =
            !rule.pattern.is_exact() && !first.contains('/') && !matches!(first, "*" | "**");
        if decision.action == Action::Allow && by_basename && !names_system_program(name) {
            return Some(Decision {
                action: Action::Ask,
                reason: format!(
                    "`{name}` names a program by its path, not the `{}` on the PATH or in a system directory that rule `{}` allows",
                    basename(name),
                    rule.pattern.as_str()
                ),
                rule: decision.rule,
            });
        }
        Some(decision)
    }

    /// A deny or ask rule that could match the command for some value of its words only known
    /// at run time ([`Known`], parallel to `words`; see `RuleIndex::could`), where the rules
    /// would otherwise allow it: the first such deny, else the last such ask unless an allow
    /// after it surely matches whatever the values are (a prefix rule whose tokens all stand
    /// before the first unknown word). `Some(None)`: the walk gave up, anything could match.
    pub fn could_match<S: AsRef<str>>(
        &self,
        words: &[S],
        known: &[Known],
    ) -> Option<Option<usize>> {
        let could = self.index.could(words, known);
        if could.gave_up {
            return Some(None);
        }
        if let Some(deny) = could.first_deny {
            return Some(Some(deny));
        }
        let ask = could.last_ask?;
        let first_unknown = known.iter().position(|k| *k != Known::Literal)?;
        let sure = self.index.decide(words).filter(|&i| {
            let rule = &self.rules[i];
            i > ask
                && rule.action == Action::Allow
                && !rule.pattern.is_exact()
                && rule.pattern.as_str().split(' ').count() <= first_unknown
        });
        match sure {
            Some(_) => None,
            None => Some(Some(ask)),
        }
    }

    /// Rule `i`'s decision (for a caller that has its index).
    pub fn decision_at(&self, i: usize) -> Decision {
        self.decision_of(i)
    }

    /// Rules that never decide because another one matches every command they match and wins
    /// over them (a deny wherever it stands, else a later rule), with a different action: `git
    /// push --dry-run` allowed before `git push` asked. What `cordon policy test` warns about.
    /// Only literal tokens and a covering `*`/glob token are compared; patterns whose globs
    /// overlap in other ways are not reported.
    pub fn shadowed(&self) -> Vec<Shadowed> {
        let mut out = Vec::new();
        for (a, ra) in self.rules.iter().enumerate() {
            if ra.action == Action::Deny {
                continue;
            }
            let winner = self.rules.iter().enumerate().find(|&(b, rb)| {
                b != a
                    && rb.action != ra.action
                    && (rb.action == Action::Deny || b > a)
                    && covers(&rb.pattern, &ra.pattern)
            });
            if let Some((b, _)) = winner {
                out.push(Shadowed {
                    rule: a,
                    by: b,
                    text: format!(
                        "rule `{}` ({}) never decides: rule `{}` ({}, {}) matches every command it matches and wins over it",
                        ra.pattern.as_str(),
                        ra.action.as_str(),
                        self.rules[b].pattern.as_str(),
                        self.rules[b].action.as_str(),
                        self.rules[b].location
                    ),
                });
            }
        }
        out
    }

    fn decision_of(&self, i: usize) -> Decision {
        let r = &self.rules[i];
        Decision {
            action: r.action,
            reason: self.reasons[i].clone(),
            rule: RuleRef::Rule {
                location: r.location.clone(),
                pattern: r.pattern.as_str().to_string(),
            },
        }
    }

    /// The decision when no rule matches: the default.
    pub fn fallback(&self) -> Decision {
        Decision {
            action: self.default,
            reason: format!(
                "no rule matches; the shell default is {}",
                self.default.as_str()
            ),
            rule: RuleRef::Default,
        }
    }
}

/// A rule that never decides; see [`RuleSet::shadowed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The index of the rule that never decides, in policy order.
    pub rule: usize,
    /// The index of the rule that decides in its place.
    pub by: usize,
    /// Both, described.
    pub text: String,
}

impl fmt::Display for Shadowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether pattern `b` matches every command pattern `a` matches: `b`'s tokens lead `a`'s
/// (all of them when `b` is exact), each equal or a glob matching `a`'s literal token.
fn covers(b: &cordon_policy::Pattern, a: &cordon_policy::Pattern) -> bool {
    let bt: Vec<&str> = b.as_str().split(' ').collect();
    let at: Vec<&str> = a.as_str().split(' ').collect();
    if bt.len() > at.len() || (b.is_exact() && (bt.len() != at.len() || !a.is_exact())) {
        return false;
    }
    // `**` (any words) as the last token covers the rest.
    bt.iter().zip(&at).all(|(x, y)| {
        x == y
            || (cordon_policy::is_glob(x)
                && !cordon_policy::is_glob(y)
                && cordon_policy::Pattern::exact(x).is_ok_and(|p| p.matches(&[*y])))
            || *x == "**"
    })
}

/// Resolves an `ask` by mode. Returns the final action and, when the mode changed it, why.
/// `interactive` leaves an ask an ask, whoever can answer it: that is the front end's business.
pub fn resolve_mode(action: Action, mode: ApprovalMode) -> (Action, Option<&'static str>) {
    match (action, mode) {
        (Action::Ask, ApprovalMode::ApproveAll) => {
            (Action::Allow, Some("approved by approve-all mode"))
        }
        (Action::Ask, ApprovalMode::Strict) => (Action::Deny, Some("strict mode denies every ask")),
        (Action::Ask, ApprovalMode::Deny) => (Action::Deny, Some("deny mode denies every ask")),
        (a, _) => (a, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::Policy;

    fn rules(body: &str) -> RuleSet {
        let text = format!("version = 1\n{body}");
        RuleSet::new(
            &Policy::parse(&text, "p.toml", std::path::Path::new("/"))
                .unwrap()
                .shell,
        )
    }

    fn act(r: &RuleSet, cmd: &str) -> Action {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        r.decide(&words).action
    }

    fn rule(pattern: &str, action: &str) -> String {
        format!("[[shell.rules]]\npattern = \"{pattern}\"\naction = \"{action}\"\n")
    }

    #[test]
    fn secure_default_is_ask() {
        let r = rules("");
        assert_eq!(act(&r, "anything"), Action::Ask);
    }

    #[test]
    fn last_matching_rule_wins() {
        let r = rules(&format!(
            "{}{}",
            rule("npm *", "ask"),
            rule("npm test", "allow")
        ));
        assert_eq!(act(&r, "npm test"), Action::Allow);
        assert_eq!(act(&r, "npm install"), Action::Ask);
        let r = rules(&format!(
            "{}{}",
            rule("npm test", "allow"),
            rule("npm *", "ask")
        ));
        assert_eq!(act(&r, "npm test"), Action::Ask);
    }

    /// Issue 22: a later bare-name allow does not turn an earlier path allow into an ask.
    #[test]
    fn a_rule_on_a_path_is_not_undone_by_a_later_rule_on_the_bare_name() {
        let r = rules(&format!(
            "{}{}",
            rule(".venv/bin/pytest", "allow"),
            rule("pytest", "allow")
        ));
        assert_eq!(act(&r, ".venv/bin/pytest -q"), Action::Allow);
        assert_eq!(act(&r, "pytest -q"), Action::Allow);
        // Another path is still not the program either rule names.
        assert_eq!(act(&r, "/tmp/evil/pytest"), Action::Ask);
        // The other order, and a deny, as before.
        let r = rules(&format!(
            "{}{}",
            rule("pytest", "allow"),
            rule(".venv/bin/pytest", "allow")
        ));
        assert_eq!(act(&r, ".venv/bin/pytest"), Action::Allow);
        let r = rules(&format!(
            "{}{}",
            rule(".venv/bin/pytest", "allow"),
            rule("pytest", "deny")
        ));
        assert_eq!(act(&r, ".venv/bin/pytest"), Action::Deny);
    }

    #[test]
    fn shadowed_rules_are_found() {
        let r = rules(&format!(
            "{}{}{}{}",
            rule("git push --dry-run", "allow"),
            rule("git push", "ask"),
            rule("npm test", "allow"),
            rule("rm", "deny")
        ));
        let s = r.shadowed();
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].rule, s[0].by), (0, 1));
        // A deny shadows an allow wherever it stands; the other order is an override.
        let r = rules(&format!(
            "{}{}",
            rule("git *", "deny"),
            rule("git status", "allow")
        ));
        assert_eq!(r.shadowed().len(), 1);
        let r = rules(&format!(
            "{}{}",
            rule("git *", "ask"),
            rule("git status", "allow")
        ));
        assert!(r.shadowed().is_empty());
        let r = rules(&format!(
            "{}{}",
            rule(".venv/bin/pytest", "allow"),
            rule("pytest", "allow")
        ));
        assert!(r.shadowed().is_empty());
    }

    #[test]
    fn deny_wins_wherever_it_stands() {
        let r = rules(&format!(
            "{}{}",
            rule("git push --force", "deny"),
            rule("git *", "allow")
        ));
        assert_eq!(act(&r, "git push --force"), Action::Deny);
        assert_eq!(act(&r, "git push"), Action::Allow);
    }

    #[test]
    fn glob_first_token_rules_are_not_lost_by_the_index() {
        let r = rules(&format!(
            "[shell]\ndefault = \"allow\"\n{}{}",
            rule("mkfs*", "deny"),
            rule("/usr/bin/curl", "deny")
        ));
        assert_eq!(act(&r, "mkfs.ext4 /dev/sda"), Action::Deny);
        assert_eq!(act(&r, "/usr/bin/curl x"), Action::Deny);
        assert_eq!(
            act(&r, "curl x"),
            Action::Allow,
            "a path pattern matches the path only"
        );
        assert_eq!(
            act(&r, "/bin/mkfs.ext4"),
            Action::Deny,
            "basename of the command"
        );
    }

    #[test]
    fn index_keeps_policy_order_across_lists() {
        // general rule first, indexed rule later: the later one (allow) must win.
        let r = rules(&format!(
            "{}{}",
            rule("g*", "ask"),
            rule("git status", "allow")
        ));
        assert_eq!(act(&r, "git status"), Action::Allow);
        let r = rules(&format!(
            "{}{}",
            rule("git status", "allow"),
            rule("g*", "ask")
        ));
        assert_eq!(act(&r, "git status"), Action::Ask);
    }

    #[test]
    fn most_restrictive_of_several() {
        let d = |a| Decision {
            action: a,
            reason: String::new(),
            rule: RuleRef::Default,
        };
        let all = [d(Action::Allow), d(Action::Deny), d(Action::Ask)];
        assert_eq!(
            Decision::most_restrictive(all).unwrap().action,
            Action::Deny
        );
        assert!(Decision::most_restrictive(Vec::new()).is_none());
    }

    #[test]
    fn modes() {
        use ApprovalMode::*;
        assert_eq!(resolve_mode(Action::Ask, ApproveAll).0, Action::Allow);
        assert_eq!(resolve_mode(Action::Ask, Strict).0, Action::Deny);
        assert_eq!(resolve_mode(Action::Ask, Deny).0, Action::Deny);
        // An ask stays an ask: who can answer it is not the engine's business.
        assert_eq!(resolve_mode(Action::Ask, Interactive).0, Action::Ask);
        for m in [ApproveAll, Strict, Deny, Interactive] {
            assert_eq!(
                resolve_mode(Action::Deny, m).0,
                Action::Deny,
                "deny stays deny in every mode"
            );
            assert_eq!(resolve_mode(Action::Allow, m).0, Action::Allow);
        }
    }
}
