//! The approval prompt on the controlling terminal: a box with the tool, the summary, why it
//! asks and the preview (diffs coloured, long previews cut with a count of what is hidden),
//! answered by one key, with a countdown to the timeout.
//!
//! | key | answer |
//! | --- | --- |
//! | `y` | approve once |
//! | `n`, Ctrl-C, Ctrl-D, Esc | deny |
//! | `s` | approve for this session |
//! | `a` | approve always: shows the exact rule and where it goes; saved only after `y` |
//! | `v` | view everything in a pager (`$PAGER`, else `less`, else `more`) |
//! | `e` | deny with a note for the agent (one line; empty goes back) |
//! | `x` | only for a question raised while a command runs (a connection): deny it and every further question of the run |
//!
//! Keys typed before the box is drawn are discarded; for a question that comes up while a
//! command runs (a connection it opened), so are keys typed in the first
//! [`UNEXPECTED_GRACE`] after it: they were meant for the command.
//!
//! Everything shown is stripped of terminal controls first ([`term::clean`]), so a command
//! line or file cannot redraw the prompt. No answer before the deadline, a closed terminal or
//! a read error all deny (the engine records which).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use cordon_approval::{Amendment, Answer, AskError, Asker, Pending, Preview, Request};

use crate::term::{self, Input, Raw};

/// A box that came up in the middle of a run takes keys only after this long without any.
pub const UNEXPECTED_GRACE: Duration = Duration::from_millis(1000);

/// Resets what a command may have left the terminal in: CAN and ST end an unfinished escape
/// or control string, DECSTR (soft reset) and the explicit resets undo a scroll region,
/// attributes, character sets and a hidden cursor. The scroll region's reset homes the
/// cursor: saved and restored around it, so that the box comes below what the command showed
/// last (what is below the cursor is erased before the box is drawn) instead of over the
/// whole screen. Also written before the warnings said again after a run (`exec.rs`).
pub(crate) const TERMINAL_RESET: &[u8] =
    b"\x18\x1b\\\x1b[!p\x1b[0m\x1b7\x1b[r\x1b8\x1b(B\x0f\x1b[?25h";

/// Preview lines shown in the box; the rest is counted and left to `v`.
pub const PREVIEW_LINES: usize = 20;

/// The terminal asker of `cordon exec`.
pub struct Prompt {
    /// Where "approve always" rules are saved, or why they cannot be.
    pub rules_file: Result<PathBuf, cordon_gate::NoRulesFile>,
    /// The session's name (`--session`), for the `s` key's label.
    pub session: Option<String>,
    /// ANSI colours (off with `NO_COLOR` or `TERM=dumb`).
    pub color: bool,
    /// The questions come up while a command runs (its connections): the box offers `x`, no
    /// to this one and every further one of the run.
    pub mid_run: bool,
}

