//! The viewer: the page people open to watch and take over screens, its
//! live list of sessions, and the WebSocket bridge from noVNC to each
//! screen's Xvnc. It has a listener of its own (container port 6080,
//! published on the host's base port), apart from the token API.
//!
//! # Layout
//! - [`guard`]: who may talk to the viewer: the `Host` a browser used, the
//!   `Origin` of WebSocket upgrades, and the key.
//! - [`throttle`]: the count of wrong keys per client; a right key always
//!   passes.
//! - [`hub`]: the open pages, counted for the host, and the focus requests
//!   that switch them to a screen.
//! - [`link_codes`]: one-time codes the host opens links with, so the key
//!   is in no command line.
//! - [`live`]: the messages of the live channel (the session list, focus).
//! - [`rfb`]: where a screen's Xvnc answers.
//! - [`http`]: the axum side: static files, the live channel, the bridge.
//!   The only part of the viewer that knows axum.
//!
//! A page loads from [`http`], reads the list and then updates over the
//! live channel (woken by [`crate::sessions::Sessions::changes`]), and
//! opens `/api/screen/<n>`, which counts it as a viewer of that screen
//! ([`crate::sessions::Watching`]) and pipes its frames to Xvnc, where
//! noVNC authenticates with the key's first 8 characters, the VNC password.

mod error;
pub mod guard;
pub mod http;
pub mod hub;
pub mod link_codes;
pub mod live;
pub mod rfb;
pub mod throttle;

pub use error::ViewerError;
pub use guard::Guard;
pub use hub::{PageGuard, ViewerHub};
