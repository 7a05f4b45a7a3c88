//! How a run is kept off the network, one decision for both Linux backends (issue 25).
//!
//! Under `sandbox.network = "deny"` the command used to run in an empty network namespace of
//! its own. Making one is the largest kernel cost of a Landlock run (`copy_net_ns`, 7.5 % of
//! all CPU of `cordon exec -- /bin/true`, and its teardown `cleanup_net` runs later in a
//! kworker), and it is not what keeps the command off the network: seccomp refuses every
//! `socket()` under "deny" (unix ones too, because Landlock before ABI 9 cannot restrict
//! `connect()` to a socket file), on every architecture's entry (the filter's prologue refuses
//! i386 `int 0x80` — `socketcall` and `socket` alike — and x32 numbers), io_uring (whose
//! `IORING_OP_SOCKET` would go around it) is refused, and cordon closes every inherited
//! descriptor before exec. So where the kernel also gives Landlock's network rights (ABI 4:
//! TCP bind and connect handled with no rule, so refused) and its scoping (ABI 6: abstract
//! unix sockets and signals outside the sandbox refused), the namespace adds nothing to what
//! the command can reach, and it is not made: [`Isolation::Filters`]. On an older kernel it
//! stays ([`Isolation::Namespace`]): never weaker than before.
//!
//! What the namespace hid that the filters do not: `/proc/net` (`/proc/PID/net`) shows the
//! host's network state read-only — interfaces, routes, TCP/UDP sockets with their addresses,
//! ports and owners, and the unix sockets' paths and abstract names. The command can act on
//! none of it (it cannot make a socket), and reading it is what `ss` or `ip` show any user
//! outside. It stays readable: Landlock grants `/proc` as one tree and cannot take a subtree
//! back, and the per-process `net` directories of processes started later cannot be mounted
//! over in advance; `subset=pid` would hide them but also `/proc/meminfo`, `/proc/cpuinfo`
//! and `/proc/self/mounts`, which runtimes and build tools read. docs/network-enforcement.md
//! says so.
//!
//! The bwrap backend keeps the empty namespace under "deny" on every kernel (outside an
//! outer sandbox's): the operator chose it for the stronger isolation, /proc/net included.
//!
//! `sandbox.network = "proxy"` keeps its namespace (loopback and the proxy's listener are the
//! command's whole network), and "allow" never had one.

use cordon_policy::Network;

use crate::Chosen;

/// The first Landlock ABI with which "deny" needs no network namespace: ABI 4 handles TCP
/// bind and connect, ABI 6 scopes abstract unix sockets and signals to the sandbox.
pub const FILTERS_MIN_ABI: i32 = 6;

/// How a run's network is isolated, as `cordon profile`, `cordon doctor` and each run's
/// record name it ([`crate::Ran::network`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// `sandbox.network = "allow"`: the host's network.
    Open,
    /// `"deny"` without a network namespace: seccomp refuses every `socket()` (only
    /// `socketpair(AF_UNIX)` is left) and Landlock at this ABI refuses TCP bind and connect
    /// (ABI 4) and abstract unix sockets outside the sandbox (ABI 6).
    Filters { landlock_abi: i32 },
    /// `"deny"` in an empty network namespace of the command's own, and the same filters
    /// (the kernel's Landlock is older than [`FILTERS_MIN_ABI`]).
    Namespace { landlock_abi: i32 },
    /// `"deny"` in the outer sandbox's network namespace, which refuses inet sockets (bwrap
    /// nested where netlink is refused, see `crate::nested_network`), and the same filters.
    Outer { landlock_abi: i32 },
    /// `"proxy"`: a network namespace of the command's own with loopback and cordon's proxy.
    Proxy,
    /// No kernel sandbox: nothing isolates the network.
    Unconfined,
}

impl Isolation {
    /// Does the run need a network namespace of its own?
    pub fn needs_namespace(self) -> bool {
        matches!(self, Isolation::Namespace { .. } | Isolation::Proxy)
    }
}

/// How `network` is isolated on `backend` (`outer_network`: bwrap stays in the outer
/// sandbox's namespace).
pub fn isolation(network: Network, backend: &Chosen, outer_network: bool) -> Isolation {
    let abi = match backend {
        Chosen::Landlock { abi } | Chosen::Bwrap { abi, .. } => *abi,
        // Seatbelt denies the network itself; no namespaces on macOS.
        Chosen::Seatbelt { .. } => {
            return match network {
                Network::Allow => Isolation::Open,
                Network::Proxy => Isolation::Proxy,
                Network::Deny => Isolation::Filters { landlock_abi: 0 },
            }
        }
        Chosen::Unconfined => return Isolation::Unconfined,
    };
    // bwrap keeps its namespace: it is the backend an operator picks (and `auto` picks as
    // root, or for protected paths) for the stronger isolation, and without it its /proc/net
    // would show the host's sockets, addresses and unix socket paths. Its run pays for the
    // namespace less than a Landlock run does (bwrap's own mount work dominates it). Nested
    // in an outer sandbox whose namespace bwrap stays in, there is none to make.
    let bwrap_own = matches!(backend, Chosen::Bwrap { .. }) && !outer_network;
    match network {
        Network::Allow => Isolation::Open,
        Network::Proxy => Isolation::Proxy,
        Network::Deny if bwrap_own => Isolation::Namespace { landlock_abi: abi },
        Network::Deny if abi >= FILTERS_MIN_ABI => Isolation::Filters { landlock_abi: abi },
        Network::Deny if outer_network => Isolation::Outer { landlock_abi: abi },
        Network::Deny => Isolation::Namespace { landlock_abi: abi },
    }
}

