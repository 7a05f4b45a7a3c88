//! TLS termination for the hosts that need it: where a credential goes (and, later, where
//! requests are decided one by one). Every other host stays end-to-end TLS through CONNECT.
//!
//! ```text
//!  client ──CONNECT api.example.org:443──▶ proxy: decide host:port, connect (as for any tunnel)
//!     │                                      │
//!     │◀── TLS, leaf for api.example.org ────┤ signed by the run's CA (rcgen; the command
//!     │    (the run's CA is in the bundle    │ trusts it through SSL_CERT_FILE & co)
//!     │     the command's clients read)      │
//!     ├── GET /repos/x  Authorization: cordon-… ─▶ per request: a placeholder of a credential
//!     │                                      │   not meant for this host → 403, recorded;
//!     │                                      │   the host's own placeholders → real value;
//!     │                                      │   `header` added when the client sent none
//!     │                                      ├── TLS to the upstream, verified against the
//!     │                                      │   system roots + [network] upstream_ca
//!     │◀──────────── response, streamed ─────┘
//! ```
//!
//! The real value exists only in cordon's memory and in the bytes sent to the listed host over
//! TLS the proxy verified; it is never written to a record (records name the credential, not
//! its value) nor sent back to the command.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::Error;
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::rustls::{self, pki_types};

use cordon_policy::network::{HostRule, Target};
use cordon_policy::Header;

use crate::relay::{Counted, Counters};
use crate::{Event, Fields, Protocol, Shared, Verdict};

type Body = BoxBody<Bytes, hyper::Error>;

/// One credential for a run: its placeholder (what the command holds), the real value, and
/// where the value may go.
#[derive(Clone)]
pub struct Secret {
    /// The credential's name in the policy (what records and refusals say).
    pub name: String,
    /// What the command holds instead of the value, fresh for each run.
    pub placeholder: String,
    /// The real value.
    pub value: String,
    /// The hosts the value may be sent to.
    pub hosts: Vec<HostRule>,
    /// Added with the value when the client sends no header of that name.
    pub header: Option<Header>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the value, even in a debug print.
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("placeholder", &self.placeholder)
            .finish_non_exhaustive()
    }
}

impl Secret {
    fn sends_to(&self, target: &Target) -> bool {
        self.hosts.iter().any(|h| h.matches(target))
    }
}

/// What TLS termination needs for a run: the run's CA, the upstream trust, the secrets.
pub struct Termination {
    ca_cert: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
    upstream: Arc<rustls::ClientConfig>,
    secrets: Vec<Secret>,
    /// Hosts terminated for their request rules (`[[network.requests]]`).
    ruled: Vec<HostRule>,
    /// Per host: the server side of the tunnel, its leaf made once per run.
    leaves: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
}

impl std::fmt::Debug for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Termination")
            .field("secrets", &self.secrets)
            .finish_non_exhaustive()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Why termination could not be set up.
fn tls_err(what: &str, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{what}: {e}"))
}

