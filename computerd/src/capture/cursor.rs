//! Where the pointer is, for an observation.

use super::CaptureError;
use crate::display::Display;
use x11rb::protocol::xproto::ConnectionExt as _;

/// Where the pointer is, in root (screen) coordinates.
pub fn cursor_position(display: &Display) -> Result<(i32, i32), CaptureError> {
    let reply = display
        .conn
        .query_pointer(display.root)
        .map_err(CaptureError::send(display.number))?
        .reply()
        .map_err(CaptureError::request(display.number))?;
    Ok((i32::from(reply.root_x), i32::from(reply.root_y)))
}
