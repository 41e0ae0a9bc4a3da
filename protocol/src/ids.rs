//! Identifier newtypes, so a session id can never be passed where an owner id
//! belongs.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A session, made by computerd: a UUID in its hyphenated form. Checked
/// wherever one is read ([`SessionId::parse`], serde), because an id
/// becomes part of a URL path, where `../` or `?` would reach other routes;
/// the field is private, so no id skips the check.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct SessionId(String);

/// Text that is not a session id; the message shows its start, escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shown:?} is not a session id: use the session_id that start_computer returned (a UUID such as 0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30)")]
pub struct BadSessionId {
    shown: String,
}

impl SessionId {
    /// A new random id (a version 4 UUID).
    pub fn new_random() -> SessionId {
        SessionId(uuid::Uuid::new_v4().hyphenated().to_string())
    }

    /// `text` as a session id, when it is a UUID in the hyphenated,
    /// lower-case form computerd makes (8-4-4-4-12 hex digits).
    pub fn parse(text: &str) -> Result<SessionId, BadSessionId> {
        let groups: Vec<&str> = text.split('-').collect();
        let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        let hex = text
            .bytes()
            .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if lengths == [8, 4, 4, 4, 12] && hex {
            return Ok(SessionId(text.to_string()));
        }
        let mut shown: String = text.chars().take(40).collect();
        if shown.len() < text.len() {
            shown.push('…');
        }
        Err(BadSessionId { shown })
    }
}

impl std::str::FromStr for SessionId {
    type Err = BadSessionId;

    fn from_str(text: &str) -> Result<SessionId, BadSessionId> {
        SessionId::parse(text)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SessionId, D::Error> {
        let text = String::deserialize(deserializer)?;
        SessionId::parse(&text).map_err(serde::de::Error::custom)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_a_hyphenated_uuid_however_it_is_read() {
        let id = SessionId::new_random();
        assert_eq!(SessionId::parse(id.as_str()), Ok(id.clone()));
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<SessionId>(&json).unwrap(), id);
        for bad in [
            "",
            "nope",
            "../../v1/computer",
            "0b8a3c1e5f2d4e7a9c612d4f8e9a7b30",
            "{0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30}",
            "0B8A3C1E-5F2D-4E7A-9C61-2D4F8E9A7B30",
            "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30-",
            "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b3?",
        ] {
            let e = SessionId::parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not a session id"), "{bad:?}: {e}");
            assert!(
                serde_json::from_value::<SessionId>(serde_json::json!(bad)).is_err(),
                "{bad:?}"
            );
        }
        let long = SessionId::parse(&"x".repeat(500)).unwrap_err().to_string();
        assert!(long.len() < 200 && long.contains('…'), "{long}");
    }
}
