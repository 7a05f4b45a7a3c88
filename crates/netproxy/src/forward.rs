//! `[network.forward]`: a loopback port inside the sandbox that cordon connects to one
//! destination, for clients that speak no proxy protocol (psql, redis-cli, ssh).
//!
//! ```text
//!  command: connect 127.0.0.1:5432 ─▶ listener made in the sandbox's namespace
//!    ─▶ decide db.internal:5432 (the same engine, asks, records) ─▶ resolve once, check the
//!       address ─▶ connect ─▶ relay bytes as they are ─▶ close record
//! ```
//!
//! The destination is fixed by the policy: the command chooses nothing but to connect.

use std::sync::Arc;
use std::time::Instant;

use cordon_policy::network::Target;
use tokio::net::TcpStream;

use crate::connect::{open_admitted, Opening, Refusal};
use crate::relay::{self, Counters};
use crate::{Admission, Event, Fields, Protocol, Shared};

pub(crate) async fn serve(
    shared: Arc<Shared>,
    stream: TcpStream,
    admission: Admission,
    to: Arc<Target>,
) {
    let _ = stream.set_nodelay(true);
    let track = shared.track(Protocol::Forward, Instant::now());
    let host = to.host.to_string();
    let port = to.port;
    let Opening {
        rule,
        result,
        decision,
        ..
    } = open_admitted(&shared, &admission, &host, port).await;
    let (dest, addr) = match result {
        Ok(ok) => ok,
        Err(why) => {
            track.refused(&shared, &host, port, &rule, &why);
            // The client learns only that the connection closed: a plain TCP protocol has
            // no place for a reason; the run's end names it on stderr.
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
    // The open record is durable before a byte goes through: a connection the log cannot
    // show is not made (dropping `dest` closes it).
    if let Err(why) = track.opened(&shared, fields("", (0, 0)), decision).await {
        track.refused(&shared, &host, port, &rule, &Refusal::Unrecorded(why));
        return;
    }
    let counters = Arc::new(Counters::default());
    let ended = relay::relay_tcp(&shared, stream, dest, &counters).await;
    track.record(
        &shared,
        Event::Close,
        fields(ended.as_deref().unwrap_or(""), counters.get()),
    );
}
