//! Routes for sessions, heartbeats and the computer's identity.

use super::json::ApiJson;
use super::live::SessionPath;
use super::AppState;
use crate::http_error::ApiError;
use axum::extract::{Path, State};
use axum::Json;
use computer_protocol::{
    ComputerInfo, CreateSessionRequest, CreateSessionResponse, EndReason, EndSessionResponse,
    HeartbeatResponse, OwnerId, SessionsResponse,
};

pub async fn computer_info(State(app): State<AppState>) -> Json<ComputerInfo> {
    Json(app.info.clone())
}

pub async fn create(
    State(app): State<AppState>,
    ApiJson(req): ApiJson<CreateSessionRequest>,
) -> Result<Json<CreateSessionResponse>, ApiError> {
    let session = app.sessions.create(req)?;
    Ok(Json(CreateSessionResponse {
        session_id: session.id.clone(),
        cwd: session.cwd().display().to_string(),
    }))
}

pub async fn list(State(app): State<AppState>) -> Json<SessionsResponse> {
    Json(SessionsResponse {
        sessions: app.sessions.list().await,
    })
}

pub async fn end(
    State(app): State<AppState>,
    SessionPath(id): SessionPath,
) -> Result<Json<EndSessionResponse>, ApiError> {
    let screen = app.sessions.end(&id, EndReason::EndedByAgent).await?;
    Ok(Json(EndSessionResponse {
        session_id: id,
        screen,
    }))
}

pub async fn heartbeat(
    State(app): State<AppState>,
    Path(owner): Path<String>,
) -> Json<HeartbeatResponse> {
    Json(HeartbeatResponse {
        sessions: app.sessions.heartbeat(&OwnerId(owner)),
    })
}

pub async fn end_owner(
    State(app): State<AppState>,
    Path(owner): Path<String>,
) -> Json<HeartbeatResponse> {
    let ended = app
        .sessions
        .end_owner(&OwnerId(owner), EndReason::EndedByAgent)
        .await;
    Json(HeartbeatResponse { sessions: ended })
}
