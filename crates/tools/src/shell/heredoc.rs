//! Here-documents read the way bash reads them, before the line reaches tree-sitter-bash.
//!
//! tree-sitter-bash's scanner takes the delimiter word up to the next blank, so in
//! `cat <<EOF; ls⏎EOF⏎rm x⏎EOF` it reads the delimiter `EOF;`, makes `EOF⏎rm x⏎` the body and
//! never sees `rm x`, which bash runs (bash ends the word at `;` and the body at the first
//! `EOF` line). Rather than trust that scanner, [`split`] does what bash's reader does:
//! it finds each `<<WORD` / `<<-WORD` outside quotes, comments and arithmetic, takes the
//! delimiter as bash does (the word up to a metacharacter, after quote removal), and at the
//! next newline of the command text reads the pending bodies, each up to the first line equal
//! to its delimiter (leading tabs removed for `<<-`). What it returns is the line without the
//! bodies, each operator replaced by a redirection from `/dev/null` (the body is data, or an
//! unquoted one is examined on its own), so the parser sees the commands bash runs.
//!
//! Where the reader cannot be sure it reads as bash does (a here-document inside backquotes,
//! a delimiter with `$` or a backquote, `case` patterns inside `$(…)`, a body line continued
//! with a backslash), it says so ([`Unsure`]), and the caller stays strict.

/// The line as bash reads it, here-document bodies taken out.
pub(super) struct Split {
    /// The command text: every body (and its delimiter line) removed, every `<<[-]WORD`
    /// replaced by `</dev/null`.
    pub(super) text: String,
    /// Each body, in order, with whether its delimiter was quoted (a quoted one is plain
    /// data; an unquoted one is expanded like a double-quoted string).
    pub(super) bodies: Vec<(bool, String)>,
}

