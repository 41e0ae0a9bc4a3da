//! The screen's top-level windows from X11/EWMH: title, class, pid,
//! geometry in screen pixels, focus, topmost first.

use super::focus::window_list;
use super::props::{active_window, intern, window_class, window_pid, window_title, Atoms};
use crate::display::{Display, XFault};
use computer_protocol::{InvalidInput, WindowEntry};
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, MapState, Window};

/// Lists the mapped app windows, topmost first. Windows that vanish while
/// they are read are left out.
pub fn list_windows(display: &Display) -> Result<Vec<WindowEntry>, XFault> {
    let failed = |e: ReplyError| XFault::new(display.number, "reading the windows", e);
    let conn = &display.conn;
    let atoms = display.atoms().map_err(failed)?;
    let stacking = intern(conn, b"_NET_CLIENT_LIST_STACKING").map_err(failed)?;
    let pid_atom = intern(conn, b"_NET_WM_PID").map_err(failed)?;
    // Bottom to top, as EWMH lists them; without a window manager, the
    // order of the client list stands in.
    let mut order: Vec<Window> = conn
        .get_property(false, display.root, stacking, AtomEnum::WINDOW, 0, 4096)
        .map_err(|e| failed(e.into()))?
        .reply()
        .map_err(failed)?
        .value32()
        .map(Iterator::collect)
        .unwrap_or_default();
    if order.is_empty() {
        order = window_list(display)
            .map_err(|e| XFault::new(display.number, "reading the windows", e))?;
    }
    let focused = active_window(conn, &atoms, display.root).map_err(failed)?;
    let mut windows = Vec::with_capacity(order.len());
    for window in order.into_iter().rev() {
        if let Some(entry) = describe(display, &atoms, pid_atom, window, focused).map_err(failed)? {
            windows.push(entry);
        }
    }
    Ok(windows)
}

/// One window, or `None` when it is gone or not shown.
fn describe(
    display: &Display,
    atoms: &Atoms,
    pid_atom: u32,
    window: Window,
    focused: Option<Window>,
) -> Result<Option<WindowEntry>, ReplyError> {
    let conn = &display.conn;
    let Ok(attributes) = conn.get_window_attributes(window)?.reply() else {
        return Ok(None);
    };
    if attributes.map_state != MapState::VIEWABLE {
        return Ok(None);
    }
    let Ok(geometry) = conn.get_geometry(window)?.reply() else {
        return Ok(None);
    };
    let Ok(origin) = conn
        .translate_coordinates(window, display.root, 0, 0)?
        .reply()
    else {
        return Ok(None);
    };
    let class = window_class(conn, window)?;
    let pid = window_pid(conn, window, pid_atom)?;
    Ok(Some(WindowEntry {
        id: window,
        title: window_title(conn, atoms, window)?.unwrap_or_default(),
        // WM_CLASS is instance then class; the class names the app.
        class: class.last().cloned().unwrap_or_default(),
        pid,
        x: i32::from(origin.dst_x),
        y: i32::from(origin.dst_y),
        width: u32::from(geometry.width),
        height: u32::from(geometry.height),
        focused: focused == Some(window),
    }))
}

/// The window an agent names by class or title (case-insensitive
/// substring, as `focus` matches), or the focused one.
pub fn pick<'a>(
    windows: &'a [WindowEntry],
    name: Option<&str>,
) -> Result<Option<&'a WindowEntry>, InvalidInput> {
    let Some(name) = name else {
        return Ok(windows.iter().find(|w| w.focused));
    };
    let needle = name.trim().to_lowercase();
    windows
        .iter()
        .find(|w| {
            w.class.to_lowercase().contains(&needle) || w.title.to_lowercase().contains(&needle)
        })
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<String> = windows
                .iter()
                .map(|w| format!("\"{}\" ({})", w.title, w.class))
                .collect();
            InvalidInput(format!(
                "`window` is `{name}`: no window's class or title contains it; the screen has {}",
                if names.is_empty() {
                    "no windows".to_string()
                } else {
                    names.join(", ")
                }
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(id: u32, title: &str, class: &str, focused: bool) -> WindowEntry {
        WindowEntry {
            id,
            title: title.into(),
            class: class.into(),
            pid: None,
            x: 0,
            y: 0,
            width: 10,
            height: 10,
            focused,
        }
    }

    #[test]
    fn picks_by_class_or_title_else_the_focused_window() {
        let windows = [
            window(1, "Probe", "Zenity", false),
            window(2, "~", "XTerm", true),
        ];
        assert_eq!(pick(&windows, None).unwrap().unwrap().id, 2);
        assert_eq!(pick(&windows, Some("zenity")).unwrap().unwrap().id, 1);
        assert_eq!(pick(&windows, Some("PROBE")).unwrap().unwrap().id, 1);
        let err = pick(&windows, Some("writer")).unwrap_err().to_string();
        assert!(
            err.contains("`window` is `writer`") && err.contains("\"Probe\" (Zenity)"),
            "{err}"
        );
        assert_eq!(pick(&[window(1, "a", "b", false)], None).unwrap(), None);
    }
}
