//! cordon's network proxy: the only way out of a run whose network is `proxy`.
//!
//! The sandbox leaves the child a network namespace with nothing but loopback; listeners
//! created in there are handed to this proxy ([`ProxyHandle::serve`]), which runs in the
//! cordon process, outside the sandbox, and accepts on them. Every connection goes through
//! the same steps:
//!
//! ```text
//!  accept ─▶ sniff first byte ─┬─ 0x05 ─▶ SOCKS5: greeting, CONNECT host:port ─┐
//!                              └─ else ─▶ HTTP/1: CONNECT host:port           ─┤
//!                                          or GET http://host:port/… (forward)─┤
//!                                                                              ▼
//!   normalise HOST:PORT (IDNA) ─▶ Decide (the approval engine; may ask a person)
//!     ─▶ resolve once ([network.hosts], else the system resolver)
//!     ─▶ check each address (internal addresses refused unless listed; denied addresses)
//!     ─▶ connect to exactly that SocketAddr ─▶ relay, counting bytes ─▶ Record at close
//! ```
//!
//! The check is made on the very address the proxy connects to, after the one resolution,
//! so a name cannot resolve to a public address for the check and a private one for the
//! connection (DNS rebinding). A refusal is an HTTP `403` whose body names the host, says it
//! is the policy and how to allow it, or SOCKS reply `0x02` ("connection not allowed by
//! ruleset").
//!
//! Memory per connection is bounded: request heads by [`Limits::header_bytes`], relays by two
//! buffers of [`Limits::buffer_bytes`]. Handshakes, connects and idle relays time out
//! ([`Limits`]).
//!
//! So are file descriptors. A connection holds at most [`FDS_PER_CONNECTION`]; the proxy
//! serves at most [`Limits::max_connections`] at once, fitted by [`Limits::within_fds`] into
//! the process's open-file limit less [`FDS_RESERVED`] for the rest of cordon (the audit log,
//! the sandbox, the terminal relay) — a command that opens a thousand tunnels at once must not
//! make cordon fail to record a decision. A connection beyond the cap is accepted (into one
//! of [`Limits::max_refusing`] places, one descriptor each), read far enough to know what it
//! asks for, refused — HTTP `503` with the reason, SOCKS reply `0x01` — and recorded; when
//! those places are taken too, the next waits in the listen queue. [`raise_fd_limit`], called
//! once at start, gives the proxy the room the system allows.
//!
//! The proxy owns its tokio runtime; [`Decide`] and [`Record`] are how the embedding program
//! (cordon's gate) plugs in the approval engine and the audit log.

#![forbid(unsafe_code)]

mod connect;
mod forward;
mod http;
mod plain;
mod relay;
mod sni;
mod socks;
mod terminate;

pub use terminate::{Secret, Termination};

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_policy::network::HostPattern;
use cordon_policy::NetworkPolicy;
use tokio::sync::{watch, Semaphore};

/// What the proxy needs besides its decisions: the static names, the addresses the policy
/// lists, and its limits. [`Config::from_policy`] builds it from the `[network]` section.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `[network.hosts]`: normalised name → address, used instead of the resolver. A
    /// connection to that name (on a port decided for it) may reach that address even when it
    /// is internal; no other name and no address literal gets that from the entry.
    pub hosts: HashMap<String, IpAddr>,
    /// Address entries of `allow`: connecting to one (on its port) is allowed even when it
    /// is internal (loopback, private, …), whatever name led there.
    pub listed: Vec<AddrEntry>,
    /// Address entries of `deny`: a name that resolves to one is refused as well.
    pub denied: Vec<AddrEntry>,
    pub limits: Limits,
    /// TLS termination for the hosts a credential goes to (none: every tunnel end to end).
    pub termination: Option<Arc<Termination>>,
}

/// An address, on one port or (`port: None`) every port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrEntry {
    pub addr: IpAddr,
    pub port: Option<u16>,
}

impl AddrEntry {
    fn covers(&self, addr: SocketAddr) -> bool {
        self.addr == addr.ip().to_canonical() && self.port.is_none_or(|p| p == addr.port())
    }
}

