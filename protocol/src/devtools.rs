//! `start_chrome_devtools` and `stop_chrome_devtools`: Chrome DevTools' own
//! MCP tools for a screen's browser, bridged so the agent calls them
//! through `shell` with `mcpc`.

use crate::error::InvalidInput;
use serde::{Deserialize, Serialize};

/// `start_chrome_devtools`: the host's `COMPUTER_USE_DEVTOOLS_IDLE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevToolsStartRequest {
    /// The bridge stops by itself after this many seconds without calls.
    pub idle_secs: u64,
}

impl DevToolsStartRequest {
    /// Refuses a bridge that would stop before its first call.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if self.idle_secs == 0 {
            return Err(InvalidInput(
                "`idle_secs` is 0: the bridge needs at least 1 second without calls before it stops"
                    .to_string(),
            ));
        }
        Ok(())
    }
}

/// One tool the bridge offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DevToolsTool {
    pub name: String,
    /// The first line of its description.
    pub summary: String,
    /// True when it needs a `pageId` from `list_pages`.
    pub needs_page_id: bool,
}

/// A running bridge for the session's screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DevToolsStarted {
    /// The screen number N; the bridge is `@cdt-N`.
    pub screen: crate::ScreenNumber,
    /// `@cdt-N`, the name `mcpc` takes.
    pub bridge: String,
    /// `started`, `already running` or `restarted`.
    pub state: String,
    /// The browser's DevTools port inside the computer (9221 + N).
    pub devtools_port: u16,
    /// Seconds without calls after which the bridge stops by itself.
    pub idle_stop_secs: u64,
    pub tools: Vec<DevToolsTool>,
}

/// What `stop_chrome_devtools` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DevToolsStopped {
    pub bridge: String,
    /// False when no bridge ran.
    pub was_running: bool,
}
