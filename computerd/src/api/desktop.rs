//! Routes for observing and acting on a session's screen.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::{ActRequest, ActResponse, Observation, ObserveRequest};

pub async fn observe(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<ObserveRequest>,
) -> Result<Json<Observation>, ApiError> {
    Ok(Json(app.desktop.observe(&session, req).await?))
}

pub async fn act(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<ActRequest>,
) -> Result<Json<ActResponse>, ApiError> {
    Ok(Json(app.desktop.act(&session, req).await?))
}
