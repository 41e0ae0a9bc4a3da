//! XTEST fake events, sent in batches and confirmed with one round trip, so
//! the server has delivered them by the time an action returns.

use super::InputError;
use crate::display::Display;
use x11rb::cookie::VoidCookie;
use x11rb::protocol::xproto::{self, Keycode};
use x11rb::protocol::xtest;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// Events sent but not yet confirmed before the next ones wait for the
/// server: bounds memory, and keeps a long text from flooding the server
/// faster than it delivers.
const UNCONFIRMED_MAX: usize = 256;

/// A batch of fake input on one display.
pub struct Events<'d> {
    display: &'d Display,
    /// Requests sent and not yet checked for errors.
    unconfirmed: Vec<VoidCookie<'d, RustConnection>>,
}

impl<'d> Events<'d> {
    pub fn new(display: &'d Display) -> Events<'d> {
        Events {
            display,
            unconfirmed: Vec::new(),
        }
    }

    pub fn display(&self) -> &'d Display {
        self.display
    }

    /// Moves the pointer to `(x, y)` on the root window.
    pub fn motion(&mut self, x: i16, y: i16) -> Result<(), InputError> {
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, x, y)
    }

    /// Presses or releases pointer button `button` (1 left, 2 middle,
    /// 3 right, 4..7 wheel).
    pub fn button(&mut self, button: u8, press: bool) -> Result<(), InputError> {
        let kind = if press {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.fake(kind, button, 0, 0)
    }

    /// Presses or releases the key `keycode`.
    pub fn key(&mut self, keycode: Keycode, press: bool) -> Result<(), InputError> {
        let kind = if press {
            xproto::KEY_PRESS_EVENT
        } else {
            xproto::KEY_RELEASE_EVENT
        };
        self.fake(kind, keycode, 0, 0)
    }

    fn fake(&mut self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), InputError> {
        let display = self.display;
        let cookie = xtest::fake_input(
            &display.conn,
            kind,
            detail,
            x11rb::CURRENT_TIME,
            display.root,
            x,
            y,
            0,
        )
        .map_err(InputError::send(display.number))?;
        self.unconfirmed.push(cookie);
        if self.unconfirmed.len() >= UNCONFIRMED_MAX {
            self.confirm()?;
        }
        Ok(())
    }

    /// Waits until the server has processed everything sent so far, and
    /// reports the first error among it.
    pub fn confirm(&mut self) -> Result<(), InputError> {
        let number = self.display.number;
        if self.unconfirmed.is_empty() {
            return self
                .display
                .conn
                .sync()
                .map_err(InputError::request(number));
        }
        // The first check costs the round trip; the server answers in order,
        // so the others are settled by then.
        for cookie in self.unconfirmed.drain(..) {
            cookie.check().map_err(InputError::request(number))?;
        }
        Ok(())
    }
}
