//! Values that bash runs as code.
//!
//! bash evaluates a variable's *value* as an arithmetic expression wherever the variable is
//! used in arithmetic (`$((x))`, `((x))`, `let x`, `${s:x}`, `${a[x]}`, `[[ x -eq y ]]`, the
//! value assigned to a `declare -i` variable), and as a variable name in `${!x}`; `${x@P}`
//! expands it as a prompt string. An arithmetic expression may hold an array reference whose
//! subscript bash expands, so a value such as `a[$(cmd)]` runs `cmd`; a prompt string runs its
//! `$(…)`. Such a use is code the line does not show, unless the value is known to be a plain
//! number.
//!
//! ```text
//!   walk ──▶ uses (name, known here?) ──┐
//!        ──▶ assignments: plain / not ──┼──▶ finish: each use of a name that is not known
//!                                       │    to be a plain number here, or that is assigned
//!                                       │    something else anywhere → Concern::Opaque
//! ```
//!
//! What is known, in source order within one shell (a nested `bash -c` string is a shell of its
//! own): a name assigned a literal integer by a statement of the shell's own top level (which
//! always runs before what follows it), the variable of a `for NAME in 1 2 3` or of a c-style
//! `for ((NAME = …))` inside its loop, and the special parameters that are always numbers
//! (`$#`, `$?`, `$$`, `$!`, `$RANDOM`, …). A name that any part of the line assigns anything
//! else (a command's output, `read`, a string, a loop over words) is never known, nor is one
//! only the environment or an earlier line could have set: an agent's shell keeps its
//! variables from one call to the next. A nameref (`declare -n`) makes every name unknown.

use std::collections::HashSet;

/// Special parameters and shell variables whose value is always a number bash sets itself
/// (unless the line assigns them, which makes them unknown like any other name).
const NUMERIC_SPECIALS: &[&str] = &[
    "#",
    "?",
    "$",
    "!",
    "-",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "PPID",
    "UID",
    "EUID",
    "EPOCHSECONDS",
    "BASH_SUBSHELL",
];

/// Whether a value, as bash would see it after quote removal, is a plain integer (or empty):
/// evaluated as arithmetic it is only a number.
pub(super) fn is_plain_number(value: &str) -> bool {
    let v = value.trim();
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    if v.is_empty() {
        return value.trim().is_empty();
    }
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    v.bytes().all(|b| b.is_ascii_digit())
}

/// One use of a variable's value as code.
struct Use {
    name: String,
    /// How the line uses it (for the concern).
    shown: String,
    /// Whether a plain number was known to be in it at this point.
    known: bool,
}

/// What the walk found about variables' values (see the module docs).
#[derive(Default)]
pub(super) struct Values {
    /// Per shell (the line, then each nested shell string): names a top-level statement
    /// assigned a plain number so far.
    scopes: Vec<HashSet<String>>,
    /// Loop variables known to hold plain numbers inside the loop being walked.
    loops: Vec<String>,
    /// Names the line assigns something that is not a plain number, anywhere.
    unknown: HashSet<String>,
    /// `declare -n` somewhere: any name may be assigned through a reference.
    nameref: bool,
    uses: Vec<Use>,
    /// Uses that are code whatever is known (command output in arithmetic, `$1`, `${!x}` of a
    /// name that is not known).
    opaque: Vec<String>,
    /// `declare -i` names: every value assigned to them is evaluated as arithmetic.
    integers: HashSet<String>,
    /// Values assigned, by name, for the integer check (`n=$x` with `declare -i n`).
    assigned: Vec<(String, String)>,
    /// Associative arrays declared at a shell's top level so far: their subscripts are
    /// strings, not arithmetic.
    assoc: HashSet<String>,
}

impl Values {
    pub(super) fn enter_shell(&mut self) {
        self.scopes.push(HashSet::new());
    }

    pub(super) fn leave_shell(&mut self) {
        self.scopes.pop();
    }

    fn known_here(&self, name: &str) -> bool {
        NUMERIC_SPECIALS.contains(&name)
            || self.loops.iter().any(|l| l == name)
            || self.scopes.last().is_some_and(|s| s.contains(name))
    }

