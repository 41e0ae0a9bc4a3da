//! The bearer token check in front of every `/v1` route.

use super::error::ApiError;
use super::AppState;
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use computer_protocol::ErrorCode;
use subtle::ConstantTimeEq;

pub async fn require_token(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let given = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    // Constant-time, so the token cannot be guessed byte by byte from timing.
    let ok: bool = given.as_bytes().ct_eq(app.config.token.as_bytes()).into();
    if ok {
        Ok(next.run(request).await)
    } else {
        Err(ApiError::new(
            ErrorCode::Unauthorized,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token the computer was created with",
        ))
    }
}
