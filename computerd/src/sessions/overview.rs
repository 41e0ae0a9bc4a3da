//! What the viewer's sidebar shows of one session.

use super::session::Session;
use crate::screens::Screen;
use computer_protocol::ScreenNumber;
use computer_protocol::ScreenSize;
use std::sync::atomic::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOverview {
    pub title: String,
    /// RFC 3339.
    pub started_at: String,
    /// `None` until the session's first observe opens its screen.
    pub screen: Option<ScreenNumber>,
    pub size: Option<ScreenSize>,
    pub viewers: u32,
    /// The session ended for its agent; its screen stays while watched.
    pub ended: bool,
    /// Its agent's tool calls are being recorded.
    pub recording: bool,
    /// A person holds the screen at the agent's request.
    pub handoff: Option<HeldOverview>,
}

/// What the viewer shows of a held screen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeldOverview {
    pub id: String,
    pub reason: String,
    pub expected: Option<String>,
    /// RFC 3339.
    pub started_at: String,
}

impl SessionOverview {
    pub(super) fn of(session: &Session, screen: Option<&Screen>, ended: bool) -> SessionOverview {
        SessionOverview {
            title: session.title.clone(),
            started_at: session.started_at.clone(),
            screen: screen.map(|s| s.number),
            size: screen.map(|s| s.size),
            viewers: session.viewers.load(Ordering::SeqCst),
            ended,
            recording: session.recorder().is_some(),
            handoff: session
                .hold()
                .filter(|h| h.is_held())
                .map(|h| HeldOverview {
                    id: h.id.clone(),
                    reason: h.reason.clone(),
                    expected: h.expected.clone(),
                    started_at: h.started_at.clone(),
                }),
        }
    }
}