impl Config {
    /// The `[network]` section's hosts table and address entries, with default limits.
    pub fn from_policy(network: &NetworkPolicy) -> Config {
        let addrs = |list: &[cordon_policy::HostRule]| {
            list.iter()
                .filter_map(|r| match r.host {
                    HostPattern::Addr(addr) => Some(AddrEntry { addr, port: r.port }),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        Config {
            hosts: network
                .hosts
                .iter()
                .map(|h| (h.name.clone(), h.addr))
                .collect(),
            listed: addrs(&network.allow),
            denied: addrs(&network.deny),
            limits: Limits::default(),
            termination: None,
        }
    }
}

/// File descriptors one connection holds at most: the client's socket, the destination's, and
/// on Linux a pipe (two descriptors) for each direction of a spliced relay. (Before the relay,
/// the audit log's descriptors its decision and open record are synced through take the
/// pipes' place.)
pub const FDS_PER_CONNECTION: u64 = 6;

/// File descriptors [`Limits::within_fds`] leaves to the rest of the process: the audit log and
/// its lock, the sandbox's pipes, sockets and namespaces, the terminal relay, the runtime's own.
pub const FDS_RESERVED: u64 = 256;

/// Connections served at once at most, whatever the open-file limit allows: each may hold two
/// relay pipes of [`Limits::buffer_bytes`] of kernel memory.
pub const MAX_CONNECTIONS: usize = 1024;

/// Bounds on what one connection may hold or wait for.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once; one more is refused (`503`, SOCKS `0x01`) and recorded.
    pub max_connections: usize,
    /// Connections being refused at once (one descriptor each, until the refusal is answered
    /// and recorded); more wait in the listen queue.
    pub max_refusing: usize,
    /// Largest HTTP request head (request line and headers), bytes (at least 8 KiB).
    pub header_bytes: usize,
    /// How long a client may take to send its request head or SOCKS handshake.
    pub handshake_timeout: Duration,
    /// How long name resolution may take.
    pub resolve_timeout: Duration,
    /// How long connecting to the destination may take.
    pub connect_timeout: Duration,
    /// A relay with no byte in either direction for this long is closed.
    pub idle_timeout: Duration,
    /// Buffer size of a relay, each direction (on Linux, the size of the kernel pipe a TCP
    /// relay splices through).
    pub buffer_bytes: usize,
}

impl Default for Limits {
    /// [`Limits::within_fds`] of the process's open-file limit now.
    fn default() -> Limits {
        Limits::within_fds(fd_limit())
    }
}

impl Limits {
    /// The default limits for a proxy that may use `fds` open files less [`FDS_RESERVED`]:
    /// [`Limits::max_refusing`] of one descriptor each and as many connections of
    /// [`FDS_PER_CONNECTION`] as fit in the rest (at least one, at most [`MAX_CONNECTIONS`]).
    pub fn within_fds(fds: u64) -> Limits {
        let max_refusing = 64;
        let budget = fds.saturating_sub(FDS_RESERVED + max_refusing as u64);
        let fit = usize::try_from(budget / FDS_PER_CONNECTION).unwrap_or(usize::MAX);
        Limits {
            max_connections: fit.clamp(1, MAX_CONNECTIONS),
            max_refusing,
            header_bytes: 64 * 1024,
            handshake_timeout: Duration::from_secs(30),
            resolve_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            buffer_bytes: 256 * 1024,
        }
    }
}

/// The process's soft open-file limit (`RLIMIT_NOFILE`).
#[cfg(unix)]
pub fn fd_limit() -> u64 {
    use rustix::process::{getrlimit, Resource};
    getrlimit(Resource::Nofile).current.unwrap_or(1 << 20)
}

/// The process's open-file limit: 1024 where there is no `RLIMIT_NOFILE` to read.
#[cfg(not(unix))]
pub fn fd_limit() -> u64 {
    1024
}

/// Raises the soft open-file limit to the hard one (a process may, without privilege), so
/// that the proxy's budget ([`Limits::default`]) is what the system allows rather than the
/// 1024 most sessions start with. Returns the soft limit in force afterwards. An unlimited
/// hard limit is taken as 2^20, the kernel's default `fs.nr_open`.
#[cfg(unix)]
pub fn raise_fd_limit() -> io::Result<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    let hard = now.maximum.unwrap_or(1 << 20);
    let soft = now.current.unwrap_or(1 << 20);
    if soft >= hard {
        return Ok(soft);
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(hard),
            maximum: now.maximum,
        },
    )?;
    Ok(hard)
}

