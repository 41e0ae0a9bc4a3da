//! Every route of computerd's API, described once: its method, its path,
//! what it acts on (nothing, a session or an owner), the JSON it takes, the
//! JSON it answers and how large that answer may be.
//!
//! computerd mounts its router from these descriptions and the host's
//! client calls through them, so a path, a method or a body type cannot
//! differ between the two sides. A failing route answers a
//! [`crate::WireError`] instead of its response.

use crate::ids::{OwnerId, SessionId};
use crate::limits::{ANSWER_FRAME, ANSWER_LISTING, ANSWER_SMALL};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// What a route acts on, and how it fills the route's path pattern.
pub trait PathKey {
    /// The path of `pattern` for this key.
    fn fill(&self, pattern: &str) -> String;
}

/// Routes of the whole computer.
impl PathKey for () {
    fn fill(&self, pattern: &str) -> String {
        pattern.to_string()
    }
}

/// Routes of one session: `{id}` in the pattern.
impl PathKey for SessionId {
    fn fill(&self, pattern: &str) -> String {
        pattern.replace("{id}", self.as_str())
    }
}

/// Routes of one owner: `{owner}` in the pattern.
impl PathKey for OwnerId {
    fn fill(&self, pattern: &str) -> String {
        pattern.replace("{owner}", &self.0)
    }
}

/// Routes of one recording: `{recording}` in the pattern.
impl PathKey for crate::recording::RecordingId {
    fn fill(&self, pattern: &str) -> String {
        pattern.replace("{recording}", &self.0)
    }
}

/// The body of a route that takes none; sent as `{}` when the method
/// carries a body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoBody {}

/// One route of the API.
pub trait Endpoint {
    const METHOD: Method;
    /// The path pattern, in the router's syntax (`/v1/sessions/{id}/act`).
    const PATH: &'static str;
    /// What the path names.
    type Key: PathKey;
    /// The JSON body (or, for the streaming upload, the query).
    type Request: Serialize + DeserializeOwned;
    /// The JSON answer. Streaming routes name the type of their metadata
    /// and describe the stream in their docs.
    type Response: Serialize + DeserializeOwned;
    /// Most bytes of the answer the host reads: [`ANSWER_SMALL`] unless
    /// the answer carries more (a listing, a screenshot).
    const ANSWER_MAX: usize;

    /// The concrete path for `key`.
    fn path(key: &Self::Key) -> String {
        key.fill(Self::PATH)
    }
}

/// An answer's size limit: the one given, or [`ANSWER_SMALL`].
macro_rules! answer_max {
    () => {
        ANSWER_SMALL
    };
    ($max:expr) => {
        $max
    };
}

