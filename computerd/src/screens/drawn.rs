//! When a new screen's desktop is drawn. Xvnc starts with a black root
//! window and Fluxbox paints it some 100-300 ms later; a screen is handed to
//! an agent only after that, so its first look is the desktop it will work
//! on and not a black frame.
//!
//! The sign is two properties on the root window, read with one round trip
//! each, so polling costs next to nothing:
//! - `_NET_SUPPORTING_WM_CHECK`: Fluxbox manages the screen (set first);
//! - `_XROOTPMAP_ID`: the background was drawn. Fluxbox has `fbsetroot`
//!   paint the style's background (the image's overlay asks for a solid
//!   colour) and `fbsetroot` publishes its pixmap there, in the same burst
//!   of requests that clears the root window to it.
//!
//! Comparing pixels with the initial black was the other choice; it costs a
//! capture per poll and would wait forever for a desktop whose colour is
//! black, while the properties name what is missing when the wait fails.

use crate::display::{Display, XFault};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt};

/// How long Fluxbox may take to draw a new screen's desktop. It takes well
/// under a second; the margin is for a machine busy starting other screens.
pub const DESKTOP_DRAWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How often the root window is looked at while waiting.
pub const DESKTOP_DRAWN_POLL: std::time::Duration = std::time::Duration::from_millis(15);

/// What the root window still lacks, or `None` once the desktop is drawn.
pub fn desktop_not_drawn(display: &Display) -> Result<Option<&'static str>, XFault> {
    for (property, meaning) in [
        (
            "_NET_SUPPORTING_WM_CHECK",
            "Fluxbox did not take the screen (no `_NET_SUPPORTING_WM_CHECK` on the root window)",
        ),
        (
            "_XROOTPMAP_ID",
            "Fluxbox drew no background (no `_XROOTPMAP_ID` on the root window; its `fbsetroot` comes with the fluxbox package)",
        ),
    ] {
        if !root_has_property(display, property)? {
            return Ok(Some(meaning));
        }
    }
    Ok(None)
}

fn root_has_property(display: &Display, name: &str) -> Result<bool, XFault> {
    let conn = &display.conn;
    let fail =
        |e: &dyn std::fmt::Display| XFault::new(display.number, "reading the root window", e);
    let atom = conn
        .intern_atom(true, name.as_bytes())
        .map_err(|e| fail(&e))?
        .reply()
        .map_err(|e| fail(&e))?
        .atom;
    // An atom nobody created yet cannot name a property.
    if atom == u32::from(AtomEnum::NONE) {
        return Ok(false);
    }
    let reply = conn
        .get_property(false, display.root, atom, AtomEnum::ANY, 0, 1)
        .map_err(|e| fail(&e))?
        .reply()
        .map_err(|e| fail(&e))?;
    Ok(reply.type_ != u32::from(AtomEnum::NONE))
}
