//! Text made safe to show on a terminal.

/// `s` with control characters and bidirectional overrides escaped, so that text from a
/// command line, a file or a log cannot rewrite the terminal it is shown on (or fake a
/// prompt).
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
