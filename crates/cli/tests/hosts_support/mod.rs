//! The real agent hosts, driven by a mock model server of the project's own.
//!
//! The mock listens on 127.0.0.1 and speaks the Anthropic Messages API (`POST /v1/messages`,
//! streamed or not; Claude Code) and the OpenAI Responses API (`POST /v1/responses`,
//! streamed; Codex) and the Gemini API (`POST /v1beta/models/M:streamGenerateContent`; Gemini
//! CLI) as far as a host needs for one scripted turn: while no tool result has
//! come back it answers with one tool call (the scripted [`Turn`]); once the host sends the
//! tool's result it answers with plain text and the turn ends. Every request body is kept, so
//! a test reads what the host told the model (a deny's reason, a command's output).
//!
//! The hosts come from `scripts/test-deps.sh` (pinned, under `$CORDON_TEST_DEPS`, default
//! `/opt/cordon-test`); a missing host fails its test naming that script.
#![allow(dead_code)] // each host's test uses a different subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

// Only the test suites: `examples/hosts-mock.rs` (the bench's mock) includes this module too,
// and an example has no `CARGO_BIN_EXE_cordon`.
#[cfg(test)]
pub mod scenario;

/// The policy the hosts' hook decides under.
pub const POLICY: &str = r#"version = 1

[sandbox]
env = ["CORDON_HOSTS_PROBE"]

[sandbox.paths.workspace]
root = "."
mode = "rw"

[shell]
default = "allow"

[[shell.rules]]
pattern = "git push"
action = "ask"
reason = "publishes commits"

[[shell.rules]]
pattern = "rm -rf"
action = "deny"
reason = "destroys files"
"#;

/// A host's program from `scripts/test-deps.sh`; panics naming the script when it is missing.
pub fn host_bin(name: &str) -> PathBuf {
    let prefix = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let p = prefix.join("npm/node_modules/.bin").join(name);
    assert!(
        p.exists(),
        "{} is missing: run scripts/test-deps.sh (it installs the pinned agent hosts)",
        p.display()
    );
    p
}

/// CODEX_HOME's `config.toml` trusting `project`, with Codex's update checks and analytics
/// off.
pub fn codex_config(project: &Path) -> String {
    format!(
        "check_for_update_on_startup = false\n\n\
         [analytics]\nenabled = false\n\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.canonicalize().unwrap().display()
    )
}

/// The unprivileged user to run the host as when the tests run as root: the escape suite's
/// `cordon-test` (`cordon_e2e::test_user`, created once when missing); else none (already
/// unprivileged).
pub fn unprivileged() -> Option<(u32, u32)> {
    rustix::process::geteuid()
        .is_root()
        .then(cordon_e2e::test_user)
}

/// A decision that cannot be recorded: the policy file `policy` gets an audit log of its own
/// (in the returned directory), whose lock (`audit.jsonl.lock`) the test holds until it drops
/// the returned file. The hook then waits for the lock and its deadline passes first.
#[allow(dead_code)]
pub fn audit_lock_held(policy: &Path) -> (tempfile::TempDir, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut text = std::fs::read_to_string(policy).unwrap();
    text.push_str(&format!(
        "\n[approval]\naudit_log = \"{}\"\n",
        log.display()
    ));
    std::fs::write(policy, text).unwrap();
    let lock = std::fs::File::create(dir.path().join("audit.jsonl.lock")).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    (dir, lock)
}

/// The child's output, or a panic (after killing it) when it runs past `limit`.
pub fn wait_deadline(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "the host ran past {limit:?}\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The one tool call the mock model asks for.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The host's tool name (`Bash`, `Write`).
    pub tool: String,
    /// Its input.
    pub input: Value,
}

/// The mock model server; it stops with the test process.
pub struct Mock {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// The tool calls the mock asks for, in order: each request that offers the next one's tool
/// and has no tool result in it (a fresh conversation: the host's, or a subagent's the host
/// started) gets it. The last is asked for again by every such request (a host that repeats
/// a request gets the same answer, as with one turn).
struct Script {
    turns: Vec<Turn>,
    issued: Mutex<usize>,
    /// [`Mock::chain`]'s steps: in place of `turns` when not empty.
    steps: Vec<Step>,
}

/// One step of a [`Mock::chain`]: the call to ask for (none: text), from the request and the
/// tool results in it so far.
pub type Step = Box<dyn Fn(&Value, &[String]) -> Option<Turn> + Send + Sync>;

impl Script {
    /// The call `req` is answered with, and its number (from 1), if any.
    fn next(&self, req: &Value) -> Option<(Turn, usize)> {
        if !self.steps.is_empty() {
            let mut results = Vec::new();
            results_of(req, &mut results);
            let i = results.len();
            let t = self.steps.get(i).and_then(|s| s(req, &results))?;
            return offers(req, &t.tool).then_some((t, i + 1));
        }
        if has_tool_result(req) {
            return None;
        }
        let mut issued = self.issued.lock().unwrap();
        let i = *issued;
        let t = self.turns.get(i).filter(|t| offers(req, &t.tool))?;
        if i + 1 < self.turns.len() {
            *issued += 1;
        }
        Some((t.clone(), i + 1))
    }
}

impl Mock {
    pub fn start(turn: Turn) -> Mock {
        Mock::script(vec![turn])
    }

