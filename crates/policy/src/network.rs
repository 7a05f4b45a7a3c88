//! The `[network]` section: which hosts and ports a run may reach through cordon's proxy.
//!
//! ```toml
//! [network]
//! default = "deny"                 # or "ask": what a host no entry names gets
//! allow = ["index.example.net:443", "files.example.net:443", "*.example.org", "10.0.0.5:5432"]
//! deny = ["evil.example.org"]      # deny wins over allow, whatever the order
//! [network.hosts]
//! "build.internal" = "10.0.0.7"    # a static name → address entry, like curl's --resolve
//! ```
//!
//! An entry is a host pattern with an optional port (`:443`; none means every port):
//! - a name, `github.com`: that name only (not its subdomains);
//! - `*.example.org`: every subdomain of `example.org`, at any depth, but not `example.org`
//!   itself (list both to mean both);
//! - an address, `10.0.0.5` or `[::1]` (IPv6 in brackets): a connection to that address.
//!
//! Names are compared after IDNA (UTS 46) normalisation to their ASCII form, so case and
//! Unicode spellings (`BÜCHER.example`, `bücher.example`, `xn--bcher-kva.example`) are the same
//! name. The same normalisation turns a connection's `HOST:PORT` into the [`Target`] the
//! approval engine decides (the `network` tool's key), so a policy entry and a request can
//! never disagree on spelling. What cannot be a host — an empty label, a glob anywhere but a
//! leading `*.`, a number that is not a dotted-quad IPv4 address (`0x7f.1`, `2130706433`,
//! which some resolvers read as 127.0.0.1), an IPv6 zone — is refused, at load for policy
//! entries and at the proxy for requests.
//!
//! The section decides by name and port. What an allowed name resolves to is checked by the
//! proxy: an internal address ([`is_internal`]: loopback, private, link-local, unique-local,
//! shared (CGNAT), unspecified, multicast, a cloud metadata endpoint or another special-purpose
//! range) is refused unless the policy names it for this connection — an `allow` entry of that
//! address (and port), or the `[network.hosts]` entry of the very name asked for. A hosts entry
//! speaks for its own name only: another name resolving to the same address, or the address
//! written as such, does not get through by it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::{Action, Location, Pattern, PolicyError};

/// The `[network]` section, validated. Without one: no entries, default `deny`.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    /// Where the `[network]` table is, when the policy has one.
    pub location: Option<Location>,
    /// What a host and port that no entry names gets: `deny` (the default) or `ask`.
    pub default: NetworkDefault,
    pub allow: Vec<HostRule>,
    pub deny: Vec<HostRule>,
    /// `[network.hosts]`: normalised name → address, in name order.
    pub hosts: Vec<HostEntry>,
    /// `upstream_ca`: a PEM file of CA certificates the proxy trusts, besides the system's,
    /// for the hosts whose TLS it terminates (credentials).
    pub upstream_ca: Option<std::path::PathBuf>,
    /// `[[network.requests]]`: rules for single requests on terminated hosts.
    pub requests: Vec<crate::requests::RequestRule>,
    /// `[network.forward]`: loopback ports inside the sandbox that cordon connects to one
    /// destination each (after the same decision as any connection), in port order.
    pub forwards: Vec<Forward>,
}

/// One `[network.forward]` entry: `"127.0.0.1:5432" = "db.internal:5432"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    /// The port the command connects to on its loopback (127.0.0.1 and [::1] alike).
    pub port: u16,
    /// Where cordon connects it.
    pub to: Target,
    pub location: Location,
}

/// `[network] default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkDefault {
    #[default]
    Deny,
    Ask,
}

impl NetworkDefault {
    pub fn action(self) -> Action {
        match self {
            NetworkDefault::Deny => Action::Deny,
            NetworkDefault::Ask => Action::Ask,
        }
    }
}

/// One `[network.hosts]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEntry {
    /// The name, normalised.
    pub name: String,
    pub addr: IpAddr,
    pub location: Location,
}

/// One `allow` or `deny` entry.
#[derive(Debug, Clone)]
pub struct HostRule {
    pub host: HostPattern,
    /// `None`: every port.
    pub port: Option<u16>,
    /// The entry as written.
    pub written: String,
    pub location: Location,
    /// [`HostRule::key_pattern`], compiled when the policy loaded.
    pub pattern: Pattern,
}

