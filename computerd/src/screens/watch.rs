//! A screen's second X connection, on which `computer_act` watches what
//! its actions change (the `desktop` module's effects). Opening one costs
//! more than a batch's watch, so the screen keeps it between batches; its
//! events never reach the screen's shared connection.

use crate::display::{Display, XFault};
use crate::windows::Atoms;
use x11rb::protocol::damage::ConnectionExt as _;

/// The watch's X connection with what was learnt on it once.
pub struct WatchConnection {
    pub display: Display,
    pub atoms: Atoms,
}

impl WatchConnection {
    /// Connects to `:number` and checks DAMAGE is there.
    pub fn open(number: u32) -> Result<WatchConnection, XFault> {
        let fail =
            |e: &dyn std::fmt::Display| XFault::new(number, "opening the watch connection", e);
        let display = Display::connect_once(number).map_err(|e| fail(&e))?;
        display
            .conn
            .damage_query_version(1, 1)
            .map_err(|e| fail(&e))?
            .reply()
            .map_err(|e| fail(&e))?;
        let atoms = Atoms::intern(&display.conn).map_err(|e| fail(&e))?;
        Ok(WatchConnection { display, atoms })
    }
}
