//! Routes the host uses to steer open viewer pages: how many are open
//! (to decide whether to open a tab), switching them to a screen, and a
//! one-time code for a link it opens.

use super::json::ApiJson;
use super::AppState;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::limits::SCREENS_MAX;
use computer_protocol::{FocusRequest, ViewerCode, ViewerStatus};

/// `GET /v1/viewer`.
pub async fn status(State(app): State<AppState>) -> Json<ViewerStatus> {
    Json(ViewerStatus {
        pages: app.viewer.pages(),
    })
}

/// `POST /v1/viewer/focus`. Allowed for any screen number; a page asked
/// to show a screen that is not open says so itself.
pub async fn focus(
    State(app): State<AppState>,
    ApiJson(req): ApiJson<FocusRequest>,
) -> Result<Json<ViewerStatus>, ApiError> {
    if !(1..=SCREENS_MAX).contains(&req.screen.0) {
        return Err(ApiError::invalid(format!(
            "`screen` is {}: use a screen number from 1 to {SCREENS_MAX}",
            req.screen
        )));
    }
    Ok(Json(ViewerStatus {
        pages: app.viewer.focus(req.screen),
    }))
}

/// `POST /v1/viewer/code`.
pub async fn code(State(app): State<AppState>) -> Json<ViewerCode> {
    Json(ViewerCode {
        code: app.viewer.codes.issue().into(),
    })
}
