//! From a requested host and port to a connected destination: decide, resolve once, check the
//! very addresses resolved, connect to one of them.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};

use cordon_policy::network::{is_internal, Host, Target};
use tokio::net::TcpStream;

use crate::{over_cap_reason, Admission, DecisionSync, Refused, Shared, Verdict};

/// Why a connection was not made.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// What the client asked for is not a host and port.
    BadTarget(String),
    /// The policy (or the person asked) said no.
    Policy { reason: String },
    /// Allowed by name, but every address it resolved to is refused.
    Address { addr: IpAddr, why: String },
    /// The name did not resolve.
    Resolve(String),
    /// Connecting failed.
    Connect(io::Error),
    /// Beyond the number of connections served at once; the reason says so.
    OverCap(String),
    /// A request carries a credential's placeholder where it may not go.
    Placeholder(String),
    /// Allowed and connected, but its open record could not be made durable: cordon makes no
    /// connection the audit log does not show.
    Unrecorded(crate::Error),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::BadTarget(why) => write!(f, "not a destination: {why}"),
            Refusal::Policy { reason } => write!(f, "refused by the policy: {reason}"),
            Refusal::Address { addr, why } => write!(f, "address {addr} refused: {why}"),
            Refusal::Resolve(why) => write!(f, "cannot resolve: {why}"),
            Refusal::Connect(e) => write!(f, "cannot connect: {e}"),
            Refusal::OverCap(why) | Refusal::Placeholder(why) => f.write_str(why),
            Refusal::Unrecorded(why) => write!(
                f,
                "the connection could not be recorded in the audit log ({why}), so it was refused; free space or fix the log, then retry"
            ),
        }
    }
}

/// The outcome of [`open`]: the rule that decided (empty when it never came to a decision)
/// and the connection or why there is none.
pub(crate) struct Opening {
    pub target: Option<Target>,
    pub rule: String,
    pub result: Result<(TcpStream, SocketAddr), Refusal>,
    /// An allowed connection's decision record, perhaps not yet durable: made durable with
    /// the open record ([`crate::Tracker::opened`]) before a byte goes through.
    pub decision: Option<DecisionSync>,
}

/// [`open`] for a connection let in to be served; one beyond the cap is refused without a
/// decision. The caller keeps `admission` (its slot or refusing place) until the connection
/// is done.
pub(crate) async fn open_admitted(
    shared: &Shared,
    admission: &Admission,
    host: &str,
    port: u16,
) -> Opening {
    match admission {
        Admission::Serve(_) => open(shared, host, port).await,
        Admission::Refuse(_) => Opening {
            target: None,
            rule: String::new(),
            result: Err(Refusal::OverCap(over_cap_reason(shared))),
            decision: None,
        },
    }
}

/// Decides `host:port`, resolves it once, checks each address and connects to the first that
/// passes and answers.
pub(crate) async fn open(shared: &Shared, host: &str, port: u16) -> Opening {
    let target = match Target::new(host, port) {
        Ok(t) => t,
        Err(why) => {
            return Opening {
                target: None,
                rule: String::new(),
                result: Err(Refusal::BadTarget(why.to_string())),
                decision: None,
            }
        }
    };
    let shown = target.host.to_string();
    // An allowed connection is connected while its decision's record may still be syncing:
    // the sync is shared with the open record's (no byte goes through before both are
    // durable). A connection that fails drops the wait; its close record's sync covers it.
    let (rule, decision) = match shared.decide(&shown, port).await {
        (Verdict::Allow { rule }, decision) => (rule, decision),
        (Verdict::Deny { reason, rule }, _) => {
            return Opening {
                target: Some(target),
                rule,
                result: Err(Refusal::Policy { reason }),
                decision: None,
            }
        }
        (Verdict::Unrecorded { reason }, _) => {
            return Opening {
                target: Some(target),
                rule: String::new(),
                result: Err(Refusal::Unrecorded(crate::Error::unrecorded(reason))),
                decision: None,
            }
        }
    };
    let result = connect(shared, &target).await;
    Opening {
        target: Some(target),
        rule,
        result,
        decision,
    }
}

