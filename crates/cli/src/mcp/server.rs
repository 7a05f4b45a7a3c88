//! The MCP handler: tool listing, and each `tools/call` through the gate.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use cordon_approval::By;
use cordon_approval::{Answer, AskError};
use cordon_gate::Outcome;
use cordon_gate::{Call, Cancel, Command, Decision, Gate, Options, Output, RunOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitResult,
    Implementation, InputRequest, InputRequests, InputRequiredResult, InputResponses, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use tokio::sync::OnceCell;

use super::elicit::{self, ConnectionElicit, Elicit, Preset};
use super::tools::{self, OUTPUT_LIMIT};

/// Serves `tools` on stdio until the client goes away.
pub async fn serve(opts: Options, tools: Vec<Tool>) -> Result<(), super::Error> {
    let server = Cordon {
        opts,
        tools: Arc::new(tools),
        gate: Arc::new(OnceCell::new()),
        asks: Arc::new(Asks::default()),
    };
    // Every line gets an answer: what rmcp would drop unanswered is answered by the framing.
    let transport = super::frame::start(tokio::io::stdin(), tokio::io::stdout());
    let running = server
        .serve(transport)
        .await
        .map_err(|e| super::Error::Handshake(Box::new(e)))?;
    running
        .waiting()
        .await
        .map_err(|e| super::Error::Session(Box::new(e)))?;
    Ok(())
}

#[derive(Clone)]
struct Cordon {
    /// The gate's options but the client's, which the first request brings.
    opts: Options,
    tools: Arc<Vec<Tool>>,
    gate: Arc<OnceCell<Arc<Gate>>>,
    asks: Arc<Asks>,
}

impl Cordon {
    /// The session's gate, opened for the client of the first request.
    async fn gate(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Gate>, McpError> {
        let mut opts = self.opts.clone();
        opts.client = context.client_info().map(|c| c.name);
        // Asks are asked of the client's user by elicitation; a client that cannot show a
        // form is given `nobody`, whose denial says how to approve.
        opts.front_end = cordon_gate::FrontEnd::Mcp;
        self.gate
            .get_or_try_init(|| async move {
                let opened = tokio::task::spawn_blocking(move || Gate::open(opts))
                    .await
                    .map_err(|e| McpError::internal_error(format!("cordon: {e}"), None))?;
                opened
                    .map(Arc::new)
                    .map_err(|e| McpError::internal_error(format!("cordon: {e}"), None))
            })
            .await
            .cloned()
    }
}

impl ServerHandler for Cordon {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cordon", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(
                "cordon runs commands and file operations under the operator's policy: some \
                 calls are denied, some ask the user first, and commands run in a kernel \
                 sandbox that can write only inside the policy's roots.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Every revision: up to 2025-11-25 an ask is an elicitation request, from 2026-07-28
        // on an input-required result.
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let gate = self.gate(&context).await?;
        let args = request.arguments.unwrap_or_default();
        let (call, timeout) = match prepare(&gate, &name, &args) {
            Ok(c) => c,
            Err(refusal) => return Ok(refusal.into()),
        };
        let call = call.with_client_request(context.id.to_string());
        // 2026-07-28 and later: no server-to-client requests; an ask is an input-required
        // result, and the client's retry brings the answer.
        let stateless = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let decision = if stateless {
            // A retry brings the person's answer to the form cordon gave, and that form's text.
            let preset = match request.request_state {
                Some(state) => match self.asks.answer(
                    &state,
                    &name,
                    &args,
                    request.input_responses,
                    gate.policy().approval.timeout,
                ) {
                    Ok(answered) => Some(answered),
                    Err(refusal) => return Ok(tools::error(refusal.to_string()).into()),
                },
                None => None,
            };
            if can_elicit(&context) {
                // What the real decision starts from: the one evaluator, mode and grants
                // included.
                let explained = match gate.explain(&call) {
                    Ok(x) => x,
                    Err(e) => return Ok(tools::error(e.to_string()).into()),
                };
                if let Outcome::Ask(p) = &explained.outcome {
                    let message = elicit::message(call.tool(), &shown_to_person(&call), &p.reason);
                    // No answer yet, or an answer to another form: the same arguments can
                    // mean another call by the retry (a directory on the way swapped for a
                    // link, a file's content changed), and the person approved only what
                    // they were shown. Ask again, showing what it is now.
                    let answered = preset.as_ref().is_some_and(|(_, shown)| *shown == message);
                    if !answered {
                        let session = cordon_approval::remembers(call.request());
                        return Ok(
                            match self.asks.input_required(&name, &args, message, session) {
                                Ok(r) => CallToolResponse::InputRequired(r),
                                Err(e) => tools::error(e.to_string()).into(),
                            },
                        );
                    }
                }
            }
            let mut asker = match preset {
                Some((answer, shown)) => Preset::shown(answer, shown, &shown_to_person(&call)),
                None if !can_elicit(&context) => {
                    Preset(Some(Err(AskError::NobodyToAsk(String::new()))), None)
                }
                None => Preset(None, None),
            };
            gate.decide_async(&call, &mut asker).await
        } else if can_elicit(&context) {
            let mut asker = Elicit::new(
                context.peer.clone(),
                shown_to_person(&call),
                Box::pin(context.ct.clone().cancelled_owned()),
            );
            gate.decide_async(&call, &mut asker).await
        } else {
            // Nobody to ask: the gate words the denial, saying how to approve.
            let nobody = Err(AskError::NobodyToAsk(String::new()));
            gate.decide_async(&call, &mut Preset(Some(nobody), None))
                .await
        };
        if !decision.is_allowed() {
            return Ok(refused(&decision, call.shown()).into());
        }
        if context.ct.is_cancelled() {
            // Cancelled as it was allowed (an answer that crossed the cancel): nothing runs.
            let reason = format!(
                "the client cancelled the call (notifications/cancelled) before it ran: `{}` did not run",
                call.shown()
            );
            return Ok(cancelled(&gate, call.request().clone(), reason)
                .await
                .into());
        }
        let result = if name == "run_command" {
            run_command(&gate, call, decision, timeout, &context).await
        } else {
            file_tool(&gate, call, decision).await
        };
        Ok(result.into())
    }
}

/// What the person is shown of a call: its preview, after the call on one line where the
/// preview does not hold it. A file tool's preview is the content or the diff alone; without
/// its summary (`create ws/.claude/settings.json (13 bytes)`) the form did not say which file.
fn shown_to_person(call: &Call) -> String {
    if call.preview().contains(call.shown()) {
        call.preview().to_string()
    } else {
        format!("{}\n{}", call.shown(), call.preview())
    }
}

/// Whether the client declared it can show a form.
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The gate's call for a tool call (and `run_command`'s timeout), or the error result that
/// refuses it.
fn prepare(
    gate: &Gate,
    name: &str,
    args: &JsonObject,
) -> Result<(Call, Option<std::time::Duration>), CallToolResult> {
    if name == "run_command" {
        let a = tools::run_args(args).map_err(|e| tools::error(e.to_string()))?;
        let cwd = a.cwd.as_deref().map(std::path::Path::new);
        let call = gate
            .shell(Command::Line(a.command), cwd)
            .map_err(|e| tools::error(e.to_string()))?;
        Ok((call, a.timeout))
    } else {
        let call = gate
            .file(name, serde_json::Value::Object(args.clone()))
            .map_err(|e| tools::error(e.to_string()))?;
        Ok((call, None))
    }
}

