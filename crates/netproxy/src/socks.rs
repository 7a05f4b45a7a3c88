//! SOCKS5 (RFC 1928), just what a proxied client needs: no authentication, `CONNECT`, with the
//! destination as an IPv4 address, an IPv6 address or a name the proxy resolves. `BIND` and
//! `UDP ASSOCIATE` are answered "command not supported" (0x07).
//!
//! ```text
//! client: 05 NMETHODS METHODS…            proxy: 05 00   (no auth; 05 FF if not offered)
//! client: 05 01 00 ATYP ADDR PORT         proxy: 05 REP 00 ATYP BND.ADDR BND.PORT
//!         ATYP 01: 4 bytes, 03: LEN NAME, 04: 16 bytes; PORT big-endian
//! ```
//!
//! Every read is of a length the protocol fixes (at most 255 bytes), under the handshake
//! timeout, so a client can neither make the proxy buffer more nor hold it forever.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::connect::{open_admitted, Opening, Refusal};
use crate::relay::{self, Counters};
use crate::{Admission, Event, Fields, Protocol, Shared};

pub(crate) const VERSION: u8 = 0x05;

const NO_AUTH: u8 = 0x00;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CMD_CONNECT: u8 = 0x01;

/// Reply codes.
const SUCCEEDED: u8 = 0x00;
const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED: u8 = 0x02;
const NETWORK_UNREACHABLE: u8 = 0x03;
const HOST_UNREACHABLE: u8 = 0x04;
const CONNECTION_REFUSED: u8 = 0x05;
const TTL_EXPIRED: u8 = 0x06;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_NOT_SUPPORTED: u8 = 0x08;

/// What the client asked to connect to.
enum Dest {
    Addr(IpAddr),
    Name(String),
}

pub(crate) async fn serve(shared: Arc<Shared>, mut stream: TcpStream, admission: Admission) {
    // `admission` lives to the end: its slot until the close record is written, its refusing
    // place until the refusal is.
    let track = shared.track(Protocol::Socks5, Instant::now());
    let asked = tokio::time::timeout(shared.limits().handshake_timeout, handshake(&mut stream));
    let (dest, port) = match asked.await {
        Ok(Ok(Ok(d))) => d,
        Ok(Ok(Err(code))) => {
            let _ = reply(&mut stream, code).await;
            return;
        }
        // A broken or silent client asked for nothing: nothing to decide or record.
        Ok(Err(_)) | Err(_) => return,
    };
    let host = match &dest {
        Dest::Addr(IpAddr::V6(a)) => format!("[{a}]"),
        Dest::Addr(IpAddr::V4(a)) => a.to_string(),
        Dest::Name(n) => n.clone(),
    };
    let Opening {
        target,
        rule,
        result,
        decision,
    } = open_admitted(&shared, &admission, &host, port).await;
    let host = target.map_or(host, |t| t.host.to_string());
    // Connected: the open record is made durable before the client hears of it; a connection
    // the log cannot show is refused (the destination closed before a byte went through).
    let result = match result {
        Ok((dest, addr)) => {
            let open = Fields {
                host: &host,
                port,
                addr: Some(addr),
                allowed: true,
                rule: &rule,
                reason: "",
                bytes: (0, 0),
            };
            match track.opened(&shared, open, decision).await {
                Ok(()) => Ok((dest, addr)),
                Err(why) => Err(Refusal::Unrecorded(why)),
            }
        }
        Err(why) => Err(why),
    };
    let (dest, addr) = match result {
        Ok(ok) => ok,
        Err(why) => {
            let code = match &why {
                Refusal::Policy { .. }
                | Refusal::Address { .. }
                | Refusal::BadTarget(_)
                | Refusal::Placeholder(_) => NOT_ALLOWED,
                Refusal::Resolve(_) => HOST_UNREACHABLE,
                Refusal::OverCap(_) | Refusal::Unrecorded(_) => GENERAL_FAILURE,
                Refusal::Connect(e) => match e.kind() {
                    std::io::ErrorKind::ConnectionRefused => CONNECTION_REFUSED,
                    std::io::ErrorKind::NetworkUnreachable => NETWORK_UNREACHABLE,
                    std::io::ErrorKind::TimedOut => TTL_EXPIRED,
                    _ => HOST_UNREACHABLE,
                },
            };
            track.refused(&shared, &host, port, &rule, &why);
            let _ = reply(&mut stream, code).await;
            return;
        }
    };
    let fields = |reason, bytes| Fields {
        host: &host,
        port,
        addr: Some(addr),
        allowed: true,
        rule: &rule,
        reason,
        bytes,
    };
    let ended = match reply(&mut stream, SUCCEEDED).await {
        Ok(()) => {
            let counters = Arc::new(Counters::default());
            // A host a credential goes to: TLS terminated here, requests checked one by one.
            let ended = match crate::terminate::terminated(&shared, &host, port) {
                Some((t, target)) => {
                    let dest = relay::Counted::new(dest, counters.clone());
                    crate::terminate::tunnel(
                        &shared,
                        &t,
                        stream,
                        dest,
                        addr,
                        counters.clone(),
                        &target,
                    )
                    .await
                }
                None => {
                    let mut dest = relay::Counted::new(dest, counters.clone());
                    match crate::http::first_flight(
                        &shared,
                        &mut stream,
                        &mut dest,
                        &[],
                        &host,
                        port,
                        &counters,
                    )
                    .await
                    {
                        Some(ended) => Some(ended),
                        None => {
                            relay::relay_tcp(&shared, stream, dest.into_inner(), &counters).await
                        }
                    }
                }
            };
            track.record(
                &shared,
                Event::Close,
                fields(ended.as_deref().unwrap_or(""), counters.get()),
            );
            return;
        }
        Err(e) => format!("the client left before the reply: {e}"),
    };
    track.record(&shared, Event::Close, fields(&ended, (0, 0)));
}

