//! Routes that open pages, files and apps on a session's screen.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::apps::{LaunchError, OnScreen, Opened};
use crate::browser::BrowserScreen;
use crate::sessions::Session;
use axum::extract::State;
use axum::Json;
use computer_protocol::{
    FrameOptions, LaunchAppRequest, ObserveRequest, OpenPathRequest, OpenedResponse, Settling,
};
use std::sync::Arc;

pub async fn open_path(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<OpenPathRequest>,
) -> Result<Json<OpenedResponse>, ApiError> {
    // Bad options are refused before anything opens.
    req.validate()?;
    let on = on_screen(&app, &session).await?;
    let started_ms = crate::netguard::now_ms();
    let opened = app.launcher.open_path(&on, &req.target).await;
    let Json(mut response) =
        answer(&app, &session, opened, req.frame, req.settling.settling()).await?;
    // A page that did not load because the network refused it says so.
    for line in crate::netguard::denial_lines_since(started_ms).await {
        response.summary.push('\n');
        response.summary.push_str(&line);
    }
    Ok(Json(response))
}

pub async fn launch_app(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<LaunchAppRequest>,
) -> Result<Json<OpenedResponse>, ApiError> {
    req.validate()?;
    let on = on_screen(&app, &session).await?;
    let opened = app.launcher.launch(&on, &req.app, req.uri.as_deref()).await;
    answer(&app, &session, opened, req.frame, req.settling.settling()).await
}

/// The session's screen, opened on first use, as the launcher needs it.
async fn on_screen(app: &AppState, session: &Arc<Session>) -> Result<OnScreen, ApiError> {
    super::handoff::refuse_held(session)?;
    let screen = app.sessions.screen_of(session).await?;
    Ok(OnScreen {
        screen: BrowserScreen::of(&screen),
        cwd: session.cwd(),
    })
}

/// What opened, with a screenshot taken once the screen settled (a fixed
/// wait, none by default, or until it is still).
async fn answer(
    app: &AppState,
    session: &Arc<Session>,
    opened: Result<Opened, LaunchError>,
    frame: FrameOptions,
    settling: Settling,
) -> Result<Json<OpenedResponse>, ApiError> {
    let opened = opened?;
    session.touch();
    let screen = app.sessions.screen_of(session).await?;
    let (settled, waited) = crate::desktop::settle(&screen, settling).await?;
    let req = ObserveRequest {
        frame,
        ..ObserveRequest::default()
    };
    let observation = app.desktop.observe(session, req).await?;
    Ok(Json(OpenedResponse {
        summary: opened.summary,
        ready: opened.ready,
        observation,
        settled,
        settle_waited_ms: waited.as_millis() as u64,
    }))
}
