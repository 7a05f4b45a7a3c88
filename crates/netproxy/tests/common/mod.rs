//! What the proxy tests share: a policy file on disk, the approval engine as the proxy's
//! `Decide` (with a scripted person for asks), the audit log as its `Record`, servers of the
//! test's own on loopback, and the clients' first steps.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cordon_approval::audit::{self, AuditLog};
use cordon_approval::{Answer, Engine, Key, Outcome, Request};
use cordon_netproxy::{
    Config, ConnectionRecord, Decide, Event, Limits, Proxy, ProxyHandle, Record, Verdict,
};
use cordon_policy::network::Target;
use cordon_policy::Policy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The policy's engine decides; an ask is answered by the next scripted answer (none left:
/// the person never answers, which the engine's timeout would deny — here: denied).
pub struct EngineDecide {
    engine: Mutex<Engine>,
    answers: Mutex<VecDeque<Answer>>,
    pub asked: Mutex<Vec<String>>,
}

impl EngineDecide {
    pub fn new(policy: &Policy, log: &Path, answers: Vec<Answer>) -> Arc<EngineDecide> {
        let mut engine = Engine::new(policy);
        engine.set_doom_loop(0);
        engine.set_audit(AuditLog::open(log).expect("open the audit log"));
        Arc::new(EngineDecide {
            engine: Mutex::new(engine),
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
        })
    }
}

fn verdict(o: &Outcome) -> Verdict {
    match o {
        Outcome::Allowed { by, .. } => Verdict::Allow {
            rule: by.to_string(),
        },
        Outcome::Denied { by, reason, .. } => Verdict::Deny {
            reason: reason.clone(),
            rule: by.to_string(),
        },
        Outcome::Ask(_) => Verdict::Deny {
            reason: "unanswered".into(),
            rule: String::new(),
        },
    }
}

impl Decide for EngineDecide {
    fn decide(&self, host: &str, port: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let target = format!("{host}:{port}");
        Box::pin(async move {
            let t = match Target::parse(&target) {
                Ok(t) => t,
                Err(reason) => {
                    return Verdict::Deny {
                        reason: reason.to_string(),
                        rule: String::new(),
                    }
                }
            };
            let req = Request::new("c", "network", vec![Key::new(t.key())]);
            let first = self.engine.lock().unwrap().evaluate(&req);
            if !matches!(first, Outcome::Ask(_)) {
                return verdict(&first);
            }
            self.asked.lock().unwrap().push(target);
            // The connection waits while the person thinks.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let answer = self.answers.lock().unwrap().pop_front();
            let answer = answer.unwrap_or(Answer::Deny);
            verdict(&self.engine.lock().unwrap().answer(&req, answer))
        })
    }

    fn decide_request(
        &self,
        method: &str,
        host: &str,
        port: u16,
        path: &str,
    ) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let key =
            Target::new(host, port).map(|t| cordon_policy::requests::request_key(method, &t, path));
        Box::pin(async move {
            let key = match key {
                Ok(k) => k,
                Err(reason) => {
                    return Verdict::Deny {
                        reason: reason.to_string(),
                        rule: String::new(),
                    }
                }
            };
            let req = Request::new("r", "http", vec![Key::new(key.clone())]);
            let first = self.engine.lock().unwrap().evaluate(&req);
            if !matches!(first, Outcome::Ask(_)) {
                return verdict(&first);
            }
            self.asked.lock().unwrap().push(key.join(" "));
            let answer = self.answers.lock().unwrap().pop_front();
            let answer = answer.unwrap_or(Answer::Deny);
            verdict(&self.engine.lock().unwrap().answer(&req, answer))
        })
    }
}

/// Appends every connection record to the audit log and keeps a copy to look at.
pub struct AuditRecord {
    log: Mutex<AuditLog>,
    pub seen: Mutex<Vec<ConnectionRecord>>,
}

