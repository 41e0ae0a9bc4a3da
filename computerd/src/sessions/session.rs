//! One live session.

use crate::config::ScreenSize;
use crate::handoff::Hold;
use crate::memory::OomWatermark;
use crate::recording::{Recorder, RecorderSlot};
use crate::screens::Screen;
use crate::textview::TextViews;
use computer_protocol::frame::FRAMES_REMEMBERED;
use computer_protocol::{FrameTransform, InvalidInput, OwnerId, SessionId};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
// tokio's clock, like the registry's, so paused-time tests move it.
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Settings fixed when the session starts.
#[derive(Debug, Clone)]
pub struct SessionLimits {
    pub screen_size: ScreenSize,
    pub idle_timeout: Duration,
    pub shell_timeout: Duration,
    pub shell_timeout_max: Duration,
}

#[derive(Debug)]
pub struct Session {
    pub id: SessionId,
    pub title: String,
    pub owner: OwnerId,
    /// RFC 3339, for the viewer's sidebar.
    pub started_at: String,
    pub limits: SessionLimits,
    /// Relative paths of the file tools and `shell` start here.
    cwd: Mutex<PathBuf>,
    /// Last agent call; the idle timer counts from here.
    last_activity: Mutex<Instant>,
    /// Shell commands and file transfers running now; while any runs the
    /// session is not idle.
    running_commands: AtomicU32,
    /// Cancelled when the session ends, so that work which outlives a single
    /// request (a transfer streaming for minutes) stops with it.
    ended: CancellationToken,
    /// Viewers watching the screen; while any watches the session is not idle.
    pub viewers: AtomicU32,
    /// The screen, opened by the first observe or act. The async mutex makes
    /// two first observes open one screen, not two.
    pub screen: tokio::sync::Mutex<Option<Arc<Screen>>>,
    /// Frame ids increase by one per screenshot.
    frame_counter: AtomicU64,
    /// Fingerprint of the last screenshot shown to the agent, for the
    /// unchanged-frame rule.
    pub last_shown: Mutex<Option<u64>>,
    pub repeats: Mutex<RepeatTracker>,
    /// The transforms of the last frames shown, newest last, for
    /// `frame_id` coordinates.
    frames: Mutex<VecDeque<(u64, FrameTransform)>>,
    /// The latest text view, which refs and cursors read.
    text_views: Mutex<TextViews>,
    /// Out-of-memory kills already reported to this session.
    pub oom: OomWatermark,
    /// The open recording of this session's tool calls, if any.
    recorder: RecorderSlot,
    /// A person's hold on the screen, held or ended and not yet read by
    /// the agent's wait.
    hold: Mutex<Option<Arc<Hold>>>,
}

impl Session {
    pub fn new(
        id: SessionId,
        title: String,
        owner: OwnerId,
        started_at: String,
        limits: SessionLimits,
        cwd: PathBuf,
    ) -> Session {
        Session {
            id,
            title,
            owner,
            started_at,
            limits,
            cwd: Mutex::new(cwd),
            last_activity: Mutex::new(Instant::now()),
            running_commands: AtomicU32::new(0),
            ended: CancellationToken::new(),
            viewers: AtomicU32::new(0),
            screen: tokio::sync::Mutex::new(None),
            frame_counter: AtomicU64::new(0),
            last_shown: Mutex::new(None),
            repeats: Mutex::new(RepeatTracker::default()),
            frames: Mutex::new(VecDeque::new()),
            text_views: Mutex::new(TextViews::default()),
            oom: OomWatermark::starting_now(crate::memory::container()),
            recorder: RecorderSlot::default(),
            hold: Mutex::new(None),
        }
    }

    /// The session's hold, held or ended but not yet read.
    pub fn hold(&self) -> Option<Arc<Hold>> {
        self.hold_slot().clone()
    }

