//! The bearer token check in front of every `/v1` route.

use super::error::ApiError;
use super::AppState;
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use computer_protocol::ErrorCode;
use subtle::ConstantTimeEq;

/// True when `headers` carry `Authorization: Bearer <token>`. Compared in
/// constant time, so a token cannot be guessed byte by byte from timing.
pub fn bearer_is(headers: &HeaderMap, token: &str) -> bool {
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

pub async fn require_token(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if bearer_is(request.headers(), &app.config.token) {
        Ok(next.run(request).await)
    } else {
        Err(ApiError::new(
            ErrorCode::Unauthorized,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token the computer was created with",
        ))
    }
}
