//! `cordon mcp wrap [--name NAME] -- CMD [ARGS…]`: a third-party stdio MCP server run once
//! under the kernel sandbox, with a decision per `tools/call`.
//!
//! The wrapper is a framed relay: every line is one JSON-RPC message, parsed, and forwarded
//! unchanged unless it is one of the few the wrapper acts on:
//!
//! - `initialize` (client → server): the client's name (for the audit records) and whether it
//!   can show a form (elicitation) are noted; it is forwarded.
//! - `tools/call`: decided first, through the gate (`[mcp]` rules on `SERVER/TOOL`, session
//!   grants, modes, the doom loop; recorded before anything is forwarded). An ask is an
//!   `elicitation/create` request of the wrapper's own to the client; a client that cannot
//!   show a form is refused naming the rule and how to approve. A refused call gets an error
//!   result (`isError: true`) whose text says why; the server never sees it. An allowed
//!   call's answer is relayed only after the after-run scan of what the server left in its
//!   roots meanwhile (moved aside, warned about, recorded as that call's).
//! - `tools/list` answers (server → client): tools the rules deny are left out.
//! - answers to the wrapper's own elicitations are taken, not forwarded.
//!
//! Everything else — resources, prompts, sampling and elicitation requests of the server,
//! notifications, progress, `notifications/cancelled` — passes through unchanged (a
//! cancellation of a call still being decided also stops it from being forwarded). A server
//! request using the wrapper's own ids (`cordon-wrap-…`) is refused: the client's answer to
//! it would be taken as an approval.
//!
//! The roots are watched live too ([`wrap_live`]): any write under them, while the server is
//! idle as well, triggers the same check within a quarter of a second (one check at a time).
//!
//! Lifecycle: the server starts when the client's first message arrives (so that the gate
//! knows the client), under [`cordon_gate::Gate::serve`]; its stderr is the wrapper's. It
//! dies with the wrapper (the sandbox's parent-death signal), and the wrapper ends it when the
//! client closes stdin (its stdin closed, then killed with its whole tree after a grace
//! period). When the server exits, every request it had not answered gets a JSON-RPC error,
//! the after-run scan runs, and the wrapper exits. A request the server leaves unanswered
//! for `--call-timeout` gets an error too, and the server a `notifications/cancelled`.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use cordon_approval::{Answer, AskError, AsyncAsker, Pending, Request};
use cordon_gate::{Cancel, Gate, Options, Outcome};
use rmcp::model::ElicitResult;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use super::elicit;
use super::frame::{self, Line};
use super::wrap_live;
use crate::EXIT_FAILURE;

#[derive(Args)]
pub struct WrapArgs {
    /// Policy file (default: ./cordon.toml, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// OS sandbox backend (overrides the policy's sandbox.backend): auto, landlock, bwrap,
    /// seatbelt or none.
    #[arg(long, value_parser = super::parse_backend)]
    backend: Option<cordon_policy::Backend>,
    /// Keep "approve for this session" grants across servers started with the same name
    /// (default: $CORDON_SESSION).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// The server's name in the [mcp] rules' SERVER/TOOL keys (default: CMD's file name).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// How long a request may wait for the server's answer before the client gets an error
    /// (e.g. 30s, 10m).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    call_timeout: Duration,
    /// The MCP server to run (a stdio server) and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

fn parse_duration(s: &str) -> Result<Duration, crate::Error> {
    cordon_policy::parse_duration(s)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| crate::Error::failure(format!("invalid duration `{s}` (e.g. 30s, 10m)")))
}

/// How long the server may take to exit after its stdin closed before its tree is killed.
const GRACE: Duration = Duration::from_secs(2);

