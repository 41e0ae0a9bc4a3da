//! Menus, dropdowns, context menus and tooltips: the mapped
//! override-redirect children of the root window. Apps show them without
//! the window manager, so no client list names them; the X tree does.
//!
//! Fluxbox makes its own frames override-redirect too: a frame holding a
//! window of the client list is that window, not a popup, and is left out.

use super::props::{intern, window_class, window_pid, window_title};
use crate::display::{Atoms, Display, XFault};
use computer_protocol::{Bounds, PopupEntry};
use x11rb::connection::Connection as _;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt as _, MapState, Window};
use x11rb::rust_connection::RustConnection;

/// A popup smaller than this on either side is taken for a helper window
/// (toolkits keep 1x1 ones mapped), not something shown.
const SIDE_MIN: u32 = 4;

/// Most popups listed: a screen shows a few at a time (a menu and its
/// submenus); the rest would be helper windows.
const POPUPS_MAX: usize = 16;

/// How far up from a client window its frame is looked for.
const FRAME_DEPTH_MAX: usize = 4;

/// The popups shown on the screen, topmost first. Windows that vanish
/// while they are read are left out.
pub fn list_popups(display: &Display) -> Result<Vec<PopupEntry>, XFault> {
    let read = || -> Result<Vec<PopupEntry>, ReplyError> {
        let conn = &display.conn;
        let tree = conn.query_tree(display.root)?.reply()?;
        // Asked together, answered in one round trip. The root's size is
        // read now: the screen may have been resized since it connected.
        let root = conn.get_geometry(display.root)?;
        let cookies = tree
            .children
            .iter()
            .map(|&w| Ok((w, conn.get_window_attributes(w)?)))
            .collect::<Result<Vec<_>, ReplyError>>()?;
        let mut shown = Vec::new();
        for (window, cookie) in cookies {
            if let Ok(a) = cookie.reply() {
                if a.override_redirect && a.map_state == MapState::VIEWABLE {
                    shown.push(window);
                }
            }
        }
        let root = root.reply()?;
        let screen = (u32::from(root.width), u32::from(root.height));
        if shown.is_empty() {
            return Ok(Vec::new());
        }
        let atoms = display.atoms()?;
        let clients = client_list(conn, &atoms, display.root)?;
        let reader = PopupReader::new(conn, &atoms, display.root, &clients)?;
        let mut popups = Vec::new();
        // query_tree lists bottom to top.
        for &window in shown.iter().rev() {
            if popups.len() == POPUPS_MAX {
                break;
            }
            if let Some(popup) = reader.describe(conn, window, screen)? {
                popups.push(popup);
            }
        }
        Ok(popups)
    };
    read().map_err(|e| XFault::new(display.number, "reading the popups", e))
}

/// The mapped children of `window`, placed relative to it; none when it
/// is gone.
pub(super) fn viewable_children(
    conn: &RustConnection,
    window: Window,
) -> Result<Vec<Bounds>, ReplyError> {
    let Ok(tree) = conn.query_tree(window)?.reply() else {
        return Ok(Vec::new());
    };
    let cookies = tree
        .children
        .iter()
        .map(|&w| Ok((conn.get_window_attributes(w)?, conn.get_geometry(w)?)))
        .collect::<Result<Vec<_>, ReplyError>>()?;
    let mut shown = Vec::new();
    for (attributes, geometry) in cookies {
        let (Ok(a), Ok(g)) = (attributes.reply(), geometry.reply()) else {
            continue;
        };
        if a.map_state == MapState::VIEWABLE {
            shown.push(Bounds {
                x: i32::from(g.x),
                y: i32::from(g.y),
                width: u32::from(g.width),
                height: u32::from(g.height),
            });
        }
    }
    Ok(shown)
}

/// The window manager's client list (`_NET_CLIENT_LIST`); empty without
/// a window manager.
fn client_list(
    conn: &RustConnection,
    atoms: &Atoms,
    root: Window,
) -> Result<Vec<Window>, ReplyError> {
    Ok(conn
        .get_property(
            false,
            root,
            atoms.net_client_list,
            AtomEnum::WINDOW,
            0,
            4096,
        )?
        .reply()?
        .value32()
        .map(Iterator::collect)
        .unwrap_or_default())
}

/// The root's children that hold one of `clients`: the window manager's
/// frames. Without a window manager there are none.
fn frames_of(
    conn: &RustConnection,
    root: Window,
    clients: &[Window],
) -> Result<Vec<Window>, ReplyError> {
    let mut windows = clients.to_vec();
    let mut frames = Vec::new();
    // One round trip per level up; frames are a level or two deep.
    for _ in 0..FRAME_DEPTH_MAX {
        if windows.is_empty() {
            break;
        }
        let cookies = windows
            .iter()
            .map(|&w| Ok((w, conn.query_tree(w)?)))
            .collect::<Result<Vec<_>, ReplyError>>()?;
        windows = Vec::new();
        for (window, cookie) in cookies {
            let Ok(tree) = cookie.reply() else { continue };
            if tree.parent == root {
                frames.push(window);
            } else if tree.parent != x11rb::NONE {
                windows.push(tree.parent);
            }
        }
    }
    Ok(frames)
}

