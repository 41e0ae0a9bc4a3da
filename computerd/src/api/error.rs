//! The one place where errors become HTTP responses.

use crate::desktop::DesktopError;
use crate::files::FilesError;
use crate::sessions::SessionError;
use crate::shell::ShellError;
use crate::transfer::TransferError;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use computer_protocol::{ErrorCode, InvalidInput, WireError};

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

impl From<InvalidInput> for ApiError {
    fn from(e: InvalidInput) -> ApiError {
        ApiError(e.into())
    }
}

impl From<crate::handoff::HandoffError> for ApiError {
    fn from(e: crate::handoff::HandoffError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<crate::recording::RecordingError> for ApiError {
    fn from(e: crate::recording::RecordingError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<DesktopError> for ApiError {
    fn from(e: DesktopError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<FilesError> for ApiError {
    fn from(e: FilesError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<ShellError> for ApiError {
    fn from(e: ShellError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<TransferError> for ApiError {
    fn from(e: TransferError) -> ApiError {
        ApiError::new(e.code(), e.to_string())
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
