//! The start of a tunnel cordon does not terminate: the name a TLS client asks for.
//!
//! A connection is decided for one host, and goes to that host's addresses. But a front end
//! shared by many sites (a CDN) routes TLS by the name in the ClientHello (SNI), which the
//! client chooses: `CONNECT allowed.example:443` and then a ClientHello for `other.example`
//! reaches `other.example` if both sit behind the same front end — a host the policy does not
//! list (round 8 of issue 21). The ClientHello is sent in the clear, so it is read here before
//! a byte of it goes on: a name other than the tunnel's host, or a hidden one (encrypted client
//! hello), closes the tunnel. A name inside the encrypted part (`Host` in HTTP over that TLS)
//! still cannot be seen; a front end that routes by it where SNI says another name is not
//! covered (docs/network.md).
//!
//! A protocol where the server speaks first (SSH, SMTP) is relayed as it is: whatever the
//! destination sends before the client does goes on, and nothing is read from the client.

use std::time::Duration;

use cordon_policy::network::Target;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// TLS record type of a handshake, and of its ClientHello message.
const HANDSHAKE: u8 = 0x16;
const CLIENT_HELLO: u8 = 0x01;
/// Extensions: server_name (RFC 6066) and encrypted_client_hello (RFC 9849).
const SERVER_NAME: u16 = 0x0000;
const ENCRYPTED_CLIENT_HELLO: u16 = 0xfe0d;
/// A ClientHello larger than this is not one a client sends (post-quantum key shares make
/// them a few KiB).
const MAX_HELLO: usize = 64 * 1024;
/// How long the rest of a ClientHello may take once its first byte arrived.
const HELLO_TIME: Duration = Duration::from_secs(30);

/// Reads the first flight of a tunnel between `client` and `dest` and passes it on, once a
/// ClientHello in it, if it starts with one (a TLS handshake record header), names the tunnel's `target` (or no name). `pre`:
/// bytes of the client's already read (after the CONNECT head).
pub(crate) async fn first_flight<C, D>(
    client: &mut C,
    dest: &mut D,
    pre: &[u8],
    target: &Target,
) -> std::io::Result<Flight>
where
    C: AsyncRead + AsyncWrite + Unpin,
    D: AsyncRead + AsyncWrite + Unpin,
{
    let mut up = pre.to_vec();
    if up.is_empty() {
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        // Both reads are cancel-safe: the one that loses has read nothing.
        let spoke = crate::relay::first(
            async { client.read(&mut a).await.map(Side::Client) },
            async { dest.read(&mut b).await.map(Side::Dest) },
        )
        .await?;
        match spoke {
            Side::Client(n) => up.extend_from_slice(&a[..n]),
            Side::Dest(n) => {
                // The server spoke first: no ClientHello comes before its greeting.
                client.write_all(&b[..n]).await?;
                return Ok(Flight::Relay);
            }
        }
    }
    if up.first() == Some(&HANDSHAKE) {
        // A TLS record's header: the handshake type, then version 3.x (a front end reads what
        // starts so as TLS). Another protocol may start with the same byte.
        let header = tokio::time::timeout(HELLO_TIME, async {
            let mut more = [0u8; 4096];
            while up.len() < 3 {
                let n = client.read(&mut more).await?;
                if n == 0 {
                    break;
                }
                up.extend_from_slice(&more[..n]);
            }
            Ok::<_, std::io::Error>(())
        })
        .await;
        match header {
            Ok(r) => r?,
            // Nothing of it goes on before it is read: one byte and a pause must not carry
            // the rest past the check.
            Err(_) => {
                return Ok(Flight::Refuse(
                    "the tunnel's first bytes (a TLS record's?) did not arrive in 30 s".into(),
                ))
            }
        }
    }
    if up.len() >= 3 && up[0] == HANDSHAKE && up[1] == 3 && up[2] <= 4 {
        let hello = tokio::time::timeout(HELLO_TIME, client_hello(client, &mut up)).await;
        let named = match hello {
            Err(_) => Err("the TLS ClientHello did not arrive in 30 s".to_string()),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(hello)) => hello.and_then(|h| parse(&h)),
        };
        let why = match named {
            Err(why) => Some(why),
            Ok(Hello { ech: true, .. }) => Some(format!(
                "the TLS client hides the name it asks for (encrypted client hello); a front end shared with {target} could route it to another site"
            )),
            Ok(Hello { name: Some(n), .. }) => match Target::new(&n, target.port) {
                Ok(t) if t.host == target.host => None,
                _ => Some(format!(
                    "the TLS client names {}, not the tunnel's host {target}; a front end shared by both would route it there (CONNECT that host, if the policy lists it)",
                    n.escape_debug()
                )),
            },
            Ok(Hello { name: None, .. }) => None,
        };
        if let Some(why) = why {
            return Ok(Flight::Refuse(why));
        }
        dest.write_all(&up).await?;
        return Ok(Flight::Relay);
    }
    // Not TLS: plain HTTP is read as it goes on ([`crate::plain`]), anything else relayed.
    Ok(Flight::Plain(up))
}