/// Runs the wrapper until the client closes stdin or the server exits; the exit code.
pub fn run(args: WrapArgs) -> i32 {
    let name = match server_name(args.name.as_deref(), &args.command) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("cordon: mcp wrap: {e}");
            return EXIT_FAILURE;
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cordon: mcp wrap: cannot read the current directory: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut opts = Options::new(cwd);
    opts.policy = args.policy;
    opts.backend = args.backend;
    opts.front_end = cordon_gate::FrontEnd::Mcp;
    opts.session = args.session.or_else(|| {
        std::env::var("CORDON_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    // A policy or sandbox that cannot work stops the wrapper at start, not at the first call.
    if let Err(e) = Gate::open(opts.clone()).and_then(|g| g.serve_dir()) {
        eprintln!("cordon: mcp wrap: {e}");
        return e.exit_code();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cordon: mcp wrap: cannot start the async runtime: {e}");
            return EXIT_FAILURE;
        }
    };
    let wrap = Wrap {
        name,
        argv: args.command,
        call_timeout: args.call_timeout,
    };
    let code = runtime.block_on(wrap.serve(opts));
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

/// `--name`, or CMD's file name: one word without `/` (it is the first half of the key).
fn server_name(name: Option<&str>, command: &[String]) -> Result<String, super::Error> {
    let name = match name {
        Some(n) => n.to_string(),
        None => command
            .first()
            .and_then(|c| std::path::Path::new(c).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if name.is_empty()
        || name.contains('/')
        || name.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(super::Error::ServerName(name));
    }
    Ok(name)
}

struct Wrap {
    name: String,
    argv: Vec<String>,
    call_timeout: Duration,
}

/// What a request forwarded to the server is, for its answer.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    ToolsList,
    /// An allowed tool call, with its decision's audit id: its answer waits for the scan of
    /// what the server left meanwhile ([`State::scan_after_call`]).
    ToolsCall(String),
    Other,
}

/// The relay's shared state.
struct State {
    name: String,
    gate: Arc<Gate>,
    to_client: mpsc::UnboundedSender<Value>,
    to_server: Mutex<Option<mpsc::UnboundedSender<Value>>>,
    /// Requests forwarded to the server and not answered yet, by their id (as JSON text).
    pending: Mutex<HashMap<String, (Value, Kind)>>,
    /// Calls being decided (each with its cancel: set when the client cancels it, which
    /// ends its open form), and those of them the client cancelled meanwhile.
    deciding: Mutex<HashMap<String, watch::Sender<bool>>>,
    cancelled: Mutex<HashSet<String>>,
    /// Every request id the client used in this session (see `client_message`).
    used: Mutex<HashSet<String>>,
    /// The wrapper's own requests to the client (elicitations), by id.
    asks: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    can_elicit: std::sync::atomic::AtomicBool,
    /// Why the server is gone, once it is.
    gone: Mutex<Option<String>>,
    /// The after-run scan done after each tool call and on the live watch's trigger (`None`:
    /// a gate that runs nothing). Held for a whole check: checks run one at a time.
    watch: Option<Arc<Mutex<cordon_gate::Watch>>>,
    call_timeout: Duration,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn key(id: &Value) -> String {
    frame::id_key(id)
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A tool error result: the call was refused, with why.
fn tool_error(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": text}], "isError": true,
    }})
}

impl Wrap {
    async fn serve(self, opts: Options) -> i32 {
        let (to_client, mut out_rx) = mpsc::unbounded_channel::<Value>();
        // stdout: the protocol only, one message a line.
        let writer = tokio::spawn(async move {
            let mut out = tokio::io::stdout();
            // `null` (never a message) ends it: the call timers keep senders alive.
            while let Some(v) = out_rx.recv().await.filter(|v| !v.is_null()) {
                let mut line = v.to_string().into_bytes();
                line.push(b'\n');
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        });
        let mut input = BufReader::new(tokio::io::stdin());
        // The first message names the client; the gate is opened for it and the server started.
        let first = loop {
            match frame::read_line(&mut input).await {
                Line::Eof => {
                    drop(to_client);
                    let _ = writer.await;
                    return 0;
                }
                line => match parse(line, &to_client) {
                    Some(v) => break v,
                    None => continue,
                },
            }
        };
        let mut opts = opts;
        opts.client = first
            .pointer("/params/clientInfo/name")
            .and_then(Value::as_str)
            .map(String::from);
        let gate = match tokio::task::spawn_blocking(move || Gate::open(opts)).await {
            Ok(Ok(g)) => Arc::new(g),
            Ok(Err(e)) => {
                eprintln!("cordon: {e}");
                return e.exit_code();
            }
            Err(e) => {
                eprintln!("cordon: mcp wrap: {e}");
                return EXIT_FAILURE;
            }
        };
        // Taken before the server starts: everything it leaves is found at a check. The live
        // watch's inotify watches too: no write of the server's goes unseen.
        let (watch, placed) = tokio::task::block_in_place(|| {
            let watch = gate.watch();
            let placed = watch.as_ref().map(|w| wrap_live::place(w.roots()));
            (watch.map(|w| Arc::new(Mutex::new(w))), placed)
        });
        let request = watch.as_ref().map(|w| lock(w).request().to_string());
        let server = match start(&gate, &self.name, &self.argv, request) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cordon: mcp wrap: {e}");
                if let Some(id) = first.get("id").filter(|_| first.get("method").is_some()) {
                    let _ = to_client.send(error(id, -32603, &format!("cordon: {e}")));
                }
                drop(to_client);
                let _ = writer.await;
                return EXIT_FAILURE;
            }
        };
        let (to_server, mut srv_rx) = mpsc::unbounded_channel::<Value>();
        let mut stdin = server.stdin;
        let server_writer = tokio::spawn(async move {
            while let Some(v) = srv_rx.recv().await {
                let mut line = v.to_string().into_bytes();
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() {
                    break;
                }
            }
            // Dropped: the server's stdin is closed.
        });
        let state = Arc::new(State {
            name: self.name.clone(),
            gate,
            to_client: to_client.clone(),
            to_server: Mutex::new(Some(to_server)),
            pending: Mutex::new(HashMap::new()),
            deciding: Mutex::new(HashMap::new()),
            used: Mutex::new(HashSet::new()),
            cancelled: Mutex::new(HashSet::new()),
            asks: Mutex::new(HashMap::new()),
            can_elicit: false.into(),
            gone: Mutex::new(None),
            call_timeout: self.call_timeout,
            watch,
        });
        let live = placed.map(|p| state.clone().live(p));
        // The server's answers, requests and notifications.
        let from_server = tokio::spawn(relay_server(state.clone(), server.stdout));
        state.client_message(first);
        let mut done = server.done;
        let code = loop {
            tokio::select! {
                line = frame::read_line(&mut input) => match line {
                    Line::Eof => break None,
                    line => {
                        if let Some(v) = parse(line, &to_client) {
                            state.client_message(v);
                        }
                    }
                },
                ended = &mut done => break Some(ended),
            }
        };
        let code = match code {
            // The client is gone: close the server's stdin, give it a moment, then kill its
            // tree; the run ends (and its after-run scan runs) either way.
            None => {
                lock(&state.to_server).take();
                let _ = server_writer.await;
                let ended = match tokio::time::timeout(GRACE, &mut done).await {
                    Ok(e) => e,
                    Err(_) => {
                        server.cancel.cancel();
                        done.await
                    }
                };
                let _ = from_server.await;
                exit_code(ended, None)
            }
            Some(ended) => {
                let _ = from_server.await;
                exit_code(ended, Some(&self.name))
            }
        };
        // After the server's end scan (which no check overlaps).
        if let Some(live) = live.flatten() {
            tokio::task::block_in_place(|| live.stop());
        }
        drop(state);
        let _ = to_client.send(Value::Null);
        let _ = writer.await;
        code
    }
}

/// The wrapper's exit code: 0 after the client left; the server's own status when it ended
/// first (said on stderr when it is not 0); cordon's failure to run it.
fn exit_code(
    ended: Result<Result<cordon_gate::Ran, cordon_gate::Error>, oneshot::error::RecvError>,
    server_first: Option<&str>,
) -> i32 {
    match ended {
        Ok(Ok(ran)) => match server_first {
            Some(name) if ran.exit_code != 0 => {
                eprintln!(
                    "cordon: mcp wrap: the MCP server `{name}` exited with status {}",
                    ran.exit_code
                );
                ran.exit_code
            }
            _ => 0,
        },
        Ok(Err(e)) => {
            eprintln!("cordon: mcp wrap: {e}");
            e.exit_code()
        }
        Err(_) => EXIT_FAILURE,
    }
}

/// One line of the client's as a message; what is not JSON is answered with a parse error.
fn parse(line: Line, to_client: &mpsc::UnboundedSender<Value>) -> Option<Value> {
    match line {
        Line::Whole(line) => {
            let text = line.trim_ascii();
            if text.is_empty() {
                return None;
            }
            match serde_json::from_slice::<Value>(text) {
                Ok(v @ Value::Object(_)) => Some(v),
                _ => {
                    let _ = to_client.send(frame::error(
                        frame::id_of(text),
                        -32700,
                        "cordon: the message is not a JSON-RPC object (one message per line); it was dropped",
                    ));
                    None
                }
            }
        }
        Line::TooLong(start) => {
            let _ = to_client.send(frame::error(
                frame::id_of(&start),
                -32600,
                &format!(
                    "cordon: the message is longer than {} MiB; it was dropped",
                    frame::MAX_LINE >> 20
                ),
            ));
            None
        }
        Line::Eof => None,
    }
}

/// The running server: its stdin and stdout, what kills it, and its end.
struct Server {
    stdin: tokio::net::unix::pipe::Sender,
    stdout: tokio::net::unix::pipe::Receiver,
    cancel: Cancel,
    done: oneshot::Receiver<Result<cordon_gate::Ran, cordon_gate::Error>>,
}

/// Starts the server under the gate's sandbox, on a thread of its own (the thread the
/// sandbox's parent-death signal watches lives as long as the server).
fn start(
    gate: &Arc<Gate>,
    name: &str,
    argv: &[String],
    request: Option<String>,
) -> Result<Server, super::Error> {
    let cannot = |what| move |e: std::io::Error| super::Error::Start { what, source: e };
    let pipe = || {
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| cannot("make a pipe for the server")(e.into()))
    };
    let (child_in, our_in) = pipe()?;
    let (our_out, child_out) = pipe()?;
    let cancel = Cancel::new().map_err(cannot("make a kill switch"))?;
    let stdio = cordon_ossandbox::ChildStdio {
        fds: [Some(Arc::new(child_in)), Some(Arc::new(child_out)), None],
        ..Default::default()
    };
    let stdin = sender(our_in)?;
    let stdout = receiver(our_out)?;
    let (tx, done) = oneshot::channel();
    let (g, name, argv, c) = (
        gate.clone(),
        name.to_string(),
        argv.to_vec(),
        cancel.clone(),
    );
    std::thread::Builder::new()
        .name("mcp-server".into())
        .spawn(move || {
            let _ = tx.send(g.serve(&name, &argv, stdio, Some(c), request.as_deref()));
        })
        .map_err(cannot("start the server's thread"))?;
    Ok(Server {
        stdin,
        stdout,
        cancel,
        done,
    })
}