/// The open-file limit: nothing to raise where there is no `RLIMIT_NOFILE`.
#[cfg(not(unix))]
pub fn raise_fd_limit() -> io::Result<u64> {
    Ok(fd_limit())
}

/// The answer to "may the run connect to HOST:PORT?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed; `rule` says by what (a policy entry, a person, a session grant, …).
    Allow { rule: String },
    /// Refused, and why.
    Deny { reason: String, rule: String },
    /// Whatever was decided, its record could not be made durable (a full disk, a log that
    /// cannot be written): refused as the audit log's failure, not the policy's — `reason`
    /// names the log and why. cordon makes no connection the audit log does not show.
    Unrecorded { reason: String },
}

/// What failed on the proxy's side of a connection, said in one line that names it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A record (a connection's, or its decision's) could not be made durable: the
    /// recorder's own error, which names the log and why.
    #[error("{0}")]
    Unrecorded(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The thread that makes a record durable failed (it panicked).
    #[error("the recording thread failed: {0}")]
    RecordingThread(#[source] tokio::task::JoinError),
    /// The destination of a terminated tunnel's name is not one TLS can verify.
    #[error("not a TLS server name: {0}")]
    ServerName(#[source] tokio_rustls::rustls::pki_types::InvalidDnsNameError),
    /// TLS with the destination of a terminated tunnel failed.
    #[error("TLS with {host} failed (verified against the system's CAs and [network] upstream_ca): {source}")]
    UpstreamTls { host: String, source: io::Error },
    #[error("TLS with {host} timed out")]
    UpstreamTlsTimeout { host: String },
    /// HTTP over that TLS failed.
    #[error("HTTP with {host} failed: {source}")]
    UpstreamHttp { host: String, source: hyper::Error },
    /// Connecting again to a terminated tunnel's destination (its address, decided once).
    #[error("cannot connect again to {addr}: {source}")]
    Reconnect { addr: SocketAddr, source: io::Error },
    #[error("connecting again to {addr} timed out")]
    ReconnectTimeout { addr: SocketAddr },
}

impl Error {
    /// A recorder's failure ([`Record`], [`DecisionSync`]): its message as it is.
    pub fn unrecorded(why: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Unrecorded(why.into())
    }
}

/// An allowed connection's decision record, written but not yet known to be durable
/// ([`Decide::decide_unsynced`]): [`Record::open`] makes it durable together with the
/// connection's open record — one sync for both, where two in a row would double the time to
/// the first byte — and the proxy relays nothing before that returned `Ok`.
pub struct DecisionSync(Box<dyn FnOnce() -> Result<(), Error> + Send>);

impl DecisionSync {
    /// `wait` returns once the decision's record is durable, or why it could not be made so
    /// (naming the log).
    pub fn new(wait: impl FnOnce() -> Result<(), Error> + Send + 'static) -> DecisionSync {
        DecisionSync(Box::new(wait))
    }

    /// Waits for the decision's record: `Ok` once it is durable.
    pub fn wait(self) -> Result<(), Error> {
        (self.0)()
    }
}

impl std::fmt::Debug for DecisionSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecisionSync")
    }
}

/// Decides connections (cordon's gate: the approval engine, which may ask a person — the
/// connection waits for the answer, and the engine's timeout denies).
pub trait Decide: Send + Sync {
    /// `host` is normalised (IDNA ASCII, lower case; IPv6 in brackets), `port` is not 0.
    /// The verdict's record (if the decider keeps one) is durable when it is returned.
    fn decide(&self, host: &str, port: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>>;

    /// [`Decide::decide`] for a decider whose record of an allowed connection may still be on
    /// its way to disk: with the verdict, the wait for it, which the proxy hands to
    /// [`Record::open`] with the connection's open record (one sync for both). The proxy
    /// connects meanwhile, but relays no byte and answers nothing before the wait returned
    /// `Ok`. A denial's record must be durable when it is returned (the denial is answered at
    /// once). By default: [`Decide::decide`], nothing left to wait for.
    fn decide_unsynced(
        &self,
        host: &str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = (Verdict, Option<DecisionSync>)> + Send + '_>> {
        let verdict = self.decide(host, port);
        Box::pin(async move { (verdict.await, None) })
    }

    /// A request inside a tunnel whose TLS the proxy terminates (the tunnel's `host:port`
    /// already allowed): `method` as sent, `path` the request target's path and query. By
    /// default every request of an allowed tunnel is allowed.
    fn decide_request(
        &self,
        method: &str,
        host: &str,
        port: u16,
        path: &str,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let _ = (method, host, port, path);
        Box::pin(async {
            Verdict::Allow {
                rule: String::new(),
            }
        })
    }
}

/// Where connection records go (cordon's gate: the audit log). Called from the proxy's
/// threads, where blocking (an fsync) is allowed. Returns once the record is durable, or why
/// it is not: a connection whose open record fails is refused before its first byte.
pub trait Record: Send + Sync {
    fn connection(&self, c: &ConnectionRecord) -> Result<(), Error>;

