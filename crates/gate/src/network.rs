//! Connections through cordon's network proxy, decided and recorded by a gate.
//!
//! A connection to `HOST:PORT` is a call of the `network` tool ([`Gate::network`]), decided
//! by the engine like any call — the `[network]` section's rules, session grants, the mode,
//! a person asked through an [`AsyncAsker`] — and recorded before the proxy connects.
//! One [`Decide`] (`Deciding`) gives that decision to the proxy, whether the gate is shared
//! ([`start_proxy`]) or a run's threads decide for it; [`ConnectionLog`] writes the
//! proxy's connection records (open, close with bytes and duration, refusals after the
//! address check) into the gate's audit log, in the same chain. [`start_proxy`] starts a proxy
//! with both for a run; the run hands it the listeners made inside the sandbox.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use cordon_approval::audit::{self, SharedLog};
use cordon_approval::{AskError, AsyncAsker, Key, Pending, Request};
use cordon_netproxy::{
    Config, ConnectionRecord, Decide, DecisionSync, Event, Proxy, ProxyHandle, Record, Verdict,
};
use cordon_tools::network::NetworkTool;
use cordon_tools::tool::Tool;

use crate::{clean, lock, Call, Error, Gate, What, EXIT_DENIED};

/// Raises the process's soft open-file limit to the hard one; call it once at start, before
/// any proxy: the proxy fits the connections it serves at once into that limit.
pub use cordon_netproxy::raise_fd_limit;

impl Gate {
    /// A connection call: tool `network`, key `["network", "HOST:PORT"]` (host normalised).
    /// What is not a host and port is refused (126), nothing recorded. [`Gate::explain`] says
    /// how it is decided; [`Gate::decide`] decides it with the same evaluator.
    pub fn network(&self, host: &str, port: u16) -> Result<Call, Error> {
        let target = cordon_policy::network::Target::new(host, port)
            .map_err(|e| Error::new(EXIT_DENIED, format!("network: {e}")))?;
        let a = NetworkTool
            .assess(&serde_json::json!({ "target": target.to_string() }))
            .map_err(|e| Error::new(EXIT_DENIED, e))?;
        let id = audit::new_id().unwrap_or_default();
        // The tool has no opinion: the request carries none, and the engine's rules decide.
        let request = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
            .with_presentation(a.presentation.clone())
            .with_args(a.args.clone());
        Ok(Call {
            request,
            shown: a.presentation.summary.clone(),
            preview: a.presentation.preview.to_string(),
            what: What::File(Box::new(a)),
        })
    }
}

/// How a gate's decider has a connection (or a request inside a terminated tunnel) decided:
/// the one thing its two forms differ in. [`Deciding`] is the proxy's [`Decide`] on top of
/// either, so that both answer the proxy the same way.
trait Decider: Send + Sync {
    fn decide_what(
        &self,
        what: Asked,
    ) -> Pin<Box<dyn Future<Output = (Verdict, Option<DecisionSync>)> + Send + '_>>;
}

/// The proxy's [`Decide`] for a gate's [`Decider`]: a connection's verdict with the wait for
/// its record ([`Decide::decide_unsynced`]), or settled first ([`Decide::decide`]); a request
/// inside a terminated tunnel decided at once.
struct Deciding<D>(D);

impl<D: Decider> Decide for Deciding<D> {
    fn decide(&self, host: &str, port: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let decided = self.decide_unsynced(host, port);
        Box::pin(async move { settled(decided.await).await })
    }

    fn decide_unsynced(
        &self,
        host: &str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = (Verdict, Option<DecisionSync>)> + Send + '_>> {
        self.0.decide_what(Asked::Connection {
            host: host.to_string(),
            port,
        })
    }

    fn decide_request(
        &self,
        method: &str,
        host: &str,
        port: u16,
        path: &str,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let asked = self.0.decide_what(Asked::Request {
            method: method.to_string(),
            host: host.to_string(),
            port,
            path: path.to_string(),
        });
        // Never deferred (a request has no open record): durable with the verdict.
        Box::pin(async move { asked.await.0 })
    }
}

