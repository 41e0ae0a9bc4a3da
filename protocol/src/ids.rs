//! Identifier newtypes, so a session id can never be passed where an owner id
//! belongs.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A session, made by computerd (a UUID in text form).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct SessionId(pub String);

/// The host process that owns sessions and sends their heartbeats.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct OwnerId(pub String);

/// A screenshot of one session; increases by one with every capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct FrameId(pub u64);

/// A screen of the computer, 1 to 16. Screen N is X display `:N` and VNC port
/// 5900+N inside the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct ScreenNumber(pub u8);

macro_rules! display_inner {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    )*};
}
display_inner!(SessionId, OwnerId, FrameId, ScreenNumber);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl OwnerId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
