//! Why the viewer refused a request.

use super::throttle::Throttled;
use computer_protocol::ScreenNumber;
use std::time::Duration;

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
    #[error("{}", too_many_wrong_keys(.0))]
    TooManyWrongKeys(Throttled),
    /// A one-time code that was used already, is over a minute old, or
    /// was never made.
    #[error("this viewer link was used already or is more than a minute old: it opens the viewer once. Open a screen again from your agent, or open the viewer link that `computer-use-mcp info` prints")]
    CodeUsed,
    #[error("`nonce` must be 32 to 128 lower-case hex digits")]
    BadNonce,
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
            | ViewerError::WrongKey
            | ViewerError::CodeUsed => 403,
            ViewerError::TooManyWrongKeys(_) => 429,
            ViewerError::BadScreen(_) | ViewerError::BadNonce => 400,
            ViewerError::NoScreen(_) => 404,
            ViewerError::Xvnc { .. } => 502,
        }
    }
}

impl ViewerError {
    /// How long a refused client should wait before trying again, sent as
    /// `Retry-After`.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ViewerError::TooManyWrongKeys(throttled) => Some(throttled.retry_after),
            _ => None,
        }
    }
}

/// Whole seconds, rounded up: a client that waits this long is let in.
pub fn whole_seconds(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

fn too_many_wrong_keys(t: &Throttled) -> String {
    format!(
        "too many wrong viewer keys from your address (the limit is {} within {} s): wait {} s before trying another, or open the viewer link that `computer-use-mcp info` prints, which carries the right key (a right key is always let in)",
        t.limit,
        t.window.as_secs(),
        whole_seconds(t.retry_after).max(1),
    )
}
