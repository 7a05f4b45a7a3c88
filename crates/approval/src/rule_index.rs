//! Shell rules compiled into a token trie, so a decision costs about the same for 10 rules as
//! for 10,000.
//!
//! Every rule is a path of tokens from a root: a literal token is an edge found by hashing the
//! word, a glob token an edge tried only when the word starts with the glob's literal prefix.
//! Equal tokens share an edge, so `git push origin` and `git push --force*` share `git push`,
//! and `git * x1` … `git * x999` share one `*`. Each node keeps, for the rules that end there,
//! only what the semantics need: the last rule and the first deny, in policy order. A decision
//! walks the command's words from the roots and combines the nodes it reaches; it never looks
//! at a rule that shares no path with the command.
//!
//! What stays linear: many *different* globs without a literal prefix (`*.rs`, `[ab]*`, …)
//! leaving the same node are each tried for a word that reaches it.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use cordon_policy::verdict::{Known, FOUND};
use cordon_policy::{basename, is_glob, literal_prefix, Action, Pattern, ShellRule};

/// Rules compared with the basename of the command name (a first token without `/`).
const BASENAME_ROOT: usize = 0;
/// Rules compared with the command name as written: exact rules and path first tokens.
const WHOLE_ROOT: usize = 1;

/// What the rules ending at a node contribute: the last one and the first deny.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Verdict {
    last: Option<usize>,
    first_deny: Option<usize>,
    /// The last ask: what a word only known at run time could bring in (see
    /// [`RuleIndex::could`]).
    last_ask: Option<usize>,
}

impl Verdict {
    /// Rules must be added in policy order.
    fn add(&mut self, index: usize, action: Action) {
        self.last = Some(index);
        if action == Action::Deny && self.first_deny.is_none() {
            self.first_deny = Some(index);
        }
        if action == Action::Ask {
            self.last_ask = Some(index);
        }
    }

    fn merge(&mut self, other: Verdict) {
        self.last = self.last.max(other.last);
        self.last_ask = self.last_ask.max(other.last_ask);
        self.first_deny = match (self.first_deny, other.first_deny) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// What matched a command; see [`RuleIndex::matches`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matches {
    pub(crate) first_deny: Option<usize>,
    pub(crate) by_name: Option<usize>,
    pub(crate) as_written: Option<usize>,
}

/// An edge for one glob token.
#[derive(Debug, Clone)]
struct GlobEdge {
    token: Box<str>,
    /// The token alone as an exact pattern: it matches one word exactly as the token does
    /// inside its rule (same glob options, without copying them here). Built on first use,
    /// like the rules' own matchers, so a large policy costs little to load.
    glob: OnceLock<Pattern>,
    to: usize,
}

impl GlobEdge {
    fn matches(&self, word: &str) -> bool {
        self.glob
            .get_or_init(|| {
                Pattern::exact(&self.token).expect("a token of a compiled pattern compiles alone")
            })
            .matches(&[word])
    }
}

#[derive(Debug, Clone, Default)]
struct Node {
    literal: HashMap<Box<str>, usize>,
    /// Glob edges by their literal prefix: a word can only match the globs whose prefix it
    /// starts with, so it looks up its own prefixes of these lengths.
    globs: HashMap<Box<str>, Vec<GlobEdge>>,
    prefix_lens: Vec<usize>,
    /// Rules whose last token leads here: they match every command that gets here.
    prefix: Verdict,
    /// Exact rules whose last token leads here: they match only when no word is left.
    exact: Verdict,
}

/// The trie of a rule set; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct RuleIndex {
    nodes: Vec<Node>,
}

impl RuleIndex {
    pub(crate) fn new(rules: &[ShellRule]) -> RuleIndex {
        let mut index = RuleIndex {
            nodes: vec![Node::default(), Node::default()],
        };
        // Glob edges by (node, token), to share them without scanning a bucket per rule.
        let mut globs = HashMap::new();
        for (i, rule) in rules.iter().enumerate() {
            let pattern = &rule.pattern;
            // `as_str` is the tokens joined by single spaces.
            let mut tokens = pattern.as_str().split(' ');
            let Some(first) = tokens.next() else { continue };
            let mut at = if pattern.is_exact() || first.contains('/') {
                WHOLE_ROOT
            } else {
                BASENAME_ROOT
            };
            for token in std::iter::once(first).chain(tokens) {
                at = index.edge(at, token, &mut globs);
            }
            let node = &mut index.nodes[at];
            let verdict = if pattern.is_exact() {
                &mut node.exact
            } else {
                &mut node.prefix
            };
            verdict.add(i, rule.action);
        }
        index
    }

