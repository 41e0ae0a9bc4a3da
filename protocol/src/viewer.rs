//! The viewer as the host sees it: how many viewer pages are open, and
//! asking them to show a screen that just opened.

use crate::ids::ScreenNumber;
use serde::{Deserialize, Serialize};

/// `GET /v1/viewer`, and the answer of `POST /v1/viewer/focus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerStatus {
    /// Viewer pages connected to computerd's live channel now. A best guess:
    /// a page in a browser that went to sleep may still count for a while.
    pub pages: u32,
}

/// `POST /v1/viewer/focus`: every open viewer page switches to `screen` and
/// highlights it in its sidebar. The answer says how many pages were told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FocusRequest {
    pub screen: ScreenNumber,
}