fn sender(fd: OwnedFd) -> Result<tokio::net::unix::pipe::Sender, super::Error> {
    tokio::net::unix::pipe::Sender::from_owned_fd(fd).map_err(|source| super::Error::Start {
        what: "watch the server's stdin",
        source,
    })
}

fn receiver(fd: OwnedFd) -> Result<tokio::net::unix::pipe::Receiver, super::Error> {
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map_err(|source| super::Error::Start {
        what: "watch the server's stdout",
        source,
    })
}

/// Copies the server's messages to the client until its stdout ends; then every request it
/// did not answer gets an error.
async fn relay_server(state: Arc<State>, stdout: tokio::net::unix::pipe::Receiver) {
    let mut input = BufReader::new(stdout);
    loop {
        match frame::read_line(&mut input).await {
            Line::Eof => break,
            Line::TooLong(_) => {
                tracing::warn!("the server wrote a line over {} MiB; dropped", frame::MAX_LINE >> 20)
            }
            Line::Whole(line) => match serde_json::from_slice::<Value>(line.trim_ascii()) {
                Ok(v @ Value::Object(_)) => state.server_message(v),
                _ if line.trim_ascii().is_empty() => {}
                _ => eprintln!(
                    "cordon: mcp wrap: `{}` wrote a line to stdout that is not JSON-RPC (dropped): {}",
                    state.name,
                    cordon_gate::clean(&String::from_utf8_lossy(&line[..line.len().min(200)]))
                ),
            },
        }
    }
    let why = format!(
        "cordon: the MCP server `{}` exited before answering",
        state.name
    );
    *lock(&state.gone) = Some(why.clone());
    lock(&state.to_server).take();
    let pending: Vec<_> = lock(&state.pending).drain().collect();
    for (_, (id, _)) in pending {
        let _ = state.to_client.send(error(&id, -32603, &why));
    }
}