    /// The node `token` leads to from `from`, created when new.
    fn edge<'a>(
        &mut self,
        from: usize,
        token: &'a str,
        globs: &mut HashMap<(usize, &'a str), usize>,
    ) -> usize {
        let next = self.nodes.len();
        let node = &mut self.nodes[from];
        // The pattern compiler's own test: a literal token compares by equality there, so its
        // edge is found by hashing here.
        if !is_glob(token) {
            let to = *node.literal.entry(token.into()).or_insert(next);
            if to == next {
                self.nodes.push(Node::default());
            }
            return to;
        }
        if let Some(&to) = globs.get(&(from, token)) {
            return to;
        }
        globs.insert((from, token), next);
        let prefix = literal_prefix(token);
        node.globs.entry(prefix.into()).or_default().push(GlobEdge {
            token: token.into(),
            glob: OnceLock::new(),
            to: next,
        });
        if let Err(at) = node.prefix_lens.binary_search(&prefix.len()) {
            node.prefix_lens.insert(at, prefix.len());
        }
        self.nodes.push(Node::default());
        next
    }

    /// The index of the deciding rule for one simple command: the first matching deny, else
    /// the last matching rule; `None` when no rule matches.
    pub(crate) fn decide<S: AsRef<str>>(&self, words: &[S]) -> Option<usize> {
        let m = self.matches(words)?;
        m.first_deny.or(m.by_name.max(m.as_written))
    }

    /// What matched one simple command, apart: the first deny, and the last rule among those
    /// matched by the program's basename (`pytest`) and among those matched as written (exact
    /// rules, `.venv/bin/pytest`). `None` when the line has no words.
    pub(crate) fn matches<S: AsRef<str>>(&self, words: &[S]) -> Option<Matches> {
        let first = words.first()?.as_ref();
        let mut by_name = Verdict::default();
        let mut as_written = Verdict::default();
        self.visit(BASENAME_ROOT, basename(first), words, 0, &mut by_name);
        self.visit(WHOLE_ROOT, first, words, 0, &mut as_written);
        let mut deny = by_name;
        deny.merge(as_written);
        Some(Matches {
            first_deny: deny.first_deny,
            by_name: by_name.last,
            as_written: as_written.last,
        })
    }

    /// Collects node `at`, reached by the first `depth` words (the first one compared as
    /// `first`), and every node the next word leads to.
    fn visit<S: AsRef<str>>(
        &self,
        at: usize,
        first: &str,
        words: &[S],
        depth: usize,
        acc: &mut Verdict,
    ) {
        let node = &self.nodes[at];
        acc.merge(node.prefix);
        let Some(word) = words.get(depth) else {
            acc.merge(node.exact);
            return;
        };
        let word = if depth == 0 { first } else { word.as_ref() };
        if let Some(&to) = node.literal.get(word) {
            self.visit(to, first, words, depth + 1, acc);
        }
        for &len in &node.prefix_lens {
            if len > word.len() {
                break; // sorted: no longer prefix fits either
            }
            let Some(prefix) = word.get(..len) else {
                continue; // not a character boundary: no prefix of this length
            };
            for e in node.globs.get(prefix).into_iter().flatten() {
                if e.matches(word) {
                    self.visit(e.to, first, words, depth + 1, acc);
                }
            }
        }
    }
}

/// The deny and ask rules some value of a command's unknown words could match; see
/// [`RuleIndex::could`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Could {
    pub(crate) first_deny: Option<usize>,
    pub(crate) last_ask: Option<usize>,
    /// The walk gave up (its budget spent): anything could match.
    pub(crate) gave_up: bool,
}

/// Whether a value of the unknown word spelled `word` could match rule token `token`. Only a
/// plain glob (`*.o`, `build/*`: no expansion, quote, brace or tilde) is narrowed: bash's
/// pathname expansion gives names that match it, or the word itself, and its `*`, `?` and
/// `[…]` never match a `/`, so every value has the glob's `/`s and starts with its literal
/// prefix (`*` is never `/usr`). Anything else may be any word.
fn may_be(word: &str, token: &str) -> bool {
    if let Some(start) = found_start(word) {
        return found_may_be(start, token);
    }
    let plain = !word.contains(['$', '`', '"', '\'', '\\', '{', '}', '(', ')'])
        && !word.starts_with('~')
        && !word.contains("**")
        && !word.contains(['[', ']']);
    if !plain {
        return true;
    }
    if !is_glob(token) {
        return token == word || Pattern::exact(word).map_or(true, |p| p.matches(&[token]));
    }
    let (w, t) = (literal_prefix(word), literal_prefix(token));
    if !(w.starts_with(t) || t.starts_with(w)) {
        return false;
    }
    // A token's own `*` does not cross a `/` either (a rule `/*` is not `/usr/lib`); `**` and
    // classes are left alone.
    token.contains("**")
        || token.contains(['[', ']'])
        || word.matches('/').count() == token.matches('/').count()
}

