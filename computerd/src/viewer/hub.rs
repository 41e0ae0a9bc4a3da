//! The open viewer pages: how many there are (the host reads it to decide
//! whether to open a browser tab), the focus requests sent to them, and
//! the one-time codes of the links the host opens.

use computer_protocol::ScreenNumber;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Focus requests a slow page may fall behind by before it misses some;
/// only the latest matters to it.
const FOCUS_BACKLOG: usize = 16;

#[derive(Debug)]
pub struct ViewerHub {
    /// Pages connected to the live channel now.
    pages: AtomicU32,
    focus: broadcast::Sender<ScreenNumber>,
    /// Codes the host put in viewer links it opened.
    pub codes: super::link_codes::LinkCodes,
}

/// Counts one open page until dropped, and receives the focus requests.
pub struct PageGuard {
    hub: Arc<ViewerHub>,
    pub focus: broadcast::Receiver<ScreenNumber>,
}

impl ViewerHub {
    pub fn new() -> Arc<ViewerHub> {
        Arc::new(ViewerHub {
            pages: AtomicU32::new(0),
            focus: broadcast::channel(FOCUS_BACKLOG).0,
            codes: Default::default(),
        })
    }

    pub fn pages(&self) -> u32 {
        self.pages.load(Ordering::SeqCst)
    }

    /// A page connected. It listens for focus requests before it counts, so
    /// a host that saw the page counted cannot focus it too early.
    pub fn page_opened(self: &Arc<Self>) -> PageGuard {
        let focus = self.focus.subscribe();
        self.pages.fetch_add(1, Ordering::SeqCst);
        PageGuard {
            hub: Arc::clone(self),
            focus,
        }
    }

    /// Asks every open page to show `screen`; returns how many were asked.
    pub fn focus(&self, screen: ScreenNumber) -> u32 {
        self.focus.send(screen).map_or(0, |n| n as u32)
    }
}

impl Drop for PageGuard {
    fn drop(&mut self) {
        self.hub.pages.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_pages_and_reaches_them() {
        let hub = ViewerHub::new();
        assert_eq!(hub.focus(ScreenNumber(1)), 0);
        let mut a = hub.page_opened();
        let b = hub.page_opened();
        assert_eq!(hub.pages(), 2);
        assert_eq!(hub.focus(ScreenNumber(3)), 2);
        assert_eq!(a.focus.try_recv().unwrap(), ScreenNumber(3));
        drop(b);
        assert_eq!(hub.pages(), 1);
        drop(a);
        assert_eq!(hub.pages(), 0);
    }
}