impl State {
    fn to_server(&self, v: Value) -> Result<(), ()> {
        match lock(&self.to_server).as_ref() {
            Some(tx) => tx.send(v).map_err(|_| ()),
            None => Err(()),
        }
    }

    fn gone(&self) -> String {
        lock(&self.gone).clone().unwrap_or_else(|| {
            format!(
                "cordon: the MCP server `{}` is no longer running",
                self.name
            )
        })
    }

    /// A request to forward: remembered until answered (or timed out); refused at once when
    /// the server is gone.
    fn forward_request(self: &Arc<Self>, id: Value, kind: Kind, msg: Value) {
        let k = key(&id);
        lock(&self.pending).insert(k.clone(), (id.clone(), kind));
        if self.to_server(msg).is_err() {
            lock(&self.pending).remove(&k);
            let _ = self.to_client.send(error(&id, -32603, &self.gone()));
            return;
        }
        let state = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(state.call_timeout).await;
            if lock(&state.pending).remove(&k).is_some() {
                let _ = state.to_client.send(error(
                    &id,
                    -32603,
                    &format!(
                        "cordon: the MCP server `{}` did not answer within {:?} (--call-timeout); the request was cancelled",
                        state.name, state.call_timeout
                    ),
                ));
                let _ = state.to_server(json!({
                    "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "cordon: --call-timeout"},
                }));
            }
        });
    }

    fn client_message(self: &Arc<Self>, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        let id = msg.get("id").cloned();
        // A request reusing an id is refused, as `cordon mcp` refuses it (frame.rs): the
        // wrapper's table of calls in flight and the server's are keyed by the id, so a
        // second call with the id of one still running took its place: a cancel for the id
        // stopped the second while the first ran on, and the first's answer was checked and
        // recorded as the second's. MCP forbids the reuse within a session.
        if let (Some(_), Some(id)) = (&method, &id) {
            if !lock(&self.used).insert(key(id)) {
                let _ = self.to_client.send(error(
                    id,
                    -32600,
                    &format!("cordon: request id {id} was already used in this session; this request was dropped (each request needs an id of its own)"),
                ));
                return;
            }
        }
        match (method.as_deref(), id) {
            // An answer: to one of the wrapper's questions, or to the server's request.
            (None, Some(id)) => {
                if let Some(tx) = lock(&self.asks).remove(&key(&id)) {
                    let _ = tx.send(msg);
                } else {
                    let _ = self.to_server(msg);
                }
            }
            (Some("tools/call"), Some(id)) => {
                let state = self.clone();
                let (cancel, cancelled) = watch::channel(false);
                lock(&self.deciding).insert(key(&id), cancel);
                tokio::spawn(async move { state.tools_call(id, msg, cancelled).await });
            }
            (Some(m), Some(id)) => {
                if m == "initialize" {
                    let elicit = msg
                        .pointer("/params/capabilities/elicitation")
                        .is_some_and(|e| e.get("form").is_some() || e.get("url").is_none());
                    self.can_elicit.store(elicit, Ordering::Relaxed);
                }
                let kind = if m == "tools/list" {
                    Kind::ToolsList
                } else {
                    Kind::Other
                };
                self.forward_request(id, kind, msg);
            }
            (Some(m), None) => {
                if m == "notifications/cancelled" {
                    if let Some(r) = msg.pointer("/params/requestId") {
                        let k = key(r);
                        if let Some(cancel) = lock(&self.deciding).get(&k) {
                            lock(&self.cancelled).insert(k.clone());
                            cancel.send_replace(true);
                        }
                        lock(&self.pending).remove(&k);
                    }
                }
                let _ = self.to_server(msg);
            }
            (None, None) => {
                let _ = self.to_client.send(frame::error(
                    Value::Null,
                    -32600,
                    "cordon: a JSON-RPC message needs a method or an id; it was dropped",
                ));
            }
        }
    }

    fn server_message(&self, mut msg: Value) {
        let is_answer = msg.get("method").is_none();
        // The server's requests to the client and the wrapper's approval forms share one id
        // space (both come to the client from "the server"), and the client's answer is
        // matched by id: a server request with the id of an open form had the person's answer
        // to the server's own form ("show the weather?") taken as the approval of a call.
        // The wrapper's ids are reserved; such a request is refused and never shown.
        if let Some(id) = msg.get("id").filter(|_| !is_answer) {
            if id.as_str().is_some_and(|s| s.starts_with(ASK_ID_PREFIX)) {
                let _ = self.to_server(error(
                    id,
                    -32600,
                    &format!(
                        "cordon: request ids starting with `{ASK_ID_PREFIX}` are reserved for \
                         the wrapper's approval forms; this request was not sent to the client"
                    ),
                ));
                return;
            }
        }
        if is_answer {
            if let Some(id) = msg.get("id") {
                // A call's answer: the check is taken first, so a live check meanwhile still
                // sees the call in flight (and records what it finds as the call's).
                let is_call = matches!(
                    lock(&self.pending).get(&key(id)),
                    Some((_, Kind::ToolsCall(_)))
                );
                let watch = self
                    .watch
                    .as_ref()
                    .filter(|_| is_call)
                    .map(|w| tokio::task::block_in_place(|| lock(w)));
                let Some((_, kind)) = lock(&self.pending).remove(&key(id)) else {
                    // Answered already (timed out, cancelled): the client no longer waits.
                    return;
                };
                match (kind, watch) {
                    (Kind::ToolsList, _) => self.leave_out_denied(&mut msg),
                    // What the server left during the call, checked before its answer reaches
                    // the client: the host acts on the answer, and the operator's `cd`
                    // (direnv) or the host's settings reload could act on a plant.
                    (Kind::ToolsCall(request), Some(mut watch)) => {
                        tokio::task::block_in_place(|| watch.check(Some(&request)));
                    }
                    _ => {}
                }
            }
        }
        let _ = self.to_client.send(msg);
    }

    /// Starts the live watch of the roots (`placed` before the server started): a check
    /// within [`wrap_live`]'s debounce after any write, the server idle or not. What it finds
    /// is recorded as the call's when exactly one tool call is in flight, else as the server
    /// run's. `None` (said) when its thread cannot start: the checks after each call and at
    /// exit remain.
    fn live(self: Arc<Self>, placed: wrap_live::Placed) -> Option<wrap_live::Live> {
        let watch = self.watch.clone()?;
        let state = Arc::downgrade(&self);
        let scan_watch = watch.clone();
        let scan = move || {
            let Some(state) = state.upgrade() else {
                return;
            };
            let mut watch = lock(&scan_watch);
            let call = state.call_in_flight();
            watch.check(call.as_deref());
        };
        let said = watch.clone();
        let degraded = move |why: &str| lock(&said).degraded(why);
        match placed.run(scan, degraded) {
            Ok(live) => Some(live),
            Err(e) => {
                lock(&watch).degraded(&format!(
                    "the live watch of the MCP server's roots could not start ({e}): what the \
                     server writes while idle is found at its next tool call or its exit"
                ));
                None
            }
        }
    }

    /// The audit id of the one allowed tool call the server is running, if exactly one is.
    fn call_in_flight(&self) -> Option<String> {
        let pending = lock(&self.pending);
        let mut calls = pending.values().filter_map(|(_, k)| match k {
            Kind::ToolsCall(r) => Some(r),
            _ => None,
        });
        match (calls.next(), calls.next()) {
            (Some(r), None) => Some(r.clone()),
            _ => None,
        }
    }

    /// Removes from a `tools/list` answer the tools the rules deny (documented: a denied tool
    /// is not offered; a call to it anyway is denied and recorded).
    fn leave_out_denied(&self, msg: &mut Value) {
        let Some(tools) = msg
            .pointer_mut("/result/tools")
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        tools.retain(|t| {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                return true;
            };
            let call = self.gate.mcp_tool(&self.name, name, &json!({}));
            !matches!(
                self.gate.explain(&call).map(|x| x.outcome),
                Ok(Outcome::Denied { .. })
            )
        });
    }

    async fn tools_call(self: Arc<Self>, id: Value, msg: Value, cancelled: watch::Receiver<bool>) {
        let k = key(&id);
        let tool = msg
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let args = msg
            .pointer("/params/arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let decision = if tool.is_empty() {
            None
        } else {
            let call = self
                .gate
                .mcp_tool(&self.name, &tool, &args)
                .with_client_request(id.as_str().map_or_else(|| id.to_string(), String::from));
            let decision = if self.can_elicit.load(Ordering::Relaxed) {
                let mut asker = Ask {
                    state: self.clone(),
                    preview: call.preview().to_string(),
                    cancelled,
                };
                self.gate.decide_async(&call, &mut asker).await
            } else {
                let nobody = Err(AskError::NobodyToAsk(String::new()));
                self.gate
                    .decide_async(&call, &mut elicit::Preset(Some(nobody), None))
                    .await
            };
            Some((call, decision))
        };
        lock(&self.deciding).remove(&k);
        let cancelled = lock(&self.cancelled).remove(&k);
        match decision {
            None => {
                let _ = self.to_client.send(error(
                    &id,
                    -32602,
                    "cordon: tools/call without a tool name",
                ));
            }
            Some((call, d)) if cancelled => {
                // Not forwarded: the client gave it up. An allow's record said only that it
                // was allowed, as if the server had run it; the cancel is its outcome,
                // recorded after it (same request id), as `cordon mcp` records its own.
                if d.is_allowed() {
                    let gate = self.gate.clone();
                    let reason = format!(
                        "the client cancelled the call (notifications/cancelled) while it was decided: `{}` was not forwarded to the server",
                        call.shown()
                    );
                    let recorded = tokio::task::spawn_blocking(move || {
                        gate.record_blocked(call.request(), "cancelled", &reason)
                    })
                    .await;
                    if let Ok(Err(e)) = recorded {
                        eprintln!("cordon: mcp wrap: the cancel could not be recorded: {e}");
                    }
                }
            }
            Some((call, d)) if d.is_allowed() => {
                self.forward_request(id, Kind::ToolsCall(call.id().to_string()), msg)
            }
            Some((call, d)) => {
                let _ = self
                    .to_client
                    .send(tool_error(&id, &refused(&d, call.shown())));
            }
        }
    }
}