/// The start path of a find `{}` spelled `P/{found}` ([`FOUND`]), when P is a plain path (no
/// expansion, quote, glob, brace or tilde: only find's placeholder is spelled so, a word with
/// any of those keeps its old reading as any word).
fn found_start(word: &str) -> Option<&str> {
    let start = if word == FOUND {
        "."
    } else {
        match word.strip_suffix(FOUND)?.strip_suffix('/')? {
            "" => "/",
            p => p,
        }
    };
    let plain = !start.contains([
        '$', '`', '"', '\'', '\\', '{', '}', '(', ')', '*', '?', '[', ']',
    ]) && !start.starts_with(['~', '-']);
    plain.then_some(start)
}

/// Whether a path find gives from `start` (normalised lexically: `start` itself or one below
/// it, spelled from the start path) could match rule token `token`. An exact token is compared
/// by its lexical form (so every spelling of a value counts); a glob's `*` and `?` never match
/// a `/`, so a token with fewer `/`s than `start` matches nothing find gives, one with as many
/// can only be `start`, and one with more must share its literal prefix with `start/`. Where
/// that is not certain (a relative start, `**`, classes, braces) it could.
fn found_may_be(start: &str, token: &str) -> bool {
    let absolute = start.starts_with('/');
    // find's paths start with the start path, never with `-`.
    if token.starts_with('-') {
        return false;
    }
    if !is_glob(token) {
        let t = cordon_fs::links::lexical_text(token);
        return match (absolute, t.starts_with('/')) {
            (true, true) => start == "/" || t == start || t.starts_with(&format!("{start}/")),
            (false, false) if start == "." => t != ".." && !t.starts_with("../"),
            (false, false) => t == start || t.starts_with(&format!("{start}/")),
            _ => false,
        };
    }
    if token.contains("**") || token.contains(['[', ']', '{', '}', '\\']) {
        return true;
    }
    if !absolute {
        // Relative paths never start with `/`; beyond that, not narrowed.
        return !token.starts_with('/');
    }
    if !token.starts_with('/') {
        // Every path find gives starts with `/`, which neither a literal other than `/` nor
        // `*`/`?` matches.
        return false;
    }
    if start == "/" {
        return true;
    }
    let (c_start, c_token) = (start.matches('/').count(), token.matches('/').count());
    if c_token < c_start {
        return false;
    }
    if c_token == c_start {
        return Pattern::exact(token).map_or(true, |p| p.matches(&[start]));
    }
    let (prefix, below) = (literal_prefix(token), format!("{start}/"));
    prefix.starts_with(&below) || below.starts_with(prefix)
}

/// Nodes a could-match walk may visit: a wildcard visits whole subtrees, so a policy of
/// thousands of rules and a line of many unknown words could cost much; past this, the walk
/// says anything could match (an ask, never an allow).
const COULD_BUDGET: usize = 200_000;

struct Walk<'a, S> {
    words: &'a [S],
    known: &'a [Known],
    /// The last unknown word: up to it, an unknown word's value may be options that the
    /// program reads before the words ahead of it (GNU programs read options anywhere; cordon's
    /// canonical forms put them first).
    last_unknown: usize,
    acc: Verdict,
    budget: usize,
    /// States already walked: a state's rules are the same each time it is reached, and
    /// wildcards reach the same nodes by many paths.
    seen: HashSet<(usize, usize, Option<usize>)>,
}

impl RuleIndex {
    /// The rules that could match the command when each unknown word ([`Known`], parallel to
    /// `words`) stands for any value: a [`Known::OneWord`] for any one word, a
    /// [`Known::AnyWords`] for any number of words. Either may also be options read before the
    /// words ahead of it (`git push origin "$f"` with f=`--force` is `git push --force
    /// origin`), so, before the last unknown word, any run of words whose first is an option
    /// may stand anywhere after the program name. Only the rules matched this way are walked.
    pub(crate) fn could<S: AsRef<str>>(&self, words: &[S], known: &[Known]) -> Could {
        self.could_within(words, known, COULD_BUDGET)
    }