impl Termination {
    /// A fresh CA for a run, terminating the hosts of `secrets` and the hosts `ruled` (those
    /// of request rules), trusting upstreams signed by one of `upstream_roots` (PEM text: the
    /// system's bundle and the policy's `upstream_ca`).
    pub fn new(
        secrets: Vec<Secret>,
        ruled: Vec<HostRule>,
        upstream_roots: &[u8],
    ) -> std::io::Result<Termination> {
        use pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in pki_types::CertificateDer::pem_slice_iter(upstream_roots) {
            let cert = cert.map_err(|e| tls_err("reading the upstream CA certificates", e))?;
            // A certificate the bundle holds that webpki cannot use is skipped, as clients do.
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            return Err(std::io::Error::other(
                "no usable CA certificate to verify upstream hosts with (the system bundle and [network] upstream_ca)",
            ));
        }
        let mut upstream = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_err("upstream TLS", e))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        upstream.alpn_protocols = vec![b"http/1.1".to_vec()];
        let ca_key = rcgen::KeyPair::generate().map_err(|e| tls_err("the run's CA key", e))?;
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "cordon run CA (this run only)");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = params
            .self_signed(&ca_key)
            .map_err(|e| tls_err("the run's CA", e))?;
        Ok(Termination {
            ca_cert,
            ca_key,
            upstream: Arc::new(upstream),
            secrets,
            ruled,
            leaves: Mutex::new(HashMap::new()),
        })
    }

    /// The run's CA certificate, PEM: what the command's clients must trust.
    pub fn ca_pem(&self) -> String {
        self.ca_cert.pem()
    }

    /// The secrets.
    pub fn secrets(&self) -> &[Secret] {
        &self.secrets
    }

    /// Whether connections to `target` are terminated: a credential may go there, or a
    /// request rule names it.
    pub fn terminates(&self, target: &Target) -> bool {
        self.secrets.iter().any(|s| s.sends_to(target))
            || self.ruled.iter().any(|h| h.matches(target))
    }

    /// The server side for `host`, its leaf signed by the run's CA.
    fn server(&self, host: &str) -> std::io::Result<Arc<rustls::ServerConfig>> {
        if let Some(c) = crate::lock(&self.leaves).get(host) {
            return Ok(c.clone());
        }
        let mut params = rcgen::CertificateParams::new(vec![host.to_string()])
            .map_err(|e| tls_err("a leaf certificate", e))?;
        params.use_authority_key_identifier_extension = true;
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, host);
        let key = rcgen::KeyPair::generate().map_err(|e| tls_err("a leaf key", e))?;
        let leaf = params
            .signed_by(&key, &self.ca_cert, &self.ca_key)
            .map_err(|e| tls_err("a leaf certificate", e))?;
        let key_der = pki_types::PrivateKeyDer::try_from(key.serialize_der())
            .map_err(|e| tls_err("a leaf key", e))?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_err("the tunnel's TLS", e))?
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key_der)
            .map_err(|e| tls_err("the tunnel's TLS", e))?;
        // HTTP/1.1 only: what the proxy speaks on both sides.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        crate::lock(&self.leaves).insert(host.to_string(), config.clone());
        Ok(config)
    }

    /// Which credential's placeholder `bytes` hold that may not go to `target`.
    fn misplaced(&self, bytes: &[u8], target: &Target) -> Option<&Secret> {
        self.secrets
            .iter()
            .find(|s| !s.sends_to(target) && contains(bytes, s.placeholder.as_bytes()))
    }

    /// The credential's placeholder found anywhere in a request's head (target and headers),
    /// when it may not go to `target`: the request is refused.
    pub(crate) fn misplaced_in<B>(&self, req: &Request<B>, target: &Target) -> Option<&Secret> {
        if let Some(s) = self.misplaced(req.uri().to_string().as_bytes(), target) {
            return Some(s);
        }
        req.headers()
            .values()
            .find_map(|v| self.misplaced(v.as_bytes(), target))
    }
}

/// The termination and the target, when tunnels to `host:port` are terminated.
pub(crate) fn terminated(
    shared: &Shared,
    host: &str,
    port: u16,
) -> Option<(Arc<Termination>, Target)> {
    let t = shared.config.termination.as_ref()?;
    let target = Target::new(host, port).ok()?;
    t.terminates(&target).then(|| (t.clone(), target))
}

