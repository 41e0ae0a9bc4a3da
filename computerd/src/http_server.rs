//! Serving a router on a TCP listener: HTTP/1.1 with upgrades (the viewer's
//! WebSockets), and a deadline for every request head. axum's own `serve`
//! sets no timer, so a client that connects and sends half a request line,
//! or nothing, holds its socket forever; enough of them exhaust computerd's
//! file descriptors.
//!
//! Every request carries the peer's address as axum's `ConnectInfo`, which
//! the viewer counts wrong keys by.
//!
//! The deadline covers only the head: a body (a tar upload) or an upgraded
//! connection streams as long as it likes. It also closes keep-alive
//! connections idle that long, which clients reconnect from.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::pin;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Time from the connection (or the previous response) to the end of a
/// request's head.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);

/// Pause after an accept error other than a peer giving up, such as running
/// out of file descriptors, so the loop does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Serves `router` until `shutdown` completes, then lets the requests in
/// flight finish. Upgraded connections are on their own by then and do not
/// hold the shutdown up.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Dropping `stop` tells every connection to finish; each holds a clone of
    // `done_rx`, so `done.closed()` returns once all of them ended.
    let (stop, stopped) = watch::channel(());
    let (done, done_rx) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_peer_error(&e) => continue,
                Err(e) => {
                    tracing::error!("accepting a connection failed: {e}");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let router = TowerToHyperService::new(router.clone());
        let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            router.call(request)
        });
        let mut stopped = stopped.clone();
        let done_rx = done_rx.clone();
        tokio::spawn(async move {
            let mut connection = pin!(http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades());
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(done_rx);
        });
    }
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
