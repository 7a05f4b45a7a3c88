//! Plain HTTP inside a tunnel cordon does not terminate (`CONNECT host:80`, or SOCKS5, then
//! requests in the clear).
//!
//! A front end shared by many sites routes a plain request by its `Host` header (or an
//! absolute-form target), which the client chooses: `CONNECT allowed.example:80` and then
//! `Host: other.example` reached `other.example` behind the same front end, a host the policy
//! does not list (round 8 of issue 21). So the client's bytes of a tunnel that starts like a
//! request line are read as HTTP/1 as they go: every request (a pipelined one too) must name
//! the tunnel's host, and what cordon cannot read the way a server would is refused.
//!
//! Nothing is held back waiting for more bytes (round 8's first try did, and stalled every
//! protocol whose first message looks like the start of a request line): a server acts on a
//! request only once a line of it ends (the head's last line, or an HTTP/0.9 request line), so
//! the bytes of a line go on as they come and only the byte that ends it (CR or LF) waits
//! until the line is checked, which needs nothing more. A line that names another host is
//! refused before its end goes on: the destination holds an unfinished line and then the
//! connection closes. Once the first line shows another protocol (no `HTTP/` version), or the
//! destination agreed to a WebSocket upgrade (101), bytes go on unread.
//!
//! Body framing is read strictly (one `Content-Length`, or `Transfer-Encoding: chunked`
//! alone with CRLF line ends), so that where one request ends is where the destination sees
//! it end; a body is also read as if it were the next request, for a destination that ignores
//! a body (a "CL.0" desync), and refused if so read it names another host. Not covered: HTTP/2
//! in the clear (prior knowledge or `Upgrade: h2c`) carries its host inside compressed frames,
//! so it is refused. A chunked body is read by a destination that ignores `Transfer-Encoding`
//! as requests from its first chunk-size line on; that line is hex digits alone (no chunk
//! extension), which no server reads as a request line, and such a server answers it with an
//! error (docs/network.md).

use cordon_policy::network::Target;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::terminate::names_another;

/// The longest line read (request line, header field, chunk size): servers take 8–64 KiB.
const MAX_LINE: usize = 64 * 1024;
/// The most header fields in one request head.
const MAX_FIELDS: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Before the tunnel's first request line (empty lines are skipped, as servers do).
    First,
    /// Between requests: what comes must be a request.
    Next,
    /// A request's header fields.
    Head,
    /// This many bytes of a `Content-Length` body are left.
    Body(u64),
    /// A chunk-size line.
    ChunkSize,
    /// This many bytes of a chunk's data are left.
    ChunkData(u64),
    /// The CRLF after a chunk's data: this many of its bytes were seen.
    ChunkEnd(u8),
    /// The trailer fields after the last chunk.
    Trailers,
    /// A WebSocket upgrade was asked for: the client's bytes wait for the destination's answer.
    AwaitUpgrade,
    /// Not HTTP, or upgraded: bytes go on unread.
    Raw,
}

/// What a request head said so far.
#[derive(Default)]
struct Head {
    http10: bool,
    host: bool,
    length: Option<u64>,
    chunked: bool,
    upgrade: bool,
    fields: usize,
}

/// What the tunnel goes on with after some of the client's bytes.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Read on.
    Go,
    /// Bytes go on unread from here.
    Raw,
    /// Read nothing more from the client until the destination answered
    /// ([`Watch::answered`]).
    AwaitUpgrade,
    /// Close the tunnel: why, in one line.
    Refuse(String),
}

/// The client's side of a plain-HTTP tunnel, read as a server reads it.
pub(crate) struct Watch {
    target: Target,
    state: State,
    /// The current line, without its end.
    line: Vec<u8>,
    /// A CR ended the last line: an LF must follow, then this state.
    cr: Option<State>,
    head: Head,
    /// Bytes the client sent after an upgrade request, kept until the destination answered.
    pending: Vec<u8>,
    /// The body read as if it were the next request (a destination that ignores a body), and
    /// whether that body ended: a request hidden in it may end past it, so it is read on
    /// until it is between requests.
    shadow: Option<(Box<Watch>, bool)>,
    /// A line with an HTTP version was seen (for a shadow: a request was hidden in a body).
    saw_request: bool,
    /// Request heads passed on whole.
    requests: u64,
    /// The first line has its method token and a space.
    spaced: bool,
    /// A CR in the first line, held until the next byte.
    first_cr: bool,
    /// How many spaces or tabs start the first line.
    lead: usize,
}