/// A [`Decider`] on a gate shared with the caller ([`start_proxy`]): each connection decided
/// by the gate ([`Gate::decide_async`]), recorded before the answer. One person is asked one
/// question at a time; connections that need no answer are decided meanwhile.
struct NetworkDecider<A> {
    gate: Arc<Gate>,
    asker: tokio::sync::Mutex<A>,
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

impl<A: AsyncAsker + Send + 'static> Decider for NetworkDecider<A> {
    fn decide_what(
        &self,
        what: Asked,
    ) -> Pin<Box<dyn Future<Output = (Verdict, Option<DecisionSync>)> + Send + '_>> {
        let (call, defer) = what.call(&self.gate);
        Box::pin(async move {
            let call = match call {
                Ok(c) => c,
                Err(e) => return (refused(&e), None),
            };
            let (d, durable) = self
                .gate
                .decide_async_deferring(&call, &mut OneAtATime(&self.asker), defer)
                .await;
            verdict(&d, durable)
        })
    }
}

/// A verdict once its record is durable (waited for on a blocking thread): for a caller of
/// [`Decide::decide`], which makes no open record to share the sync with.
async fn settled((verdict, sync): (Verdict, Option<DecisionSync>)) -> Verdict {
    let Some(sync) = sync else {
        return verdict;
    };
    let waited = tokio::task::spawn_blocking(move || sync.wait())
        .await
        .unwrap_or_else(|e| Err(cordon_netproxy::Error::RecordingThread(e)));
    match waited {
        Ok(()) => verdict,
        Err(e) => Verdict::Unrecorded {
            reason: e.to_string(),
        },
    }
}

/// The proxy's verdict on a gate's decision, with the wait for its record when that is not
/// yet durable (the proxy makes it durable with the open record: one sync for both).
fn verdict(
    d: &crate::Decision,
    durable: Option<cordon_approval::Durable>,
) -> (Verdict, Option<DecisionSync>) {
    // The audit log's failure, not the policy's: the proxy says so, and what to do.
    if matches!(d.by(), Some(cordon_approval::By::AuditFailed)) {
        let reason = d.reason().to_string();
        return (Verdict::Unrecorded { reason }, None);
    }
    let rule = d.by().map(|b| b.to_string()).unwrap_or_default();
    if !d.is_allowed() {
        let deny = Verdict::Deny {
            reason: d.reason().to_string(),
            rule,
        };
        return (deny, None);
    }
    let sync = durable.map(|durable| {
        DecisionSync::new(move || {
            durable
                .wait()
                .map_err(|denied| cordon_netproxy::Error::unrecorded(clean(denied.reason())))
        })
    });
    (Verdict::Allow { rule }, sync)
}

/// The proxy's [`Record`]: connection records in the gate's audit log (`by: connection`).
pub struct ConnectionLog {
    /// Group commit: connections recorded at once share one sync — with the gate's decisions,
    /// whose log this is.
    log: Arc<SharedLog>,
}

