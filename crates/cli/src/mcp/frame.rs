//! The line framing in front of the MCP handler: every line the client sends gets an answer.
//!
//! rmcp drops a line that is not JSON, and one longer than its limit, without a word (by
//! design: a reply to garbage can start an error storm with a peer that echoes it), and a
//! client whose request was lost waits for ever. cordon answers each such line with one
//! JSON-RPC error (`-32700` parse error, `-32600` for a line over [`MAX_LINE`]) carrying the
//! request's id when it can be read from the line's start, `null` otherwise; what is well
//! formed goes on to rmcp unchanged. The error storm cannot start: cordon answers lines, and
//! a peer that echoes cordon's answers echoes valid JSON.
//!
//! Both directions go through here, whole lines at a time, so that an error line is never
//! written into the middle of one of rmcp's.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest request line accepted (rmcp's own limit): a file written through `write_file`
/// travels in one line.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// rmcp's side of the framing: what it reads and where it writes.
pub type Transport = (
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
);

/// Starts copying between the client (`input`, `output`) and the returned transport, which
/// rmcp serves. Ends when the client closes its input (rmcp then sees end of file) or rmcp
/// closes its side.
pub fn start<R, W>(input: R, output: W) -> Transport
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let output = Arc::new(Mutex::new(output));
    // rmcp → client, a whole line at a time.
    let out = output.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let mut w = out.lock().await;
                    if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    // client → rmcp, answering what rmcp would drop.
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        // Every request id the client used in this session. A request reusing one is answered
        // with an error and never reaches rmcp, whose table of requests under way is keyed by
        // the id: a second `tools/call` with the id of one still running took its entry, so a
        // `notifications/cancelled` for the id stopped only the newer call and the first ran
        // on out of the client's reach (and their answers and audit records were one id's).
        // MCP forbids the reuse ("MUST NOT have been previously used ... within the same
        // session"), so refusing it breaks no client that follows the protocol.
        let mut used = std::collections::HashSet::new();
        loop {
            match read_line(&mut input).await {
                Line::Eof => break,
                Line::Whole(line) => {
                    let text = line.strip_suffix(b"\n").unwrap_or(&line);
                    let text = text.strip_suffix(b"\r").unwrap_or(text);
                    if text.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(text) {
                        if let Some(id) = v.get("method").and(v.get("id")) {
                            if !used.insert(id_key(id)) {
                                let answer = error(id.clone(), -32600, &format!("cordon: request id {id} was already used in this session; this request was dropped (each request needs an id of its own)"));
                                if write_line(&output, &answer).await.is_err() {
                                    break;
                                }
                                continue;
                            }
                        }
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                        if !line.ends_with(b"\n") && to_rmcp.write_all(b"\n").await.is_err() {
                            break;
                        }
                        continue;
                    }
                    let answer = error(id_of(text), -32700, "cordon: the request is not valid JSON (one JSON-RPC message per line); it was dropped");
                    if write_line(&output, &answer).await.is_err() {
                        break;
                    }
                }
                Line::TooLong(start) => {
                    let answer = error(
                        id_of(&start),
                        -32600,
                        &format!(
                            "cordon: the request is longer than {} MiB; it was dropped",
                            MAX_LINE >> 20
                        ),
                    );
                    if write_line(&output, &answer).await.is_err() {
                        break;
                    }
                }
            }
        }
        // End of the client's input: rmcp sees end of file and ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    tokio::io::split(theirs)
}

/// A JSON-RPC id as a peer tells ids apart: a number by its value (`5` and `5.0` are one id to
/// rmcp, and to a JavaScript or Python peer), anything else by its JSON text.
pub fn id_key(id: &serde_json::Value) -> String {
    match id.as_f64() {
        Some(f) if !id.is_i64() && !id.is_u64() && f.fract() == 0.0 && f.abs() < 2f64.powi(53) => {
            format!("{}", f as i64)
        }
        _ => id.to_string(),
    }
}

pub enum Line {
    Whole(Vec<u8>),
    /// Longer than [`MAX_LINE`]: its first bytes (the rest was read and dropped).
    TooLong(Vec<u8>),
    Eof,
}

/// One line of at most [`MAX_LINE`] bytes, never buffering more.
pub async fn read_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Line {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf().await {
            Ok(b) => b,
            Err(_) => return Line::Eof,
        };
        if buf.is_empty() {
            return match (line.is_empty(), too_long) {
                (true, false) => Line::Eof,
                (_, true) => Line::TooLong(line),
                (false, false) => Line::Whole(line),
            };
        }
        let (take, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if !too_long {
            if line.len() + take > MAX_LINE {
                too_long = true;
                // Keep the start: the id is looked for there.
                let keep = 4096usize.saturating_sub(line.len()).min(take);
                line.extend_from_slice(&buf[..keep]);
                line.truncate(4096);
            } else {
                line.extend_from_slice(&buf[..take]);
            }
        }
        input.consume(take);
        if end {
            return if too_long {
                Line::TooLong(line)
            } else {
                Line::Whole(line)
            };
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &Mutex<W>,
    value: &serde_json::Value,
) -> std::io::Result<()> {
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    let mut w = output.lock().await;
    w.write_all(&line).await?;
    w.flush().await
}

pub fn error(id: serde_json::Value, code: i64, message: &str) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    })
}

/// The request's id, when the line's start names one at the top level (`"id": 7` or
/// `"id": "abc"`, before any nested object); `null` otherwise.
pub fn id_of(text: &[u8]) -> serde_json::Value {
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                // A string: the key `id` at depth 1, or skipped.
                let start = i + 1;
                let mut j = start;
                while j < text.len() && text[j] != b'"' {
                    j += if text[j] == b'\\' { 2 } else { 1 };
                }
                if j >= text.len() {
                    break;
                }
                if depth == 1 && &text[start..j] == b"id" {
                    let rest = &text[j + 1..];
                    let rest = rest.trim_ascii_start();
                    if let Some(rest) = rest.strip_prefix(b":") {
                        return value_start(rest.trim_ascii_start());
                    }
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    serde_json::Value::Null
}

/// A number or a string at the start of `text`, as JSON; `null` otherwise.
fn value_start(text: &[u8]) -> serde_json::Value {
    let end = if text.first() == Some(&b'"') {
        let mut j = 1;
        while j < text.len() && text[j] != b'"' {
            j += if text[j] == b'\\' { 2 } else { 1 };
        }
        (j + 1).min(text.len())
    } else {
        text.iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))
            .unwrap_or(text.len())
    };
    match serde_json::from_slice::<serde_json::Value>(&text[..end]) {
        Ok(v @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => v,
        _ => serde_json::Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_the_top_level_only() {
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","id":7,"method":"x","#), 7);
        assert_eq!(id_of(br#"{"id" : "a\"b", "params": {"#), "a\"b");
        assert_eq!(
            id_of(br#"{"params":{"id":3},"x":1"#),
            serde_json::Value::Null
        );
        assert_eq!(id_of(br#"{"method":"x","params":{"id":3},"id":4"#), 4);
        assert_eq!(id_of(b"not json"), serde_json::Value::Null);
        assert_eq!(id_of(br#"{"id":{"nested":1}}"#), serde_json::Value::Null);
    }
}
