//! A connection whose open record cannot be made durable is refused before a byte goes
//! through (HTTP CONNECT, plain HTTP, SOCKS5): cordon makes no connection its audit log does
//! not show. The log that fails is a real one: a complete line that is not a record makes the
//! writer refuse every append until a person looks at it.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use cordon_netproxy::{Config, Proxy};
use cordon_policy::Policy;
use tokio::io::AsyncReadExt;

/// A destination that counts the bytes it receives.
async fn counting_server() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let got = Arc::new(AtomicUsize::new(0));
    let counted = got.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut b = [0u8; 1024];
                while let Ok(n) = s.read(&mut b).await {
                    if n == 0 {
                        return;
                    }
                    counted.fetch_add(n, Ordering::SeqCst);
                }
            });
        }
    });
    (addr, got)
}

/// A CONNECT tunnel, a plain HTTP request and a SOCKS connection to `dest.test:PORT` are each
/// refused as a connection the audit log cannot record; the refusal's reason opens with `why`.
async fn refused_as_unrecorded_by_each_protocol(addr: std::net::SocketAddr, port: u16, why: &str) {
    let unrecorded = format!("the connection could not be recorded in the audit log ({why}");
    let (status, body, _) = connect_tunnel(addr, &format!("dest.test:{port}")).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.starts_with(&format!(
            "cordon: the connection to dest.test:{port} is refused: {unrecorded}"
        )),
        "{body}"
    );
    assert!(
        body.contains("free space or fix the log, then retry"),
        "{body}"
    );
    let (status, body) = http_get(addr, &format!("http://dest.test:{port}/x"), &[]).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains(&unrecorded), "{body}");
    let e = tokio_socks::tcp::Socks5Stream::connect(addr, ("dest.test", port))
        .await
        .unwrap_err();
    assert!(
        matches!(e, tokio_socks::Error::GeneralSocksServerFailure),
        "{e:?}"
    );
}

#[test]
fn a_connection_whose_open_record_fails_is_refused_before_its_first_byte() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cordon.toml");
    std::fs::write(
        &file,
        "version = 1\n[network]\nallow = [\"dest.test\"]\n[network.hosts]\n\"dest.test\" = \"127.0.0.1\"\n[sandbox]\nnetwork = \"proxy\"\n",
    )
    .unwrap();
    let policy = Policy::load(&file).unwrap();
    // Decisions go to a log that works; connection records to one that refuses every append.
    let decisions = dir.path().join("decisions.jsonl");
    let connections = dir.path().join("connections.jsonl");
    let decide = EngineDecide::new(&policy, &decisions, vec![]);
    let record = AuditRecord::new(&connections);
    std::fs::write(&connections, "not a record\n").unwrap();
    let proxy = Proxy::start(
        Config::from_policy(&policy.network),
        decide.clone(),
        record.clone(),
    )
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    proxy.serve(listener).unwrap();

    let got = rt.block_on(async {
        let (dest, got) = counting_server().await;
        let port = dest.port();
        refused_as_unrecorded_by_each_protocol(addr, port, "").await;
        // Give a byte that slipped through time to arrive.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        got
    });
    assert_eq!(
        got.load(Ordering::SeqCst),
        0,
        "a byte reached the destination"
    );
    proxy.shutdown();
    // Each connection was decided (allowed) and recorded as decided, then refused: nothing
    // in the connection log, whose writer refused.
    let log = std::fs::read_to_string(&decisions).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.lines().all(|l| l.contains(r#""decision":"allow""#)),
        "{log}"
    );
    assert_eq!(
        std::fs::read_to_string(&connections).unwrap(),
        "not a record\n"
    );
}

/// Allows every connection with its decision's record "not yet durable": the wait for it fails
/// as an fsync that returned EIO does, naming the log.
struct UnsyncedAllow {
    waits: Arc<AtomicUsize>,
}

const SYNC_FAILED: &str = "audit log /var/log/cordon/decisions.jsonl: cannot make the record durable (fsync): Input/output error (os error 5)";

impl cordon_netproxy::Decide for UnsyncedAllow {
    fn decide(
        &self,
        _: &str,
        _: u16,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = cordon_netproxy::Verdict> + Send + '_>>
    {
        unreachable!("the proxy asks for the decision with its record's wait")
    }

    fn decide_unsynced(
        &self,
        _: &str,
        _: u16,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = (
                        cordon_netproxy::Verdict,
                        Option<cordon_netproxy::DecisionSync>,
                    ),
                > + Send
                + '_,
        >,
    > {
        let waits = self.waits.clone();
        let sync = cordon_netproxy::DecisionSync::new(move || {
            waits.fetch_add(1, Ordering::SeqCst);
            Err(cordon_netproxy::Error::unrecorded(SYNC_FAILED))
        });
        Box::pin(async move {
            let allow = cordon_netproxy::Verdict::Allow {
                rule: "rule network dest.test".into(),
            };
            (allow, Some(sync))
        })
    }
}

#[test]
fn a_connection_whose_decision_cannot_be_made_durable_is_refused_before_its_first_byte() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cordon.toml");
    std::fs::write(
        &file,
        "version = 1\n[network]\nallow = [\"dest.test\"]\n[network.hosts]\n\"dest.test\" = \"127.0.0.1\"\n[sandbox]\nnetwork = \"proxy\"\n",
    )
    .unwrap();
    let policy = Policy::load(&file).unwrap();
    let connections = dir.path().join("connections.jsonl");
    let record = AuditRecord::new(&connections);
    let waits = Arc::new(AtomicUsize::new(0));
    let proxy = Proxy::start(
        Config::from_policy(&policy.network),
        Arc::new(UnsyncedAllow {
            waits: waits.clone(),
        }),
        record.clone(),
    )
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    proxy.serve(listener).unwrap();

    let got = rt.block_on(async {
        let (dest, got) = counting_server().await;
        let port = dest.port();
        refused_as_unrecorded_by_each_protocol(addr, port, &format!("{SYNC_FAILED})")).await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        got
    });
    assert_eq!(
        got.load(Ordering::SeqCst),
        0,
        "a byte reached the destination"
    );
    proxy.shutdown();
    assert_eq!(waits.load(Ordering::SeqCst), 3, "each decision waited for");
    // No open record (its decision is not durable): each connection's one record is its
    // refusal, which names the log and why.
    let log = std::fs::read_to_string(&connections).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    for line in log.lines() {
        assert!(line.contains(r#""event":"close""#), "{log}");
        assert!(line.contains(SYNC_FAILED), "{log}");
    }
}