impl ConnectionLog {
    /// The writer on `gate`'s audit log: the engine's own, the one opening of the log (opened
    /// with the gate, beneath a writable root where it lies in one, its session and client
    /// set), so that a connection's decision and its open record share syncs and one chain.
    /// Every gate that runs a command has it; a gate that records nothing (`cordon check`'s)
    /// starts no proxy, saying why — never a second opening of the log beside the first.
    pub fn open(gate: &Gate) -> Result<ConnectionLog, Error> {
        match lock(&gate.engine).audit_log() {
            Some(log) => Ok(ConnectionLog { log }),
            None => Err(Error::failure(
                "no network proxy for a gate that records nothing (`cordon check` only decides): a connection must be recorded before it is made; run the command with `cordon exec`",
            )),
        }
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
    fn connection(&self, c: &ConnectionRecord) -> Result<(), cordon_netproxy::Error> {
        // The decision was recorded before the connection was made; an open record that
        // cannot be made durable refuses the connection (the proxy's part), a close record
        // that cannot is said by the proxy.
        self.log
            .append(&connection_record(c))
            .map(|_| ())
            .map_err(unrecorded)
    }

    fn open(
        &self,
        c: &ConnectionRecord,
        decision: Option<DecisionSync>,
    ) -> Result<(), cordon_netproxy::Error> {
        // The open record is written before the wait for the decision's record (written
        // before the connect, into this same log): the sync that wait makes or joins then
        // covers both, one sync before the first byte instead of two in a row.
        let written = self.log.write(&connection_record(c)).map_err(unrecorded)?;
        if let Some(d) = decision {
            d.wait()?;
        }
        self.log.durable(written).map(|_| ()).map_err(unrecorded)
    }
}

/// The audit log's failure as the proxy's, its message made safe for a terminal.
fn unrecorded(e: cordon_approval::Error) -> cordon_netproxy::Error {
    cordon_netproxy::Error::unrecorded(clean(&e.to_string()))
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
    let decider = NetworkDecider {
        gate,
        asker: tokio::sync::Mutex::new(asker),
    };
    Proxy::start(config, Arc::new(Deciding(decider)), Arc::new(log))
        .map_err(|e| Error::failure(format!("cannot start the network proxy: {e}")))
}

/// A question from the proxy's threads to the deciding thread.
struct Ask {
    what: Asked,
    reply: tokio::sync::oneshot::Sender<(Verdict, Option<DecisionSync>)>,
}

/// What the proxy asks about: a connection, or a request inside a terminated tunnel.
enum Asked {
    Connection {
        host: String,
        port: u16,
    },
    Request {
        method: String,
        host: String,
        port: u16,
        path: String,
    },
}

impl Asked {
    /// The gate's call for what is asked, and whether its record may be deferred: a
    /// connection's is made durable with its open record; a request inside a terminated
    /// tunnel has none and is answered at once.
    fn call(&self, gate: &Gate) -> (Result<Call, Error>, bool) {
        match self {
            Asked::Connection { host, port } => (gate.network(host, *port), true),
            Asked::Request {
                method,
                host,
                port,
                path,
            } => (gate.http_request(method, host, *port, path), false),
        }
    }
}

/// The proxy's answer when what it asked about is not a call the gate can decide.
fn refused(e: &Error) -> Verdict {
    Verdict::Deny {
        reason: e.to_string(),
        rule: String::new(),
    }
}

/// A [`Decider`] for one run of a gate held by reference: each question goes to a thread of
/// the run's scope, which decides it with the gate ([`Gate::decide`]).
struct ChannelDecide(std::sync::mpsc::Sender<Ask>);

impl Decider for ChannelDecide {
    fn decide_what(
        &self,
        what: Asked,
    ) -> Pin<Box<dyn Future<Output = (Verdict, Option<DecisionSync>)> + Send + '_>> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = self.0.send(Ask { what, reply });
        Box::pin(async move {
            let gone = || {
                let deny = Verdict::Deny {
                    reason: "cordon stopped deciding connections (the run is over)".into(),
                    rule: String::new(),
                };
                (deny, None)
            };
            match sent {
                Ok(()) => answer.await.unwrap_or_else(|_| gone()),
                Err(_) => gone(),
            }
        })
    }
}

/// Who is asked about a run's connections, and how the command's terminal is taken from it
/// while they are.
pub(crate) struct Asking {
    pub asker: crate::SharedAsker,
    #[cfg(target_os = "linux")]
    pub switch: cordon_ossandbox::TerminalSwitch,
    /// The person answered "no, and no more questions this run" ([`Answer::Abort`]): every
    /// later question of the run is answered so without asking.
    pub stopped: std::sync::atomic::AtomicBool,
    /// Targets the person denied (or left unanswered) in this run: not asked about again.
    denied: Mutex<std::collections::HashSet<Vec<String>>>,
    /// Targets the person approved for the session (or always) in this run: connections to
    /// them that were already waiting for their turn are not asked about again.
    granted: Mutex<std::collections::HashSet<Vec<String>>>,
}

impl Asking {
    pub fn new(
        asker: crate::SharedAsker,
        #[cfg(target_os = "linux")] switch: cordon_ossandbox::TerminalSwitch,
    ) -> Asking {
        Asking {
            asker,
            #[cfg(target_os = "linux")]
            switch,
            stopped: Default::default(),
            denied: Default::default(),
            granted: Default::default(),
        }
    }
}