    /// A mock that asks for `turns` one after the other ([`Script`]): a call the host makes
    /// from inside another (a subagent's), or a follow-up in a new session.
    pub fn script(turns: Vec<Turn>) -> Mock {
        Mock::serve_script(Script {
            turns,
            issued: Mutex::new(0),
            steps: Vec::new(),
        })
    }

    /// A mock that asks, in one conversation, for one call after the other: the `i`th step
    /// answers a request that carries `i` tool results, given their texts (a call built from
    /// an earlier call's output, such as Codex's `write_stdin` to the session `exec_command`
    /// left running). A request with as many results as steps gets text. A sub-agent's
    /// conversation starts again at the first step: a step tells it by the request.
    pub fn chain(steps: Vec<Step>) -> Mock {
        Mock::serve_script(Script {
            turns: Vec::new(),
            issued: Mutex::new(0),
            steps,
        })
    }

    fn serve_script(script: Script) -> Mock {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let script = Arc::new(script);
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let (seen, script) = (seen.clone(), script.clone());
                std::thread::spawn(move || {
                    let _ = serve(s, &script, &seen);
                });
            }
        });
        Mock { port, requests }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request body the host sent to `/v1/messages`.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The text of every tool result the host sent back to the model, in order.
    pub fn tool_results(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.requests() {
            let mut here = Vec::new();
            results_of(&r, &mut here);
            for text in here {
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
        out
    }

    /// The name of every tool the host offered the model in any request (a built-in tool
    /// without a name, such as the Responses API's `web_search`, by its `type`).
    pub fn offered_tools(&self) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        for r in self.requests() {
            for t in r["tools"].as_array().into_iter().flatten() {
                if let Some(fs) = t["functionDeclarations"].as_array() {
                    out.extend(
                        fs.iter()
                            .filter_map(|f| f["name"].as_str())
                            .map(String::from),
                    );
                } else if let Some(n) = t["name"].as_str().or(t["type"].as_str()) {
                    out.insert(n.to_string());
                }
            }
        }
        out
    }

    /// Waits (at most `limit`, generous for a loaded 2-core machine) until a tool result has
    /// come back, then a second more for any further one: for an interactive session, which
    /// does not end by itself.
    pub fn await_result(&self, limit: Duration) {
        let end = Instant::now() + limit;
        while self.tool_results().is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(200));
        }
        std::thread::sleep(Duration::from_secs(1));
    }

    /// Whether the host ever offered the model `tool`: the mock only asks for a tool the
    /// host offers (the hosts also make side requests without tools, e.g. for a title).
    pub fn offered(&self, tool: &str) -> bool {
        self.requests().iter().any(|r| offers(r, tool))
    }

    /// The one tool result a scripted turn brought back to the model, after checking that
    /// `host` (its run's output `o`, shown on failure) offered `tool` and sent back exactly
    /// one result: a host that never offered the tool would pass every "nothing ran" check.
    pub fn the_one_result(&self, host: &str, tool: &str, o: &Output) -> String {
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(
            self.offered(tool),
            "{host} never offered {tool}: {out}\n{err}"
        );
        let results = self.tool_results();
        assert_eq!(
            results.len(),
            1,
            "one tool result expected; {host}: {out}\n{err}\nresults: {results:?}"
        );
        results[0].clone()
    }
}

/// The text of every tool result in one request body, added to `out` unless already there.
fn results_of(r: &Value, out: &mut Vec<String>) {
    // Gemini API: `functionResponse` parts.
    for c in r["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            if let Some(fr) = p.get("functionResponse") {
                let text = fr["response"].to_string();
                out.push(text);
            }
        }
    }
    // Responses API: `input` items of type function_call_output (custom_tool_call_output
    // for a freeform tool).
    for i in r["input"].as_array().into_iter().flatten() {
        if i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output" {
            let text = match &i["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push(text);
        }
    }
    for m in r["messages"].as_array().into_iter().flatten() {
        for c in m["content"].as_array().into_iter().flatten() {
            if c["type"] == "tool_result" {
                let text = match &c["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                };
                out.push(text);
            }
        }
    }
}

/// Whether `body` offers `tool`; `NAMESPACE/NAME` is a tool inside a Responses API namespace
/// (Codex's `multi_agent_v1/spawn_agent`).
fn offers(body: &Value, tool: &str) -> bool {
    if let Some((ns, name)) = tool.split_once('/') {
        return body["tools"].as_array().is_some_and(|t| {
            t.iter().any(|t| {
                t["name"] == ns
                    && t["tools"]
                        .as_array()
                        .is_some_and(|f| f.iter().any(|f| f["name"] == name))
            })
        });
    }
    body["tools"].as_array().is_some_and(|t| {
        t.iter().any(|t| {
            t["name"] == tool
                || t["functionDeclarations"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["name"] == tool))
        })
    })
}

