//! Words: quote removal and concatenation for tree-sitter-bash word nodes, ANSI-C
//! (`$'...'`) decoding, `env -S` string splitting and shell quoting for display.

use tree_sitter::Node;

/// The source a tree was parsed from. Every slice is clamped and lossy, so a byte offset
/// that is out of range or not on a character boundary can never panic.
pub(super) struct Src<'a> {
    pub(super) text: &'a str,
}

impl<'a> Src<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Src { text }
    }

    /// The text between two byte offsets.
    pub(super) fn slice(&self, start: usize, end: usize) -> String {
        let bytes = self.text.as_bytes();
        let start = start.min(bytes.len());
        let end = end.min(bytes.len()).max(start);
        String::from_utf8_lossy(&bytes[start..end]).into_owned()
    }

    /// The source text of a node.
    pub(super) fn raw(&self, node: Node) -> String {
        self.slice(node.start_byte(), node.end_byte())
    }
}

/// One shell word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    /// The value after quote removal, or the source text when the word contains an
    /// expansion or substitution.
    pub(super) text: String,
    /// How the word was written (for display).
    pub(super) raw: String,
    /// The value is known: no expansion, substitution, glob or brace expansion.
    pub(super) literal: bool,
    /// The word stays exactly one word (no unquoted expansion, glob or brace expansion
    /// that could turn it into zero or several words).
    pub(super) single: bool,
}

impl Word {
    /// A word whose value is known exactly (an argv element).
    pub(super) fn lit(text: &str) -> Word {
        Word {
            text: text.to_string(),
            raw: quote(text),
            literal: true,
            single: true,
        }
    }

    /// A copy of this word whose value is no longer known (e.g. `{}` in `find -exec`, which
    /// find replaces by a file name).
    pub(super) fn made_dynamic(&self) -> Word {
        Word {
            text: self.text.clone(),
            raw: self.raw.clone(),
            literal: false,
            single: self.single,
        }
    }
}

/// Accumulates the parts of one word.
#[derive(Default)]
struct Acc {
    text: String,
    /// Unquoted characters as written; quoted characters and expansions are replaced by
    /// `\u{1}` so that brace expansion can be recognised only where bash does it.
    shape: String,
    expanded: bool,
    unquoted_expansion: bool,
    glob: bool,
    /// A double-quoted expansion that bash splits into one word per element (`"$@"`,
    /// `"${a[@]}"`, `"${@:2}"`, `"${!a[@]}"`): zero or several words.
    quoted_list: bool,
}

const QUOTED: char = '\u{1}';

/// Resolves a group of adjacent nodes (one shell word) into a [`Word`].
pub(super) fn resolve(nodes: &[Node], src: &Src) -> Word {
    let mut acc = Acc::default();
    for node in nodes {
        part(*node, src, &mut acc, 0);
    }
    let raw = match (nodes.first(), nodes.last()) {
        (Some(first), Some(last)) => src.slice(first.start_byte(), last.end_byte()),
        _ => String::new(),
    };
    if has_brace_expansion(&acc.shape) || has_bracket_glob(&acc.shape) {
        acc.glob = true;
    }
    Word {
        text: if acc.expanded { raw.clone() } else { acc.text },
        raw,
        literal: !acc.expanded && !acc.glob,
        single: !acc.unquoted_expansion && !acc.glob && !acc.quoted_list,
    }
}

/// Bounded: a word nested deeper than this is treated as an expansion.
const MAX_PART_DEPTH: usize = 64;

