//! The HTTP API: each route extracts and checks its input, calls one
//! subsystem, and maps the subsystem's error to the wire error in
//! [`error`]. Nothing below this module knows about HTTP.

mod apps;
pub(crate) mod auth;
mod desktop;
mod devtools;
mod error;
mod files;
mod json;
mod sessions;
mod shell;
mod transfer;
mod viewer;

use crate::apps::Launcher;
use crate::config::Config;
use crate::devtools::DevTools;
use crate::sessions::Sessions;
use crate::viewer::ViewerHub;
use axum::routing::{delete, get, post};
use axum::Router;
use computer_protocol::{routes, ComputerInfo, Health};
use std::sync::Arc;

pub use error::{not_found, ApiError};

/// What every route can reach.
pub struct App {
    pub config: Arc<Config>,
    pub sessions: Arc<Sessions>,
    pub info: ComputerInfo,
    /// The open viewer pages, which the host counts and focuses.
    pub viewer: Arc<ViewerHub>,
    /// Opens pages, files and apps on screens (also behind the launcher).
    pub launcher: Arc<Launcher>,
    /// The DevTools bridges of the screens' browsers.
    pub devtools: Arc<DevTools>,
}

pub type AppState = Arc<App>;

pub fn router(app: AppState) -> Router {
    let v1 = Router::new()
        .route(routes::COMPUTER, get(sessions::computer_info))
        .route(routes::SESSIONS, get(sessions::list).post(sessions::create))
        .route("/v1/sessions/{id}", delete(sessions::end))
        .route("/v1/owners/{owner}/heartbeat", post(sessions::heartbeat))
        .route("/v1/owners/{owner}/sessions", delete(sessions::end_owner))
        .route("/v1/sessions/{id}/observe", post(desktop::observe))
        .route("/v1/sessions/{id}/act", post(desktop::act))
        .route("/v1/sessions/{id}/open", post(apps::open_path))
        .route("/v1/sessions/{id}/launch", post(apps::launch_app))
        .route("/v1/sessions/{id}/devtools/start", post(devtools::start))
        .route("/v1/sessions/{id}/devtools/stop", post(devtools::stop))
        .route("/v1/sessions/{id}/shell", post(shell::run))
        .route("/v1/sessions/{id}/cwd", post(files::set_cwd))
        .route("/v1/sessions/{id}/files/list", post(files::list))
        .route("/v1/sessions/{id}/files/read", post(files::read))
        .route("/v1/sessions/{id}/files/write", post(files::write))
        .route("/v1/sessions/{id}/transfer/check", post(transfer::check))
        .route("/v1/sessions/{id}/transfer/source", post(transfer::source))
        .route("/v1/sessions/{id}/transfer/upload", post(transfer::upload))
        .route(
            "/v1/sessions/{id}/transfer/download",
            post(transfer::download),
        )
        .route(routes::VIEWER, get(viewer::status))
        .route(routes::VIEWER_FOCUS, post(viewer::focus))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            auth::require_token,
        ));
    Router::new()
        .route(routes::HEALTH, get(health))
        .merge(v1)
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        // write_file takes up to 10 MB of text; JSON escaping can double it.
        // Transfer uploads stream their body and are not limited by this.
        .layer(axum::extract::DefaultBodyLimit::max(24 * 1024 * 1024))
        .with_state(app)
}

async fn health() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}
