//! The one place where errors become HTTP responses.

use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use computer_protocol::{Coded, ErrorCode, WireError};

#[derive(Debug)]
pub struct ApiError(pub WireError);

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError(WireError::new(code, message))
    }

    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::InvalidInput, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::warn!(code = ?self.0.code, "{}", self.0.message);
        }
        (status, Json(self.0)).into_response()
    }
}

/// Every error of computerd's subsystems answers with its own code.
impl<E: Coded> From<E> for ApiError {
    fn from(e: E) -> ApiError {
        ApiError(e.to_wire())
    }
}

pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no route `{}`; the API lives under /v1", uri.path()),
    )
}

pub async fn method_not_allowed(uri: Uri) -> ApiError {
    ApiError::invalid(format!("`{}` does not take this method", uri.path()))
}
