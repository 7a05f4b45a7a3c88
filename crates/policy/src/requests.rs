//! `[[network.requests]]`: rules for single HTTP requests on the hosts whose TLS cordon's
//! proxy terminates.
//!
//! ```toml
//! [[network.requests]]
//! method = "GET"                       # or "*"
//! url = "api.example.org/repos/**"     # HOST[:PORT]/PATH-GLOB (no scheme, no query)
//! action = "allow"                     # allow | ask | deny
//! reason = "reading repositories"      # optional
//! ```
//!
//! A request is a call of tool `http` with the key `["http", METHOD, "HOST:PORT/PATH"]` (the
//! path without its query), decided by the same engine as every call: deny wins, else the
//! last matching rule, else allowed (the connection to the host was decided already); session
//! grants, modes and the audit log as for any call. In the path glob, `*` stays within one
//! `/`-separated segment and `**` crosses them. The hosts these rules name are terminated by
//! the proxy (a run's CA, as for credentials); every other host stays end to end.

use serde::Deserialize;
use serde_spanned::Spanned;

use crate::network::{self, HostPattern, HostRule};
use crate::{Action, Pattern, ShellRule};

/// The approval engine's name for a request inside a terminated tunnel.
pub const HTTP_TOOL: &str = "http";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRequestRule {
    pub method: Spanned<String>,
    pub url: Spanned<String>,
    pub action: Spanned<String>,
    pub reason: Option<String>,
}

/// One `[[network.requests]]` table.
#[derive(Debug, Clone)]
pub struct RequestRule {
    /// Upper case, or `*`.
    pub method: String,
    /// The host part of `url` (a name or `*.` subdomains, optional port).
    pub host: HostRule,
    /// The path glob, starting with `/`.
    pub path: String,
    /// The rule over the `http` tool's key.
    pub rule: ShellRule,
}

/// The paths a server may read a request's `path` (its query left off) as, for the request
/// rules to decide each: the rules must match what the server routes, not the spelling.
///
/// Percent-encoded unreserved characters are decoded (RFC 3986 §6.2.2.2: the same path) and
/// other escapes upper-cased. Servers differ beyond that, so a path that reads as another
/// one under some server is given as each of its readings: `%2F` kept and decoded (GitLab
/// reads `projects/a%2Fb` as one segment, a front end that decodes it as two), and path
/// parameters (`/admin;x/y`, which Tomcat and Spring route as `/admin/y`) kept and dropped.
/// What servers resolve in ways that cannot be listed — a `.` or `..` segment (after
/// decoding), an empty segment (`//`, which some merge), a `\` or `%5C` (a `/` to some), a `%`
/// not followed by two hex digits — is an error that names it: such a request is refused
/// rather than decided on a spelling the server will not read.
pub fn request_paths(path: &str) -> Result<Vec<String>, String> {
    let path = path.split(['?', '#']).next().unwrap_or("/");
    if path.contains('\\') {
        return Err("the path holds a `\\`, which some servers read as `/`".into());
    }
    let bytes = path.as_bytes();
    let mut kept = String::with_capacity(path.len() + 1);
    if !path.starts_with('/') {
        kept.push('/');
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'%' {
            kept.push(char::from(b));
            i += 1;
            continue;
        }
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .ok_or("the path holds a `%` not followed by two hex digits")?;
        if hex.is_ascii_alphanumeric() || b"-._~".contains(&hex) {
            kept.push(char::from(hex));
        } else if hex == b'\\' {
            return Err("the path holds `%5C`, which some servers read as `/`".into());
        } else {
            kept.push_str(&format!("%{hex:02X}"));
        }
        i += 3;
    }
    let mut readings = vec![kept.clone()];
    if kept.contains("%2F") {
        readings.push(kept.replace("%2F", "/"));
    }
    for r in readings.clone() {
        if r.contains(';') {
            let dropped: Vec<&str> = r
                .split('/')
                .map(|seg| seg.split(';').next().unwrap_or(""))
                .collect();
            readings.push(dropped.join("/"));
        }
    }
    readings.dedup();
    for r in &readings {
        let segments: Vec<&str> = r.split('/').skip(1).collect();
        for (n, seg) in segments.iter().enumerate() {
            if *seg == "." || *seg == ".." {
                return Err(format!(
                    "the path reads as `{r}`, whose `{seg}` segment servers resolve; send the path the server is to read"
                ));
            }
            if seg.is_empty() && n + 1 != segments.len() {
                return Err(format!(
                    "the path reads as `{r}`, whose empty segment (`//`) some servers merge; send the path without it"
                ));
            }
        }
    }
    Ok(readings)
}

