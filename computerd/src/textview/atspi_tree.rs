//! The accessibility tree of an app window over the screen's own AT-SPI
//! bus ([`crate::a11y`]), as the text view's flat nodes.

use super::flat::FlatNode;
use super::is_browser_app;
use crate::a11y::{
    read_popup_items, read_tree, A11yError, A11yNode, A11yState, PopupRead, WindowHint,
    READ_DEPTH_MAX,
};
use crate::browser::{native_a11y, Browser};
use crate::screens::Screen;
use computer_protocol::textview::TREE_DEADLINE_MS;
use computer_protocol::{Bounds, NodeState, PopupEntry, TextNode, TreeSource, WindowEntry};
use std::sync::Arc;
use std::time::Duration;

/// The tree of `window`, or a note saying why there is none.
pub async fn window_tree(
    screen: &Arc<Screen>,
    window: &WindowEntry,
    limit: usize,
    deadline: Duration,
) -> (Option<TreeSource>, Vec<FlatNode>, Option<String>) {
    let what = format!("\"{}\" ({})", window.title, window.class);
    let none = |note: String| (None, Vec::new(), Some(note));
    let bus = match screen.a11y() {
        Ok(bus) => bus,
        Err(why) => {
            return none(format!(
                "this screen's accessibility bus is not running ({why}), so {what} shows no tree; use the screenshot"
            ))
        }
    };
    let hint = WindowHint {
        pid: window.pid,
        title: window.title.clone(),
        class: window.class.clone(),
        x: window.x,
        y: window.y,
        width: window.width,
        height: window.height,
    };
    match read_tree(bus, &hint, limit, deadline).await {
        Ok(Some(tree)) => {
            let cut = tree.truncated.then(|| {
                format!("the tree of {what} has more than {limit} nodes or nests deeper than {READ_DEPTH_MAX} levels; the rest is left out")
            });
            let unplaced = (!tree.positions_known).then(|| {
                format!("{what} reports no positions for its nodes, so they have no bounds: a click by ref runs a button's own action and gives a field the keyboard focus (then type), while move, down, up and scroll by ref cannot work; use the screenshot for positions")
            });
            let note = match (unplaced, cut) {
                (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                (a, b) => a.or(b),
            };
            let nodes = tree.nodes.into_iter().map(flat_node).collect();
            (Some(TreeSource::Atspi), nodes, note)
        }
        Ok(None) => none(format!(
            "{what} exposes no accessibility tree (xterm and plain X clients have none); use the screenshot"
        )),
        Err(A11yError::Timeout { .. }) => none(format!(
            "the accessibility tree of {what} did not answer within {TREE_DEADLINE_MS} ms; observe again, or use the screenshot"
        )),
        Err(e) => none(format!(
            "the accessibility tree of {what} could not be read: {e}"
        )),
    }
}

/// Gives each popup that has no items yet the items its toolkit lists
/// over AT-SPI with their places: Chromium's own menus (its context menu),
/// for which the browser's native accessibility is on during the read, and
/// LibreOffice's. A popup whose app lists nothing (GTK 4 lists no popover
/// menu and places no node), or does not answer within `deadline`, keeps
/// its name and place alone.
pub async fn fill_popup_items<'p>(
    screen: &Screen,
    browser: Option<&Browser>,
    popups: impl IntoIterator<Item = &'p mut PopupEntry>,
    deadline: Duration,
) {
    let Ok(bus) = screen.a11y() else {
        return;
    };
    let bare: Vec<&mut PopupEntry> = popups.into_iter().filter(|p| p.items.is_empty()).collect();
    let browser = browser.filter(|b| {
        bare.iter()
            .any(|p| is_browser_app(p.pid, &p.class, Some(b.pid())))
    });
    if bare.is_empty() {
        return;
    }
    let read = async {
        // Chromium's menu has its nodes by the time the switch is turned;
        // a popup whose top-level stays empty (a page's `<select>` list,
        // drawn by the page) is read once and not waited for.
        let _native = match browser {
            Some(browser) => native_a11y::turn_on(browser.cdp())
                .await
                .map_err(|e| tracing::debug!("Chromium's menus are read without their items: {e}"))
                .ok(),
            None => None,
        };
        let reads = bare.iter().map(|popup| {
            let hint = popup_hint(popup);
            async move { read_popup_items(bus, &hint, deadline).await }
        });
        let found = futures::future::join_all(reads).await;
        for (popup, read) in bare.into_iter().zip(found) {
            match read {
                Ok(PopupRead::Items(items)) => {
                    popup.items = items.into_iter().map(popup_item).collect();
                }
                Ok(PopupRead::Unbuilt | PopupRead::NoTopLevel) => {}
                Err(e) => tracing::debug!(popup = popup.id, "the popup's items were not read: {e}"),
            }
        }
    };
    if tokio::time::timeout(deadline, read).await.is_err() {
        tracing::debug!("the popups' items did not come within {deadline:?}");
    }
}

fn popup_hint(popup: &PopupEntry) -> WindowHint {
    WindowHint {
        pid: popup.pid,
        title: String::new(),
        class: popup.class.clone(),
        x: popup.x,
        y: popup.y,
        width: popup.width,
        height: popup.height,
    }
}

fn popup_item(node: A11yNode) -> TextNode {
    TextNode {
        node_ref: String::new(),
        role: node.role,
        name: node.name,
        value: None,
        states: node.states.into_iter().map(state).collect(),
        bounds: node.bounds.map(|(x, y, width, height)| Bounds {
            x,
            y,
            width,
            height,
        }),
        depth: None,
        children: Vec::new(),
    }
}

fn flat_node(node: A11yNode) -> FlatNode {
    FlatNode {
        role: node.role,
        name: node.name,
        value: node.value,
        states: node.states.into_iter().map(state).collect(),
        bounds: node.bounds.map(|(x, y, width, height)| Bounds {
            x,
            y,
            width,
            height,
        }),
        handle: node.handle,
        depth: node.depth,
    }
    .tidy()
}

fn state(state: A11yState) -> NodeState {
    match state {
        A11yState::Focused => NodeState::Focused,
        A11yState::Checked => NodeState::Checked,
        A11yState::Selected => NodeState::Selected,
        A11yState::Disabled => NodeState::Disabled,
        A11yState::Expanded => NodeState::Expanded,
        A11yState::Editable => NodeState::Editable,
    }
}
