//! Reading a window's properties: its title, its class, and which window
//! the window manager calls active, with the EWMH atoms they need.

use crate::display::{Display, XFault};
use x11rb::cookie::Cookie;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt as _, GetPropertyReply, Window};
use x11rb::protocol::ErrorKind;
use x11rb::rust_connection::RustConnection;

/// Longest property value read, in 32-bit units: a title or class longer
/// than 16 KiB is cut.
const PROPERTY_MAX_LONGS: u32 = 4096;

pub use crate::display::Atoms;

/// The title of the window the window manager calls active
/// (`_NET_ACTIVE_WINDOW`), or `None` when there is none or it has no title.
pub fn active_window_title(display: &Display) -> Result<Option<String>, XFault> {
    let read = || -> Result<Option<String>, ReplyError> {
        let atoms = display.atoms()?;
        match active_window(&display.conn, &atoms, display.root)? {
            Some(window) => window_title(&display.conn, &atoms, window),
            None => Ok(None),
        }
    };
    read().map_err(|e| XFault::new(display.number, "reading the active window", e))
}

/// Where the pointer is (root coordinates) and the active window's title,
/// in two round trips: the pointer and the active window asked together,
/// then both title properties together. An observation needs both.
pub fn pointer_and_active_title(display: &Display) -> Result<((i32, i32), Option<String>), XFault> {
    let read = || -> Result<((i32, i32), Option<String>), ReplyError> {
        let (conn, atoms) = (&display.conn, display.atoms()?);
        let pointer = conn.query_pointer(display.root)?;
        let active = ask_active_window(conn, &atoms, display.root)?;
        let pointer = pointer.reply()?;
        let title = match named_window(active.reply()?) {
            Some(window) => window_title(conn, &atoms, window)?,
            None => None,
        };
        Ok((
            (i32::from(pointer.root_x), i32::from(pointer.root_y)),
            title,
        ))
    };
    read().map_err(|e| XFault::new(display.number, "reading the pointer and active window", e))
}

/// The window `_NET_ACTIVE_WINDOW` names, if any.
pub fn active_window(
    conn: &RustConnection,
    atoms: &Atoms,
    root: Window,
) -> Result<Option<Window>, ReplyError> {
    Ok(named_window(ask_active_window(conn, atoms, root)?.reply()?))
}

/// Sends the request for `_NET_ACTIVE_WINDOW`; its answer is read later,
/// so it can share a round trip.
fn ask_active_window<'c>(
    conn: &'c RustConnection,
    atoms: &Atoms,
    root: Window,
) -> Result<Cookie<'c, RustConnection, GetPropertyReply>, ConnectionError> {
    conn.get_property(false, root, atoms.net_active_window, AtomEnum::WINDOW, 0, 1)
}

/// The window a `WINDOW` property names; none for `None` (0).
fn named_window(reply: GetPropertyReply) -> Option<Window> {
    reply
        .value32()
        .and_then(|mut v| v.next())
        .filter(|&w| w != x11rb::NONE)
}

/// The atom named `name`, made if no client made it yet.
pub(super) fn intern(conn: &RustConnection, name: &[u8]) -> Result<Atom, ReplyError> {
    Ok(conn.intern_atom(false, name)?.reply()?.atom)
}

/// The window's `_NET_WM_PID` (`pid_atom`), when it sets one.
pub(super) fn window_pid(
    conn: &RustConnection,
    window: Window,
    pid_atom: Atom,
) -> Result<Option<u32>, ReplyError> {
    Ok(conn
        .get_property(false, window, pid_atom, AtomEnum::CARDINAL, 0, 1)?
        .reply()
        .ok()
        .and_then(|r| r.value32().and_then(|mut v| v.next())))
}

/// `_NET_WM_NAME` (UTF-8), else `WM_NAME`. A window that vanished meanwhile
/// has no title rather than an error.
pub fn window_title(
    conn: &RustConnection,
    atoms: &Atoms,
    window: Window,
) -> Result<Option<String>, ReplyError> {
    let net = conn.get_property(
        false,
        window,
        atoms.net_wm_name,
        atoms.utf8_string,
        0,
        PROPERTY_MAX_LONGS,
    )?;
    let icccm = conn.get_property(
        false,
        window,
        AtomEnum::WM_NAME,
        AtomEnum::ANY,
        0,
        PROPERTY_MAX_LONGS,
    )?;
    let (net, icccm) = (gone_is_none(net.reply())?, gone_is_none(icccm.reply())?);
    if let Some(reply) = net.filter(|r| r.format == 8 && !r.value.is_empty()) {
        return Ok(Some(String::from_utf8_lossy(&reply.value).into_owned()));
    }
    Ok(icccm
        .filter(|r| r.format == 8 && !r.value.is_empty())
        .map(|r| text_property(r.type_, &r.value)))
}

/// `WM_CLASS`: the instance and class names, e.g. `["xterm", "XTerm"]`.
pub fn window_class(conn: &RustConnection, window: Window) -> Result<Vec<String>, ReplyError> {
    let reply = conn
        .get_property(
            false,
            window,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            0,
            PROPERTY_MAX_LONGS,
        )?
        .reply();
    Ok(match gone_is_none(reply)? {
        Some(reply) if reply.format == 8 => reply
            .value
            .split(|&b| b == 0)
            .filter(|part| !part.is_empty())
            .map(latin1)
            .collect(),
        _ => Vec::new(),
    })
}

/// Treats a `BadWindow` reply as "no such property": windows come and go
/// between listing them and reading them.
fn gone_is_none<T>(reply: Result<T, ReplyError>) -> Result<Option<T>, ReplyError> {
    match reply {
        Ok(value) => Ok(Some(value)),
        Err(ReplyError::X11Error(e)) if e.error_kind == ErrorKind::Window => Ok(None),
        Err(e) => Err(e),
    }
}

/// ICCCM text: `STRING` is Latin-1; anything else (`UTF8_STRING`, and
/// `COMPOUND_TEXT`, whose ASCII part reads the same) is taken as UTF-8.
fn text_property(type_: Atom, value: &[u8]) -> String {
    if type_ == u32::from(AtomEnum::STRING) {
        latin1(value)
    } else {
        String::from_utf8_lossy(value).into_owned()
    }
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}