/// The reader cannot tell how bash reads the line's here-documents.
pub(super) struct Unsure(pub(super) &'static str);

struct Pending {
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
    /// Inside `$(…)`: a `DELIM)` line is read differently by bash versions.
    nested: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// Command text, at the top or inside `$(` (`true`) / `(` subshell.
    Cmd { subst: bool },
    /// Inside `"…"`.
    Dq,
    /// Inside `${…}`.
    Brace,
    /// Inside `$((…))` or `((…))`: `<<` is a shift.
    Arith,
}

/// Bash's metacharacters, which end a word.
fn meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// Whether the line may hold a here-document at all (the common case skips the reader).
pub(super) fn may_have(line: &str) -> bool {
    let b = line.as_bytes();
    b.windows(2)
        .enumerate()
        .any(|(i, w)| w == b"<<" && b.get(i + 2) != Some(&b'<') && (i == 0 || b[i - 1] != b'<'))
}

pub(super) fn split(line: &str) -> Result<Split, Unsure> {
    let b = line.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut bodies = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    // Contexts, with the parenthesis depth each `$(` / `((` opened at.
    let mut stack: Vec<(Ctx, i32)> = vec![(Ctx::Cmd { subst: false }, 0)];
    let mut parens: i32 = 0;
    let has_case = line.contains("case");
    let mut i = 0;
    // Whether the previous byte ends a word (a `#` here starts a comment).
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let (ctx, _) = *stack.last().unwrap_or(&(Ctx::Cmd { subst: false }, 0));
        match ctx {
            Ctx::Cmd { subst } => {
                match c {
                    b'\\' => {
                        out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
                        i += 2;
                        word_start = false;
                        continue;
                    }
                    b'\'' => {
                        let end = find(b, i + 1, b'\'').ok_or(Unsure("an unterminated quote"))?;
                        out.extend_from_slice(&b[i..=end]);
                        i = end + 1;
                        word_start = false;
                        continue;
                    }
                    b'"' => {
                        stack.push((Ctx::Dq, parens));
                    }
                    b'`' => {
                        let end = backquote_end(b, i)?;
                        if line[i..end].contains("<<") {
                            return Err(Unsure("a here-document inside backquotes"));
                        }
                        out.extend_from_slice(&b[i..end]);
                        i = end;
                        word_start = false;
                        continue;
                    }
                    b'$' => {
                        if let Some(n) = dollar(b, i, &mut stack, &mut parens, has_case)? {
                            out.extend_from_slice(&b[i..n]);
                            i = n;
                            word_start = false;
                            continue;
                        }
                    }
                    b'#' if word_start => {
                        let end = find(b, i, b'\n').unwrap_or(b.len());
                        out.extend_from_slice(&b[i..end]);
                        i = end;
                        continue;
                    }
                    b'(' => {
                        if b.get(i + 1) == Some(&b'(') && word_start {
                            parens += 2;
                            stack.push((Ctx::Arith, parens - 2));
                            out.extend_from_slice(b"((");
                            i += 2;
                            continue;
                        }
                        parens += 1;
                    }
                    b')' => {
                        parens -= 1;
                        if parens < 0 {
                            // A case pattern's `)` at the top (inside `$(…)` the reader
                            // already gave up).
                            if !has_case {
                                return Err(Unsure("a `)` without its `(`"));
                            }
                            parens = 0;
                        }
                        if subst && stack.last().is_some_and(|&(_, at)| at == parens) {
                            stack.pop();
                        }
                    }
                    b'<' if b.get(i + 1) == Some(&b'<') => {
                        if b.get(i + 2) == Some(&b'<') {
                            out.extend_from_slice(b"<<<");
                            i += 3;
                            word_start = true;
                            continue;
                        }
                        let strip_tabs = b.get(i + 2) == Some(&b'-');
                        let mut j = i + if strip_tabs { 3 } else { 2 };
                        while matches!(b.get(j), Some(b' ' | b'\t')) {
                            j += 1;
                        }
                        let (delimiter, quoted, end) = delimiter_word(b, j)?;
                        pending.push(Pending {
                            delimiter,
                            quoted,
                            strip_tabs,
                            nested: subst || stack.len() > 1,
                        });
                        out.extend_from_slice(b"</dev/null");
                        i = end;
                        word_start = true;
                        continue;
                    }
                    b'\n' if !pending.is_empty() => {
                        out.push(b'\n');
                        i = read_bodies(line, i + 1, &mut pending, &mut bodies)?;
                        word_start = true;
                        continue;
                    }
                    _ => {}
                }
                word_start = meta(c);
                out.push(c);
                i += 1;
            }
            Ctx::Dq | Ctx::Brace => {
                match c {
                    b'\\' => {
                        out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
                        i += 2;
                        continue;
                    }
                    b'"' if ctx == Ctx::Dq => {
                        stack.pop();
                    }
                    b'"' => stack.push((Ctx::Dq, parens)),
                    b'\'' if ctx == Ctx::Brace => {
                        let end = find(b, i + 1, b'\'').ok_or(Unsure("an unterminated quote"))?;
                        out.extend_from_slice(&b[i..=end]);
                        i = end + 1;
                        continue;
                    }
                    b'}' if ctx == Ctx::Brace => {
                        stack.pop();
                    }
                    b'`' => {
                        let end = backquote_end(b, i)?;
                        if line[i..end].contains("<<") {
                            return Err(Unsure("a here-document inside backquotes"));
                        }
                        out.extend_from_slice(&b[i..end]);
                        i = end;
                        continue;
                    }
                    b'$' => {
                        if let Some(n) = dollar(b, i, &mut stack, &mut parens, has_case)? {
                            out.extend_from_slice(&b[i..n]);
                            i = n;
                            continue;
                        }
                    }
                    _ => {}
                }
                out.push(c);
                i += 1;
                word_start = false;
            }
            Ctx::Arith => {
                match c {
                    b'(' => parens += 1,
                    b')' => {
                        parens -= 1;
                        if stack.last().is_some_and(|&(_, at)| at == parens) {
                            stack.pop();
                        }
                        if parens < 0 {
                            return Err(Unsure("a `)` without its `(`"));
                        }
                    }
                    b'$' => {
                        if let Some(n) = dollar(b, i, &mut stack, &mut parens, has_case)? {
                            out.extend_from_slice(&b[i..n]);
                            i = n;
                            continue;
                        }
                    }
                    b'`' => {
                        let end = backquote_end(b, i)?;
                        if line[i..end].contains("<<") {
                            return Err(Unsure("a here-document inside backquotes"));
                        }
                        out.extend_from_slice(&b[i..end]);
                        i = end;
                        continue;
                    }
                    b'\n' if !pending.is_empty() => {
                        return Err(Unsure("a here-document pending inside arithmetic"));
                    }
                    _ => {}
                }
                out.push(c);
                i += 1;
            }
        }
    }
    if !pending.is_empty() {
        // No newline after the operator: bash reads an empty body to the end of input.
        for p in pending.drain(..) {
            bodies.push((p.quoted, String::new()));
        }
    }
    let text = String::from_utf8(out).map_err(|_| Unsure("text that is not UTF-8"))?;
    Ok(Split { text, bodies })
}

