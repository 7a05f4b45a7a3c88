//! What the command prints to the operator's terminal: drawing passes, control does not.
//!
//! The command is the adversary, and a terminal obeys what it is sent. Relayed unchanged, the
//! command's output could set the operator's clipboard (OSC 52, then pasted as a command), ask
//! the terminal a question whose answer the terminal types back as input (DSR `CSI 6 n`, DA,
//! DECRQSS, XTGETTCAP, window and colour reports: an answer that arrives after the run goes to
//! the operator's shell as typed text), show one link and open another (OSC 8), retitle the
//! window, reach tmux behind its back (`DCS tmux;`), or leave the terminal in a mode that acts
//! after the run (mouse or focus reporting that types events into the shell, a keyboard
//! protocol, a scroll region, insert mode, line-drawing characters).
//!
//! So the relay's output into a terminal goes through [`Filter`]: a streaming parser (the
//! `anstyle-parse` crate, the state machine of vt100.net's DEC parser that `vte` implements)
//! whose state survives from one read to the next, in memory of a fixed size whatever the
//! command prints (an OSC string is cut at 1 KiB), and an allow-list over what it parses. What
//! passes is written again from the parsed form (a sequence the parser did not understand
//! whole cannot pass by accident); everything else is dropped:
//!
//! ```text
//!  passes                                      dropped
//!  text (UTF-8), TAB LF CR BS BEL              other C0 (SO/SI shift charsets), C1 in any form
//!  CSI A-M P S T X Z @ ` a d e f (J: 0-2 only)  CSI 3 J (erases the scrollback), queries
//!  CSI m (SGR), CSI r, CSI s and u (no params)  (c n t x $p ? u …), every other CSI, any CSI
//!  CSI 4 h/l (insert mode)                      with an intermediate or a < = > marker,
//!  CSI ? 1 7 12 25 47 1047 1048 1049 2004 h/l   other ANSI modes (CSI 12 l: local echo),
//!  ESC 7 8 = > M D E, ESC ( B, ESC ( 0          mouse 1000-1016, focus 1004, other DEC modes,
//!                                              every OSC (titles, OSC 8, 52, colours),
//!                                              DCS, SOS, PM, APC, other ESC sequences
//! ```
//!
//! Full-screen programs draw with what passes (the real less and vim are tested through it). A
//! sequence cut by the end of the run is dropped whole: nothing half-sent. When the run ends,
//! [`Filter::finish`] undoes what the command left on: alternate screen, hidden cursor, colours,
//! application keypad and cursor keys, autowrap off, insert mode, line-drawing set, scroll
//! region, bracketed paste (on; a shell turns it off while it runs a command); then it gives
//! cordon's next lines a clean place (a new line if the command ended mid-line, and the screen
//! below erased if it moved the cursor up or to a place of its choosing), so that they neither
//! continue the command's last line nor sit among its text.
//!
//! Two things are changed rather than passed or dropped: conceal (SGR 8) is left out of an SGR,
//! since hidden text is still copied with what the operator sees; and outside a UTF-8 locale the
//! bytes 0x80-0x9F are taken out of everything sent, since such a terminal may read them as C1
//! controls and valid UTF-8 carries them.
//!
//! Only a terminal gets this: a file, a pipe or a socket gets the bytes exactly as written
//! (`cordon exec -- cmd | cat` is the way to send them raw to a terminal, knowingly).

use anstyle_parse::{Params, Parser, Perform};

/// Filters one stream of output bound for a terminal.
#[derive(Default)]
pub(crate) struct Filter {
    parser: Parser,
    /// The parser is between sequences and characters: a plain byte can be copied as is.
    ground: bool,
    left: Left,
    /// The terminal may read bytes 0x80-0x9F as C1 controls (CSI, OSC, DCS): the locale is
    /// not UTF-8 ([`crate::locale_is_utf8`]). Valid UTF-8 then carries them (`Û` is C3 9B, a CSI to such
    /// a terminal), so they are taken out of everything sent.
    eight_bit: bool,
}