    /// A variable assigned `value` (after quote removal; `None` when not known before the line
    /// runs). `definite`: by a statement of the shell's top level, so later statements see it.
    pub(super) fn assign(&mut self, name: &str, value: Option<&str>, definite: bool) {
        let plain = value.is_some_and(is_plain_number);
        if !plain {
            self.unknown.insert(name.to_string());
        } else if definite {
            if let Some(scope) = self.scopes.last_mut() {
                scope.insert(name.to_string());
            }
        }
        self.assigned
            .push((name.to_string(), value.unwrap_or("$?").to_string()));
    }

    pub(super) fn set_nameref(&mut self) {
        self.nameref = true;
    }

    pub(super) fn declare_integer(&mut self, name: &str) {
        self.integers.insert(name.to_string());
    }

    pub(super) fn declare_assoc(&mut self, name: &str) {
        self.assoc.insert(name.to_string());
    }

    pub(super) fn is_assoc(&self, name: &str) -> bool {
        self.assoc.contains(name)
    }

    /// Whether a word, as written, is `"${!NAME[@]}"` (or `[*]`, unquoted) for an array not
    /// declared associative: its indices, which are numbers.
    pub(super) fn indices_of_indexed_array(&self, raw: &str) -> bool {
        let inner = raw
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(raw);
        let Some(rest) = inner.strip_prefix("${!") else {
            return false;
        };
        let Some(name) = rest
            .strip_suffix("[@]}")
            .or_else(|| rest.strip_suffix("[*]}"))
        else {
            return false;
        };
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !self.is_assoc(name)
    }

    /// Loop variables known to be plain numbers while the loop is walked.
    pub(super) fn push_loop(&mut self, names: &[String]) -> usize {
        self.loops.extend(names.iter().cloned());
        names.len()
    }

    pub(super) fn pop_loop(&mut self, n: usize) {
        let keep = self.loops.len().saturating_sub(n);
        self.loops.truncate(keep);
    }

    fn use_name(&mut self, name: &str, shown: &str) {
        let known = self.known_here(name);
        self.uses.push(Use {
            name: name.to_string(),
            shown: shown.to_string(),
            known,
        });
    }