/// Reads the greeting and the request. `Ok(Err(code))`: answer with that failure code.
async fn handshake(s: &mut TcpStream) -> std::io::Result<Result<(Dest, u16), u8>> {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).await?;
    if head[0] != VERSION {
        return Ok(Err(GENERAL_FAILURE));
    }
    let mut methods = [0u8; 255];
    let methods = &mut methods[..usize::from(head[1])];
    s.read_exact(methods).await?;
    if !methods.contains(&NO_AUTH) {
        s.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Err(std::io::Error::other("no acceptable method"));
    }
    s.write_all(&[VERSION, NO_AUTH]).await?;

    let mut req = [0u8; 4];
    s.read_exact(&mut req).await?;
    if req[0] != VERSION {
        return Ok(Err(GENERAL_FAILURE));
    }
    let dest = match req[3] {
        0x01 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await?;
            Dest::Addr(IpAddr::V4(Ipv4Addr::from(a)))
        }
        0x03 => {
            let mut len = [0u8; 1];
            s.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            s.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(n) => Dest::Name(n),
                Err(_) => {
                    let mut port = [0u8; 2];
                    s.read_exact(&mut port).await?;
                    return Ok(Err(NOT_ALLOWED));
                }
            }
        }
        0x04 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await?;
            Dest::Addr(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => return Ok(Err(ADDRESS_NOT_SUPPORTED)),
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).await?;
    if req[1] != CMD_CONNECT {
        return Ok(Err(COMMAND_NOT_SUPPORTED));
    }
    Ok(Ok((dest, u16::from_be_bytes(port))))
}

/// Answers with `code`. The bound address is always 0.0.0.0:0: clients of CONNECT do not use
/// it, and the proxy's own address outside the sandbox is none of the child's business.
async fn reply(s: &mut TcpStream, code: u8) -> std::io::Result<()> {
    s.write_all(&[VERSION, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
        .await
}
