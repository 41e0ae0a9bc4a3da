//! From the tree as read to the tree as shown: hidden subtrees and empty
//! nodes go, a dropped node's kept children take its place (one level up),
//! and the result is flattened in pre-order and cut at a limit.

use super::{A11yHandle, A11yNode, A11yState};
use atspi::Role;

/// A node as read from the bus, before pruning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadNode {
    pub role: String,
    pub name: String,
    pub value: Option<String>,
    pub states: Vec<A11yState>,
    /// SHOWING and VISIBLE: on screen, and so are its ancestors.
    pub showing: bool,
    /// Focusable or editable: worth listing even without a name.
    pub interactive: bool,
    pub bounds: Option<(i32, i32, u32, u32)>,
    /// Where the node lives on the bus, for acting on it by its actions.
    pub handle: Option<A11yHandle>,
    pub children: Vec<ReadNode>,
}

impl ReadNode {
    /// A node that is not on screen: nothing else of it is read.
    pub fn hidden() -> ReadNode {
        ReadNode {
            role: String::new(),
            name: String::new(),
            value: None,
            states: Vec::new(),
            showing: false,
            interactive: false,
            bounds: None,
            handle: None,
            children: Vec::new(),
        }
    }
}

/// The role's AT-SPI name as the `atspi` crate spells it, as one token
/// (the text view prints roles between other words): `check box` ->
/// `check_box`. The crate names a push button `button`, as CDP and ARIA do.
pub(crate) fn role_name(role: Role) -> String {
    normalise_role(role.name())
}

fn normalise_role(name: &str) -> String {
    name.trim().to_lowercase().replace([' ', '-'], "_")
}

/// Roles that only group or lay out other nodes: without a name they say
/// nothing an agent can use, so their children stand in for them.
fn is_layout_role(role: &str) -> bool {
    matches!(
        role,
        "filler"
            | "panel"
            | "section"
            | "unknown"
            | "invalid"
            | "redundant_object"
            | "layered_pane"
            | "root_pane"
            | "glass_pane"
            | "viewport"
            | "scroll_pane"
            | "split_pane"
            | "option_pane"
            | "grouping"
            | "static"
    )
}

/// The nodes of `root` in pre-order, at most `limit` of them, and whether
/// some were cut. The root is always kept (it is the window).
pub(crate) fn flatten(root: ReadNode, limit: usize) -> (Vec<A11yNode>, bool) {
    let mut out = Vec::new();
    let kept = prune(root, true);
    let mut truncated = false;
    for node in kept {
        push_preorder(node, 0, limit, &mut out, &mut truncated);
    }
    (out, truncated)
}

/// A node with its kept children, after pruning.
struct Kept {
    node: ReadNode,
    children: Vec<Kept>,
}

/// What `node` becomes: itself with its kept children, or (when it is
/// empty) its kept children in its place, or nothing (when hidden).
fn prune(mut node: ReadNode, is_root: bool) -> Vec<Kept> {
    if !node.showing && !is_root {
        return Vec::new();
    }
    let children: Vec<Kept> = std::mem::take(&mut node.children)
        .into_iter()
        .flat_map(|child| prune(child, false))
        .collect();
    let named =
        !node.name.trim().is_empty() || node.value.as_deref().is_some_and(|v| !v.is_empty());
    // LibreOffice makes toolbar separators and panels focusable; a
    // separator still says nothing, and a panel holding controls is only
    // their frame.
    let layout = is_layout_role(&node.role);
    let interactive =
        node.interactive && node.role != "separator" && (!layout || children.is_empty());
    let says_something = named || interactive || (!children.is_empty() && !layout);
    if is_root || says_something {
        vec![Kept { node, children }]
    } else {
        children
    }
}

