//! The bearer token check that computerd's API and the launcher share.

use axum::http::header::AUTHORIZATION;
use axum::http::HeaderMap;
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
