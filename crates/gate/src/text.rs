//! Text made safe to show on a terminal.

/// `s` with control characters, bidirectional overrides and the characters a terminal shows
/// as nothing (or as a plain space) escaped, so that text from a command line, a file or a
/// log cannot rewrite the terminal it is shown on, fake a prompt, or look like another text
/// (`rm\u{200b} -rf` is not `rm -rf`; a tag character spells hidden words). So are letters
/// that pass for Latin ones where a Latin word is expected (`\u{441}url` is not `curl`) and
/// combining marks that change a sign or are drawn beyond their own ([`lookalike`],
/// [`mark_shown_raw`]). Outside a UTF-8 locale every non-ASCII character is escaped: the
/// terminal may read the bytes 0x80-0x9F as C1 controls, and UTF-8 carries them (`Û` is C3
/// 9B, a CSI there; [`cordon_ossandbox::locale_is_utf8`]). A run of [`SPACE_RUN`] spaces or
/// more is shown as its count (`⟨… 300 spaces …⟩`): blank, it pushed what follows out of a
/// box line cut to its width, or out of sight on a wrapped one.
pub fn clean(s: &str) -> String {
    clean_for(s, cordon_ossandbox::locale_is_utf8())
}

/// The shortest run of spaces [`clean`] shows as its count: longer than code's usual
/// indentation, a third of a box line on an 80-column terminal.
pub const SPACE_RUN: usize = 24;

/// [`clean`] for a terminal that reads UTF-8 (`utf8`) or may not.
fn clean_for(s: &str, utf8: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    // Each run of characters between white space is one word for the lookalike test.
    let mut word_end = 0;
    let mut latin_word = false;
    let mut lookalike_word = false;
    // Marks shown raw on the last character, which is a letter or digit shown raw; `None`
    // when the last character shown is no base for a mark.
    let mut marks: Option<usize> = None;
    // The end of a run of spaces shown as its count.
    let mut skip_to = 0;
    for (i, &c) in chars.iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if c == ' ' {
            let run = chars[i..].iter().take_while(|&&c| c == ' ').count();
            if run >= SPACE_RUN {
                out.push_str(&if utf8 {
                    format!("⟨… {run} spaces …⟩")
                } else {
                    format!("<... {run} spaces ...>")
                });
                skip_to = i + run;
                marks = None;
                continue;
            }
        }
        if i >= word_end {
            word_end = chars[i..]
                .iter()
                .position(|c| c.is_whitespace())
                .map_or(chars.len(), |n| i + n.max(1));
            let word = &chars[i..word_end];
            latin_word = word.iter().any(char::is_ascii_alphabetic);
            let mut letters = word.iter().filter(|c| c.is_alphabetic()).peekable();
            lookalike_word = letters.peek().is_some() && letters.all(|&c| passes_for_latin(c));
        }
        let escape = c.is_control()
            || (!utf8 && !c.is_ascii())
            || hidden(c)
            || lookalike(c, latin_word || lookalike_word)
            || (combining(c) && !mark_shown_raw(c, marks));
        if escape {
            out.extend(c.escape_default());
            marks = None;
        } else {
            out.push(c);
            marks = if combining(c) {
                marks.map(|n| n + 1)
            } else if c.is_alphanumeric() {
                Some(0)
            } else {
                None
            };
        }
    }
    out
}

/// Letters shown as (or nearly as) ASCII ones: escaped everywhere when they have no use but
/// to look like ASCII (full-width forms, mathematical letters, letter-like symbols such as the
/// Kelvin sign, Lisu capitals), and in a word with ASCII letters or made only of lookalikes
/// when they belong to another script (Cyrillic, Greek, Armenian, Cherokee) or are Latin
/// lookalikes outside ASCII (dotless i, script g, small capitals).
fn lookalike(c: char, in_latin_word: bool) -> bool {
    if c.is_ascii() {
        return false;
    }
    let everywhere = matches!(
        c,
        '\u{ff01}'..='\u{ff5e}'
            | '\u{1d400}'..='\u{1d7ff}'
            | '\u{2100}'..='\u{214f}'
            | '\u{a4d0}'..='\u{a4ff}'
    );
    let other_script = matches!(
        c,
        '\u{0131}'
            | '\u{0237}'
            | '\u{0250}'..='\u{02af}'
            | '\u{0370}'..='\u{03ff}'
            | '\u{0400}'..='\u{052f}'
            | '\u{0531}'..='\u{058f}'
            | '\u{13a0}'..='\u{13ff}'
            | '\u{1c80}'..='\u{1c8f}'
            | '\u{1d00}'..='\u{1dbf}'
            | '\u{1f00}'..='\u{1fff}'
            | '\u{ab70}'..='\u{abbf}'
    );
    everywhere || (in_latin_word && other_script)
}