/// The key of a request: `["http", METHOD, "HOST:PORT/PATH"]`, the query left out.
pub fn request_key(method: &str, target: &network::Target, path: &str) -> Vec<String> {
    let path = path.split('?').next().unwrap_or("/");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    vec![
        HTTP_TOOL.to_string(),
        method.to_ascii_uppercase(),
        format!("{}:{}{path}", target.host, target.port),
    ]
}

impl crate::Cx<'_> {
    pub(crate) fn request_rules(
        &self,
        raw: &[Spanned<RawRequestRule>],
    ) -> Result<Vec<RequestRule>, crate::PolicyError> {
        let mut out = Vec::new();
        for r in raw {
            let location = self.loc(r);
            let t = r.get_ref();
            let method = t.method.get_ref().trim().to_ascii_uppercase();
            if method != "*"
                && (method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()))
            {
                return Err(self.err(
                    &t.method,
                    format!("invalid network.requests method `{}`", t.method.get_ref()),
                    "write one method (GET, POST, DELETE, …) or `*` for every method",
                ));
            }
            let url = t.url.get_ref();
            let bad = |why: String| {
                self.err(
                    &t.url,
                    format!("invalid network.requests url `{url}`: {why}"),
                    "write HOST[:PORT]/PATH, e.g. `api.example.org/repos/**` (no scheme, no query)",
                )
            };
            if url.contains("://") {
                return Err(bad(
                    "no scheme: the rule is for HTTPS requests the proxy terminates".into(),
                ));
            }
            if url.contains(char::is_whitespace) || url.contains('?') {
                return Err(bad("no spaces and no query".into()));
            }
            let (host, path) = match url.find('/') {
                Some(i) => (&url[..i], &url[i..]),
                None => (url.as_str(), "/**"),
            };
            let host =
                network::parse_rule(host, location.clone()).map_err(|e| bad(e.to_string()))?;
            let host_token = match &host.host {
                HostPattern::Name(n) => n.clone(),
                HostPattern::Subdomains(s) => format!("*.{s}"),
                HostPattern::Addr(_) => {
                    return Err(bad(
                        "a name, not an address: TLS is terminated for names".into()
                    ))
                }
            };
            let port = host.port.map_or("*".to_string(), |p| p.to_string());
            let action = Action::parse(t.action.get_ref()).ok_or_else(|| {
                self.err(
                    &t.action,
                    format!("invalid network.requests action `{}`", t.action.get_ref()),
                    "use one of: allow, ask, deny",
                )
            })?;
            let source = format!("{HTTP_TOOL} {method} {host_token}:{port}{path}");
            let pattern = Pattern::exact(&source).map_err(|e| bad(e.to_string()))?;
            let reason = t.reason.clone().unwrap_or_else(|| {
                format!(
                    "`{} {url}` is a [[network.requests]] {} rule ({location})",
                    method,
                    action.as_str()
                )
            });
            out.push(RequestRule {
                method,
                host,
                path: path.to_string(),
                rule: ShellRule {
                    pattern,
                    action,
                    reason: Some(reason),
                    matches: Vec::new(),
                    not_match: Vec::new(),
                    location,
                },
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::network::Target;
    use crate::Policy;

    fn parse(tail: &str) -> Result<Policy, crate::PolicyError> {
        let text = format!("version = 1\n[sandbox]\nnetwork = \"proxy\"\n[network]\n{tail}");
        Policy::parse(&text, "p.toml", std::path::Path::new("/"))
    }

    #[test]
    fn rules_become_patterns_over_the_request_key() {
        let p = parse(
            "[[network.requests]]\nmethod = \"get\"\nurl = \"api.example.org/repos/**\"\naction = \"allow\"\n\
             [[network.requests]]\nmethod = \"*\"\nurl = \"*.example.net:8443\"\naction = \"deny\"\n",
        )
        .unwrap();
        let r = &p.network.requests;
        assert_eq!(
            r[0].rule.pattern.as_str(),
            "http GET api.example.org:*/repos/**"
        );
        assert_eq!(r[1].rule.pattern.as_str(), "http * *.example.net:8443/**");
        let key = super::request_key(
            "get",
            &Target::new("API.example.org", 443).unwrap(),
            "/repos/a/b?page=2",
        );
        assert_eq!(key, ["http", "GET", "api.example.org:443/repos/a/b"]);
        let words: Vec<&str> = key.iter().map(String::as_str).collect();
        assert!(r[0].rule.pattern.matches(&words));
        let other = super::request_key(
            "GET",
            &Target::new("api.example.org", 443).unwrap(),
            "/users/x",
        );
        let words: Vec<&str> = other.iter().map(String::as_str).collect();
        assert!(!r[0].rule.pattern.matches(&words));
    }

    /// Round 8 (issue 21): the readings a server may route a path as.
    #[test]
    fn a_paths_readings_are_what_servers_route() {
        let r = |p: &str| super::request_paths(p);
        assert_eq!(r("/repos/a/b?x=1").unwrap(), ["/repos/a/b"]);
        assert_eq!(r("/").unwrap(), ["/"]);
        assert_eq!(r("/repos/").unwrap(), ["/repos/"]);
        assert_eq!(r("/%61dmin/%7e%2d").unwrap(), ["/admin/~-"]);
        assert_eq!(r("/a%c3%a9").unwrap(), ["/a%C3%A9"]);
        assert_eq!(
            r("/projects/a%2fb").unwrap(),
            ["/projects/a%2Fb", "/projects/a/b"]
        );
        assert_eq!(r("/admin;x/y").unwrap(), ["/admin;x/y", "/admin/y"]);
        for bad in [
            "/a/../admin",
            "/./admin",
            "/a/%2e%2E/admin",
            "/a/..%2fadmin",
            "/public/..;/admin",
            "//admin",
            "/admin//x",
            "/admin\\x",
            "/admin%5cx",
            "/admin%zz",
            "/admin%2",
        ] {
            assert!(r(bad).is_err(), "{bad}: {:?}", r(bad));
        }
    }

    #[test]
    fn mistakes_refused() {
        for (tail, needle) in [
            (
                "method = \"G T\"\nurl = \"a.example/x\"\naction = \"allow\"\n",
                "invalid network.requests method",
            ),
            (
                "method = \"GET\"\nurl = \"https://a.example/x\"\naction = \"allow\"\n",
                "no scheme",
            ),
            (
                "method = \"GET\"\nurl = \"a.example/x?y=1\"\naction = \"allow\"\n",
                "no query",
            ),
            (
                "method = \"GET\"\nurl = \"10.0.0.1/x\"\naction = \"allow\"\n",
                "not an address",
            ),
            (
                "method = \"GET\"\nurl = \"a.example/x\"\naction = \"maybe\"\n",
                "invalid network.requests action",
            ),
            (
                "method = \"GET\"\nurl = \"a.example/x\"\naction = \"allow\"\nhost = 1\n",
                "unknown field",
            ),
        ] {
            let e = parse(&format!("[[network.requests]]\n{tail}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "`{needle}` not in {e}");
        }
    }
}

#[cfg(test)]
mod forward_tests {
    use crate::Policy;

    fn parse(tail: &str) -> Result<Policy, crate::PolicyError> {
        let text =
            format!("version = 1\n[sandbox]\nnetwork = \"proxy\"\n[network.forward]\n{tail}");
        Policy::parse(&text, "p.toml", std::path::Path::new("/"))
    }

    #[test]
    fn forwards_map_a_loopback_port_to_one_destination() {
        let p = parse(
            "\"127.0.0.1:6379\" = \"cache.internal:6379\"\n\"[::1]:5432\" = \"DB.internal:5432\"\n",
        )
        .unwrap();
        let f = &p.network.forwards;
        assert_eq!(
            (f[0].port, f[0].to.to_string()),
            (5432, "db.internal:5432".to_string())
        );
        assert_eq!(
            (f[1].port, f[1].to.to_string()),
            (6379, "cache.internal:6379".to_string())
        );
        for (tail, needle) in [
            (
                "\"10.0.0.1:5432\" = \"db.internal:5432\"\n",
                "the sandbox's own loopback",
            ),
            ("\"127.0.0.1\" = \"db.internal:5432\"\n", "has no port"),
            // Round 8 (issue 21): the forward's raw bytes would carry requests no rule decides.
            (
                "\"127.0.0.1:8443\" = \"api.example.org:443\"\n\
                 [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.example.org/**\"\naction = \"deny\"\n",
                "named by the request rule `api.example.org`",
            ),
            ("\"127.0.0.1:5432\" = \"db.internal\"\n", "has no port"),
            (
                "\"127.0.0.1:5432\" = \"a:1\"\n\"[::1]:5432\" = \"b:2\"\n",
                "already forwarded",
            ),
        ] {
            let e = parse(tail).unwrap_err().to_string();
            assert!(e.contains(needle), "`{needle}` not in {e}");
        }
    }
}