fn find(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&x| x == c)
        .map(|p| from + p)
}

/// The index after the backquoted text starting at `i`.
fn backquote_end(b: &[u8], i: usize) -> Result<usize, Unsure> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => return Ok(j + 1),
            _ => j += 1,
        }
    }
    Err(Unsure("an unterminated backquote"))
}

/// At a `$`: enters `$(`, `$((` or `${`, or skips `$'…'`; returns where to continue when it
/// consumed text itself, `None` when the `$` is an ordinary character.
fn dollar(
    b: &[u8],
    i: usize,
    stack: &mut Vec<(Ctx, i32)>,
    parens: &mut i32,
    has_case: bool,
) -> Result<Option<usize>, Unsure> {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'('), Some(b'(')) => {
            stack.push((Ctx::Arith, *parens));
            *parens += 2;
            Ok(Some(i + 3))
        }
        (Some(b'('), _) => {
            if has_case {
                // A case pattern's `)` inside `$(…)` cannot be told from the end without
                // parsing the command.
                return Err(Unsure("`case` inside a command substitution"));
            }
            stack.push((Ctx::Cmd { subst: true }, *parens));
            *parens += 1;
            Ok(Some(i + 2))
        }
        (Some(b'{'), _) => {
            stack.push((Ctx::Brace, *parens));
            Ok(Some(i + 2))
        }
        // bash's old arithmetic `$[…]`: `<<` is a shift there.
        (Some(b'['), _) => {
            let mut depth = 0usize;
            for (k, &c) in b.iter().enumerate().skip(i + 1) {
                match c {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            if b[i..k].windows(2).any(|w| w == b"$(") || b[i..k].contains(&b'`') {
                                return Err(Unsure("a command substitution inside `$[…]`"));
                            }
                            return Ok(Some(k + 1));
                        }
                    }
                    _ => {}
                }
            }
            Err(Unsure("an unterminated `$[`"))
        }
        (Some(b'\''), _) => {
            let mut j = i + 2;
            while j < b.len() {
                match b[j] {
                    b'\\' => j += 2,
                    b'\'' => return Ok(Some(j + 1)),
                    _ => j += 1,
                }
            }
            Err(Unsure("an unterminated quote"))
        }
        _ => Ok(None),
    }
}

