//! The session a route works on, named by the `{id}` of its path.
//! [`super::activity::count_call`] looks it up once, before the route,
//! and leaves it in the request; a route takes it as [`Live`], and a path
//! whose session is unknown or ended is answered with why before the
//! route runs. A route that needs the id alone takes [`SessionPath`]. An
//! `{id}` that is no session id at all is answered as an unknown session:
//! computerd made no session by that name.

use super::error::ApiError;
use super::AppState;
use crate::sessions::{Session, SessionError};
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
        let SessionPath(id) = SessionPath::from_request_parts(parts, app).await?;
        Ok(Live(app.sessions.get(&id)?))
    }
}

/// The path's `{id}`, checked to be a session id.
pub struct SessionPath(pub SessionId);

impl FromRequestParts<AppState> for SessionPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &AppState,
    ) -> Result<SessionPath, ApiError> {
        let Path(raw) = Path::<String>::from_request_parts(parts, app)
            .await
            .map_err(|e| ApiError::invalid(e.body_text()))?;
        let id = SessionId::parse(&raw).map_err(SessionError::NotAnId)?;
        Ok(SessionPath(id))
    }
}