    /// Arithmetic text (`$(( … ))`, `(( … ))`, a subscript, an operand of `[[ -eq ]]`, a `let`
    /// argument): every variable whose value it evaluates. `subscript`: the text is `NAME[…]`,
    /// whose `NAME` is the array indexed, not a value evaluated.
    pub(super) fn arithmetic(&mut self, text: &str, subscript: bool) {
        // Quotes are removed before bash evaluates the text (`[[ 1 -eq 'a[i]' ]]`).
        let b: Vec<u8> = text.bytes().filter(|&c| c != b'"' && c != b'\'').collect();
        let mut i = 0;
        if subscript {
            let end = name_end(&b, 0);
            if self.is_assoc(&String::from_utf8_lossy(&b[..end])) {
                return;
            }
            i = end;
        }
        let shown = || text.chars().take(60).collect::<String>();
        while i < b.len() {
            let c = b[i];
            match c {
                b'\\' => i += 2,
                b'`' => {
                    self.opaque.push(format!(
                        "{}: arithmetic evaluates a command's output",
                        shown()
                    ));
                    i += 1;
                    while i < b.len() && b[i] != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                b'$' => match b.get(i + 1) {
                    Some(b'(') if b.get(i + 2) == Some(&b'(') => i += 3,
                    Some(b'(') => {
                        self.opaque.push(format!(
                            "{}: arithmetic evaluates a command's output",
                            shown()
                        ));
                        i = close_paren(&b, i + 1);
                    }
                    Some(b'[') => i += 2,
                    Some(b'{') => {
                        let j = i + 2;
                        match b.get(j) {
                            Some(b'#') if b.get(j + 1).is_some_and(|&n| n != b'}') => {
                                // `${#x}`: a length, a number. The subscript, if any, is read
                                // on.
                                i = name_end(&b, j + 1).max(j + 2);
                            }
                            Some(b'!') => {
                                self.opaque
                                    .push(format!("{}: indirection in arithmetic", shown()));
                                i = j + 1;
                            }
                            _ => {
                                i = self.parameter(&b, j, &shown());
                            }
                        }
                    }
                    Some(_) => i = self.parameter(&b, i + 1, &shown()),
                    None => i += 1,
                },
                b'0'..=b'9' => {
                    // A number in any base (`0x1f`, `16#ff`, `64#@_`).
                    while b.get(i).is_some_and(|x| {
                        x.is_ascii_alphanumeric() || matches!(x, b'_' | b'#' | b'@')
                    }) {
                        i += 1;
                    }
                }
                _ if c.is_ascii_alphabetic() || c == b'_' => {
                    let end = name_end(&b, i);
                    let name = String::from_utf8_lossy(&b[i..end]).into_owned();
                    // `NAME = …` (not `==`) assigns NAME without reading it.
                    let mut after = end;
                    if b.get(after) == Some(&b'[') {
                        after = close_bracket(&b, after);
                    }
                    while b.get(after).is_some_and(u8::is_ascii_whitespace) {
                        after += 1;
                    }
                    let assigns = b.get(after) == Some(&b'=') && b.get(after + 1) != Some(&b'=');
                    if !assigns {
                        self.use_name(&name, &shown());
                    }
                    i = end;
                }
                _ => i += 1,
            }
        }
    }

    /// A parameter reference at `b[at..]` (after `$` or `${`): records the use and returns
    /// where to read on.
    fn parameter(&mut self, b: &[u8], at: usize, shown: &str) -> usize {
        match b.get(at) {
            Some(&c) if c.is_ascii_alphabetic() || c == b'_' => {
                let end = name_end(b, at);
                let name = String::from_utf8_lossy(&b[at..end]).into_owned();
                self.use_name(&name, shown);
                end
            }
            Some(&c) if b"#?$!-".contains(&c) => at + 1,
            // `$0`, `$1`, `$@`, `$*`: set by whoever started the shell, or by `set --`.
            Some(&c) if c.is_ascii_digit() || c == b'@' || c == b'*' => {
                self.opaque.push(format!(
                    "{shown}: arithmetic evaluates a positional parameter"
                ));
                at + 1
            }
            _ => at,
        }
    }

    /// A `${…}` expansion outside arithmetic, as written: `${!x}` (indirection), `${x@P}`
    /// (prompt expansion) and the offset and length of `${s:off:len}` (arithmetic). Returns the
    /// variable a default assignment (`${x:=v}`, `${x=v}`) sets, with the value as written.
    pub(super) fn expansion<'t>(&mut self, raw: &'t str) -> Option<(&'t str, &'t str)> {
        let inner = raw.strip_prefix("${")?.strip_suffix('}')?;
        if let Some(rest) = inner.strip_prefix('!') {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, after) = rest.split_at(end);
            let listing = matches!(after, "@" | "*" | "[@]" | "[*]");
            if !name.is_empty() && !listing {
                self.use_name(name, raw);
            }
            return None;
        }
        if inner.starts_with('#') {
            return None;
        }
        let mut end = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        if end == 0 && inner.starts_with(['@', '*', '?', '$', '-']) {
            // `${@:x}`, `${*:x}`, `${?:x}`: the special parameters take offsets too.
            end = 1;
        }
        let name = &inner[..end];
        let mut after = &inner[end..];
        if after.starts_with('[') {
            let close = close_bracket(after.as_bytes(), 0);
            after = after.get(close..).unwrap_or("");
        }
        if name.is_empty() {
            return None;
        }
        if after.starts_with("@P") {
            self.use_name(name, raw);
        } else if let Some(range) = after.strip_prefix(':') {
            if let Some(value) = range.strip_prefix('=') {
                return Some((name, value));
            }
            if !range.starts_with(['-', '?', '+']) {
                self.arithmetic(range, false);
            }
        } else if let Some(value) = after.strip_prefix('=') {
            return Some((name, value));
        }
        None
    }

    /// The concerns' details: each use of a value that is not known to be a plain number.
    pub(super) fn finish(&self) -> Vec<String> {
        let mut out: Vec<String> = self.opaque.clone();
        for u in &self.uses {
            if self.nameref || !u.known || self.unknown.contains(&u.name) {
                out.push(format!(
                    "{}: evaluates the value of `{}` as code, and it is not known to be a plain number",
                    u.shown, u.name
                ));
            }
        }
        for (name, value) in &self.assigned {
            if self.integers.contains(name) && !is_plain_number(value) {
                out.push(format!(
                    "{name}={value}: `{name}` is an integer variable, so the value is evaluated as arithmetic"
                ));
            }
        }
        out
    }
}

fn name_end(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    i
}

/// The index just past the `)` that closes the `(` at `open` (or the end).
fn close_paren(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The index just past the `]` that closes the `[` at `open` (or the end).
fn close_bracket(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'[' => depth += 1,
            b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    b.len()
}
