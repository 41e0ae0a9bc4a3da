//! A popup's items over AT-SPI: the menu or list an app shows in an
//! override-redirect window, found among the app's top-levels by where it
//! is or as its menu bar's open menu ([`super::find`]), read
//! ([`super::walk`]) and cut down to what can be clicked.

use super::{find, prune, walk, A11yBus, A11yError, A11yNode, WindowHint};
use std::time::Duration;

/// Nodes read at most from one popup: a long menu has a few dozen items.
const POPUP_NODES_MAX: usize = 400;

/// Roles of what a click in a popup chooses. A `menu` inside a menu is a
/// submenu's item.
const ITEM_ROLES: &[&str] = &[
    "menu_item",
    "check_menu_item",
    "radio_menu_item",
    "tearoff_menu_item",
    "menu",
    "list_item",
    "table_cell",
    "push_button",
    "toggle_button",
];

/// What a popup's read found.
#[derive(Debug)]
pub enum PopupRead {
    /// No app shows a top-level or an open menu where the popup is:
    /// xterm's and the window manager's menus, a page's `<select>` list.
    NoTopLevel,
    /// The top-level there has no nodes below it yet: Chromium's, until its
    /// native accessibility is on.
    Unbuilt,
    /// Its items in the app's order; none when its toolkit lists none.
    Items(Vec<A11yNode>),
}

/// The items of the popup window `popup`, within `deadline`.
pub async fn read_popup_items(
    bus: &A11yBus,
    popup: &WindowHint,
    deadline: Duration,
) -> Result<PopupRead, A11yError> {
    let read = async {
        let conn = bus.connection();
        let Some(top) = find::find_popup(conn, popup).await? else {
            return Ok(PopupRead::NoTopLevel);
        };
        let walk = walk::Walk::new(conn, POPUP_NODES_MAX);
        let root = walk.read_root(&top).await?;
        if walk.read_count() <= 1 {
            return Ok(PopupRead::Unbuilt);
        }
        let (nodes, _) = prune::flatten(root, POPUP_NODES_MAX);
        Ok(PopupRead::Items(clickable_items(nodes, popup)))
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(result) => result,
        Err(_) => Err(A11yError::Timeout { waited: deadline }),
    }
}

/// The named items with a place inside the popup; separators, the menu
/// that holds them and items scrolled out of the popup are left out.
fn clickable_items(nodes: Vec<A11yNode>, popup: &WindowHint) -> Vec<A11yNode> {
    let inside = |(x, y, width, height): (i32, i32, u32, u32)| {
        find::centre_inside(x, y, width.into(), height.into(), popup)
    };
    nodes
        .into_iter()
        .filter(|n| ITEM_ROLES.contains(&n.role.as_str()))
        .filter(|n| !n.name.trim().is_empty())
        .filter(|n| n.bounds.is_some_and(inside))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, bounds: (i32, i32, u32, u32)) -> A11yNode {
        A11yNode {
            role: role.into(),
            name: name.into(),
            value: None,
            states: vec![],
            bounds: Some(bounds),
            handle: None,
            depth: 1,
        }
    }

    #[test]
    fn a_popups_items_are_its_named_choices_inside_it() {
        let popup = WindowHint {
            pid: Some(7),
            title: String::new(),
            class: "Chromium".into(),
            x: 300,
            y: 250,
            width: 347,
            height: 332,
        };
        let nodes = vec![
            node("frame", "", (300, 250, 347, 332)),
            node("menu", "", (300, 254, 347, 324)),
            node("menu_item", "Back Alt+Left Arrow", (300, 254, 347, 29)),
            node("separator", "", (300, 283, 347, 8)),
            node("check_menu_item", "Spell check", (300, 291, 347, 29)),
            node("menu", "Writing direction", (300, 320, 347, 29)),
            node("menu_item", "", (300, 349, 347, 29)),
            // Scrolled below the popup's edge.
            node("menu_item", "Inspect", (300, 600, 347, 29)),
        ];
        let names: Vec<String> = clickable_items(nodes, &popup)
            .into_iter()
            .map(|n| n.name)
            .collect();
        assert_eq!(
            names,
            ["Back Alt+Left Arrow", "Spell check", "Writing direction"]
        );
    }
}
