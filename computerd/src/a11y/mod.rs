//! Accessibility trees over AT-SPI, one bus per screen.
//!
//! Data flow:
//! - [`bus`]: each screen gets its own D-Bus session bus and, on it, the
//!   AT-SPI bus launcher; every process started on the screen gets that
//!   session bus, so its toolkit registers on the screen's own AT-SPI bus
//!   and one screen's tree never lists another screen's apps.
//! - [`find`]: the app that owns an X window (by pid, then by title) and
//!   its top-level accessible (frame, dialog) for that window.
//! - [`walk`]: reads the accessible subtree of that top-level, many calls
//!   at once, skipping hidden subtrees, within a read budget and
//!   [`READ_DEPTH_MAX`] levels.
//! - [`popup`]: a popup window's items (a menu's, a list's): the
//!   top-level found where it is, or its app's open menu, read, and cut
//!   to what can be clicked.
//! - [`placement`]: moves the bounds to screen pixels when a toolkit gave
//!   them relative to its window.
//! - [`prune`]: drops empty nodes (their kept children move up), names
//!   roles and flattens the tree in pre-order, cut at the caller's limit.

mod bus;
mod find;
mod placement;
mod popup;
mod prune;
mod walk;

pub use bus::{session_bus_address_for, A11yBus, BUS_LAUNCHER};
pub use popup::{read_popup_items, PopupRead};
pub use walk::READ_DEPTH_MAX;

use std::time::Duration;

/// The X window whose tree is wanted, as the window list saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowHint {
    /// `_NET_WM_PID`, when the client set it.
    pub pid: Option<u32>,
    pub title: String,
    pub class: String,
    /// Geometry in screen pixels.
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// The states a text view shows; AT-SPI has many more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum A11yState {
    Focused,
    Checked,
    Selected,
    Disabled,
    Expanded,
    Editable,
}

/// One kept node of a tree, in pre-order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A11yNode {
    /// The AT-SPI role name, lowercase with `_` for spaces: `button`,
    /// `check_box`, `text`, `frame`, `document_text`.
    pub role: String,
    pub name: String,
    /// The text of editable (or unnamed) text, or a slider's value.
    pub value: Option<String>,
    pub states: Vec<A11yState>,
    /// x, y, width, height in screen pixels.
    pub bounds: Option<(i32, i32, u32, u32)>,
    /// Where the node lives on the bus, to act on it without a position.
    pub handle: Option<A11yHandle>,
    /// 0 for the window itself; left-out nodes do not count.
    pub depth: usize,
}

/// A node's address on the screen's AT-SPI bus.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct A11yHandle {
    /// The app's unique bus name.
    pub bus: String,
    pub path: String,
    /// True when the node has actions (a button's `click`).
    pub acts: bool,
}

