//! A viewer attached to a screen. While one is, the session's idle timer
//! does not run, and a session that ends keeps its screen open until the
//! last viewer leaves.

use super::registry::Sessions;
use super::session::Session;
use crate::screens::Screen;
use std::sync::Arc;

/// Counts one viewer of one screen until dropped.
pub struct Watching {
    /// To uncount the viewer, and to close the screen when this was the
    /// last viewer of an ended session.
    sessions: Arc<Sessions>,
    session: Arc<Session>,
    /// Kept so the screen's VNC port stays the one this viewer connected to.
    screen: Arc<Screen>,
}

impl Watching {
    pub(super) fn new(sessions: Arc<Sessions>, session: Arc<Session>, screen: Arc<Screen>) -> Self {
        Watching {
            sessions,
            session,
            screen,
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
        let Some(screen) = self.sessions.unwatch(&self.session, &self.screen) else {
            return;
        };
        // Closing waits for the processes to exit, which a destructor cannot;
        // without a runtime computerd is shutting down, and `end_all` closes
        // every screen anyway.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let sessions = Arc::clone(&self.sessions);
            runtime.spawn(async move {
                screen.close().await;
                sessions.screen_closed(&screen);
            });
        }
    }
}