    /// The hold slot, locked: a request checks and fills it in one step.
    pub fn hold_slot(&self) -> parking_lot::MutexGuard<'_, Option<Arc<Hold>>> {
        self.hold.lock()
    }

    /// Takes `hold` off the session, unless another replaced it.
    pub fn clear_hold(&self, hold: &Arc<Hold>) {
        let mut slot = self.hold_slot();
        if slot.as_ref().is_some_and(|h| Arc::ptr_eq(h, hold)) {
            *slot = None;
        }
    }

    /// Why the agent may not use the screen now, when a person holds it.
    pub fn held_message(&self) -> Option<String> {
        let hold = self.hold()?;
        hold.is_held().then(|| crate::handoff::held_message(&hold))
    }

    /// The open recording, if the session records.
    pub fn recorder(&self) -> Option<Arc<Recorder>> {
        self.recorder.get()
    }

    /// The recording slot, which `Recordings` fills and empties.
    pub fn recorder_slot(&self) -> &RecorderSlot {
        &self.recorder
    }

    /// The session's text views, which `textview` fills.
    pub fn text_views(&self) -> &Mutex<TextViews> {
        &self.text_views
    }

    pub fn cwd(&self) -> PathBuf {
        self.cwd.lock().clone()
    }

    pub fn set_cwd(&self, path: PathBuf) {
        *self.cwd.lock() = path;
    }

    pub fn touch(&self) {
        *self.last_activity.lock() = Instant::now();
    }

    /// Time since the last agent call, or zero while a command runs or a
    /// viewer watches (both count as activity).
    pub fn idle_for(&self, now: Instant) -> Duration {
        if self.running_commands.load(Ordering::SeqCst) > 0
            || self.viewers.load(Ordering::SeqCst) > 0
        {
            return Duration::ZERO;
        }
        let last = *self.last_activity.lock();
        now.saturating_duration_since(last)
    }

    /// Marks a shell command as running until the guard drops.
    pub fn command_started(self: &Arc<Self>) -> ActivityGuard {
        self.running_commands.fetch_add(1, Ordering::SeqCst);
        ActivityGuard {
            session: Arc::clone(self),
        }
    }

    /// Marks a file transfer as running until the guard drops; like a
    /// command, a long transfer never makes its own session idle.
    pub fn transfer_started(self: &Arc<Self>) -> ActivityGuard {
        self.command_started()
    }

    /// A token cancelled when the session ends.
    pub fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }

    /// Called once by the registry when the session ends.
    pub(super) fn mark_ended(&self) {
        self.ended.cancel();
    }

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

    /// The screen if one is open.
    pub async fn current_screen(&self) -> Option<Arc<Screen>> {
        self.screen.lock().await.clone()
    }
}

/// Counts a running command; dropping it ends the count and refreshes the
/// idle timer, so a long command never makes its own session idle.
pub struct ActivityGuard {
    session: Arc<Session>,
}

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        self.session.touch();
        self.session.running_commands.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Tracks identical batches of pointer, scroll and key actions that leave
/// the screen unchanged, so the fourth in a row can be refused.
#[derive(Debug, Default)]
pub struct RepeatTracker {
    /// The last repeatable batch, as its JSON text.
    last_batch: Option<String>,
    /// How many identical batches in a row left the screen unchanged.
    unchanged_streak: u32,
}

impl RepeatTracker {
    /// True when `batch` would be the next identical one after `limit`
    /// unchanged repeats.
    pub fn should_refuse(&self, batch: &str, limit: u32) -> bool {
        self.last_batch.as_deref() == Some(batch) && self.unchanged_streak >= limit
    }

    /// Records a batch that ran. `repeatable` is false for batches that type
    /// text or focus windows; they reset the count.
    pub fn record(&mut self, batch: Option<String>, screen_changed: bool) {
        match batch {
            Some(batch) => {
                let same = self.last_batch.as_deref() == Some(batch.as_str());
                self.unchanged_streak = match (same, screen_changed) {
                    (_, true) => 0,
                    (true, false) => self.unchanged_streak + 1,
                    (false, false) => 1,
                };
                self.last_batch = Some(batch);
            }
            None => {
                self.last_batch = None;
                self.unchanged_streak = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourth_identical_unchanged_batch_is_refused() {
        let mut t = RepeatTracker::default();
        let b = "scroll".to_string();
        for _ in 0..3 {
            assert!(!t.should_refuse(&b, 3));
            t.record(Some(b.clone()), false);
        }
        assert!(t.should_refuse(&b, 3));
        assert!(!t.should_refuse("other", 3));
    }

    #[test]
    fn a_change_or_another_batch_resets() {
        let mut t = RepeatTracker::default();
        let b = "key".to_string();
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), true);
        t.record(Some(b.clone()), false);
        assert!(!t.should_refuse(&b, 3));
        t.record(None, false);
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), false);
        assert!(!t.should_refuse(&b, 3));
        t.record(Some(b.clone()), false);
        assert!(t.should_refuse(&b, 3));
    }
}
