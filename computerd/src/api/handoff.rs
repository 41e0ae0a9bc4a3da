//! Routes for handoffs: the agent asks a person to take its screen, waits
//! for them to hand it back, or takes it back itself. Handing back is the
//! viewer's (`viewer::http::handoff`), never the agent's.

use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::handoff_desk::HandoffDesk;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::endpoints::NoBody;
use computer_protocol::handoff::{
    HandoffRequest, HandoffStarted, HandoffStatus, HandoffWaitRequest,
};

pub async fn request(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<HandoffRequest>,
) -> Result<Json<HandoffStarted>, ApiError> {
    Ok(Json(app.handoffs.request(&session, req).await?))
}

pub async fn wait(
    Live(session): Live,
    ApiJson(req): ApiJson<HandoffWaitRequest>,
) -> Result<Json<HandoffStatus>, ApiError> {
    Ok(Json(HandoffDesk::wait(&session, req).await?))
}

pub async fn cancel(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(_): ApiJson<NoBody>,
) -> Result<Json<HandoffStatus>, ApiError> {
    Ok(Json(app.handoffs.cancel(&session).await?))
}
