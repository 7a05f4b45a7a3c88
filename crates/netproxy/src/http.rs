//! The HTTP/1 side: `CONNECT host:port` tunnels, and plain requests with an absolute URI
//! (`GET http://host/path`), forwarded over a fresh connection per request.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;

use crate::connect::{open, Opening, Refusal};
use crate::relay::{self, Counted, Counters};
use crate::{over_cap_reason, Admission, Event, Fields, Protocol, Shared, Slot, Tracker};

type Body = BoxBody<Bytes, hyper::Error>;

pub(crate) async fn serve(shared: Arc<Shared>, stream: TcpStream, admission: Admission) {
    let limits = shared.limits().clone();
    // A connection beyond the cap holds its refusing place until it is answered and closed.
    let (slot, _refusing) = match admission {
        Admission::Serve(slot) => (Some(slot), None),
        Admission::Refuse(place) => (None, Some(place)),
    };
    let svc_shared = shared.clone();
    let service = hyper::service::service_fn(move |req| {
        let shared = svc_shared.clone();
        let slot = slot.clone();
        async move {
            Ok::<_, Infallible>(match slot {
                Some(slot) => handle(shared, req, slot).await,
                None => over_cap(&shared, &req),
            })
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.handshake_timeout)
        .max_buf_size(limits.header_bytes.max(8192))
        .max_headers(100);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    relay::first(
        async {
            let _ = conn.await;
        },
        shared.shutting_down(),
    )
    .await;
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>, slot: Slot) -> Response<Body> {
    if req.method() == Method::CONNECT {
        connect(shared, req, slot).await
    } else {
        forward(shared, req, slot).await
    }
}

/// A request beyond the number served at once: refused (`503`, the reason in the body) and
/// recorded, without a decision.
fn over_cap(shared: &Shared, req: &Request<Incoming>) -> Response<Body> {
    let connect = req.method() == Method::CONNECT;
    let track = shared.track(
        if connect {
            Protocol::HttpConnect
        } else {
            Protocol::Http
        },
        Instant::now(),
    );
    let (host, port) = match req.uri().authority() {
        Some(a) => (
            a.host().to_string(),
            a.port_u16().unwrap_or(if connect { 0 } else { 80 }),
        ),
        None => (req.uri().to_string(), 0),
    };
    refuse(
        shared,
        &track,
        &host,
        port,
        "",
        Refusal::OverCap(over_cap_reason(shared)),
    )
}

/// `CONNECT host:port`: decide and connect, answer `200`, then relay the upgraded stream.
async fn connect(shared: Arc<Shared>, mut req: Request<Incoming>, slot: Slot) -> Response<Body> {
    let track = shared.track(Protocol::HttpConnect, Instant::now());
    let Some(authority) = req.uri().authority().cloned() else {
        let shown = req.uri().to_string();
        return refuse(
            &shared,
            &track,
            &shown,
            0,
            "",
            Refusal::BadTarget("CONNECT needs host:port".into()),
        );
    };
    let Some(port) = authority.port_u16() else {
        return refuse(
            &shared,
            &track,
            authority.host(),
            0,
            "",
            Refusal::BadTarget(format!("CONNECT {authority}: no port")),
        );
    };
    let Connected {
        dest,
        addr,
        host,
        rule,
    } = match decide_and_connect(&shared, &track, authority.host(), port).await {
        Ok(c) => c,
        Err(refused) => return refused,
    };
    let upgrade = hyper::upgrade::on(&mut req);
    let shared2 = shared.clone();
    let host2 = host.clone();
    let rule2 = rule.clone();
    // A host a credential goes to: TLS terminated here, requests checked one by one.
    let terminated = crate::terminate::terminated(&shared, &host, port);
    tokio::spawn(async move {
        let _slot = slot;
        let counters = Arc::new(Counters::default());
        let mut dest = Counted::new(dest, counters.clone());
        let ended = match upgrade.await {
            Ok(upgraded) if terminated.is_some() => {
                let (t, target) = terminated.expect("checked");
                crate::terminate::tunnel(
                    &shared2,
                    &t,
                    TokioIo::new(upgraded),
                    dest,
                    addr,
                    counters.clone(),
                    &target,
                )
                .await
            }
            Ok(upgraded) => match upgraded.downcast::<TokioIo<TcpStream>>() {
                // The client's own socket again: relay without hyper's buffering in between,
                // after the bytes it already sent past the request head (and the rest of a
                // ClientHello, whose name must be the tunnel's host).
                Ok(parts) => {
                    let mut client = parts.io.into_inner();
                    match first_flight(
                        &shared2,
                        &mut client,
                        &mut dest,
                        &parts.read_buf,
                        &host2,
                        port,
                        &counters,
                    )
                    .await
                    {
                        Some(ended) => Some(ended),
                        None => {
                            relay::relay_tcp(&shared2, client, dest.into_inner(), &counters).await
                        }
                    }
                }
                Err(upgraded) => {
                    let mut client = TokioIo::new(upgraded);
                    match first_flight(
                        &shared2,
                        &mut client,
                        &mut dest,
                        &[],
                        &host2,
                        port,
                        &counters,
                    )
                    .await
                    {
                        Some(ended) => Some(ended),
                        None => relay::relay(&shared2, client, dest, &counters).await,
                    }
                }
            },
            Err(e) => Some(format!("the client left before the tunnel opened: {e}")),
        };
        track.record(
            &shared2,
            Event::Close,
            Fields {
                host: &host2,
                port,
                addr: Some(addr),
                allowed: true,
                rule: &rule2,
                reason: ended.as_deref().unwrap_or(""),
                bytes: counters.get(),
            },
        );
    });
    Response::new(empty())
}

/// A plain HTTP request with an absolute `http://` URI: decide, connect, send it on in
/// origin form with hop-by-hop headers removed and `Host` set from the URI, stream the
/// response back.
async fn forward(shared: Arc<Shared>, req: Request<Incoming>, slot: Slot) -> Response<Body> {
    let track = shared.track(Protocol::Http, Instant::now());
    let uri = req.uri().clone();
    let (Some(authority), Some(scheme)) = (uri.authority().cloned(), uri.scheme_str()) else {
        return refuse(&shared, &track, &uri.to_string(), 0, "", Refusal::BadTarget(
            "this is a proxy: send requests with an absolute URI (http://host/path), or CONNECT host:port".into(),
        ));
    };
    if scheme != "http" {
        return refuse(
            &shared,
            &track,
            authority.host(),
            0,
            "",
            Refusal::BadTarget(format!(
                "{scheme}:// URLs go through CONNECT, not as plain requests"
            )),
        );
    }
    let port = authority.port_u16().unwrap_or(80);
    // A credential's placeholder never goes out in plain HTTP: its value is sent only over
    // TLS the proxy verified, and the placeholder itself only to the credential's hosts.
    if let Some(t) = shared.config.termination.as_deref() {
        if let Ok(target) = cordon_policy::network::Target::new(authority.host(), port) {
            let uri = req.uri().to_string();
            let carried = t.secrets().iter().find(|s| {
                crate::terminate::holds(uri.as_bytes(), s)
                    || req
                        .headers()
                        .values()
                        .any(|v| crate::terminate::holds(v.as_bytes(), s))
            });
            if let Some(secret) = carried {
                let why = format!(
                    "the request carries the placeholder of credential `{}` in plain http://; a credential goes only over TLS, to its hosts",
                    secret.name
                );
                return refuse(
                    &shared,
                    &track,
                    &target.host.to_string(),
                    port,
                    "",
                    Refusal::Placeholder(why),
                );
            }
        }
    }
    let Connected {
        dest,
        addr,
        host,
        rule,
    } = match decide_and_connect(&shared, &track, authority.host(), port).await {
        Ok(c) => c,
        Err(refused) => return refused,
    };
    let counters = Arc::new(Counters::default());
    // A host a `[[network.requests]]` rule names has each request decided, whether it comes
    // through a terminated tunnel or, as here, in plain http:// (else `DELETE http://HOST/`
    // went through on the connection's decision alone).
    let refused = match cordon_policy::network::Target::new(&host, port) {
        Ok(target) => {
            crate::terminate::ruled_request(&shared, (Protocol::Http, "http"), &req, &target).await
        }
        // The connection was decided for this host and port, so this is not expected; refused
        // rather than sent on undecided.
        Err(e) => Some(text(
            StatusCode::BAD_REQUEST,
            format!("cordon: {host}:{port}: {e}\n"),
        )),
    };
    if let Some(refused) = refused {
        // Dropping `dest` closes the destination connection before a byte went through.
        close(
            &shared,
            &track,
            &host,
            port,
            addr,
            &rule,
            "its request was refused",
            &counters,
        );
        return refused;
    }
    let io = TokioIo::new(Counted::new(dest, counters.clone()));
    let handshake = hyper::client::conn::http1::Builder::new()
        .max_buf_size(shared.limits().header_bytes.max(8192))
        .handshake::<_, Incoming>(io)
        .await;
    let (mut sender, conn) = match handshake {
        Ok(pair) => pair,
        Err(e) => {
            let reason = format!("HTTP handshake with the destination failed: {e}");
            close(
                &shared, &track, &host, port, addr, &rule, &reason, &counters,
            );
            return text(
                StatusCode::BAD_GATEWAY,
                format!("cordon: {host}:{port}: {reason}\n"),
            );
        }
    };
    // The destination connection lives until the response body is through; its end is the
    // connection's close record.
    let (shared2, host2, rule2, counters2) =
        (shared.clone(), host.clone(), rule.clone(), counters.clone());
    tokio::spawn(async move {
        let _slot = slot;
        let ended = relay::first(
            async { conn.await.err().map(|e| format!("forwarding ended: {e}")) },
            async {
                relay::first(
                    async {
                        relay::idle(&shared2, &counters2).await;
                        Some("idle timeout".to_string())
                    },
                    async {
                        shared2.shutting_down().await;
                        Some("the proxy shut down".to_string())
                    },
                )
                .await
            },
        )
        .await;
        close(
            &shared2,
            &track,
            &host2,
            port,
            addr,
            &rule2,
            ended.as_deref().unwrap_or(""),
            &counters2,
        );
    });

    let (mut parts, body) = req.into_parts();
    parts.uri = match uri.path_and_query() {
        Some(pq) => match pq.as_str().parse() {
            Ok(u) => u,
            Err(_) => return text(StatusCode::BAD_REQUEST, "cordon: bad request path\n".into()),
        },
        None => hyper::Uri::from_static("/"),
    };
    strip_hop_by_hop(&mut parts.headers);
    // `Host` is the decided host and port alone: never the client's own, never the URI's
    // userinfo (`http://other.test@api.test/` sent `Host: other.test@api.test`).
    parts.headers.remove(header::HOST);
    let named = match authority.port() {
        Some(p) => format!("{}:{}", authority.host(), p.as_str()),
        None => authority.host().to_string(),
    };
    match HeaderValue::from_str(&named) {
        Ok(v) => {
            parts.headers.insert(header::HOST, v);
        }
        Err(_) => return text(StatusCode::BAD_REQUEST, "cordon: bad request host\n".into()),
    }
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, body.boxed())
        }
        Err(e) => text(
            StatusCode::BAD_GATEWAY,
            format!("cordon: {host}:{port}: forwarding failed: {e}\n"),
        ),
    }
}

