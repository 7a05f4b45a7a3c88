//! A policy's `match`/`not_match` examples, checked against the rules they belong to.

use cordon_policy::Policy;
use cordon_tools::shell;

/// Checks every rule's `match`/`not_match` examples against the rule itself: an example
/// matches when any simple command in it matches the rule's pattern. The embedded default's
/// examples are fixed at build time and proved by a test, so they are not re-checked on
/// every run.
pub fn check(policy: &Policy) -> Result<(), crate::Error> {
    if policy.source == cordon_policy::DEFAULT_POLICY_NAME {
        return Ok(());
    }
    check_examples(policy)
}

fn check_examples(policy: &Policy) -> Result<(), crate::Error> {
    match example_results(policy).into_iter().find(|r| !r.ok) {
        Some(failed) => Err(crate::Error::Example(Box::new(failed))),
        None => Ok(()),
    }
}

/// One `match`/`not_match` example and whether the rule's pattern treats it as promised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleResult {
    pub location: cordon_policy::Location,
    pub line: String,
    pub pattern: String,
    /// `true` for a `match` example, `false` for `not_match`.
    pub should_match: bool,
    pub ok: bool,
}

impl ExampleResult {
    pub fn message(&self) -> String {
        match (self.ok, self.should_match) {
            (true, true) => format!("{}: `{}` matches `{}`", self.location, self.line, self.pattern),
            (true, false) => format!("{}: `{}` does not match `{}`", self.location, self.line, self.pattern),
            (false, true) => format!(
                "{}: example `{}` does not match the rule's pattern `{}` (fix the pattern or the example)",
                self.location, self.line, self.pattern
            ),
            (false, false) => format!(
                "{}: example `{}` matches the rule's pattern `{}` but is listed in not_match (fix the pattern or the example)",
                self.location, self.line, self.pattern
            ),
        }
    }
}

/// Every example of every shell rule, in policy order: an example matches when any simple
/// command in it (as the shell tool finds them) matches the rule's pattern, as written or by
/// the key it is decided by (`git --no-pager log` is `git log`).
pub fn example_results(policy: &Policy) -> Vec<ExampleResult> {
    let mut out = Vec::new();
    for rule in &policy.shell.rules {
        let hits = |line: &str| {
            shell::parse(line)
                .commands
                .iter()
                .any(|c| rule.pattern.matches(&c.words) || rule.pattern.matches(&c.key))
        };
        for (examples, should_match) in [(&rule.matches, true), (&rule.not_match, false)] {
            for ex in examples {
                out.push(ExampleResult {
                    location: ex.location.clone(),
                    line: ex.line.clone(),
                    pattern: rule.pattern.as_str().to_string(),
                    should_match,
                    ok: hits(&ex.line) == should_match,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Policy {
        Policy::parse(text, "p.toml", std::path::Path::new("/")).unwrap()
    }

    #[test]
    fn embedded_default_examples_hold() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy::parse(
            cordon_policy::DEFAULT_POLICY,
            cordon_policy::DEFAULT_POLICY_NAME,
            dir.path(),
        )
        .unwrap();
        assert!(
            policy
                .shell
                .rules
                .iter()
                .map(|r| r.matches.len() + r.not_match.len())
                .sum::<usize>()
                >= 8
        );
        check_examples(&policy).unwrap();
    }

    #[test]
    fn failing_examples_name_their_location() {
        let p = load("version = 1\n[[shell.rules]]\npattern = \"git push\"\naction = \"deny\"\nmatch = [\"git pull\"]\n");
        let e = check(&p).unwrap_err().to_string();
        assert!(
            e.starts_with("p.toml:5:10: example `git pull` does not match"),
            "{e}"
        );
        let p = load("version = 1\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nnot_match = [\"ls && /bin/rm x\"]\n");
        let e = check(&p).unwrap_err().to_string();
        assert!(
            e.starts_with("p.toml:5:14: example `ls && /bin/rm x` matches"),
            "{e}"
        );
        let p = load("version = 1\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nmatch = [\"sudo rm -rf /\"]\nnot_match = [\"echo rm\"]\n");
        check(&p).unwrap();
    }
}
