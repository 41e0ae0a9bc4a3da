//! What the desktop remembers of each session between calls: the frames
//! shown (for `frame_id` coordinates and the unchanged-frame rule), the
//! identical batches in a row, and the latest text view (for refs and
//! cursors). The desktop keeps it, not the session; it is forgotten when
//! the session ends.

use super::repeats::RepeatTracker;
use crate::sessions::Session;
use crate::textview::TextViews;
use computer_protocol::frame::FRAMES_REMEMBERED;
use computer_protocol::{FrameTransform, ImageFormat, InvalidInput, SessionId};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// The last frame shown: what it showed and how, so an unchanged screen
/// is answered without encoding it again.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The shown pixels and how they were shown (`observe::shown_key`).
    pub key: u64,
    pub transform: FrameTransform,
    pub format: ImageFormat,
    /// Why the frame was made smaller or rougher than asked, if it was.
    pub reduced: Option<String>,
}

/// One session's desktop state.
#[derive(Debug, Default)]
pub struct DesktopState {
    /// Frame ids increase by one per screenshot.
    frame_counter: AtomicU64,
    /// The last screenshot shown to the agent, for the unchanged-frame
    /// rule (see `observe::shown_key`).
    pub last_shown: Mutex<Option<Shown>>,
    pub repeats: Mutex<RepeatTracker>,
    /// The transforms of the last frames shown, newest last.
    frames: Mutex<VecDeque<(u64, FrameTransform)>>,
    /// The latest text view, which refs and cursors read.
    pub text_views: Mutex<TextViews>,
}

impl DesktopState {
    pub fn next_frame_id(&self) -> u64 {
        self.frame_counter.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Remembers how frame `id` maps to the screen; the oldest of more
    /// than [`FRAMES_REMEMBERED`] is forgotten.
    pub fn remember_frame(&self, id: u64, transform: FrameTransform) {
        let mut frames = self.frames.lock();
        frames.push_back((id, transform));
        while frames.len() > FRAMES_REMEMBERED {
            frames.pop_front();
        }
    }

    /// How frame `id` maps to the screen, or why it cannot be used.
    pub fn frame(&self, id: u64) -> Result<FrameTransform, InvalidInput> {
        let frames = self.frames.lock();
        if let Some((_, transform)) = frames.iter().find(|(f, _)| *f == id) {
            return Ok(*transform);
        }
        let known = match (frames.front(), frames.back()) {
            (Some((first, _)), Some((last, _))) => format!("frames {first} to {last}"),
            _ => "no frames yet".to_string(),
        };
        Err(InvalidInput(format!(
            "`frame_id` {id} is not one of this session's last {FRAMES_REMEMBERED} frames ({known}); observe again and use the new frame's id, or give screen pixels without `frame_id`"
        )))
    }
}

/// Every live session's desktop state, by session id.
#[derive(Debug, Default)]
pub struct DesktopStates {
    states: Arc<Mutex<HashMap<SessionId, Arc<DesktopState>>>>,
}

impl DesktopStates {
    /// The session's state, made on its first screen call. A task forgets
    /// it when the session ends, so an ended session's frames and text
    /// views are not kept.
    pub fn of(&self, session: &Session) -> Arc<DesktopState> {
        let mut states = self.states.lock();
        if let Some(state) = states.get(&session.id) {
            return Arc::clone(state);
        }
        let state = Arc::new(DesktopState::default());
        states.insert(session.id.clone(), Arc::clone(&state));
        let (ended, id, all): (_, _, Weak<_>) = (
            session.ended(),
            session.id.clone(),
            Arc::downgrade(&self.states),
        );
        tokio::spawn(async move {
            ended.cancelled().await;
            if let Some(all) = all.upgrade() {
                all.lock().remove(&id);
            }
        });
        state
    }
}