/// The start of a tunnel cordon does not terminate ([`crate::sni`], [`crate::plain`]):
/// `Some(why)` when it ended there (a ClientHello or a plain request naming another host is
/// noted for the run's summary), `None` when the relay goes on.
pub(crate) async fn first_flight<C, D>(
    shared: &Shared,
    client: &mut C,
    dest: &mut D,
    pre: &[u8],
    host: &str,
    port: u16,
    counters: &Counters,
) -> Option<String>
where
    C: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    D: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let Ok(target) = cordon_policy::network::Target::new(host, port) else {
        return Some(format!("closed: {host}:{port} is not a host and port"));
    };
    // A tunnel still waiting for its first bytes, or read as plain HTTP, ends as a relaying
    // one does: idle, or at the proxy's shutdown.
    let started = crate::relay::first(
        async {
            Ok(
                match crate::sni::first_flight(client, dest, pre, &target).await {
                    Ok(crate::sni::Flight::Plain(first)) => {
                        match crate::plain::watch(client, dest, &first, &target).await {
                            Ok(crate::plain::Watched::Raw) => Ok(None),
                            Ok(crate::plain::Watched::Ended(None)) => Ok(Some(None)),
                            Ok(crate::plain::Watched::Ended(Some(why))) => Ok(Some(Some(why))),
                            Ok(crate::plain::Watched::Refused(why)) => Err((why, "closed")),
                            Err(e) => Ok(Some(Some(format!("relay ended: {e}")))),
                        }
                    }
                    Ok(crate::sni::Flight::Relay) => Ok(None),
                    Ok(crate::sni::Flight::Refuse(why)) => {
                        Err((why, "closed before a byte went on"))
                    }
                    Err(e) => Ok(Some(Some(format!("relay ended: {e}")))),
                },
            )
        },
        crate::relay::first(
            async {
                shared.shutting_down().await;
                Err("the proxy shut down".to_string())
            },
            async {
                relay::idle(shared, counters).await;
                Err("idle timeout".to_string())
            },
        ),
    )
    .await;
    // Ok(Ok(None)): relay on; Ok(Ok(Some(ended))): it ended there; Ok(Err(why)): refused.
    match started {
        Err(ended) => Some(ended),
        Ok(Ok(None)) => None,
        Ok(Ok(Some(None))) => Some(String::new()),
        Ok(Ok(Some(Some(ended)))) => Some(ended),
        Ok(Err((why, how))) => {
            shared.note_refused(crate::Refused {
                host: host.to_string(),
                port,
                addr: None,
                reason: why.clone(),
                allow: String::new(),
                count: 0,
            });
            Some(format!("{how}: {why}"))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn close(
    shared: &Shared,
    track: &Tracker,
    host: &str,
    port: u16,
    addr: std::net::SocketAddr,
    rule: &str,
    reason: &str,
    counters: &Counters,
) {
    track.record(
        shared,
        Event::Close,
        Fields {
            host,
            port,
            addr: Some(addr),
            allowed: true,
            rule,
            reason,
            bytes: counters.get(),
        },
    );
}

/// Headers that concern one hop only (RFC 9110 §7.6.1), and those `Connection` names.
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        // `Host` is end to end whatever `Connection` says: removed, a request checked for its
        // host would reach the front end's default site instead (round 8 of issue 21).
        .filter(|s| !s.is_empty() && s != "host")
        .collect();
    for name in named {
        headers.remove(name.as_str());
    }
    for name in [
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "upgrade",
    ] {
        headers.remove(name);
    }
}

/// A destination the proxy decided on and connected to, for a request.
struct Connected {
    dest: TcpStream,
    addr: std::net::SocketAddr,
    /// The host as decided (normalised).
    host: String,
    rule: String,
}

/// Decides `host:port`, connects, and makes the open record durable; a refusal (one whose
/// open record failed among them) is recorded and is the response to send.
async fn decide_and_connect(
    shared: &Arc<Shared>,
    track: &Tracker,
    host: &str,
    port: u16,
) -> Result<Connected, Response<Body>> {
    let Opening {
        target,
        rule,
        result,
        decision,
    } = open(shared, host, port).await;
    let host = target.map_or_else(|| host.to_string(), |t| t.host.to_string());
    let (dest, addr) = match result {
        Ok(ok) => ok,
        Err(r) => return Err(refuse(shared, track, &host, port, &rule, r)),
    };
    let opened = track
        .opened(
            shared,
            Fields {
                host: &host,
                port,
                addr: Some(addr),
                allowed: true,
                rule: &rule,
                reason: "",
                bytes: (0, 0),
            },
            decision,
        )
        .await;
    if let Err(why) = opened {
        // Dropping `dest` closes the destination connection before a byte went through.
        return Err(refuse(
            shared,
            track,
            &host,
            port,
            &rule,
            Refusal::Unrecorded(why),
        ));
    }
    Ok(Connected {
        dest,
        addr,
        host,
        rule,
    })
}

/// Records the refusal (the connection's one record) and answers it.
fn refuse(
    shared: &Shared,
    track: &Tracker,
    host: &str,
    port: u16,
    rule: &str,
    why: Refusal,
) -> Response<Body> {
    track.refused(shared, host, port, rule, &why);
    let (status, body) = refusal_body(host, port, &why);
    let mut r = text(status, body);
    // A refused client is done: close instead of waiting for another request.
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The status and the body that says what was refused, why, and how to allow it.
pub(crate) fn refusal_body(host: &str, port: u16, why: &Refusal) -> (StatusCode, String) {
    match why {
        Refusal::Policy { reason } => (
            StatusCode::FORBIDDEN,
            format!(
                "cordon: the connection to {host}:{port} is refused by the policy: {reason}\n\
                 To allow it, add it to the policy's [network] section: allow = [\"{host}:{port}\"]\n"
            ),
        ),
        Refusal::Address { addr, why } => {
            let listed = match addr {
                std::net::IpAddr::V6(a) => format!("[{a}]:{port}"),
                std::net::IpAddr::V4(a) => format!("{a}:{port}"),
            };
            (
                StatusCode::FORBIDDEN,
                format!(
                    "cordon: the connection to {host}:{port} is refused by the policy: {host} resolves to {addr}, and {why}\n\
                     To allow that exact address, add it to the policy's [network] section: allow = [\"{listed}\"] \
                     (or map the name in [network.hosts]: \"{host}\" = \"{addr}\")\n"
                ),
            )
        }
        Refusal::BadTarget(why) => (StatusCode::BAD_REQUEST, format!("cordon: {why}\n")),
        Refusal::Resolve(why) => (
            StatusCode::BAD_GATEWAY,
            format!("cordon: {host}:{port}: cannot resolve: {why}\n"),
        ),
        Refusal::Connect(e) => (
            StatusCode::BAD_GATEWAY,
            format!("cordon: {host}:{port}: cannot connect: {e}\n"),
        ),
        Refusal::Placeholder(why) => (
            StatusCode::FORBIDDEN,
            format!("cordon: the request to {host}:{port} is refused: {why}\n"),
        ),
        Refusal::OverCap(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("cordon: the connection to {host}:{port} is refused: {why}\n"),
        ),
        Refusal::Unrecorded(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("cordon: the connection to {host}:{port} is refused: {why}\n"),
        ),
    }
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    let mut r = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn empty() -> Body {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}
