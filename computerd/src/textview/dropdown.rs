//! The options of an open `<select>`. The page's tree names them, but
//! Chromium draws the open list in a popup window of its own, outside the
//! page's layout, so DevTools gives them no boxes and a ref could not click
//! one. The popup's geometry places them: Chromium stacks the options in
//! one column of equal rows inside a one-pixel border, in the tree's order.
//!
//! Only a plain list is placed: a dropdown with groups or separators has
//! rows of other heights, and one with more options than it shows scrolls,
//! so its rows are not where equal slices would put them. Those options
//! keep no bounds, and a ref to one says so.

use super::flat::FlatNode;
use computer_protocol::{Bounds, NodeState, PopupEntry};

/// Rows Chromium shows before the list scrolls.
const ROWS_SHOWN_MAX: usize = 20;

/// The popup's border, on each side.
const BORDER: u32 = 1;

/// A row lower than this is not a row of text: the popup is not this
/// list, or the list scrolls.
const ROW_HEIGHT_MIN: u32 = 10;

/// How far the popup may sit from the select's edge (left, and above or
/// below) and still be its list.
const SLACK: i32 = 4;

/// Gives the options of the page's expanded select the bounds of their
/// rows in the browser's popup: the topmost of `popups` that is the
/// browser's (`is_browser`) and opens from that select.
pub fn place_open_options(
    nodes: &mut [FlatNode],
    popups: &[PopupEntry],
    is_browser: impl Fn(&PopupEntry) -> bool,
) {
    let Some((select, popup)) = expanded_select_and_list(nodes, popups, is_browser) else {
        return;
    };
    let depth = nodes[select].depth;
    let below = nodes[select + 1..]
        .iter()
        .take_while(|n| n.depth > depth)
        .count();
    let list = select + 1..select + 1 + below;
    // The list's own node (`menu_list_popup`) and its options, nothing else.
    let options: Vec<usize> = list
        .clone()
        .filter(|&i| nodes[i].role == "option")
        .collect();
    let others = below - options.len();
    if options.is_empty() || options.len() > ROWS_SHOWN_MAX || others > 1 {
        return;
    }
    if options.iter().any(|&i| nodes[i].bounds.is_some()) {
        return;
    }
    let inner = popup.height.saturating_sub(2 * BORDER);
    let rows = options.len() as u32;
    if inner / rows < ROW_HEIGHT_MIN {
        return;
    }
    for (row, &i) in options.iter().enumerate() {
        let row = row as u32;
        // Rows end where the next begins, so their heights add up to the
        // list's even when it does not divide evenly.
        let top = inner * row / rows;
        let bottom = inner * (row + 1) / rows;
        nodes[i].bounds = Some(Bounds {
            x: popup.x + BORDER as i32,
            y: popup.y + (BORDER + top) as i32,
            width: popup.width.saturating_sub(2 * BORDER),
            height: bottom - top,
        });
    }
}

/// The X window id of the popup that is the page's open `<select>` list:
/// its options come from the page, so nothing else need read it.
pub fn open_select_list(
    nodes: &[FlatNode],
    popups: &[PopupEntry],
    is_browser: impl Fn(&PopupEntry) -> bool,
) -> Option<u32> {
    expanded_select_and_list(nodes, popups, is_browser).map(|(_, popup)| popup.id)
}

/// The page's expanded select (its index in `nodes`) and the topmost of
/// `popups` that is the browser's and opens from it.
fn expanded_select_and_list<'p>(
    nodes: &[FlatNode],
    popups: &'p [PopupEntry],
    is_browser: impl Fn(&PopupEntry) -> bool,
) -> Option<(usize, &'p PopupEntry)> {
    let select = nodes
        .iter()
        .position(|n| n.role == "combobox" && n.states.contains(&NodeState::Expanded))?;
    let anchor = nodes[select].bounds?;
    let popup = popups
        .iter()
        .find(|p| is_browser(p) && opens_from(p, &anchor))?;
    Some((select, popup))
}

