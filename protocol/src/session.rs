//! Sessions: creating, listing, ending, heartbeats, and the health probe.

use crate::error::InvalidInput;
use crate::ids::{OwnerId, ScreenNumber, SessionId};
use crate::limits::TITLE_MAX_CHARS;
use serde::{Deserialize, Serialize};

/// `POST /v1/sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionRequest {
    /// Shown in the viewer's sidebar; 1 to 80 characters.
    pub title: String,
    /// The host process that keeps this session alive with heartbeats.
    pub owner: OwnerId,
    /// Settings the host read from its environment when `start_computer` ran;
    /// computerd's own defaults fill what is missing.
    #[serde(default)]
    pub settings: SessionSettings,
    /// The id to start the session under: the host's own session, carried
    /// over a restore of the computer, whose computerd is new and knows no
    /// sessions. Refused when this computerd has used it (and, as every
    /// session id, when it is no UUID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<SessionId>,
}

impl CreateSessionRequest {
    /// Checks the title; the message names the field and the limit.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        let chars = self.title.chars().count();
        if self.title.trim().is_empty() {
            return Err(InvalidInput(format!(
                "`title` is empty: give the session a title of 1 to {TITLE_MAX_CHARS} characters"
            )));
        }
        if chars > TITLE_MAX_CHARS {
            return Err(InvalidInput(format!(
                "`title` has {chars} characters: the limit is {TITLE_MAX_CHARS}; shorten it"
            )));
        }
        Ok(())
    }
}

/// Per-session settings. Every field is optional on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    /// Screen size as `<width>x<height>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_size: Option<String>,
    /// Idle time after which the session ends, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// Default `shell` timeout, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_timeout_secs: Option<u64>,
    /// Longest `shell` timeout an agent may ask for, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_timeout_max_secs: Option<u64>,
    /// The computer stops (computerd exits) once it has had no session and
    /// no watched screen for this many seconds (`COMPUTER_USE_IDLE_STOP`);
    /// the newest session's word holds. Unset: it never stops by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_stop_secs: Option<u64>,
    /// The owner's sessions end this many seconds after its last heartbeat
    /// (`COMPUTER_USE_HEARTBEAT_WINDOW`), between
    /// [`crate::limits::HEARTBEAT_WINDOW_MIN_SECS`] and
    /// [`crate::limits::HEARTBEAT_WINDOW_MAX_SECS`]; the owner's newest
    /// session sets it. Unset: computerd's own (`COMPUTERD_HEARTBEAT_GRACE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_window_secs: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateSessionResponse {
    pub session_id: SessionId,
    /// The session's working folder (home at first).
    pub cwd: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndSessionResponse {
    pub session_id: SessionId,
    /// The session's screen, if it had one. It closes now, or when its last
    /// viewer leaves if someone is watching it.
    pub screen: Option<ScreenNumber>,
}

/// Why a session ended; kept after the end so later calls can say why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// No agent call for the idle timeout.
    Idle,
    /// The owning host process stopped sending heartbeats.
    HeartbeatLost,
    /// `end_session`, or the host shutting down.
    EndedByAgent,
    /// The computer (container or computerd) restarted.
    ComputerRestarted,
}

/// A sentence for the agent about a session id that names no session. A
/// host says the same of a session another of its clients started, so the
/// two cannot be told apart.
pub fn no_such_session(id: &SessionId) -> String {
    format!("there is no session `{id}`; call start_computer to get a session id")
}

impl EndReason {
    /// A sentence for the agent: why the session ended and what to do.
    pub fn explain(self, id: &SessionId) -> String {
        let why = match self {
            EndReason::Idle => "it was idle for longer than COMPUTER_USE_IDLE_TIMEOUT",
            EndReason::HeartbeatLost => "the MCP server that started it stopped sending heartbeats",
            EndReason::EndedByAgent => "it was ended with end_session",
            EndReason::ComputerRestarted => "the computer restarted",
        };
        format!("session `{id}` has ended because {why}; call start_computer to get a new session")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session_id: SessionId,
    pub title: String,
    pub owner: OwnerId,
    /// RFC 3339.
    pub started_at: String,
    pub screen: Option<ScreenNumber>,
    pub viewers: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsResponse {
    pub sessions: Vec<SessionInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    /// Live sessions of this owner.
    pub sessions: u32,
}

/// `GET /health`, the only unauthenticated route: liveness and version only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub version: String,
}

/// `GET /v1/computer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputerInfo {
    pub version: String,
    /// Changes whenever computerd starts; lets the host tell "the computer
    /// restarted" from "unknown session".
    pub boot_id: String,
    /// The viewer key, also the VNC password.
    pub viewer_key: crate::secret::ViewerKey,
    pub home: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_leaves_the_viewer_key_out() {
        let info = ComputerInfo {
            version: "0.4.0".into(),
            boot_id: "boot-1".into(),
            viewer_key: crate::secret::ViewerKey::new("k3y-0123456789"),
            home: "/home/user".into(),
        };
        let shown = format!("{info:?}");
        assert!(!shown.contains("k3y-0123456789"), "{shown}");
        assert!(
            shown.contains("boot-1") && shown.contains("(hidden)"),
            "{shown}"
        );
    }
}
