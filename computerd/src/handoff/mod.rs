//! Handoffs: a person takes a session's screen at its agent's request and
//! hands it back in the viewer.
//!
//! # Layout
//! - this file: [`Hold`], one session's hold and how it ends (returned by
//!   the person, cancelled by the agent, expired), and [`HandoffError`].
//! - `facts`: the screen's facts before and after (active window, windows,
//!   the page), and what changed between them.
//!
//! Data flows: the agent's request puts a `Hold` on the session (its screen
//! opened first); `desktop` and `apps` refuse the screen while it is held;
//! the viewer's Take control and Hand back (key and Origin checked, and for
//! Hand back the code of the person's link, see [`Hold::hand_back`]) change
//! it; the agent's wait answers when it ends, and takes it off the session.

mod facts;

pub use facts::{screen_facts, ScreenFacts};

use computer_protocol::handoff::{HandoffState, HandoffStatus, ScreenChanges, NOTE_MAX_CHARS};
use computer_protocol::{Coded, ErrorCode, InvalidInput, ScreenNumber};
use parking_lot::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error("screen {screen} is already held by a person (handoff `{id}`: \"{reason}\"); call `wait_handoff` to wait for it, or `cancel_handoff` to take it back")]
    AlreadyHeld {
        id: String,
        screen: ScreenNumber,
        reason: String,
    },
    #[error("this session has no handoff: call `request_handoff` first")]
    NoHold,
    #[error("no session's screen {0} is held")]
    NotHeld(ScreenNumber),
    #[error("this page has no hand-back code for handoff `{0}`, or a wrong one: hand back from the viewer tab the host opened for this handoff (its link carries the code); the viewer key alone cannot end a hold")]
    NoHandback(String),
}

impl Coded for HandoffError {
    fn code(&self) -> ErrorCode {
        match self {
            HandoffError::InvalidInput(_) => ErrorCode::InvalidInput,
            HandoffError::AlreadyHeld { .. } | HandoffError::NoHold => ErrorCode::Conflict,
            HandoffError::NotHeld(_) => ErrorCode::NotFound,
            HandoffError::NoHandback(_) => ErrorCode::PermissionDenied,
        }
    }
}

/// How a hold stands.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Held,
    Ended(Box<Ending>),
}

#[derive(Debug, Clone, PartialEq)]
struct Ending {
    state: HandoffState,
    note: Option<String>,
    held: Duration,
    changes: Option<ScreenChanges>,
    /// The hand-back code, when the person handed back.
    handback: Option<String>,
}

/// A hand-back code that [`Hold::check_handback`] accepted: the only way
/// to hand a hold back.
pub struct Handback(String);

/// One session's hold: asked for by its agent, ended by a person (or by
/// the agent cancelling, or by time).
#[derive(Debug)]
pub struct Hold {
    pub id: String,
    pub screen: ScreenNumber,
    pub reason: String,
    pub expected: Option<String>,
    /// RFC 3339, for the viewer's timer.
    pub started_at: String,
    started: Instant,
    pub expires: Instant,
    /// The screen when the hold began.
    pub before: ScreenFacts,
    /// [`computer_protocol::handoff::handback_digest`] of the code only the
    /// person's link carries.
    handback_digest: String,
    stage: watch::Sender<Stage>,
    /// The person pressed Take control once.
    taken: Mutex<bool>,
}

