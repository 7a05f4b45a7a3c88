//! Shell rule patterns: a token prefix of a simple command, with globs inside tokens.
//!
//! `git push --force*` is three tokens; a command matches when its first three words match
//! them in order (more words may follow). Inside a token, `*` matches any run of characters
//! except `/`, `**/` matches any number of directories (`**/*.rs`), `?` one character, `[abc]` a class. A first token without
//! `/` matches the command's basename, so a rule for `rm` also covers `/bin/rm`.
//!
//! An **exact** pattern (`exact = true` in the rule) matches only a command of exactly its
//! tokens — no further words — and compares the first token with the command name as written
//! (no basename): `git push origin main` exact matches neither `git push origin main --force`
//! nor `./git push origin main`. "Approve always" writes exact rules, so a remembered grant is
//! never broader than the request it came from.

use std::sync::OnceLock;

use crate::PolicyError;
use globset::{Glob, GlobBuilder, GlobMatcher};

#[derive(Debug, Clone)]
enum Token {
    Literal(String),
    /// Validated when the policy loads; the matcher is compiled on first use, because
    /// compiling every glob of a policy would dominate `cordon exec`'s start-up time. A word
    /// that lacks the glob's literal prefix (`mkfs` of `mkfs*`) cannot match, so most words
    /// are rejected without compiling anything.
    Glob {
        glob: Glob,
        prefix: String,
        matcher: OnceLock<GlobMatcher>,
    },
}

impl Token {
    fn matches(&self, word: &str) -> bool {
        match self {
            Token::Literal(s) => s == word,
            Token::Glob {
                glob,
                prefix,
                matcher,
            } => {
                word.starts_with(prefix.as_str())
                    && matcher
                        .get_or_init(|| glob.compile_matcher())
                        .is_match(word)
            }
        }
    }
}

/// Whether a pattern token is a glob (otherwise it compares by equality).
pub fn is_glob(token: &str) -> bool {
    token.contains(['*', '?', '[', ']', '{', '}'])
}

/// The characters of a glob token before its first special character: every word it matches
/// starts with them (`\` ends the prefix too, so an escape is never misread).
pub fn literal_prefix(token: &str) -> &str {
    let end = token
        .find(['*', '?', '[', ']', '{', '}', '\\'])
        .unwrap_or(token.len());
    &token[..end]
}

/// A compiled token-prefix pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    tokens: Vec<Token>,
    /// The first token names a path (`/usr/bin/git`): compare it whole, not by basename.
    first_is_path: bool,
    /// Only commands of exactly these tokens, the first compared whole.
    exact: bool,
}

impl Pattern {
    /// Compiles `source`; the error says which token failed and why.
    pub fn new(source: &str) -> Result<Pattern, PolicyError> {
        let words: Vec<&str> = source.split_whitespace().collect();
        if words.is_empty() {
            return Err(PolicyError::value("pattern", "pattern is empty"));
        }
        let mut tokens = Vec::with_capacity(words.len());
        for word in &words {
            if is_glob(word) {
                let glob = GlobBuilder::new(word)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| {
                        PolicyError::value(
                            "pattern",
                            format!("token `{word}` is not a valid glob: {}", e.kind()),
                        )
                    })?;
                tokens.push(Token::Glob {
                    glob,
                    prefix: literal_prefix(word).to_string(),
                    matcher: OnceLock::new(),
                });
            } else {
                tokens.push(Token::Literal((*word).to_string()));
            }
        }
        Ok(Pattern {
            source: words.join(" "),
            first_is_path: words[0].contains('/'),
            tokens,
            exact: false,
        })
    }

    /// Compiles `source` as an exact pattern (see the module docs).
    pub fn exact(source: &str) -> Result<Pattern, PolicyError> {
        let mut p = Pattern::new(source)?;
        p.exact = true;
        Ok(p)
    }

    /// Is this an exact pattern?
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// The pattern as written (whitespace normalised).
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The first token when it is a plain word, for indexing rules by command name (the
    /// basename of what it matches: an exact `git` only matches `git`, whose basename it is).
    pub fn literal_command(&self) -> Option<&str> {
        match &self.tokens[0] {
            Token::Literal(s) if !self.first_is_path => Some(s),
            _ => None,
        }
    }

    /// Does this pattern match a prefix of `words` (a simple command, quoting resolved)?
    pub fn matches<S: AsRef<str>>(&self, words: &[S]) -> bool {
        if words.len() < self.tokens.len() || (self.exact && words.len() != self.tokens.len()) {
            return false;
        }
        let first = words[0].as_ref();
        let name = if self.first_is_path || self.exact {
            first
        } else {
            basename(first)
        };
        self.tokens[0].matches(name)
            && self.tokens[1..]
                .iter()
                .zip(&words[1..])
                .all(|(t, w)| t.matches(w.as_ref()))
    }
}

