//! Opening pages, files and applications on a session's screen
//! (`open_path`, `launch_app`, and the launcher behind the screen's menu).

use crate::error::InvalidInput;
use crate::observe::Observation;
use crate::settle::{default_settled, Settle, Settling};
use serde::{Deserialize, Serialize};

/// `settle_ms` of `open_path` and `launch_app` in fixed mode: none, as
/// they already wait for the page to load or the window to show.
pub const OPEN_SETTLE_DEFAULT_MS: u64 = 0;

/// How `open_path` and `launch_app` wait before their screenshot, once the
/// page loaded or the window showed; as in `computer_act`, what is left
/// out takes its mode's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenSettle {
    #[serde(default)]
    pub settle: Settle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
}

impl OpenSettle {
    /// Nothing asked for (what an older host sends).
    pub fn is_default(&self) -> bool {
        *self == OpenSettle::default()
    }

    pub fn settling(&self) -> Settling {
        Settling::resolve(
            self.settle,
            self.settle_ms,
            self.quiet_ms,
            OPEN_SETTLE_DEFAULT_MS,
        )
    }
}

/// `open_path`: an http(s) URL, or a path on the computer (relative paths
/// start at the session's working folder, `~` is home).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenPathRequest {
    pub target: String,
    /// The shape of the screenshot taken afterwards.
    #[serde(default)]
    pub frame: crate::frame::FrameOptions,
    /// When the screenshot is taken.
    #[serde(default, skip_serializing_if = "OpenSettle::is_default")]
    pub settling: OpenSettle,
}

impl OpenPathRequest {
    /// Checks the options before anything opens.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if self.target.trim().is_empty() {
            return Err(InvalidInput(
                "`target` is empty: give an http(s) URL or a path on the computer".to_string(),
            ));
        }
        self.settling.settling().validate()?;
        self.frame.validate()
    }
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
    /// When the screenshot is taken.
    #[serde(default, skip_serializing_if = "OpenSettle::is_default")]
    pub settling: OpenSettle,
}

impl LaunchAppRequest {
    /// Checks the options before anything starts.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if self.app.trim().is_empty() {
            return Err(InvalidInput("`app` is empty: give `browser`, `terminal`, an installed app's name or a program on PATH".to_string()));
        }
        self.settling.settling().validate()?;
        self.frame.validate()
    }
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
    /// False when the wait for a still screen ran out while it still
    /// changed (quiet mode); true otherwise.
    #[serde(default = "default_settled")]
    pub settled: bool,
    /// How long computerd waited after it opened, before the screenshot.
    #[serde(default)]
    pub settle_waited_ms: u64,
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

/// The launcher's clipboard request: put the text of the file at `path`
/// on the clipboard of the screen of `display`, for a paste. The agent's
/// shell cannot itself (its X cookie is untrusted), so
/// `computer-use-launch clipboard` asks computerd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipboardRequest {
    /// `DISPLAY` of the caller, such as `:3`.
    pub display: String,
    /// An absolute path inside the computer.
    pub path: String,
}

/// The launcher's run request: start `argv` on the screen of `display` as
/// a desktop program (with the desktop's X cookie), detached.
/// `computer-use-launch run` sends it, for GUI programs the shell's own
/// untrusted X cookie cannot run (GTK 4, Qt 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// `DISPLAY` of the caller, such as `:3`.
    pub display: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(json: &str) -> OpenPathRequest {
        serde_json::from_str(json).expect("valid request")
    }

    #[test]
    fn settling_defaults_to_no_extra_wait_and_quiet_to_its_own() {
        let fixed = open(r#"{"target":"a.html"}"#).settling.settling();
        assert_eq!((fixed.settle, fixed.settle_ms), (Settle::Fixed, 0));
        let quiet = open(r#"{"target":"a.html","settling":{"settle":"quiet"}}"#)
            .settling
            .settling();
        assert_eq!((quiet.settle_ms, quiet.quiet_ms), (3000, 250));
    }

    #[test]
    fn settle_limits_are_computer_acts() {
        let err = open(r#"{"target":"a","settling":{"settle_ms":5001}}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert_eq!(err, "`settle_ms` is 5001: the limit is 5000 ms");
        let launch: LaunchAppRequest = serde_json::from_str(
            r#"{"app":"terminal","settling":{"settle":"quiet","quiet_ms":3000}}"#,
        )
        .unwrap();
        let err = launch.validate().unwrap_err().to_string();
        assert!(
            err.starts_with("`quiet_ms` is 3000: use 50 to 2000 ms"),
            "{err}"
        );
        assert!(serde_json::from_str::<OpenPathRequest>(
            r#"{"target":"a","settling":{"quiet":1}}"#
        )
        .is_err());
    }
}
