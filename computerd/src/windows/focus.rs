//! Finding windows by class or title, and raising and focusing them.

use super::props::{active_window, window_class, window_title, Atoms};
use crate::display::{Display, XFault};
use std::time::{Duration, Instant};
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask, InputFocus,
    MapState, StackMode, Window,
};
use x11rb::rust_connection::RustConnection;

/// How long a window the window manager is asked to show (e.g. restore
/// from iconified) may take to become viewable before focus is given.
const VIEWABLE_WAIT: Duration = Duration::from_millis(500);

/// Depth of the window tree searched when no window manager lists its
/// clients: root → frame → client, plus one level of slack.
const TREE_DEPTH: usize = 3;

/// `_NET_ACTIVE_WINDOW` source indication: a pager or tool acting for the
/// user, which window managers obey without focus-stealing checks.
const SOURCE_PAGER: u32 = 2;

/// Raises and focuses the first window whose class or title contains `target`
/// (case-insensitive). Returns false when no window matches.
pub fn focus_window(display: &Display, target: &str) -> Result<bool, XFault> {
    let needle = target.trim().to_lowercase();
    if needle.is_empty() {
        return Ok(false);
    }
    let conn = &display.conn;
    let request = failed(display.number, "finding a window to focus");
    let atoms = display.atoms().map_err(&request)?;
    for window in client_windows(display, &atoms).map_err(&request)? {
        if matches(conn, &atoms, window, &needle).map_err(&request)? {
            activate(display, &atoms, window)?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// The screen's top-level app windows (see [`client_windows`]).
pub fn window_list(display: &Display) -> Result<Vec<Window>, XFault> {
    let request = failed(display.number, "listing the windows");
    let atoms = display.atoms().map_err(&request)?;
    client_windows(display, &atoms).map_err(&request)
}

/// True when the window manager's active window is `window`.
pub fn active_is(display: &Display, window: Window) -> Result<bool, XFault> {
    let request = failed(display.number, "reading the active window");
    let atoms = display.atoms().map_err(&request)?;
    Ok(active_window(&display.conn, &atoms, display.root).map_err(&request)? == Some(window))
}

/// True when the active window's class or title contains `target`
/// (case-insensitive), as [`focus_window`] matches them.
pub fn active_matches(display: &Display, target: &str) -> Result<bool, XFault> {
    let request = failed(display.number, "reading the active window");
    let atoms = display.atoms().map_err(&request)?;
    match active_window(&display.conn, &atoms, display.root).map_err(&request)? {
        Some(window) => {
            matches(&display.conn, &atoms, window, &target.trim().to_lowercase()).map_err(&request)
        }
        None => Ok(false),
    }
}

/// Raises and focuses one window of [`window_list`].
pub fn focus_window_id(display: &Display, window: Window) -> Result<(), XFault> {
    let atoms = display
        .atoms()
        .map_err(failed(display.number, "focusing a window"))?;
    activate(display, &atoms, window)
}

/// The windows an agent can mean: the window manager's client list, or,
/// without a window manager, the named windows in the tree.
fn client_windows(display: &Display, atoms: &Atoms) -> Result<Vec<Window>, ReplyError> {
    let listed: Vec<Window> = display
        .conn
        .get_property(
            false,
            display.root,
            atoms.net_client_list,
            AtomEnum::WINDOW,
            0,
            4096,
        )?
        .reply()?
        .value32()
        .map(Iterator::collect)
        .unwrap_or_default();
    if !listed.is_empty() {
        return Ok(listed);
    }
    let mut found = Vec::new();
    named_descendants(&display.conn, display.root, TREE_DEPTH, &mut found)?;
    Ok(found)
}

/// Children of `window` that have a `WM_CLASS`, looking inside those that
/// do not (window manager frames), down to `depth` levels.
fn named_descendants(
    conn: &RustConnection,
    window: Window,
    depth: usize,
    found: &mut Vec<Window>,
) -> Result<(), ReplyError> {
    if depth == 0 {
        return Ok(());
    }
    let children = match conn.query_tree(window)?.reply() {
        Ok(tree) => tree.children,
        // Gone since its parent was listed.
        Err(ReplyError::X11Error(_)) => return Ok(()),
        Err(e) => return Err(e),
    };
    for child in children {
        if window_class(conn, child)?.is_empty() {
            named_descendants(conn, child, depth - 1, found)?;
        } else {
            found.push(child);
        }
    }
    Ok(())
}

/// True when `needle` (lowercase) is part of the window's instance or class
/// name or of its title.
fn matches(
    conn: &RustConnection,
    atoms: &Atoms,
    window: Window,
    needle: &str,
) -> Result<bool, ReplyError> {
    let class = window_class(conn, window)?;
    if class.iter().any(|c| c.to_lowercase().contains(needle)) {
        return Ok(true);
    }
    Ok(window_title(conn, atoms, window)?.is_some_and(|t| t.to_lowercase().contains(needle)))
}

/// Asks the window manager to activate `window` (which also restores it
/// when iconified), raises it, and gives it the keyboard focus at once so
/// that keys typed next reach it even before the window manager reacts.
fn activate(display: &Display, atoms: &Atoms, window: Window) -> Result<(), XFault> {
    let conn = &display.conn;
    let send = failed(display.number, "focusing a window");
    let request = failed(display.number, "focusing a window");
    let current = active_window(conn, atoms, display.root)
        .map_err(&request)?
        .unwrap_or(x11rb::NONE);
    let message = ClientMessageEvent::new(
        32,
        window,
        atoms.net_active_window,
        [SOURCE_PAGER, x11rb::CURRENT_TIME, current, 0, 0],
    );
    conn.send_event(
        false,
        display.root,
        EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
        message,
    )
    .map_err(&send)?;
    conn.configure_window(
        window,
        &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
    )
    .map_err(&send)?
    .check()
    .or_else(ignore_x_error)
    .map_err(&request)?;
    if !wait_viewable(conn, window).map_err(&request)? {
        // Still hidden: the window manager focuses it when it shows it.
        return Ok(());
    }
    conn.set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)
        .map_err(&send)?
        .check()
        .or_else(ignore_x_error)
        .map_err(&request)
}

/// Polls until `window` is viewable, for at most [`VIEWABLE_WAIT`]. False
/// when it is not by then (or is gone).
fn wait_viewable(conn: &RustConnection, window: Window) -> Result<bool, ReplyError> {
    let deadline = Instant::now() + VIEWABLE_WAIT;
    loop {
        let viewable = match conn.get_window_attributes(window)?.reply() {
            Ok(attributes) => attributes.map_state == MapState::VIEWABLE,
            Err(ReplyError::X11Error(_)) => return Ok(false),
            Err(e) => return Err(e),
        };
        if viewable || Instant::now() >= deadline {
            return Ok(viewable);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The window may vanish or be unmapped between the lookup and these
/// requests; that is not a failure of the action.
fn ignore_x_error(e: ReplyError) -> Result<(), ReplyError> {
    match e {
        ReplyError::X11Error(_) => Ok(()),
        e => Err(e),
    }
}

/// Wraps an X error (of a request or of the connection) as an [`XFault`].
fn failed<E: std::fmt::Display>(display: u32, doing: &'static str) -> impl Fn(E) -> XFault {
    move |e| XFault::new(display, doing, e)
}