    /// An open record (`c.event` is [`Event::Open`]) and its connection's decision still on
    /// its way to disk ([`Decide::decide_unsynced`]): returns `Ok` once both are durable. A
    /// recorder that shares one log with the decider writes the open record first and then
    /// waits for `decision`, so that one sync covers both. By default: the decision's wait,
    /// then [`Record::connection`].
    fn open(&self, c: &ConnectionRecord, decision: Option<DecisionSync>) -> Result<(), Error> {
        if let Some(d) = decision {
            d.wait()?;
        }
        self.connection(c)
    }
}

/// How the client asked for the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP `CONNECT host:port` (a tunnel, usually TLS).
    HttpConnect,
    /// A plain HTTP request with an absolute URI, forwarded.
    Http,
    /// SOCKS5 `CONNECT`.
    Socks5,
    /// One request inside a tunnel whose TLS the proxy terminates (recorded when refused).
    HttpsRequest,
    /// A connection to a forwarded port (`[network.forward]`), relayed to its one destination.
    Forward,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpConnect => "http-connect",
            Protocol::Http => "http",
            Protocol::Socks5 => "socks5",
            Protocol::HttpsRequest => "https-request",
            Protocol::Forward => "forward",
        }
    }
}

/// When a record is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The destination is connected (allowed connections only).
    Open,
    /// The connection is over, or was refused: every connection ends with exactly one.
    Close,
}

/// One connection, at open or at close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRecord {
    /// Numbers the proxy's connections from 1 (an HTTP request forwarded is one).
    pub id: u64,
    pub event: Event,
    pub protocol: Protocol,
    /// Normalised host (or what the client sent, when it was not a host).
    pub host: String,
    pub port: u16,
    /// The address connected to (or refused).
    pub addr: Option<SocketAddr>,
    /// Whether the connection was made.
    pub allowed: bool,
    /// What decided ([`Verdict`]'s rule); empty when it never came to a decision.
    pub rule: String,
    /// Why it was refused or ended with an error; empty otherwise.
    pub reason: String,
    /// Bytes sent to the destination.
    pub bytes_up: u64,
    /// Bytes received from the destination.
    pub bytes_down: u64,
    /// From accepting the request to this event.
    pub duration: Duration,
}

/// The proxy's entry point.
pub struct Proxy;

impl Proxy {
    /// Starts the proxy's runtime (its own threads). It serves nothing until given listeners.
    pub fn start(
        config: Config,
        decide: Arc<dyn Decide>,
        record: Arc<dyn Record>,
    ) -> io::Result<ProxyHandle> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("cordon-proxy")
            .enable_io()
            .enable_time()
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let max = config.limits.max_connections.max(1);
        let refusing = config.limits.max_refusing.max(1);
        let shared = Arc::new(Shared {
            config,
            decide,
            record,
            next_id: AtomicU64::new(1),
            stopped,
            slots: Arc::new(Semaphore::new(max)),
            max_connections: max,
            refusing: Arc::new(Semaphore::new(refusing)),
            max_refusing: refusing,
            refused: Default::default(),
        });
        Ok(ProxyHandle {
            runtime,
            shared,
            stop,
        })
    }
}