async fn run_command(
    gate: &Arc<Gate>,
    call: Call,
    decision: Decision,
    timeout: Option<std::time::Duration>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => return tools::error(format!("cordon: cannot make a cancel switch: {e}")),
    };
    // A connection the command opens that the `[network]` rules leave to "ask" is put to the
    // client's user as a form, where the protocol lets the server ask (2025-11-25 with
    // elicitation); otherwise it is denied and recorded.
    let stateless = context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize());
    let ask = (!stateless && can_elicit(context)).then(|| {
        Arc::new(Mutex::new(ConnectionElicit::new(
            context.peer.clone(),
            tokio::runtime::Handle::current(),
        ))) as cordon_gate::SharedAsker
    });
    let opts = RunOptions {
        timeout: tools::timeout(timeout, gate.policy().sandbox.limits.timeout),
        output: Output::Capture {
            limit: OUTPUT_LIMIT,
        },
        cancel: Some(cancel.clone()),
        ask,
        ..RunOptions::default()
    };
    // Dropped (the request abandoned) or cancelled: the tree is killed either way.
    let _kill = KillOnDrop(cancel.clone());
    let shown = call.shown().to_string();
    let request = call.request().clone();
    let runner = gate.clone();
    let mut job = tokio::task::spawn_blocking(move || runner.run(&call, &decision, opts));
    let joined = tokio::select! {
        r = &mut job => r,
        () = context.ct.cancelled() => {
            cancel.cancel();
            let _ = job.await;
            // The log said only that the call was allowed, as if it had run its course: the
            // cancel is its outcome, recorded after the allow (same request id).
            let reason = format!(
                "the client cancelled the call (notifications/cancelled) while it ran: `{shown}` and all its descendants were killed"
            );
            return cancelled(gate, request, reason).await;
        }
    };
    match joined {
        Ok(Ok(ran)) => tools::ran(ran.exit_code, &ran.stdout, &ran.stderr, ran.truncated),
        Ok(Err(e)) => tools::error(e.to_string()),
        Err(e) => tools::error(format!("cordon: the run failed: {e}")),
    }
}

