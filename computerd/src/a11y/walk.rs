//! Reads a window's accessible subtree. Every node's calls go out at once,
//! and so do the reads of all its children, so the app answers a stream of
//! requests instead of one round trip after another. A hidden node's
//! subtree is not read: AT-SPI's SHOWING means the node and all its
//! ancestors are on screen, and hidden menus and tabs are most of a big
//! app's tree. A budget caps the nodes read.

use super::find::{accessible, proxy};
use super::prune::{role_name, ReadNode};
use super::{A11yHandle, A11yState};
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, ObjectRefOwned, State, StateSet};
use futures::future::{join_all, BoxFuture};
use futures::FutureExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Longest value (characters) read from a text node.
const VALUE_MAX_CHARS: i32 = 2000;
/// Levels read below the window. Each level is one more nested future
/// polled on the worker's stack; deeper nodes are left out and the tree
/// counts as cut. Real apps nest a few dozen levels.
pub const READ_DEPTH_MAX: usize = 100;

pub(crate) struct Walk<'c> {
    conn: &'c zbus::Connection,
    /// The budget it started with.
    initial: usize,
    /// Nodes that may still be read.
    budget: AtomicUsize,
    /// Set when the budget ran out with nodes left unread.
    cut: AtomicBool,
}

impl<'c> Walk<'c> {
    pub fn new(conn: &'c zbus::Connection, budget: usize) -> Walk<'c> {
        Walk {
            conn,
            initial: budget,
            budget: AtomicUsize::new(budget),
            cut: AtomicBool::new(false),
        }
    }

    /// True when some nodes were not read for lack of budget.
    pub fn was_cut(&self) -> bool {
        self.cut.load(Ordering::Relaxed)
    }

    /// Nodes read (or being read) so far.
    pub fn read_count(&self) -> usize {
        self.initial - self.budget.load(Ordering::Relaxed)
    }

    fn take_one(&self) -> bool {
        let taken = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_ok();
        if !taken {
            self.cut.store(true, Ordering::Relaxed);
        }
        taken
    }

    /// The tree under `root`, root included. Errors only when the root
    /// itself cannot be read; a node that vanishes mid-read is left out.
    pub async fn read_root(&self, root: &ObjectRefOwned) -> zbus::Result<ReadNode> {
        self.take_one();
        self.read(root.clone(), 0).await
    }

    /// One node and (when it shows) its subtree. The state comes first:
    /// most nodes of a big app are hidden, and for those it is the only
    /// call. A showing node's other facts and its children's reads then go
    /// out together.
    fn read(&self, object: ObjectRefOwned, depth: usize) -> BoxFuture<'_, zbus::Result<ReadNode>> {
        async move {
            let is_root = depth == 0;
            let proxy = accessible(self.conn, &object).await?;
            let state = proxy.get_state().await?;
            let showing = state.contains(State::Showing) && state.contains(State::Visible);
            if !showing && !is_root {
                return Ok(ReadNode::hidden());
            }
            let (role, name, interfaces, children, bounds) = futures::join!(
                proxy.get_role(),
                proxy.name(),
                proxy.get_interfaces(),
                proxy.get_children(),
                self.bounds(&object),
            );
            let (role, name, interfaces) = (role_name(role?), name?, interfaces?);
            let name = name.trim().to_string();
            let mut children: Vec<ObjectRefOwned> = children
                .unwrap_or_default()
                .into_iter()
                .filter(|child| !child.is_null())
                .collect();
            if depth >= READ_DEPTH_MAX && !children.is_empty() {
                self.cut.store(true, Ordering::Relaxed);
                children.clear();
            }
            let children: Vec<ObjectRefOwned> = children
                .into_iter()
                .take_while(|_| self.take_one())
                .collect();
            let (value, children) = futures::join!(
                self.value(&object, &role, interfaces, state, name.is_empty()),
                join_all(
                    children
                        .into_iter()
                        .map(|child| self.read(child, depth + 1))
                ),
            );
            Ok(ReadNode {
                role,
                name,
                value,
                states: shown_states(state),
                showing,
                interactive: state.contains(State::Focusable) || state.contains(State::Editable),
                bounds,
                handle: object.name().map(|bus| A11yHandle {
                    bus: bus.to_string(),
                    path: object.path().to_string(),
                    acts: interfaces.contains(Interface::Action),
                }),
                children: children.into_iter().filter_map(Result::ok).collect(),
            })
        }
        .boxed()
    }