/// What a tunnel goes on with after its first flight.
pub(crate) enum Flight {
    /// Bytes as they are (what was read is passed on).
    Relay,
    /// The client spoke first and not TLS: these bytes (not passed on yet) start what
    /// [`crate::plain::watch`] reads.
    Plain(Vec<u8>),
    /// Closed: why, in one line.
    Refuse(String),
}

/// Which side of a tunnel sent its first bytes, and how many.
enum Side {
    Client(usize),
    Dest(usize),
}

/// Reads on until `buf` holds a whole ClientHello handshake message (possibly over several
/// records); returns the message (type, length and body), or why it is not one.
async fn client_hello<C: AsyncRead + Unpin>(
    client: &mut C,
    buf: &mut Vec<u8>,
) -> std::io::Result<Result<Vec<u8>, String>> {
    loop {
        match assemble(buf) {
            Assembled::Done(m) => return Ok(Ok(m)),
            Assembled::Bad(why) => return Ok(Err(why)),
            Assembled::More => {}
        }
        if buf.len() > MAX_HELLO + 5 * 64 {
            return Ok(Err(format!(
                "the TLS ClientHello is over {MAX_HELLO} bytes"
            )));
        }
        let mut more = [0u8; 4096];
        let n = client.read(&mut more).await?;
        if n == 0 {
            return Ok(Err("the client closed inside its TLS ClientHello".into()));
        }
        buf.extend_from_slice(&more[..n]);
    }
}

enum Assembled {
    Done(Vec<u8>),
    More,
    Bad(String),
}

/// The handshake message at the start of `records` (TLS records of type handshake), when
/// they hold all of it.
fn assemble(records: &[u8]) -> Assembled {
    let mut message = Vec::new();
    let mut rest = records;
    loop {
        let Some(head) = rest.get(..5) else {
            return Assembled::More;
        };
        if head[0] != HANDSHAKE {
            return Assembled::Bad(
                "a TLS record other than the handshake before the ClientHello ended".into(),
            );
        }
        let len = usize::from(u16::from_be_bytes([head[3], head[4]]));
        let Some(body) = rest.get(5..5 + len) else {
            return Assembled::More;
        };
        message.extend_from_slice(body);
        rest = &rest[5 + len..];
        if message.len() >= 4 {
            if message[0] != CLIENT_HELLO {
                return Assembled::Bad(
                    "the tunnel's first TLS handshake message is not a ClientHello".into(),
                );
            }
            let want = 4
                + (usize::from(message[1]) << 16
                    | usize::from(message[2]) << 8
                    | usize::from(message[3]));
            if want > MAX_HELLO {
                return Assembled::Bad(format!("the TLS ClientHello is over {MAX_HELLO} bytes"));
            }
            if message.len() >= want {
                message.truncate(want);
                return Assembled::Done(message);
            }
        }
    }
}

/// What a ClientHello says about the name it asks for.
#[derive(Debug, PartialEq)]
struct Hello {
    name: Option<String>,
    ech: bool,
}