/// The result of an allowed call the client cancelled, its cancel recorded after the allow
/// (a refusal by `builtin:cancelled`, same request id); a record that cannot be written is said.
async fn cancelled(
    gate: &Arc<Gate>,
    request: cordon_gate::Request,
    reason: String,
) -> CallToolResult {
    let gate = gate.clone();
    let message = format!("cancelled: {reason}");
    let recorded = tokio::task::spawn_blocking(move || {
        gate.record_blocked(&request, "cancelled", &reason)
            .map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()));
    match recorded {
        Ok(()) => tools::error(message),
        Err(e) => tools::error(format!("{message} (the cancel could not be recorded: {e})")),
    }
}

async fn file_tool(gate: &Arc<Gate>, call: Call, decision: Decision) -> CallToolResult {
    let gate = gate.clone();
    let opts = RunOptions {
        timeout: None,
        output: Output::Capture {
            limit: OUTPUT_LIMIT,
        },
        cancel: None,
        ask: None,
        ..RunOptions::default()
    };
    match tokio::task::spawn_blocking(move || gate.run(&call, &decision, opts)).await {
        Ok(Ok(ran)) if ran.exit_code == 0 => tools::file_result(&ran.stdout),
        Ok(Ok(ran)) => tools::error(String::from_utf8_lossy(&ran.stderr).trim().to_string()),
        Ok(Err(e)) => tools::error(e.to_string()),
        Err(e) => tools::error(format!("cordon: the file tool failed: {e}")),
    }
}

/// Approvals asked through input-required results (2026-07-28), awaiting the client's retry:
/// opaque handles (the `requestState`) bound to the call they are for, each used once, and
/// only within the policy's `approval.timeout` of the ask (a later answer is late, as a late
/// elicitation answer is).
#[derive(Default)]
struct Asks {
    pending: std::sync::Mutex<Vec<Pending>>,
}

/// One open ask: its handle, the call it is for, and when it was made.
struct Pending {
    handle: String,
    tool: String,
    args: JsonObject,
    asked: std::time::Instant,
    /// The form's text the person is shown.
    message: String,
}

/// The key of the form in `inputRequests` / `inputResponses`.
const APPROVAL: &str = "approval";
/// Open asks kept at most (the oldest is forgotten: its retry is refused).
const MAX_PENDING: usize = 64;

impl Asks {
    /// An input-required result asking `message` (offering the session where `session`, see
    /// [`elicit::schema`]), remembered for the retry of this call.
    fn input_required(
        &self,
        tool: &str,
        args: &JsonObject,
        message: String,
        session: bool,
    ) -> Result<InputRequiredResult, super::Error> {
        let params = elicit::params(message.clone(), session).map_err(super::Error::Form)?;
        let handle = cordon_approval::audit::new_id().map_err(super::Error::Handle)?;
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() >= MAX_PENDING {
            pending.remove(0);
        }
        pending.push(Pending {
            handle: handle.clone(),
            tool: tool.to_string(),
            args: args.clone(),
            asked: std::time::Instant::now(),
            message,
        });
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(handle)))
    }

    /// The person's answer from a retry, with the form's text they answered: only for the very
    /// call the handle was made for, and only within `timeout` of the ask (a client may hold
    /// the answer as long as it likes).
    fn answer(
        &self,
        state: &str,
        tool: &str,
        args: &JsonObject,
        responses: Option<InputResponses>,
        timeout: std::time::Duration,
    ) -> Result<(Result<Answer, AskError>, String), super::Error> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(at) = pending.iter().position(|p| p.handle == state) else {
            return Err(super::Error::UnknownRetry);
        };
        let p = pending.remove(at);
        if p.tool != tool || &p.args != args {
            return Err(super::Error::OtherCall);
        }
        if p.asked.elapsed() > timeout {
            return Ok((Err(AskError::TimedOut), p.message));
        }
        let answer = responses
            .and_then(|mut r| r.remove(APPROVAL))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v).ok())
            .map_or_else(
                || {
                    Err(AskError::Lost(
                        "the client's retry carried no answer to the approval form".into(),
                    ))
                },
                |r| elicit::result(&r),
            );
        Ok((answer, p.message))
    }
}