impl Hold {
    pub fn new(
        screen: ScreenNumber,
        reason: String,
        expected: Option<String>,
        expire_after: Duration,
        before: ScreenFacts,
        handback_digest: String,
    ) -> Hold {
        let now = Instant::now();
        Hold {
            id: format!(
                "handoff-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            ),
            screen,
            reason,
            expected,
            started_at: crate::clock::now_rfc3339(),
            started: now,
            expires: now + expire_after,
            before,
            handback_digest,
            stage: watch::Sender::new(Stage::Held),
            taken: Mutex::new(false),
        }
    }

    /// Still with the person.
    pub fn is_held(&self) -> bool {
        matches!(*self.stage.borrow(), Stage::Held)
    }

    /// The person took control (the viewer unlocked input).
    pub fn take(&self) {
        *self.taken.lock() = true;
    }

    fn was_taken(&self) -> bool {
        *self.taken.lock()
    }

    /// `code` when it is the hand-back code of the link the host opened
    /// for the person, which the computer never held (it keeps the digest).
    pub fn check_handback(&self, code: Option<&str>) -> Result<Handback, HandoffError> {
        code.filter(|c| computer_protocol::handoff::handback_digest(c) == self.handback_digest)
            .map(|c| Handback(c.to_string()))
            .ok_or_else(|| HandoffError::NoHandback(self.id.clone()))
    }

    /// The person hands back, with the code [`Hold::check_handback`]
    /// accepted; true when this call ended the hold.
    pub fn hand_back(&self, handback: Handback, note: Option<String>, after: &ScreenFacts) -> bool {
        self.finish(HandoffState::Returned, note, Some(after), Some(handback.0))
    }

    /// Ends the hold as cancelled or expired, unless it ended already; true
    /// when this call ended it.
    pub fn end(&self, state: HandoffState, after: Option<&ScreenFacts>) -> bool {
        debug_assert!(state != HandoffState::Returned, "only hand_back returns");
        self.finish(state, None, after, None)
    }

    fn finish(
        &self,
        state: HandoffState,
        note: Option<String>,
        after: Option<&ScreenFacts>,
        handback: Option<String>,
    ) -> bool {
        let ending = Ending {
            state,
            note,
            held: self.started.elapsed(),
            changes: after.map(|after| self.before.changes_to(after)),
            handback,
        };
        self.stage.send_if_modified(|stage| match stage {
            Stage::Held => {
                *stage = Stage::Ended(Box::new(ending));
                true
            }
            Stage::Ended(_) => false,
        })
    }

    /// Waits until the hold ends or `limit` passes; then where it stands.
    pub async fn wait(&self, limit: Duration) -> HandoffStatus {
        let mut stage = self.stage.subscribe();
        let _ = tokio::time::timeout(limit, stage.wait_for(|s| matches!(s, Stage::Ended(_)))).await;
        self.status()
    }

    pub fn status(&self) -> HandoffStatus {
        let stage = self.stage.borrow().clone();
        let (state, note, held, changes, handback) = match stage {
            Stage::Held => (HandoffState::Held, None, self.started.elapsed(), None, None),
            Stage::Ended(e) => (e.state, e.note, e.held, e.changes, e.handback),
        };
        HandoffStatus {
            handoff_id: self.id.clone(),
            state,
            reason: self.reason.clone(),
            expected: self.expected.clone(),
            held_ms: held.as_millis() as u64,
            taken: self.was_taken(),
            note,
            changes,
            handback_code: handback,
            observation: None,
        }
    }
}

/// The person's note: trimmed, at most [`NOTE_MAX_CHARS`], none when empty.
pub fn check_note(note: Option<String>) -> Result<Option<String>, HandoffError> {
    let Some(note) = note.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let chars = note.chars().count();
    if chars > NOTE_MAX_CHARS {
        return Err(HandoffError::InvalidInput(InvalidInput(format!(
            "the note has {chars} characters: the limit is {NOTE_MAX_CHARS}; shorten it"
        ))));
    }
    Ok(Some(note))
}

/// The message every refused call of the holding session gets.
pub fn held_message(hold: &Hold) -> String {
    format!(
        "screen {} is held by a person (handoff `{}`: \"{}\"): while they type, this session may not act on the screen, observe it, open things on it, run shell commands, use the file tools or Chrome DevTools. Call `wait_handoff` to wait for them, or `cancel_handoff` to take it back",
        hold.screen, hold.id, hold.reason
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold() -> Hold {
        Hold::new(
            ScreenNumber(3),
            "Sign in".into(),
            None,
            Duration::from_secs(60),
            ScreenFacts::default(),
            computer_protocol::handoff::handback_digest("the code"),
        )
    }

    #[tokio::test]
    async fn a_hold_ends_once_and_its_waiters_wake() {
        let hold = std::sync::Arc::new(hold());
        let waiting = {
            let hold = std::sync::Arc::clone(&hold);
            tokio::spawn(async move { hold.wait(Duration::from_secs(30)).await })
        };
        assert_eq!(hold.status().state, HandoffState::Held);
        hold.take();
        let handback = hold.check_handback(Some("the code")).unwrap();
        assert!(hold.hand_back(handback, Some("done".into()), &ScreenFacts::default()));
        assert!(!hold.end(HandoffState::Expired, None));
        let status = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the waiter wakes")
            .unwrap();
        assert_eq!(status.state, HandoffState::Returned);
        assert_eq!(status.note.as_deref(), Some("done"));
        assert_eq!(status.handback_code.as_deref(), Some("the code"));
        assert!(status.taken);
        assert!(status.changes.is_some());
    }

    #[test]
    fn the_viewer_key_alone_cannot_hand_back() {
        let hold = hold();
        for code in [None, Some(""), Some("the cod"), Some("THE CODE")] {
            let Err(e) = hold.check_handback(code) else {
                panic!("{code:?} was taken for the hand-back code");
            };
            assert!(e.to_string().contains(&hold.id), "{e}");
        }
        assert!(hold.is_held());
    }

    #[tokio::test]
    async fn a_wait_without_an_end_answers_held_after_its_limit() {
        let hold = hold();
        let status = hold.wait(Duration::from_millis(50)).await;
        assert_eq!(status.state, HandoffState::Held);
        assert!(
            held_message(&hold).contains("wait_handoff") && held_message(&hold).contains("Sign in")
        );
    }

    #[test]
    fn notes_are_trimmed_and_bounded() {
        assert_eq!(check_note(Some("  ".into())).unwrap(), None);
        assert_eq!(
            check_note(Some(" ok ".into())).unwrap().as_deref(),
            Some("ok")
        );
        assert!(check_note(Some("n".repeat(2001))).is_err());
    }
}