/// What the command turned on that would outlive its run.
#[derive(Default)]
struct Left {
    /// DEC private modes now the opposite of a shell's (the mode numbers below).
    modes: Vec<u16>,
    sgr: bool,
    keypad: bool,
    /// Insert mode (IRM, `CSI 4 h`: terminfo's `smir`).
    insert: bool,
    line_drawing: bool,
    scroll_region: bool,
    /// Where the cursor is, as far as cordon's next line is concerned.
    cursor: Cursor,
    /// The operator's screen's [`Cursor`] while the alternate screen (1049) is shown, and
    /// whether the cursor that leaving it restores was saved again meanwhile (`ESC 7`).
    main: Option<(Cursor, bool)>,
}

/// Where output leaves the cursor, for what cordon prints after the run: its lines must start
/// at column 0 of a line with nothing of the command's at or below it, or they read as part of
/// the command's text (and the command's as part of cordon's).
#[derive(Clone, Copy)]
struct Cursor {
    /// At column 0 of a line below everything drawn: after CR LF with no move up.
    fresh: bool,
    /// At column 0 (after a CR).
    col0: bool,
    /// Moved up, restored, or scrolled down at some time: the cursor may be on or above
    /// what was drawn, so that what follows must erase below it.
    dirty: bool,
}

impl Default for Cursor {
    /// The run starts where the operator pressed Enter: column 0 of a line nothing is below.
    fn default() -> Cursor {
        Cursor {
            fresh: true,
            col0: true,
            dirty: false,
        }
    }
}

impl Cursor {
    /// After text, TAB, BS, or a move within or down the screen.
    fn moved(&mut self) {
        self.fresh = false;
        self.col0 = false;
    }

    /// After a move up, or to a place the command chose (a position, a restored cursor).
    fn moved_up(&mut self) {
        self.moved();
        self.dirty = true;
    }

    fn byte(&mut self, b: u8) {
        match b {
            b'\r' => self.col0 = true,
            // LF keeps the column: on a fresh line only after CR (the pty's ONLCR makes each
            // LF a CR LF; with it off, LF alone is no new line at column 0).
            b'\n' => self.fresh = self.col0,
            _ => self.moved(),
        }
    }

    /// After plain bytes (printable ASCII, TAB, CR, LF): only those after the last printable
    /// one or TAB matter.
    fn plain(&mut self, bytes: &[u8]) {
        let from = match bytes.iter().rposition(|&b| b != b'\r' && b != b'\n') {
            Some(p) => {
                self.moved();
                p + 1
            }
            None => 0,
        };
        for &b in &bytes[from..] {
            self.byte(b);
        }
    }
}

impl Left {
    /// The cursor was saved (`ESC 7`, `CSI s`, `?1048h`): on the alternate screen, that is
    /// where leaving it will put the operator's cursor.
    fn saved(&mut self) {
        if let Some((_, again)) = &mut self.main {
            *again = true;
        }
    }

    /// Leaving the alternate screen (1049): the operator's screen's cursor is back.
    fn leave_alternate(&mut self) {
        match self.main.take() {
            Some((c, again)) => {
                self.cursor = c;
                if again {
                    self.cursor.moved_up();
                }
            }
            // Not entered here: the cursor restored is one the command saved.
            None => self.cursor.moved_up(),
        }
    }
}

/// DEC private modes that pass, each with the state a shell's prompt expects (`true`: set),
/// which [`Filter::finish`] puts back. 1: application cursor keys; 7: autowrap; 25: cursor
/// shown; 47, 1047, 1049: the alternate screen; 2004: bracketed paste (a shell turns it off
/// while a command runs, on at its prompt). 12 (a blinking cursor, in terminfo's `cnorm`) and
/// 1048 (saves the cursor) change nothing that acts later: not undone.
const MODES: [(u16, Option<bool>); 9] = [
    (1, Some(false)),
    (7, Some(true)),
    (12, None),
    (25, Some(true)),
    (47, Some(false)),
    (1047, Some(false)),
    (1048, None),
    (1049, Some(false)),
    (2004, Some(false)),
];

