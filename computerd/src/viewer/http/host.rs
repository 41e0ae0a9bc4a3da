//! The `Host` check in front of every viewer request (DNS rebinding).

use super::ViewerState;
use crate::viewer::ViewerError;
use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::Response;

pub async fn require_our_host(
    State(app): State<ViewerState>,
    request: Request,
    next: Next,
) -> Result<Response, ViewerError> {
    // HTTP/1.1 sends `Host`; an absolute request target carries it instead.
    let host = request
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    app.guard.check_host(host.as_deref())?;
    Ok(next.run(request).await)
}