/// A running proxy. Dropping it without [`ProxyHandle::shutdown`] stops it abruptly.
pub struct ProxyHandle {
    runtime: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl ProxyHandle {
    /// Accepts connections on `listener` (e.g. one created inside the sandbox's network
    /// namespace) until shutdown.
    pub fn serve(&self, listener: std::net::TcpListener) -> io::Result<()> {
        listener.set_nonblocking(true)?;
        let _entered = self.runtime.enter();
        let listener = tokio::net::TcpListener::from_std(listener)?;
        self.runtime
            .spawn(accept_loop(self.shared.clone(), listener, None));
        Ok(())
    }

    /// Accepts connections on `listener` (a forwarded port made inside the sandbox) until
    /// shutdown, and connects each to `to` alone — after the same decision, address check and
    /// records as any connection — relaying its bytes as they are (any TCP protocol).
    pub fn serve_forward(
        &self,
        listener: std::net::TcpListener,
        to: cordon_policy::network::Target,
    ) -> io::Result<()> {
        listener.set_nonblocking(true)?;
        let _entered = self.runtime.enter();
        let listener = tokio::net::TcpListener::from_std(listener)?;
        self.runtime.spawn(accept_loop(
            self.shared.clone(),
            listener,
            Some(Arc::new(to)),
        ));
        Ok(())
    }

    /// Stops accepting, closes every connection, waits until each has written its close
    /// record (up to [`SHUTDOWN_RECORDS`]: a thousand tunnels cut at the end of a run are a
    /// thousand appends to the audit log, each made durable), and stops the runtime. Says what
    /// was refused, and how many records were not written in time (none, unless the audit log
    /// is wedged). Call it from a plain thread, not from inside another tokio runtime (it blocks
    /// on its own).
    pub fn shutdown(self) -> Report {
        let _ = self.stop.send(true);
        let shared = self.shared.clone();
        let unrecorded = self.runtime.block_on(async move {
            let all = u32::try_from(shared.max_connections).unwrap_or(u32::MAX);
            let refusing = u32::try_from(shared.max_refusing).unwrap_or(u32::MAX);
            // Every connection holds a slot (or a refusing place) until its close record is
            // written.
            let _ = tokio::time::timeout(SHUTDOWN_RECORDS, async {
                let _all = shared.slots.acquire_many(all).await;
                let _refusing = shared.refusing.acquire_many(refusing).await;
            })
            .await;
            (shared.max_connections - shared.slots.available_permits())
                + (shared.max_refusing - shared.refusing.available_permits())
        });
        self.runtime.shutdown_timeout(Duration::from_millis(200));
        let refused = std::mem::take(&mut *lock(&self.shared.refused));
        Report {
            refused,
            unrecorded,
        }
    }
}

/// How long [`ProxyHandle::shutdown`] waits for the connections' close records.
pub const SHUTDOWN_RECORDS: Duration = Duration::from_secs(120);

/// What a proxy has to say when it stops ([`ProxyHandle::shutdown`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The destinations refused, one per host, port and reason, in the order first refused
    /// (at most [`MAX_REFUSED_SHOWN`]; [`Refused::count`] says how often each was).
    pub refused: Vec<Refused>,
    /// Connections whose close record was not written before [`SHUTDOWN_RECORDS`].
    pub unrecorded: usize,
}

/// Distinct refused destinations a [`Report`] keeps.
pub const MAX_REFUSED_SHOWN: usize = 64;

/// A destination the proxy refused: for the run's end, where a client that retried five
/// times and printed "403 Forbidden" left the person none the wiser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Normalised host (or what the client sent).
    pub host: String,
    pub port: u16,
    /// The address refused, when the address check refused it.
    pub addr: Option<IpAddr>,
    /// Why (the same words as the answer's body and the record).
    pub reason: String,
    /// The policy line that would allow it, as written in the `[network]` section; empty
    /// when no policy line would (too many connections at once).
    pub allow: String,
    /// How many connections were refused so.
    pub count: usize,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data: keep going with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The environment that points a child's HTTP, HTTPS and SOCKS clients at the proxy on
