//! `POST /api/handoff/<n>?key=K`: the person's Take control and Hand back
//! for held screen `n`. Like the WebSockets it needs our page as its
//! `Origin` and the key, so another site in the person's browser (wrong
//! origin) cannot act on a hold. The key lives in this computer, though, so
//! Hand back needs more: the hand-back code of the link the host opened for
//! the person, which the computer holds only as a digest. A program inside
//! the computer, root included, has the key and can write any header, but
//! not that code.

use super::live::{origin, KeyQuery};
use super::screen::parse_screen;
use super::ViewerState;
use crate::handoff::{check_note, screen_facts};
use crate::viewer::ViewerError;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use computer_protocol::handoff::ViewerHandoffAction;
use std::net::SocketAddr;

pub async fn act(
    State(app): State<ViewerState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(number): Path<String>,
    Query(query): Query<KeyQuery>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ViewerError> {
    app.guard
        .check_socket(client.ip(), origin(&headers), query.key.as_deref())?;
    let screen = parse_screen(number)?;
    let action: ViewerHandoffAction = match serde_json::from_slice(&body) {
        Ok(action) => action,
        Err(e) => {
            return Ok(plain(
                StatusCode::BAD_REQUEST,
                format!("not a handoff action: {e}"),
            ))
        }
    };
    let (session, open) = app
        .sessions
        .live_on_screen(screen)
        .ok_or(ViewerError::NoScreen(screen))?;
    let Some(hold) = session.hold().filter(|h| h.is_held()) else {
        return Ok(plain(
            StatusCode::CONFLICT,
            format!("screen {screen} is not held: its agent did not ask for it, or it was handed back already"),
        ));
    };
    match action {
        ViewerHandoffAction::Take => {
            hold.take();
            tracing::info!(handoff = %hold.id, "a person took control");
        }
        ViewerHandoffAction::Return { note, handback } => {
            let note = match check_note(note) {
                Ok(note) => note,
                Err(e) => return Ok(plain(StatusCode::BAD_REQUEST, e.to_string())),
            };
            // Checked before the screen is read: a refused hand back costs
            // no X round trips.
            let handback = match hold.check_handback(handback.as_deref()) {
                Ok(handback) => handback,
                Err(e) => {
                    tracing::warn!(handoff = %hold.id, "a hand back without the person's code was refused");
                    return Ok(plain(StatusCode::FORBIDDEN, e.to_string()));
                }
            };
            let after = screen_facts(&open, &app.browsers).await;
            hold.hand_back(handback, note, &after);
            tracing::info!(handoff = %hold.id, "a person handed the screen back");
        }
    }
    app.sessions.touch_overview();
    Ok(plain(StatusCode::OK, "ok".to_string()))
}

fn plain(status: StatusCode, text: String) -> Response {
    (
        status,
        [("content-type", "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}
