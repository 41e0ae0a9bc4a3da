//! One live session.

use super::error::SessionError;
use crate::handoff::Hold;
use crate::memory::OomWatermark;
use crate::recording::{Recorder, RecorderSlot};
use crate::screens::Screen;
use computer_protocol::ScreenSize;
use computer_protocol::{OwnerId, SessionId};
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
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
    /// Agent calls being answered now; while any is, the session is not
    /// idle, and each one's end restarts the idle timer.
    calls: AtomicU32,
    /// Shell commands and file transfers running now; while any runs the
    /// session is not idle, and a hold stops them all.
    running: Mutex<Vec<Running>>,
    next_running: AtomicU64,
    /// Cancelled when the session ends, so that work which outlives a single
    /// request (a transfer streaming for minutes) stops with it.
    ended: CancellationToken,
    /// Viewers watching the screen; while any watches the session is not idle.
    pub viewers: AtomicU32,
    /// The screen once it is open, read without waiting: a `shell` call or
    /// a list of sessions never waits for a screen that is still opening.
    screen: Mutex<Option<Arc<Screen>>>,
    /// Held while the screen opens (by the first observe or act), so that
    /// two first observes open one screen, not two, and an ending session
    /// waits for a screen still opening before it closes it.
    pub(super) opening: tokio::sync::Mutex<()>,
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
            calls: AtomicU32::new(0),
            running: Mutex::new(Vec::new()),
            next_running: AtomicU64::new(0),
            ended: CancellationToken::new(),
            viewers: AtomicU32::new(0),
            screen: Mutex::new(None),
            opening: tokio::sync::Mutex::new(()),
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

    /// Refuses the agent while a person holds the session's screen.
    pub fn check_free(&self) -> Result<(), SessionError> {
        match self.held_message() {
            Some(message) => Err(SessionError::Held(message)),
            None => Ok(()),
        }
    }

    /// The open recording, if the session records.
    pub fn recorder(&self) -> Option<Arc<Recorder>> {
        self.recorder.get()
    }

    /// The recording slot, which `Recordings` fills and empties.
    pub fn recorder_slot(&self) -> &RecorderSlot {
        &self.recorder
    }

    pub fn cwd(&self) -> PathBuf {
        self.cwd.lock().clone()
    }

    /// Runs blocking file work `f` off the async threads, given `home` and
    /// the session's working folder as it is now.
    pub async fn in_folders<T: Send + 'static>(
        &self,
        home: &Path,
        f: impl FnOnce(PathBuf, PathBuf) -> T + Send + 'static,
    ) -> T {
        let (home, cwd) = (home.to_path_buf(), self.cwd());
        crate::blocking::run(move || f(home, cwd)).await
    }

    pub fn set_cwd(&self, path: PathBuf) {
        *self.cwd.lock() = path;
    }

    pub fn touch(&self) {
        *self.last_activity.lock() = Instant::now();
    }

    /// Marks an agent call as being answered until the guard drops. A
    /// call counts as activity from its start to its end: an observe that
    /// opens the screen, or an act that settles for seconds, takes longer
    /// than a short idle timeout, and the session must not end under it or
    /// the moment it answers.
    pub fn call_started(self: &Arc<Self>) -> CallGuard {
        self.calls.fetch_add(1, Ordering::SeqCst);
        CallGuard {
            session: Arc::clone(self),
        }
    }

    /// Time since the last agent call ended, or zero while a call is
    /// answered, a command runs or a viewer watches (all count as activity).
    pub fn idle_for(&self, now: Instant) -> Duration {
        if self.calls.load(Ordering::SeqCst) > 0
            || !self.running.lock().is_empty()
            || self.viewers.load(Ordering::SeqCst) > 0
        {
            return Duration::ZERO;
        }
        let last = *self.last_activity.lock();
        now.saturating_duration_since(last)
    }

    /// Marks a shell command or a file transfer as running until the guard
    /// drops; `what` names it when a hold stops it. Like a command, a long
    /// transfer never makes its own session idle.
    pub fn command_started(self: &Arc<Self>, what: &str) -> ActivityGuard {
        let id = self.next_running.fetch_add(1, Ordering::SeqCst);
        let stop = self.ended.child_token();
        self.running.lock().push(Running {
            id,
            what: what.chars().take(RUNNING_NAME_CHARS).collect(),
            stop: stop.clone(),
        });
        ActivityGuard {
            session: Arc::clone(self),
            id,
            stop,
        }
    }

    /// Stops every command and transfer running now (a person is about to
    /// type on the screen); returns what they were.
    pub fn stop_running(&self) -> Vec<String> {
        let running = std::mem::take(&mut *self.running.lock());
        running
            .into_iter()
            .map(|r| {
                r.stop.cancel();
                r.what
            })
            .collect()
    }

    /// A token cancelled when the session ends.
    pub fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }

    /// Called once by the registry when the session ends.
    pub(super) fn mark_ended(&self) {
        self.ended.cancel();
    }

    /// The screen if one is open; `None` while it is still opening.
    pub fn current_screen(&self) -> Option<Arc<Screen>> {
        self.screen.lock().clone()
    }

    /// Fills the screen slot, under [`Session::opening`].
    pub(super) fn set_screen(&self, screen: Arc<Screen>) {
        *self.screen.lock() = Some(screen);
    }

    /// Empties the screen slot, under [`Session::opening`].
    pub(super) fn take_screen(&self) -> Option<Arc<Screen>> {
        self.screen.lock().take()
    }
}

/// A running command's or transfer's name as a stopping hold reports it.
const RUNNING_NAME_CHARS: usize = 80;

/// A shell command or file transfer running in the session.
#[derive(Debug)]
struct Running {
    id: u64,
    what: String,
    /// Cancelled when the session ends or a hold stops it.
    stop: CancellationToken,
}

/// Counts a running command; dropping it ends the count and refreshes the
/// idle timer, so a long command never makes its own session idle.
pub struct ActivityGuard {
    session: Arc<Session>,
    id: u64,
    stop: CancellationToken,
}

impl ActivityGuard {
    /// Cancelled when the session ends or a hold stops this command.
    pub fn stopped(&self) -> CancellationToken {
        self.stop.clone()
    }
}

/// An agent call being answered; see [`Session::call_started`].
pub struct CallGuard {
    session: Arc<Session>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.session.touch();
        self.session.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        self.session.touch();
        self.session.running.lock().retain(|r| r.id != self.id);
    }
}