    fn could_within<S: AsRef<str>>(&self, words: &[S], known: &[Known], budget: usize) -> Could {
        let Some(last_unknown) = known.iter().rposition(|k| *k != Known::Literal) else {
            return Could::default();
        };
        let mut walk = Walk {
            words,
            known,
            last_unknown,
            acc: Verdict::default(),
            budget,
            seen: HashSet::new(),
        };
        for root in [BASENAME_ROOT, WHOLE_ROOT] {
            self.could_visit(root, 0, None, &mut walk);
        }
        Could {
            first_deny: walk.acc.first_deny,
            last_ask: walk.acc.last_ask,
            // A deny found ends the walk early: it decides whatever else could match.
            gave_up: walk.budget == 0 && walk.acc.first_deny.is_none(),
        }
    }

    /// Collects node `at`, reached by the first `depth` words; `moved`: the unknown word whose
    /// value was read as options ahead of its place (one float per walk is enough: a run of
    /// any options covers several).
    fn could_visit<S: AsRef<str>>(
        &self,
        at: usize,
        depth: usize,
        moved: Option<usize>,
        w: &mut Walk<S>,
    ) {
        if w.budget == 0 || !w.seen.insert((at, depth, moved)) {
            return;
        }
        w.budget -= 1;
        let node = &self.nodes[at];
        w.acc.merge(node.prefix);
        if w.acc.first_deny.is_some() {
            w.budget = 0;
            return;
        }
        let Some(word) = w.words.get(depth) else {
            w.acc.merge(node.exact);
            return;
        };
        let (words, known) = (w.words, w.known);
        if moved.is_none() && depth >= 1 {
            // An unknown word further on, read here as options: one option for a single word,
            // a run of words starting with one for any words.
            let ahead = words.iter().zip(known).enumerate();
            for (i, (spelled, &kind)) in ahead.take(w.last_unknown + 1).skip(depth) {
                if kind == Known::Literal {
                    continue;
                }
                let spelled = spelled.as_ref();
                let fits = |token: &str| may_be(spelled, token);
                let next: Vec<usize> = self
                    .edges(at)
                    .filter(|(token, _)| {
                        (token.starts_with('-')
                            || (is_glob(token) && literal_prefix(token).is_empty()))
                            && fits(token)
                    })
                    .map(|(_, to)| to)
                    .collect();
                for to in next {
                    self.could_visit(to, depth, Some(i), w);
                    if kind == Known::AnyWords {
                        self.any_run(to, &fits, w, &mut |index, to, w| {
                            index.could_visit(to, depth, Some(i), w)
                        });
                    }
                }
            }
        }
        let word = word.as_ref();
        match known.get(depth).copied().unwrap_or_default() {
            // A single word read ahead as an option is not here any more.
            Known::OneWord if moved == Some(depth) => self.could_visit(at, depth + 1, moved, w),
            Known::Literal => {
                let first = if depth == 0 && at == BASENAME_ROOT {
                    basename(word)
                } else {
                    word
                };
                let next: Vec<usize> = self.matching_edges(node, first).collect();
                for to in next {
                    self.could_visit(to, depth + 1, moved, w);
                }
            }
            Known::OneWord => {
                let next: Vec<usize> = self
                    .edges(at)
                    .filter(|(token, _)| may_be(word, token))
                    .map(|(_, to)| to)
                    .collect();
                for to in next {
                    self.could_visit(to, depth + 1, moved, w);
                }
            }
            Known::AnyWords => {
                self.could_visit(at, depth + 1, moved, w);
                self.any_run(at, &|t| may_be(word, t), w, &mut |index, to, w| {
                    index.could_visit(to, depth + 1, moved, w)
                });
            }
        }
    }

    /// Calls `then` on every node below `at` (one or more edges away) by edges whose token
    /// passes `fits`.
    fn any_run<S: AsRef<str>>(
        &self,
        at: usize,
        fits: &dyn Fn(&str) -> bool,
        w: &mut Walk<S>,
        then: &mut dyn FnMut(&RuleIndex, usize, &mut Walk<S>),
    ) {
        let next: Vec<usize> = self
            .edges(at)
            .filter(|(token, _)| fits(token))
            .map(|(_, to)| to)
            .collect();
        for to in next {
            if w.budget == 0 {
                return;
            }
            w.budget -= 1;
            then(self, to, w);
            self.any_run(to, fits, w, then);
        }
    }