/// The last path component of a command name (`/bin/rm` → `rm`).
pub fn basename(word: &str) -> &str {
    match word.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() => last,
        _ => word,
    }
}

/// The directories whose programs an allow rule on a bare name also covers when named by
/// path (`/usr/bin/ls` for `ls`): the system's own, root-owned, on the default `PATH`.
pub const SYSTEM_BIN_DIRS: &[&str] = &[
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
    "/usr/local/sbin",
    "/usr/sbin",
    "/sbin",
];

/// Whether a command name is a bare name (found on the `PATH`) or a program's path written
/// exactly as `DIR/NAME` with `DIR` a system directory (no `.`, `..` or doubled `/`).
pub fn names_system_program(name: &str) -> bool {
    match name.rsplit_once('/') {
        None => true,
        Some((dir, base)) => {
            !base.is_empty() && base != "." && base != ".." && SYSTEM_BIN_DIRS.contains(&dir)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, cmd: &str) -> bool {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        Pattern::new(p).unwrap().matches(&words)
    }

    #[test]
    fn token_prefix() {
        assert!(m("git status", "git status"));
        assert!(m("git status", "git status --short"));
        assert!(!m("git status", "git"));
        assert!(!m("git status", "git stash"));
        assert!(!m("git st", "git status"));
    }

    #[test]
    fn globs_inside_tokens() {
        assert!(m("npm run test*", "npm run test:unit"));
        assert!(!m("npm run test*", "npm run build"));
        assert!(m("cat *.txt", "cat a.txt"));
        assert!(!m("cat *.txt", "cat dir/a.txt"), "* does not cross /");
        assert!(m("cat **/*.txt", "cat dir/a.txt"));
        assert!(m("cat **/*.txt", "cat a/b/c.txt"));
        assert!(m("rm -?f", "rm -rf x"));
    }

    #[test]
    fn command_basename() {
        assert!(m("rm", "/bin/rm -rf /"));
        assert!(m("rm", "/usr/bin/rm"));
        assert!(!m("/usr/bin/rm", "rm"));
        assert!(m("/usr/bin/rm", "/usr/bin/rm x"));
    }

    #[test]
    fn exact_patterns_match_only_the_whole_command_as_written() {
        let e = |p: &str, cmd: &str| {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            Pattern::exact(p).unwrap().matches(&words)
        };
        assert!(e("git push origin main", "git push origin main"));
        assert!(!e("git push origin main", "git push origin main --force"));
        assert!(!e("git push origin main", "git push origin"));
        assert!(
            !e("git status", "./git status"),
            "no basename: ./git is not git"
        );
        assert!(!e("git status", "/usr/bin/git status"));
        assert!(e("/usr/bin/git status", "/usr/bin/git status"));
        assert!(e(r"rm \*.txt", "rm *.txt") && !e(r"rm \*.txt", "rm a.txt"));
        assert!(Pattern::exact("git").unwrap().is_exact());
        assert!(!Pattern::new("git").unwrap().is_exact());
        assert_eq!(
            Pattern::exact("git status").unwrap().literal_command(),
            Some("git")
        );
    }

    #[test]
    fn literal_prefix_never_rejects_a_match() {
        assert_eq!(literal_prefix("mkfs*"), "mkfs");
        assert_eq!(literal_prefix("*.txt"), "");
        assert_eq!(literal_prefix("a\\*b*"), "a");
        assert_eq!(literal_prefix("x{a,b}"), "x");
        assert_eq!(literal_prefix("é?"), "é");
        assert!(m("x{a,b}", "xa") && m("x{a,b}", "xb") && !m("x{a,b}", "ya"));
        assert!(m("a\\*b*", "a*bc") && !m("a\\*b*", "axbc"));
    }

    #[test]
    fn bad_patterns() {
        assert_eq!(
            Pattern::new("   ").unwrap_err().to_string(),
            "pattern is empty"
        );
        let e = Pattern::new("git [abc").unwrap_err();
        assert!(e.to_string().contains("`[abc`"), "{e}");
    }
}