/// CSI finals that draw or move and report nothing (with no marker and no intermediate).
fn draws(final_byte: u8) -> bool {
    matches!(
        final_byte,
        b'A'..=b'M'
            | b'P'
            | b'S'
            | b'T'
            | b'X'
            | b'Z'
            | b'@'
            | b'`'
            | b'a'
            | b'd'
            | b'e'
            | b'f'
            | b'm'
            | b'r'
            | b's'
            | b'u'
    )
}

impl Filter {
    /// A filter for a UTF-8 terminal.
    pub(crate) fn new() -> Filter {
        Filter {
            ground: true,
            ..Filter::default()
        }
    }

    /// A filter for the terminal of cordon's locale ([`crate::locale_is_utf8`]).
    pub(crate) fn for_locale() -> Filter {
        Filter {
            eight_bit: !crate::locale_is_utf8(),
            ..Filter::new()
        }
    }

    /// Appends to `out` what of `input` may reach the terminal.
    pub(crate) fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        self.feed_utf8(input, out);
        if self.eight_bit {
            let mut at = start;
            for k in start..out.len() {
                if !(0x80..=0x9f).contains(&out[k]) {
                    out[at] = out[k];
                    at += 1;
                }
            }
            out.truncate(at);
        }
    }

    fn feed_utf8(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut i = 0;
        while i < input.len() {
            if self.ground {
                // Most output is plain text: copied without a call per byte. In the ground
                // state the parser would print or execute these and stay there.
                let start = i;
                while i < input.len() && plain(input[i]) {
                    i += 1;
                }
                out.extend_from_slice(&input[start..i]);
                self.left.cursor.plain(&input[start..i]);
                if i == input.len() {
                    break;
                }
            }
            let b = input[i];
            i += 1;
            let mut sink = Sink {
                out,
                left: &mut self.left,
                ground: false,
            };
            self.parser.advance(&mut sink, b);
            // Back in the ground state after a character or a whole sequence; a C0 control
            // other than ESC leaves the ground state as it was.
            self.ground = sink.ground || (self.ground && b < 0x80 && b != 0x1b);
        }
    }

    /// The sequences that undo what the command left on (empty if nothing); the filter's
    /// unfinished sequence, if any, is dropped.
    pub(crate) fn finish(&self) -> Vec<u8> {
        let l = &self.left;
        let mut out = Vec::new();
        let mut cursor = l.cursor;
        if l.scroll_region {
            // DECSTBM homes the cursor: saved and restored around it.
            out.extend_from_slice(b"\x1b7\x1b[r\x1b8");
        }
        // Leaving the alternate screen first, so what follows acts on the operator's screen.
        let mut modes = l.modes.clone();
        modes.sort_by_key(|m| !matches!(m, 47 | 1047 | 1049));
        for m in modes {
            if let Some(&(_, Some(set))) = MODES.iter().find(|(n, _)| *n == m) {
                out.extend_from_slice(
                    format!("\x1b[?{m}{}", if set { 'h' } else { 'l' }).as_bytes(),
                );
                if m == 1049 {
                    let mut left = Left {
                        main: l.main,
                        ..Left::default()
                    };
                    left.leave_alternate();
                    cursor = left.cursor;
                }
            }
        }
        if l.insert {
            out.extend_from_slice(b"\x1b[4l");
        }
        if l.sgr {
            out.extend_from_slice(b"\x1b[m");
        }
        if l.line_drawing {
            out.extend_from_slice(b"\x1b(B");
        }
        if l.keypad {
            out.extend_from_slice(b"\x1b>");
        }
        // Last, after the colours are reset: an erase paints with the current background.
        if cursor.dirty {
            out.extend_from_slice(b"\r\n\x1b[J");
        } else if !cursor.fresh {
            out.extend_from_slice(b"\r\n");
        }
        out
    }
}

/// Bytes the ground state prints (ASCII) or executes harmlessly (TAB, LF, CR).
fn plain(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r')
}