/// Whether `bytes` hold `secret`'s placeholder.
pub(crate) fn holds(bytes: &[u8], secret: &Secret) -> bool {
    contains(bytes, secret.placeholder.as_bytes())
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

fn replace_all(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// Puts the real values in a request to `target` (whose credentials may go there): each
/// placeholder in a header value replaced, and each credential's `header` added when the
/// client sent none of that name. Basic authorization (`user:placeholder`, what git sends
/// from a credential helper or a URL) is decoded, replaced and encoded again.
fn inject<B>(t: &Termination, req: &mut Request<B>, target: &Target) {
    let mine: Vec<&Secret> = t.secrets.iter().filter(|s| s.sends_to(target)).collect();
    if mine.is_empty() {
        return;
    }
    for (_, value) in req.headers_mut().iter_mut() {
        let mut bytes = value.as_bytes().to_vec();
        let mut changed = false;
        for s in &mine {
            if contains(&bytes, s.placeholder.as_bytes()) {
                bytes = replace_all(&bytes, s.placeholder.as_bytes(), s.value.as_bytes());
                changed = true;
            }
        }
        if let Some(b) = basic(&bytes, &mine) {
            bytes = b;
            changed = true;
        }
        if changed {
            if let Ok(v) = HeaderValue::from_bytes(&bytes) {
                *value = v;
            }
        }
    }
    for s in &mine {
        let Some(h) = &s.header else { continue };
        let Ok(name) = HeaderName::from_bytes(h.name.as_bytes()) else {
            continue;
        };
        if req.headers().contains_key(&name) {
            continue;
        }
        if let Ok(v) = HeaderValue::from_str(&h.value(&s.value)) {
            req.headers_mut().insert(name, v);
        }
    }
}

/// The real values of `target`'s credentials in response headers, put back as placeholders.
fn scrub(t: &Termination, headers: &mut hyper::HeaderMap, target: &Target) {
    for (_, value) in headers.iter_mut() {
        let mut bytes = value.as_bytes().to_vec();
        let mut changed = false;
        for s in t.secrets.iter().filter(|s| s.sends_to(target)) {
            if contains(&bytes, s.value.as_bytes()) {
                bytes = replace_all(&bytes, s.value.as_bytes(), s.placeholder.as_bytes());
                changed = true;
            }
        }
        if changed {
            if let Ok(v) = HeaderValue::from_bytes(&bytes) {
                *value = v;
            }
        }
    }
}

/// `Basic BASE64(user:…placeholder…)` with the placeholders replaced, when it holds one.
fn basic(value: &[u8], mine: &[&Secret]) -> Option<Vec<u8>> {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = std::str::from_utf8(value).ok()?;
    let (scheme, rest) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let mut decoded = b64.decode(rest.trim()).ok()?;
    let mut changed = false;
    for s in mine {
        if contains(&decoded, s.placeholder.as_bytes()) {
            decoded = replace_all(&decoded, s.placeholder.as_bytes(), s.value.as_bytes());
            changed = true;
        }
    }
    changed.then(|| format!("{scheme} {}", b64.encode(decoded)).into_bytes())
}

/// Whether `b64` of a Basic header holds a placeholder not meant for `target` (checked
/// before anything is sent).
fn misplaced_basic<'a, B>(
    t: &'a Termination,
    req: &Request<B>,
    target: &Target,
) -> Option<&'a Secret> {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    req.headers().values().find_map(|v| {
        let text = v.to_str().ok()?;
        let (scheme, rest) = text.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = b64.decode(rest.trim()).ok()?;
        t.misplaced(&decoded, target)
    })
}

/// The refusal of a request that carries `secret`'s placeholder to `target`.
/// Why a request inside the tunnel to `target` names another host, if it does: its `Host`
/// header(s) and an absolute-form request target (`GET https://other.example.org/ …`) must
/// each name the tunnel's host (normalised as the policy's names are: case, IDNA, a trailing
/// dot, IPv4-mapped IPv6), with the tunnel's port or none. A `Host` that is not a host at all
/// (`user@host`, an empty value, several values in one) is refused too.
pub(crate) fn foreign_authority<B>(req: &Request<B>, target: &Target) -> Option<String> {
    for v in req.headers().get_all(hyper::header::HOST) {
        let Ok(text) = v.to_str() else {
            return Some(format!(
                "the request's Host header is not text; the tunnel's host is {target}"
            ));
        };
        if let Some(why) = names_another("Host", text, target) {
            return Some(why);
        }
    }
    match req.uri().authority() {
        Some(a) => names_another("target", a.as_str(), target),
        None => None,
    }
}

/// Why `value`, the authority a request names in its `what` (its Host header or its target),
/// is not the tunnel's `target`; `None` when it is (the port may be left out).
pub(crate) fn names_another(what: &str, value: &str, target: &Target) -> Option<String> {
    let wrong = || {
        Some(format!(
            "the request's {what} `{}` is not the tunnel's host {target}; a request goes only to the host its connection was decided for",
            value.escape_debug()
        ))
    };
    let Ok(authority) = value.parse::<hyper::http::uri::Authority>() else {
        return wrong();
    };
    if authority.as_str().contains('@') {
        return wrong();
    }
    let port = authority.port_u16().unwrap_or(target.port);
    match Target::new(authority.host(), port) {
        Ok(t) if t == *target => None,
        _ => wrong(),
    }
}

