//! The proxy's listener handed from the command's network namespace to cordon: a type of its
//! own, so that `run` (which makes the hand-off happen) and `proxy` (the raw calls on both
//! sides) both use it without importing each other.

/// The handoff of the proxy's listener under `sandbox.network = "proxy"`.
///
/// Before the command starts, the backend makes a TCP listener on `port` inside the
/// command's own network namespace (on every address there, which is loopback only:
/// `127.0.0.1` and `[::1]`) and sends it here. A socket keeps the namespace it was made in,
/// so the proxy accepts on it from outside; connections made before it accepts wait in the
/// listen queue. `port` must be [`crate::PROXY_PORT`], which the profile's rules name.
#[derive(Debug, Clone)]
pub struct ProxyHandoff {
    pub port: u16,
    pub listener: std::sync::mpsc::Sender<std::net::TcpListener>,
    /// `[network.forward]`'s loopback ports: a listener is made for each in the same
    /// namespace and sent the same way, after the proxy's (tell them apart by their port).
    pub forwards: Vec<u16>,
}
