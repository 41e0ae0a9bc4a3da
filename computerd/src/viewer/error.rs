//! Why the viewer refused a request.

use computer_protocol::ScreenNumber;

#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// DNS rebinding: a page of another site reached us under its own name.
    #[error("the viewer answers only at {allowed}, not at `{host}`; open the viewer link that `computer-use-mcp info` prints")]
    ForeignHost { host: String, allowed: String },
    #[error(
        "a WebSocket from `{origin}` is refused: only the viewer page at {allowed} may connect"
    )]
    ForeignOrigin { origin: String, allowed: String },
    #[error("missing or wrong viewer key: open the viewer link that `computer-use-mcp info` prints, which carries the key")]
    WrongKey,
    #[error("`{0}` is not a screen: use a screen number from 1 to 16")]
    BadScreen(String),
    #[error("screen {0} is not open: pick a screen from the list")]
    NoScreen(ScreenNumber),
    #[error("cannot reach the VNC server of screen {screen} at {address}: {source}")]
    Xvnc {
        screen: ScreenNumber,
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
}

impl ViewerError {
    /// The HTTP status this refusal is sent with.
    pub fn status(&self) -> u16 {
        match self {
            ViewerError::ForeignHost { .. }
            | ViewerError::ForeignOrigin { .. }
            | ViewerError::WrongKey => 403,
            ViewerError::BadScreen(_) => 400,
            ViewerError::NoScreen(_) => 404,
            ViewerError::Xvnc { .. } => 502,
        }
    }
}