fn part(node: Node, src: &Src, acc: &mut Acc, depth: usize) {
    if depth > MAX_PART_DEPTH {
        acc.expanded = true;
        acc.unquoted_expansion = true;
        return;
    }
    match node.kind() {
        "command_name" | "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                part(child, src, acc, depth + 1);
            }
        }
        "word" => unquoted(&src.raw(node), acc),
        "string" => double_quoted(node, src, acc),
        "raw_string" => {
            let raw = src.raw(node);
            let inner = raw
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(&raw);
            push_quoted(acc, inner);
        }
        "ansi_c_string" => {
            let raw = src.raw(node);
            let inner = raw
                .strip_prefix("$'")
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(&raw);
            let decoded = ansi_c(inner);
            push_quoted(acc, &decoded);
        }
        "number" if node.named_child_count() == 0 => unquoted(&src.raw(node), acc),
        "simple_expansion"
        | "expansion"
        | "command_substitution"
        | "arithmetic_expansion"
        | "number" => {
            acc.expanded = true;
            acc.unquoted_expansion = true;
            acc.shape.push(QUOTED);
        }
        // `<(...)` always becomes exactly one word (a /dev/fd path).
        "process_substitution" => {
            acc.expanded = true;
            acc.shape.push(QUOTED);
        }
        "brace_expression" | "extglob_pattern" | "regex" => {
            acc.glob = true;
            acc.text.push_str(&src.raw(node));
            acc.shape.push(QUOTED);
        }
        // `==` and `=~` as arguments of a command are plain words.
        "==" | "=~" => unquoted(&src.raw(node), acc),
        // A bare `$` (or `\$`) is a literal dollar, unless a string follows at once:
        // then it is `$"..."` (locale translation), whose value is not known.
        "$" if !node.is_named() => {
            let raw = src.raw(node);
            let translated = raw == "$"
                && node.next_sibling().is_some_and(|n| {
                    n.start_byte() == node.end_byte()
                        && matches!(n.kind(), "string" | "raw_string" | "concatenation")
                });
            if translated {
                acc.expanded = true;
                acc.unquoted_expansion = true;
                acc.shape.push(QUOTED);
            } else {
                unquoted(&raw, acc);
            }
        }
        // `$"..."` (locale translation; tree-sitter sometimes splits the `$` off), and
        // anything else we do not model: value unknown.
        _ => {
            acc.expanded = true;
            acc.unquoted_expansion = true;
            acc.shape.push(QUOTED);
        }
    }
}

fn push_quoted(acc: &mut Acc, s: &str) {
    acc.text.push_str(s);
    acc.shape.push(QUOTED);
}

/// Unquoted text: backslash escapes, line continuations, glob characters.
fn unquoted(raw: &str, acc: &mut Acc) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(escaped) => {
                    acc.text.push(escaped);
                    acc.shape.push(QUOTED);
                }
                None => {
                    acc.text.push('\\');
                    acc.shape.push(QUOTED);
                }
            },
            '*' | '?' => {
                acc.glob = true;
                acc.text.push(c);
                acc.shape.push(c);
            }
            _ => {
                acc.text.push(c);
                acc.shape.push(c);
            }
        }
    }
}

/// A double-quoted string, read from its source text: `\$ \` \" \\ \<newline>` are
/// decoded; an unescaped `$` that starts an expansion, or a backtick, makes the value
/// unknown (it stays one word). The tree's children are not trusted for this: the parser
/// drops blanks inside strings in places (`" "`).
fn double_quoted(node: Node, src: &Src, acc: &mut Acc) {
    let raw = src.raw(node);
    let Some(inner) = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|_| raw.len() >= 2)
    else {
        acc.expanded = true;
        acc.shape.push(QUOTED);
        return;
    };
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        acc.text.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => acc.text.push('\\'),
            },
            '`' => acc.expanded = true,
            '$' => match chars.peek().copied() {
                Some(n) if n.is_ascii_alphanumeric() || "_{([@*#?$!-".contains(n) => {
                    acc.expanded = true;
                    // Round 11: `"$@"` and an `@` subscript or name inside `${…}` (not the
                    // count, `${#a[@]}`) become one word per element: `cp "$@"` after `set --
                    // a cordon.toml` copied `a` over the policy file. Any other `@` there
                    // (`${x@Q}`) is taken as one too: never less strict.
                    let braced: String = chars.clone().skip(1).take_while(|c| *c != '}').collect();
                    if n == '@' || (n == '{' && braced.contains('@') && !braced.starts_with('#')) {
                        acc.quoted_list = true;
                    }
                }
                _ => acc.text.push('$'),
            },
            _ => acc.text.push(c),
        }
    }
    acc.shape.push(QUOTED);
}

/// Whether the unquoted shape of a word has a brace expansion: an unquoted `{` followed
/// by an unquoted `,` or `..` and an unquoted `}`.
fn has_brace_expansion(shape: &str) -> bool {
    let mut rest = shape;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(close) = after.find('}') {
            let inner = &after[..close];
            if inner.contains(',') || inner.contains("..") {
                return true;
            }
            // Nested braces: look again after this `{`.
        }
        rest = after;
    }
    false
}

/// Whether the unquoted shape of a word has a bracket expression (`[...]`), which is a
/// glob. Conservative: any unquoted `[` followed later by an unquoted `]`.
fn has_bracket_glob(shape: &str) -> bool {
    shape
        .find('[')
        .is_some_and(|open| shape[open + 1..].contains(']'))
}

