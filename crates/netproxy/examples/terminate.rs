//! What TLS termination (issue 24) costs against an end-to-end `CONNECT` tunnel, on loopback,
//! to the same HTTPS server: time to first byte of a response and bulk throughput.
//!
//! Both paths go through the same proxy (a `Decide` that allows at once, no recorder): to
//! `e2e.test` the client's TLS goes end to end through `CONNECT`; to `term.test` (a
//! credential's host) the proxy terminates it with the run's CA, puts the credential in, and
//! makes its own TLS connection to the server. Paths alternate round by round.
//!
//! - first byte, new tunnel: connect to the proxy, `CONNECT`, TLS, `GET /ping`, first byte of
//!   the response (median of `PINGS`);
//! - first byte, open tunnel: one more `GET /ping` on a tunnel already set up (median);
//! - bulk: `GET /bulk` of `BULK_MIB` MiB on an open tunnel (best of `ROUNDS`).
//!
//! Run through `benches/proxy-terminate.sh` (release build). Prints a Markdown table.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_netproxy::{
    Config, ConnectionRecord, Decide, Proxy, Record, Secret, Termination, Verdict,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_rustls::rustls;

const CHUNK: usize = 256 * 1024;

struct AllowAll;

impl Decide for AllowAll {
    fn decide(&self, _: &str, _: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        Box::pin(async {
            Verdict::Allow {
                rule: "bench".into(),
            }
        })
    }
}

struct NoRecord;

impl Record for NoRecord {
    fn connection(&self, _: &ConnectionRecord) -> Result<(), cordon_netproxy::Error> {
        Ok(())
    }
}

/// The HTTPS server: `/ping` answers `p`, `/bulk` `mib` MiB; keep-alive.
async fn server(mib: u64) -> (SocketAddr, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["e2e.test".into(), "term.test".into()])
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = l.accept().await else { return };
            let _ = s.set_nodelay(true);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(s).await else {
                    return;
                };
                let mut tls = BufReader::new(tls);
                let chunk = vec![b'x'; CHUNK];
                loop {
                    let mut line = String::new();
                    let mut path = String::new();
                    loop {
                        line.clear();
                        match tls.read_line(&mut line).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        if path.is_empty() {
                            path = line.split(' ').nth(1).unwrap_or("/").to_string();
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let len = if path == "/bulk" { mib << 20 } else { 1 };
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                    if tls.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    if path == "/bulk" {
                        let mut left = len as usize;
                        while left > 0 {
                            let n = left.min(CHUNK);
                            if tls.write_all(&chunk[..n]).await.is_err() {
                                return;
                            }
                            left -= n;
                        }
                    } else if tls.write_all(b"p").await.is_err() {
                        return;
                    }
                    let _ = tls.flush().await;
                }
            });
        }
    });
    (addr, ca_cert.pem())
}

fn client_config(pem: &str) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

type Tunnel = BufReader<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

