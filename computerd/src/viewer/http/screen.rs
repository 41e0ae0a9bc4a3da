//! `GET /api/screen/<n>?key=K`: a WebSocket carrying RFB to and from screen
//! `n`'s Xvnc, one binary frame per read. noVNC authenticates with Xvnc
//! itself (VncAuth, the key as password); this only pipes bytes, and counts
//! the viewer for as long as the socket is open.

use super::live::{origin, KeyQuery};
use super::ViewerState;
use crate::sessions::Watching;
use crate::viewer::{rfb, ViewerError};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::BytesMut;
use computer_protocol::limits::SCREENS_MAX;
use computer_protocol::ScreenNumber;
use futures::{SinkExt, StreamExt};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bytes read from Xvnc per frame at most; a full-screen update arrives in
/// a few frames instead of thousands.
const READ_CHUNK: usize = 256 * 1024;

pub async fn bridge(
    State(app): State<ViewerState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(number): Path<String>,
    Query(query): Query<KeyQuery>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ViewerError> {
    app.guard
        .check_socket(client.ip(), origin(&headers), query.key.as_deref())?;
    let screen = parse_screen(number)?;
    let watching = app
        .sessions
        .watch_screen(screen)
        .ok_or(ViewerError::NoScreen(screen))?;
    let xvnc = rfb::connect(screen, &app.rfb_interface, watching.screen().rfb_port).await?;
    // websockify's clients ask for `binary`; noVNC asks for nothing.
    Ok(upgrade
        .protocols(["binary"])
        .on_upgrade(move |socket| pipe(socket, xvnc, watching)))
}

/// Screen `<n>` of a viewer path: a number from 1 to 16.
pub fn parse_screen(number: String) -> Result<ScreenNumber, ViewerError> {
    number
        .parse::<u8>()
        .ok()
        .filter(|n| (1..=SCREENS_MAX).contains(n))
        .map(ScreenNumber)
        .ok_or(ViewerError::BadScreen(number))
}

/// Copies both ways until either side closes. `_watching` counts the viewer
/// until then.
async fn pipe(socket: WebSocket, xvnc: TcpStream, _watching: Watching) {
    let (mut to_page, mut from_page) = socket.split();
    let (mut from_xvnc, mut to_xvnc) = xvnc.into_split();
    let upstream = async {
        while let Some(Ok(message)) = from_page.next().await {
            let data = match message {
                Message::Binary(data) => data,
                Message::Close(_) => break,
                // RFB is binary; text frames carry nothing for Xvnc.
                _ => continue,
            };
            if to_xvnc.write_all(&data).await.is_err() {
                break;
            }
        }
        let _ = to_xvnc.shutdown().await;
    };
    let downstream = async {
        let mut buffer = BytesMut::with_capacity(READ_CHUNK);
        loop {
            buffer.reserve(READ_CHUNK);
            match from_xvnc.read_buf(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let frame = Message::Binary(buffer.split().freeze());
                    if to_page.send(frame).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_page.send(Message::Close(None)).await;
    };
    tokio::select! {
        () = upstream => {}
        () = downstream => {}
    }
}