/// What describing popups needs, read once for all of them: the atoms of
/// their properties, and which app made which window.
///
/// The X server gives each client a range of window ids, so a popup that
/// names no class is its app's when its id falls in the range of a listed
/// window (that window's class) or of the window manager's check window
/// (its name): Chromium's menus and Fluxbox's own name neither.
///
/// The window manager's frames are override-redirect windows too (Fluxbox
/// makes them so); one that holds a listed window is not a popup.
pub struct PopupReader {
    window_type: Atom,
    frames: Vec<Window>,
    pid: Atom,
    /// The bits of an id that number the window within its client.
    mask: u32,
    /// A client's id bits and its app's name.
    apps: Vec<(u32, String)>,
}

impl PopupReader {
    /// Reads the classes and frames of `clients` (the window manager's
    /// client list) and the window manager's name.
    pub fn new(
        conn: &RustConnection,
        atoms: &Atoms,
        root: Window,
        clients: &[Window],
    ) -> Result<PopupReader, ReplyError> {
        let mask = conn.setup().resource_id_mask;
        let mut apps = Vec::new();
        for &window in clients {
            if let Some(class) = window_class(conn, window)?.last() {
                apps.push((window & !mask, class.clone()));
            }
        }
        let check = intern(conn, b"_NET_SUPPORTING_WM_CHECK")?;
        let manager = conn
            .get_property(false, root, check, AtomEnum::WINDOW, 0, 1)?
            .reply()?
            .value32()
            .and_then(|mut v| v.next());
        if let Some(manager) = manager {
            if let Some(name) = window_title(conn, atoms, manager)? {
                apps.push((manager & !mask, name));
            }
        }
        Ok(PopupReader {
            window_type: intern(conn, b"_NET_WM_WINDOW_TYPE")?,
            frames: frames_of(conn, root, clients)?,
            pid: intern(conn, b"_NET_WM_PID")?,
            mask,
            apps,
        })
    }

    /// One override-redirect window as a popup, or `None` when it is
    /// gone, too small to be one, off the `screen` (width, height) or a
    /// listed window's frame. Its class is its own, or its app's.
    pub fn describe(
        &self,
        conn: &RustConnection,
        window: Window,
        screen: (u32, u32),
    ) -> Result<Option<PopupEntry>, ReplyError> {
        if self.frames.contains(&window) {
            return Ok(None);
        }
        let Ok(geometry) = conn.get_geometry(window)?.reply() else {
            return Ok(None);
        };
        let (x, y) = (i32::from(geometry.x), i32::from(geometry.y));
        let (width, height) = (u32::from(geometry.width), u32::from(geometry.height));
        let on_screen = x < screen.0 as i32
            && y < screen.1 as i32
            && x + width as i32 > 0
            && y + height as i32 > 0;
        if width < SIDE_MIN || height < SIDE_MIN || !on_screen {
            return Ok(None);
        }
        let kind = match first_atom(conn, window, self.window_type)? {
            Some(atom) => kind_of(&atom_name(conn, atom)?),
            None => "popup".to_string(),
        };
        let class = window_class(conn, window)?;
        Ok(Some(PopupEntry {
            id: window,
            kind,
            // WM_CLASS is instance then class; the class names the app.
            class: match class.last() {
                Some(class) => class.clone(),
                None => self.app_of(window).unwrap_or_default().to_string(),
            },
            pid: window_pid(conn, window, self.pid)?,
            x,
            y,
            width,
            height,
            items: Vec::new(),
            items_note: None,
        }))
    }

    /// The name of the app that made `window`, if known.
    fn app_of(&self, window: Window) -> Option<&str> {
        let client = window & !self.mask;
        self.apps
            .iter()
            .find(|(c, _)| *c == client)
            .map(|(_, name)| name.as_str())
    }
}

/// `_NET_WM_WINDOW_TYPE_POPUP_MENU` as `popup_menu`; another name as it is.
fn kind_of(atom_name: &str) -> String {
    atom_name
        .strip_prefix("_NET_WM_WINDOW_TYPE_")
        .unwrap_or(atom_name)
        .to_lowercase()
}

fn first_atom(
    conn: &RustConnection,
    window: Window,
    property: Atom,
) -> Result<Option<Atom>, ReplyError> {
    Ok(conn
        .get_property(false, window, property, AtomEnum::ATOM, 0, 1)?
        .reply()
        .ok()
        .and_then(|r| r.value32().and_then(|mut v| v.next())))
}

fn atom_name(conn: &RustConnection, atom: Atom) -> Result<String, ReplyError> {
    let reply = conn.get_atom_name(atom)?.reply()?;
    Ok(String::from_utf8_lossy(&reply.name).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_types_read_as_short_lowercase_kinds() {
        assert_eq!(kind_of("_NET_WM_WINDOW_TYPE_POPUP_MENU"), "popup_menu");
        assert_eq!(
            kind_of("_NET_WM_WINDOW_TYPE_DROPDOWN_MENU"),
            "dropdown_menu"
        );
        assert_eq!(kind_of("_NET_WM_WINDOW_TYPE_TOOLTIP"), "tooltip");
        assert_eq!(
            kind_of("_KDE_NET_WM_WINDOW_TYPE_OVERRIDE"),
            "_kde_net_wm_window_type_override"
        );
    }
}