/// Reads the server_name and encrypted_client_hello extensions of a ClientHello message
/// (RFC 8446 §4.1.2, RFC 6066 §3). A message that does not parse is refused, as is a second
/// name or one that is not text: a front end reads them in ways this cannot know.
fn parse(m: &[u8]) -> Result<Hello, String> {
    let bad = || "the tunnel's TLS ClientHello does not parse".to_string();
    let mut r = Reader(m.get(4..).ok_or_else(bad)?);
    r.take(2 + 32).ok_or_else(bad)?; // legacy_version, random
    let n = r.u8().ok_or_else(bad)?;
    r.take(usize::from(n)).ok_or_else(bad)?; // legacy_session_id
    let n = r.u16().ok_or_else(bad)?;
    r.take(usize::from(n)).ok_or_else(bad)?; // cipher_suites
    let n = r.u8().ok_or_else(bad)?;
    r.take(usize::from(n)).ok_or_else(bad)?; // legacy_compression_methods
    let mut hello = Hello {
        name: None,
        ech: false,
    };
    if r.0.is_empty() {
        return Ok(hello);
    }
    let n = r.u16().ok_or_else(bad)?;
    let mut exts = Reader(r.take(usize::from(n)).ok_or_else(bad)?);
    let mut seen_name = false;
    while !exts.0.is_empty() {
        let kind = exts.u16().ok_or_else(bad)?;
        let n = exts.u16().ok_or_else(bad)?;
        let data = exts.take(usize::from(n)).ok_or_else(bad)?;
        match kind {
            SERVER_NAME => {
                if seen_name {
                    return Err("the TLS ClientHello has two server_name extensions".into());
                }
                seen_name = true;
                let mut list = Reader(data);
                let n = list.u16().ok_or_else(bad)?;
                let mut names = Reader(list.take(usize::from(n)).ok_or_else(bad)?);
                while !names.0.is_empty() {
                    let kind = names.u8().ok_or_else(bad)?;
                    let n = names.u16().ok_or_else(bad)?;
                    let name = names.take(usize::from(n)).ok_or_else(bad)?;
                    if kind != 0 || hello.name.is_some() {
                        return Err("the TLS ClientHello names more than one server".into());
                    }
                    let text = std::str::from_utf8(name)
                        .map_err(|_| "the TLS ClientHello's server name is not text".to_string())?;
                    hello.name = Some(text.to_string());
                }
            }
            ENCRYPTED_CLIENT_HELLO => hello.ech = true,
            _ => {}
        }
    }
    Ok(hello)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello as rustls writes it, for `name`.
    fn rustls_hello(name: &str) -> Vec<u8> {
        use tokio_rustls::rustls;
        let roots = rustls::RootCertStore::empty();
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let server = rustls::pki_types::ServerName::try_from(name.to_string()).unwrap();
        let mut conn = rustls::ClientConnection::new(std::sync::Arc::new(config), server).unwrap();
        let mut out = Vec::new();
        conn.write_tls(&mut out).unwrap();
        out
    }

    #[test]
    fn the_name_is_read_from_a_real_client_hello_in_any_record_split() {
        let records = rustls_hello("api.example.org");
        let Assembled::Done(m) = assemble(&records) else {
            panic!("not assembled")
        };
        assert_eq!(
            parse(&m).unwrap(),
            Hello {
                name: Some("api.example.org".into()),
                ech: false
            }
        );
        // The same message split over two records, and cut short.
        let body = &records[5..];
        let (a, b) = body.split_at(40);
        let mut split = Vec::new();
        for part in [a, b] {
            split.extend_from_slice(&[HANDSHAKE, 3, 1]);
            split.extend_from_slice(&(part.len() as u16).to_be_bytes());
            split.extend_from_slice(part);
        }
        let Assembled::Done(m2) = assemble(&split) else {
            panic!("split not assembled")
        };
        assert_eq!(m, m2);
        assert!(matches!(
            assemble(&split[..split.len() - 1]),
            Assembled::More
        ));
        // An IP address as the name: rustls sends none.
        let records = rustls_hello("127.0.0.1");
        let Assembled::Done(m) = assemble(&records) else {
            panic!()
        };
        assert_eq!(parse(&m).unwrap().name, None);
        // Not a ClientHello, not a handshake, garbage.
        assert!(matches!(
            assemble(&[HANDSHAKE, 3, 1, 0, 4, 2, 0, 0, 0]),
            Assembled::Bad(_)
        ));
        assert!(matches!(
            assemble(&[0x17, 3, 3, 0, 1, 0]),
            Assembled::Bad(_)
        ));
        assert!(parse(&[1, 0, 0, 3, 3, 3, 3]).is_err());
    }
}
