//! Routes for observing and acting on a session's screen.

use super::error::ApiError;
use super::json::ApiJson;
use super::AppState;
use axum::extract::{Path, State};
use axum::Json;
use computer_protocol::{ActRequest, ActResponse, Observation, ObserveRequest, SessionId};

pub async fn observe(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ObserveRequest>,
) -> Result<Json<Observation>, ApiError> {
    let session = app.sessions.get(&SessionId(id))?;
    super::handoff::refuse_held(&session)?;
    Ok(Json(app.desktop.observe(&session, req).await?))
}

pub async fn act(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ActRequest>,
) -> Result<Json<ActResponse>, ApiError> {
    let session = app.sessions.get(&SessionId(id))?;
    super::handoff::refuse_held(&session)?;
    Ok(Json(app.desktop.act(&session, req).await?))
}