/// Connect, `CONNECT host:port`, TLS as `host`.
async fn tunnel(
    proxy: SocketAddr,
    host: &str,
    port: u16,
    tls: &Arc<rustls::ClientConfig>,
) -> Tunnel {
    let mut s = tokio::net::TcpStream::connect(proxy).await.unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(
        format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).await.unwrap();
        head.push(b[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let name = rustls::pki_types::ServerName::try_from(host.to_string()).unwrap();
    BufReader::new(
        tokio_rustls::TlsConnector::from(tls.clone())
            .connect(name, s)
            .await
            .unwrap(),
    )
}

/// `GET path`; the time to the response's first byte, then the body read whole.
async fn get(t: &mut Tunnel, host: &str, path: &str) -> (Duration, u64) {
    let start = Instant::now();
    t.get_mut()
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer PH\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut first = [0u8; 1];
    t.read_exact(&mut first).await.unwrap();
    let ttfb = start.elapsed();
    let mut len = 0u64;
    let mut line = String::new();
    loop {
        line.clear();
        t.read_line(&mut line).await.unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut left = len;
    let mut buf = vec![0u8; CHUNK];
    while left > 0 {
        let n = t
            .read(&mut buf[..(left.min(CHUNK as u64) as usize)])
            .await
            .unwrap();
        assert!(n > 0, "short body");
        left -= n as u64;
    }
    (ttfb, len)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let mib = env("BULK_MIB", 256);
    let rounds = env("ROUNDS", 3) as usize;
    let pings = env("PINGS", 200) as usize;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (up, up_ca) = rt.block_on(server(mib));
    let policy = cordon_policy::Policy::parse(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[credentials.b]\nenv = \"T\"\nfrom = \"env:T\"\nhosts = [\"term.test\"]\n",
        "bench.toml",
        std::path::Path::new("/"),
    )
    .unwrap();
    let c = &policy.credentials[0];
    let termination = Arc::new(
        Termination::new(
            vec![Secret {
                name: c.name.clone(),
                placeholder: "PH".into(),
                value: "the-real-value".into(),
                hosts: c.hosts.clone(),
                header: None,
            }],
            vec![],
            up_ca.as_bytes(),
        )
        .unwrap(),
    );
    let config = Config {
        hosts: HashMap::from([
            ("e2e.test".to_string(), up.ip()),
            ("term.test".to_string(), up.ip()),
        ]),
        termination: Some(termination.clone()),
        ..Config::default()
    };
    let proxy = Proxy::start(config, Arc::new(AllowAll), Arc::new(NoRecord)).unwrap();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let paddr = l.local_addr().unwrap();
    proxy.serve(l).unwrap();
    let e2e_tls = client_config(&up_ca);
    let term_tls = client_config(&termination.ca_pem());
    let paths = [
        ("CONNECT, end to end", "e2e.test", &e2e_tls),
        ("terminated (credential)", "term.test", &term_tls),
    ];
    let mut new_tunnel = vec![Vec::new(); 2];
    let mut open_tunnel = vec![Vec::new(); 2];
    let mut bulk = [f64::MAX; 2];
    rt.block_on(async {
        // Warm up: the leaf for term.test is made once per run.
        for (_, host, tls) in &paths {
            let mut t = tunnel(paddr, host, up.port(), tls).await;
            get(&mut t, host, "/ping").await;
        }
        for round in 0..rounds {
            for (i, (_, host, tls)) in paths.iter().enumerate() {
                for _ in 0..pings / rounds.max(1) {
                    let start = Instant::now();
                    let mut t = tunnel(paddr, host, up.port(), tls).await;
                    let (ttfb, _) = get(&mut t, host, "/ping").await;
                    let setup = start.elapsed() - ttfb;
                    new_tunnel[i].push(setup + ttfb);
                    let (again, _) = get(&mut t, host, "/ping").await;
                    open_tunnel[i].push(again);
                }
                let mut t = tunnel(paddr, host, up.port(), tls).await;
                let start = Instant::now();
                let (_, len) = get(&mut t, host, "/bulk").await;
                let secs = start.elapsed().as_secs_f64();
                assert_eq!(len, mib << 20);
                bulk[i] = bulk[i].min(secs);
                let _ = round;
            }
        }
    });
    proxy.shutdown();
    println!("| path | first byte, new tunnel (median of {pings}) | first byte, open tunnel | bulk {mib} MiB, best of {rounds} |");
    println!("| --- | --- | --- | --- |");
    let rates: Vec<f64> = bulk.iter().map(|s| mib as f64 / s).collect();
    for (i, (name, _, _)) in paths.iter().enumerate() {
        println!(
            "| {name} | {:.3} ms | {:.3} ms | {:.0} MiB/s ({:.0} %) |",
            median(new_tunnel[i].clone()).as_secs_f64() * 1e3,
            median(open_tunnel[i].clone()).as_secs_f64() * 1e3,
            rates[i],
            rates[i] / rates[0] * 100.0
        );
    }
    let added_new =
        median(new_tunnel[1].clone()).as_secs_f64() - median(new_tunnel[0].clone()).as_secs_f64();
    let added_open =
        median(open_tunnel[1].clone()).as_secs_f64() - median(open_tunnel[0].clone()).as_secs_f64();
    println!(
        "\nadded first byte: new tunnel {:+.3} ms, open tunnel {:+.3} ms; bulk {:.0} % of CONNECT",
        added_new * 1e3,
        added_open * 1e3,
        rates[1] / rates[0] * 100.0
    );
}
