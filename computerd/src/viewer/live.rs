//! The messages of the live channel, as the page reads them.

use crate::sessions::{HeldOverview, SessionOverview};
use computer_protocol::ScreenNumber;
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiveMessage {
    /// The whole list, sent first and again after every change.
    Sessions { sessions: Vec<ListedSession> },
    /// Switch to this screen and highlight it (the host asked).
    Focus { screen: ScreenNumber },
}

/// One line of the sidebar. Session ids and owners are left out: the page
/// needs neither.
#[derive(Debug, Serialize)]
pub struct ListedSession {
    pub title: String,
    /// RFC 3339.
    pub started_at: String,
    pub screen: Option<ScreenNumber>,
    /// `<width>x<height>` once the screen is open.
    pub size: Option<String>,
    pub viewers: u32,
    /// Ended for its agent; the screen stays while someone watches it.
    pub ended: bool,
    /// Its agent's tool calls are being recorded: the people watching
    /// should know.
    pub recording: bool,
    /// The agent asked a person to take the screen: its reason (shown as
    /// text), what the screen should show when done, since when.
    pub handoff: Option<HeldOverview>,
}

impl LiveMessage {
    pub fn sessions(overview: Vec<SessionOverview>) -> LiveMessage {
        LiveMessage::Sessions {
            sessions: overview
                .into_iter()
                .map(|s| ListedSession {
                    title: s.title,
                    started_at: s.started_at,
                    screen: s.screen,
                    size: s.size.map(|size| size.to_string()),
                    viewers: s.viewers,
                    ended: s.ended,
                    recording: s.recording,
                    handoff: s.handoff,
                })
                .collect(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("live messages serialise")
    }
}
