//! The MCP handler: tool listing, and each `tools/call` through the gate.

use std::borrow::Cow;
use std::sync::Arc;

use cordon_approval::By;
use cordon_gate::{Cancel, Command, Decision, Gate, Options, Output, RunOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use tokio::sync::OnceCell;

use super::elicit::Elicit;
use super::tools::{self, OUTPUT_LIMIT};

/// Serves `tools` on stdio until the client goes away.
pub async fn serve(opts: Options, tools: Vec<Tool>) -> Result<(), String> {
    let server = Cordon {
        opts,
        tools: Arc::new(tools),
        gate: Arc::new(OnceCell::new()),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the client's handshake failed: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the session ended with an error: {e}"))?;
    Ok(())
}

#[derive(Clone)]
struct Cordon {
    /// The gate's options but the client's, which the first request brings.
    opts: Options,
    tools: Arc<Vec<Tool>>,
    gate: Arc<OnceCell<Arc<Gate>>>,
}

impl Cordon {
    /// The session's gate, opened for the client of the first request.
    async fn gate(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Gate>, McpError> {
        let mut opts = self.opts.clone();
        opts.client = context.client_info().map(|c| c.name);
        // Asks are asked only of a client that can show a form.
        opts.can_ask = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
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
        // Up to 2025-11-25: asks are elicitation requests to the client, which 2026-07-28
        // replaced with input-required results (not implemented yet).
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
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
        let id = context.id.to_string();
        let result = if name == "run_command" {
            run_command(&gate, &args, &id, &context).await
        } else {
            file_tool(&gate, &name, args, &id, &context).await
        };
        Ok(result.into())
    }
}

async fn run_command(
    gate: &Arc<Gate>,
    args: &rmcp::model::JsonObject,
    id: &str,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let a = match tools::run_args(args) {
        Ok(a) => a,
        Err(e) => return tools::error(e),
    };
    let cwd = a.cwd.as_deref().map(std::path::Path::new);
    let call = match gate.shell(Command::Line(a.command), cwd) {
        Ok(c) => c.with_client_request(id),
        Err(e) => return tools::error(e.message),
    };
    let decision = decide(gate, &call, context).await;
    if !decision.is_allowed() {
        return refused(&decision, call.shown());
    }
    let cancel = match Cancel::new() {
        Ok(c) => c,
        Err(e) => return tools::error(format!("cordon: cannot make a cancel switch: {e}")),
    };
    let opts = RunOptions {
        timeout: tools::timeout(a.timeout, gate.policy().sandbox.limits.timeout),
        output: Output::Capture {
            limit: OUTPUT_LIMIT,
        },
        cancel: Some(cancel.clone()),
    };
    // Dropped (the request abandoned) or cancelled: the tree is killed either way.
    let _kill = KillOnDrop(cancel.clone());
    let shown = call.shown().to_string();
    let gate = gate.clone();
    let mut job = tokio::task::spawn_blocking(move || gate.run(&call, &decision, opts));
    let joined = tokio::select! {
        r = &mut job => r,
        () = context.ct.cancelled() => {
            cancel.cancel();
            let _ = job.await;
            return tools::error(format!("cancelled: `{shown}` and all its descendants were killed"));
        }
    };
    match joined {
        Ok(Ok(ran)) => tools::ran(ran.exit_code, &ran.stdout, &ran.stderr, ran.truncated),
        Ok(Err(e)) => tools::error(e.message),
        Err(e) => tools::error(format!("cordon: the run failed: {e}")),
    }
}

async fn file_tool(
    gate: &Arc<Gate>,
    name: &str,
    args: rmcp::model::JsonObject,
    id: &str,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let call = match gate.file(name, serde_json::Value::Object(args)) {
        Ok(c) => c.with_client_request(id),
        Err(e) => return tools::error(e.message),
    };
    let decision = decide(gate, &call, context).await;
    if !decision.is_allowed() {
        return refused(&decision, call.shown());
    }
    let gate = gate.clone();
    let opts = RunOptions {
        timeout: None,
        output: Output::Capture {
            limit: OUTPUT_LIMIT,
        },
        cancel: None,
    };
    match tokio::task::spawn_blocking(move || gate.run(&call, &decision, opts)).await {
        Ok(Ok(ran)) if ran.exit_code == 0 => tools::file_result(&ran.stdout),
        Ok(Ok(ran)) => tools::error(String::from_utf8_lossy(&ran.stderr).trim().to_string()),
        Ok(Err(e)) => tools::error(e.message),
        Err(e) => tools::error(format!("cordon: the file tool failed: {e}")),
    }
}

async fn decide(
    gate: &Gate,
    call: &cordon_gate::Call,
    context: &RequestContext<RoleServer>,
) -> Decision {
    let mut asker = Elicit::new(context.peer.clone(), call.preview().to_string());
    gate.decide_async(call, &mut asker).await
}

/// The error result of a call that must not run. When a person's approval was needed and not
/// given, it says how the operator can grant it.
fn refused(decision: &Decision, shown: &str) -> CallToolResult {
    let mut message = decision.message();
    let asked = matches!(
        decision.by(),
        Some(By::User | By::TimedOut | By::ChannelLost | By::Unanswered | By::Mode(_))
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