struct Sink<'a> {
    out: &'a mut Vec<u8>,
    left: &'a mut Left,
    /// Set by a callback after which the parser is in the ground state.
    ground: bool,
}

impl Left {
    fn mode(&mut self, m: u16, set: bool) {
        match (m, set) {
            (1049, true) if self.main.is_none() => {
                self.main = Some((self.cursor, false));
                self.cursor = Cursor::default();
            }
            (1049, false) => self.leave_alternate(),
            (1048, true) => self.saved(),
            // 47 and 1047 keep the alternate screen's cursor when they leave it.
            (1048, false) | (47 | 1047, _) => {
                self.cursor.moved_up();
                if let Some((_, again)) = &mut self.main {
                    *again = true;
                }
            }
            _ => {}
        }
        let shell = MODES.iter().find(|(n, _)| *n == m).and_then(|(_, s)| *s);
        self.modes.retain(|&n| n != m);
        if shell.is_some_and(|s| s != set) {
            self.modes.push(m);
        }
    }
}

fn write_params(out: &mut Vec<u8>, params: &Params) {
    for (k, p) in params.iter().enumerate() {
        if k > 0 {
            out.push(b';');
        }
        for (j, v) in p.iter().enumerate() {
            if j > 0 {
                out.push(b':');
            }
            push_number(out, *v);
        }
    }
}

/// Appends `v` in decimal (no allocation: this runs for each parameter of each sequence).
fn push_number(out: &mut Vec<u8>, v: u16) {
    let mut digits = [0u8; 5];
    let mut at = digits.len();
    let mut v = v;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `CSI` with no parameters, or one that is 0 (what the parser makes of none).
fn no_params(params: &Params) -> bool {
    params.is_empty() || (params.len() == 1 && params.iter().next() == Some(&[0][..]))
}

impl Sink<'_> {
    /// SGR, without conceal (8): text the operator cannot see is still copied with what they
    /// can, and pasted. A colour's own values (`38;5;8`, `48;2;R;G;B`) are read as such; an
    /// extended colour with a form or a length cordon does not know is not read for sure
    /// (a terminal might take one of its values for an 8), so the whole SGR is dropped.
    fn sgr(&mut self, params: &Params) {
        if no_params(params) {
            self.left.sgr = false;
            self.out.extend_from_slice(b"\x1b[m");
            return;
        }
        // One pass to read it (no allocation: this runs for each SGR of coloured output),
        // a second to write it only when there is a conceal to leave out.
        let mut conceal = false;
        let mut any = false;
        let mut reset_only = true;
        for (kept, p) in SgrParams::new(params) {
            let Some(kept) = kept else { return };
            conceal |= !kept;
            any |= kept;
            reset_only &= !kept || p == [0];
        }
        if !any {
            return; // only conceal: nothing to send
        }
        self.left.sgr = !reset_only;
        if !conceal {
            self.out.extend_from_slice(b"\x1b[");
            write_params(self.out, params);
            self.out.push(b'm');
            return;
        }
        self.out.extend_from_slice(b"\x1b[");
        let mut first = true;
        for (kept, p) in SgrParams::new(params) {
            if kept != Some(true) {
                continue;
            }
            if !first {
                self.out.push(b';');
            }
            first = false;
            for (j, v) in p.iter().enumerate() {
                if j > 0 {
                    self.out.push(b':');
                }
                push_number(self.out, *v);
            }
        }
        self.out.push(b'm');
    }
}

/// An SGR's parameters, each with whether it is kept: `Some(false)` for conceal (8), `None`
/// where the SGR cannot be read for sure (an extended colour of a form or length cordon does
/// not know: a terminal might read one of its values as an 8). A colour's own values
/// (`38;5;N`, `38;2;R;G;B`, and 48 and 58 alike) are kept with it.
struct SgrParams<'a, I: Iterator<Item = &'a [u16]>> {
    params: I,
    /// Values of an extended colour still to come, and whether its form was read.
    colour: Option<usize>,
}

