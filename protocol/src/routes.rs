//! Paths of the computerd API. Both sides build paths here so they cannot drift.

use crate::ids::{OwnerId, SessionId};

/// Unauthenticated liveness probe; answers [`crate::Health`].
pub const HEALTH: &str = "/health";
/// `GET`: [`crate::ComputerInfo`].
pub const COMPUTER: &str = "/v1/computer";
/// `GET`: list sessions; `POST`: create one.
pub const SESSIONS: &str = "/v1/sessions";
/// `GET`: [`crate::ViewerStatus`], how many viewer pages are open.
pub const VIEWER: &str = "/v1/viewer";
/// `POST` a [`crate::FocusRequest`]: open viewer pages switch to a screen.
pub const VIEWER_FOCUS: &str = "/v1/viewer/focus";
/// `POST` a [`crate::LauncherRequest`] on the launcher's own listener
/// (container port 7071, loopback only).
pub const LAUNCH: &str = "/launch";

/// `DELETE`: end a session.
pub fn session(id: &SessionId) -> String {
    format!("/v1/sessions/{id}")
}

/// `POST`: heartbeat for every session of an owner.
pub fn heartbeat(owner: &OwnerId) -> String {
    format!("/v1/owners/{owner}/heartbeat")
}

/// `DELETE`: end every session of an owner at once (host shutdown).
pub fn owner_sessions(owner: &OwnerId) -> String {
    format!("/v1/owners/{owner}/sessions")
}

/// `POST` routes of one session, named by their last path segment.
pub fn session_action(id: &SessionId, action: SessionRoute) -> String {
    format!("/v1/sessions/{id}/{}", action.segment())
}

/// The per-session `POST` routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRoute {
    Observe,
    Act,
    Shell,
    Cwd,
    ListFiles,
    ReadFile,
    WriteFile,
    /// [`crate::UploadRequest`] → [`crate::UploadTarget`]: where an upload
    /// would land, refused early when it may not.
    TransferCheck,
    /// [`crate::SourceRequest`] → [`crate::TransferSource`]: what a
    /// download would send.
    TransferSource,
    /// Query [`crate::UploadRequest`], body a tar stream →
    /// [`crate::TransferSummary`].
    TransferUpload,
    /// [`crate::SourceRequest`] → a tar stream (`application/x-tar`).
    TransferDownload,
    /// [`crate::OpenPathRequest`] → [`crate::OpenedResponse`].
    OpenPath,
    /// [`crate::LaunchAppRequest`] → [`crate::OpenedResponse`].
    LaunchApp,
    /// [`crate::DevToolsStartRequest`] → [`crate::DevToolsStarted`].
    DevToolsStart,
    /// `{}` → [`crate::DevToolsStopped`].
    DevToolsStop,
}

impl SessionRoute {
    pub fn segment(self) -> &'static str {
        match self {
            SessionRoute::Observe => "observe",
            SessionRoute::Act => "act",
            SessionRoute::Shell => "shell",
            SessionRoute::Cwd => "cwd",
            SessionRoute::ListFiles => "files/list",
            SessionRoute::ReadFile => "files/read",
            SessionRoute::WriteFile => "files/write",
            SessionRoute::TransferCheck => "transfer/check",
            SessionRoute::TransferSource => "transfer/source",
            SessionRoute::TransferUpload => "transfer/upload",
            SessionRoute::TransferDownload => "transfer/download",
            SessionRoute::OpenPath => "open",
            SessionRoute::LaunchApp => "launch",
            SessionRoute::DevToolsStart => "devtools/start",
            SessionRoute::DevToolsStop => "devtools/stop",
        }
    }
}