/// The host part of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// Exactly this (normalised) name.
    Name(String),
    /// Every subdomain of this (normalised) name, not the name itself (`*.example.org`).
    Subdomains(String),
    /// This address.
    Addr(IpAddr),
}

impl HostRule {
    /// Does this entry name `target`?
    pub fn matches(&self, target: &Target) -> bool {
        if self.port.is_some_and(|p| p != target.port) {
            return false;
        }
        match (&self.host, &target.host) {
            (HostPattern::Name(n), Host::Name(h)) => n == h,
            (HostPattern::Subdomains(s), Host::Name(h)) => h
                .strip_suffix(s.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            (HostPattern::Addr(a), Host::Addr(b)) => a == b,
            _ => false,
        }
    }

    /// The entry as an approval-engine pattern over the `network` tool's key
    /// (`network HOST:PORT`, see [`Target`]): `network github.com:*`,
    /// `network *.example.org:443`, `network \[::1\]:443`. A pattern token's `*` never crosses
    /// `/` and a normalised host has no `/`, `:` or glob character, so the pattern matches
    /// exactly the targets [`HostRule::matches`] does.
    pub fn key_pattern(&self) -> String {
        let port = match self.port {
            Some(p) => p.to_string(),
            None => "*".into(),
        };
        let host = match &self.host {
            HostPattern::Name(n) => n.clone(),
            HostPattern::Subdomains(s) => format!("*.{s}"),
            HostPattern::Addr(IpAddr::V4(a)) => a.to_string(),
            // `[` opens a class in a glob: escaped, it is the bracket itself.
            HostPattern::Addr(IpAddr::V6(a)) => format!("\\[{a}\\]"),
        };
        format!("{NETWORK_TOOL} {host}:{port}")
    }
}

/// The approval engine's name for connections: a call of tool `network` with one key,
/// `["network", "HOST:PORT"]`.
pub const NETWORK_TOOL: &str = "network";

/// A connection's host: a normalised name or an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    /// Lower-case ASCII (IDNA), no trailing dot.
    Name(String),
    /// IPv4-mapped IPv6 addresses are kept as their IPv4 address.
    Addr(IpAddr),
}

impl Host {
    /// Normalises a host as written in a request or an entry (IPv6 in brackets or bare).
    pub fn parse(s: &str) -> Result<Host, PolicyError> {
        if s.is_empty() {
            return Err(host_err("the host is empty"));
        }
        if let Some(inner) = s.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(|| {
                host_err(format!("`{s}`: an IPv6 address in brackets lacks its `]`"))
            })?;
            return parse_v6(inner).map(Host::Addr);
        }
        if s.contains(':') {
            return parse_v6(s).map(Host::Addr);
        }
        if let Ok(a) = s.parse::<Ipv4Addr>() {
            return Ok(Host::Addr(IpAddr::V4(a)));
        }
        normalize_name(s).map(Host::Name)
    }

    /// The address, for an address host.
    pub fn addr(&self) -> Option<IpAddr> {
        match self {
            Host::Addr(a) => Some(*a),
            Host::Name(_) => None,
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Addr(IpAddr::V4(a)) => write!(f, "{a}"),
            Host::Addr(IpAddr::V6(a)) => write!(f, "[{a}]"),
        }
    }
}

fn parse_v6(s: &str) -> Result<IpAddr, PolicyError> {
    if s.contains('%') {
        return Err(host_err(format!(
            "`{s}`: IPv6 zone indices are not accepted; write the address alone"
        )));
    }
    let a: Ipv6Addr = s
        .parse()
        .map_err(|_| host_err(format!("`{s}` is not an IPv6 address")))?;
    // One spelling per address: an IPv4-mapped address is its IPv4 address, so an entry or
    // a check on `10.0.0.5` also covers `[::ffff:10.0.0.5]`.
    Ok(a.to_canonical())
}

