//! Time to first byte of a proxied connection through cordon's real path: a gate opened on a
//! policy that allows the destination, its network proxy (`start_proxy`), the decision and the
//! open record in the gate's audit log in DIR. Per connection: SOCKS5 connect to the proxy,
//! the proxy decides (records), connects, records the open, answers; then one byte there and
//! back. Against: the same byte over a direct connection, and one fdatasync of a small append
//! in DIR (what one sync costs on that file system), measured interleaved in one run.
//!
//!   cargo run --release -p cordon-gate --example proxy_first_byte -- DIR [CONNECTIONS]
//!
//! Prints medians, the added time against "one fdatasync + 0.5 ms" (issue 25's goal), and the
//! group syncs per connection the log made before the clients heard of their connections.
//! `benches/proxy-first-byte.sh` runs it with DIR on the disk and on a tmpfs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_gate::network::start_proxy;
use cordon_gate::{Answer, AskError, AsyncAsker, Gate, Options, Pending, Request};

/// Nobody answers: the policy allows the destination, so nobody is asked.
struct Nobody;

impl AsyncAsker for Nobody {
    async fn ask(&mut self, _: &Request, _: &Pending) -> Result<Answer, AskError> {
        Err(AskError::NobodyToAsk(String::new()))
    }
}

fn echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut r = s.try_clone().unwrap();
                let _ = std::io::copy(&mut r, &mut s);
            });
        }
    });
    addr
}

/// One byte there and back on `s`.
fn ping(mut s: TcpStream) {
    s.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
}

fn direct(dest: SocketAddr) -> Duration {
    let t = Instant::now();
    let s = TcpStream::connect(dest).unwrap();
    s.set_nodelay(true).unwrap();
    ping(s);
    t.elapsed()
}

fn proxied(proxy: SocketAddr, port: u16) -> Duration {
    let t = Instant::now();
    let mut s = TcpStream::connect(proxy).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut r = [0u8; 2];
    s.read_exact(&mut r).unwrap();
    let name = b"echo.test";
    let mut req = vec![5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name);
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).unwrap();
    assert_eq!(r[1], 0, "the proxy refused the connection");
    ping(s);
    t.elapsed()
}

/// One append of a record-sized line and its fdatasync, in `dir`.
fn one_sync(file: &std::fs::File) -> Duration {
    let line = [b'x'; 400];
    let t = Instant::now();
    (&*file).write_all(&line).unwrap();
    file.sync_data().unwrap();
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: proxy_first_byte DIR [CONNECTIONS]"),
    );
    let n: usize = args.next().map_or(300, |a| a.parse().unwrap());
    let state = tempfile::tempdir_in(&dir).unwrap();
    let echo = echo_server();
    std::fs::write(
        state.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[approval]\naudit_log = \"{}/audit.jsonl\"\n\
             [network]\ndefault = \"deny\"\nallow = [\"echo.test\"]\n\
             [network.hosts]\n\"echo.test\" = \"127.0.0.1\"\n",
            state.path().display()
        ),
    )
    .unwrap();
    let mut o = Options::new(state.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    let gate = Arc::new(Gate::open(o).unwrap());
    let proxy = start_proxy(gate.clone(), Nobody).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    proxy.serve(l).unwrap();
    let scratch = std::fs::File::create(state.path().join("sync-probe")).unwrap();

    // Warm-up, then interleaved: each round one of each, so load changes hit all three.
    for _ in 0..10 {
        proxied(addr, echo.port());
        direct(echo);
        one_sync(&scratch);
    }
    let (mut p, mut d, mut f) = (Vec::new(), Vec::new(), Vec::new());
    let mut syncs_before_answer = 0u64;
    for _ in 0..n {
        // The previous connection's close record may still be syncing: counted apart.
        std::thread::sleep(Duration::from_millis(2));
        let s0 = gate.audit_syncs().unwrap_or(0);
        p.push(proxied(addr, echo.port()));
        syncs_before_answer += gate.audit_syncs().unwrap_or(0) - s0;
        d.push(direct(echo));
        f.push(one_sync(&scratch));
    }
    proxy.shutdown();
    let (p, d, f) = (median(p), median(d), median(f));
    let added = p.saturating_sub(d);
    let goal = f + Duration::from_micros(500);
    println!("log in {} ({n} connections, medians)", dir.display());
    println!("  direct, connect + 1 byte there and back: {:.3} ms", ms(d));
    println!(
        "  through cordon's proxy (SOCKS5), decided and recorded: {:.3} ms",
        ms(p)
    );
    println!("  added by the proxy: {:.3} ms", ms(added));
    println!("  one fdatasync of a 400-byte append here: {:.3} ms", ms(f));
    println!(
        "  goal (one fdatasync + 0.5 ms = {:.3} ms): {}",
        ms(goal),
        if added <= goal { "met" } else { "NOT met" }
    );
    println!(
        "  group syncs per connection until the client was answered: {:.2} (incl. close records syncing meanwhile)",
        syncs_before_answer as f64 / n as f64
    );
}