/// Decodes the body of `$'...'` the way bash does.
pub(super) fn ansi_c(s: &str) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' || i + 1 >= bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let e = bytes[i + 1];
        i += 2;
        match e {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'e' | b'E' => out.push(0x1b),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'0'..=b'7' => {
                let mut v: u32 = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let (v, n) = hex(&bytes[i..], 2);
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                    i += n;
                }
            }
            b'u' | b'U' => {
                let (v, n) = hex(&bytes[i..], if e == b'u' { 4 } else { 8 });
                if n == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else {
                    i += n;
                    let c = char::from_u32(v).unwrap_or('\u{FFFD}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            b'c' => {
                if i < bytes.len() {
                    let c = bytes[i];
                    i += 1;
                    out.push(c.to_ascii_uppercase() & 0x1f);
                } else {
                    out.extend_from_slice(b"\\c");
                }
            }
            _ => {
                out.push(b'\\');
                out.push(e);
            }
        }
    }
    // bash stops a string at a NUL byte.
    if let Some(nul) = out.iter().position(|&b| b == 0) {
        out.truncate(nul);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(bytes: &[u8], max: usize) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max && n < bytes.len() {
        let d = match bytes[n] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        v = v.wrapping_mul(16).wrapping_add(u32::from(d));
        n += 1;
    }
    (v, n)
}

/// Splits the argument of `env -S` the way GNU env does: whitespace separates, `'...'`
/// and `"..."` quote, `\_` is a space (a separator outside quotes), `\c` ends the
/// string, `#` at the start of a word starts a comment, `${NAME}` expands (the word is
/// then not literal).
pub(super) fn split_env_string(s: &str) -> Result<Vec<Word>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut dynamic = false;
    let mut chars = s.chars().peekable();
    #[derive(PartialEq)]
    enum Q {
        None,
        Single,
        Double,
    }
    let mut q = Q::None;
    let finish = |cur: &mut String, dynamic: &mut bool, words: &mut Vec<Word>| {
        let mut w = Word::lit(cur);
        if *dynamic {
            w = w.made_dynamic();
        }
        words.push(w);
        cur.clear();
        *dynamic = false;
    };
    while let Some(c) = chars.next() {
        match q {
            Q::Single => match c {
                '\'' => q = Q::None,
                '\\' if matches!(chars.peek(), Some('\\' | '\'')) => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                _ => cur.push(c),
            },
            Q::Double | Q::None => match c {
                '\'' if q == Q::None => {
                    q = Q::Single;
                    in_word = true;
                }
                '"' => {
                    q = if q == Q::Double { Q::None } else { Q::Double };
                    in_word = true;
                }
                ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' if q == Q::None => {
                    if in_word {
                        finish(&mut cur, &mut dynamic, &mut words);
                        in_word = false;
                    }
                }
                '#' if q == Q::None && !in_word => break,
                '$' => {
                    if chars.peek() != Some(&'{') {
                        return Err(format!("env -S: `$` must be followed by `{{` in {s:?}"));
                    }
                    let mut name = String::from("$");
                    for n in chars.by_ref() {
                        name.push(n);
                        if n == '}' {
                            break;
                        }
                    }
                    cur.push_str(&name);
                    dynamic = true;
                    in_word = true;
                }
                '\\' => {
                    let Some(e) = chars.next() else {
                        return Err(format!("env -S: trailing backslash in {s:?}"));
                    };
                    match e {
                        '_' if q == Q::None => {
                            if in_word {
                                finish(&mut cur, &mut dynamic, &mut words);
                                in_word = false;
                            }
                        }
                        '_' => cur.push(' '),
                        'c' => break,
                        'n' => cur.push('\n'),
                        't' => cur.push('\t'),
                        'r' => cur.push('\r'),
                        'f' => cur.push('\x0c'),
                        'v' => cur.push('\x0b'),
                        '#' | '$' | '\\' | '"' | '\'' => cur.push(e),
                        _ => {
                            return Err(format!("env -S: unknown escape `\\{e}` in {s:?}"));
                        }
                    }
                    if e != '_' || q != Q::None {
                        in_word = true;
                    }
                }
                _ => {
                    cur.push(c);
                    in_word = true;
                }
            },
        }
    }
    if q != Q::None {
        return Err(format!("env -S: unterminated quote in {s:?}"));
    }
    if in_word {
        finish(&mut cur, &mut dynamic, &mut words);
    }
    Ok(words)
}

