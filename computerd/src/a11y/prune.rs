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

/// Dropped one node at a time: a deep tree dropped the usual way would
/// recurse once per level.
impl Drop for ReadNode {
    fn drop(&mut self) {
        let mut below = std::mem::take(&mut self.children);
        while let Some(mut node) = below.pop() {
            below.append(&mut node.children);
        }
    }
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
/// some were cut. The root is always kept (it is the window). Every step
/// runs on its own stack, not the thread's: an app's tree may nest as
/// deep as it likes.
pub(crate) fn flatten(root: ReadNode, limit: usize) -> (Vec<A11yNode>, bool) {
    let mut slots = unpack(root);
    let kept = prune(&mut slots);
    let mut out = Vec::new();
    let mut truncated = false;
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    while let Some((index, depth)) = stack.pop() {
        if out.len() >= limit {
            truncated = true;
            break;
        }
        let mut node = std::mem::replace(&mut slots[index].node, ReadNode::hidden());
        out.push(A11yNode {
            role: std::mem::take(&mut node.role),
            name: std::mem::take(&mut node.name),
            value: node.value.take(),
            states: std::mem::take(&mut node.states),
            bounds: node.bounds,
            handle: node.handle.take(),
            depth,
        });
        stack.extend(kept[index].iter().rev().map(|&child| (child, depth + 1)));
    }
    (out, truncated)
}

/// One node of the tree as read, its children taken out.
struct Slot {
    node: ReadNode,
    children: Vec<usize>,
}

/// The tree as slots in pre-order (a parent before its children, so
/// every child's index is above its parent's).
fn unpack(root: ReadNode) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    let mut stack: Vec<(ReadNode, Option<usize>)> = vec![(root, None)];
    while let Some((mut node, parent)) = stack.pop() {
        let children = std::mem::take(&mut node.children);
        let index = slots.len();
        if let Some(parent) = parent {
            slots[parent].children.push(index);
        }
        slots.push(Slot {
            node,
            children: Vec::new(),
        });
        stack.extend(children.into_iter().rev().map(|child| (child, Some(index))));
    }
    slots
}

/// The kept children of every slot (indexes of slots). A node is kept
/// with its kept children, or (when it is empty) its kept children take
/// its place, or it goes with its subtree (when hidden). Children come
/// after their parent in `slots`, so walking backwards settles each
/// subtree before its parent.
fn prune(slots: &mut [Slot]) -> Vec<Vec<usize>> {
    // What stands in each slot's place in its parent: itself, its kept
    // children, or nothing.
    let mut standing: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    let mut kept: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    for index in (0..slots.len()).rev() {
        let is_root = index == 0;
        let node = &slots[index].node;
        if !node.showing && !is_root {
            continue;
        }
        let children: Vec<usize> = slots[index]
            .children
            .iter()
            .flat_map(|&child| std::mem::take(&mut standing[child]))
            .collect();
        let named =
            !node.name.trim().is_empty() || node.value.as_deref().is_some_and(|v| !v.is_empty());
        // LibreOffice makes toolbar separators and panels focusable; a
        // separator still says nothing, and a panel holding controls is
        // only their frame.
        let layout = is_layout_role(&node.role);
        let interactive =
            node.interactive && node.role != "separator" && (!layout || children.is_empty());
        let says_something = named || interactive || (!children.is_empty() && !layout);
        if is_root || says_something {
            kept[index] = children;
            standing[index] = vec![index];
        } else {
            standing[index] = children;
        }
    }
    kept
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

    #[test]
    fn a_very_deep_tree_is_pruned_flattened_and_dropped_on_a_small_stack() {
        let pruned = std::thread::Builder::new()
            .name("small stack".into())
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let deep = || {
                    let mut tree = node("button", "bottom", vec![]);
                    for level in (0..200_000).rev() {
                        let name = if level % 1000 == 0 { "named" } else { "" };
                        tree = node("panel", name, vec![tree]);
                    }
                    tree
                };
                // A read cut short (its deadline passed) drops its tree.
                drop(deep());
                flatten(deep(), 1000)
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        let (nodes, truncated) = pruned;
        assert!(!truncated);
        // The root, the named panels below it, and the button.
        assert_eq!(nodes.len(), 1 + 199 + 1);
        assert_eq!(nodes.last().unwrap().name, "bottom");
        assert_eq!(nodes.last().unwrap().depth, 200);
    }
}