/// A window's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A11yTree {
    pub nodes: Vec<A11yNode>,
    /// True when the tree had more nodes than the limit (or than computerd
    /// reads at most), so `nodes` is its beginning.
    pub truncated: bool,
    /// The application's accessible name (`zenity`, `soffice`).
    pub app: String,
    /// False when the toolkit gave every node the same position (GTK 4,
    /// zenity's in the image, reports 0,0 for all): bounds are then left out, and
    /// refs act through the nodes' own actions.
    pub positions_known: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum A11yError {
    #[error("could not start `{program}` for the accessibility bus of display :{display}: {source}; install at-spi2-core and dbus")]
    Spawn {
        program: &'static str,
        display: u32,
        source: std::io::Error,
    },
    #[error("`{program}` for the accessibility bus of display :{display} exited during start ({status}); it said: {output}")]
    Exited {
        program: &'static str,
        display: u32,
        status: String,
        output: String,
    },
    #[error("the accessibility bus of display :{display} was not ready within {waited:?}: {step}; `{program}` said: {output}")]
    NotReady {
        program: &'static str,
        display: u32,
        waited: Duration,
        step: String,
        output: String,
    },
    #[error("could not make the accessibility bus folder `{path}`: {source}")]
    Folder {
        path: String,
        source: std::io::Error,
    },
    #[error("the accessibility tree did not answer within {waited:?}; the app may be busy or stopped: observe again, or use the image view")]
    Timeout { waited: Duration },
    #[error("reading the accessibility tree failed: {0}")]
    Bus(#[from] zbus::Error),
    #[error("the app refused `{method}` on this node ({source}); click it by its position in the screenshot instead")]
    Refused {
        method: &'static str,
        source: Box<zbus::Error>,
    },
}

/// Nodes read at most for a limit of `limit` kept nodes: empty containers
/// are read but not kept, so reading stops a little past the limit.
fn read_budget(limit: usize) -> usize {
    limit.saturating_mul(3).clamp(1000, 15_000)
}

/// The AT-SPI tree of the app window matching `window`, in pre-order, cut
/// after `limit` nodes. `Ok(None)` when no app on this screen's bus
/// exposes that window (xterm, plain X clients). The whole read honours
/// `deadline`: an app that does not answer gives [`A11yError::Timeout`].
pub async fn read_tree(
    bus: &A11yBus,
    window: &WindowHint,
    limit: usize,
    deadline: Duration,
) -> Result<Option<A11yTree>, A11yError> {
    let started = std::time::Instant::now();
    let read = async {
        let conn = bus.connection();
        let Some(found) = find::find_window(conn, window).await? else {
            return Ok(None);
        };
        let walk = walk::Walk::new(conn, read_budget(limit));
        let root = walk.read_root(&found.window).await?;
        let offset = placement::window_offset(root.bounds, window);
        if offset != (0, 0) {
            tracing::debug!(?offset, title = %window.title, "accessible bounds were window-relative");
        }
        let (mut nodes, cut) = prune::flatten(root, limit);
        tracing::debug!(
            app = %found.app,
            read = walk.read_count(),
            kept = nodes.len(),
            ms = started.elapsed().as_millis() as u64,
            "accessibility tree read"
        );
        for node in &mut nodes {
            node.bounds = placement::shift(node.bounds, offset);
        }
        let positions_known = !all_at_one_point(&nodes);
        if !positions_known {
            for node in &mut nodes {
                node.bounds = None;
            }
        }
        Ok(Some(A11yTree {
            nodes,
            truncated: cut || walk.was_cut(),
            app: found.app,
            positions_known,
        }))
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(result) => result,
        Err(_) => Err(A11yError::Timeout { waited: deadline }),
    }
}

/// True when three or more nodes all claim one top-left corner: a toolkit
/// that does not know where its widgets are.
fn all_at_one_point(nodes: &[A11yNode]) -> bool {
    let mut corners = nodes
        .iter()
        .filter_map(|n| n.bounds)
        .map(|(x, y, _, _)| (x, y));
    let Some(first) = corners.next() else {
        return false;
    };
    let mut count = 1;
    for corner in corners {
        if corner != first {
            return false;
        }
        count += 1;
    }
    count >= 3
}

/// Acts on a node without a position: its first action (a button's
/// `click`), or keyboard focus for an editable node or one without
/// actions.
pub async fn activate(
    bus: &A11yBus,
    handle: &A11yHandle,
    focus: bool,
    deadline: Duration,
) -> Result<(), A11yError> {
    let conn = bus.connection();
    let act = async {
        if handle.acts && !focus {
            let action: atspi::proxy::action::ActionProxy =
                find::proxy(conn, &handle.bus, &handle.path).await?;
            action.do_action(0).await.map(|_| ())
        } else {
            let component: atspi::proxy::component::ComponentProxy =
                find::proxy(conn, &handle.bus, &handle.path).await?;
            component.grab_focus().await.map(|_| ())
        }
    };
    let method = if handle.acts && !focus {
        "DoAction"
    } else {
        "GrabFocus"
    };
    match tokio::time::timeout(deadline, act).await {
        Ok(result) => result.map_err(|source| A11yError::Refused {
            method,
            source: Box::new(source),
        }),
        Err(_) => Err(A11yError::Timeout { waited: deadline }),
    }
}

/// The names of the apps registered on this screen's AT-SPI bus.
pub async fn app_names(bus: &A11yBus, deadline: Duration) -> Result<Vec<String>, A11yError> {
    let read = async {
        let conn = bus.connection();
        let apps = find::registered_apps(conn).await?;
        let names = futures::future::join_all(apps.iter().map(|app| async move {
            let proxy = find::accessible(conn, app).await.ok()?;
            proxy.name().await.ok()
        }))
        .await;
        Ok(names.into_iter().flatten().collect())
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(result) => result,
        Err(_) => Err(A11yError::Timeout { waited: deadline }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: i32, y: i32) -> A11yNode {
        A11yNode {
            role: "button".into(),
            name: "b".into(),
            value: None,
            states: vec![],
            bounds: Some((x, y, 10, 10)),
            handle: None,
            depth: 0,
        }
    }

    #[test]
    fn a_toolkit_that_puts_every_node_at_one_corner_gives_no_positions() {
        assert!(all_at_one_point(&[at(0, 0), at(0, 0), at(0, 0)]));
        assert!(!all_at_one_point(&[at(0, 0), at(0, 0), at(7, 53)]));
        // Two nodes may share a corner (a button and its label).
        assert!(!all_at_one_point(&[at(5, 5), at(5, 5)]));
        assert!(!all_at_one_point(&[]));
    }
}