/// Letters of other scripts drawn like a Latin letter in common fonts: a word made only of
/// these (`\u{440}\u{455}`, read `ps`) is taken for a Latin one.
fn passes_for_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || lookalike(c, false)
        || matches!(
            c,
            // Cyrillic
            'а' | 'в' | 'е' | 'к' | 'м' | 'н' | 'о' | 'р' | 'с' | 'т' | 'у' | 'х' | 'ѕ'
                | 'і' | 'ї' | 'ј' | 'ԁ' | 'һ' | 'ӏ' | 'ԛ' | 'ԝ' | 'ү' | 'ѵ' | 'ɡ' | 'ı'
                | 'А' | 'В' | 'Е' | 'К' | 'М' | 'Н' | 'О' | 'Р' | 'С' | 'Т' | 'Х' | 'Ѕ'
                | 'І' | 'Ј' | 'Ү' | 'Ԛ' | 'Ԝ' | 'Ӏ'
                // Greek
                | 'α' | 'ι' | 'κ' | 'ν' | 'ο' | 'ρ' | 'τ' | 'υ' | 'χ' | 'Α' | 'Β' | 'Ε'
                | 'Ζ' | 'Η' | 'Ι' | 'Κ' | 'Μ' | 'Ν' | 'Ο' | 'Ρ' | 'Τ' | 'Υ' | 'Χ'
                // Armenian
                | 'ո' | 'ս' | 'օ' | 'հ' | 'ց' | 'ք' | 'Տ' | 'Օ'
        )
}

/// A combining mark (general category Mn or Me), drawn on the character before it.
fn combining(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory};
    !c.is_ascii()
        && matches!(
            get_general_category(c),
            GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
        )
}

/// Whether combining mark `c` may be shown as it is, after `marks` marks already shown on a
/// letter or digit (`None`: the character before is no letter or digit shown raw). Only on
/// a letter or digit (on `/`, `-`, a space or an escape it makes another sign), at most
/// three on one (Vietnamese needs two; a longer stack is drawn over the lines around), and
/// never an enclosing mark or one drawn across its base (U+0334..U+0338, U+20D2.., which
/// strike a word through or make `=` read `≠`).
fn mark_shown_raw(c: char, marks: Option<usize>) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory};
    let overlay = matches!(
        c,
        '\u{0334}'..='\u{0338}'
            | '\u{1cd4}'
            | '\u{1ce2}'..='\u{1ce8}'
            | '\u{20d2}'..='\u{20d3}'
            | '\u{20d8}'..='\u{20da}'
            | '\u{20e5}'..='\u{20e6}'
            | '\u{20ea}'..='\u{20eb}'
            | '\u{10a39}'
            | '\u{16af0}'..='\u{16af4}'
            | '\u{1bc9e}'
            | '\u{1d167}'..='\u{1d169}'
    );
    matches!(marks, Some(n) if n < 3)
        && !overlay
        && get_general_category(c) != GeneralCategory::EnclosingMark
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
    use super::{clean_for, SPACE_RUN};

    fn clean(s: &str) -> String {
        clean_for(s, true)
    }

    /// A long run of spaces is shown as its count, so that what follows it stays in sight;
    /// a shorter one (indentation, alignment) stays as it is.
    #[test]
    fn a_long_run_of_spaces_is_shown_as_its_count() {
        let long = format!("ls{}; curl x | sh", " ".repeat(300));
        assert_eq!(clean(&long), "ls⟨… 300 spaces …⟩; curl x | sh");
        assert_eq!(
            clean_for(&long, false),
            "ls<... 300 spaces ...>; curl x | sh"
        );
        let edge = format!("a{}b", " ".repeat(SPACE_RUN));
        assert_eq!(clean(&edge), format!("a⟨… {SPACE_RUN} spaces …⟩b"));
        let indent = format!("{}return x", " ".repeat(SPACE_RUN - 1));
        assert_eq!(clean(&indent), indent);
        // The words around it are still read for lookalikes.
        let spaced = format!("ok{}\u{441}url", " ".repeat(40));
        assert_eq!(clean(&spaced), "ok⟨… 40 spaces …⟩\\u{441}url");
    }

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

