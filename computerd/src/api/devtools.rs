//! Routes that start and stop the DevTools bridge of a session's screen.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::browser::BrowserScreen;
use axum::extract::State;
use axum::Json;
use computer_protocol::{DevToolsStartRequest, DevToolsStarted, DevToolsStopped};
use std::time::Duration;

pub async fn start(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<DevToolsStartRequest>,
) -> Result<Json<DevToolsStarted>, ApiError> {
    if req.idle_secs == 0 {
        return Err(ApiError::invalid(
            "`idle_secs` is 0: the bridge needs at least 1 second without calls before it stops",
        ));
    }
    super::handoff::refuse_held(&session)?;
    let screen = app.sessions.screen_of(&session).await?;
    let started = app
        .devtools
        .start(
            BrowserScreen::of(&screen),
            &app.launcher.browsers,
            Duration::from_secs(req.idle_secs),
        )
        .await?;
    Ok(Json(started))
}

pub async fn stop(
    State(app): State<AppState>,
    Live(session): Live,
) -> Result<Json<DevToolsStopped>, ApiError> {
    super::handoff::refuse_held(&session)?;
    let stopped = match session.current_screen() {
        Some(screen) => app.devtools.stop(screen.number).await,
        None => DevToolsStopped {
            bridge: "none".to_string(),
            was_running: false,
        },
    };
    Ok(Json(stopped))
}
