//! The screenshot payload of `computer_observe`, also returned by `computer_act`.

use crate::ids::FrameId;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cursor {
    pub x: i32,
    pub y: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Observation {
    pub frame_id: FrameId,
    /// RFC 3339, UTC.
    pub captured_at: String,
    pub width: u32,
    pub height: u32,
    pub cursor: Cursor,
    /// Title of the focused window, if any.
    pub active_window: Option<String>,
    /// True when the screen is the same as in this session's previous
    /// screenshot; `png_base64` is then left out.
    pub unchanged: bool,
    /// The screen as PNG, base64 encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub png_base64: Option<String>,
}