/// The error result of a call that must not run. When a person's approval was needed and not
/// given, it says how the operator can grant it.
fn refused(decision: &Decision, shown: &str) -> CallToolResult {
    let mut message = decision.message();
    let asked = matches!(
        decision.by(),
        Some(
            By::User
                | By::TimedOut
                | By::ChannelLost
                | By::Unanswered
                | By::Mode(_)
                | By::NobodyToAsk
        )
    );
    if asked {
        message.push_str(&format!(
            "\napproval was needed and not given. The operator can allow `{shown}` with a rule \
             in the policy (e.g. a [[shell.rules]] entry with action = \"allow\"), or run it \
             in a terminal with `cordon exec`, which asks there. An MCP client that supports \
             elicitation asks the user directly."
        ));
    }
    tools::error(message)
}

/// Cancels the run when the request's future is dropped before it finished.
struct KillOnDrop(Cancel);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> JsonObject {
        match v {
            serde_json::Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    const LONG: std::time::Duration = std::time::Duration::from_secs(3600);

    fn responses(decision: &str) -> Option<InputResponses> {
        let v = json!({"action": "accept", "content": {"decision": decision}});
        Some([(APPROVAL.to_string(), v)].into_iter().collect())
    }

    #[test]
    fn an_approval_handle_answers_once_and_only_its_own_call() {
        let asks = Asks::default();
        let a = obj(json!({"command": "touch x"}));
        let state = |r: InputRequiredResult| r.request_state.unwrap();
        let h = state(
            asks.input_required("run_command", &a, "m".into(), true)
                .unwrap(),
        );
        assert!(matches!(
            asks.answer(&h, "run_command", &a, responses("once"), LONG),
            Ok((Ok(Answer::Once), _))
        ));
        assert!(
            asks.answer(&h, "run_command", &a, responses("once"), LONG)
                .is_err(),
            "used"
        );

        let h = state(
            asks.input_required("run_command", &a, "m".into(), true)
                .unwrap(),
        );
        let other = obj(json!({"command": "rm -rf /"}));
        assert!(asks
            .answer(&h, "run_command", &other, responses("once"), LONG)
            .is_err());
        // The mismatch spent it.
        assert!(asks
            .answer(&h, "run_command", &a, responses("once"), LONG)
            .is_err());

        let h = state(
            asks.input_required("write_file", &a, "m".into(), true)
                .unwrap(),
        );
        assert!(asks
            .answer(&h, "run_command", &a, responses("once"), LONG)
            .is_err());

        let h = state(
            asks.input_required("run_command", &a, "m".into(), true)
                .unwrap(),
        );
        assert!(matches!(
            asks.answer(&h, "run_command", &a, None, LONG),
            Ok((Err(AskError::Lost(_)), _))
        ));
        assert!(asks
            .answer("nope", "run_command", &a, responses("once"), LONG)
            .is_err());
    }

    #[test]
    fn an_answer_after_the_timeout_is_late() {
        let asks = Asks::default();
        let a = obj(json!({"command": "touch x"}));
        let h = asks
            .input_required("run_command", &a, "m".into(), true)
            .unwrap()
            .request_state
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(
            asks.answer(
                &h,
                "run_command",
                &a,
                responses("once"),
                std::time::Duration::from_millis(10)
            ),
            Ok((Err(AskError::TimedOut), _))
        ));
    }

    #[test]
    fn open_asks_are_bounded() {
        let asks = Asks::default();
        let a = JsonObject::new();
        let first = asks
            .input_required("run_command", &a, "m".into(), true)
            .unwrap()
            .request_state
            .unwrap();
        for _ in 0..MAX_PENDING {
            asks.input_required("run_command", &a, "m".into(), true)
                .unwrap();
        }
        assert!(asks
            .answer(&first, "run_command", &a, responses("once"), LONG)
            .is_err());
    }
}
