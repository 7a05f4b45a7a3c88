//! Moving bytes: a counting wrapper for the destination side, and the relay with its idle
//! timeout and shutdown.

use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

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

    pub(crate) fn into_inner(self) -> S {
        self.inner
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

/// [`relay`] for two TCP sockets: on Linux the bytes move with `splice(2)` through a pipe per
/// direction, never through the proxy's memory (half the copies, and no buffer of ours to
/// bound); elsewhere, [`relay`].
pub(crate) async fn relay_tcp(
    shared: &Shared,
    client: TcpStream,
    dest: TcpStream,
    counters: &Arc<Counters>,
) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let copy = async {
            match splice::both(client, dest, counters, shared.limits().buffer_bytes).await {
                Ok(()) => None,
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
    #[cfg(not(target_os = "linux"))]
    {
        relay(
            shared,
            client,
            Counted::new(dest, counters.clone()),
            counters,
        )
        .await
    }
}

#[cfg(target_os = "linux")]
mod splice {
    //! One direction: wait until the source is readable, `splice` what it has into the pipe,
    //! wait until the destination is writable, `splice` the pipe out, count. A source at
    //! end-of-file shuts the destination's writing side (a half close, as TCP relays do);
    //! both directions end, or the first error ends the relay.

    use std::future::Future;
    use std::io;
    use std::pin::pin;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::task::Poll;

    use rustix::pipe::{
        fcntl_getpipe_size, fcntl_setpipe_size, pipe_with, splice, PipeFlags, SpliceFlags,
    };
    use tokio::io::{AsyncWriteExt, Interest};
    use tokio::net::TcpStream;

    use super::Counters;

    pub(super) async fn both(
        client: TcpStream,
        dest: TcpStream,
        counters: &Counters,
        size: usize,
    ) -> io::Result<()> {
        let (cr, mut cw) = client.into_split();
        let (dr, mut dw) = dest.into_split();
        let up = async {
            one(cr.as_ref(), dw.as_ref(), &counters.up, size).await?;
            dw.shutdown().await
        };
        let down = async {
            one(dr.as_ref(), cw.as_ref(), &counters.down, size).await?;
            cw.shutdown().await
        };
        let mut up = pin!(up);
        let mut down = pin!(down);
        let (mut up_done, mut down_done) = (false, false);
        std::future::poll_fn(|cx| {
            if !up_done {
                match up.as_mut().poll(cx) {
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => up_done = true,
                    Poll::Pending => {}
                }
            }
            if !down_done {
                match down.as_mut().poll(cx) {
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => down_done = true,
                    Poll::Pending => {}
                }
            }
            if up_done && down_done {
                Poll::Ready(Ok(()))
            } else {
                Poll::Pending
            }
        })
        .await
    }

    async fn one(
        src: &TcpStream,
        dst: &TcpStream,
        count: &AtomicU64,
        size: usize,
    ) -> io::Result<()> {
        let (pipe_out, pipe_in) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        // Fewer, larger moves; the kernel refuses past pipe-max-size or the user's pipe
        // budget (fs.pipe-user-pages-soft), and the pipe keeps its default size then.
        let chunk = fcntl_setpipe_size(&pipe_in, size)
            .or_else(|_| fcntl_getpipe_size(&pipe_in))
            .unwrap_or(64 * 1024)
            .max(4096);
        let flags = SpliceFlags::MOVE | SpliceFlags::NONBLOCK;
        loop {
            // The pipe is empty here: EAGAIN means the socket has nothing, and clears its
            // readiness.
            let n = loop {
                src.readable().await?;
                match src.try_io(Interest::READABLE, || {
                    splice(src, None, &pipe_in, None, chunk, flags).map_err(io::Error::from)
                }) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                return Ok(());
            }
            let mut left = n;
            while left > 0 {
                dst.writable().await?;
                match dst.try_io(Interest::WRITABLE, || {
                    splice(&pipe_out, None, dst, None, left, flags).map_err(io::Error::from)
                }) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(m) => {
                        left -= m;
                        count.fetch_add(m as u64, Ordering::Relaxed);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            }
        }
    }
}