    /// Every edge leaving `at`: its token and the node it leads to.
    fn edges(&self, at: usize) -> impl Iterator<Item = (&str, usize)> + '_ {
        let node = &self.nodes[at];
        node.literal
            .iter()
            .map(|(t, &to)| (&**t, to))
            .chain(node.globs.values().flatten().map(|e| (&*e.token, e.to)))
    }

    /// The nodes a literal word leads to from `node`.
    fn matching_edges<'a>(
        &'a self,
        node: &'a Node,
        word: &'a str,
    ) -> impl Iterator<Item = usize> + 'a {
        let literal = node.literal.get(word).copied();
        let globs = node.prefix_lens.iter().flat_map(move |&len| {
            word.get(..len)
                .filter(|_| len <= word.len())
                .and_then(|prefix| node.globs.get(prefix))
                .into_iter()
                .flatten()
                .filter(move |e| e.matches(word))
                .map(|e| e.to)
        });
        literal.into_iter().chain(globs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_find_placeholder_is_its_start_path_or_below_it() {
        let could = |word: &str, token: &str| may_be(word, token);
        // Below `/srv/ws`: itself, and what lies under it.
        for token in [
            "/srv/ws",
            "/srv/ws/a",
            "/srv/ws/a/b",
            "/srv/*",
            "/srv/ws/*",
            "/srv/w*/x",
            "//srv/ws/./a",
            "/**",
        ] {
            assert!(could("/srv/ws/{found}", token), "{token}");
        }
        for token in [
            "/",
            "/srv",
            "/*",
            "/srv/other",
            "/srv/wsx/*",
            "/srv/ws/..",
            "ws",
            "*",
            "-rf",
            "/usr/*/*",
        ] {
            assert!(!could("/srv/ws/{found}", token), "{token}");
        }
        // `/` and `.`: everything absolute, everything relative that does not climb.
        assert!(could("/{found}", "/") && could("/{found}", "/*") && !could("/{found}", "x"));
        assert!(could("{found}", "x") && could("{found}", "./x") && could("{found}", "*"));
        assert!(!could("{found}", "/x") && !could("{found}", "../x") && !could("{found}", "/*"));
        // Only a plain start path is read so; anything else is any word.
        assert!(could("$d/{found}", "/") && could("*/{found}", "/") && could("~/{found}", "/"));
    }

    fn index(rules: &[(&str, &str)]) -> RuleIndex {
        let body: String = rules
            .iter()
            .map(|(p, a)| format!("[[shell.rules]]\npattern = \"{p}\"\naction = \"{a}\"\n"))
            .collect();
        let policy = cordon_policy::Policy::parse(
            &format!("version = 1\n{body}"),
            "p.toml",
            std::path::Path::new("/"),
        )
        .unwrap();
        RuleIndex::new(&policy.shell.rules)
    }

    /// A walk that runs out of budget says anything could match (the caller asks), unless it
    /// found a deny first.
    #[test]
    fn a_walk_out_of_budget_gives_up_and_a_deny_found_first_stands() {
        let rules: Vec<(String, &str)> = (0..50)
            .map(|i| (format!("x a{i} b{i}"), "allow"))
            .chain([("x a49 b49 c".to_string(), "ask")])
            .collect();
        let refs: Vec<(&str, &str)> = rules.iter().map(|(p, a)| (p.as_str(), *a)).collect();
        let ix = index(&refs);
        let words = ["x", "$a"];
        let known = [Known::Literal, Known::AnyWords];
        let all = ix.could_within(&words, &known, COULD_BUDGET);
        assert!(!all.gave_up && all.last_ask == Some(50), "{all:?}");
        let short = ix.could_within(&words, &known, 5);
        assert!(short.gave_up, "{short:?}");
        let ix = index(&[("x a", "deny"), ("x b c d e", "allow")]);
        let found = ix.could_within(&words, &known, 50);
        assert!(!found.gave_up && found.first_deny == Some(0), "{found:?}");
    }

    #[test]
    fn verdicts_merge_by_policy_order() {
        let mut a = Verdict::default();
        a.add(3, Action::Allow);
        a.add(5, Action::Deny);
        let mut b = Verdict::default();
        b.add(1, Action::Deny);
        b.add(7, Action::Ask);
        a.merge(b);
        assert_eq!(
            a,
            Verdict {
                last: Some(7),
                first_deny: Some(1),
                last_ask: Some(7),
            }
        );
    }
}
