//! A native VNC client's handshake on a screen's host port (base + N): RFB
//! 3.8, VncAuth with the viewer key, and the server's first message, which
//! gives the screen's size.

use super::report::Outcome;
use crate::open::vnc_password::challenge_response;
use std::io;
use std::net::Ipv4Addr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VERSION: &[u8; 12] = b"RFB 003.008\n";
/// The security type of classic VNC authentication.
const VNC_AUTH: u8 = 2;

/// Why the handshake on a screen's port did not get as far as its size.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HandshakeError {
    #[error("cannot connect to 127.0.0.1:{port}: {source}")]
    Connect { port: u16, source: io::Error },
    #[error("the VNC server on 127.0.0.1:{port} hung up: {source}")]
    HungUp { port: u16, source: io::Error },
    #[error("127.0.0.1:{port} is no VNC server: it greeted with {greeting:?}")]
    NotVnc { port: u16, greeting: String },
    #[error("the VNC server refused us: {reason}")]
    Refused { reason: String },
    #[error("the VNC server does not ask for the password (security types {types:?}); anyone on this machine could watch the screen")]
    NoPassword { types: Vec<u8> },
    #[error("the VNC server refused the viewer key: {reason}")]
    KeyRefused { reason: String },
}

/// The screen's size as the VNC server gives it.
pub(crate) async fn handshake(port: u16, key: &str) -> Result<(u16, u16), HandshakeError> {
    let mut tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|source| HandshakeError::Connect { port, source })?;
    let io = |source| HandshakeError::HungUp { port, source };
    let mut greeting = [0u8; 12];
    tcp.read_exact(&mut greeting).await.map_err(io)?;
    if !greeting.starts_with(b"RFB 003.") {
        return Err(HandshakeError::NotVnc {
            port,
            greeting: String::from_utf8_lossy(&greeting).into_owned(),
        });
    }
    tcp.write_all(VERSION).await.map_err(io)?;
    let count = tcp.read_u8().await.map_err(io)?;
    if count == 0 {
        return Err(HandshakeError::Refused {
            reason: reason(&mut tcp).await,
        });
    }
    let mut types = vec![0u8; usize::from(count)];
    tcp.read_exact(&mut types).await.map_err(io)?;
    if !types.contains(&VNC_AUTH) {
        return Err(HandshakeError::NoPassword { types });
    }
    tcp.write_u8(VNC_AUTH).await.map_err(io)?;
    let mut challenge = [0u8; 16];
    tcp.read_exact(&mut challenge).await.map_err(io)?;
    tcp.write_all(&challenge_response(key, &challenge))
        .await
        .map_err(io)?;
    if tcp.read_u32().await.map_err(io)? != 0 {
        return Err(HandshakeError::KeyRefused {
            reason: reason(&mut tcp).await,
        });
    }
    // ClientInit: share the screen with the other viewers.
    tcp.write_u8(1).await.map_err(io)?;
    let width = tcp.read_u16().await.map_err(io)?;
    let height = tcp.read_u16().await.map_err(io)?;
    Ok((width, height))
}

/// The reason string that follows a refusal.
async fn reason(tcp: &mut TcpStream) -> String {
    let Ok(len) = tcp.read_u32().await else {
        return "no reason given".into();
    };
    let mut text = vec![0u8; len.min(1024) as usize];
    match tcp.read_exact(&mut text).await {
        Ok(_) => String::from_utf8_lossy(&text).into_owned(),
        Err(_) => "no reason given".into(),
    }
}

/// The check: the handshake succeeds and the size is the screen's.
pub(crate) async fn check(port: u16, key: &str, expected: (u32, u32)) -> Outcome {
    let fix =
        "the screen's VNC is Xvnc's, published by the container; see `docker logs <computer>`";
    match handshake(port, key).await {
        Ok((w, h)) if (u32::from(w), u32::from(h)) == expected => Outcome::ok(format!(
            "127.0.0.1:{port} took the viewer key (RFB 3.8, VncAuth) and serves a {w}x{h} screen"
        )),
        Ok((w, h)) => Outcome::err(
            format!(
                "127.0.0.1:{port} serves a {w}x{h} screen, not the spare screen's {}x{}",
                expected.0, expected.1
            ),
            "another program may serve this port; stop it, or set COMPUTER_USE_PORT_BASE",
        ),
        Err(e) => Outcome::err(e.to_string(), fix),
    }
}