impl<'a> SgrParams<'a, anstyle_parse::ParamsIter<'a>> {
    fn new(params: &'a Params) -> Self {
        SgrParams {
            params: params.iter(),
            colour: None,
        }
    }
}

impl<'a, I: Iterator<Item = &'a [u16]>> Iterator for SgrParams<'a, I> {
    type Item = (Option<bool>, &'a [u16]);

    fn next(&mut self) -> Option<Self::Item> {
        let p = self.params.next();
        let Some(p) = p else {
            // The params ended inside an extended colour: not read for sure.
            return self.colour.take().map(|_| (None, &[][..]));
        };
        let kept = match (self.colour, p) {
            // After 38/48/58: the form, then its values, one number each.
            (Some(0), [5]) => {
                self.colour = Some(1);
                Some(true)
            }
            (Some(0), [2]) => {
                self.colour = Some(3);
                Some(true)
            }
            (Some(0), _) | (Some(_), [] | [_, _, ..]) => None,
            (Some(n), [_]) => {
                self.colour = (n > 1).then_some(n - 1);
                Some(true)
            }
            (None, [38 | 48 | 58]) => {
                self.colour = Some(0);
                Some(true)
            }
            (None, [8, ..]) => Some(false),
            (None, _) => Some(true),
        };
        Some((kept, p))
    }
}

