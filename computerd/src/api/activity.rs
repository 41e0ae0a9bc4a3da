//! Every call on a session counts as its activity from start to end, so
//! a short idle timeout never ends a session while, or just as, a long
//! call (a first observe that opens the screen, an act settling for
//! seconds) is answered.

use super::live::Found;
use super::AppState;
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use computer_protocol::SessionId;

/// Holds the session's call guard while the route answers, and leaves the
/// session in the request for the route ([`super::live::Live`]), so it is
/// looked up once. A route without a session, or one naming a session that
/// is not live, passes through: the route itself answers why.
pub async fn count_call(
    State(app): State<AppState>,
    // Routes without parameters have none to read: not an error here.
    params: Result<RawPathParams, RawPathParamsRejection>,
    mut request: Request,
    next: Next,
) -> Response {
    let session = params
        .ok()
        .iter()
        .flat_map(RawPathParams::iter)
        .find(|(name, _)| *name == "id")
        .and_then(|(_, raw)| SessionId::parse(raw).ok())
        .and_then(|id| app.sessions.get(&id).ok());
    let _call = session.as_ref().map(|s| s.call_started());
    if let Some(session) = session {
        request.extensions_mut().insert(Found(session));
    }
    next.run(request).await
}
