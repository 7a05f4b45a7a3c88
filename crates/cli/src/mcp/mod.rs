//! `cordon mcp`: an MCP server on stdio whose tools run through the gate.
//!
//! Every `tools/call` is one gate call: the policy's rules decide it (an `ask` becomes an
//! elicitation to the person behind the client, [`elicit`]), the decision is recorded in the
//! audit log with the client's name and the MCP request id, and an allowed call runs — a
//! command under the kernel sandbox with its output captured up to a limit, a file tool
//! through cordon's file tools. A `notifications/cancelled` kills the command's whole process
//! tree at once; calls run concurrently.
//!
//! The session's gate is opened when the first request arrives, so that it knows the client
//! (its name goes into every record, and whether it can elicit decides whether asks can be
//! asked). The policy is loaded once before serving as well, so that a broken policy stops
//! the server at start with one `cordon: ` line on stderr.
//!
//! stdout carries the protocol and nothing else; diagnostics go to stderr through `tracing`
//! (`RUST_LOG` or `-v`, default `warn`; set up in `main`).

mod elicit;
mod frame;
mod server;
mod tools;
mod wrap;
mod wrap_live;

use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    #[command(subcommand)]
    command: Option<McpCommand>,
    /// Policy file (default: ./cordon.toml, else the embedded default).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// OS sandbox backend (overrides the policy's sandbox.backend): auto, landlock, bwrap,
    /// seatbelt or none.
    #[arg(long, value_parser = parse_backend)]
    backend: Option<cordon_policy::Backend>,
    /// Keep "approve for this session" grants across servers started with the same name
    /// (default: $CORDON_SESSION; without one, the server's lifetime is the session).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
}

#[derive(clap::Subcommand)]
enum McpCommand {
    /// Run a third-party stdio MCP server under the kernel sandbox, deciding each of its tool
    /// calls by the policy's [mcp] rules (docs/mcp.md).
    Wrap(wrap::WrapArgs),
}

fn parse_backend(s: &str) -> Result<cordon_policy::Backend, crate::Error> {
    cordon_policy::Backend::parse(s).ok_or_else(|| {
        crate::Error::failure(format!(
            "unknown backend `{s}` (auto, landlock, bwrap, seatbelt, none)"
        ))
    })
}

/// Why the MCP server cannot do what was asked: a `run_command` call whose arguments it
/// refuses (answered to the client as the tool's error), a retry it cannot match to an ask, the
/// tool list it cannot build, or a session that failed. The gate's own errors are answered as
/// they are; this is the rest of the front end's.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("run_command: unknown argument `{0}`")]
    UnknownArgument(String),
    #[error("run_command: `{0}` is required")]
    Required(&'static str),
    #[error("run_command: `{0}` must be a string")]
    NotString(&'static str),
    #[error("run_command: `{0}` is empty")]
    Empty(&'static str),
    #[error("run_command: `timeout_s` must be a positive number")]
    TimeoutNotPositive,
    #[error("run_command: `timeout_s` is out of range")]
    TimeoutOutOfRange,
    #[error(
        "cordon: this retry's requestState is unknown or was used already; call the tool again"
    )]
    UnknownRetry,
    #[error("cordon: this retry is not the call that was to be approved; call the tool again")]
    OtherCall,
    #[error("cordon: cannot make an approval handle: {0}")]
    Handle(#[source] std::io::Error),
    #[error("{0}")]
    Form(#[source] cordon_gate::AskError),
    /// The policy's file tools cannot be set up.
    #[error(transparent)]
    Tool(#[from] cordon_tools::tool::ToolError),
    #[error("the file tool `{0}` is missing")]
    MissingTool(&'static str),
    #[error("the client's handshake failed: {0}")]
    Handshake(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the session ended with an error: {0}")]
    Session(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("mcp: cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// `cordon mcp wrap`: the server's name cannot be the first half of SERVER/TOOL keys.
    #[error("the server name `{}` cannot be used in SERVER/TOOL keys: give --name a word without `/` or spaces", .0.escape_debug())]
    ServerName(String),
    /// `cordon mcp wrap`: what starting the wrapped server needs (`what`) failed.
    #[error("cannot {what}: {source}")]
    Start {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// Runs the server until the client closes stdin; the exit code, or why it could not serve.
pub fn run(args: McpArgs) -> crate::Exit {
    if let Some(McpCommand::Wrap(w)) = args.command {
        return Ok(wrap::run(w));
    }
    let mut opts = cordon_gate::Options::new(crate::current_dir()?);
    opts.policy = args.policy;
    opts.backend = args.backend;
    opts.session = args.session.or_else(|| {
        std::env::var("CORDON_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    // Fail at start on a policy or sandbox that cannot work, not at the first call.
    let tools = tools::definitions(cordon_gate::Gate::open(opts.clone())?.policy())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let served = runtime.block_on(server::serve(opts, tools));
    // The client is gone: calls still running are abandoned, not waited for. Their handlers
    // are dropped, which cancels their runs, and cordon's exit ends any sandbox left (each
    // dies with its parent).
    runtime.shutdown_background();
    served?;
    Ok(0)
}