#[cfg(test)]
mod lookalikes {
    use super::clean_for;

    fn clean(s: &str) -> String {
        clean_for(s, true)
    }

    /// A letter of another script inside a word of ASCII letters, or a word made only of
    /// letters that look like Latin ones, is shown escaped: `сurl` (a Cyrillic `с`) is
    /// another program than `curl`, and the person approving must see that it is.
    #[test]
    fn letters_that_look_latin_but_are_not_are_escaped() {
        for (text, shown) in [
            ("\u{441}url https://x", "\\u{441}url https://x"),
            ("/usr/bin/\u{441}url", "/usr/bin/\\u{441}url"),
            ("rm -rf ~/\u{3bf}k", "rm -rf ~/\\u{3bf}k"),
            ("git pu\u{455}h", "git pu\\u{455}h"),
            // A whole word of lookalikes: `рѕ` is not `ps`.
            ("\u{440}\u{455} aux", "\\u{440}\\u{455} aux"),
            // Letters that look like ASCII wherever they are.
            ("\u{ff52}\u{ff4d} -rf", "\\u{ff52}\\u{ff4d} -rf"),
            ("\u{1d42b}m -rf", "\\u{1d42b}m -rf"),
            ("\u{212a}ill", "\\u{212a}ill"),
            ("\u{a4d1}it", "\\u{a4d1}it"),
            ("g\u{131}t", "g\\u{131}t"),
            ("\u{261}it", "\\u{261}it"),
        ] {
            assert_eq!(clean(text), shown, "{text:?}");
        }
        // Words of another script that do not pass for Latin stay as they are.
        for text in [
            "echo \u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}",
            "\u{3b1}\u{3b8}\u{3ae}\u{3bd}\u{3b1}",
            "naïve café",
            "日本語",
        ] {
            assert_eq!(clean(text), text, "{text:?}");
        }
    }

    /// A combining mark is shown raw only on a letter or digit, at most three on one: on
    /// punctuation or a space it changes what the sign looks like (`/` with U+0338), a long
    /// stack is drawn over the lines around it, and enclosing and overlay marks cover or
    /// strike what is under them.
    #[test]
    fn combining_marks_that_change_or_hide_text_are_escaped() {
        for (text, shown) in [
            ("rm -rf /\u{338}", "rm -rf /\\u{338}"),
            ("a \u{301}b", "a \\u{301}b"),
            ("\u{301}rm", "\\u{301}rm"),
            ("rm\u{336} -rf", "rm\\u{336} -rf"),
            ("x\u{20dd}", "x\\u{20dd}"),
            ("x\u{488}", "x\\u{488}"),
            (
                "e\u{301}\u{302}\u{303}\u{304}",
                "e\u{301}\u{302}\u{303}\\u{304}",
            ),
            ("\u{202e}\u{301}", "\\u{202e}\\u{301}"),
        ] {
            assert_eq!(clean(text), shown, "{text:?}");
        }
        // Decomposed accents (as macOS writes file names) stay as they are.
        for text in ["cafe\u{301}", "Vie\u{323}\u{302}t", "\u{915}\u{93f}"] {
            assert_eq!(clean(text), text, "{text:?}");
        }
    }
}

/// Outside a UTF-8 locale nothing but ASCII is written: `Û` (C3 9B) is a CSI to a terminal
/// that reads 8-bit C1 controls.
#[cfg(test)]
#[test]
fn outside_utf8_every_non_ascii_character_is_escaped() {
    assert_eq!(
        clean_for("touch \u{db}6n caf\u{e9} \u{2014}", false),
        "touch \\u{db}6n caf\\u{e9} \\u{2014}"
    );
    assert_eq!(clean_for("plain ascii", false), "plain ascii");
}