impl AuditRecord {
    pub fn new(log: &Path) -> Arc<AuditRecord> {
        Arc::new(AuditRecord {
            log: Mutex::new(AuditLog::open(log).expect("open the audit log")),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// Waits until `n` open records are there.
    pub fn seen_open(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.event == Event::Open)
            .count()
            < n
        {
            assert!(Instant::now() < deadline, "expected {n} open records");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until `n` close records are there (a relay's close comes when both sides have
    /// closed, after the client is done), then returns every record.
    pub fn closes(&self, n: usize) -> Vec<ConnectionRecord> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen = self.seen.lock().unwrap().clone();
            if seen.iter().filter(|r| r.event == Event::Close).count() >= n {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "expected {n} close records, have: {seen:#?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Record for AuditRecord {
    fn connection(&self, c: &ConnectionRecord) -> Result<(), cordon_netproxy::Error> {
        let record = audit::Record::connection(
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
                duration_ms: c.duration.as_millis() as u64,
            },
        );
        // What failed to be recorded is not seen: the proxy refuses such a connection.
        self.log
            .lock()
            .unwrap()
            .append(&record)
            .map_err(cordon_netproxy::Error::unrecorded)?;
        self.seen.lock().unwrap().push(c.clone());
        Ok(())
    }
}

/// A proxy over the policy `text` (written to a file and loaded as cordon loads it), serving
/// one listener on 127.0.0.1.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub log: PathBuf,
    pub decide: Arc<EngineDecide>,
    pub record: Arc<AuditRecord>,
    pub proxy: Option<ProxyHandle>,
    pub addr: SocketAddr,
}

impl Setup {
    pub fn new(text: &str, answers: Vec<Answer>) -> Setup {
        Setup::with_limits(text, answers, Limits::default())
    }

    pub fn with_limits(text: &str, answers: Vec<Answer>, limits: Limits) -> Setup {
        Setup::with_config(text, answers, |c| c.limits = limits)
    }

    /// As [`Setup::new`], the proxy's config changed by `change` before it starts.
    pub fn with_config(
        text: &str,
        answers: Vec<Answer>,
        change: impl FnOnce(&mut Config),
    ) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cordon.toml");
        // The section takes effect under `network = "proxy"` (appended: lines stay put).
        std::fs::write(&file, format!("{text}[sandbox]\nnetwork = \"proxy\"\n")).unwrap();
        let policy = Policy::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let log = dir.path().join("audit.jsonl");
        let decide = EngineDecide::new(&policy, &log, answers);
        let record = AuditRecord::new(&log);
        let mut config = Config::from_policy(&policy.network);
        change(&mut config);
        let proxy = Proxy::start(config, decide.clone(), record.clone()).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        proxy.serve(listener).unwrap();
        Setup {
            dir,
            log,
            decide,
            record,
            proxy: Some(proxy),
            addr,
        }
    }

    /// Stops the proxy and checks the audit log's chain.
    pub fn finish(mut self) -> String {
        if let Some(p) = self.proxy.take() {
            p.shutdown();
        }
        let report = audit::verify(&self.log).unwrap();
        assert!(report.is_intact(), "{report:?}");
        std::fs::read_to_string(&self.log).unwrap()
    }
}

/// An echo server on `bind`: every connection gets back what it sends.
pub async fn echo_server(bind: &str) -> SocketAddr {
    let l = TcpListener::bind(bind).await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    addr
}

/// A plain HTTP server that answers each request with its own head (request line and
/// headers, as received) as the body.
pub async fn head_echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if s.read_exact(&mut b).await.is_err() {
                        return;
                    }
                    head.push(b[0]);
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\nx-hop: 1\r\n\r\n",
                    head.len()
                );
                let _ = s.write_all(reply.as_bytes()).await;
                let _ = s.write_all(&head).await;
            });
        }
    });
    addr
}

/// Sends `data` through `s` and reads as much back.
pub async fn echo_through<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
    data: &[u8],
) -> Vec<u8> {
    s.write_all(data).await.unwrap();
    let mut back = vec![0u8; data.len()];
    s.read_exact(&mut back).await.unwrap();
    back
}

/// Opens a CONNECT tunnel through the proxy with hyper's client: the response, and the
/// upgraded stream when it is a 200.
pub async fn connect_tunnel(
    proxy: SocketAddr,
    authority: &str,
) -> (
    u16,
    String,
    Option<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>,
) {
    use http_body_util::{BodyExt, Empty};
    let stream = TcpStream::connect(proxy).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Empty<bytes::Bytes>>(
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn.with_upgrades());
    let req = hyper::Request::builder()
        .method(hyper::Method::CONNECT)
        .uri(authority)
        .header(hyper::header::HOST, authority)
        .body(Empty::new())
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    if status != 200 {
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        return (status, String::from_utf8_lossy(&body).into_owned(), None);
    }
    let up = hyper::upgrade::on(resp).await.unwrap();
    (
        status,
        String::new(),
        Some(hyper_util::rt::TokioIo::new(up)),
    )
}

/// Sends a plain request with an absolute URI through the proxy: status and body.
pub async fn http_get(proxy: SocketAddr, uri: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use http_body_util::{BodyExt, Empty};
    let stream = TcpStream::connect(proxy).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Empty<bytes::Bytes>>(
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let mut req = hyper::Request::builder().uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = sender
        .send_request(req.body(Empty::new()).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}
