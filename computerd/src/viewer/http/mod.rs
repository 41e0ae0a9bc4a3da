//! The viewer's HTTP side: every request passes the `Host` check, then is
//! one of
//! - `GET /api/code?code=C`: the key, once, for a one-time code the host
//!   put in a link it opened;
//! - `GET /api/proof?nonce=N`: proof that this is the computer's viewer
//!   (an HMAC of the nonce under the key), for the host;
//! - `GET /api/sessions?key=K`: the session list as JSON (the page's first
//!   read, and a plain HTTP answer when the key is wrong);
//! - `GET /api/live?key=K` (WebSocket): the list again after every change,
//!   and focus requests;
//! - `GET /api/screen/<n>?key=K` (WebSocket): binary frames to and from
//!   screen `n`'s Xvnc;
//! - `POST /api/handoff/<n>?key=K`: the person's Take control and Hand
//!   back for a held screen (our `Origin` required too);
//! - anything else: a file of the page or of noVNC.

mod error;
mod files;
mod handoff;
mod host;
mod live;
mod screen;

use super::guard::Guard;
use super::hub::ViewerHub;
use crate::browser::Browsers;
use crate::sessions::Sessions;
use axum::routing::get;
use axum::Router;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

/// What the viewer's routes reach.
pub struct ViewerApp {
    pub guard: Guard,
    pub sessions: Arc<Sessions>,
    /// Every screen's browser, for what the screen showed at a hand-back.
    pub browsers: Arc<Browsers>,
    pub hub: Arc<ViewerHub>,
    /// Where Xvnc listens for VNC (`COMPUTERD_RFB_INTERFACE`).
    pub rfb_interface: String,
    /// The page's files (`COMPUTERD_VIEWER_DIR`).
    pub dir: PathBuf,
}

pub type ViewerState = Arc<ViewerApp>;

pub fn router(app: ViewerState) -> Router {
    Router::new()
        .route("/api/code", get(live::redeem_code))
        .route("/api/proof", get(live::proof))
        .route("/api/sessions", get(live::snapshot))
        .route("/api/live", get(live::channel))
        .route("/api/screen/{number}", get(screen::bridge))
        .route("/api/handoff/{number}", axum::routing::post(handoff::act))
        .fallback_service(files::service(&app.dir))
        .layer(axum::middleware::map_response(files::protect))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            host::require_our_host,
        ))
        .with_state(app)
}

/// Serves the viewer on `listener` until `shutdown` completes. Open
/// WebSockets do not hold the shutdown up.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: ViewerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::http_server::serve(listener, router(app), shutdown).await
}