impl Perform for Sink<'_> {
    fn print(&mut self, c: char) {
        self.ground = true;
        // U+0080-U+009F: C1 controls in UTF-8, which some terminals obey (CSI, OSC, DCS).
        if !('\u{80}'..='\u{9f}').contains(&c) {
            self.left.cursor.moved();
            let mut b = [0; 4];
            self.out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
    }

    fn execute(&mut self, byte: u8) {
        // CAN and SUB end any sequence (the parser is back in the ground state).
        if matches!(byte, 0x18 | 0x1a) {
            self.ground = true;
        }
        if matches!(byte, 0x08 | b'\t' | b'\n' | b'\r') {
            self.left.cursor.byte(byte);
        }
        if matches!(byte, 0x07 | 0x08 | b'\t' | b'\n' | b'\r') {
            self.out.push(byte);
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        self.ground = true;
        if ignore {
            return; // more parameters or intermediates than the parser keeps: not understood
        }
        match (intermediates, action) {
            (b"?", b'h' | b'l') => {
                let set = action == b'h';
                for p in params.iter() {
                    if let [m] = p {
                        if MODES.iter().any(|(n, _)| n == m) {
                            self.left.mode(*m, set);
                            self.out.extend_from_slice(b"\x1b[?");
                            push_number(self.out, *m);
                            self.out.push(action);
                        }
                    }
                }
            }
            // Of the ANSI modes only insert (4), which ncurses may draw with.
            ([], b'h' | b'l') if params.iter().all(|p| p == [4]) => {
                self.left.insert = action == b'h';
                self.out.extend_from_slice(b"\x1b[4");
                self.out.push(action);
            }
            ([], _) if draws(action) => {
                if action != b'm' && params.iter().any(|p| p.len() > 1) {
                    return; // sub-parameters mean something only in SGR
                }
                match action {
                    b's' | b'u' if !no_params(params) => return, // DECSLRM, not a cursor save
                    b'J' if params.iter().any(|p| p[0] > 2) => return, // 3: the scrollback
                    b'm' => return self.sgr(params),
                    b'r' => self.left.scroll_region = !no_params(params),
                    _ => {}
                }
                match action {
                    b's' => self.left.saved(),
                    // Up, to a row or position of the command's choosing, a restored cursor,
                    // lines pushed down, or DECSTBM (which homes the cursor).
                    b'A' | b'F' | b'H' | b'f' | b'd' | b'T' | b'L' | b'r' | b'u' => {
                        self.left.cursor.moved_up()
                    }
                    _ => self.left.cursor.moved(),
                }
                self.out.extend_from_slice(b"\x1b[");
                if !no_params(params) {
                    write_params(self.out, params);
                }
                self.out.push(action);
            }
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        self.ground = true;
        if ignore {
            return;
        }
        match (intermediates, byte) {
            ([], b'7') => self.left.saved(),
            ([], b'8' | b'M') => self.left.cursor.moved_up(),
            ([], b'D' | b'E') => self.left.cursor.moved(),
            ([], b'=') => self.left.keypad = true,
            ([], b'>') => self.left.keypad = false,
            (b"(", b'0') => self.left.line_drawing = true,
            (b"(", b'B') => self.left.line_drawing = false,
            _ => return,
        }
        self.out.push(0x1b);
        self.out.extend_from_slice(intermediates);
        self.out.push(byte);
    }
    // OSC, DCS (hook, put, unhook), SOS, PM and APC: nothing of them is written.
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(chunks: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let mut f = Filter::new();
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c, &mut out);
        }
        (out, f.finish())
    }

    fn each_byte(input: &[u8]) -> Vec<u8> {
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        filter(&chunks).0
    }

    #[test]
    fn text_and_drawing_pass_as_written() {
        let s = "plain text\r\n\tüñí €\x08\x07 \x1b[31mred\x1b[m \x1b[1;38:5:208m \
                 \x1b[4;5H\x1b[H\x1b[2J\x1b[K\x1b[?1049h\x1b[?25l\x1b7\x1b8\x1b(0q\x1b(B\x1b[s\x1b[u";
        assert_eq!(filter(&[s.as_bytes()]).0, s.as_bytes());
        assert_eq!(each_byte(s.as_bytes()), s.as_bytes());
    }

    #[test]
    fn control_sequences_are_dropped_even_split_across_reads() {
        let attacks: &[&[u8]] = &[
            b"\x1b]52;c;Y3VybCB4fHNoCg==\x07",
            b"\x1b]52;c;Y3VybCB4fHNoCg==\x1b\\",
            b"\x1b]0;title\x07",
            b"\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\",
            b"\x1b]11;?\x07",
            b"\x1b[6n",
            b"\x1b[c",
            b"\x1b[>c",
            b"\x1b[21t",
            b"\x1b[?1000h",
            b"\x1b[?1004h",
            b"\x1b[3J",
            b"\x1b[>1u",
            b"\x1b[20h",
            b"\x1b[4;12h",
            b"\x1bP$qm\x1b\\",
            b"\x1bP+q544e\x1b\\",
            b"\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",
            b"\x1b_Gf=100;/etc/passwd\x1b\\",
            b"\x1b^pm\x1b\\",
            b"\x1bXsos\x1b\\",
            b"\x1bc",
            b"\x0e",
            "\u{9b}6n".as_bytes(),
            b"\x9b6n",
            b"\x9d52;c;eA==\x07",
        ];
        for a in attacks {
            let mut input = b"before".to_vec();
            input.extend_from_slice(a);
            input.extend_from_slice(b"after");
            let whole = filter(&[&input]).0;
            let text = String::from_utf8_lossy(&whole);
            assert!(
                !whole.contains(&0x1b) && text.starts_with("before") && text.ends_with("after"),
                "{a:?} gave {text:?}"
            );
            assert_eq!(each_byte(&input), whole, "{a:?} split byte by byte");
        }
    }

    /// What this thread has allocated, in bytes (the filter runs on one thread).
    mod counted {
        use std::alloc::{GlobalAlloc, Layout, System};
        use std::cell::Cell;

        thread_local!(pub(super) static ALLOCATED: Cell<usize> = const { Cell::new(0) });

        struct Counting;

        // SAFETY: every call is passed to the system allocator with the caller's own arguments;
        // the counter is a const-initialised thread-local Cell, which allocates nothing.
        unsafe impl GlobalAlloc for Counting {
            unsafe fn alloc(&self, l: Layout) -> *mut u8 {
                ALLOCATED.with(|a| a.set(a.get() + l.size()));
                // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
                unsafe { System.alloc(l) }
            }
            unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
                // SAFETY: `p` came from `alloc`/`realloc` above with layout `l`.
                unsafe { System.dealloc(p, l) }
            }
            unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
                ALLOCATED.with(|a| a.set(a.get() + new));
                // SAFETY: the caller's pointer, layout and size, as GlobalAlloc::realloc requires.
                unsafe { System.realloc(p, l, new) }
            }
        }

        #[global_allocator]
        static COUNTING: Counting = Counting;
    }

    #[test]
    fn an_endless_osc_string_takes_no_memory() {
        // cordon runs outside the sandbox: a command that opens an OSC string and never ends
        // it must not make cordon's memory grow with what it prints.
        let mut f = Filter::new();
        let mut out = Vec::with_capacity(1 << 16);
        f.feed(b"\x1b]0;", &mut out);
        let chunk = vec![b'y'; 1 << 16];
        let before = counted::ALLOCATED.with(|a| a.get());
        for _ in 0..64 {
            f.feed(&chunk, &mut out);
        }
        let grew = counted::ALLOCATED.with(|a| a.get()) - before;
        assert!(out.is_empty());
        assert!(
            grew < 4096,
            "{grew} bytes allocated for 4 MiB of OSC string"
        );
    }

    #[test]
    fn a_sequence_cut_by_the_end_is_not_sent() {
        let (out, _) = filter(&[b"ok\x1b]52;c;eA=", b"=\x1b[3"]);
        assert_eq!(out, b"ok");
    }

    #[test]
    fn modes_left_on_are_undone_and_only_those() {
        assert_eq!(filter(&[b"\x1b[?1049h\x1b[?1049l\x1b[31m\x1b[0m"]).1, b"");
        let (_, reset) =
            filter(&[b"\x1b[?1049h\x1b[?25l\x1b[?7l\x1b[1m\x1b=\x1b(0\x1b[2;5r\x1b[4h"]);
        assert_eq!(
            reset,
            b"\x1b7\x1b[r\x1b8\x1b[?1049l\x1b[?25h\x1b[?7h\x1b[4l\x1b[m\x1b(B\x1b>".to_vec()
        );
    }

    /// cordon's own lines after the run (its warnings, the scan's report) start at column 0
    /// of a line with nothing of the command's on it or below it: a command that ended
    /// mid-line, or moved the cursor up into what it drew, made cordon's line continue or sit
    /// inside the command's text (`cordon: nothing to report. ignore: ` then cordon's
    /// warning; a line longer than cordon's left standing after it).
    #[test]
    fn what_cordon_prints_next_starts_on_a_clean_line() {
        for (input, after) in [
            // Ended cleanly, or printed nothing: nothing added.
            (&b""[..], &b""[..]),
            (b"line\r\n", b""),
            (b"50%\r100%\r\n", b""),
            (b"\x1b[31mred\x1b[m\r\n", b""),
            // A full-screen program that put the operator's screen back.
            (b"\x1b[?1049h\x1b[H\x1b[2Jdrawn\x1b[5;1H\x1b[?1049l", b""),
            // Ended mid-line, or on a line it went back over: a new line.
            (b"no newline", b"\r\n"),
            (b"AAAAAAAAAAAAAAAAAAAA\r", b"\r\n"),
            (b"line\r\n\x1b[C", b"\r\n"),
            // The cursor went up into what was drawn: a new line, and what is below erased.
            (b"1\r\n2\r\n3\r\n\x1b[3A", b"\r\n\x1b[J"),
            (b"1\r\n\x1b[1;1H\r\n", b"\r\n\x1b[J"),
            (b"1\r\n\x1bM\r\n", b"\r\n\x1b[J"),
            (b"\x1b7 1\r\n2\r\n\x1b8", b"\r\n\x1b[J"),
            (b"\x1b[s1\r\n\x1b[u", b"\r\n\x1b[J"),
            (b"1\r\n\x1b[2T", b"\r\n\x1b[J"),
            (b"1\r\n\x1b[5d", b"\r\n\x1b[J"),
            (b"1\r\n\x1b[L", b"\r\n\x1b[J"),
            // The cursor saved on the alternate screen is where leaving it puts the cursor.
            (b"\x1b[?1049h\x1b[H\x1b7\x1b[?1049l", b"\r\n\x1b[J"),
            (b"\x1b[?47h\x1b[H\x1b[?47l", b"\r\n\x1b[J"),
        ] {
            assert_eq!(
                String::from_utf8_lossy(&filter(&[input]).1),
                String::from_utf8_lossy(after),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        // Left on the alternate screen: leaving it puts the operator's line back as it was.
        assert_eq!(filter(&[b"x\r\n\x1b[?1049h\x1b[Hdrawn"]).1, b"\x1b[?1049l");
        // Colours are reset before the erase, which paints with the current background.
        assert_eq!(
            filter(&[b"\x1b[41m1\r\n\x1b[A"]).1,
            b"\x1b[m\r\n\x1b[J".to_vec()
        );
    }

    /// Concealed text (SGR 8) is shown: text the operator cannot see but copies with what
    /// they can (`echo ok` then hidden `; curl … | sh`) is pasted whole. A colour's own
    /// parameters (`38;5;8`) are not conceal; an SGR that cannot be read for sure is dropped.
    #[test]
    fn concealed_text_is_shown() {
        for (input, shown) in [
            (&b"\x1b[8mhidden"[..], &b"hidden"[..]),
            (b"\x1b[1;8;31mhidden", b"\x1b[1;31mhidden"),
            (b"\x1b[8:1mhidden", b"hidden"),
            (b"\x1b[38;5;8mgrey", b"\x1b[38;5;8mgrey"),
            (b"\x1b[48;2;8;8;8;8mx", b"\x1b[48;2;8;8;8mx"),
            (b"\x1b[38:5:8mgrey", b"\x1b[38:5:8mgrey"),
            (b"\x1b[38;8mx", b"x"),
            (b"\x1b[38;5mx", b"x"),
            (b"\x1b[0;8mx", b"\x1b[0mx"),
            (b"\x1b[38;2;1;2mx", b"x"),
            (b"\x1b[38;5;1:2mx", b"x"),
        ] {
            assert_eq!(
                String::from_utf8_lossy(&filter(&[input]).0),
                String::from_utf8_lossy(shown),
                "{:?}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(each_byte(input), filter(&[input]).0);
        }
    }

    /// Outside a UTF-8 locale the terminal may read 0x80-0x9F as C1 controls, and valid UTF-8
    /// carries those bytes: `Û6n` (C3 9B) is `CSI 6 n` to xterm in Latin-1, `Ý52;c;…` (C3 9D)
    /// an OSC 52. They are taken out there, and only there.
    #[test]
    fn c1_bytes_inside_utf8_are_taken_out_outside_a_utf8_locale() {
        let input = "a\u{db}6n \u{dd}52;c;eA==\u{7} \u{d0}q \u{20ac}".as_bytes();
        let mut f = Filter {
            eight_bit: true,
            ..Filter::new()
        };
        let mut out = Vec::new();
        for b in input.chunks(1) {
            f.feed(b, &mut out);
        }
        assert!(
            !out.iter().any(|b| (0x80..=0x9f).contains(b)),
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        assert!(out.starts_with(b"a\xc36n"), "{out:?}");
        // A UTF-8 terminal reads them as parts of characters: they pass.
        assert_eq!(filter(&[input]).0, input);

        use crate::locale::utf8_locale;
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert!(utf8_locale(env(&[("LANG", "C.UTF-8")])));
        assert!(utf8_locale(env(&[
            ("LANG", "C"),
            ("LC_CTYPE", "en_US.utf8")
        ])));
        assert!(utf8_locale(env(&[("LC_ALL", ""), ("LANG", "de_DE.UTF-8")])));
        assert!(!utf8_locale(env(&[("LC_ALL", "C"), ("LANG", "C.UTF-8")])));
        assert!(!utf8_locale(env(&[("LANG", "en_US.ISO-8859-1")])));
        assert!(!utf8_locale(env(&[])));
    }
}