/// `127.0.0.1:port`: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (SOCKS5 with names resolved by
/// the proxy: the sandbox has no resolver), each in both cases, and the npm, yarn and pip
/// spellings.
///
/// No `NO_PROXY`: inside the sandbox, loopback is the sandbox's own and holds nothing but the
/// proxy, so a client that went around the proxy for `localhost` would reach nothing, and a
/// loopback service the policy lists (`allow = ["localhost", "127.0.0.1:8080"]`) would be out
/// of reach. Everything goes through the proxy; the variables a client would skip it for are
/// removed from what the command inherits (`cordon_ossandbox::is_proxy_variable`).
pub fn child_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        env.push((name.to_string(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    for (name, value) in [
        ("npm_config_proxy", &http),
        ("npm_config_https_proxy", &http),
        ("YARN_HTTP_PROXY", &http),
        ("YARN_HTTPS_PROXY", &http),
        ("PIP_PROXY", &http),
    ] {
        env.push((name.to_string(), value.clone()));
    }
    env
}

/// What every connection task shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    decide: Arc<dyn Decide>,
    record: Arc<dyn Record>,
    next_id: AtomicU64,
    /// Becomes `true` at shutdown.
    pub(crate) stopped: watch::Receiver<bool>,
    slots: Arc<Semaphore>,
    max_connections: usize,
    /// Places for connections beyond [`Shared::slots`], held while each is refused.
    refusing: Arc<Semaphore>,
    max_refusing: usize,
    /// What was refused, for [`Report::refused`].
    refused: std::sync::Mutex<Vec<Refused>>,
}

impl Shared {
    pub(crate) fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// Resolves when the proxy shuts down.
    pub(crate) async fn shutting_down(&self) {
        let mut rx = self.stopped.clone();
        let _ = rx.wait_for(|s| *s).await;
    }

    pub(crate) async fn decide(&self, host: &str, port: u16) -> (Verdict, Option<DecisionSync>) {
        self.decide.decide_unsynced(host, port).await
    }

    /// A new connection's bookkeeping, starting now.
    pub(crate) fn track(&self, protocol: Protocol, start: Instant) -> Tracker {
        Tracker {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            protocol,
            start,
        }
    }

    /// Notes a refusal for [`Report::refused`]: the first of each host, port and reason
    /// kept, the others counted.
    pub(crate) fn note_refused(&self, mut r: Refused) {
        let mut all = lock(&self.refused);
        if let Some(seen) = all
            .iter_mut()
            .find(|s| s.host == r.host && s.port == r.port && s.reason == r.reason)
        {
            seen.count += 1;
        } else if all.len() < MAX_REFUSED_SHOWN {
            r.count = 1;
            all.push(r);
        }
    }

    /// Writes a close record. Its connection is over whatever the log says: a record that
    /// cannot be written is said on stderr (the recorder's message) and in the report.
    pub(crate) fn write(&self, r: &ConnectionRecord) {
        // The recorder may block (the audit log fsyncs): keep the other connections going.
        if let Err(e) = tokio::task::block_in_place(|| self.record.connection(r)) {
            eprintln!(
                "cordon: warning: the close of connection {} to {}:{} could not be recorded in the audit log: {}",
                r.id,
                r.host.escape_debug(),
                r.port,
                e.to_string().escape_debug()
            );
        }
    }

    /// Writes an open record on a blocking thread (other connections go on meanwhile) and
    /// returns once it and its decision's record (written before the connect, perhaps not yet
    /// synced: `decision`) are durable — before the client is answered: a connection the log
    /// does not show is never made.
    pub(crate) async fn write_open(
        self: &Arc<Self>,
        r: ConnectionRecord,
        decision: Option<DecisionSync>,
    ) -> Result<(), Error> {
        let shared = self.clone();
        tokio::task::spawn_blocking(move || shared.record.open(&r, decision))
            .await
            .unwrap_or_else(|e| Err(Error::RecordingThread(e)))
    }
}

/// One connection's identity and start, for its records.
pub(crate) struct Tracker {
    id: u64,
    protocol: Protocol,
    start: Instant,
}

/// What a record says beyond the tracker.
pub(crate) struct Fields<'a> {
    pub host: &'a str,
    pub port: u16,
    pub addr: Option<SocketAddr>,
    pub allowed: bool,
    pub rule: &'a str,
    pub reason: &'a str,
    pub bytes: (u64, u64),
}

impl Tracker {
    /// A refused connection: noted for the run's end-of-run lines, and closed in the log
    /// with the reason (the address only where the refusal is about it). The one way every
    /// protocol (HTTP, SOCKS5, forwards) records a refusal.
    pub(crate) fn refused(
        &self,
        shared: &Shared,
        host: &str,
        port: u16,
        rule: &str,
        why: &connect::Refusal,
    ) {
        let reason = why.to_string();
        let addr = match why {
            connect::Refusal::Address { addr, .. } => Some(SocketAddr::new(*addr, port)),
            _ => None,
        };
        connect::note(shared, host, port, rule, why);
        self.record(
            shared,
            Event::Close,
            Fields {
                host,
                port,
                addr,
                allowed: false,
                rule,
                reason: &reason,
                bytes: (0, 0),
            },
        );
    }

