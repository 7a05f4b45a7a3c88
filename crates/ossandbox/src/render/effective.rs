//! The profile as an auditor reads it first: for each path the access a command really gets
//! once every rule and mount is applied, then the network, then the refused system calls, each
//! line with the policy key behind it.
//!
//! The backends' own artifacts are in enforcement order, which a top-down reader can misread:
//! the bwrap script binds a writable root (`--bind …`) before the `--ro-bind` of a protected
//! path inside it, and the later mount wins. Here the winner is computed: a protected path,
//! and everything below it, is read-only (or hidden) whatever root it lies in; elsewhere the
//! deepest listed path decides, and what no path lists is out of reach.

use std::fmt::Write;

use cordon_policy::Network;

use crate::profile::{Access, Profile};

/// The text `cordon profile` prints without `--format`.
pub(crate) fn render(profile: &Profile) -> String {
    let mut out = String::new();
    out.push_str(
        "# cordon: what a sandboxed command may do, after every rule and mount is applied\n",
    );
    out.push_str("# (the backends' own artifacts: cordon profile --format bwrap|landlock|seccomp|seatbelt)\n");
    out.push_str("paths (everything not listed: no access):\n");
    // One line per listed path, with the deepest rule (or the protection) that governs it.
    let mut lines: Vec<(String, &'static str, String)> = Vec::new();
    for r in &profile.rules {
        let covering = profile
            .protected
            .iter()
            .filter(|p| r.path.starts_with(&p.path))
            .max_by_key(|p| p.path.as_os_str().len());
        let (access, why) = match covering {
            Some(p) if p.hidden() => (
                "hidden",
                format!("{} (within {})", p.origin, p.path.display()),
            ),
            Some(p) if r.access.write => (
                read_only(r.access),
                format!(
                    "{}, made read-only by {} ({})",
                    r.origin,
                    p.origin,
                    p.path.display()
                ),
            ),
            _ => (r.access.tag(), r.origin.clone()),
        };
        lines.push((r.path.display().to_string(), access, why));
    }
    for p in &profile.protected {
        // The enclosing rule's access, without write: a protected path is never writable.
        let enclosing = profile
            .rules
            .iter()
            .filter(|r| p.path.starts_with(&r.path))
            .max_by_key(|r| r.path.as_os_str().len());
        let access = match enclosing {
            _ if p.hidden() => "hidden",
            Some(r) => read_only(r.access),
            None => "none",
        };
        let why = match enclosing {
            Some(r) => format!("{} (inside {}: {})", p.origin, r.path.display(), r.origin),
            None => p.origin.clone(),
        };
        lines.push((p.path.display().to_string(), access, why));
    }
    lines.sort();
    lines.dedup();
    let width = lines.iter().map(|l| l.0.len()).max().unwrap_or(0).min(60);
    for (path, access, why) in &lines {
        let _ = writeln!(
            out,
            "  {access:<6} {path:<width$}  # {}",
            super::comment_text(why)
        );
    }
    out.push_str("network:\n");
    let network = match profile.network {
        Network::Deny => format!(
            "denied: no socket() at all, only socketpair(AF_UNIX) (seccomp); TCP bind and connect refused (Landlock ABI 4), abstract unix sockets outside refused (ABI 6); an empty network namespace on the bwrap backend, and on the Landlock backend only where Landlock is older than ABI {} (sandbox.network = \"deny\")",
            crate::network::FILTERS_MIN_ABI
        ),
        Network::Allow => "allowed: every address (sandbox.network = \"allow\")".to_string(),
        Network::Proxy => format!(
            "only cordon's proxy, on 127.0.0.1:{} inside the command's own network namespace; each host decided by [network] rules (sandbox.network = \"proxy\")",
            crate::PROXY_PORT
        ),
    };
    let _ = writeln!(out, "  {network}");
    if profile.network == Network::Proxy && !profile.forwards.is_empty() {
        let ports: Vec<String> = profile.forwards.iter().map(u16::to_string).collect();
        let _ = writeln!(
            out,
            "  and the forwarded loopback ports {}, each connected by cordon to its one destination ([network.forward])",
            ports.join(", ")
        );
    }
    out.push_str("limits:\n");
    let l = &profile.limits;
    let mut any = false;
    for (name, v) in [
        ("memory", l.memory),
        ("file_size", l.file_size),
        ("open_files", l.open_files),
        ("processes", l.processes),
        ("cpu_time", l.cpu_time),
    ] {
        if let Some(v) = v {
            any = true;
            let _ = writeln!(out, "  {name} = {v}  # sandbox.limits.{name}");
        }
    }
    if let Some(t) = l.timeout {
        any = true;
        let _ = writeln!(out, "  timeout = {t:?}  # sandbox.limits.timeout");
    }
    if !any {
        out.push_str("  none beyond no core dumps\n");
    }
    syscalls(&mut out, profile.network);
    out
}

/// The access without write (the tag of what a protected path keeps).
fn read_only(a: Access) -> &'static str {
    Access {
        write: false,
        device: false,
        ..a
    }
    .tag()
}

#[cfg(target_os = "linux")]
fn syscalls(out: &mut String, network: Network) {
    out.push_str("refused system calls (EPERM or the listed error; seccomp, from sandbox.network and cordon's built-in list):\n");
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in crate::seccomp::rules(network) {
        if !seen.contains(&(r.name, r.why)) {
            seen.push((r.name, r.why));
            let _ = writeln!(
                out,
                "  {:<24} # {}{}",
                r.name,
                super::comment_text(r.why),
                if r.when.is_empty() {
                    ""
                } else {
                    " (with some arguments)"
                }
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn syscalls(out: &mut String, _: Network) {
    out.push_str("refused system calls: the Seatbelt profile's denials (--format seatbelt)\n");
}