/// Assignment operators of shell arithmetic, and `++`/`--` after a name (`==` is not one).
const ARITH_ASSIGN: &[&[u8]] = &[
    b"=", b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"^=", b"|=", b"<<=", b">>=", b"**=", b"++",
    b"--",
];

/// The variables an arithmetic expression (`(( … ))`, `$(( … ))`, a `let` argument, an array
/// subscript) assigns: `NAME` in `NAME = …` (any assignment operator), `NAME[i] = …`, `NAME++`
/// and `--NAME`. A target written as an expansion (`$v = 1`) is given as written and not
/// literal: it may name any variable. Read from the text rather than the tree, because
/// tree-sitter-bash groups `x = y = NAME = 1` from the left and so hides `NAME`.
///
/// Errs on the side of finding too much: a name that only looks assigned is found too. Not
/// found: assignments hidden in variables' values, which bash evaluates as expressions in turn
/// (`x='HOME=1'; (( x ))`), and in the values of integer variables (`declare -i n; n=HOME=1`).
pub(super) fn arithmetic_targets(expr: &str) -> Vec<Word> {
    // bash reads the expression as if double-quoted: `(( "HOME" = 1 ))` assigns HOME.
    let text: Vec<u8> = expr.bytes().filter(|&b| b != b'"').collect();
    let b = text.as_slice();
    let name_end = |mut i: usize| {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            i += 1;
        }
        i
    };
    // For each opening bracket, the index just past the one that closes it (or the end):
    // found once, so that the scan stays linear.
    let mut closes = vec![b.len(); b.len()];
    let mut open: [Vec<usize>; 3] = Default::default();
    for (i, &x) in b.iter().enumerate() {
        let kind = |pair: [u8; 3]| pair.iter().position(|&p| p == x);
        if let Some(k) = kind([b'(', b'[', b'{']) {
            open[k].push(i);
        } else if let Some(k) = kind([b')', b']', b'}']) {
            if let Some(o) = open[k].pop() {
                closes[o] = i + 1;
            }
        }
    }
    let close = |at: usize| closes[at];
    let mut out = Vec::new();
    // The last token was `++` or `--`: a name right after it is assigned.
    let mut incdec = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"++") || b[i..].starts_with(b"--") {
            incdec = true;
            i += 2;
            continue;
        }
        let start = i;
        let literal = match (c, b.get(i + 1)) {
            // `$((`: arithmetic, read on. `$(`: a command substitution, whose commands are
            // checked as commands.
            (b'$', Some(b'(')) if b.get(i + 2) == Some(&b'(') => {
                i += 3;
                incdec = false;
                continue;
            }
            (b'$', Some(b'(')) => {
                i = close(i + 1);
                incdec = false;
                continue;
            }
            (b'$', Some(b'{')) => {
                i = close(i + 1);
                false
            }
            (b'$', Some(n)) if n.is_ascii_alphabetic() || *n == b'_' => {
                i = name_end(i + 1);
                false
            }
            (b'$', Some(n)) if n.is_ascii() => {
                i += 2;
                false
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                i = name_end(i);
                true
            }
            _ => {
                // A number in any base (`16#ff`, `64#@_`) or an operator.
                if c.is_ascii_digit() {
                    while b.get(i).is_some_and(|x| {
                        x.is_ascii_alphanumeric() || matches!(x, b'_' | b'#' | b'@')
                    }) {
                        i += 1;
                    }
                } else {
                    i += 1;
                }
                incdec = false;
                continue;
            }
        };
        let end = i;
        // What follows the name (after its subscript, if any) decides; the subscript itself is
        // read next, as part of the expression.
        let mut after = end;
        if b.get(after) == Some(&b'[') {
            after = close(after);
        }
        while b.get(after).is_some_and(|x| x.is_ascii_whitespace()) {
            after += 1;
        }
        let rest = &b[after..];
        let assigns =
            !rest.starts_with(b"==") && ARITH_ASSIGN.iter().any(|op| rest.starts_with(op));
        if incdec || assigns {
            let written = String::from_utf8_lossy(&b[start..end]).into_owned();
            out.push(Word {
                raw: written.clone(),
                text: written,
                literal,
                single: true,
            });
        }
        incdec = false;
    }
    out
}

/// Quotes a string for display as one shell word.
pub(super) fn quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Joins words for display.
pub(super) fn join_raw(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}
