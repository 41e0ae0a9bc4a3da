//! The sessions' screens: each opens on its session's first use and is
//! found again by its number or its X display.

use super::error::SessionError;
use super::registry::{ended_reason, join_failed, OpenScreen, Sessions};
use super::session::Session;
use crate::screens::Screen;
use computer_protocol::ScreenNumber;
use std::sync::Arc;

impl Sessions {
    /// The session's screen, opening it on first use, once its desktop is
    /// drawn. The opening runs in a task of its own: a request dropped half
    /// way (a client that hung up) must not leave Xvnc running with nobody
    /// to close it.
    ///
    /// The wait for the desktop comes after the session's screen slot is
    /// filled and released: a `shell` call, which only needs the screen's
    /// `DISPLAY`, does not wait for Fluxbox's drawing too.
    pub async fn screen_of(
        self: &Arc<Self>,
        session: &Arc<Session>,
    ) -> Result<Arc<Screen>, SessionError> {
        let screen = match session.current_screen() {
            Some(screen) => screen,
            None => {
                let (sessions, session) = (Arc::clone(self), Arc::clone(session));
                tokio::spawn(async move { sessions.open_screen_of(&session).await })
                    .await
                    .unwrap_or_else(|e| Err(join_failed(e)))?
            }
        };
        screen.wait_until_drawn().await?;
        Ok(screen)
    }

    async fn open_screen_of(&self, session: &Session) -> Result<Arc<Screen>, SessionError> {
        let opening = session.opening.lock().await;
        if let Some(screen) = session.current_screen() {
            return Ok(screen);
        }
        // A call that raced with the session's end must not open a screen
        // nobody would close.
        let ended = ended_reason(&self.state(), &session.id);
        if let Some(reason) = ended {
            return Err(SessionError::Ended(session.id.clone(), reason));
        }
        let screen = Arc::new(
            Screen::open_on_free_number(&self.pool, session.limits.screen_size, &self.paths)
                .await?,
        );
        let ended = {
            let mut state = self.state();
            let reason = ended_reason(&state, &session.id);
            if let Some(live) = state.live.get(&session.id) {
                let open = OpenScreen {
                    closing: false,
                    session: Arc::clone(live),
                    screen: Arc::clone(&screen),
                };
                state.screens.insert(screen.number, open);
            }
            reason
        };
        if let Some(reason) = ended {
            // The session ended while its screen was opening: nobody may
            // hold a screen of an ended session.
            screen.close().await;
            return Err(SessionError::Ended(session.id.clone(), reason));
        }
        session.set_screen(Arc::clone(&screen));
        drop(opening);
        self.changed();
        Ok(screen)
    }

    /// The live session on screen `number`, and that screen.
    pub fn live_on_screen(&self, number: ScreenNumber) -> Option<(Arc<Session>, Arc<Screen>)> {
        let state = self.state();
        let open = state.screens.get(&number)?;
        state
            .live
            .contains_key(&open.session.id)
            .then(|| (Arc::clone(&open.session), Arc::clone(&open.screen)))
    }

    /// The live session whose screen is X display `:display`, and that
    /// screen: the launcher's callers name their screen by `DISPLAY`.
    pub fn screen_on_display(&self, display: u32) -> Option<(Arc<Session>, Arc<Screen>)> {
        let state = self.state();
        state
            .screens
            .values()
            .find(|open| open.screen.display_number == display && !open.closing)
            .filter(|open| state.live.contains_key(&open.session.id))
            .map(|open| (Arc::clone(&open.session), Arc::clone(&open.screen)))
    }
}
