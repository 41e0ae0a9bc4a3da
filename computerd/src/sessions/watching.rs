//! A viewer attached to a screen. While one is, the session's idle timer
//! does not run, and a session that ends keeps its screen open until the
//! last viewer leaves.

use super::session::Session;
use crate::screens::Screen;
use std::sync::Arc;

/// Counts one viewer of one screen until dropped.
pub struct Watching {
    session: Arc<Session>,
    /// Kept so the screen's VNC port stays the one this viewer connected to.
    screen: Arc<Screen>,
    /// Uncounts the viewer, and closes the screen when this was the last
    /// viewer of an ended session; the registry that counted it says how.
    leave: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Watching {
    pub(super) fn new(
        session: Arc<Session>,
        screen: Arc<Screen>,
        leave: impl FnOnce() + Send + Sync + 'static,
    ) -> Self {
        Watching {
            session,
            screen,
            leave: Some(Box::new(leave)),
        }
    }

    pub fn screen(&self) -> &Arc<Screen> {
        &self.screen
    }

    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        if let Some(leave) = self.leave.take() {
            leave();
        }
    }
}