/// The text of a refused call: the decision (naming the rule), and when a person's approval
/// was needed and not given, how the operator can grant it.
fn refused(decision: &cordon_gate::Decision, shown: &str) -> String {
    use cordon_approval::By;
    let mut message = decision.message();
    if matches!(
        decision.by(),
        Some(
            By::User
                | By::TimedOut
                | By::ChannelLost
                | By::Unanswered
                | By::Mode(_)
                | By::NobodyToAsk
        )
    ) {
        message.push_str(&format!(
            "\napproval was needed and not given. The operator can allow `{shown}` with an \
             [[mcp.rules]] entry (pattern = \"{shown}\", action = \"allow\") in the policy; an \
             MCP client that supports elicitation asks the user directly."
        ));
    }
    message
}

/// Counts the wrapper's own request ids.
static ASK_ID: AtomicU64 = AtomicU64::new(1);

/// How the wrapper's own request ids start; the server may not use it (`server_message`).
const ASK_ID_PREFIX: &str = "cordon-wrap-";

/// The gate's asker for one wrapped tool call: an `elicitation/create` request of the
/// wrapper's own, answered on the client's stdin.
struct Ask {
    state: Arc<State>,
    preview: String,
    /// Set when the client cancels the call.
    cancelled: watch::Receiver<bool>,
}