/// What seccomp and Landlock at `abi` refuse under "deny", for the descriptions below.
fn filters(abi: i32) -> String {
    let mut s = String::from("seccomp refuses every socket() (socketpair(AF_UNIX) only)");
    if abi >= 6 {
        s.push_str(&format!(
            ", Landlock ABI {abi} refuses TCP bind and connect and abstract unix sockets outside the sandbox"
        ));
    } else if abi >= 4 {
        s.push_str(&format!(
            ", Landlock ABI {abi} refuses TCP bind and connect (abstract-socket scoping needs ABI 6)"
        ));
    }
    s
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Isolation::Open => f.write_str("open: the host's network (sandbox.network = \"allow\")"),
            Isolation::Filters { landlock_abi: 0 } => {
                f.write_str("denied by the Seatbelt profile (no network namespaces on macOS)")
            }
            Isolation::Filters { landlock_abi } => write!(
                f,
                "denied without a network namespace: {}; /proc/net shows the host's interfaces and sockets (read-only)",
                filters(landlock_abi)
            ),
            Isolation::Namespace { landlock_abi } if landlock_abi < FILTERS_MIN_ABI => write!(
                f,
                "denied in an empty network namespace of the command's own (Landlock ABI {landlock_abi} < {FILTERS_MIN_ABI}), and {}",
                filters(landlock_abi)
            ),
            Isolation::Namespace { landlock_abi } => write!(
                f,
                "denied in an empty network namespace of the command's own (bwrap: its /proc/net shows no host socket), and {}",
                filters(landlock_abi)
            ),
            Isolation::Outer { landlock_abi } => write!(
                f,
                "denied in the outer sandbox's network namespace, which refuses inet sockets, and {}",
                filters(landlock_abi)
            ),
            Isolation::Proxy => f.write_str(
                "only cordon's proxy: on Linux a network namespace of the command's own with loopback and the proxy's listener, on macOS the Seatbelt profile's one outbound rule",
            ),
            Isolation::Unconfined => f.write_str("not isolated: no kernel sandbox"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn landlock(abi: i32) -> Chosen {
        Chosen::Landlock { abi }
    }

    #[test]
    fn deny_needs_no_namespace_from_abi_6_on() {
        for abi in [6, 7, 9] {
            let i = isolation(Network::Deny, &landlock(abi), false);
            assert_eq!(i, Isolation::Filters { landlock_abi: abi });
            assert!(!i.needs_namespace());
            let bwrap = Chosen::Bwrap {
                bwrap: "/usr/bin/bwrap".into(),
                abi,
            };
            // bwrap keeps it (its own /proc would show the host's sockets), except nested
            // in an outer sandbox's namespace.
            let own = isolation(Network::Deny, &bwrap, false);
            assert_eq!(own, Isolation::Namespace { landlock_abi: abi });
            assert!(own.needs_namespace());
            assert!(own.to_string().contains("bwrap"), "{own}");
            assert_eq!(
                isolation(Network::Deny, &bwrap, true),
                Isolation::Filters { landlock_abi: abi }
            );
        }
    }

    #[test]
    fn older_kernels_keep_the_namespace() {
        for abi in 1..FILTERS_MIN_ABI {
            let i = isolation(Network::Deny, &landlock(abi), false);
            assert_eq!(i, Isolation::Namespace { landlock_abi: abi });
            assert!(i.needs_namespace(), "{abi}");
            assert!(i
                .to_string()
                .contains("network namespace of the command's own"));
        }
        let bwrap = Chosen::Bwrap {
            bwrap: "/usr/bin/bwrap".into(),
            abi: 5,
        };
        assert_eq!(
            isolation(Network::Deny, &bwrap, true),
            Isolation::Outer { landlock_abi: 5 }
        );
    }

    #[test]
    fn proxy_and_allow_are_unchanged() {
        for abi in [1, 4, 6, 7] {
            assert!(isolation(Network::Proxy, &landlock(abi), false).needs_namespace());
            assert_eq!(
                isolation(Network::Allow, &landlock(abi), false),
                Isolation::Open
            );
        }
        assert_eq!(
            isolation(Network::Deny, &Chosen::Unconfined, false),
            Isolation::Unconfined
        );
    }

    #[test]
    fn the_description_names_what_applies() {
        let s = isolation(Network::Deny, &landlock(7), false).to_string();
        assert!(
            s.starts_with("denied without a network namespace: seccomp"),
            "{s}"
        );
        assert!(
            s.contains("abstract unix sockets") && s.contains("/proc/net"),
            "{s}"
        );
        let s = isolation(Network::Deny, &landlock(4), false).to_string();
        assert!(
            s.contains("TCP bind and connect (abstract-socket scoping needs ABI 6)"),
            "{s}"
        );
    }
}
