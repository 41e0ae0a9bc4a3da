//! Every call on a session counts as its activity from start to end, so
//! a short idle timeout never ends a session while, or just as, a long
//! call (a first observe that opens the screen, an act settling for
//! seconds) is answered.

use super::AppState;
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use computer_protocol::SessionId;

/// Holds the session's call guard while the route answers. A route
/// without a session, or one naming a session that is not live, passes
/// through: the route itself answers why.
pub async fn count_call(
    State(app): State<AppState>,
    // Routes without parameters have none to read: not an error here.
    params: Result<RawPathParams, RawPathParamsRejection>,
    request: Request,
    next: Next,
) -> Response {
    let session = params
        .ok()
        .iter()
        .flat_map(RawPathParams::iter)
        .find(|(name, _)| *name == "id")
        .and_then(|(_, id)| app.sessions.get(&SessionId(id.to_string())).ok());
    let _call = session.map(|s| s.call_started());
    next.run(request).await
}
