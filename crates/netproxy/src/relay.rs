//! Moving bytes: a counting wrapper for the destination side, and the relay with its idle
//! timeout and shutdown.

use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::Shared;

/// Bytes moved so far, each way (as seen on the destination side).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    up: AtomicU64,
    down: AtomicU64,
}

impl Counters {
    /// (up, down).
    pub(crate) fn get(&self) -> (u64, u64) {
        (
            self.up.load(Ordering::Relaxed),
            self.down.load(Ordering::Relaxed),
        )
    }
}

/// The destination's stream: what is read from it counts down, what is written counts up.
pub(crate) struct Counted<S> {
    inner: S,
    counters: Arc<Counters>,
}

impl<S> Counted<S> {
    pub(crate) fn new(inner: S, counters: Arc<Counters>) -> Counted<S> {
        Counted { inner, counters }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.counters.down.fetch_add(n as u64, Ordering::Relaxed);
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.counters.up.fetch_add(n as u64, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Runs both futures; the first to finish wins and the other is dropped.
pub(crate) async fn first<T>(a: impl Future<Output = T>, b: impl Future<Output = T>) -> T {
    let mut a = pin!(a);
    let mut b = pin!(b);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(v);
        }
        b.as_mut().poll(cx)
    })
    .await
}

/// Resolves when `counters` saw no byte for a whole idle period.
pub(crate) async fn idle(shared: &Shared, counters: &Counters) {
    let mut last = counters.get();
    loop {
        tokio::time::sleep(shared.limits().idle_timeout).await;
        let now = counters.get();
        if now == last {
            return;
        }
        last = now;
    }
}

/// Copies both ways between the client and the destination until both sides are done, the
/// relay is idle too long, or the proxy shuts down. Returns why it ended early, if it did.
pub(crate) async fn relay<C, D>(
    shared: &Shared,
    mut client: C,
    mut dest: Counted<D>,
    counters: &Counters,
) -> Option<String>
where
    C: AsyncRead + AsyncWrite + Unpin,
    D: AsyncRead + AsyncWrite + Unpin,
{
    let size = shared.limits().buffer_bytes.max(4096);
    let copy = async {
        match tokio::io::copy_bidirectional_with_sizes(&mut client, &mut dest, size, size).await {
            Ok(_) => None,
            Err(e) => Some(format!("relay ended: {e}")),
        }
    };
    let stop = async {
        first(
            async {
                idle(shared, counters).await;
                Some("idle timeout".to_string())
            },
            async {
                shared.shutting_down().await;
                Some("the proxy shut down".to_string())
            },
        )
        .await
    };
    first(copy, stop).await
}
