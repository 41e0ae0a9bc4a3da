//! A tree as a pre-order list of nodes with depths: what both readers
//! (AT-SPI and the page's tree) produce, what a session keeps for refs and
//! paging, and what a page of the view is nested back from.

use crate::a11y::A11yHandle;
use computer_protocol::textview::TREE_DEPTH_MAX;
use computer_protocol::{cut_field, Bounds, NodeState, TextNode};
use std::hash::{Hash, Hasher};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlatNode {
    pub role: String,
    pub name: String,
    pub value: Option<String>,
    pub states: Vec<NodeState>,
    /// Screen pixels.
    pub bounds: Option<Bounds>,
    /// The node on the screen's AT-SPI bus, for a ref to act on when the
    /// app gives no positions.
    pub handle: Option<A11yHandle>,
    pub depth: usize,
}

impl FlatNode {
    /// Names and values cut to the view's field limit; states sorted.
    pub fn tidy(mut self) -> FlatNode {
        self.name = cut_field(&self.name);
        self.value = self.value.map(|v| cut_field(&v)).filter(|v| !v.is_empty());
        self.states.sort();
        self.states.dedup();
        self
    }
}

/// The nodes `offset..offset + count` of `nodes`, nested again: a node
/// whose parent is on an earlier page becomes a root of this one. The
/// ref of node `i` is `e{first_ref + i}`. Nesting stops at
/// [`TREE_DEPTH_MAX`] levels, so the view's JSON stays within what the
/// host reads: a deeper node joins the children of its ancestor at that
/// level and carries its own `depth`.
pub fn nest(nodes: &[FlatNode], first_ref: u64, offset: usize, count: usize) -> Vec<TextNode> {
    let end = (offset + count).min(nodes.len());
    let page = nodes.get(offset..end).unwrap_or_default();
    let mut roots: Vec<TextNode> = Vec::new();
    // The open ancestors of the next node, as (depth, path of child indexes).
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, node) in page.iter().enumerate() {
        while open.last().is_some_and(|(depth, _)| *depth >= node.depth) {
            open.pop();
        }
        let too_deep = open.len() > TREE_DEPTH_MAX;
        open.truncate(TREE_DEPTH_MAX);
        let text = TextNode {
            node_ref: format!("e{}", first_ref + (offset + i) as u64),
            role: node.role.clone(),
            name: node.name.clone(),
            value: node.value.clone(),
            states: node.states.clone(),
            bounds: node.bounds,
            depth: too_deep.then_some(node.depth),
            children: Vec::new(),
        };
        let path = match open.last() {
            Some((_, parent_path)) => {
                let parent = node_at(&mut roots, parent_path);
                parent.children.push(text);
                let mut path = parent_path.clone();
                path.push(parent.children.len() - 1);
                path
            }
            None => {
                roots.push(text);
                vec![roots.len() - 1]
            }
        };
        open.push((node.depth, path));
    }
    roots
}

fn node_at<'a>(roots: &'a mut [TextNode], path: &[usize]) -> &'a mut TextNode {
    let (first, rest) = path.split_first().expect("a path has a root");
    let mut node = &mut roots[*first];
    for index in rest {
        node = &mut node.children[*index];
    }
    node
}

/// What the unchanged rule compares for a text view: the windows and the
/// tree's content, not its refs.
pub fn content_key(
    popups: &[computer_protocol::PopupEntry],
    windows: &[computer_protocol::WindowEntry],
    window: Option<u32>,
    nodes: &[FlatNode],
) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    popups.hash(&mut hasher);
    windows.hash(&mut hasher);
    window.hash(&mut hasher);
    nodes.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(role: &str, depth: usize) -> FlatNode {
        FlatNode {
            role: role.into(),
            name: String::new(),
            value: None,
            states: vec![],
            bounds: None,
            handle: None,
            depth,
        }
    }

    fn shape(nodes: &[TextNode]) -> String {
        nodes
            .iter()
            .map(|n| {
                if n.children.is_empty() {
                    n.node_ref.clone()
                } else {
                    format!("{}({})", n.node_ref, shape(&n.children))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn nests_a_pre_order_list() {
        let nodes = [
            flat("frame", 0),
            flat("panel", 1),
            flat("button", 2),
            flat("text", 2),
            flat("button", 1),
        ];
        assert_eq!(shape(&nest(&nodes, 10, 0, 5)), "e10(e11(e12 e13) e14)");
    }

    #[test]
    fn a_later_page_starts_with_roots_and_keeps_the_refs() {
        let nodes = [
            flat("frame", 0),
            flat("panel", 1),
            flat("button", 2),
            flat("text", 2),
            flat("button", 1),
        ];
        assert_eq!(shape(&nest(&nodes, 1, 2, 2)), "e3 e4");
        assert_eq!(shape(&nest(&nodes, 1, 3, 10)), "e4 e5");
        assert!(nest(&nodes, 1, 9, 10).is_empty());
    }

    fn nesting(nodes: &[TextNode]) -> usize {
        let mut deepest = 0;
        let mut level = nodes.iter().map(|n| (n, 1)).collect::<Vec<_>>();
        while let Some((node, depth)) = level.pop() {
            deepest = deepest.max(depth);
            level.extend(node.children.iter().map(|c| (c, depth + 1)));
        }
        deepest
    }

    #[test]
    fn nesting_stops_at_the_cap_and_deeper_nodes_show_their_depth() {
        let chain: Vec<FlatNode> = (0..200).map(|depth| flat("group", depth)).collect();
        let nested = nest(&chain, 1, 0, chain.len());
        assert_eq!(nesting(&nested), TREE_DEPTH_MAX + 1);
        // Down the first children: levels 0..=TREE_DEPTH_MAX, the last of
        // which holds every deeper node as a sibling.
        let mut node = &nested[0];
        for _ in 0..TREE_DEPTH_MAX - 1 {
            assert_eq!(node.depth, None);
            node = &node.children[0];
        }
        let deepest = &node.children;
        assert_eq!(deepest.len(), 200 - TREE_DEPTH_MAX);
        assert_eq!(deepest[0].depth, None, "its own level: no depth shown");
        assert_eq!(deepest[1].depth, Some(TREE_DEPTH_MAX + 1));
        assert_eq!(deepest.last().unwrap().depth, Some(199));
        assert_eq!(deepest.last().unwrap().node_ref, "e200");
        // A shallower node after the deep run nests where it belongs.
        let mut back = chain.clone();
        back.push(flat("button", 1));
        let nested = nest(&back, 1, 0, back.len());
        assert_eq!(nested[0].children.len(), 2);
        assert_eq!(nested[0].children[1].node_ref, "e201");
    }

    #[test]
    fn tidy_cuts_and_sorts() {
        let node = FlatNode {
            value: Some(String::new()),
            states: vec![NodeState::Focused, NodeState::Checked, NodeState::Focused],
            ..flat("check_box", 0)
        }
        .tidy();
        assert_eq!(node.value, None);
        assert_eq!(node.states, vec![NodeState::Focused, NodeState::Checked]);
    }
}
