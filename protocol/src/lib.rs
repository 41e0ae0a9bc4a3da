//! Request and response types of the computerd API, shared by the host binary
//! (`computer-use-mcp`) and the daemon inside the computer (`computerd`).
//!
//! # Layout
//! - [`endpoints`]: every route of the API: method, path, request and
//!   response, used by computerd's router and the host's client alike.
//! - [`ids`]: newtypes for session, owner, frame and screen identifiers.
//! - [`error`]: the one wire error `{code, message}` every failing route returns.
//! - [`duration`]: the `90`, `90s`, `2m`, `1h` duration forms used by timeouts.
//! - [`limits`]: the numeric limits of the tool contract, in one place.
//! - [`secret`]: the API token, the viewer key and other secrets, hidden from
//!   `Debug`.
//! - [`session`]: creating, listing, ending sessions, heartbeats, health.
//! - [`observe`]: the screenshot payload shared by observe and act.
//! - [`frame`]: a screenshot's bound, format and region, and the transform
//!   from a frame's pixels to the screen's.
//! - [`textview`]: the text view of a screen (windows, accessibility
//!   trees, refs) and its compact rendering.
//! - [`action`]: the actions of `computer_act` and their validation.
//! - [`settle`]: when an acting tool takes its screenshot (fixed or quiet).
//! - [`shell`]: running a command.
//! - [`apps`]: opening pages, files and applications on a screen.
//! - [`devtools`]: the DevTools bridge of a screen's browser.
//! - [`files`]: working folder, listing, reading and writing files.
//! - [`paths`]: normalising typed paths, the same on both ends.
//! - [`network`]: the computer's network policy (egress mode, allow-list,
//!   exceptions to containment) and its connection log.
//! - [`handoff`]: a person taking a screen from its agent and handing it
//!   back.
//! - [`recording`]: recordings of what an agent did, their steps, and
//!   the walkthrough package they become.
//! - [`viewer`]: open viewer pages, switching them to a screen, and the
//!   viewer key rule both sides check.
//! - [`transfer`]: `file_transfer`'s messages and the pure rules both ends
//!   apply to its archive; with the `archive` feature, [`archive`] writes
//!   and reads that archive on real files.
//!
//! Data flows one way: the host builds a request type, serialises it as JSON to a
//! `/v1/...` route (each described once in [`endpoints`]), and computerd answers with the matching
//! response type or a [`WireError`]. Requests refuse unknown fields so that a typo
//! in a field name is an error, not a silently ignored option.
//!
//! With the `schema` feature every request type also derives
//! `schemars::JsonSchema`, so the host can publish them as MCP tool inputs.

// What runs never unwraps: a failure is an error its caller can tell
// about. Unit tests may (clippy.toml).
#![deny(clippy::unwrap_used)]

pub mod action;
pub mod apps;
pub mod devtools;
pub mod duration;
pub mod effects;
pub mod endpoints;
pub mod error;
pub mod files;
pub mod frame;
pub mod handoff;
pub mod ids;
pub mod limits;
pub mod network;
pub mod observe;
pub mod paths;
pub mod recording;
pub mod screen_size;
pub mod secret;
pub mod session;
pub mod settle;
pub mod shell;
pub mod textview;
pub mod transfer;
pub mod viewer;

#[cfg(feature = "archive")]
pub mod archive;

pub use action::{
    ActRequest, ActResponse, Action, ActionKind, ActionOutcome, Button, ScrollDirection, Settle,
};
pub use apps::{
    ClipboardRequest, LaunchAppRequest, LauncherRequest, OpenPathRequest, OpenSettle,
    OpenedResponse, RunRequest,
};
pub use devtools::{DevToolsStartRequest, DevToolsStarted, DevToolsStopped, DevToolsTool};
pub use duration::{parse_duration, DurationError, TimeoutArg};
pub use effects::ActionEffect;
pub use error::{Coded, ErrorCode, InvalidInput, WireError};
pub use files::{
    FileEntry, FileType, ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse,
    SetCwdRequest, SetCwdResponse, WriteFileRequest, WriteFileResponse,
};
pub use frame::{FrameOptions, FrameTransform, ImageFormat, ObserveRequest, Region};
pub use ids::{BadSessionId, FrameId, OwnerId, ScreenNumber, SessionId};
pub use observe::{Cursor, Observation};
pub use screen_size::{BadScreenSize, ScreenSize};
pub use secret::{Hidden, Token, ViewerKey};
pub use session::{
    no_such_session, ComputerInfo, CreateSessionRequest, CreateSessionResponse, EndReason,
    EndSessionResponse, Health, HeartbeatResponse, SessionInfo, SessionSettings, SessionsResponse,
};
pub use settle::Settling;
pub use shell::{ShellRequest, ShellResult};
pub use textview::{
    cut_field, Bounds, NodeState, PageCursor, PopupEntry, TextNode, TextView, TextViewOptions,
    TreeSource, View, WindowEntry,
};
pub use transfer::{
    Caution, CautionKind, ItemKind, SkipKind, Skipped, SourceRequest, TransferDirection,
    TransferSource, TransferSummary, UploadRequest, UploadTarget,
};
pub use viewer::{
    check_viewer_key, code_link, is_valid_viewer_key, viewer_link, vnc_password, FocusRequest,
    InvalidViewerKey, ViewerCode, ViewerStatus,
};

/// Version of the HTTP API; routes live under `/v1`.
pub const API_VERSION: &str = "v1";
