//! What the capture and input tests share: their deadline and a window of
//! their own that records the events it selected.

use crate::xvnc::Xvnc;
use computerd::display::Display;
use std::time::Duration;
use test_support::wait_until_blocking;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, CreateWindowAux, EventMask, WindowClass};
use x11rb::protocol::Event;
use x11rb::wrapper::ConnectionExt as _;

pub const LIMIT: Duration = Duration::from_secs(10);

/// A window of our own, on a connection of its own, that records the
/// events it selected.
pub struct TestWindow {
    pub display: Display,
    pub window: u32,
}

impl TestWindow {
    /// Maps an unmanaged window at `(x, y)` filled with `background`
    /// (0xRRGGBB) and waits until it is exposed.
    pub fn open(
        xvnc: &Xvnc,
        x: i16,
        y: i16,
        width: u16,
        height: u16,
        background: u32,
        events: EventMask,
    ) -> TestWindow {
        let display = xvnc.connect();
        let conn = &display.conn;
        let window = conn.generate_id().expect("id");
        let aux = CreateWindowAux::new()
            .background_pixel(background)
            .override_redirect(1)
            .event_mask(events | EventMask::EXPOSURE);
        conn.create_window(
            0,
            window,
            display.root,
            x,
            y,
            width,
            height,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &aux,
        )
        .expect("create window");
        conn.map_window(window).expect("map");
        conn.flush().expect("flush");
        wait_until_blocking("the test window to be exposed", LIMIT, || {
            match conn.poll_for_event().expect("event") {
                Some(Event::Expose(_)) => Some(()),
                _ => None,
            }
        });
        TestWindow { display, window }
    }

    /// Everything received so far: our round trip makes sure all events the
    /// server sent before it are in.
    pub fn events(&self) -> Vec<Event> {
        self.display.conn.sync().expect("sync");
        std::iter::from_fn(|| self.display.conn.poll_for_event().expect("event")).collect()
    }

    /// `(press, button, x, y)` of the button events received so far.
    pub fn buttons(&self) -> Vec<(bool, u8, i16, i16)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::ButtonPress(b) => Some((true, b.detail, b.event_x, b.event_y)),
                Event::ButtonRelease(b) => Some((false, b.detail, b.event_x, b.event_y)),
                _ => None,
            })
            .collect()
    }
}