impl AsyncAsker for Ask {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
    ) -> impl std::future::Future<Output = Result<Answer, AskError>> + Send {
        let state = self.state.clone();
        let message = elicit::message(&request.tool, &self.preview, &pending.reason);
        let session = cordon_approval::remembers(request);
        let mut cancelled = self.cancelled.clone();
        async move {
            if *cancelled.borrow() {
                return Err(AskError::Lost(elicit::CANCELLED.into()));
            }
            let params = serde_json::to_value(elicit::params(message, session)?)
                .map_err(|e| AskError::Lost(format!("approval form: {e}")))?;
            // Ids of the wrapper's own: a string no client- or server-chosen id is likely to be.
            let id = json!(format!(
                "{ASK_ID_PREFIX}{}-{}",
                std::process::id(),
                ASK_ID.fetch_add(1, Ordering::Relaxed)
            ));
            let (tx, rx) = oneshot::channel();
            lock(&state.asks).insert(key(&id), tx);
            // Taken back however this ends (answered, timed out, dropped), and withdrawn when
            // not answered.
            let _forget = Forget(state.clone(), id.clone());
            state
                .to_client
                .send(json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}))
                .map_err(|_| AskError::Lost("the client is gone".into()))?;
            // A call the client gave up is decided now (denied, and recorded so), and its form
            // is withdrawn (`Forget`).
            let answer = tokio::select! {
                // The cancel is read before the answer that follows it on the client's stdin.
                biased;
                Ok(_) = cancelled.wait_for(|c| *c) => {
                    return Err(AskError::Lost(elicit::CANCELLED.into()));
                }
                answer = rx => answer.map_err(|_| AskError::Lost("the client is gone".into()))?,
            };
            if let Some(e) = answer.get("error") {
                return Err(AskError::Lost(format!(
                    "the client's approval request failed: {}",
                    cordon_gate::clean(&e.to_string())
                )));
            }
            let r: ElicitResult =
                serde_json::from_value(answer.get("result").cloned().unwrap_or_default()).map_err(
                    |e| AskError::Lost(format!("the client's approval answer is malformed: {e}")),
                )?;
            elicit::result(&r)
        }
    }
}

/// An open form of the wrapper's (its id): taken back when the ask ends. Not answered (the
/// call cancelled, the approval timeout), it is withdrawn: MCP's `notifications/cancelled`
/// for the form's own request, which the client's form handler sees (rmcp: the request
/// context's token; the TypeScript SDK: its abort signal) and whose late answer it does not
/// send. Before round 11 of issue 21 the form stayed open.
struct Forget(Arc<State>, Value);

impl Drop for Forget {
    fn drop(&mut self) {
        if lock(&self.0.asks).remove(&key(&self.1)).is_some() {
            let _ = self.0.to_client.send(json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.1, "reason": elicit::WITHDRAWN},
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_name_is_one_word_without_a_slash() {
        let cmd = |s: &str| vec![s.to_string()];
        assert_eq!(
            server_name(None, &cmd("/usr/bin/mcp-server-fetch")).unwrap(),
            "mcp-server-fetch"
        );
        assert_eq!(server_name(Some("fs"), &cmd("npx")).unwrap(), "fs");
        assert!(server_name(Some("a/b"), &cmd("x")).is_err());
        assert!(server_name(Some("a b"), &cmd("x")).is_err());
        assert!(server_name(Some(""), &cmd("x")).is_err());
    }
}