/// The ASCII form of a domain name (IDNA UTS 46), lower case, without a trailing dot; labels of
/// letters, digits, `-` and `_`, 1 to 63 bytes, 253 in all. A name whose last label is numeric
/// is refused: URL parsers and resolvers read such names (`0x7f.1`, `127.1`, `2130706433`) as
/// IPv4 addresses, so they are written as dotted quads or not at all.
pub fn normalize_name(s: &str) -> Result<String, PolicyError> {
    let bare = s.strip_suffix('.').unwrap_or(s);
    let ascii = idna::domain_to_ascii_cow(bare.as_bytes(), idna::AsciiDenyList::URL)
        .map_err(|_| host_err(format!("`{s}` is not a valid host name (IDNA)")))?;
    let ascii = ascii.into_owned();
    if ascii.is_empty() || ascii.len() > 253 {
        return Err(host_err(format!("`{s}` is not a valid host name (length)")));
    }
    for label in ascii.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(host_err(format!(
                "`{s}` is not a valid host name (a label is empty or longer than 63)"
            )));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(host_err(format!(
                "`{s}` is not a valid host name (letters, digits, `-`, `_` and `.` only)"
            )));
        }
    }
    let last = ascii.rsplit('.').next().unwrap_or_default();
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || (last.len() > 2
            && last[..2].eq_ignore_ascii_case("0x")
            && last[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return Err(host_err(format!(
            "`{s}` reads as a number; an IPv4 address is written as four decimal numbers, e.g. 10.0.0.5"
        )));
    }
    Ok(ascii)
}

fn host_err(why: impl Into<String>) -> PolicyError {
    PolicyError::value("host", why)
}

fn dest_err(why: impl Into<String>) -> PolicyError {
    PolicyError::value("destination", why)
}

fn rule_err(why: impl Into<String>) -> PolicyError {
    PolicyError::value("network rule", why)
}

/// A connection's destination: the `network` tool's key, `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

impl Target {
    /// Parses and normalises `HOST:PORT` (`github.com:443`, `10.0.0.5:5432`, `[::1]:8080`).
    pub fn parse(s: &str) -> Result<Target, PolicyError> {
        let (host, port) = split_port(s)?;
        let port = port.ok_or_else(|| dest_err(format!("`{s}` has no port; write HOST:PORT")))?;
        Target::new(host, port)
    }

    /// Normalises `host` (IPv6 bracketed or bare) with `port`.
    pub fn new(host: &str, port: u16) -> Result<Target, PolicyError> {
        if port == 0 {
            return Err(dest_err("port 0 is not a destination"));
        }
        Ok(Target {
            host: Host::parse(host)?,
            port,
        })
    }

