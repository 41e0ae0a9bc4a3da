//! The one place where viewer refusals become HTTP responses: the status
//! and the message as plain text, which the page shows as it is.

use crate::viewer::error::whole_seconds;
use crate::viewer::ViewerError;
use axum::http::header::RETRY_AFTER;
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
        let mut response = (status, self.to_string()).into_response();
        if let Some(wait) = self.retry_after() {
            // At least 1: `Retry-After: 0` would invite a retry that is
            // still refused.
            let seconds = whole_seconds(wait).max(1);
            response
                .headers_mut()
                .insert(RETRY_AFTER, seconds.to_string().parse().expect("digits"));
        }
        response
    }
}
