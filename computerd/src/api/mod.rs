//! The HTTP API: each route extracts and checks its input, calls one
//! subsystem, and maps the subsystem's error to the wire error through
//! [`crate::http_error`]. A route on a session takes it as [`live::Live`]
//! (or [`live::Free`], which also refuses while a person holds the
//! screen), which [`activity`] looked up once for the whole call. Nothing
//! below this module knows about HTTP routes.

mod activity;
mod apps;
pub(crate) mod auth;
mod desktop;
mod devtools;
mod files;
mod handoff;
mod json;
mod live;
mod recording;
mod sessions;
mod shell;
mod transfer;
mod viewer;

use crate::apps::Launcher;
use crate::browser::Browsers;
use crate::config::Config;
use crate::desktop::Desktop;
use crate::devtools::DevTools;
use crate::handoff_desk::HandoffDesk;
use crate::recording::Recordings;
use crate::sessions::Sessions;
use crate::viewer::ViewerHub;
use axum::handler::Handler;
use axum::routing::{on, MethodFilter};
use axum::Router;
use computer_protocol::endpoints::{self as ep, Endpoint, Method};
use computer_protocol::{ComputerInfo, Health};
use std::sync::Arc;

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
    /// Observing and acting on the sessions' screens.
    pub desktop: Arc<Desktop>,
    /// Every screen's browser, for what a handoff saw before and after.
    pub browsers: Arc<Browsers>,
    /// Every recording kept in the computer.
    pub recordings: Arc<Recordings>,
    /// Handing screens to people and taking them back.
    pub handoffs: Arc<HandoffDesk>,
}

pub type AppState = Arc<App>;

pub fn router(app: AppState) -> Router {
    let v1 = Router::new();
    let v1 = mount::<ep::GetComputer, _, _>(v1, sessions::computer_info);
    let v1 = mount::<ep::ListSessions, _, _>(v1, sessions::list);
    let v1 = mount::<ep::CreateSession, _, _>(v1, sessions::create);
    let v1 = mount::<ep::EndSession, _, _>(v1, sessions::end);
    let v1 = mount::<ep::Heartbeat, _, _>(v1, sessions::heartbeat);
    let v1 = mount::<ep::EndOwnerSessions, _, _>(v1, sessions::end_owner);
    let v1 = mount::<ep::Observe, _, _>(v1, desktop::observe);
    let v1 = mount::<ep::Act, _, _>(v1, desktop::act);
    let v1 = mount::<ep::OpenPath, _, _>(v1, apps::open_path);
    let v1 = mount::<ep::LaunchApp, _, _>(v1, apps::launch_app);
    let v1 = mount::<ep::DevToolsStart, _, _>(v1, devtools::start);
    let v1 = mount::<ep::DevToolsStop, _, _>(v1, devtools::stop);
    let v1 = mount::<ep::Shell, _, _>(v1, shell::run);
    let v1 = mount::<ep::SetCwd, _, _>(v1, files::set_cwd);
    let v1 = mount::<ep::ListFiles, _, _>(v1, files::list);
    let v1 = mount::<ep::ReadFile, _, _>(v1, files::read);
    let v1 = mount::<ep::WriteFile, _, _>(v1, files::write);
    let v1 = mount::<ep::TransferCheck, _, _>(v1, transfer::check);
    let v1 = mount::<ep::TransferSource, _, _>(v1, transfer::source);
    let v1 = mount::<ep::TransferUpload, _, _>(v1, transfer::upload);
    let v1 = mount::<ep::TransferDownload, _, _>(v1, transfer::download);
    let v1 = mount::<ep::StartRecording, _, _>(v1, recording::start);
    let v1 = mount::<ep::RecordStep, _, _>(v1, recording::step);
    let v1 = mount::<ep::StopRecording, _, _>(v1, recording::stop);
    let v1 = mount::<ep::ListRecordings, _, _>(v1, recording::list);
    let v1 = mount::<ep::PackageRecording, _, _>(v1, recording::package);
    let v1 = mount::<ep::DeleteRecording, _, _>(v1, recording::delete);
    let v1 = mount::<ep::RequestHandoff, _, _>(v1, handoff::request);
    let v1 = mount::<ep::WaitHandoff, _, _>(v1, handoff::wait);
    let v1 = mount::<ep::CancelHandoff, _, _>(v1, handoff::cancel);
    let v1 = mount::<ep::GetViewer, _, _>(v1, viewer::status);
    let v1 = mount::<ep::FocusViewer, _, _>(v1, viewer::focus);
    let v1 = mount::<ep::IssueViewerCode, _, _>(v1, viewer::code);
    // Inside the token check: an unauthenticated call is no activity.
    let v1 = v1.route_layer(axum::middleware::from_fn_with_state(
        Arc::clone(&app),
        activity::count_call,
    ));
    let v1 = v1.route_layer(axum::middleware::from_fn_with_state(
        Arc::clone(&app),
        auth::require_token,
    ));
    mount::<ep::GetHealth, _, _>(Router::new(), health)
        .merge(v1)
        .fallback(crate::http_error::not_found)
        .method_not_allowed_fallback(crate::http_error::method_not_allowed)
        // write_file takes up to 10 MB of text; JSON escaping can double it.
        // Transfer uploads stream their body and are not limited by this.
        .layer(axum::extract::DefaultBodyLimit::max(24 * 1024 * 1024))
        .with_state(app)
}

/// Adds `handler` at endpoint `E`'s path for `E`'s method; routes sharing a
/// path (list and create sessions) merge.
fn mount<E, H, T>(router: Router<AppState>, handler: H) -> Router<AppState>
where
    E: Endpoint,
    H: Handler<T, AppState>,
    T: 'static,
{
    let method = match E::METHOD {
        Method::Get => MethodFilter::GET,
        Method::Post => MethodFilter::POST,
        Method::Delete => MethodFilter::DELETE,
    };
    router.route(E::PATH, on(method, handler))
}

async fn health() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}
