//! `[credentials.NAME]`: secrets the sandboxed command never holds.
//!
//! ```toml
//! [credentials.github]
//! env = "GH_TOKEN"                       # the variable the command sees: a per-run placeholder
//! from = "env:GH_TOKEN"                  # where cordon reads the real value (env:, file:, command:)
//! hosts = ["api.example.org"]            # the only hosts the real value is sent to
//! header = "Authorization: Bearer {}"    # optional: added when the client sends none
//! ```
//!
//! The model: the command gets `GH_TOKEN=cordon-…`, a placeholder made fresh for each run.
//! cordon's proxy terminates TLS for the listed hosts and replaces the placeholder with the
//! real value in the request headers it sends there; a request that carries the placeholder to
//! any other host is refused. The real value is read by cordon, outside the sandbox, when the
//! run starts, and is never put in the command's environment, its files or the audit log.
//!
//! Where the value comes from (`from`):
//! - `env:VAR` — cordon's own environment (the command never inherits it: its environment is
//!   an allow-list, and `env` here is set to the placeholder whatever was inherited);
//! - `file:PATH` — a file's content, trailing newline removed (`~/` and relative paths as
//!   elsewhere in the policy), opened without following a link at any component below `/`;
//! - `command:ARGV` — the standard output of the operator's own program (words split on
//!   spaces, no shell; the program an absolute path), run by cordon before the sandbox starts,
//!   without the sandbox, with stdin closed and a time limit. It runs with the operator's
//!   rights because it is the operator's: the policy is trusted only when pinned, and the
//!   program may not lie in a writable root, where a sandboxed command could have replaced it.
//!
//! Every key is checked when the policy loads; an unknown key is refused.

use std::path::PathBuf;

use serde::Deserialize;
use serde_spanned::Spanned;

use crate::network::{self, HostPattern, HostRule, Target};
use crate::Location;

/// `[credentials.NAME]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCredential {
    pub env: Spanned<String>,
    pub from: Spanned<String>,
    pub hosts: Spanned<Vec<Spanned<String>>>,
    pub header: Option<Spanned<String>>,
}

/// One `[credentials.NAME]` table, validated.
#[derive(Debug, Clone)]
pub struct Credential {
    /// The table's name (`github` in `[credentials.github]`).
    pub name: String,
    /// The variable the command gets, holding the run's placeholder.
    pub env: String,
    /// Where cordon reads the real value.
    pub from: Source,
    /// The hosts the real value may be sent to (names or `*.` subdomains, optional port).
    pub hosts: Vec<HostRule>,
    /// A header added with the real value when the client sends none of that name.
    pub header: Option<Header>,
    pub location: Location,
}

impl Credential {
    /// Whether the real value may be sent to `target`.
    pub fn sends_to(&self, target: &Target) -> bool {
        self.hosts.iter().any(|h| h.matches(target))
    }
}

/// Where a credential's real value is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A variable of cordon's own environment.
    Env(String),
    /// A file (absolute).
    File(PathBuf),
    /// The operator's program and its arguments (the program an absolute path).
    Command(Vec<String>),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Env(v) => write!(f, "env:{v}"),
            Source::File(p) => write!(f, "file:{}", p.display()),
            Source::Command(argv) => write!(f, "command:{}", argv.join(" ")),
        }
    }
}

/// `header = "NAME: TEMPLATE"`, the template holding `{}` once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's name, lower case.
    pub name: String,
    /// Its value with `{}` where the real value goes.
    pub template: String,
}

impl Header {
    /// The header's value for `secret`.
    pub fn value(&self, secret: &str) -> String {
        self.template.replacen("{}", secret, 1)
    }
}

/// Whether `s` is a portable environment variable name.
fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An HTTP header name (RFC 9110 token).
fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

pub(crate) const FROM_HINT: &str =
    "write `env:VAR`, `file:PATH` or `command:/absolute/program ARG…`";

