//! The live session a route works on, named by the `{id}` of its path.
//! [`super::activity::count_call`] looks it up once, before the route,
//! and leaves it in the request; a route takes it as [`Live`], and a path
//! whose session is unknown or ended is answered with why before the
//! route runs.

use super::error::ApiError;
use super::AppState;
use crate::sessions::Session;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use computer_protocol::SessionId;
use std::sync::Arc;

/// The session of the path's `{id}`, live when the call began.
pub struct Live(pub Arc<Session>);

/// What the activity middleware found, for [`Live`] to take.
#[derive(Clone)]
pub(super) struct Found(pub Arc<Session>);

impl FromRequestParts<AppState> for Live {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Live, ApiError> {
        if let Some(Found(session)) = parts.extensions.get::<Found>() {
            return Ok(Live(Arc::clone(session)));
        }
        // Not found by the middleware: the lookup again gives the reason.
        let Path(id) = Path::<SessionId>::from_request_parts(parts, app)
            .await
            .map_err(|e| ApiError::invalid(e.body_text()))?;
        Ok(Live(app.sessions.get(&id)?))
    }
}