    /// The approval engine's key: `["network", "HOST:PORT"]`.
    pub fn key(&self) -> Vec<String> {
        vec![NETWORK_TOOL.to_string(), self.to_string()]
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Splits `HOST[:PORT]`; IPv6 addresses are in brackets when a port follows.
fn split_port(s: &str) -> Result<(&str, Option<u16>), PolicyError> {
    let (host, port) = if s.starts_with('[') {
        match s.find(']') {
            Some(end) => match &s[end + 1..] {
                "" => (s, None),
                rest => match rest.strip_prefix(':') {
                    Some(p) => (&s[..=end], Some(p)),
                    None => return Err(dest_err(format!("`{s}`: expected `:PORT` after `]`"))),
                },
            },
            None => {
                return Err(dest_err(format!(
                    "`{s}`: an IPv6 address in brackets lacks its `]`"
                )))
            }
        }
    } else {
        match s.matches(':').count() {
            0 => (s, None),
            1 => {
                let (h, p) = s.split_once(':').unwrap_or((s, ""));
                (h, Some(p))
            }
            _ => {
                return Err(dest_err(format!(
                    "`{s}`: write an IPv6 address in brackets, e.g. [::1]:443"
                )))
            }
        }
    };
    let port = match port {
        None => None,
        Some(p) => Some(parse_port(p).ok_or_else(|| {
            dest_err(format!(
                "`{s}`: the port must be a number from 1 to 65535, got `{p}`"
            ))
        })?),
    };
    Ok((host, port))
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse::<u16>().ok().filter(|&n| n > 0)
}

/// Parses one `allow`/`deny` entry; the error says what is wrong with it.
pub fn parse_rule(s: &str, location: Location) -> Result<HostRule, PolicyError> {
    let (host, port) = split_port(s)?;
    let host = if let Some(suffix) = host.strip_prefix("*.") {
        if suffix.contains('*') {
            return Err(rule_err(format!("`{s}`: only one leading `*.` is allowed")));
        }
        match Host::parse(suffix)? {
            Host::Name(n) => HostPattern::Subdomains(n),
            Host::Addr(_) => {
                return Err(rule_err(format!(
                    "`{s}`: `*.` goes before a name, not an address"
                )))
            }
        }
    } else if host.contains('*') {
        return Err(rule_err(format!(
            "`{s}`: a `*` is only allowed as a leading `*.` (subdomains), e.g. `*.example.org`"
        )));
    } else {
        match Host::parse(host)? {
            Host::Name(n) => HostPattern::Name(n),
            Host::Addr(a) => HostPattern::Addr(a),
        }
    };
    let mut rule = HostRule {
        host,
        port,
        written: s.to_string(),
        location,
        pattern: Pattern::exact(NETWORK_TOOL)?,
    };
    // Exact: `network github.com:*` is the whole key, never a prefix of a longer one.
    rule.pattern = Pattern::exact(&rule.key_pattern())
        .map_err(|e| rule_err(format!("`{s}` makes no valid rule: {e}")))?;
    Ok(rule)
}

/// Is `addr` one a proxy must not connect to unless the policy lists it? Written as what is
/// reachable, not as a list of what is dangerous: an address is external only when it is
/// global unicast and in no block of the IANA special-purpose registries (IPv4: RFC 6890 and
/// its updates; IPv6: the same) that is not globally reachable. Everything else is internal:
/// loopback, private (RFC 1918), link-local (which holds the cloud metadata endpoint
/// 169.254.169.254), unique-local (fc00::/7, which holds AWS's fd00:ec2::254), shared
/// (CGNAT), unspecified, broadcast, multicast, documentation, benchmarking, reserved and
/// every unassigned IPv6 range outside 2000::/3.
///
/// IPv6 forms that carry an IPv4 address a translator or relay would connect to are judged by
/// that address: IPv4-mapped (`::ffff:a.b.c.d`), the NAT64 well-known prefix
/// (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`). The other translation forms are
/// internal whatever they carry: IPv4-translated (`::ffff:0:a.b.c.d`, SIIT),
/// IPv4-compatible (`::a.b.c.d`), the local-use NAT64 prefix `64:ff9b:1::/48` (where the
/// IPv4 address sits depends on a prefix length only the local network knows) and Teredo
/// (`2001::/32`, inside the IETF protocol block `2001::/23`).
pub fn is_internal(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => is_internal_v4(a),
        IpAddr::V6(a) => is_internal_v6(a),
    }
}

/// The IPv4 address in the last 32 bits of `s`.
fn v4_in(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

fn is_internal_v6(a: Ipv6Addr) -> bool {
    let s = a.segments();
    // IPv4-mapped ::ffff:0:0/96: the IPv4 address itself.
    if let Some(v4) = a.to_ipv4_mapped() {
        return is_internal_v4(v4);
    }
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): a translator connects to the IPv4
    // address in the last 32 bits.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_internal_v4(v4_in(s[6], s[7]));
    }
    // Only global unicast 2000::/3 can be external; this also makes internal ::/128, ::1,
    // IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, 64:ff9b:1::/48, discard-only
    // 100::/64, 5f00::/16 (SRv6 SIDs), fc00::/7, fe80::/10, fec0::/10 and ff00::/8.
    if s[0] & 0xe000 != 0x2000 {
        return true;
    }
    // 6to4 2002::/16 (RFC 3056): a relay connects to the IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return is_internal_v4(v4_in(s[1], s[2]));
    }
    // Not globally reachable blocks inside 2000::/3.
    match s[0] {
        // IETF protocol assignments 2001::/23 (Teredo, ORCHID, benchmarking, …) and
        // documentation 2001:db8::/32
        0x2001 => s[1] < 0x0200 || s[1] == 0x0db8,
        // documentation 3fff::/20
        0x3fff => s[1] < 0x1000,
        _ => false,
    }
}

