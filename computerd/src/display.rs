//! A connection to one X display (one screen's Xvnc), with the EWMH atoms
//! it interned. The `screens` module owns these; `capture` and `input`
//! borrow them for the length of one call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::xproto::{Atom, ConnectionExt as _, Mapping, Window};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

/// Where X servers make their sockets.
pub const SOCKET_DIR: &str = "/tmp/.X11-unix";

#[derive(Debug, thiserror::Error)]
pub enum DisplayError {
    #[error("X display :{number} did not accept a connection within {waited:?}: {last}")]
    NotReady {
        number: u32,
        waited: Duration,
        last: String,
    },
}

/// An X request that failed: the display went away, or its server refused
/// the request. Never a fault of the agent's input, so it answers as an
/// internal error.
#[derive(Debug, thiserror::Error)]
#[error("{doing} on display :{display} failed: {reason}; if the screen is gone, end the session and start a new one")]
pub struct XFault {
    pub display: u32,
    /// What was being done, such as "watching for drawing".
    pub doing: &'static str,
    pub reason: String,
}

impl XFault {
    pub fn new(display: u32, doing: &'static str, reason: impl std::fmt::Display) -> XFault {
        XFault {
            display,
            doing,
            reason: reason.to_string(),
        }
    }
}

/// The EWMH atoms capture and focus need. A server names an atom the
/// same for its whole life, so each connection interns them once.
#[derive(Debug, Clone, Copy)]
pub struct Atoms {
    pub net_active_window: Atom,
    pub net_client_list: Atom,
    pub net_wm_name: Atom,
    pub utf8_string: Atom,
}

impl Atoms {
    /// Interns all of them in one round trip.
    pub fn intern(conn: &RustConnection) -> Result<Atoms, ReplyError> {
        let cookies = [
            conn.intern_atom(false, b"_NET_ACTIVE_WINDOW")?,
            conn.intern_atom(false, b"_NET_CLIENT_LIST")?,
            conn.intern_atom(false, b"_NET_WM_NAME")?,
            conn.intern_atom(false, b"UTF8_STRING")?,
        ];
        let [a, b, c, d] = cookies.map(|c| c.reply().map(|r| r.atom));
        Ok(Atoms {
            net_active_window: a?,
            net_client_list: b?,
            net_wm_name: c?,
            utf8_string: d?,
        })
    }
}

/// One X display, connected and ready for requests.
pub struct Display {
    /// The X display number, `:N`.
    pub number: u32,
    pub conn: RustConnection,
    /// Root window of the default screen: what capture reads and what pointer
    /// coordinates are relative to.
    pub root: Window,
    pub width: u16,
    pub height: u16,
    /// Interned by the first [`Display::atoms`].
    atoms: OnceLock<Atoms>,
    /// Set by [`Display::drain_events`] when the server said the keyboard
    /// mapping changed; the keyboard takes it.
    keymap_changed: AtomicBool,
}

impl std::fmt::Debug for Display {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Display")
            .field("number", &self.number)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

impl Display {
    /// Connects to `:number`, retrying until `wait` has passed: a freshly
    /// started Xvnc takes a moment before its socket accepts.
    pub fn connect(number: u32, wait: Duration) -> Result<Display, DisplayError> {
        let started = Instant::now();
        loop {
            match Display::connect_once(number) {
                Ok(display) => return Ok(display),
                Err(e) if started.elapsed() >= wait => {
                    return Err(DisplayError::NotReady {
                        number,
                        waited: started.elapsed(),
                        last: e.to_string(),
                    })
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// One attempt to connect to `:number`, through its Unix socket only.
    /// Blocks while a server that accepted the socket is still starting up.
    ///
    /// `:N` would also try TCP `localhost:6000+N` when the socket is not
    /// there yet (as it is not, just after Xvnc starts): whatever listens on
    /// that port (another daemon's VNC port, a program of the agent) would
    /// be taken for the screen's X server.
    ///
    /// With the desktop cookie installed ([`crate::x_auth`]) the connection
    /// carries it, whatever `XAUTHORITY` says.
    pub fn connect_once(number: u32) -> Result<Display, x11rb::errors::ConnectError> {
        let (conn, screen_num) = match crate::x_auth::installed() {
            Some(auth) => {
                let socket =
                    std::os::unix::net::UnixStream::connect(format!("{}/X{number}", SOCKET_DIR))?;
                let (stream, _) = x11rb::rust_connection::DefaultStream::from_unix_stream(socket)?;
                let conn = RustConnection::connect_to_stream_with_auth_info(
                    stream,
                    0,
                    crate::x_auth::COOKIE_PROTOCOL.as_bytes().to_vec(),
                    auth.cookie().to_vec(),
                )?;
                (conn, 0)
            }
            None => x11rb::connect(Some(&format!("unix/:{number}")))?,
        };
        let screen = &conn.setup().roots[screen_num];
        let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
        Ok(Display {
            number,
            conn,
            root,
            width,
            height,
            atoms: OnceLock::new(),
            keymap_changed: AtomicBool::new(false),
        })
    }

    /// The EWMH atoms, interned on this connection's first use.
    pub fn atoms(&self) -> Result<Atoms, ReplyError> {
        if let Some(atoms) = self.atoms.get() {
            return Ok(*atoms);
        }
        let atoms = Atoms::intern(&self.conn)?;
        Ok(*self.atoms.get_or_init(|| atoms))
    }

    /// Reads every event queued on the connection, so none pile up: the
    /// keyboard's `MappingNotify` (kept for [`Display::take_keymap_changed`]),
    /// capture's damage notices (dropped: a grab asks for the damage itself)
    /// and the errors of requests that answer nothing. True when one of
    /// them was an error.
    pub fn drain_events(&self) -> Result<bool, ConnectionError> {
        let mut faulted = false;
        while let Some(event) = self.conn.poll_for_event()? {
            match event {
                Event::MappingNotify(e) if e.request != Mapping::POINTER => {
                    self.keymap_changed.store(true, Ordering::Relaxed);
                }
                Event::Error(e) => {
                    faulted = true;
                    let number = self.number;
                    tracing::debug!(display = number, "X error on the display connection: {e:?}");
                }
                _ => {}
            }
        }
        Ok(faulted)
    }

    /// True once after events said the keyboard mapping changed.
    pub fn take_keymap_changed(&self) -> bool {
        self.keymap_changed.swap(false, Ordering::Relaxed)
    }

    /// True when `(x, y)` is on the screen.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        within(self.width, self.height, x, y)
    }
}

/// True when `(x, y)` lies on a screen of `width` by `height` pixels.
pub fn within(width: u16, height: u16, x: i32, y: i32) -> bool {
    x >= 0 && y >= 0 && x < i32::from(width) && y < i32::from(height)
}