    /// A proxy of `object` for one of its interfaces; `None` for a null
    /// reference or one that cannot be addressed.
    async fn proxy<P>(&self, object: &ObjectRefOwned) -> Option<P>
    where
        P: From<zbus::Proxy<'c>> + zbus::proxy::Defaults,
    {
        proxy(self.conn, object.name()?.as_str(), object.path().as_str())
            .await
            .ok()
    }

    /// The node's extents on screen; `None` for nodes without a Component
    /// interface (their call fails), off screen or of no size.
    async fn bounds(&self, object: &ObjectRefOwned) -> Option<(i32, i32, u32, u32)> {
        let component: ComponentProxy = self.proxy(object).await?;
        let (x, y, width, height) = component.get_extents(CoordType::Screen).await.ok()?;
        let off_screen = x <= -(1 << 20) || y <= -(1 << 20);
        (width > 0 && height > 0 && !off_screen).then_some((x, y, width as u32, height as u32))
    }

    /// The text of an editable (or unnamed) text node, else a range's value.
    async fn value(
        &self,
        object: &ObjectRefOwned,
        role: &str,
        interfaces: InterfaceSet,
        state: StateSet,
        unnamed: bool,
    ) -> Option<String> {
        let editable = state.contains(State::Editable);
        if interfaces.contains(Interface::Text) && (editable || unnamed) {
            let text: TextProxy = self.proxy(object).await?;
            let count = text.character_count().await.ok()?;
            let text = text.get_text(0, count.min(VALUE_MAX_CHARS)).await.ok()?;
            return (editable || !text.trim().is_empty()).then_some(text);
        }
        if interfaces.contains(Interface::Value) && is_range_role(role) {
            let value: ValueProxy = self.proxy(object).await?;
            return value.current_value().await.ok().map(format_number);
        }
        None
    }
}

/// Roles whose Value interface says something. LibreOffice gives menus,
/// buttons and separators a Value of 0 as well.
fn is_range_role(role: &str) -> bool {
    matches!(
        role,
        "slider" | "spin_button" | "scroll_bar" | "progress_bar" | "level_bar" | "dial"
    )
}

fn shown_states(state: StateSet) -> Vec<A11yState> {
    let enabled = state.contains(State::Enabled) || state.contains(State::Sensitive);
    [
        (state.contains(State::Focused), A11yState::Focused),
        (state.contains(State::Checked), A11yState::Checked),
        (state.contains(State::Selected), A11yState::Selected),
        (!enabled, A11yState::Disabled),
        (state.contains(State::Expanded), A11yState::Expanded),
        (state.contains(State::Editable), A11yState::Editable),
    ]
    .into_iter()
    .filter_map(|(on, shown)| on.then_some(shown))
    .collect()
}

/// `40` rather than `40.0`; fractions as they are.
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_numbers() {
        assert_eq!(format_number(40.0), "40");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(0.25), "0.25");
    }

    #[test]
    fn states_map_to_the_shown_few() {
        let state =
            StateSet::new(State::Enabled | State::Focused | State::Editable | State::Showing);
        assert_eq!(
            shown_states(state),
            [A11yState::Focused, A11yState::Editable]
        );
        let insensitive = StateSet::new(State::Showing);
        assert_eq!(shown_states(insensitive), [A11yState::Disabled]);
    }
}
