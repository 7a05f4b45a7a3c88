//! Proxy speed on loopback against direct connections: bulk throughput (a server sends
//! `BULK_MIB` MiB, default 1024) and time to first byte (connect, one byte there and back),
//! through HTTP CONNECT and SOCKS5, with a `Decide` that allows at once and either no
//! recorder or the real audit log (every decision and connection record fsynced). On Linux a
//! last path goes through a reference relay: the least a user-space TCP relay can do (see
//! [`splice_relay`]), to tell the second TCP connection's cost from the proxy's own.
//!
//! Run through `benches/proxy-throughput.sh` (release build). Prints a Markdown table.

use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cordon_approval::audit::{self, AuditLog};
use cordon_netproxy::{Config, ConnectionRecord, Decide, Proxy, ProxyHandle, Record, Verdict};
use cordon_policy::Action;

const CHUNK: usize = 256 * 1024;

/// Allows everything, recording the decision when given a log (as the gate's engine does).
struct AllowAll(Option<Mutex<AuditLog>>);

impl Decide for AllowAll {
    fn decide(&self, host: &str, port: u16) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        let key = format!("{host}:{port}");
        Box::pin(async move {
            if let Some(log) = &self.0 {
                let r = audit::Record::new("network", Action::Allow, audit::By::Default, "bench")
                    .keys([["network".to_string(), key]]);
                log.lock().unwrap().append(&r).unwrap();
            }
            Verdict::Allow {
                rule: "bench".into(),
            }
        })
    }
}

struct Recorder(Option<Mutex<AuditLog>>);

impl Record for Recorder {
    fn connection(&self, c: &ConnectionRecord) -> Result<(), cordon_netproxy::Error> {
        if let Some(log) = &self.0 {
            let r = audit::Record::connection(
                c.allowed,
                "",
                audit::Connection {
                    event: format!("{:?}", c.event).to_lowercase(),
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
            log.lock()
                .unwrap()
                .append(&r)
                .map_err(cordon_netproxy::Error::unrecorded)?;
        }
        Ok(())
    }
}

/// Sends `bytes` to every connection, then closes.
fn bulk_server(bytes: u64) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let buf = vec![0x5a; CHUNK];
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn({
                let buf = buf.clone();
                move || {
                    let mut left = bytes;
                    while left > 0 {
                        let n = left.min(buf.len() as u64) as usize;
                        if s.write_all(&buf[..n]).is_err() {
                            return;
                        }
                        left -= n as u64;
                    }
                }
            });
        }
    });
    addr
}

/// A relay to `dest` with nothing but the bytes to move: per connection a thread per direction
/// with blocking `splice(2)` through a pipe of the proxy's default size, no runtime, no request,
/// no decision, no counting. What it costs over direct is the second TCP connection's (both
/// sockets' send and receive paths, its acknowledgements, the hand-over between threads).
#[cfg(target_os = "linux")]
fn splice_relay(dest: SocketAddr) -> SocketAddr {
    use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size, pipe, splice, SpliceFlags};
    use std::net::Shutdown;

    fn one(src: TcpStream, dst: TcpStream) {
        let (pipe_out, pipe_in) = pipe().unwrap();
        let size = fcntl_setpipe_size(&pipe_in, 256 * 1024)
            .or_else(|_| fcntl_getpipe_size(&pipe_in))
            .unwrap();
        loop {
            let n = splice(&src, None, &pipe_in, None, size, SpliceFlags::MOVE).unwrap_or(0);
            if n == 0 {
                let _ = dst.shutdown(Shutdown::Write);
                return;
            }
            let mut left = n;
            while left > 0 {
                match splice(&pipe_out, None, &dst, None, left, SpliceFlags::MOVE) {
                    Ok(m) if m > 0 => left -= m,
                    _ => return,
                }
            }
        }
    }

    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            let Ok(d) = TcpStream::connect(dest) else {
                continue;
            };
            let (c2, d2) = (c.try_clone().unwrap(), d.try_clone().unwrap());
            std::thread::spawn(move || one(d, c));
            std::thread::spawn(move || one(c2, d2));
        }
    });
    addr
}

