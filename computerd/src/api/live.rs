//! The session a route works on, named by the `{id}` of its path.
//! [`super::activity::count_call`] looks it up once, before the route,
//! and leaves it in the request; a route takes it as [`Live`], and a path
//! whose session is unknown or ended is answered with why before the
//! route runs; a route that acts for the agent takes [`Free`], which also
//! refuses while a person holds the session's screen. A route that needs
//! the id alone takes [`SessionPath`]. An
//! `{id}` that is no session id at all is answered as an unknown session:
//! computerd made no session by that name.

use super::AppState;
use crate::http_error::ApiError;
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

/// The session of the path's `{id}`, refused while a person holds its
/// screen (a handoff): a route that acts for the agent takes this, so it
/// cannot forget the hold.
pub struct Free(pub Arc<Session>);

impl FromRequestParts<AppState> for Free {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Free, ApiError> {
        let Live(session) = Live::from_request_parts(parts, app).await?;
        session.check_free()?;
        Ok(Free(session))
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
