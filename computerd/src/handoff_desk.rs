//! Handing a session's screen to a person and taking it back: the checks
//! and the hold a request makes, what it stops while the person types, the
//! hold's expiry, the agent's wait and cancel. The hold itself is
//! [`crate::handoff`]'s; the person hands back through the viewer.

use crate::browser::Browsers;
use crate::devtools::DevTools;
use crate::handoff::{screen_facts, HandoffError, Hold};
use crate::screens::Screen;
use crate::sessions::{Session, SessionError, Sessions};
use computer_protocol::handoff::{
    check_request, HandoffRequest, HandoffStarted, HandoffState, HandoffStatus, HandoffWaitRequest,
    WAIT_MAX_SECS,
};
use computer_protocol::{Coded, ErrorCode, InvalidInput};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum HandoffDeskError {
    #[error(transparent)]
    Handoff(#[from] HandoffError),
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl From<InvalidInput> for HandoffDeskError {
    fn from(e: InvalidInput) -> HandoffDeskError {
        HandoffDeskError::Handoff(e.into())
    }
}

impl Coded for HandoffDeskError {
    fn code(&self) -> ErrorCode {
        match self {
            HandoffDeskError::Handoff(e) => e.code(),
            HandoffDeskError::Session(e) => e.code(),
        }
    }
}

/// What a handoff needs beside the session: its screen, what the screen's
/// browser shows before and after, and the DevTools bridge it stops.
pub struct HandoffDesk {
    sessions: Arc<Sessions>,
    browsers: Arc<Browsers>,
    devtools: Arc<DevTools>,
}

impl HandoffDesk {
    pub fn new(
        sessions: Arc<Sessions>,
        browsers: Arc<Browsers>,
        devtools: Arc<DevTools>,
    ) -> HandoffDesk {
        HandoffDesk {
            sessions,
            browsers,
            devtools,
        }
    }

    /// Hands `session`'s screen to a person: a hold that refuses the agent
    /// until the person hands back (with the code whose digest `req`
    /// carries), the agent cancels or the hold expires. Nothing the session
    /// started keeps running beside the person.
    pub async fn request(
        &self,
        session: &Arc<Session>,
        req: HandoffRequest,
    ) -> Result<HandoffStarted, HandoffDeskError> {
        check(&req)?;
        refuse_if_held(session)?;
        let screen = self.sessions.screen_of(session).await?;
        let before = screen_facts(&screen, &self.browsers).await;
        let hold = Arc::new(Hold::new(
            screen.number,
            req.reason.trim().to_string(),
            req.expected
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty()),
            Duration::from_secs(req.expire_secs),
            before,
            req.handback_digest,
        ));
        {
            // Checked again with the slot locked: two requests may race.
            let mut slot = session.hold_slot();
            if let Some(other) = slot.as_ref().filter(|h| h.is_held()) {
                return Err(already_held(other).into());
            }
            *slot = Some(Arc::clone(&hold));
        }
        // The person may type secrets now: nothing this session started
        // keeps running beside them, and the screen's DevTools bridge
        // (which reads the page) stops until the agent has the screen again.
        let mut stopped = session.stop_running();
        let bridge = self.devtools.stop(screen.number).await;
        if bridge.was_running {
            stopped.push(format!("the DevTools bridge {}", bridge.bridge));
        }
        tracing::info!(session = %session.id, handoff = %hold.id, screen = %screen.number, stopped = stopped.len(), "screen handed to a person");
        tokio::spawn(expire(
            Arc::clone(&self.sessions),
            Arc::clone(&self.browsers),
            Arc::clone(&hold),
            screen,
        ));
        self.sessions.touch_overview();
        Ok(HandoffStarted {
            handoff_id: hold.id.clone(),
            screen: hold.screen,
            started_at: hold.started_at.clone(),
            stopped,
        })
    }

    /// Waits up to `req.wait_ms` (at most [`WAIT_MAX_SECS`]) for the
    /// session's hold to end. An ended hold is told once; the screen is the
    /// agent's again.
    pub async fn wait(
        session: &Arc<Session>,
        req: HandoffWaitRequest,
    ) -> Result<HandoffStatus, HandoffError> {
        let hold = session.hold().ok_or(HandoffError::NoHold)?;
        let limit = Duration::from_millis(req.wait_ms.min(WAIT_MAX_SECS * 1000));
        let status = hold.wait(limit).await;
        if status.state != HandoffState::Held {
            session.clear_hold(&hold);
        }
        Ok(status)
    }

    /// The agent takes its screen back before the person handed it back.
    pub async fn cancel(&self, session: &Arc<Session>) -> Result<HandoffStatus, HandoffDeskError> {
        let hold = session.hold().ok_or(HandoffError::NoHold)?;
        if hold.is_held() {
            let screen = self.sessions.screen_of(session).await?;
            let after = screen_facts(&screen, &self.browsers).await;
            hold.end(HandoffState::Cancelled, Some(&after));
            tracing::info!(handoff = %hold.id, "hold cancelled by the agent");
        }
        session.clear_hold(&hold);
        self.sessions.touch_overview();
        Ok(hold.status())
    }
}

/// The request's own fields: a reason, a hand-back digest and a lifetime.
fn check(req: &HandoffRequest) -> Result<(), InvalidInput> {
    check_request(&req.reason, req.expected.as_deref())?;
    if req.handback_digest.len() != 64
        || !req.handback_digest.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(InvalidInput(
            "`handback_digest` is not a SHA-256 in hex (64 characters of 0-9a-f): send the digest of the hand-back code".to_string(),
        ));
    }
    if req.expire_secs == 0 {
        return Err(InvalidInput(
            "`expire_secs` is 0: a hold needs at least 1 second".to_string(),
        ));
    }
    Ok(())
}

fn refuse_if_held(session: &Arc<Session>) -> Result<(), HandoffError> {
    match session.hold().filter(|h| h.is_held()) {
        Some(hold) => Err(already_held(&hold)),
        None => Ok(()),
    }
}

fn already_held(hold: &Hold) -> HandoffError {
    HandoffError::AlreadyHeld {
        id: hold.id.clone(),
        screen: hold.screen,
        reason: hold.reason.clone(),
    }
}

/// Ends a hold nobody returned once its time is up.
async fn expire(
    sessions: Arc<Sessions>,
    browsers: Arc<Browsers>,
    hold: Arc<Hold>,
    screen: Arc<Screen>,
) {
    tokio::time::sleep_until(hold.expires.into()).await;
    if !hold.is_held() {
        return;
    }
    let after = screen_facts(&screen, &browsers).await;
    if hold.end(HandoffState::Expired, Some(&after)) {
        tracing::info!(handoff = %hold.id, "hold expired");
        sessions.touch_overview();
    }
}