/// The delimiter word at `j`: its text after quote removal, whether any of it was quoted,
/// and where it ends.
fn delimiter_word(b: &[u8], mut j: usize) -> Result<(String, bool, usize), Unsure> {
    let mut word = Vec::new();
    let mut quoted = false;
    while j < b.len() && !meta(b[j]) {
        match b[j] {
            b'\\' => {
                quoted = true;
                if let Some(&n) = b.get(j + 1) {
                    if n != b'\n' {
                        word.push(n);
                    }
                }
                j += 2;
            }
            b'\'' => {
                quoted = true;
                let end = find(b, j + 1, b'\'').ok_or(Unsure("an unterminated quote"))?;
                word.extend_from_slice(&b[j + 1..end]);
                j = end + 1;
            }
            b'"' => {
                quoted = true;
                let mut k = j + 1;
                loop {
                    match b.get(k) {
                        None => return Err(Unsure("an unterminated quote")),
                        Some(b'"') => break,
                        Some(b'\\') if matches!(b.get(k + 1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                            word.push(b[k + 1]);
                            k += 2;
                        }
                        Some(b'$' | b'`') => {
                            return Err(Unsure("a here-document delimiter with `$` or a backquote"))
                        }
                        Some(&x) => {
                            word.push(x);
                            k += 1;
                        }
                    }
                }
                j = k + 1;
            }
            b'$' | b'`' => return Err(Unsure("a here-document delimiter with `$` or a backquote")),
            x => {
                word.push(x);
                j += 1;
            }
        }
    }
    if word.is_empty() && !quoted {
        return Err(Unsure("a here-document operator without a delimiter"));
    }
    let word = String::from_utf8(word).map_err(|_| Unsure("text that is not UTF-8"))?;
    Ok((word, quoted, j.min(b.len())))
}

/// Reads the pending bodies from `start` (just after a newline); returns where the command
/// text goes on.
fn read_bodies(
    line: &str,
    mut start: usize,
    pending: &mut Vec<Pending>,
    bodies: &mut Vec<(bool, String)>,
) -> Result<usize, Unsure> {
    for p in pending.drain(..) {
        let mut body = String::new();
        loop {
            if start >= line.len() {
                // bash: "here-document delimited by end-of-file": the rest is the body.
                break;
            }
            let end = line[start..].find('\n').map_or(line.len(), |e| start + e);
            let text = &line[start..end];
            let next = (end + 1).min(line.len());
            let cmp = if p.strip_tabs {
                text.trim_start_matches('\t')
            } else {
                text
            };
            if cmp == p.delimiter {
                start = next;
                break;
            }
            if p.nested
                && cmp.starts_with(&p.delimiter)
                && cmp[p.delimiter.len()..].starts_with(')')
            {
                return Err(Unsure(
                    "a here-document in `$(…)` ended by its delimiter and `)` on one line",
                ));
            }
            if !p.quoted && text.ends_with('\\') {
                return Err(Unsure("a here-document line continued with a backslash"));
            }
            body.push_str(text);
            body.push('\n');
            start = next;
        }
        bodies.push((p.quoted, body));
    }
    Ok(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &str) -> String {
        match split(line) {
            Ok(s) => s.text,
            Err(Unsure(why)) => format!("UNSURE: {why}"),
        }
    }

    #[test]
    fn bodies_end_where_bash_ends_them() {
        assert_eq!(
            text("cat <<EOF; ls\nEOF\nrm x\nEOF"),
            "cat </dev/null; ls\nrm x\nEOF"
        );
        assert_eq!(text("cat <<EOF;rm x\nEOF"), "cat </dev/null;rm x\n");
        assert_eq!(text("cat <<EOF|rm x\nhi\nEOF\n"), "cat </dev/null|rm x\n");
        assert_eq!(
            text("cat <<-EOF\n\thi\n\tEOF\nrm x"),
            "cat </dev/null\nrm x"
        );
        assert_eq!(
            text("cat <<'EOF'\nEOF x\nEOF\nrm y"),
            "cat </dev/null\nrm y"
        );
        assert_eq!(
            text("cat <<A <<'B'; ls\na\nA\nb\nB\nrm z"),
            "cat </dev/null </dev/null; ls\nrm z"
        );
        assert_eq!(text("cat <<\"E F\"\nE F\nrm q"), "cat </dev/null\nrm q");
        assert_eq!(text("cat <<E\\OF\nEOF\nrm q"), "cat </dev/null\nrm q");
        assert_eq!(
            text("echo $(cat <<EOF\nrm x\nEOF\n); rm y"),
            "echo $(cat </dev/null\n); rm y"
        );
        // Not here-documents.
        assert_eq!(
            text("echo $((1<<2)); ((x<<=1))"),
            "echo $((1<<2)); ((x<<=1))"
        );
        assert_eq!(text("echo $[1<<2]\nrm x"), "echo $[1<<2]\nrm x");
        assert_eq!(
            text("for ((i=1; i<<2; i++)); do :; done"),
            "for ((i=1; i<<2; i++)); do :; done"
        );
        assert_eq!(text("cat <<<x; echo '<<EOF'"), "cat <<<x; echo '<<EOF'");
        assert_eq!(text("echo \"<<EOF\" # <<X"), "echo \"<<EOF\" # <<X");
        // The body runs to the end when no line ends it.
        let s = split("cat <<EOF\nrm x").ok().unwrap();
        assert_eq!(
            (s.text.as_str(), s.bodies[0].1.as_str()),
            ("cat </dev/null\n", "rm x\n")
        );
    }

    #[test]
    fn what_the_reader_cannot_follow_is_unsure() {
        for line in [
            "echo `cat <<EOF\nx\nEOF\n`",
            "cat <<$x\nx\n$x",
            "cat <<EOF\na\\\nEOF\nEOF",
            "x=$(case a in a) cat <<EOF;; esac\nEOF\n)",
            "echo $(cat <<EOF\nx\nEOF)",
        ] {
            assert!(split(line).is_err(), "{line:?}");
        }
    }
}
