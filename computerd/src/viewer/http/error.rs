//! The one place where viewer refusals become HTTP responses: the status
//! and the message as plain text, which the page shows as it is.

use crate::viewer::ViewerError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

impl IntoResponse for ViewerError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status()).unwrap_or(StatusCode::FORBIDDEN);
        if status.is_server_error() {
            tracing::warn!("viewer: {self}");
        } else {
            tracing::debug!("viewer refused a request: {self}");
        }
        (status, self.to_string()).into_response()
    }
}