impl Watch {
    pub(crate) fn new(target: Target) -> Watch {
        Watch {
            target,
            state: State::First,
            line: Vec::new(),
            cr: None,
            head: Head::default(),
            pending: Vec::new(),
            shadow: None,
            saw_request: false,
            requests: 0,
            spaced: false,
            first_cr: false,
            lead: 0,
        }
    }

    /// Reads `input`, the client's next bytes; appends to `out` those that may go on now.
    pub(crate) fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Step {
        if matches!(self.shadow, Some((_, true))) {
            if let Some(why) = self.shadow_feed(input) {
                return Step::Refuse(why);
            }
        }
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Raw => {
                    out.extend_from_slice(&input[i..]);
                    return Step::Raw;
                }
                State::AwaitUpgrade => {
                    self.pending.extend_from_slice(&input[i..]);
                    return Step::AwaitUpgrade;
                }
                State::Body(left) => {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(input.len() - i);
                    let chunk = &input[i..i + n];
                    if matches!(self.shadow, Some((_, false))) {
                        if let Some(why) = self.shadow_feed(chunk) {
                            return Step::Refuse(why);
                        }
                    }
                    out.extend_from_slice(chunk);
                    i += n;
                    let left = left - n as u64;
                    if left > 0 {
                        self.state = State::Body(left);
                        continue;
                    }
                    self.state = State::Next;
                    if let Some((_, past)) = self.shadow.as_mut() {
                        if !*past {
                            // The body ended; what follows may end a request hidden in it.
                            *past = true;
                            if let Some(why) = self.shadow_feed(&input[i..]) {
                                return Step::Refuse(why);
                            }
                        }
                    }
                }
                State::ChunkData(left) => {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(input.len() - i);
                    out.extend_from_slice(&input[i..i + n]);
                    i += n;
                    let left = left - n as u64;
                    self.state = if left == 0 {
                        State::ChunkEnd(0)
                    } else {
                        State::ChunkData(left)
                    };
                }
                State::ChunkEnd(seen) => {
                    if input[i] != b"\r\n"[usize::from(seen)] {
                        return Step::Refuse(
                            "a chunk's data in a plain HTTP request is not followed by CRLF; a destination may read its end elsewhere".into(),
                        );
                    }
                    out.push(input[i]);
                    i += 1;
                    self.state = if seen == 1 {
                        State::ChunkSize
                    } else {
                        State::ChunkEnd(1)
                    };
                }
                State::First | State::Next | State::Head | State::ChunkSize | State::Trailers => {
                    let b = input[i];
                    if std::mem::take(&mut self.first_cr) {
                        if b == b'\n' {
                            // CRLF: the first line ends here.
                            let line = std::mem::take(&mut self.line);
                            self.lead = 0;
                            out.push(b'\r');
                            match self.line_end(&line, true) {
                                Err(why) => return Step::Refuse(why),
                                Ok(State::Raw) => {
                                    self.state = State::Raw;
                                    out.extend_from_slice(&input[i..]);
                                    return Step::Raw;
                                }
                                Ok(next) => {
                                    out.push(b);
                                    i += 1;
                                    self.state = next;
                                }
                            }
                            continue;
                        }
                        // A CR alone inside what may be a request line: a server may take it
                        // for a space (Apache's `HttpProtocolOptions Unsafe`), so it is read
                        // as one.
                        self.line.push(b'\r');
                        out.push(b'\r');
                        self.spaced = true;
                    }
                    if b == b'\r' && self.state == State::First && !self.line.is_empty() {
                        // Held until the next byte shows whether it ends the line.
                        self.first_cr = true;
                        i += 1;
                        continue;
                    }
                    if let Some(next) = self.cr.take() {
                        if b != b'\n' {
                            return Step::Refuse(
                                "a line of a plain HTTP request ends with a CR alone; servers read that in different ways".into(),
                            );
                        }
                        out.push(b);
                        i += 1;
                        self.state = next;
                        continue;
                    }
                    if b == b'\r' || b == b'\n' {
                        let line = std::mem::take(&mut self.line);
                        self.lead = 0;
                        match self.line_end(&line, b == b'\r') {
                            Err(why) => return Step::Refuse(why),
                            Ok(State::Raw) => {
                                self.state = State::Raw;
                                out.extend_from_slice(&input[i..]);
                                return Step::Raw;
                            }
                            Ok(next) => {
                                out.push(b);
                                i += 1;
                                // Before a request line, servers skip CRs and LFs in any
                                // order; elsewhere a CR must be followed by an LF.
                                let skipped = line.is_empty()
                                    && matches!(self.state, State::First | State::Next);
                                if b == b'\r' && !skipped {
                                    self.cr = Some(next);
                                } else {
                                    self.state = next;
                                }
                            }
                        }
                        continue;
                    }
                    if self.line.len() >= MAX_LINE {
                        return Step::Refuse(format!(
                            "a line of a plain HTTP request (or what starts like one) is over {} KiB",
                            MAX_LINE / 1024
                        ));
                    }
                    self.line.push(b);
                    out.push(b);
                    i += 1;
                    // White space before the method: servers refuse it, but one that trims it
                    // may exist, so the line is read on (it goes on as it comes all the same).
                    if self.state == State::First && self.lead + 1 == self.line.len() && space(b) {
                        self.lead += 1;
                        continue;
                    }
                    // Once the method token and its space were seen, the first line may be a
                    // request's until it ends (this keeps the check linear).
                    let method = &self.line[self.lead..];
                    if self.state == State::First && !self.spaced && space(b) {
                        self.spaced = maybe_request_line(method);
                    }
                    if self.state == State::First && !self.spaced && !maybe_request_line(method) {
                        // Not HTTP: the rest goes on unread.
                        self.state = State::Raw;
                        out.extend_from_slice(&input[i..]);
                        return Step::Raw;
                    }
                }
            }
        }
        match self.state {
            State::Raw => Step::Raw,
            State::AwaitUpgrade => Step::AwaitUpgrade,
            _ => Step::Go,
        }
    }

    /// The destination answered an upgrade request: `upgraded` when its answer is a 101.
    /// What the client sent meanwhile is read now.
    pub(crate) fn answered(&mut self, upgraded: bool, out: &mut Vec<u8>) -> Step {
        self.state = if upgraded { State::Raw } else { State::Next };
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return if upgraded { Step::Raw } else { Step::Go };
        }
        self.feed(&pending, out)
    }

    /// Feeds bytes to the reading of a body as a request; why to refuse, if so read it names
    /// another host (or is not read as a server would). The reading ends once it is not a
    /// request, or, past the body, between requests.
    fn shadow_feed(&mut self, bytes: &[u8]) -> Option<String> {
        let (shadow, past) = self.shadow.as_mut()?;
        let step = shadow.feed(bytes, &mut Vec::new());
        let between = shadow.state == State::Next && shadow.line.is_empty() && shadow.cr.is_none();
        match step {
            Step::Refuse(why) if shadow.saw_request => {
                return Some(format!(
                    "the body of a plain HTTP request holds another request ({why}); a destination that ignores the body would read it as the next one"
                ))
            }
            Step::Go if !(*past && between) => return None,
            _ => {}
        }
        self.shadow = None;
        None
    }

    /// Checks a line that just ended (by a CR, or an LF alone); the state after its end.
    fn line_end(&mut self, line: &[u8], by_cr: bool) -> Result<State, String> {
        match self.state {
            State::First | State::Next => self.request_line(line),
            // A server that does not take an LF alone as a line's end reads on past where
            // this reading ended the head (into what it took as the body).
            State::Head if !by_cr => Err("a header line of a plain HTTP request ends with an LF alone; servers read that in different ways".into()),
            State::Head => self.field(line),
            State::ChunkSize => {
                if !by_cr {
                    return Err("a chunk-size line of a plain HTTP request ends with an LF alone; servers read that in different ways".into());
                }
                // Hex digits alone: no chunk extension (`;name=value`), which no client we
                // know sends. A destination that ignores Transfer-Encoding reads this line as
                // its next request line: `0;x / HTTP/1.1` was the last chunk here and, to
                // Python's http.server, a request (method `0;x`) whose "trailer"
                // `Host: other.test` it routed by (round 11 of issue 21). Digits alone are
                // one word, which no server takes for a request line.
                let digits = line;
                if digits.is_empty()
                    || digits.len() > 15
                    || !digits.iter().all(u8::is_ascii_hexdigit)
                {
                    return Err(format!(
                        "a chunk size `{}` in a plain HTTP request is not hex digits alone (a chunk extension is refused: a destination that ignores Transfer-Encoding reads the line as a request)",
                        String::from_utf8_lossy(line).escape_debug()
                    ));
                }
                let size = u64::from_str_radix(std::str::from_utf8(digits).expect("hex"), 16)
                    .expect("at most 15 hex digits");
                Ok(if size == 0 {
                    State::Trailers
                } else {
                    State::ChunkData(size)
                })
            }
            State::Trailers => {
                if !by_cr {
                    return Err("a trailer line of a plain HTTP request ends with an LF alone; servers read that in different ways".into());
                }
                if line.is_empty() {
                    return Ok(State::Next);
                }
                match line.iter().position(|b| *b == b':') {
                    Some(c) if c > 0 && line[..c].iter().all(|b| tchar(*b)) => Ok(State::Trailers),
                    _ => Err("a trailer line of a plain HTTP request is not a field".into()),
                }
            }
            _ => unreachable!("lines are read only in line states"),
        }
    }

    fn request_line(&mut self, line: &[u8]) -> Result<State, String> {
        if line.is_empty() {
            return Ok(self.state);
        }
        let parts: Vec<&[u8]> = line
            .split(|b| space(*b) || *b == b'\r')
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            // White space alone: an empty line to a server that trims it.
            return Ok(self.state);
        }
        let first = self.state == State::First;
        let not_a_request = || {
            if first {
                // Another protocol: it goes on unread.
                Ok(State::Raw)
            } else {
                Err(format!(
                    "after a plain HTTP request the tunnel carries `{}`, which is not one",
                    String::from_utf8_lossy(&line[..line.len().min(64)]).escape_debug()
                ))
            }
        };
        if !first && (space(line[0]) || !parts[0].iter().all(|b| method_char(*b))) {
            return not_a_request();
        }
        let versioned = parts[1..]
            .iter()
            .any(|p| p.len() >= 5 && p[..5].eq_ignore_ascii_case(b"HTTP/"));
        if !versioned {
            // HTTP/0.9 (`GET target`) is answered at once, with no header: only an absolute
            // target names a host there.
            if parts.len() == 2 && parts[1].windows(3).any(|w| w == b"://") {
                self.saw_request = true;
                if let Some(why) = self.target_names_another(parts[1]) {
                    return Err(why);
                }
            }
            return not_a_request();
        }
        self.saw_request = true;
        let method = parts[0];
        let version = parts.get(2).copied().unwrap_or_default();
        let http1 = |v: &[u8]| {
            v.len() == 8
                && v[..5].eq_ignore_ascii_case(b"HTTP/")
                && (v[5..] == *b"1.1" || v[5..] == *b"1.0")
        };
        if !method.iter().all(|b| tchar(*b)) {
            return Err(format!(
                "the method `{}` of a plain HTTP request is not a token; servers read it in different ways (Python's http.server takes any word)",
                String::from_utf8_lossy(method).escape_debug()
            ));
        }
        if method == b"PRI" {
            return Err("the tunnel carries HTTP/2 in the clear (prior knowledge), whose host is in compressed frames cordon does not read; use HTTP/1.1 or TLS".into());
        }
        if parts.len() != 3 || !http1(version) {
            return Err(format!(
                "`{}` is not a request line cordon can read as a server would (METHOD TARGET HTTP/1.x)",
                String::from_utf8_lossy(&line[..line.len().min(128)]).escape_debug()
            ));
        }
        if method.eq_ignore_ascii_case(b"CONNECT") {
            return Err("a CONNECT inside a tunnel opens another tunnel whose bytes cordon does not read; CONNECT through cordon's proxy instead".into());
        }
        if let Some(why) = self.target_names_another(parts[1]) {
            return Err(why);
        }
        self.head = Head {
            http10: version[5..] == *b"1.0",
            ..Head::default()
        };
        Ok(State::Head)
    }

    /// Why a request target names another host than the tunnel's (an absolute-form target's
    /// authority); an origin-form target (`/path`, `*`) names none.
    fn target_names_another(&self, target: &[u8]) -> Option<String> {
        if target.starts_with(b"/") || target == b"*" {
            return None;
        }
        let text = String::from_utf8_lossy(target);
        let Some((_, rest)) = text.split_once("://") else {
            return Some(format!(
                "the request target `{}` is neither a path nor an absolute URI; a server may read a host in it",
                text.escape_debug()
            ));
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        names_another("target", authority, &self.target)
    }

    fn field(&mut self, line: &[u8]) -> Result<State, String> {
        if line.is_empty() {
            return self.head_end();
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err("a header line of a plain HTTP request is folded onto the one before (obs-fold); servers read that in different ways".into());
        }
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            return Err("a header line of a plain HTTP request has no `:`".into());
        };
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|b| tchar(*b)) {
            return Err(format!(
                "a header name `{}` in a plain HTTP request is not a token (space before the colon?)",
                String::from_utf8_lossy(name).escape_debug()
            ));
        }
        self.head.fields += 1;
        if self.head.fields > MAX_FIELDS {
            return Err(format!(
                "a plain HTTP request has over {MAX_FIELDS} header fields"
            ));
        }
        let value = trim(&line[colon + 1..]);
        let text = || {
            std::str::from_utf8(value).map_err(|_| {
                format!(
                    "the value of `{}` in a plain HTTP request is not text",
                    String::from_utf8_lossy(name)
                )
            })
        };
        if name.eq_ignore_ascii_case(b"host") {
            if self.head.host {
                return Err(
                    "a plain HTTP request has two Host headers; servers pick either".into(),
                );
            }
            self.head.host = true;
            if let Some(why) = names_another("Host", text()?, &self.target) {
                return Err(why);
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            if self.head.length.is_some() {
                return Err("a plain HTTP request has two Content-Length headers".into());
            }
            if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
                return Err(format!(
                    "a plain HTTP request's Content-Length `{}` is not digits alone",
                    String::from_utf8_lossy(value).escape_debug()
                ));
            }
            self.head.length = Some(text()?.parse().expect("at most 18 digits"));
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if self.head.chunked || !value.eq_ignore_ascii_case(b"chunked") {
                return Err(format!(
                    "a plain HTTP request's Transfer-Encoding `{}` is not `chunked` alone; servers frame other codings in different ways",
                    String::from_utf8_lossy(value).escape_debug()
                ));
            }
            self.head.chunked = true;
        } else if name.eq_ignore_ascii_case(b"upgrade") {
            let all_websocket = value
                .split(|b| *b == b',')
                .all(|t| trim(t).eq_ignore_ascii_case(b"websocket"));
            if !all_websocket {
                return Err(format!(
                    "a plain HTTP request asks to upgrade to `{}`; only a WebSocket is let through (h2c carries its host where cordon does not read)",
                    String::from_utf8_lossy(value).escape_debug()
                ));
            }
            self.head.upgrade = true;
        }
        Ok(State::Head)
    }

    fn head_end(&mut self) -> Result<State, String> {
        self.requests += 1;
        let h = &self.head;
        if h.chunked && (h.length.is_some() || h.http10) {
            return Err("a plain HTTP request is framed two ways (Transfer-Encoding with Content-Length, or in HTTP/1.0); servers pick either".into());
        }
        if h.upgrade {
            if h.chunked || h.length.unwrap_or(0) > 0 {
                return Err("a plain HTTP request asks for an upgrade and has a body".into());
            }
            return Ok(State::AwaitUpgrade);
        }
        if h.chunked {
            return Ok(State::ChunkSize);
        }
        match h.length {
            Some(n) if n > 0 => {
                if self.shadow.is_none() {
                    self.shadow = Some((
                        Box::new(Watch {
                            state: State::Next,
                            ..Watch::new(self.target.clone())
                        }),
                        false,
                    ));
                }
                Ok(State::Body(n))
            }
            _ => Ok(State::Next),
        }
    }
}

