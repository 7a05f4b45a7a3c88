//! Connections through cordon's network proxy, decided and recorded by a gate.
//!
//! A connection to `HOST:PORT` is a call of the `network` tool ([`Gate::network`]), decided
//! by the engine like any call — the `[network]` section's rules, session grants, the mode,
//! a person asked through an [`AsyncAsker`] — and recorded before the proxy connects.
//! [`NetworkDecider`] is that decision as the proxy's [`Decide`]; [`ConnectionLog`] writes the
//! proxy's connection records (open, close with bytes and duration, refusals after the
//! address check) into the gate's audit log, in the same chain. [`start_proxy`] starts a proxy
//! with both for a run; the run hands it the listeners made inside the sandbox.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use cordon_approval::audit::{self, AuditLog};
use cordon_approval::{AskError, AsyncAsker, Key, Pending, Request};
use cordon_netproxy::{
    Config, ConnectionRecord, Decide, Event, Proxy, ProxyHandle, Record, Verdict,
};
use cordon_tools::network::{self as tool, NetworkTool};
use cordon_tools::tool::Tool;

use crate::{clean, lock, Call, Error, Gate, What, EXIT_DENIED};

impl Gate {
    /// A connection call: tool `network`, key `["network", "HOST:PORT"]` (host normalised).
    /// What is not a host and port is refused (126), nothing recorded. [`Gate::check`] gives
    /// the rules' verdict; the engine decides with the same rules.
    pub fn network(&self, host: &str, port: u16) -> Result<Call, Error> {
        let target = cordon_policy::network::Target::new(host, port)
            .map_err(|e| Error::new(EXIT_DENIED, format!("network: {e}")))?;
        let mut a = NetworkTool
            .assess(&serde_json::json!({ "target": target.to_string() }))
            .map_err(|e| Error::new(EXIT_DENIED, e))?;
        let id = audit::new_id().unwrap_or_default();
        // The tool has no opinion: the request carries none, and the engine's rules decide.
        let request = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
            .with_presentation(a.presentation.clone())
            .with_args(a.args.clone());
        // What `check` shows: the rules' verdict, remembered grants included.
        a.verdict = tool::decide(lock(&self.engine).rules(), &a.keys);
        Ok(Call {
            request,
            shown: a.presentation.summary.clone(),
            preview: a.presentation.preview.to_string(),
            what: What::File(Box::new(a)),
        })
    }
}

/// The proxy's [`Decide`]: each connection decided by the gate ([`Gate::decide_async`]),
/// recorded before the answer. One person is asked one question at a time; connections that
/// need no answer are decided meanwhile.
pub struct NetworkDecider<A> {
    gate: Arc<Gate>,
    asker: tokio::sync::Mutex<A>,
}

impl<A: AsyncAsker + Send> NetworkDecider<A> {
    pub fn new(gate: Arc<Gate>, asker: A) -> NetworkDecider<A> {
        NetworkDecider {
            gate,
            asker: tokio::sync::Mutex::new(asker),
        }
    }
}

/// Takes the shared asker only while a person is asked.
struct OneAtATime<'a, A>(&'a tokio::sync::Mutex<A>);

impl<A: AsyncAsker + Send> AsyncAsker for OneAtATime<'_, A> {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
    ) -> impl Future<Output = Result<cordon_approval::Answer, AskError>> + Send {
        let shared = self.0;
        async move { shared.lock().await.ask(request, pending).await }
    }
}

impl<A: AsyncAsker + Send + 'static> Decide for NetworkDecider<A> {
    fn decide(&self, host: &str, port: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let call = self.gate.network(host, port);
        Box::pin(async move {
            let call = match call {
                Ok(c) => c,
                Err(e) => {
                    return Verdict::Deny {
                        reason: e.message,
                        rule: String::new(),
                    }
                }
            };
            let d = self
                .gate
                .decide_async(&call, &mut OneAtATime(&self.asker))
                .await;
            let rule = d.by().map(|b| b.to_string()).unwrap_or_default();
            if d.is_allowed() {
                Verdict::Allow { rule }
            } else {
                Verdict::Deny {
                    reason: d.reason().to_string(),
                    rule,
                }
            }
        })
    }
}

/// The proxy's [`Record`]: connection records in the gate's audit log (`by: connection`).
pub struct ConnectionLog {
    log: Mutex<AuditLog>,
}

impl ConnectionLog {
    /// A writer on `gate`'s audit log, with its session.
    pub fn open(gate: &Gate) -> Result<ConnectionLog, Error> {
        let log = AuditLog::open(gate.audit_log())
            .map_err(|e| Error::failure(format!("audit log {e}")))?
            .with_session(gate.audit_session.clone());
        Ok(ConnectionLog {
            log: Mutex::new(log),
        })
    }
}

/// The audit record of a proxy connection record.
pub fn connection_record(c: &ConnectionRecord) -> audit::Record {
    audit::Record::connection(
        c.allowed,
        c.reason.clone(),
        audit::Connection {
            event: match c.event {
                Event::Open => "open".into(),
                Event::Close => "close".into(),
            },
            id: c.id,
            protocol: c.protocol.as_str().into(),
            host: c.host.clone(),
            port: c.port,
            addr: c.addr.map(|a| a.to_string()),
            rule: c.rule.clone(),
            bytes_up: c.bytes_up,
            bytes_down: c.bytes_down,
            duration_ms: u64::try_from(c.duration.as_millis()).unwrap_or(u64::MAX),
        },
    )
}

impl Record for ConnectionLog {
    fn connection(&self, c: &ConnectionRecord) {
        // The decision was recorded before the connection was made; a connection record that
        // cannot be written is reported, the connection itself is already under way.
        if let Err(e) = lock(&self.log).append(&connection_record(c)) {
            eprintln!(
                "cordon: warning: a connection to {}:{} could not be recorded in the audit log: {}",
                clean(&c.host),
                c.port,
                clean(&e.to_string())
            );
        }
    }
}

/// Starts the proxy for a run of `gate`'s: `[network]`'s hosts table and listed addresses,
/// decisions by the gate (asking through `asker`), records in its audit log. Serve the
/// listeners made inside the sandbox with [`ProxyHandle::serve`]; give the command
/// [`cordon_netproxy::child_env`]; [`ProxyHandle::shutdown`] after the run.
pub fn start_proxy<A: AsyncAsker + Send + 'static>(
    gate: Arc<Gate>,
    asker: A,
) -> Result<ProxyHandle, Error> {
    let config = Config::from_policy(&gate.policy().network);
    let log = ConnectionLog::open(&gate)?;
    Proxy::start(
        config,
        Arc::new(NetworkDecider::new(gate, asker)),
        Arc::new(log),
    )
    .map_err(|e| Error::failure(format!("cannot start the network proxy: {e}")))
}