async fn connect(shared: &Shared, target: &Target) -> Result<(TcpStream, SocketAddr), Refusal> {
    let limits = shared.limits();
    let addrs: Vec<SocketAddr> = match &target.host {
        Host::Addr(a) => vec![SocketAddr::new(*a, target.port)],
        Host::Name(name) => match shared.config.hosts.get(name) {
            Some(a) => vec![SocketAddr::new(*a, target.port)],
            None => {
                let lookup = tokio::net::lookup_host((name.as_str(), target.port));
                match tokio::time::timeout(limits.resolve_timeout, lookup).await {
                    Ok(Ok(found)) => found.collect(),
                    Ok(Err(e)) => return Err(Refusal::Resolve(format!("{name}: {e}"))),
                    Err(_) => return Err(Refusal::Resolve(format!("{name}: timed out"))),
                }
            }
        },
    };
    // The addresses are checked here, and only a checked one is connected to: no second
    // resolution, so no DNS-rebinding window.
    let mut refused = None;
    let mut last_err = None;
    for addr in addrs {
        let addr = SocketAddr::new(addr.ip().to_canonical(), addr.port());
        if let Some(why) = refuse_addr(shared, target, addr) {
            refused.get_or_insert(Refusal::Address {
                addr: addr.ip(),
                why,
            });
            continue;
        }
        match tokio::time::timeout(limits.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok((stream, addr));
            }
            Ok(Err(e)) => last_err = Some(e),
            Err(_) => {
                last_err = Some(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connecting to {addr} timed out"),
                ))
            }
        }
    }
    match (last_err, refused) {
        (Some(e), _) => Err(Refusal::Connect(e)),
        (None, Some(r)) => Err(r),
        (None, None) => Err(Refusal::Resolve(format!("{}: no address", target.host))),
    }
}

/// Why an address in the `deny` list is refused.
const DENIED_ADDRESS: &str = "the address is in the [network] deny list";

/// Notes a refusal by the policy, the address check or the cap for the run's end
/// ([`crate::Report`]), with the `[network]` line that would allow it. `rule` is what decided
/// (empty when nothing did).
pub(crate) fn note(shared: &Shared, host: &str, port: u16, rule: &str, why: &Refusal) {
    let (addr, allow) = match why {
        // A deny entry matched: deny wins over any allow line.
        Refusal::Policy { .. } if rule.starts_with("rule ") => (None, String::new()),
        Refusal::Policy { .. } => (None, format!("[network] allow = [\"{host}:{port}\"]")),
        Refusal::Address { addr, why } if why == DENIED_ADDRESS => (Some(*addr), String::new()),
        Refusal::Address { addr, .. } => {
            let allow = match Host::parse(host) {
                Ok(Host::Name(_)) => format!("[network.hosts] \"{host}\" = \"{addr}\""),
                _ => match addr {
                    IpAddr::V6(a) => format!("[network] allow = [\"[{a}]:{port}\"]"),
                    IpAddr::V4(a) => format!("[network] allow = [\"{a}:{port}\"]"),
                },
            };
            (Some(*addr), allow)
        }
        Refusal::OverCap(_) | Refusal::Placeholder(_) | Refusal::Unrecorded(_) => {
            (None, String::new())
        }
        // Not refusals of the destination: no answer to give, or the destination's own.
        Refusal::BadTarget(_) | Refusal::Resolve(_) | Refusal::Connect(_) => return,
    };
    shared.note_refused(Refused {
        host: host.to_string(),
        port,
        addr,
        reason: why.to_string(),
        allow,
        count: 0,
    });
}

/// Why the proxy must not connect to `addr` for `target`, if it must not. An internal
/// address is reachable through an `allow` entry of that address (and port), or through the
/// `[network.hosts]` entry of the very name asked for — the port was decided for that name —
/// never through another name's entry.
fn refuse_addr(shared: &Shared, target: &Target, addr: SocketAddr) -> Option<String> {
    let c = &shared.config;
    if c.denied.iter().any(|d| d.covers(addr)) {
        return Some(DENIED_ADDRESS.into());
    }
    let mapped = match &target.host {
        Host::Name(n) => c.hosts.get(n) == Some(&addr.ip()),
        Host::Addr(_) => false,
    };
    if is_internal(addr.ip()) && !mapped && !c.listed.iter().any(|l| l.covers(addr)) {
        return Some(
            "it is an internal address (loopback, private, link-local, unique-local, shared, \
             multicast, unspecified, cloud metadata or another special-purpose range), \
             reachable only when the policy lists that exact address or maps this name to it"
                .into(),
        );
    }
    None
}