pub(crate) fn misplaced_reason(secret: &Secret, target: &Target) -> String {
    format!(
        "the request carries the placeholder of credential `{}`, which goes only to its hosts ({}), not to {target}",
        secret.name,
        secret
            .hosts
            .iter()
            .map(|h| h.written.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    let mut r = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The upstream side of a terminated tunnel: the address decided and checked for it, and the
/// HTTP connection over verified TLS, made again when the upstream closed the last one.
pub(crate) struct Upstream {
    host: String,
    addr: std::net::SocketAddr,
    counters: Arc<Counters>,
    config: Arc<rustls::ClientConfig>,
    sender: tokio::sync::Mutex<Option<SendRequest>>,
}

type SendRequest = hyper::client::conn::http1::SendRequest<Incoming>;

impl Upstream {
    /// TLS to the host over `io`, verified against the upstream roots, and HTTP/1 on it.
    async fn handshake<D>(&self, shared: &Shared, io: D) -> Result<SendRequest, Error>
    where
        D: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let host = &self.host;
        let name = pki_types::ServerName::try_from(host.clone()).map_err(Error::ServerName)?;
        let tls = match tokio::time::timeout(
            shared.limits().handshake_timeout,
            tokio_rustls::TlsConnector::from(self.config.clone()).connect(name, io),
        )
        .await
        {
            Ok(Ok(u)) => u,
            Ok(Err(source)) => {
                return Err(Error::UpstreamTls {
                    host: host.clone(),
                    source,
                })
            }
            Err(_) => return Err(Error::UpstreamTlsTimeout { host: host.clone() }),
        };
        let (sender, conn) = hyper::client::conn::http1::Builder::new()
            .max_buf_size(shared.limits().header_bytes.max(8192))
            .handshake::<_, Incoming>(TokioIo::new(tls))
            .await
            .map_err(|source| Error::UpstreamHttp {
                host: host.clone(),
                source,
            })?;
        tokio::spawn(conn);
        Ok(sender)
    }

    /// A connection ready for a request: the one open, or a new one to the same address.
    async fn ready(
        &self,
        shared: &Shared,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<SendRequest>>, Error> {
        let mut guard = self.sender.lock().await;
        if let Some(s) = guard.as_mut() {
            if s.ready().await.is_ok() {
                return Ok(guard);
            }
        }
        *guard = None;
        let tcp = match tokio::time::timeout(
            shared.limits().connect_timeout,
            tokio::net::TcpStream::connect(self.addr),
        )
        .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(source)) => {
                return Err(Error::Reconnect {
                    addr: self.addr,
                    source,
                })
            }
            Err(_) => return Err(Error::ReconnectTimeout { addr: self.addr }),
        };
        let _ = tcp.set_nodelay(true);
        let sender = self
            .handshake(shared, Counted::new(tcp, self.counters.clone()))
            .await?;
        *guard = Some(sender);
        Ok(guard)
    }
}

/// Serves a terminated tunnel: TLS with the client as `target`, TLS to the upstream over
/// `dest` (already decided and connected to `addr`; connections made again go to that same
/// address), and each request in between checked, given its credentials, and forwarded.
/// Returns why it ended early, if it did.
pub(crate) async fn tunnel<C>(
    shared: &Arc<Shared>,
    t: &Termination,
    client: C,
    dest: Counted<tokio::net::TcpStream>,
    addr: std::net::SocketAddr,
    counters: Arc<Counters>,
    target: &Target,
) -> Option<String>
where
    C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let host = match &target.host {
        cordon_policy::network::Host::Name(n) => n.clone(),
        cordon_policy::network::Host::Addr(a) => a.to_string(),
    };
    let server = match t.server(&host) {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot terminate TLS: {e}")),
    };
    let handshake = shared.limits().handshake_timeout;
    let client = match tokio::time::timeout(
        handshake,
        tokio_rustls::TlsAcceptor::from(server).accept(client),
    )
    .await
    {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Some(format!("TLS with the client failed: {e}")),
        Err(_) => return Some("TLS with the client timed out".into()),
    };
    let upstream = Upstream {
        host,
        addr,
        counters,
        config: t.upstream.clone(),
        sender: tokio::sync::Mutex::new(None),
    };
    match upstream.handshake(shared, dest).await {
        Ok(s) => *upstream.sender.lock().await = Some(s),
        Err(e) => return Some(e.to_string()),
    }
    let upstream = Arc::new(upstream);
    let target = target.clone();
    let t_shared = shared.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let upstream = upstream.clone();
        let target = target.clone();
        let shared = t_shared.clone();
        async move { Ok::<_, std::convert::Infallible>(request(&shared, &upstream, req, &target).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(handshake)
        .max_buf_size(shared.limits().header_bytes.max(8192))
        .max_headers(100);
    let served = builder.serve_connection(TokioIo::new(client), service);
    crate::relay::first(
        async {
            served
                .await
                .err()
                .map(|e| format!("terminated tunnel ended: {e}"))
        },
        async {
            shared.shutting_down().await;
            Some("the proxy shut down".to_string())
        },
    )
    .await
}

/// A refused request: its record (`METHOD PATH: reason`, under `protocol`) and the answer,
/// which closes the client's connection. `how` is the record's protocol and the scheme the
/// answer names.
#[allow(clippy::too_many_arguments)]
fn refuse_request(
    shared: &Shared,
    how: (Protocol, &str),
    method: &str,
    target: &Target,
    path: &str,
    status: StatusCode,
    reason: String,
    rule: &str,
) -> Response<Body> {
    let (protocol, scheme) = how;
    let host = target.host.to_string();
    let port = target.port;
    let track = shared.track(protocol, std::time::Instant::now());
    let shown = format!("{method} {path}: {reason}");
    track.record(
        shared,
        Event::Close,
        Fields {
            host: &host,
            port,
            addr: None,
            allowed: false,
            rule,
            reason: &shown,
            bytes: (0, 0),
        },
    );
    let mut r = text(
        status,
        format!("cordon: {method} {scheme}://{host}:{port}{path} is refused: {reason}\n"),
    );
    r.headers_mut()
        .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The engine's decision on one request where a `[[network.requests]]` rule names its host
/// and port, inside a terminated tunnel or as a plain `http://` request alike: `Some` answer
/// when it is refused (recorded, and noted for the run's summary). Elsewhere (a credential's
/// host alone) the connection's decision covers its requests, and no record per request (an
/// fsync each) is made: `None`.
pub(crate) async fn ruled_request<B>(
    shared: &Arc<Shared>,
    how: (Protocol, &str),
    req: &Request<B>,
    target: &Target,
) -> Option<Response<Body>> {
    let method = req.method().as_str();
    let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let t = shared.config.termination.as_deref()?;
    if !t.ruled.iter().any(|h| h.matches(target)) {
        return None;
    }
    let host = target.host.to_string();
    let port = target.port;
    // Each reading the server may route the path as is decided; the first that is not
    // allowed refuses the request. A path no list of readings can cover is refused.
    // Symfony and IIS route by a path in `X-Original-URL` / `X-Rewrite-URL`: their readings
    // are decided too.
    let mut paths = vec![path.to_string()];
    for name in ["x-original-url", "x-rewrite-url"] {
        for v in req.headers().get_all(name) {
            paths.push(String::from_utf8_lossy(v.as_bytes()).into_owned());
        }
    }
    let readings = if paths.len() > 3 {
        Err(format!(
            "the request names {} paths (X-Original-URL, X-Rewrite-URL); at most 3 are decided",
            paths.len()
        ))
    } else {
        Ok(())
    };
    let readings = readings.and_then(|()| {
        paths.iter().try_fold(Vec::new(), |mut all, p| {
            all.extend(cordon_policy::requests::request_paths(p)?);
            Ok::<_, String>(all)
        })
    });
    let readings = match readings {
        Ok(r) => r,
        Err(why) => {
            shared.note_refused(crate::Refused {
                host: host.clone(),
                port,
                addr: None,
                reason: format!("{method} {}: {why}", path.split('?').next().unwrap_or("/")),
                allow: String::new(),
                count: 0,
            });
            return Some(refuse_request(
                shared,
                how,
                method,
                target,
                path,
                StatusCode::BAD_REQUEST,
                why,
                "",
            ));
        }
    };
    // The method the server runs may be another one, named in a header or in the query's
    // `_method` (Rails, Laravel, Express's method-override, Google's APIs): each is decided.
    let mut methods = vec![method.to_ascii_uppercase()];
    for name in [
        "x-http-method-override",
        "x-http-method",
        "x-method-override",
    ] {
        for v in req.headers().get_all(name) {
            let named = String::from_utf8_lossy(v.as_bytes()).into_owned();
            methods.extend(named.split(',').map(|m| m.trim().to_ascii_uppercase()));
        }
    }
    if let Some(query) = req.uri().query() {
        for pair in query.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if k.eq_ignore_ascii_case("_method") {
                methods.push(v.to_ascii_uppercase());
            }
        }
    }
    methods.retain(|m| !m.is_empty());
    methods.dedup();
    // Each is a decision of its own (a record each): a request naming more is refused.
    if methods.len() > 4 {
        let why = format!(
            "the request names {} methods (override headers, `_method`); at most 4 are decided",
            methods.len()
        );
        return Some(refuse_request(
            shared,
            how,
            method,
            target,
            path,
            StatusCode::BAD_REQUEST,
            why,
            "",
        ));
    }
    let mut verdict = Verdict::Allow {
        rule: String::new(),
    };
    // What the refusal says it was read as, where that is not the request as sent.
    let mut read_as = String::new();
    'decide: for m in &methods {
        for reading in &readings {
            verdict = shared.decide.decide_request(m, &host, port, reading).await;
            if !matches!(verdict, Verdict::Allow { .. }) {
                if (m.as_str(), reading.as_str()) != (methods[0].as_str(), readings[0].as_str()) {
                    read_as = format!(" (read as {m} {reading})");
                }
                break 'decide;
            }
        }
    }
    match verdict {
        Verdict::Allow { .. } => None,
        Verdict::Unrecorded { reason } => {
            // Not the policy's refusal: the audit log's. Not noted among the destinations
            // the policy refused (no `[network]` line would allow it).
            let why = crate::connect::Refusal::Unrecorded(Error::unrecorded(reason)).to_string();
            Some(refuse_request(
                shared,
                how,
                method,
                target,
                path,
                StatusCode::SERVICE_UNAVAILABLE,
                why,
                "",
            ))
        }
        Verdict::Deny { reason, rule } => {
            let why = format!("refused by the policy{read_as}: {reason}");
            shared.note_refused(crate::Refused {
                host: host.clone(),
                port,
                addr: None,
                reason: format!("{method} {}: {why}", path.split('?').next().unwrap_or("/")),
                allow: String::new(),
                count: 0,
            });
            Some(refuse_request(
                shared,
                how,
                method,
                target,
                path,
                StatusCode::FORBIDDEN,
                why,
                &rule,
            ))
        }
    }
}

/// One request inside a terminated tunnel.
async fn request(
    shared: &Arc<Shared>,
    upstream: &Upstream,
    mut req: Request<Incoming>,
    target: &Target,
) -> Response<Body> {
    let Some(t) = shared.config.termination.as_deref() else {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cordon: no termination\n".into(),
        );
    };
    let host = target.host.to_string();
    let port = target.port;
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let method = req.method().to_string();
    // The request must be for the tunnel's host: the upstream (a CDN, a shared front end)
    // routes by `Host` or an absolute-form target, so another name there would take the
    // credential's value, and the request rules decided for this host, to that name's site.
    // Then a placeholder must be one of this host's.
    let misplaced = foreign_authority(&req, target).or_else(|| {
        t.misplaced_in(&req, target)
            .or_else(|| misplaced_basic(t, &req, target))
            .map(|s| misplaced_reason(s, target))
    });
    if let Some(why) = misplaced {
        shared.note_refused(crate::Refused {
            host: host.clone(),
            port,
            addr: None,
            reason: why.clone(),
            allow: String::new(),
            count: 0,
        });
        return refuse_request(
            shared,
            (Protocol::HttpsRequest, "https"),
            &method,
            target,
            &path,
            StatusCode::FORBIDDEN,
            why,
            "",
        );
    }
    if let Some(refused) =
        ruled_request(shared, (Protocol::HttpsRequest, "https"), &req, target).await
    {
        return refused;
    }
    inject(t, &mut req, target);
    crate::http::strip_hop_by_hop(req.headers_mut());
    let mut sender = match upstream.ready(shared).await {
        Ok(s) => s,
        Err(e) => {
            return text(
                StatusCode::BAD_GATEWAY,
                format!("cordon: {host}:{port}: {e}\n"),
            )
        }
    };
    let Some(sender) = sender.as_mut() else {
        return text(
            StatusCode::BAD_GATEWAY,
            format!("cordon: {host}:{port}: no connection\n"),
        );
    };
    match sender.send_request(req).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            crate::http::strip_hop_by_hop(&mut parts.headers);
            // A host that echoes a header back (an error page's headers, a debugging
            // endpoint) does not hand the value to the command: the placeholder again.
            // The body is passed as it is (see docs/network.md).
            scrub(t, &mut parts.headers, target);
            Response::from_parts(parts, body.boxed())
        }
        Err(e) => text(
            StatusCode::BAD_GATEWAY,
            format!("cordon: {host}:{port}: forwarding failed: {e}\n"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(hosts: &[&str]) -> Secret {
        Secret {
            name: "gh".into(),
            placeholder: "cordon-PH".into(),
            value: "REAL".into(),
            hosts: {
                let text = format!(
                    "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[credentials.gh]\nenv = \"T\"\nfrom = \"env:T\"\nhosts = {hosts:?}\n"
                );
                cordon_policy::Policy::parse(&text, "t.toml", std::path::Path::new("/"))
                    .unwrap()
                    .credentials[0]
                    .hosts
                    .clone()
            },
            header: Some(Header {
                name: "authorization".into(),
                template: "Bearer {}".into(),
            }),
        }
    }

    fn any_ca() -> String {
        rcgen::generate_simple_self_signed(vec!["ca.example".into()])
            .unwrap()
            .cert
            .pem()
    }

    #[test]
    fn placeholders_replaced_only_for_their_hosts() {
        let t = Termination {
            secrets: vec![secret(&["api.example.org"])],
            ..Termination::new(vec![], vec![], any_ca().as_bytes()).unwrap()
        };
        let to = |h: &str| Target::new(h, 443).unwrap();
        let mut req = Request::builder()
            .uri("/x")
            .header("x-token", "a cordon-PH b")
            .body(())
            .unwrap();
        assert!(t.misplaced_in(&req, &to("api.example.org")).is_none());
        assert_eq!(
            t.misplaced_in(&req, &to("other.example.org")).unwrap().name,
            "gh"
        );
        inject(&t, &mut req, &to("api.example.org"));
        assert_eq!(req.headers()["x-token"], "a REAL b");
        assert_eq!(req.headers()["authorization"], "Bearer REAL");
        // A client's own header of that name is kept.
        let mut req = Request::builder()
            .header("authorization", "token mine")
            .body(())
            .unwrap();
        inject(&t, &mut req, &to("api.example.org"));
        assert_eq!(req.headers()["authorization"], "token mine");
        // Basic: user:placeholder, base64.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        let v = format!("Basic {}", b64.encode("git:cordon-PH"));
        let mut req = Request::builder()
            .header("authorization", &v)
            .body(())
            .unwrap();
        assert_eq!(
            misplaced_basic(&t, &req, &to("evil.example")).unwrap().name,
            "gh"
        );
        inject(&t, &mut req, &to("api.example.org"));
        assert_eq!(
            req.headers()["authorization"],
            format!("Basic {}", b64.encode("git:REAL")).as_str()
        );
    }
}