fn has_tool_result(body: &Value) -> bool {
    let responses = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output");
    let gemini = body["contents"].as_array().into_iter().flatten().any(|c| {
        c["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p.get("functionResponse").is_some())
    });
    responses
        || gemini
        || body["messages"].as_array().into_iter().flatten().any(|m| {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "tool_result")
        })
}

/// One request on `s` (the answer closes the connection).
fn serve(s: TcpStream, script: &Script, seen: &Mutex<Vec<Value>>) -> std::io::Result<()> {
    let mut r = BufReader::new(s.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let (mut len, mut chunked) = (0usize, false);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(len, 0);
        r.read_exact(&mut body)?;
    }
    let mut w = s;
    if path.starts_with("/v1/responses") {
        return responses(&mut w, &body, script, seen);
    }
    if path.starts_with("/v1beta/models/") {
        return gemini(&mut w, &path, &body, script, seen);
    }
    if !path.starts_with("/v1/messages") || path.starts_with("/v1/messages/count_tokens") {
        let b = if path.starts_with("/v1/messages/count_tokens") {
            r#"{"input_tokens":10}"#
        } else {
            "{}"
        };
        return write!(
            w,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
            b.len()
        );
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(req.clone());
    let model = req["model"].as_str().unwrap_or("mock").to_string();
    let next = script.next(&req);
    let call = next.is_some();
    let (turn, n) = next.unwrap_or_else(|| {
        (
            Turn {
                tool: String::new(),
                input: Value::Null,
            },
            0,
        )
    });
    let id = format!("toolu_cordon_{n}");
    let content = if call {
        json!([{ "type": "tool_use", "id": id, "name": turn.tool, "input": turn.input }])
    } else {
        json!([{ "type": "text", "text": "done" }])
    };
    let stop = if call { "tool_use" } else { "end_turn" };
    if req["stream"] == true {
        let mut ev = String::new();
        let mut push = |name: &str, data: Value| {
            ev.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        };
        push(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_cordon", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        );
        if call {
            push(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": id, "name": turn.tool, "input": {}}}),
            );
            push(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta":
                    {"type": "input_json_delta", "partial_json": turn.input.to_string()}}),
            );
        } else {
            push(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "text", "text": ""}}),
            );
            push(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta":
                    {"type": "text_delta", "text": "done"}}),
            );
        }
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        );
        push(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": 5}}),
        );
        push("message_stop", json!({"type": "message_stop"}));
        write!(
            w,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n{ev}"
        )
    } else {
        let b = json!({"id": "msg_cordon", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}})
        .to_string();
        write!(
            w,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
            b.len()
        )
    }
}

/// One streamed Responses API answer: the scripted function call, or text once its output
/// came back.
fn responses(
    w: &mut TcpStream,
    body: &[u8],
    script: &Script,
    seen: &Mutex<Vec<Value>>,
) -> std::io::Result<()> {
    let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(req.clone());
    let item = if let Some((turn, n)) = script.next(&req) {
        match &turn.input {
            // A freeform (custom) tool, such as Codex's apply_patch: its input is raw text.
            Value::String(text) => {
                json!({"type": "custom_tool_call", "id": format!("ctc_cordon_{n}"),
                "call_id": format!("call_cordon_{n}"), "name": turn.tool, "input": text})
            }
            _ => {
                let mut call = json!({"type": "function_call", "id": format!("fc_cordon_{n}"),
                    "call_id": format!("call_cordon_{n}"), "name": turn.tool,
                    "arguments": turn.input.to_string()});
                if let Some((ns, name)) = turn.tool.split_once('/') {
                    call["namespace"] = json!(ns);
                    call["name"] = json!(name);
                }
                call
            }
        }
    } else {
        json!({"type": "message", "role": "assistant", "id": "msg_cordon",
            "content": [{"type": "output_text", "text": "done"}]})
    };
    let usage = json!({"input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
        "output_tokens_details": null, "total_tokens": 15});
    let mut ev = String::new();
    for (name, data) in [
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_cordon"}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_cordon", "usage": usage}}),
        ),
    ] {
        ev.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    write!(
        w,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{ev}",
        ev.len()
    )
}

/// One Gemini API answer (streamed with `alt=sse`): the scripted function call, or text once
/// its response came back. Requests without tools (Gemini CLI's model router) get text.
fn gemini(
    w: &mut TcpStream,
    path: &str,
    body: &[u8],
    script: &Script,
    seen: &Mutex<Vec<Value>>,
) -> std::io::Result<()> {
    let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(req.clone());
    let parts = if let Some((turn, _)) = script.next(&req) {
        json!([{ "functionCall": { "name": turn.tool, "args": turn.input } }])
    } else {
        json!([{ "text": "done" }])
    };
    let answer = json!({
        "candidates": [{ "content": { "role": "model", "parts": parts },
            "finishReason": "STOP", "index": 0 }],
        "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 5,
            "totalTokenCount": 15 },
    });
    let (ctype, b) = if path.contains("alt=sse") {
        ("text/event-stream", format!("data: {answer}\r\n\r\n"))
    } else {
        ("application/json", answer.to_string())
    };
    write!(
        w,
        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
        b.len()
    )
}