/// Whether `popup` hangs from `anchor`: its left edge at the select's, and
/// its top at the select's bottom, or its bottom at the select's top (near
/// the screen's foot the list opens upwards).
fn opens_from(popup: &PopupEntry, anchor: &Bounds) -> bool {
    let near = |a: i32, b: i32| (a - b).abs() <= SLACK;
    let popup_bottom = popup.y.saturating_add(popup.height as i32);
    let anchor_bottom = anchor.y.saturating_add(anchor.height as i32);
    near(popup.x, anchor.x) && (near(popup.y, anchor_bottom) || near(popup_bottom, anchor.y))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, depth: usize, bounds: Option<Bounds>) -> FlatNode {
        FlatNode {
            role: role.into(),
            name: name.into(),
            value: None,
            states: Vec::new(),
            bounds,
            handle: None,
            depth,
        }
    }

    fn bounds(x: i32, y: i32, width: u32, height: u32) -> Bounds {
        Bounds {
            x,
            y,
            width,
            height,
        }
    }

    /// The page of the engine test: a select at 8,95 91x26 whose three
    /// options Chromium lists in a 91x95 popup right below it.
    fn open_select(options: &[&str]) -> Vec<FlatNode> {
        let mut select = node("combobox", "", 1, Some(bounds(8, 95, 91, 26)));
        select.states = vec![NodeState::Focused, NodeState::Expanded];
        let mut nodes = vec![
            node("document", "Choices", 0, Some(bounds(0, 87, 1280, 713))),
            select,
            node("menu_list_popup", "", 2, None),
        ];
        nodes.extend(options.iter().map(|o| node("option", o, 3, None)));
        nodes.push(node("paragraph", "", 1, Some(bounds(8, 137, 1264, 300))));
        nodes
    }

    fn popup(x: i32, y: i32, width: u32, height: u32) -> PopupEntry {
        PopupEntry {
            id: 1,
            kind: "menu".into(),
            class: "Chromium".into(),
            pid: Some(44),
            x,
            y,
            width,
            height,
            items: Vec::new(),
            items_note: None,
        }
    }

    fn placed(nodes: &[FlatNode]) -> Vec<Option<Bounds>> {
        nodes
            .iter()
            .filter(|n| n.role == "option")
            .map(|n| n.bounds)
            .collect()
    }

    #[test]
    fn options_take_equal_rows_inside_the_border() {
        let mut nodes = open_select(&["Apple", "Banana", "Cherry"]);
        place_open_options(&mut nodes, &[popup(8, 121, 91, 95)], |_| true);
        assert_eq!(
            placed(&nodes),
            vec![
                Some(bounds(9, 122, 89, 31)),
                Some(bounds(9, 153, 89, 31)),
                Some(bounds(9, 184, 89, 31)),
            ]
        );
        // Nothing else moved.
        assert_eq!(nodes[4 + 2].role, "paragraph");
        assert_eq!(nodes[2].bounds, None);
    }

    #[test]
    fn the_open_selects_list_is_named_by_its_window() {
        let nodes = open_select(&["Apple", "Banana"]);
        let list = popup(8, 121, 91, 64);
        assert_eq!(
            open_select_list(&nodes, std::slice::from_ref(&list), |_| true),
            Some(1)
        );
        // Another app's popup there, or one elsewhere, is not the list.
        assert_eq!(open_select_list(&nodes, &[list], |_| false), None);
        assert_eq!(
            open_select_list(&nodes, &[popup(300, 250, 347, 332)], |_| true),
            None
        );
    }

    #[test]
    fn a_list_opening_upwards_is_placed_too() {
        let mut nodes = open_select(&["Apple", "Banana"]);
        // Its bottom at the select's top (95).
        place_open_options(&mut nodes, &[popup(8, 31, 91, 64)], |_| true);
        assert_eq!(placed(&nodes)[0], Some(bounds(9, 32, 89, 31)));
    }

    #[test]
    fn rows_add_up_when_the_height_does_not_divide() {
        let mut nodes = open_select(&["a", "b", "c"]);
        place_open_options(&mut nodes, &[popup(8, 121, 91, 102)], |_| true);
        let rows = placed(&nodes);
        let heights: Vec<u32> = rows.iter().map(|b| b.unwrap().height).collect();
        assert_eq!(heights.iter().sum::<u32>(), 100);
        assert_eq!(rows[2].unwrap().y + rows[2].unwrap().height as i32, 222);
    }

    #[test]
    fn what_is_not_a_plain_open_list_of_the_browser_is_left_alone() {
        let untouched = |nodes: &mut Vec<FlatNode>, popups: &[PopupEntry], browser: bool| {
            place_open_options(nodes, popups, |_| browser);
            placed(nodes).iter().all(Option::is_none)
        };
        let list = popup(8, 121, 91, 95);
        // Another app's popup, one away from the select, none at all.
        assert!(untouched(
            &mut open_select(&["a", "b", "c"]),
            std::slice::from_ref(&list),
            false
        ));
        assert!(untouched(
            &mut open_select(&["a", "b", "c"]),
            &[popup(300, 300, 91, 95)],
            true
        ));
        assert!(untouched(&mut open_select(&["a", "b", "c"]), &[], true));
        // The select is closed.
        let mut closed = open_select(&["a", "b", "c"]);
        closed[1].states.clear();
        assert!(untouched(&mut closed, std::slice::from_ref(&list), true));
        // More options than the list shows: it scrolls.
        let many: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(untouched(
            &mut open_select(&many),
            &[popup(8, 121, 91, 400)],
            true
        ));
        // Rows too low to be rows of this list.
        assert!(untouched(
            &mut open_select(&["a", "b", "c"]),
            &[popup(8, 121, 91, 20)],
            true
        ));
        // A group among the options: its rows differ in height.
        let mut grouped = open_select(&["a", "b"]);
        grouped.insert(3, node("group", "Fruit", 3, None));
        assert!(untouched(&mut grouped, &[list], true));
    }
}