impl crate::Cx<'_> {
    /// Validates `[credentials.*]`, given the validated sandbox (for the proxy requirement and
    /// the writable roots a `command:` program may not lie in).
    pub(crate) fn credentials(
        &self,
        raw: &std::collections::BTreeMap<String, Spanned<RawCredential>>,
        sandbox: &crate::Sandbox,
    ) -> Result<Vec<Credential>, crate::PolicyError> {
        let mut out: Vec<Credential> = Vec::new();
        for (name, table) in raw {
            let location = self.loc(table);
            crate::check_name(name, &location, "credential")?;
            if sandbox.network != crate::Network::Proxy {
                return Err(self.err(
                    table,
                    format!("[credentials.{name}] takes effect only with `[sandbox] network = \"proxy\"`: cordon's proxy puts the real value in the requests"),
                    "set network = \"proxy\" in [sandbox], or remove the [credentials] table",
                ));
            }
            let t = table.get_ref();
            let env = t.env.get_ref();
            if !is_env_name(env) || crate::is_loader_variable(env) {
                return Err(self.err(
                    &t.env,
                    format!("invalid credentials.{name}.env `{env}`"),
                    "name a plain environment variable (letters, digits, `_`), not a loader variable",
                ));
            }
            if let Some(other) = out.iter().find(|c| &c.env == env) {
                return Err(self.err(
                    &t.env,
                    format!("credentials.{name}.env `{env}` is already the variable of [credentials.{}]", other.name),
                    "give each credential its own variable",
                ));
            }
            if sandbox.env.iter().any(|e| e == env) {
                return Err(self.err(
                    &t.env,
                    format!("`{env}` is both a credential's variable and passed by [sandbox] env"),
                    "remove it from [sandbox] env: the command gets the placeholder, never the real value",
                ));
            }
            let from = self.source(name, &t.from, sandbox)?;
            if t.hosts.get_ref().is_empty() {
                return Err(self.err(
                    &t.hosts,
                    format!("credentials.{name}.hosts is empty: the value would go nowhere"),
                    "list the hosts the real value may be sent to: hosts = [\"api.example.org\"]",
                ));
            }
            let mut hosts = Vec::new();
            for h in t.hosts.get_ref() {
                let rule = network::parse_rule(h.get_ref(), self.loc(h)).map_err(|why| {
                    self.err(
                        h,
                        format!("invalid credentials.{name}.hosts entry: {why}"),
                        "write a name, `*.example.org` (subdomains), or either with `:PORT`",
                    )
                })?;
                if let HostPattern::Addr(_) = rule.host {
                    return Err(self.err(
                        h,
                        format!("credentials.{name}.hosts entry `{}` is an address: a credential goes to a host verified by its name", h.get_ref()),
                        "write the host's name (map it in [network.hosts] if it has no DNS entry)",
                    ));
                }
                hosts.push(rule);
            }
            let header = match &t.header {
                None => None,
                Some(h) => Some(self.header(name, h)?),
            };
            out.push(Credential {
                name: name.clone(),
                env: env.clone(),
                from,
                hosts,
                header,
                location,
            });
        }
        Ok(out)
    }

    fn header(&self, name: &str, raw: &Spanned<String>) -> Result<Header, crate::PolicyError> {
        let bad = |why: &str| {
            self.err(
                raw,
                format!("invalid credentials.{name}.header: {why}"),
                "write `NAME: VALUE` with `{}` once where the value goes: \"Authorization: Bearer {}\"",
            )
        };
        let s = raw.get_ref();
        let (hname, template) = s.split_once(':').ok_or_else(|| bad("no `:`"))?;
        let template = template.trim();
        if !is_header_name(hname) {
            return Err(bad(&format!("`{hname}` is not a header name")));
        }
        if template.matches("{}").count() != 1 {
            return Err(bad("the value must hold `{}` exactly once"));
        }
        if template.bytes().any(|b| b.is_ascii_control()) {
            return Err(bad("the value holds a control character"));
        }
        Ok(Header {
            name: hname.to_ascii_lowercase(),
            template: template.to_string(),
        })
    }

    fn source(
        &self,
        name: &str,
        raw: &Spanned<String>,
        sandbox: &crate::Sandbox,
    ) -> Result<Source, crate::PolicyError> {
        let s = raw.get_ref();
        let bad = |why: String| {
            self.err(
                raw,
                format!("invalid credentials.{name}.from: {why}"),
                FROM_HINT,
            )
        };
        let writable = |p: &std::path::Path| {
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            sandbox
                .paths
                .iter()
                .filter(|r| r.mode == crate::Mode::ReadWrite)
                .find(|r| {
                    p.starts_with(&r.root) || real.starts_with(&r.root) || p.starts_with(&r.written)
                })
                .map(|r| r.name.clone())
        };
        if let Some(var) = s.strip_prefix("env:") {
            if !is_env_name(var) {
                return Err(bad(format!("`{var}` is not a variable name")));
            }
            Ok(Source::Env(var.to_string()))
        } else if let Some(path) = s.strip_prefix("file:") {
            let p = self.path(&Spanned::new(raw.span(), path.to_string()))?;
            if let Some(root) = writable(&p) {
                return Err(bad(format!(
                    "`{}` is in the writable root `{root}`: a sandboxed command could replace it",
                    p.display()
                )));
            }
            Ok(Source::File(p))
        } else if let Some(argv) = s.strip_prefix("command:") {
            let argv: Vec<String> = argv.split_whitespace().map(str::to_string).collect();
            let Some(program) = argv.first() else {
                return Err(bad("no program".into()));
            };
            let p = std::path::Path::new(program);
            if !p.is_absolute() {
                return Err(bad(format!(
                    "`{program}` is not an absolute path (a name looked up in PATH could be a program a sandboxed command left)"
                )));
            }
            if let Some(root) = writable(p) {
                return Err(bad(format!(
                    "`{program}` is in the writable root `{root}`: a sandboxed command could replace it, and cordon runs it outside the sandbox"
                )));
            }
            Ok(Source::Command(argv))
        } else {
            Err(bad(format!("`{s}` names no source")))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Policy, PolicyError, Source};

    const HEAD: &str = "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.work]\nroot = \"work\"\nmode = \"rw\"\n";

    fn parse(tail: &str) -> (tempfile::TempDir, Result<Policy, PolicyError>) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("work")).unwrap();
        let p = Policy::parse(&format!("{HEAD}{tail}"), "p.toml", d.path());
        (d, p)
    }

    fn refused(tail: &str, needle: &str) {
        let (_d, p) = parse(tail);
        let msg = p.expect_err("refused").to_string();
        assert!(msg.contains(needle), "`{needle}` not in: {msg}");
    }

    #[test]
    fn a_credential_in_full() {
        let (_d, p) = parse(
            "[credentials.github]\nenv = \"GH_TOKEN\"\nfrom = \"env:REAL_TOKEN\"\nhosts = [\"API.example.org\", \"*.example.net:443\"]\nheader = \"Authorization: Bearer {}\"\n",
        );
        let p = p.unwrap();
        let c = &p.credentials[0];
        assert_eq!((c.name.as_str(), c.env.as_str()), ("github", "GH_TOKEN"));
        assert_eq!(c.from, Source::Env("REAL_TOKEN".into()));
        let h = c.header.as_ref().unwrap();
        assert_eq!(h.name, "authorization");
        assert_eq!(h.value("s3cr3t"), "Bearer s3cr3t");
        let t = |h: &str, port| crate::network::Target::new(h, port).unwrap();
        assert!(c.sends_to(&t("api.example.org", 443)));
        assert!(c.sends_to(&t("a.example.net", 443)));
        assert!(!c.sends_to(&t("a.example.net", 8443)));
        assert!(!c.sends_to(&t("example.org", 443)));
        assert!(!c.sends_to(&t("api.example.org.evil.example", 443)));
        assert_eq!(c.location.to_string(), "p.toml:7:1");
    }

    #[test]
    fn sources() {
        let (d, p) = parse("[credentials.a]\nenv = \"A\"\nfrom = \"file:secret.txt\"\nhosts = [\"h.example\"]\n[credentials.b]\nenv = \"B\"\nfrom = \"command:/usr/bin/printf %s x\"\nhosts = [\"h.example\"]\n");
        let p = p.unwrap();
        assert_eq!(
            p.credentials[0].from,
            Source::File(d.path().join("secret.txt"))
        );
        assert_eq!(
            p.credentials[1].from,
            Source::Command(vec!["/usr/bin/printf".into(), "%s".into(), "x".into()])
        );
    }

    #[test]
    fn every_mistake_refused() {
        let c = |body: &str| format!("[credentials.x]\n{body}");
        refused(
            &c("env = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\nhost = 1\n"),
            "unknown field `host`",
        );
        refused(
            &c("env = \"A\"\nhosts = [\"h.example\"]\n"),
            "missing field `from`",
        );
        refused(
            &c("env = \"A-B\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\n"),
            "invalid credentials.x.env",
        );
        refused(
            &c("env = \"LD_PRELOAD\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\n"),
            "invalid credentials.x.env",
        );
        refused(
            &c("env = \"A\"\nfrom = \"vault:A\"\nhosts = [\"h.example\"]\n"),
            "names no source",
        );
        refused(
            &c("env = \"A\"\nfrom = \"command:pass show x\"\nhosts = [\"h.example\"]\n"),
            "not an absolute path",
        );
        refused(
            &c("env = \"A\"\nfrom = \"file:work/token\"\nhosts = [\"h.example\"]\n"),
            "writable root `work`",
        );
        refused(
            &c("env = \"A\"\nfrom = \"env:A\"\nhosts = []\n"),
            "hosts is empty",
        );
        refused(
            &c("env = \"A\"\nfrom = \"env:A\"\nhosts = [\"10.0.0.1\"]\n"),
            "is an address",
        );
        refused(&c("env = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\nheader = \"Authorization Bearer {}\"\n"), "no `:`");
        refused(&c("env = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\nheader = \"Authorization: Bearer\"\n"), "exactly once");
        refused(&c("env = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\nheader = \"Bad Name: {}\"\n"), "not a header name");
        refused(
            "[credentials.a]\nenv = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\n[credentials.b]\nenv = \"A\"\nfrom = \"env:B\"\nhosts = [\"h.example\"]\n",
            "already the variable of [credentials.a]",
        );
        let d = tempfile::tempdir().unwrap();
        let no_proxy = "version = 1\n[credentials.a]\nenv = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\n";
        let e = Policy::parse(no_proxy, "p.toml", d.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("takes effect only with `[sandbox] network = \"proxy\"`"),
            "{e}"
        );
        let passed = "version = 1\n[sandbox]\nnetwork = \"proxy\"\nenv = [\"A\"]\n[credentials.a]\nenv = \"A\"\nfrom = \"env:A\"\nhosts = [\"h.example\"]\n";
        let e = Policy::parse(passed, "p.toml", d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("passed by [sandbox] env"), "{e}");
    }

    #[test]
    fn upstream_ca_must_be_a_file() {
        refused(
            "[network]\nupstream_ca = \"nothere.pem\"\n",
            "is not a file",
        );
        let (d, _) = parse("");
        std::fs::write(d.path().join("ca.pem"), "x").unwrap();
        let p = Policy::parse(
            &format!("{HEAD}[network]\nupstream_ca = \"ca.pem\"\n"),
            "p.toml",
            d.path(),
        )
        .unwrap();
        assert_eq!(p.network.upstream_ca, Some(d.path().join("ca.pem")));
    }
}