impl Prompt {
    pub fn new(
        rules_file: Result<PathBuf, cordon_gate::NoRulesFile>,
        session: Option<String>,
    ) -> Prompt {
        let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::env::var("TERM").map_or(true, |t| t != "dumb");
        Prompt {
            rules_file,
            session,
            color,
            mid_run: false,
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// The box, as lines (no trailing newline on the last).
    pub fn render(&self, req: &Request, pending: &Pending, width: usize) -> String {
        let inner = width.saturating_sub(4).max(20);
        let fit = |s: &str| cut(&term::clean(s), inner);
        let rule = width.saturating_sub(2).min(100);
        let bar = "─".repeat(rule);
        let mut out = String::new();
        let title = format!("─ cordon: approval needed ({}) ", fit(&req.tool));
        let rest = rule.saturating_sub(title.chars().count());
        out.push_str(&format!(
            "╭{}{}\n",
            self.paint("1", &title),
            "─".repeat(rest)
        ));
        let mut line = |s: String| out.push_str(&format!("│ {s}\n"));
        // The summary is what is approved: wrapped, never cut (a long host name must not
        // hide the domain it is in, nor a long command what it ends with).
        for part in wrap(&term::clean(&req.presentation.summary), inner) {
            line(self.paint("1", &part));
        }
        // Wrapped with its label to the box's width (the label pushed it past the terminal's
        // width, which wrapped it under the box's border), never cut: a long word the agent
        // chose at its start (a path, a redirection's target) pushed what makes the call one
        // to ask about (`… is written, on the persistence surface`) out of a cut line.
        let why = term::clean(&format!("why: {} [{}]", pending.reason, pending.by));
        for part in wrap(&why, inner) {
            line(part);
        }
        let body = req.presentation.preview.to_string();
        if !body.is_empty() {
            line(String::new());
            let diff = matches!(req.presentation.preview, Preview::Diff { .. });
            let lines: Vec<&str> = body.lines().collect();
            for l in lines.iter().take(PREVIEW_LINES) {
                let shown = fit(l);
                let shown = match (diff, l.as_bytes().first()) {
                    (true, _) if l.starts_with("+++") || l.starts_with("---") => {
                        self.paint("1", &shown)
                    }
                    (true, Some(b'+')) => self.paint("32", &shown),
                    (true, Some(b'-')) => self.paint("31", &shown),
                    (true, Some(b'@')) => self.paint("36", &shown),
                    _ => shown,
                };
                line(shown);
            }
            if lines.len() > PREVIEW_LINES {
                line(self.paint(
                    "2",
                    &format!(
                        "… {} more lines not shown (press v to view all)",
                        lines.len() - PREVIEW_LINES
                    ),
                ));
            } else if req.presentation.full.is_some() {
                line(self.paint("2", "… cut short (press v to view all)"));
            }
        }
        out.push_str(&format!("╰{bar}\n"));
        let session = match &self.session {
            Some(name) => format!("session `{}`", term::clean(name)),
            None => "this run".to_string(),
        };
        if self.mid_run {
            out.push_str(&format!(
                "[y] yes once  [n] no  [s] yes for {session}  [a] yes always  [e] no, with a note  [x] no, and no more questions this run"
            ));
        } else {
            out.push_str(&format!(
                "[y] yes once  [n] no  [s] yes for {session}  [a] yes always  [v] view all  [e] no, with a note"
            ));
        }
        out
    }

    /// The text `v` shows: the summary and the whole preview.
    fn full_text(req: &Request) -> String {
        let body = match &req.presentation.full {
            Some(full) => full.to_string(),
            None => req.presentation.preview.to_string(),
        };
        let body: Vec<String> = body.lines().map(term::clean).collect();
        format!(
            "{}\n\n{}\n",
            term::clean(&req.presentation.summary),
            body.join("\n")
        )
    }

    fn ask_on(
        &mut self,
        tty: &mut File,
        req: &Request,
        pending: &Pending,
        deadline: Instant,
        withdrawn: &dyn Fn() -> bool,
        unexpected: bool,
    ) -> Result<Answer, AskError> {
        let lost = |e: std::io::Error| AskError::Lost(format!("terminal: {e}"));
        let signals = term::Signals::catch(); // dropped after `raw`: the terminal comes back first
        let interrupted =
            |sig: i32| AskError::Lost(format!("interrupted by signal {sig} while asking"));
        if withdrawn() {
            return Err(AskError::Lost("the command ended before an answer".into()));
        }
        let mut raw = Raw::enter(tty).map_err(lost)?;
        let mut out = tty.try_clone().map_err(lost)?;
        let mut reader = tty.try_clone().map_err(lost)?;
        if unexpected {
            // Whatever the command left the terminal in (a scroll region, an unfinished
            // escape sequence that would swallow the box, another character set) is reset
            // first, so that the box shows as drawn.
            out.write_all(TERMINAL_RESET).map_err(lost)?;
        }
        let boxed = self.render(req, pending, term::width(&out));
        // On a new line, with everything below it erased: the command may have left the
        // cursor over lines it drew, whose longer ends would stand after the box's own text.
        write!(out, "\r\n\x1b[J{}\r\n", boxed.replace('\n', "\r\n")).map_err(lost)?;
        term::discard_typeahead(&out).map_err(lost)?;
        if unexpected {
            // A question that comes up in the middle of a run lands on someone busy typing for
            // the command: keys are not an answer until they have stopped for a while.
            write!(out, "\r\x1b[K(keys are ignored until you stop typing) ").map_err(lost)?;
            loop {
                if withdrawn() || Instant::now() >= deadline {
                    break; // said and returned below
                }
                match term::read(&mut reader, UNEXPECTED_GRACE, deadline).map_err(lost)? {
                    Input::Idle => break,
                    Input::Bytes(_) => continue,
                    Input::Closed => {
                        return Err(AskError::Lost("the terminal closed".into()));
                    }
                }
            }
        }
        loop {
            if let Some(sig) = signals.take() {
                let _ = write!(out, "\r\x1b[K→ interrupted: denied\r\n");
                return Err(interrupted(sig));
            }
            if withdrawn() {
                let _ = write!(
                    out,
                    "\r\x1b[K→ the command ended before an answer: denied\r\n"
                );
                return Err(AskError::Lost("the command ended before an answer".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let _ = write!(out, "\r\x1b[K→ no answer in time: denied\r\n");
                return Err(AskError::TimedOut);
            }
            // Rounded up, so the countdown reaches 0:00 only when time is out.
            let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            write!(
                out,
                "\r\x1b[Kanswer within {}:{:02} (no answer: denied) > ",
                secs / 60,
                secs % 60
            )
            .map_err(lost)?;
            let tick = left - Duration::from_secs(left.as_secs());
            let tick = if tick.is_zero() {
                Duration::from_secs(1)
            } else {
                tick
            };
            let bytes = match term::read(&mut reader, tick, deadline).map_err(lost)? {
                Input::Idle => continue,
                Input::Closed => {
                    return Err(AskError::Lost("the terminal closed".into()));
                }
                Input::Bytes(b) => b,
            };
            let key = bytes[0];
            let said = |out: &mut File, what: &str| {
                let _ = write!(out, "\r\x1b[K→ {what}\r\n");
            };
            match key {
                b'y' | b'Y' => {
                    said(&mut out, "approved once");
                    return Ok(Answer::Once);
                }
                b'n' | b'N' | 0x03 | 0x04 | 0x1b => {
                    said(&mut out, "denied");
                    return Ok(Answer::Deny);
                }
                b's' | b'S' => {
                    said(&mut out, "approved for this session");
                    return Ok(Answer::Session);
                }
                b'a' | b'A' => {
                    if self.confirm_always(
                        &mut out,
                        &mut reader,
                        req,
                        deadline,
                        &signals,
                        withdrawn,
                    )? {
                        said(&mut out, "approved always");
                        return Ok(Answer::Always);
                    }
                }
                // A pager would run while the command does (its signals blocked, and killed
                // with the run's children): a connection's box shows everything anyway.
                b'v' | b'V' if !self.mid_run => {
                    let text = Prompt::full_text(req);
                    let _ = write!(out, "\r\x1b[K");
                    raw.cooked(|| page(&text, deadline)).map_err(lost)?;
                    let _ = signals.take(); // Ctrl-C inside the pager belongs to the pager
                    write!(out, "\r\n\x1b[J{}\r\n", boxed.replace('\n', "\r\n")).map_err(lost)?;
                    term::discard_typeahead(&out).map_err(lost)?;
                }
                b'x' | b'X' if self.mid_run => {
                    said(&mut out, "denied, with every further question of this run");
                    return Ok(Answer::Abort);
                }
                b'e' | b'E' => {
                    write!(
                        out,
                        "\r\x1b[Knote for the agent (Enter to send, empty to go back): "
                    )
                    .map_err(lost)?;
                    let note = raw
                        .cooked(|| read_line(&mut reader, deadline, &signals, withdrawn))
                        .map_err(lost)??;
                    let note = note.trim().to_string();
                    if !note.is_empty() {
                        said(&mut out, "denied, with a note");
                        return Ok(Answer::DenyWithNote(note));
                    }
                }
                _ => {
                    let _ = out.write_all(b"\x07");
                }
            }
        }
    }

    /// `a`: shows the exact rule and where it would be saved; `true` when the person confirms
    /// with `y`.
    fn confirm_always(
        &self,
        out: &mut File,
        reader: &mut File,
        req: &Request,
        deadline: Instant,
        signals: &term::Signals,
        withdrawn: &dyn Fn() -> bool,
    ) -> Result<bool, AskError> {
        let lost = |e: std::io::Error| AskError::Lost(format!("terminal: {e}"));
        let file = match &self.rules_file {
            Ok(f) => f,
            Err(why) => {
                let why = why.to_string();
                write!(out, "\r\x1b[K{}\r\n", self.paint("33", &why)).map_err(lost)?;
                return Ok(false);
            }
        };
        let amendments = match Amendment::for_request(req) {
            Ok(a) => a,
            Err(e) => {
                let msg = format!("cannot approve always: {e}");
                write!(out, "\r\x1b[K{}\r\n", self.paint("33", &term::clean(&msg)))
                    .map_err(lost)?;
                return Ok(false);
            }
        };
        let mut text = format!(
            "\r\x1b[Kapprove always: these rules will be added to {}:\r\n",
            term::clean(&file.display().to_string())
        );
        for a in &amendments {
            for l in a.to_toml().lines() {
                text.push_str(&format!("    {}\r\n", term::clean(l)));
            }
        }
        text.push_str("save them? [y] yes, anything else: back > ");
        out.write_all(text.as_bytes()).map_err(lost)?;
        loop {
            match term::read(reader, Duration::from_secs(1), deadline).map_err(lost)? {
                Input::Idle => {
                    if let Some(sig) = signals.take() {
                        return Err(AskError::Lost(format!(
                            "interrupted by signal {sig} while asking"
                        )));
                    }
                    if withdrawn() {
                        return Err(AskError::Lost("the command ended before an answer".into()));
                    }
                    if Instant::now() >= deadline {
                        return Err(AskError::TimedOut);
                    }
                }
                Input::Closed => return Err(AskError::Lost("the terminal closed".into())),
                Input::Bytes(b) if b[0] == b'y' || b[0] == b'Y' => return Ok(true),
                Input::Bytes(_) => {
                    write!(out, "\r\x1b[Knot saved\r\n").map_err(lost)?;
                    return Ok(false);
                }
            }
        }
    }
}

impl Asker for Prompt {
    fn ask(
        &mut self,
        req: &Request,
        pending: &Pending,
        deadline: Instant,
    ) -> Result<Answer, AskError> {
        let mut tty = open_tty()?;
        self.ask_on(&mut tty, req, pending, deadline, &|| false, false)
    }

    fn ask_withdrawable(
        &mut self,
        req: &Request,
        pending: &Pending,
        deadline: Instant,
        withdrawn: &dyn Fn() -> bool,
    ) -> Result<Answer, AskError> {
        // Asked while a command runs (a connection it opened): unexpected.
        self.mid_run = true;
        let mut tty = open_tty()?;
        self.ask_on(&mut tty, req, pending, deadline, withdrawn, true)
    }
}

fn open_tty() -> Result<File, AskError> {
    term::open_tty().map_err(|e| {
        AskError::Lost(format!(
            "approval needed, but the terminal cannot be opened: {e}"
        ))
    })
}

/// One line typed in line mode, before the deadline.
fn read_line(
    tty: &mut File,
    deadline: Instant,
    signals: &term::Signals,
    withdrawn: &dyn Fn() -> bool,
) -> Result<String, AskError> {
    let mut line = Vec::new();
    loop {
        if let Some(sig) = signals.take() {
            return Err(AskError::Lost(format!(
                "interrupted by signal {sig} while asking"
            )));
        }
        if withdrawn() {
            return Err(AskError::Lost("the command ended before an answer".into()));
        }
        if Instant::now() >= deadline {
            return Err(AskError::TimedOut);
        }
        match term::read(tty, Duration::from_secs(1), deadline)
            .map_err(|e| AskError::Lost(format!("terminal: {e}")))?
        {
            Input::Idle => {}
            Input::Closed => return Err(AskError::Lost("the terminal closed".into())),
            Input::Bytes(b) => {
                line.extend_from_slice(&b);
                if line.contains(&b'\n') {
                    let end = line.iter().position(|&c| c == b'\n').unwrap_or(line.len());
                    return Ok(String::from_utf8_lossy(&line[..end]).into_owned());
                }
            }
        }
    }
}

/// Shows `text` in the person's pager on the terminal; without one, prints it. A pager still
/// open at `deadline` is closed: the request is then denied as unanswered in time, and
/// cordon must not hang on a pager nobody reads.
fn page(text: &str, deadline: Instant) {
    let show_inline = || {
        if let Ok(mut t) = term::open_tty() {
            let _ = t.write_all(text.as_bytes());
        }
    };
    let Ok(mut file) = tempfile::NamedTempFile::new() else {
        return show_inline();
    };
    if file.write_all(text.as_bytes()).is_err() {
        return show_inline();
    }
    let pager = std::env::var("PAGER").ok().filter(|p| !p.trim().is_empty());
    let candidates: Vec<Vec<String>> = match pager {
        Some(p) => vec![p.split_whitespace().map(String::from).collect()],
        None => vec![vec!["less".into()], vec!["more".into()]],
    };
    for argv in candidates {
        let (Ok(stdin), Ok(stdout)) = (term::open_tty(), term::open_tty()) else {
            return show_inline();
        };
        // No input preprocessors: the text is the agent's, and lesspipe would run programs
        // on it outside the sandbox.
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .arg(file.path())
            .env_remove("LESSOPEN")
            .env_remove("LESSCLOSE")
            .stdin(stdin)
            .stdout(stdout)
            .spawn();
        if let Ok(mut child) = child {
            // Wait on another thread, so that the prompt resumes the moment the pager ends.
            let pid = rustix::process::Pid::from_child(&child);
            let (done, ended) = std::sync::mpsc::channel();
            let waiter = std::thread::spawn(move || {
                let _ = child.wait();
                let _ = done.send(());
            });
            let left = deadline.saturating_duration_since(Instant::now());
            if ended.recv_timeout(left).is_err() {
                // Still unreaped, so the pid is still the pager's. If the kill fails the pager
                // has already exited, and the join below returns at once.
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            let _ = waiter.join();
            return;
        }
    }
    show_inline();
}

/// `s` cut to `n` characters, ending in `…` when cut.
/// `s` in lines of at most `n` characters.
fn wrap(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_approval::{By, Key, Presentation};

    fn prompt() -> Prompt {
        Prompt {
            rules_file: Err(cordon_gate::NoRulesFile),
            session: None,
            color: false,
            mid_run: false,
        }
    }

    fn pending() -> Pending {
        Pending {
            by: By::Default {
                tool: "shell".into(),
            },
            reason: "no rule matches".into(),
        }
    }

    #[test]
    fn the_box_shows_tool_summary_reason_and_keys() {
        let req = Request::new("1", "shell", vec![]).with_presentation(Presentation::new(
            "make test",
            Preview::Text {
                text: "ask   make test".into(),
            },
        ));
        let b = prompt().render(&req, &pending(), 80);
        assert!(b.contains("cordon: approval needed (shell)"), "{b}");
        assert!(b.contains("│ make test\n"), "{b}");
        assert!(b.contains("why: no rule matches [default (shell)]"), "{b}");
        assert!(b.contains("│ ask   make test\n"), "{b}");
        for k in ["[y]", "[n]", "[s]", "[a]", "[v]", "[e]"] {
            assert!(b.contains(k), "{k}: {b}");
        }
    }

    #[test]
    fn long_previews_are_cut_and_counted_and_controls_escaped() {
        let text: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
        let req = Request::new("1", "shell", vec![]).with_presentation(Presentation::new(
            "x\u{1b}[2Jy",
            Preview::Text {
                text: text.join("\n"),
            },
        ));
        let b = prompt().render(&req, &pending(), 80);
        assert!(b.contains("line 19") && !b.contains("line 20"), "{b}");
        assert!(b.contains("… 10 more lines not shown (press v"), "{b}");
        assert!(!b.contains('\u{1b}'), "{b}");
        assert!(b.contains(r"x\u{1b}[2Jy"), "{b}");
        assert!(Prompt::full_text(&req).contains("line 29"));
    }

    #[test]
    fn diffs_are_coloured() {
        let mut p = prompt();
        p.color = true;
        let req = Request::new("1", "edit_file", vec![]).with_presentation(Presentation::new(
            "edit a.txt",
            Preview::Diff {
                unified: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            },
        ));
        let b = p.render(&req, &pending(), 80);
        assert!(b.contains("\x1b[31m-old\x1b[0m"), "{b}");
        assert!(b.contains("\x1b[32m+new\x1b[0m"), "{b}");
        assert!(b.contains("\x1b[36m@@ -1 +1 @@\x1b[0m"), "{b}");
    }

    #[test]
    fn a_long_summary_is_wrapped_whole() {
        let host = format!("index.example.org.{}.attacker.net:443", "a".repeat(120));
        let req = Request::new("r", "network", vec![Key::new(["network", host.as_str()])])
            .with_presentation(Presentation {
                summary: format!("connect to {host}"),
                preview: cordon_approval::Preview::Text {
                    text: String::new(),
                },
                full: None,
            });
        let boxed = prompt().render(&req, &pending(), 60);
        let joined: String = boxed.lines().filter_map(|l| l.strip_prefix("│ ")).collect();
        assert!(joined.contains(&format!("connect to {host}")), "{boxed}");
        assert!(
            boxed
                .lines()
                .filter(|l| l.starts_with('│'))
                .all(|l| l.chars().count() <= 60),
            "{boxed}"
        );
    }

    #[test]
    fn cut_marks_what_it_cuts() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
