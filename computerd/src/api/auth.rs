//! The bearer token check in front of every `/v1` route.

use super::AppState;
use crate::bearer::bearer_is;
use crate::http_error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use computer_protocol::ErrorCode;

pub async fn require_token(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if bearer_is(request.headers(), app.config.token.expose()) {
        Ok(next.run(request).await)
    } else {
        Err(ApiError::new(
            ErrorCode::Unauthorized,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token the computer was created with",
        ))
    }
}