impl cordon_approval::Asker for &Asking {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: std::time::Instant,
    ) -> Result<cordon_approval::Answer, AskError> {
        use cordon_approval::Answer;
        use std::sync::atomic::Ordering;
        let target: Vec<String> = request
            .keys
            .iter()
            .flat_map(|k| k.words().to_vec())
            .collect();
        // One question at a time; the terminal is the command's again once it is answered.
        let mut asker = lock(&self.asker);
        // While this one waited its turn, the run may have ended, its time run out, or the
        // person said no to this target or to every further question: nobody is asked then.
        #[cfg(target_os = "linux")]
        if self.switch.is_over() {
            return Err(AskError::Lost("the command ended before an answer".into()));
        }
        if std::time::Instant::now() >= deadline {
            return Err(AskError::TimedOut);
        }
        if self.stopped.load(Ordering::SeqCst) {
            return Ok(Answer::Abort);
        }
        if lock(&self.denied).contains(&target) {
            return Ok(Answer::Deny);
        }
        // Decided by the engine before the person's grant (several connections opened at
        // once, as package managers do): the grant is what the person said for them too.
        if lock(&self.granted).contains(&target) {
            return Ok(Answer::Session);
        }
        let answer = self.ask_now(&mut *asker, request, pending, deadline);
        match &answer {
            Ok(Answer::Abort) => self.stopped.store(true, Ordering::SeqCst),
            Ok(Answer::Deny | Answer::DenyWithNote(_)) | Err(AskError::TimedOut) => {
                lock(&self.denied).insert(target);
            }
            Ok(Answer::Session | Answer::Always) => {
                lock(&self.granted).insert(target);
            }
            _ => {}
        }
        answer
    }
}

impl Asking {
    fn ask_now(
        &self,
        asker: &mut (dyn cordon_approval::Asker + Send),
        request: &Request,
        pending: &Pending,
        deadline: std::time::Instant,
    ) -> Result<cordon_approval::Answer, AskError> {
        #[cfg(target_os = "linux")]
        {
            let _lent = self.switch.lend();
            // Withdrawn when the run ends first: nothing is left to connect.
            asker.ask_withdrawable(request, pending, deadline, &|| self.switch.is_over())
        }
        #[cfg(not(target_os = "linux"))]
        asker.ask(request, pending, deadline)
    }
}

/// Decides one connection for a run: the gate's decision, recorded before it is given (an
/// allowed connection's record made durable with its open record: the wait comes with the
/// verdict). With nobody to ask, an ask is a denial, with the reason, recorded as such.
fn decide_now(gate: &Gate, what: &Asked, ask: Option<&Asking>) -> (Verdict, Option<DecisionSync>) {
    let (call, defer) = what.call(gate);
    let call = match call {
        Ok(c) => c,
        Err(e) => return (refused(&e), None),
    };
    let (d, durable) = match ask {
        Some(mut a) => {
            let (d, durable) = gate.decide_deferring(&call, &mut a, defer);
            if !d.notices.is_empty() {
                // What the decision says (a rule remembered, or not) goes to the person who
                // answered, on the terminal, between the command's output.
                #[cfg(target_os = "linux")]
                let _lent = a.switch.lend();
                for n in &d.notices {
                    eprintln!("cordon: {n}");
                }
            }
            (d, durable)
        }
        None => gate.decide_deferring(&call, &mut crate::nobody(), defer),
    };
    verdict(&d, durable)
}

/// What the person reads on stderr when a run ends: one line per refused destination (where
/// a client that retried and printed "403 Forbidden" said nothing of why), what it resolved
/// to, why, and the `[network]` line that would allow it; and a warning when connection
/// records could not be written.
pub fn report_lines(r: &cordon_netproxy::Report) -> Vec<String> {
    let mut lines: Vec<String> = r
        .refused
        .iter()
        .map(|f| {
            let mut line = format!("cordon: {}:{}", clean(&f.host), f.port);
            if let Some(a) = f.addr {
                line.push_str(&format!(" ({a})"));
            }
            if f.count > 1 {
                line.push_str(&format!(", {} connections", f.count));
            }
            line.push_str(&format!(": {}", clean(&f.reason)));
            if !f.allow.is_empty() {
                line.push_str(&format!("; to allow it: {}", clean(&f.allow)));
            }
            line
        })
        .collect();
    if r.unrecorded > 0 {
        lines.push(format!(
            "cordon: warning: {} connection records could not be written to the audit log before cordon stopped",
            r.unrecorded
        ));
    }
    lines
}

/// How many of a run's connections are decided at once, at most.
const DECIDERS: usize = 32;

/// A deciding thread's place among the [`DECIDERS`], given back on drop.
struct Slot<'a>(&'a (Mutex<usize>, std::sync::Condvar));

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *lock(&self.0 .0) -= 1;
        self.0 .1.notify_one();
    }
}

