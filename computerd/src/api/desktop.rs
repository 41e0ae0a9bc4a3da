//! Routes for observing and acting on a session's screen.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use axum::extract::State;
use axum::Json;
use computer_protocol::{ActRequest, ActResponse, Observation, ObserveRequest};

pub async fn observe(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<ObserveRequest>,
) -> Result<Json<Observation>, ApiError> {
    super::handoff::refuse_held(&session)?;
    Ok(Json(app.desktop.observe(&session, req).await?))
}

pub async fn act(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<ActRequest>,
) -> Result<Json<ActResponse>, ApiError> {
    super::handoff::refuse_held(&session)?;
    Ok(Json(app.desktop.act(&session, req).await?))
}
