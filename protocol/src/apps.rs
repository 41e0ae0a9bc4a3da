//! Opening pages, files and applications on a session's screen
//! (`open_path`, `launch_app`, and the launcher behind the screen's menu).

use crate::observe::Observation;
use serde::{Deserialize, Serialize};

/// `open_path`: an http(s) URL, or a path on the computer (relative paths
/// start at the session's working folder, `~` is home).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPathRequest {
    pub target: String,
    /// The shape of the screenshot taken afterwards.
    #[serde(default)]
    pub frame: crate::frame::FrameOptions,
}

/// `launch_app`: `browser`, `terminal`, a `.desktop` entry name or a
/// program on `PATH`, with an optional URI to open in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchAppRequest {
    pub app: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The shape of the screenshot taken afterwards.
    #[serde(default)]
    pub frame: crate::frame::FrameOptions,
}

/// What `open_path` and `launch_app` did, and the screen afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenedResponse {
    /// One sentence for the agent: what opened where, and whether it was
    /// ready (a page loaded, a window shown) or its deadline passed.
    pub summary: String,
    /// True when the page loaded or the window appeared in time.
    pub ready: bool,
    pub observation: Observation,
}

/// The launcher's request (container port 7071): the Fluxbox menu and
/// `xdg-open` ask computerd to open an app on the screen of `display`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LauncherRequest {
    /// `DISPLAY` of the caller, such as `:3`.
    pub display: String,
    pub app: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}
