//! The page's own files and noVNC's, from `COMPUTERD_VIEWER_DIR`.

use axum::http::header::{CACHE_CONTROL, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS};
use axum::http::HeaderValue;
use axum::response::Response;
use std::path::Path;
use tower_http::services::ServeDir;

/// Serves files under `dir`; `/` is `index.html`. ServeDir refuses paths
/// that climb out of `dir`.
pub fn service(dir: &Path) -> ServeDir {
    ServeDir::new(dir).append_index_html_on_directories(true)
}

/// Headers on every viewer response: no framing by other sites (a framed
/// page could trick a click onto Unlock), no sniffing, no referrer, and a
/// fresh page after computerd is updated.
pub async fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
