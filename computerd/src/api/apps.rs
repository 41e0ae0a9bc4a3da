//! Routes that open pages, files and apps on a session's screen.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::desktop::Opening;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::{LaunchAppRequest, OpenPathRequest, OpenedResponse};

pub async fn open_path(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<OpenPathRequest>,
) -> Result<Json<OpenedResponse>, ApiError> {
    // Bad options are refused before anything opens.
    req.validate()?;
    let opening = Opening::Path(&req.target);
    let settling = req.settling.settling();
    Ok(Json(
        app.desktop
            .open(&session, opening, req.frame, settling)
            .await?,
    ))
}

pub async fn launch_app(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<LaunchAppRequest>,
) -> Result<Json<OpenedResponse>, ApiError> {
    req.validate()?;
    let opening = Opening::App {
        app: &req.app,
        uri: req.uri.as_deref(),
    };
    let settling = req.settling.settling();
    Ok(Json(
        app.desktop
            .open(&session, opening, req.frame, settling)
            .await?,
    ))
}