    pub(crate) fn record(&self, shared: &Shared, event: Event, f: Fields<'_>) {
        shared.write(&self.make(event, f));
    }

    /// The open record, durable with its decision's when this returns `Ok`
    /// ([`Shared::write_open`]).
    pub(crate) async fn opened(
        &self,
        shared: &Arc<Shared>,
        f: Fields<'_>,
        decision: Option<DecisionSync>,
    ) -> Result<(), Error> {
        shared.write_open(self.make(Event::Open, f), decision).await
    }

    fn make(&self, event: Event, f: Fields<'_>) -> ConnectionRecord {
        ConnectionRecord {
            id: self.id,
            event,
            protocol: self.protocol,
            host: f.host.to_string(),
            port: f.port,
            addr: f.addr,
            allowed: f.allowed,
            rule: f.rule.to_string(),
            reason: f.reason.to_string(),
            bytes_up: f.bytes.0,
            bytes_down: f.bytes.1,
            duration: self.start.elapsed(),
        }
    }
}

/// What an accepted connection is let in for.
pub(crate) enum Admission {
    /// Served: decided, connected and relayed, holding a connection slot.
    Serve(Slot),
    /// Beyond [`Limits::max_connections`]: read far enough to know what it asks for, then
    /// refused and recorded, holding a refusing place.
    Refuse(tokio::sync::OwnedSemaphorePermit),
}

/// Why a connection beyond the cap is refused (its answer and its record).
pub(crate) fn over_cap_reason(shared: &Shared) -> String {
    format!(
        "too many connections at once through cordon's proxy (it serves {} at a time, what \
         cordon's open-file limit allows); retry when some have closed",
        shared.max_connections
    )
}

/// `forward`: every connection goes to that destination (a forwarded port); `None`: the
/// proxy's own listener.
async fn accept_loop(
    shared: Arc<Shared>,
    listener: tokio::net::TcpListener,
    forward: Option<Arc<cordon_policy::network::Target>>,
) {
    loop {
        // A descriptor to accept into: a connection slot, or else a refusing place.
        let admission = relay::first(
            async {
                relay::first(
                    async {
                        shared
                            .slots
                            .clone()
                            .acquire_owned()
                            .await
                            .ok()
                            .map(|p| Admission::Serve(Arc::new(p)))
                    },
                    async {
                        shared
                            .refusing
                            .clone()
                            .acquire_owned()
                            .await
                            .ok()
                            .map(Admission::Refuse)
                    },
                )
                .await
            },
            async {
                shared.shutting_down().await;
                None
            },
        )
        .await;
        let Some(mut admission) = admission else {
            return;
        };
        let accepted = relay::first(async { Some(listener.accept().await) }, async {
            shared.shutting_down().await;
            None
        })
        .await;
        // A slot may have come free while this one waited to be accepted.
        if let Admission::Refuse(_) = admission {
            if let Ok(p) = shared.slots.clone().try_acquire_owned() {
                admission = Admission::Serve(Arc::new(p));
            }
        }
        match accepted {
            None => return,
            Some(Ok((stream, _peer))) => {
                let shared = shared.clone();
                match &forward {
                    Some(to) => {
                        tokio::spawn(forward::serve(shared, stream, admission, to.clone()));
                    }
                    None => {
                        tokio::spawn(serve_one(shared, stream, admission));
                    }
                }
            }
            // Out of descriptors or a connection reset before accept: wait a little, go on.
            Some(Err(_)) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// A connection slot, held until the connection's close record is written.
pub(crate) type Slot = Arc<tokio::sync::OwnedSemaphorePermit>;

async fn serve_one(shared: Arc<Shared>, stream: tokio::net::TcpStream, admission: Admission) {
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 1];
    let peeked =
        tokio::time::timeout(shared.limits().handshake_timeout, stream.peek(&mut first)).await;
    match peeked {
        Ok(Ok(1)) if first[0] == socks::VERSION => socks::serve(shared, stream, admission).await,
        Ok(Ok(1)) => http::serve(shared, stream, admission).await,
        // Closed, failed or silent before its first byte: nothing was asked.
        _ => {}
    }
}
