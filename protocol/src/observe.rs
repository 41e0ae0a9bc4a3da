//! The screenshot payload of `computer_observe`, also returned by `computer_act`.

use crate::frame::{ImageFormat, Region};
use crate::ids::{FrameId, ScreenNumber};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cursor {
    pub x: i32,
    pub y: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Observation {
    /// The session's screen, the one the viewer link names.
    pub screen: ScreenNumber,
    pub frame_id: FrameId,
    /// RFC 3339, UTC.
    pub captured_at: String,
    pub width: u32,
    pub height: u32,
    pub cursor: Cursor,
    /// Title of the focused window, if any.
    pub active_window: Option<String>,
    /// True when the screen is the same as in this session's previous
    /// screenshot (same region and size); the image is then left out.
    pub unchanged: bool,
    /// The frame's own size: the region scaled to fit the bounds.
    pub frame_width: u32,
    pub frame_height: u32,
    /// Frame pixels per screen pixel (1.0 when not scaled).
    pub scale: f64,
    /// The part of the screen shown.
    pub region: Region,
    pub format: ImageFormat,
    /// Encoded size of the image (0 when it is left out).
    pub bytes: usize,
    /// Why the frame is smaller or rougher than asked (kept under 1 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<String>,
    /// The image, base64 encoded, in `format`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub image_base64: Option<String>,
    /// The windows and one window's accessibility tree, when asked for
    /// with `view: text` or `both`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_view: Option<crate::textview::TextView>,
}
