//! Text made safe to show on a terminal.

/// `s` with control characters, bidirectional overrides and the characters a terminal shows
/// as nothing (or as a plain space) escaped, so that text from a command line, a file or a
/// log cannot rewrite the terminal it is shown on, fake a prompt, or look like another text
/// (`rm\u{200b} -rf` is not `rm -rf`; a tag character spells hidden words).
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters shown as nothing, or as what they are not: bidirectional controls, Unicode's
/// default-ignorable code points (zero-width spaces and joiners, the word joiner and invisible
/// operators, the byte-order mark, variation selectors, Hangul fillers, tag characters), the
/// line and paragraph separators, and every space other than the ASCII one (a no-break space
/// makes two words look like one).
fn hidden(c: char) -> bool {
    cordon_policy::surface::default_ignorable(c)
        // Not default-ignorable, but shown as a line break or as nothing: the line and
        // paragraph separators, the interlinear annotation characters.
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{fff9}'..='\u{fffb}')
        || (c.is_whitespace() && !c.is_ascii())
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn invisible_and_format_characters_are_escaped() {
        for c in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{2028}',
            '\u{2029}',
            '\u{202e}',
            '\u{2060}',
            '\u{2061}',
            '\u{2062}',
            '\u{2063}',
            '\u{2064}',
            '\u{2066}',
            '\u{feff}',
            '\u{061c}',
            '\u{00ad}',
            '\u{034f}',
            '\u{180e}',
            '\u{3164}',
            '\u{fe0f}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
            '\u{e0100}',
            '\u{00a0}',
            '\u{2003}',
            '\u{202f}',
            '\u{3000}',
        ] {
            let shown = clean(&format!("rm{c} -rf"));
            assert_eq!(
                shown,
                format!("rm{} -rf", c.escape_default()),
                "U+{:04X}",
                c as u32
            );
        }
        // What a person should see as it is stays as it is.
        for text in ["ls -la", "é…", "日本語", "naïve café", "a\tb"] {
            if text.contains('\t') {
                assert_eq!(clean(text), "a\\tb");
            } else {
                assert_eq!(clean(text), text);
            }
        }
    }
}
