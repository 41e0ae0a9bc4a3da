//! A tree as a pre-order list of nodes with depths: what both readers
//! (AT-SPI and the page's tree) produce, what a session keeps for refs and
//! paging, and what a page of the view is nested back from.

use crate::a11y::A11yHandle;
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
/// ref of node `i` is `e{first_ref + i}`.
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
        let text = TextNode {
            node_ref: format!("e{}", first_ref + (offset + i) as u64),
            role: node.role.clone(),
            name: node.name.clone(),
            value: node.value.clone(),
            states: node.states.clone(),
            bounds: node.bounds,
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
    windows: &[computer_protocol::WindowEntry],
    window: Option<u32>,
    nodes: &[FlatNode],
) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
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