/// Runs `run` with cordon's proxy serving it: `run` gets the handoff for the sandbox (the
/// listeners made inside the command's network namespace come back through it and are
/// served) and the environment that points the command's clients at the proxy. Connections
/// are decided by `gate` and recorded in its audit log; when `run` returns, the proxy closes
/// what is still open (recording each) and stops.
pub(crate) fn run_with_proxy<T>(
    gate: &Gate,
    ask: Option<Asking>,
    run: impl FnOnce(
        cordon_ossandbox::ProxyHandoff,
        Vec<(String, String)>,
        Vec<cordon_ossandbox::RunFile>,
    ) -> T,
) -> Result<T, Error> {
    let port = cordon_ossandbox::PROXY_PORT;
    let log = ConnectionLog::open(gate)?;
    // The run's credentials: real values read now, outside the sandbox; the command gets
    // placeholders and the CA bundle, the proxy the values and the run's CA.
    // What the command can read: a credential file there would hand it the real value.
    let readable: Vec<(std::path::PathBuf, String)> = gate
        .sandbox
        .as_ref()
        .map(|p| {
            p.profile()
                .rules
                .iter()
                .filter(|r| !r.access.device)
                .map(|r| (r.path.clone(), r.origin.clone()))
                .collect()
        })
        .unwrap_or_default();
    let creds = crate::credentials::prepare(gate.policy(), &readable)?;
    let mut config = Config::from_policy(&gate.policy().network);
    let forwards = &gate.policy().network.forwards;
    let mut vars = cordon_netproxy::child_env(port);
    let mut files = Vec::new();
    if let Some(c) = creds {
        config.termination = Some(c.termination);
        vars.extend(c.vars);
        files = c.files;
    }
    // The proxy's threads and the deciding threads inherit this: a SIGTERM meant for the
    // command must reach the run's signalfd (and be forwarded), not kill cordon in one of them.
    #[cfg(target_os = "linux")]
    let _mask = cordon_ossandbox::block_forwarded_signals()
        .map_err(|e| Error::failure(format!("cannot block signals for the run: {e}")))?;
    let (asks, asked) = std::sync::mpsc::channel::<Ask>();
    let handle = Proxy::start(
        config,
        Arc::new(Deciding(ChannelDecide(asks))),
        Arc::new(log),
    )
    .map_err(|e| Error::failure(format!("cannot start the network proxy: {e}")))?;
    // Deciding threads at work, and word when one is done.
    let busy = (Mutex::new(0usize), std::sync::Condvar::new());
    Ok(std::thread::scope(|scope| {
        // Each connection's decision in a thread of its own, so that one waiting for a person
        // or the audit log's fsync does not hold up the others — at most DECIDERS at a time
        // (the engine decides one at a time anyway); more requests wait in the channel.
        let asking = ask.as_ref();
        let busy = &busy;
        scope.spawn(move || {
            for a in asked {
                let mut n = lock(&busy.0);
                while *n >= DECIDERS {
                    n = busy.1.wait(n).unwrap_or_else(|p| p.into_inner());
                }
                *n += 1;
                drop(n);
                scope.spawn(move || {
                    // The slot is given back even if deciding panics.
                    let _slot = Slot(busy);
                    let _ = a.reply.send(decide_now(gate, &a.what, asking));
                });
            }
        });
        let (listeners, handed) = std::sync::mpsc::channel::<std::net::TcpListener>();
        let handle = Arc::new(handle);
        let serving = {
            let handle = handle.clone();
            scope.spawn(move || {
                for l in handed {
                    // The proxy's listener, or a forwarded port's: told apart by its port.
                    let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    let served = match forwards.iter().find(|f| f.port == port) {
                        Some(f) => handle.serve_forward(l, f.to.clone()),
                        None => handle.serve(l),
                    };
                    if let Err(e) = served {
                        eprintln!(
                            "cordon: the network proxy cannot serve the sandbox's listener: {}",
                            clean(&e.to_string())
                        );
                    }
                }
            })
        };
        let out = run(
            cordon_ossandbox::ProxyHandoff {
                port,
                listener: listeners,
                forwards: forwards.iter().map(|f| f.port).collect(),
            },
            vars,
            files,
        );
        // The run's handoff is gone with its spec: the serving thread ends.
        let _ = serving.join();
        // Ends the connections (each recorded); the proxy's Decide goes with it, and so the
        // deciding thread. The serving thread, the only other holder, has ended.
        if let Ok(handle) = Arc::try_unwrap(handle) {
            for line in report_lines(&handle.shutdown()) {
                eprintln!("{line}");
            }
        }
        out
    }))
}