fn is_internal_v4(a: Ipv4Addr) -> bool {
    let o = a.octets();
    a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_unspecified()
        || a.is_broadcast()
        || a.is_multicast()
        || a.is_documentation()
        || o[0] == 0 // "this network" 0.0.0.0/8
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared address space 100.64.0.0/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments 192.0.0.0/24
        || (o[0] == 192 && o[1] == 88 && o[2] == 99) // 6to4 relay anycast 192.88.99.0/24 (deprecated)
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || o[0] >= 240 // reserved 240.0.0.0/4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location {
            file: "p.toml".into(),
            line: 1,
            col: 1,
        }
    }

    #[test]
    fn targets_normalise() {
        let t = |s: &str| Target::parse(s).map(|t| t.to_string());
        assert_eq!(t("GitHub.COM:443").unwrap(), "github.com:443");
        assert_eq!(t("github.com.:443").unwrap(), "github.com:443");
        assert_eq!(t("Bücher.example:80").unwrap(), "xn--bcher-kva.example:80");
        assert_eq!(t("BÜCHER.example:80").unwrap(), "xn--bcher-kva.example:80");
        assert_eq!(t("10.0.0.5:5432").unwrap(), "10.0.0.5:5432");
        assert_eq!(t("[::1]:443").unwrap(), "[::1]:443");
        assert_eq!(t("[0:0::1]:443").unwrap(), "[::1]:443");
        assert_eq!(t("[::ffff:10.0.0.5]:80").unwrap(), "10.0.0.5:80");
        assert_eq!(t("my_db:5432").unwrap(), "my_db:5432");
        for bad in [
            "github.com",
            "github.com:",
            "github.com:0",
            "github.com:65536",
            "github.com:+443",
            "github.com:44 3",
            ":443",
            "::1:443",
            "[::1:443",
            "[::1]443",
            "[fe80::1%eth0]:80",
            "[example.com]:80",
            "0x7f.1:80",
            "127.1:80",
            "2130706433:80",
            "a..b:80",
            "a b:80",
            "a/b:80",
            "a@b:80",
            "*.x.org:80",
            "ex*ample.org:80",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad} accepted");
        }
        let long = format!("{}.com:80", "a".repeat(64));
        assert!(Target::parse(&long).is_err());
    }

    #[test]
    fn rules_match_names_subdomains_and_addresses() {
        let r = |s: &str| parse_rule(s, loc()).unwrap();
        let t = |s: &str| Target::parse(s).unwrap();
        assert!(r("github.com").matches(&t("GITHUB.com:443")));
        assert!(r("github.com").matches(&t("github.com:22")));
        assert!(!r("github.com").matches(&t("api.github.com:443")));
        assert!(r("github.com:443").matches(&t("github.com:443")));
        assert!(!r("github.com:443").matches(&t("github.com:80")));
        let sub = r("*.example.org");
        assert!(sub.matches(&t("a.example.org:1")));
        assert!(sub.matches(&t("a.b.example.org:1")));
        assert!(!sub.matches(&t("example.org:1")));
        assert!(!sub.matches(&t("badexample.org:1")));
        assert!(r("[::1]:443").matches(&t("[::1]:443")));
        assert!(r("10.0.0.5").matches(&t("[::ffff:10.0.0.5]:80")));
        assert!(r("bücher.example").matches(&t("xn--bcher-kva.example:80")));
        for bad in [
            "*",
            "*:443",
            "*.",
            "a.*.org",
            "*.*.org",
            "*.10.0.0.5",
            "x:0",
            "",
        ] {
            assert!(parse_rule(bad, loc()).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn key_patterns() {
        let r = |s: &str| parse_rule(s, loc()).unwrap().key_pattern();
        assert_eq!(r("GitHub.com"), "network github.com:*");
        assert_eq!(r("*.Example.org:443"), "network *.example.org:443");
        assert_eq!(r("[::1]:443"), "network \\[::1\\]:443");
        assert_eq!(r("10.0.0.5:5432"), "network 10.0.0.5:5432");
    }

    #[test]
    fn internal_addresses() {
        for a in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::a00:1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            // IPv4-translated (SIIT), whatever it carries
            "::ffff:0:7f00:1",
            "::ffff:0:808:808",
            // local-use NAT64, whatever it carries
            "64:ff9b:1::7f00:1",
            "64:ff9b:1:ffff::808:808",
            // Teredo and the rest of 2001::/23
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "2001:10::1",
            "2001:1ff::1",
            "2001:db8::1",
            "3fff::1",
            "3fff:fff::1",
            "100::1",
            "5f00::1",
            "fec0::1",
            "4000::1",
            "1::1",
            "192.0.0.9",
            "192.88.99.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "240.0.0.1",
        ] {
            assert!(is_internal(a.parse().unwrap()), "{a} not internal");
        }
        for a in [
            "1.1.1.1",
            "140.82.121.4",
            "100.128.0.1",
            "172.32.0.1",
            "192.0.1.1",
            "192.88.98.1",
            "2606:4700::1111",
            "2001:200::1",
            "2001:4860:4860::8888",
            "3fff:1000::1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_internal(a.parse().unwrap()), "{a} internal");
        }
    }
}
