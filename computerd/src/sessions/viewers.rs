//! The viewers watching the sessions' screens: each counts as activity,
//! and the last to leave an ended session's screen closes it.

use super::registry::Sessions;
use super::session::Session;
use super::watching::Watching;
use crate::screens::Screen;
use computer_protocol::ScreenNumber;
use std::sync::Arc;

impl Sessions {
    /// Counts a viewer on screen `number` until the returned guard drops;
    /// `None` when no such screen is open.
    pub fn watch_screen(self: &Arc<Self>, number: ScreenNumber) -> Option<Watching> {
        let (session, screen) = {
            let state = self.state();
            let open = state.screens.get(&number).filter(|open| !open.closing)?;
            open.session
                .viewers
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (Arc::clone(&open.session), Arc::clone(&open.screen))
        };
        self.changed();
        let sessions = Arc::clone(self);
        let (left_session, left_screen) = (Arc::clone(&session), Arc::clone(&screen));
        Some(Watching::new(session, screen, move || {
            sessions.viewer_left(&left_session, &left_screen)
        }))
    }

    /// A viewer of `screen` left; closes the screen when it was the last
    /// viewer of an ended session.
    fn viewer_left(self: &Arc<Self>, session: &Arc<Session>, screen: &Screen) {
        let Some(screen) = self.unwatch(session, screen) else {
            return;
        };
        // Closing waits for the processes to exit, which a destructor cannot;
        // without a runtime computerd is shutting down, and `end_all` closes
        // every screen anyway.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let sessions = Arc::clone(self);
            runtime.spawn(async move {
                screen.close().await;
                sessions.screen_closed(&screen);
            });
        }
    }

    /// A viewer of `screen` left. Returns the screen when it was the last
    /// viewer of an ended session: the caller closes it.
    fn unwatch(&self, session: &Arc<Session>, screen: &Screen) -> Option<Arc<Screen>> {
        let closing = {
            let mut state = self.state();
            let left = session
                .viewers
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
                - 1;
            // Watching counted as activity; the idle timer starts afresh.
            session.touch();
            let ended = !state.live.contains_key(&session.id);
            match state.screens.get_mut(&screen.number) {
                Some(open)
                    if left == 0
                        && ended
                        && !open.closing
                        && Arc::ptr_eq(&open.session, session) =>
                {
                    open.closing = true;
                    Some(Arc::clone(&open.screen))
                }
                _ => None,
            }
        };
        self.changed();
        closing
    }

    /// A lingering screen was closed by its last viewer: it leaves the list
    /// now that its number is free.
    fn screen_closed(&self, screen: &Arc<Screen>) {
        {
            let mut state = self.state();
            if state
                .screens
                .get(&screen.number)
                .is_some_and(|open| Arc::ptr_eq(&open.screen, screen))
            {
                state.screens.remove(&screen.number);
            }
        }
        self.changed();
    }
}