macro_rules! endpoints {
    ($(
        $(#[$doc:meta])*
        $name:ident: $method:ident $path:literal, $key:ty, $request:ty => $response:ty $(, up to $max:expr)?;
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl Endpoint for $name {
            const METHOD: Method = Method::$method;
            const PATH: &'static str = $path;
            type Key = $key;
            type Request = $request;
            type Response = $response;
            const ANSWER_MAX: usize = answer_max!($($max)?);
        }
    )*};
}

endpoints! {
    /// Unauthenticated liveness probe.
    GetHealth: Get "/health", (), NoBody => crate::Health;
    /// What the computer is: version, boot id, screens, viewer key.
    GetComputer: Get "/v1/computer", (), NoBody => crate::ComputerInfo;
    /// Every session.
    ListSessions: Get "/v1/sessions", (), NoBody => crate::SessionsResponse;
    CreateSession: Post "/v1/sessions", (), crate::CreateSessionRequest => crate::CreateSessionResponse;
    EndSession: Delete "/v1/sessions/{id}", SessionId, NoBody => crate::EndSessionResponse;
    /// Keeps every session of an owner alive.
    Heartbeat: Post "/v1/owners/{owner}/heartbeat", OwnerId, NoBody => crate::HeartbeatResponse;
    /// Ends every session of an owner at once (its host is going away).
    EndOwnerSessions: Delete "/v1/owners/{owner}/sessions", OwnerId, NoBody => crate::HeartbeatResponse;
    Observe: Post "/v1/sessions/{id}/observe", SessionId, crate::ObserveRequest => crate::Observation, up to ANSWER_FRAME;
    Act: Post "/v1/sessions/{id}/act", SessionId, crate::ActRequest => crate::ActResponse, up to ANSWER_FRAME;
    OpenPath: Post "/v1/sessions/{id}/open", SessionId, crate::OpenPathRequest => crate::OpenedResponse, up to ANSWER_FRAME;
    LaunchApp: Post "/v1/sessions/{id}/launch", SessionId, crate::LaunchAppRequest => crate::OpenedResponse, up to ANSWER_FRAME;
    DevToolsStart: Post "/v1/sessions/{id}/devtools/start", SessionId, crate::DevToolsStartRequest => crate::DevToolsStarted;
    DevToolsStop: Post "/v1/sessions/{id}/devtools/stop", SessionId, NoBody => crate::DevToolsStopped;
    Shell: Post "/v1/sessions/{id}/shell", SessionId, crate::ShellRequest => crate::ShellResult;
    SetCwd: Post "/v1/sessions/{id}/cwd", SessionId, crate::SetCwdRequest => crate::SetCwdResponse;
    ListFiles: Post "/v1/sessions/{id}/files/list", SessionId, crate::ListFilesRequest => crate::ListFilesResponse, up to ANSWER_LISTING;
    ReadFile: Post "/v1/sessions/{id}/files/read", SessionId, crate::ReadFileRequest => crate::ReadFileResponse, up to ANSWER_LISTING;
    WriteFile: Post "/v1/sessions/{id}/files/write", SessionId, crate::WriteFileRequest => crate::WriteFileResponse;
    /// Where an upload would land; refused early when it may not.
    TransferCheck: Post "/v1/sessions/{id}/transfer/check", SessionId, crate::UploadRequest => crate::UploadTarget;
    /// What a download would send.
    TransferSource: Post "/v1/sessions/{id}/transfer/source", SessionId, crate::SourceRequest => crate::TransferSource;
    /// The request goes in the query and the body is a tar stream.
    TransferUpload: Post "/v1/sessions/{id}/transfer/upload", SessionId, crate::UploadRequest => crate::TransferSummary, up to ANSWER_LISTING;
    /// Answers a tar stream (`application/x-tar`); its response type is
    /// what the stream holds, as the source route described it.
    TransferDownload: Post "/v1/sessions/{id}/transfer/download", SessionId, crate::SourceRequest => crate::TransferSource;
    /// Starts recording the session's tool calls.
    StartRecording: Post "/v1/sessions/{id}/recording", SessionId, crate::recording::StartRecordingRequest => crate::recording::RecordingStarted;
    /// One tool call of a recording session.
    RecordStep: Post "/v1/sessions/{id}/recording/steps", SessionId, crate::recording::StepRecord => crate::recording::RecordingTally;
    /// Closes the recording and builds its package.
    StopRecording: Post "/v1/sessions/{id}/recording/stop", SessionId, NoBody => crate::recording::RecordingPackage;
    /// Every recording kept in the computer.
    ListRecordings: Get "/v1/recordings", (), NoBody => crate::recording::RecordingsResponse;
    /// Deletes an ended recording's files.
    DeleteRecording: Delete "/v1/recordings/{recording}", crate::recording::RecordingId, NoBody => crate::recording::RecordingDeleted;
    /// Builds the package of a recording (closed, or up to its last step).
    PackageRecording: Post "/v1/recordings/{recording}/package", crate::recording::RecordingId, NoBody => crate::recording::RecordingPackage;
    /// Asks a person to take the session's screen.
    RequestHandoff: Post "/v1/sessions/{id}/handoff", SessionId, crate::handoff::HandoffRequest => crate::handoff::HandoffStarted;
    /// Waits up to `wait_ms` for the hold to end; an ended hold is answered once.
    /// Its status has room for a screenshot (the host fills it in today).
    WaitHandoff: Post "/v1/sessions/{id}/handoff/wait", SessionId, crate::handoff::HandoffWaitRequest => crate::handoff::HandoffStatus, up to ANSWER_FRAME;
    /// The agent takes the screen back.
    CancelHandoff: Post "/v1/sessions/{id}/handoff/cancel", SessionId, NoBody => crate::handoff::HandoffStatus, up to ANSWER_FRAME;
    /// How many viewer pages are open.
    GetViewer: Get "/v1/viewer", (), NoBody => crate::ViewerStatus;
    /// Open viewer pages switch to a screen.
    FocusViewer: Post "/v1/viewer/focus", (), crate::FocusRequest => crate::ViewerStatus;
    /// A one-time code for a viewer link the host opens.
    IssueViewerCode: Post "/v1/viewer/code", (), NoBody => crate::ViewerCode;
}

/// `POST` a [`crate::LauncherRequest`] on the launcher's own listener
/// (container port 7071, loopback only), which programs on a screen call
/// through `computer-use-launch` rather than the host.
pub const LAUNCH: &str = "/launch";

/// `POST` a [`crate::ClipboardRequest`] on the launcher's listener:
/// `computer-use-launch clipboard` puts a file's text on the screen's
/// clipboard through it.
pub const CLIPBOARD: &str = "/clipboard";

/// `POST` a [`crate::RunRequest`] on the launcher's listener:
/// `computer-use-launch run` starts a program as a desktop program.
pub const RUN: &str = "/run";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fill_their_patterns() {
        let id = SessionId::parse("0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30").unwrap();
        assert_eq!(
            Act::path(&id),
            "/v1/sessions/0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30/act"
        );
        assert_eq!(
            Heartbeat::path(&OwnerId("host-1-ab".into())),
            "/v1/owners/host-1-ab/heartbeat"
        );
        assert_eq!(ListSessions::path(&()), "/v1/sessions");
        assert_eq!(EndSession::METHOD, Method::Delete);
    }

    #[test]
    fn answers_that_carry_a_screenshot_may_be_as_large_as_one() {
        for max in [
            Observe::ANSWER_MAX,
            Act::ANSWER_MAX,
            OpenPath::ANSWER_MAX,
            LaunchApp::ANSWER_MAX,
            WaitHandoff::ANSWER_MAX,
            CancelHandoff::ANSWER_MAX,
        ] {
            assert_eq!(max, ANSWER_FRAME);
        }
        assert_eq!(ReadFile::ANSWER_MAX, ANSWER_LISTING);
        assert_eq!(Shell::ANSWER_MAX, ANSWER_SMALL);
        assert_eq!(GetComputer::ANSWER_MAX, ANSWER_SMALL);
    }

    #[test]
    fn no_body_is_an_empty_object() {
        assert_eq!(serde_json::to_string(&NoBody {}).unwrap(), "{}");
        assert!(serde_json::from_str::<NoBody>(r#"{"x":1}"#).is_err());
    }
}