fn push_preorder(
    kept: Kept,
    depth: usize,
    limit: usize,
    out: &mut Vec<A11yNode>,
    truncated: &mut bool,
) {
    if out.len() >= limit {
        *truncated = true;
        return;
    }
    let Kept { node, children } = kept;
    out.push(A11yNode {
        role: node.role,
        name: node.name,
        value: node.value,
        states: node.states,
        bounds: node.bounds,
        handle: node.handle,
        depth,
    });
    for child in children {
        push_preorder(child, depth + 1, limit, out, truncated);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, children: Vec<ReadNode>) -> ReadNode {
        ReadNode {
            role: role.to_string(),
            name: name.to_string(),
            value: None,
            states: Vec::new(),
            showing: true,
            interactive: false,
            bounds: None,
            handle: None,
            children,
        }
    }

    fn shape(nodes: &[A11yNode]) -> Vec<(usize, &str, &str)> {
        nodes
            .iter()
            .map(|n| (n.depth, n.role.as_str(), n.name.as_str()))
            .collect()
    }

    #[test]
    fn roles_are_lowercase_tokens() {
        assert_eq!(role_name(Role::Button), "button");
        assert_eq!(role_name(Role::CheckBox), "check_box");
        assert_eq!(role_name(Role::Frame), "frame");
        assert_eq!(role_name(Role::DocumentText), "document_text");
        assert_eq!(role_name(Role::Text), "text");
        assert_eq!(normalise_role(" Toggle Button "), "toggle_button");
    }

    #[test]
    fn empty_layout_nodes_go_and_their_children_move_up() {
        let tree = node(
            "dialog",
            "Probe",
            vec![node(
                "filler",
                "",
                vec![
                    node("label", "Your name", vec![]),
                    node("panel", "", vec![node("button", "OK", vec![])]),
                ],
            )],
        );
        let (nodes, truncated) = flatten(tree, 100);
        assert!(!truncated);
        assert_eq!(
            shape(&nodes),
            [
                (0, "dialog", "Probe"),
                (1, "label", "Your name"),
                (1, "button", "OK"),
            ]
        );
    }

    #[test]
    fn hidden_subtrees_go_whole() {
        let mut menu = node("menu", "File", vec![node("menu_item", "Open", vec![])]);
        menu.showing = false;
        let tree = node("frame", "Doc", vec![menu, node("button", "Save", vec![])]);
        let (nodes, _) = flatten(tree, 100);
        assert_eq!(shape(&nodes), [(0, "frame", "Doc"), (1, "button", "Save")]);
    }

    #[test]
    fn unnamed_interactive_and_valued_nodes_stay() {
        let mut entry = node("text", "", vec![]);
        entry.interactive = true;
        let mut slider = node("slider", "", vec![]);
        slider.value = Some("40".to_string());
        let unnamed_label = node("label", "", vec![]);
        let mut separator = node("separator", "", vec![]);
        separator.interactive = true;
        let tree = node("dialog", "D", vec![entry, slider, unnamed_label, separator]);
        let (nodes, _) = flatten(tree, 100);
        assert_eq!(
            shape(&nodes),
            [(0, "dialog", "D"), (1, "text", ""), (1, "slider", "")]
        );
    }

    #[test]
    fn a_focusable_unnamed_panel_gives_way_to_its_controls() {
        let mut panel = node("panel", "", vec![node("button", "Add", vec![])]);
        panel.interactive = true;
        let mut canvas = node("panel", "", vec![]);
        canvas.interactive = true;
        let tree = node("frame", "F", vec![panel, canvas]);
        let (nodes, _) = flatten(tree, 100);
        assert_eq!(
            shape(&nodes),
            [(0, "frame", "F"), (1, "button", "Add"), (1, "panel", "")]
        );
    }

    #[test]
    fn meaningful_containers_stay_when_they_hold_something() {
        let tree = node(
            "frame",
            "F",
            vec![
                node("menu_bar", "", vec![node("menu", "File", vec![])]),
                node("menu_bar", "", vec![]),
                node("panel", "Settings", vec![]),
            ],
        );
        let (nodes, _) = flatten(tree, 100);
        assert_eq!(
            shape(&nodes),
            [
                (0, "frame", "F"),
                (1, "menu_bar", ""),
                (2, "menu", "File"),
                (1, "panel", "Settings"),
            ]
        );
    }

    #[test]
    fn the_cut_keeps_the_preorder_beginning() {
        let tree = node(
            "frame",
            "F",
            vec![
                node(
                    "list",
                    "L",
                    vec![
                        node("list_item", "a", vec![]),
                        node("list_item", "b", vec![]),
                    ],
                ),
                node("button", "OK", vec![]),
            ],
        );
        let (nodes, truncated) = flatten(tree.clone(), 3);
        assert!(truncated);
        assert_eq!(
            shape(&nodes),
            [(0, "frame", "F"), (1, "list", "L"), (2, "list_item", "a")]
        );
        let (all, truncated) = flatten(tree, 5);
        assert!(!truncated);
        assert_eq!(all.len(), 5);
    }
}