/// Answers each byte it reads with one byte.
fn ping_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = s.set_nodelay(true);
            std::thread::spawn(move || {
                let mut b = [0u8; 1];
                while s.read_exact(&mut b).is_ok() {
                    if s.write_all(&b).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[derive(Clone, Copy)]
enum Via {
    Direct,
    /// Through a relay: (destination, the relay in front of it), for each destination.
    Relay([(SocketAddr, SocketAddr); 2]),
    Connect(SocketAddr),
    Socks(SocketAddr),
}

/// A connection to `dest`, directly or through the proxy, ready for the destination's bytes.
fn open(via: Via, dest: SocketAddr) -> TcpStream {
    match via {
        Via::Direct => {
            let s = TcpStream::connect(dest).unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Via::Relay(relays) => {
            let (_, relay) = relays.iter().find(|(d, _)| *d == dest).unwrap();
            let s = TcpStream::connect(relay).unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Via::Connect(proxy) => {
            let mut s = TcpStream::connect(proxy).unwrap();
            s.set_nodelay(true).unwrap();
            write!(s, "CONNECT {dest} HTTP/1.1\r\nhost: {dest}\r\n\r\n").unwrap();
            // Read the response head byte by byte: nothing of the tunnel may be consumed.
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut b).unwrap();
                head.push(b[0]);
            }
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&head)
            );
            s
        }
        Via::Socks(proxy) => {
            let mut s = TcpStream::connect(proxy).unwrap();
            s.set_nodelay(true).unwrap();
            let SocketAddr::V4(d) = dest else {
                panic!("IPv4 only")
            };
            s.write_all(&[5, 1, 0]).unwrap();
            let mut r = [0u8; 2];
            s.read_exact(&mut r).unwrap();
            let mut req = vec![5, 1, 0, 1];
            req.extend_from_slice(&d.ip().octets());
            req.extend_from_slice(&d.port().to_be_bytes());
            s.write_all(&req).unwrap();
            let mut r = [0u8; 10];
            s.read_exact(&mut r).unwrap();
            assert_eq!(r[1], 0, "SOCKS refused");
            s
        }
    }
}

/// CPU time of this whole process (servers, clients and the proxy), from /proc/self/stat, in
/// seconds (clock ticks of 1/100 s, Linux's USER_HZ).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / 100.0
}

/// MiB/s reading `bytes` from the bulk server, and the CPU seconds the whole process spent.
fn bulk(via: Via, dest: SocketAddr, bytes: u64) -> (f64, f64) {
    let cpu = cpu_seconds();
    let start = Instant::now();
    let mut s = open(via, dest);
    let mut buf = vec![0u8; CHUNK];
    let mut got = 0u64;
    while got < bytes {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed early at {got}");
        got += n as u64;
    }
    (
        bytes as f64 / (1024.0 * 1024.0) / start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu,
    )
}

/// Time from connecting to the first byte back, one connection.
fn ttfb(via: Via, dest: SocketAddr) -> Duration {
    let start = Instant::now();
    let mut s = open(via, dest);
    s.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn proxy(log: Option<&std::path::Path>) -> (ProxyHandle, SocketAddr) {
    let mut config = Config::default();
    // The bench servers are on 127.0.0.1: list it, as a policy naming the address would.
    config.listed.push(cordon_netproxy::AddrEntry {
        addr: "127.0.0.1".parse().unwrap(),
        port: None,
    });
    let open_log = || log.map(|p| Mutex::new(AuditLog::open(p).unwrap()));
    let handle = Proxy::start(
        config,
        Arc::new(AllowAll(open_log())),
        Arc::new(Recorder(open_log())),
    )
    .unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    handle.serve(l).unwrap();
    (handle, addr)
}

fn main() {
    let mib: u64 = std::env::var("BULK_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let pings: usize = std::env::var("PINGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let bytes = mib * 1024 * 1024;
    let bulk_dest = bulk_server(bytes);
    let ping_dest = ping_server();
    let dir = std::env::temp_dir().join(format!("cordon-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("audit.jsonl");
    let (bare, bare_addr) = proxy(None);
    let (audited, audited_addr) = proxy(Some(&log));

    #[allow(unused_mut)] // Linux adds the reference relay.
    let mut cases = vec![
        ("direct", Via::Direct),
        ("HTTP CONNECT", Via::Connect(bare_addr)),
        ("SOCKS5", Via::Socks(bare_addr)),
        ("HTTP CONNECT, audit log", Via::Connect(audited_addr)),
    ];
    #[cfg(target_os = "linux")]
    cases.push((
        "reference splice relay (no proxy)",
        Via::Relay([
            (bulk_dest, splice_relay(bulk_dest)),
            (ping_dest, splice_relay(ping_dest)),
        ]),
    ));
    // Rounds and pings alternate between the paths, so that a change in the machine's load
    // hits every path alike.
    let mut best = vec![0.0f64; cases.len()];
    let mut cpu = vec![f64::MAX; cases.len()];
    for _ in 0..rounds {
        for (i, (_, via)) in cases.iter().enumerate() {
            let (rate, used) = bulk(*via, bulk_dest, bytes);
            best[i] = best[i].max(rate);
            cpu[i] = cpu[i].min(used);
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    for _ in 0..pings {
        for (i, (_, via)) in cases.iter().enumerate() {
            times[i].push(ttfb(*via, ping_dest));
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    println!("| path | bulk {mib} MiB, best of {rounds} | vs direct | CPU s (all threads), least | time to first byte, median of {pings} | added |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (i, (name, _)) in cases.iter().enumerate() {
        println!(
            "| {name} | {:.0} MiB/s | {:.0} % | {:.2} | {:.3} ms | {:+.3} ms |",
            best[i],
            100.0 * best[i] / best[0],
            cpu[i],
            medians[i].as_secs_f64() * 1e3,
            (medians[i].as_secs_f64() - medians[0].as_secs_f64()) * 1e3
        );
    }
    bare.shutdown();
    audited.shutdown();
    let report = audit::verify(&log).unwrap();
    println!(
        "\naudit log: {} records, chain intact: {}",
        report.records,
        report.is_intact()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