/// Whether `line`, the start of a tunnel's first line, may still be a request line: a method
/// word ([`method_char`]), then a space or tab.
fn maybe_request_line(line: &[u8]) -> bool {
    // Only the last byte is new: the bytes before it were a method word already.
    let token = match line.last() {
        Some(b) if method_char(*b) => line.len(),
        _ => line.len() - 1,
    };
    match line.get(token) {
        None => true,
        Some(b) if space(*b) => token > 0,
        Some(_) => false,
    }
}

/// What a server may take as the space between a request line's parts: SP and HTAB, VT and
/// FF for one that splits at C's white space (Apache's `Unsafe`), and the file, group, record
/// and unit separators, NEL and NBSP for one that splits at Python's (`http.server` reads the
/// line as Latin-1 and splits it with `str.split()`: `GET\x1c/\x1cHTTP/1.1` with
/// `Host: other` reached other behind it, round 9 of issue 21).
fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0b | 0x0c | 0x1c..=0x1f | 0x85 | 0xa0)
}

/// What a server may take as a method's character: RFC 9110's token characters, and any other
/// visible ASCII for one that takes any word (Python's `http.server`: `G;T / HTTP/1.1` with
/// `Host: other.test` reached other behind it, round 11 of issue 21). Bytes past ASCII, which
/// it takes too, are left to binary protocols: a first line that may be a request holds a CR
/// at its end for the next byte, which would stall a protocol whose message ends so.
fn method_char(b: u8) -> bool {
    b.is_ascii_graphic()
}

