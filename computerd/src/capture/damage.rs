//! What was drawn on the screen since the last grab, from an X DAMAGE
//! object on the root window: a grab then reads only those boxes into its
//! copy of the screen.
//!
//! Taking the damage (`DamageSubtract` into a region, then `FetchRegion`)
//! happens on the display's connection before the grab reads the boxes,
//! so anything drawn before the take is in what is read, and anything
//! drawn after it is in the next take: the copy is never older than one
//! take. The damage's own events come on that connection too; whoever
//! reads the connection's events drops them (`Display::drain_events`).

use crate::display::Display;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::cookie::Cookie;
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::damage::{self, ConnectionExt as _, Damage, ReportLevel};
use x11rb::protocol::xfixes::{self, ConnectionExt as _, FetchRegionReply};
use x11rb::protocol::xproto::Rectangle;
use x11rb::rust_connection::RustConnection;

/// A DAMAGE object on the root window and the region its damage moves to.
pub struct DamageWatch {
    damage: Damage,
    parts: xfixes::Region,
}

impl DamageWatch {
    /// Starts recording what is drawn on the root window from now on.
    /// `None` when the server lacks DAMAGE 1.1 or XFIXES 2: grabs then
    /// read the whole screen.
    pub fn start(display: &Display) -> Result<Option<DamageWatch>, ReplyOrIdError> {
        let conn = &display.conn;
        let present = |name| conn.extension_information(name).map(|e| e.is_some());
        if !present(damage::X11_EXTENSION_NAME)? || !present(xfixes::X11_EXTENSION_NAME)? {
            return Ok(None);
        }
        // Each client announces its versions before using either.
        let damage_version = conn.damage_query_version(1, 1)?;
        let xfixes_version = conn.xfixes_query_version(5, 0)?;
        let (d, x) = (damage_version.reply()?, xfixes_version.reply()?);
        if (d.major_version, d.minor_version) < (1, 1) || x.major_version < 2 {
            return Ok(None);
        }
        let damage = conn.generate_id()?;
        let parts = conn.generate_id()?;
        // NON_EMPTY: one event each time damage follows an empty state,
        // the fewest a level can send; they are dropped unread.
        conn.damage_create(damage, display.root, ReportLevel::NON_EMPTY)?;
        // A new DAMAGE object starts with the whole window damaged; the
        // grab that follows reads the whole screen anyway, so that damage
        // is dropped here rather than read a second time by the next grab.
        conn.damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
        conn.xfixes_create_region(parts, &[])?;
        Ok(Some(DamageWatch { damage, parts }))
    }

    /// Asks for the rectangles drawn since the start or the last take,
    /// and empties the damage; the answer comes with the caller's next
    /// replies, so this costs no round trip of its own.
    pub fn take<'c>(
        &self,
        conn: &'c RustConnection,
    ) -> Result<Cookie<'c, RustConnection, FetchRegionReply>, ConnectionError> {
        conn.damage_subtract(self.damage, x11rb::NONE, self.parts)?;
        conn.xfixes_fetch_region(self.parts)
    }

    /// Frees the server's objects (they also go when the connection
    /// closes).
    pub fn stop(self, conn: &RustConnection) {
        let _ = conn.damage_destroy(self.damage);
        let _ = conn.xfixes_destroy_region(self.parts);
    }
}

/// The answer to [`DamageWatch::take`] as its rectangles.
pub fn rectangles(
    cookie: Cookie<'_, RustConnection, FetchRegionReply>,
) -> Result<Vec<Rectangle>, ReplyError> {
    Ok(cookie.reply()?.rectangles)
}
