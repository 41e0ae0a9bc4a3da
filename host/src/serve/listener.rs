//! The HTTP transport's accept loop: HTTP/1.1 with a deadline for every
//! request head and a cap on open connections. axum's own `serve` has
//! neither, so with `--allow-remote` anyone who reaches the port could open
//! connections that never finish a request (no token needed, since the
//! guard runs after the head) until the server runs out of descriptors.
//! Each connection gets a [`Ticket`] (a request extension): the
//! [`Doorway`] closes the oldest connections that proved no token, and
//! the guard's tenant takes a slot of its share (see [`super::shares`]).
//!
//! The deadline covers only the head: a request body and a response stream
//! (MCP's server-sent events) last as long as they need. It also closes
//! keep-alive connections idle that long, which clients reconnect from.

use super::shares::{Doorway, Ticket};
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

/// Time from the connection (or the previous response) to the end of a
/// request's head.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Pause after an accept error other than a peer giving up, such as running
/// out of file descriptors, so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Serves `router` until `shutdown` completes, then lets the requests in
/// flight finish. At most `capacity` connections are served at once (the
/// tenants' shares and the unproven ones); more wait in the listen backlog.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    doorway: Arc<Doorway>,
    capacity: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Dropping `stop` tells every connection to finish; each holds a clone
    // of `done_rx`, so `done.closed()` returns once all of them ended.
    let (stop, stopped) = watch::channel(());
    let (done, done_rx) = watch::channel(());
    let slots = Arc::new(Semaphore::new(capacity));
    let sweeper = tokio::spawn({
        let doorway = Arc::clone(&doorway);
        async move {
            let mut tick = tokio::time::interval(super::shares::SWEEP_EVERY);
            loop {
                tick.tick().await;
                doorway.sweep(std::time::Instant::now());
            }
        }
    });
    let mut shutdown = pin!(shutdown);
    loop {
        let slot = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                // Full: a connection that proved nothing makes room.
                doorway.make_room();
                tokio::select! {
                    slot = Arc::clone(&slots).acquire_owned() => slot.expect("the semaphore is never closed"),
                    () = &mut shutdown => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) if is_peer_error(&e) => continue,
                Err(e) => {
                    tracing::error!("accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let ticket: Arc<Ticket> = doorway.admit();
        let service =
            TowerToHyperService::new(router.clone().layer(axum::Extension(Arc::clone(&ticket))));
        let mut stopped = stopped.clone();
        let done_rx = done_rx.clone();
        tokio::spawn(async move {
            let mut connection = pin!(http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service));
            tokio::select! {
                _ = connection.as_mut() => {}
                // Pushed out as the oldest connection that proved no token.
                () = ticket.evicted() => {}
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop((slot, done_rx, ticket));
        });
    }
    sweeper.abort();
    drop(listener);
    drop(stop);
    drop(done_rx);
    done.closed().await;
    Ok(())
}

/// Errors of one incoming connection, not of the listener.
fn is_peer_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
