//! The session list: one JSON read, then a WebSocket that sends it again
//! after every change and passes on focus requests.

use super::ViewerState;
use crate::viewer::live::LiveMessage;
use crate::viewer::ViewerError;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::header::ORIGIN;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::net::SocketAddr;
use tokio::sync::broadcast::error::RecvError;

/// No `Debug`: it holds the key a browser sent.
#[derive(Deserialize)]
pub struct KeyQuery {
    pub key: Option<String>,
}

/// No `Debug`: it holds a code a browser sent.
#[derive(Deserialize)]
pub struct CodeQuery {
    pub code: Option<String>,
}

/// `GET /api/code?code=C`: the key, for a waiting one-time code. A code
/// that does not open counts as a wrong key.
pub async fn redeem_code(
    State(app): State<ViewerState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Query(query): Query<CodeQuery>,
) -> Result<Response, ViewerError> {
    let given = query.code.unwrap_or_default();
    if !given.is_empty() && app.hub.codes.redeem(&given, std::time::Instant::now()) {
        let body = serde_json::json!({ "key": app.guard.key() }).to_string();
        return Ok(([("content-type", "application/json")], body).into_response());
    }
    match app.guard.check_key(client.ip(), Some(&given)) {
        Err(ViewerError::WrongKey) | Ok(()) => Err(ViewerError::CodeUsed),
        Err(other) => Err(other),
    }
}

#[derive(Deserialize)]
pub struct ProofQuery {
    pub nonce: Option<String>,
}

/// `GET /api/proof?nonce=N`: [`computer_protocol::viewer::viewer_proof`],
/// which tells the host that this port leads to this computer's viewer.
/// It needs no key, and gives away nothing of it.
pub async fn proof(
    State(app): State<ViewerState>,
    Query(query): Query<ProofQuery>,
) -> Result<Response, ViewerError> {
    let nonce = query.nonce.unwrap_or_default();
    if !computer_protocol::viewer::is_valid_proof_nonce(&nonce) {
        return Err(ViewerError::BadNonce);
    }
    let proof = computer_protocol::viewer::viewer_proof(app.guard.key(), &nonce);
    Ok(([("content-type", "text/plain")], proof).into_response())
}

/// `GET /api/sessions?key=K`.
pub async fn snapshot(
    State(app): State<ViewerState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Query(query): Query<KeyQuery>,
) -> Result<Response, ViewerError> {
    app.guard.check_key(client.ip(), query.key.as_deref())?;
    let body = LiveMessage::sessions(app.sessions.overview()).to_json();
    Ok(([("content-type", "application/json")], body).into_response())
}

/// `GET /api/live?key=K`, a WebSocket.
pub async fn channel(
    State(app): State<ViewerState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Query(query): Query<KeyQuery>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ViewerError> {
    app.guard
        .check_socket(client.ip(), origin(&headers), query.key.as_deref())?;
    Ok(upgrade.on_upgrade(move |socket| run(app, socket)))
}

pub fn origin(headers: &HeaderMap) -> Option<&str> {
    headers.get(ORIGIN).and_then(|v| v.to_str().ok())
}

async fn run(app: ViewerState, mut socket: WebSocket) {
    let mut changes = app.sessions.changes();
    // The first list goes out at once.
    changes.mark_changed();
    let mut page = app.hub.page_opened();
    loop {
        let message = tokio::select! {
            changed = changes.changed() => match changed {
                Ok(()) => LiveMessage::sessions(app.sessions.overview()),
                Err(_) => break,
            },
            focus = page.focus.recv() => match focus {
                Ok(screen) => LiveMessage::Focus { screen },
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                // The page sends nothing; pings are answered by axum.
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => continue,
            },
        };
        if socket
            .send(Message::Text(message.to_json().into()))
            .await
            .is_err()
        {
            break;
        }
    }
}