/// RFC 9110 §5.6.2's token characters.
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Without leading and trailing spaces and tabs (RFC 9110's OWS).
fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|b| *b != b' ' && *b != b'\t');
    let Some(start) = start else { return &[] };
    let end = v
        .iter()
        .rposition(|b| *b != b' ' && *b != b'\t')
        .expect("not blank");
    &v[start..=end]
}

/// What ended a watched tunnel's reading.
pub(crate) enum Watched {
    /// Bytes go on unread from here (what was read is passed on).
    Raw,
    /// It ended: both sides closed (`None`), or why.
    Ended(Option<String>),
    /// Refused: why (the caller notes it for the run's summary).
    Refused(String),
}

/// Reads a tunnel's client bytes as HTTP ([`Watch`]) while passing them on, starting with
/// `first`, the client's first bytes (not passed on yet); the destination's bytes go back as
/// they come. Returns once the tunnel is not HTTP (or upgraded), ended, or was refused.
pub(crate) async fn watch<C, D>(
    client: &mut C,
    dest: &mut D,
    first: &[u8],
    target: &Target,
) -> std::io::Result<Watched>
where
    C: AsyncRead + AsyncWrite + Unpin,
    D: AsyncRead + AsyncWrite + Unpin,
{
    let mut w = Watch::new(target.clone());
    let mut out = Vec::new();
    let mut step = w.feed(first, &mut out);
    // Whether the destination sent anything yet: a refusal of the tunnel's first request
    // before it did is answered with a 403 naming why; after, or for a later request, a 403
    // would read as the answer to a request that went on, so closing is all that is done (the
    // run's summary names why).
    let mut answered = false;
    let mut a = vec![0u8; 16 * 1024];
    let mut b = vec![0u8; 16 * 1024];
    // The start of the destination's answer to an upgrade request.
    let mut status = Vec::new();
    let mut dest_done = false;
    loop {
        match step {
            Step::Refuse(why) => {
                if !answered && w.requests == 0 {
                    let body = format!("cordon: the request is refused: {why}\n");
                    let _ = client
                        .write_all(
                            format!(
                                "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        )
                        .await;
                }
                let _ = client.shutdown().await;
                return Ok(Watched::Refused(why));
            }
            Step::Raw => {
                dest.write_all(&out).await?;
                return Ok(Watched::Raw);
            }
            Step::Go | Step::AwaitUpgrade => {
                if !out.is_empty() {
                    dest.write_all(&out).await?;
                    out.clear();
                }
            }
        }
        let awaiting = step == Step::AwaitUpgrade;
        if awaiting && dest_done {
            return Ok(Watched::Ended(None));
        }
        let spoke = crate::relay::first(
            async {
                if awaiting {
                    std::future::pending::<std::io::Result<Side>>().await
                } else {
                    client.read(&mut a).await.map(Side::Client)
                }
            },
            async {
                if dest_done {
                    std::future::pending::<std::io::Result<Side>>().await
                } else {
                    dest.read(&mut b).await.map(Side::Dest)
                }
            },
        )
        .await?;
        match spoke {
            Side::Client(0) => {
                // The client is done sending: nothing more to read; the relay finishes.
                return Ok(Watched::Raw);
            }
            Side::Client(n) => step = w.feed(&a[..n], &mut out),
            Side::Dest(0) => {
                dest_done = true;
                client.shutdown().await?;
            }
            Side::Dest(n) => {
                answered = true;
                client.write_all(&b[..n]).await?;
                if awaiting {
                    let want = 12 - status.len().min(12);
                    status.extend_from_slice(&b[..n.min(want)]);
                    if status.len() >= 12 {
                        // `HTTP/1.1 101`: the destination switched protocols.
                        let upgraded =
                            status[..5].eq_ignore_ascii_case(b"HTTP/") && &status[8..12] == b" 101";
                        status.clear();
                        step = w.answered(upgraded, &mut out);
                    }
                }
            }
        }
    }
}

/// Which side of a tunnel sent bytes, and how many.
enum Side {
    Client(usize),
    Dest(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> Watch {
        Watch::new(Target::new("front.test", 80).unwrap())
    }

    /// Feeds `input` byte by byte (the worst split) and whole: the same outcome, and what
    /// went on.
    fn run(input: &[u8]) -> (Step, Vec<u8>) {
        let mut whole = Vec::new();
        let a = watch().feed(input, &mut whole);
        let mut w = watch();
        let mut split = Vec::new();
        let mut b = Step::Go;
        for byte in input {
            b = w.feed(std::slice::from_ref(byte), &mut split);
            if matches!(b, Step::Refuse(_) | Step::Raw | Step::AwaitUpgrade) {
                break;
            }
        }
        if b == Step::Raw {
            assert!(input.starts_with(&split), "split raw");
        }
        assert_eq!(
            std::mem::discriminant(&a),
            std::mem::discriminant(&b),
            "{}: whole {a:?}, split {b:?}",
            String::from_utf8_lossy(input)
        );
        (a, whole)
    }

    fn refused(input: &[u8]) -> String {
        match run(input) {
            (Step::Refuse(why), out) => {
                // Nothing that went on ends the line that was refused.
                assert!(input.starts_with(&out), "{out:?}");
                why
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(input)),
        }
    }

    #[test]
    fn another_host_is_refused_before_its_line_ends() {
        for fronted in [
            &b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n"[..],
            b"\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"GET http://other.test/ HTTP/1.1\r\nHost: front.test\r\n\r\n",
            b"GET http://other.test/\r\n",
            // White space a lenient server splits at: VT, FF, a CR alone.
            b"GET\x0b/\x0cHTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"GET\r/\rHTTP/1.1\r\nHost: other.test\r\n\r\n",
            // White space before the method, for a server that trims it.
            b" \tGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            // ... and at what Python's str.split() takes for white space.
            b"GET\x1c/\x1dHTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"GET\x85/\xa0HTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"get / http/1.1\r\nhOsT:  other.test:80 \r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: front.test@other.test\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: front.test:8080\r\n\r\n",
            // Pipelined: the second request names another host.
            b"GET / HTTP/1.1\r\nHost: front.test\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            // After a body and after a chunked body.
            b"POST / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: front.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            // Hidden in a body, for a destination that ignores it (CL.0).
            b"POST / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 40\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n\r\n",
            // ... whose last line ends past the body, and HTTP/0.9 so.
            b"POST / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 32\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 22\r\n\r\nGET http://other.test/\r\n",
        ] {
            let why = refused(fronted);
            assert!(why.contains("not the tunnel's host front.test:80"), "{why}");
        }
    }

    #[test]
    fn what_servers_read_in_different_ways_is_refused() {
        for (input, says) in [
            (
                &b"GET / HTTP/1.1\r\nHost: front.test\r\n other.test\r\n\r\n"[..],
                "obs-fold",
            ),
            (
                b"GET / HTTP/1.1\r\nHost : other.test\r\n\r\n",
                "not a token",
            ),
            (
                b"GET / HTTP/1.1\r\nHost: front.test\r\nHost: front.test\r\n\r\n",
                "two Host",
            ),
            (b"GET / HTTP/1.1\rHost: other.test\r\n\r\n", "not a request line"),
            (b"GET / HTTP/1.1\r\nHost: front.test\rX: y\r\n\r\n", "CR alone"),
            (b"GET / HTTP/1.1\nHost: front.test\n\n", "LF alone"),
            (b"POST / HTTP/1.1\r\nHost: front.test\r\nTransfer-Encoding: chunked\r\nX: a\n\n5\r\n\r\nHost: other.test\r\n\r\n", "LF alone"),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                "two ways",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
                "chunked` alone",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
                "two Content-Length",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
                "digits alone",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
                "LF alone",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n",
                "hex digits",
            ),
            // A chunk extension: to a destination that ignores Transfer-Encoding, the line is
            // the next request line.
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0;x / HTTP/1.1\r\nHost: other.test\r\n\r\n",
                "chunk extension",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n",
                "chunk extension",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
                "CRLF",
            ),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2"),
            // A method that is not a token, first and hidden in a body.
            (b"G;T / HTTP/1.1\r\nHost: other.test\r\n\r\n", "not a token"),
            (
                b"GET / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 38\r\n\r\nG;T / HTTP/1.1\r\nHost: other.test\r\n\r\n",
                "not a token",
            ),
            (b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", "h2c"),
            (b"CONNECT other.test:443 HTTP/1.1\r\n\r\n", "CONNECT"),
            (b"GET / HTTP/1.1 x\r\n", "request line"),
            (b"GET other.test:80 HTTP/1.1\r\n", "neither a path"),
            (
                b"GET / HTTP/1.1\r\nHost: front.test\r\n\r\nxyz\r\n",
                "not one",
            ),
        ] {
            let why = refused(input);
            assert!(
                why.contains(says),
                "{}: {why}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn other_protocols_and_own_requests_go_on() {
        // Another protocol: unread from its first line (or first byte) on, all of it passed.
        for other in [
            &b"get key\r\n"[..],
            b"*1\r\n$4\r\nPING\r\n",
            b"\x00\x00\x00\x08\x04\xd2\x16\x2f",
            b"SSH-2.0-OpenSSH_9.6\r\n",
            b"GET /\r\nHost: other.test\r\n\r\n",
            b"then silence\nHost: other.test\r\n\r\n",
            b"listed",
        ] {
            let (step, out) = run(other);
            if other == b"listed" {
                assert_eq!((step, out), (Step::Go, other.to_vec()), "no byte held");
            } else {
                assert_eq!((step, out), (Step::Raw, other.to_vec()));
            }
        }
        // A line of white space alone, then a request for the tunnel's host.
        let blank = b" \t\r\nGET / HTTP/1.1\r\nHost: front.test\r\n\r\n";
        assert_eq!(run(blank), (Step::Go, blank.to_vec()));
        // Leading CRs and LFs in any order, as servers skip them.
        let crs = b"\r\r\n\r";
        assert_eq!(run(crs), (Step::Go, crs.to_vec()));
        // git:// sends one line-less message and waits: all of it goes on at once.
        let git = b"0033git-upload-pack /p.git\0host=front.test\0";
        assert_eq!(run(git), (Step::Go, git.to_vec()));
        // The tunnel's own host, in every spelling, with bodies: all of it goes on.
        let own = b"GET / HTTP/1.1\r\nHost: FRONT.test:80\r\n\r\n\
            GET http://front.test/x HTTP/1.0\r\n\r\n\
            POST / HTTP/1.1\r\nHost: front.test\r\nContent-Length: 5\r\n\r\nhello\
            POST / HTTP/1.1\r\nHost: front.test\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(run(own), (Step::Go, own.to_vec()));
        // An upgrade waits for the destination's answer; a 101 makes the rest raw.
        let ws = b"GET /chat HTTP/1.1\r\nHost: front.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        let mut w = watch();
        let mut out = Vec::new();
        let mut input = ws.to_vec();
        input.extend_from_slice(b"\x81\x85frame");
        assert_eq!(w.feed(&input, &mut out), Step::AwaitUpgrade);
        assert_eq!(out, ws.to_vec());
        out.clear();
        assert_eq!(w.answered(true, &mut out), Step::Raw);
        assert_eq!(out, b"\x81\x85frame");
        // Refused upgrade: what follows is read as requests again.
        let mut w = watch();
        let mut out = Vec::new();
        let mut input = ws.to_vec();
        input.extend_from_slice(b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n");
        assert_eq!(w.feed(&input, &mut out), Step::AwaitUpgrade);
        assert!(matches!(w.answered(false, &mut out), Step::Refuse(_)));
    }
}
