//! Routes that start and stop the DevTools bridge of a session's screen.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::browser::BrowserScreen;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::{DevToolsStartRequest, DevToolsStarted, DevToolsStopped};
use std::time::Duration;

pub async fn start(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<DevToolsStartRequest>,
) -> Result<Json<DevToolsStarted>, ApiError> {
    req.validate()?;
    let screen = app.sessions.screen_of(&session).await?;
    let idle = Duration::from_secs(req.idle_secs);
    let browsers = &app.launcher.browsers;
    let started = app
        .devtools
        .start(BrowserScreen::of(&screen), browsers, idle);
    Ok(Json(started.await?))
}

pub async fn stop(
    State(app): State<AppState>,
    Free(session): Free,
) -> Result<Json<DevToolsStopped>, ApiError> {
    let stopped = match session.current_screen() {
        Some(screen) => app.devtools.stop(screen.number).await,
        None => DevToolsStopped {
            bridge: "none".to_string(),
            was_running: false,
        },
    };
    Ok(Json(stopped))
}
