//! Screen capture (STUB: being written; the signatures are the contract).

use crate::display::Display;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("capture of display :{display} failed: {reason}")]
    Failed { display: u32, reason: String },
}

/// One screenshot: tightly packed RGB8 rows, top to bottom.
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Frame {
    /// A hash of the pixels, to tell whether anything changed between frames.
    pub fn fingerprint(&self) -> u64 {
        0
    }
}

/// Grabs frames of one display, reusing a shared-memory segment when MIT-SHM works.
pub struct Capturer {}

impl Capturer {
    pub fn new(_display: &Display) -> Capturer {
        Capturer {}
    }

    pub fn grab(&mut self, display: &Display) -> Result<Frame, CaptureError> {
        Err(CaptureError::Failed { display: display.number, reason: "not built yet".into() })
    }
}

pub fn encode_png(_frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    Ok(Vec::new())
}

pub fn cursor_position(_display: &Display) -> Result<(i32, i32), CaptureError> {
    Ok((0, 0))
}

pub fn active_window_title(_display: &Display) -> Result<Option<String>, CaptureError> {
    Ok(None)
}
