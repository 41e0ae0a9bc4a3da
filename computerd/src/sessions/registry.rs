//! The registry of live sessions, the reasons ended ones ended, and the
//! owners' heartbeats.

use super::error::SessionError;
use super::overview::SessionOverview;
use super::session::{Session, SessionLimits};
use crate::config::Config;
use crate::recording::Recordings;
use crate::screens::{Screen, ScreenError, ScreenPaths, ScreenPool};
use computer_protocol::limits::{
    HEARTBEAT_WINDOW_MAX_SECS, HEARTBEAT_WINDOW_MIN_SECS, TITLE_MAX_CHARS,
};
use computer_protocol::ScreenSize;
use computer_protocol::{
    CreateSessionRequest, EndReason, InvalidInput, OwnerId, ScreenNumber, SessionId, SessionInfo,
};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
// tokio's clock: the system's in computerd, and one that tests with paused
// time move, so the heartbeat and idle timers are tested without waiting.
use tokio::time::Instant;

/// Ended sessions remembered for their end reason; older ones are forgotten.
const ENDED_REMEMBERED: usize = 10_000;

#[derive(Default)]
pub(super) struct State {
    pub(super) live: HashMap<SessionId, Arc<Session>>,
    ended: HashMap<SessionId, EndReason>,
    ended_order: VecDeque<SessionId>,
    /// Last heartbeat per owner; creating a session counts as one.
    heartbeats: HashMap<OwnerId, Beat>,
    /// Every open screen and the session it belongs to. A screen whose
    /// session ended stays here while viewers watch it; whoever removes the
    /// entry closes the screen, so it is closed exactly once.
    pub(super) screens: HashMap<ScreenNumber, OpenScreen>,
    /// How long the computer may sit unused before it stops, as the newest
    /// session's host said (`idle_stop_secs`); `None`: never.
    stop_when_unused: Option<Duration>,
}

/// An owner's last heartbeat and how long its sessions outlive it.
#[derive(Debug)]
struct Beat {
    at: Instant,
    /// As the owner's newest session asked, or computerd's default.
    window: Duration,
}

pub(super) struct OpenScreen {
    pub(super) session: Arc<Session>,
    pub(super) screen: Arc<Screen>,
    /// Its last viewer left after the session ended and it is being closed:
    /// still listed (as ended), so that a screen gone from the list has its
    /// number free again, but no new viewer may join it.
    pub(super) closing: bool,
}

pub struct Sessions {
    config: Arc<Config>,
    /// Every recording; a session that ends closes its own.
    recordings: Arc<Recordings>,
    pub(super) pool: Arc<ScreenPool>,
    pub(super) paths: ScreenPaths,
    state: Mutex<State>,
    /// Bumped whenever what the viewer's list shows changes (a session
    /// starts or ends, a screen opens or closes, a viewer comes or goes), so
    /// watchers wait for a change instead of polling.
    changes: watch::Sender<u64>,
}

impl Sessions {
    pub fn new(config: Arc<Config>, paths: ScreenPaths, recordings: Arc<Recordings>) -> Sessions {
        Sessions {
            recordings,
            config,
            pool: ScreenPool::new(),
            paths,
            state: Mutex::new(State::default()),
            changes: watch::Sender::new(0),
        }
    }

    /// `Some(limit)` while nothing uses the computer (no live session, so
    /// no recording or handoff either, and no screen a viewer still
    /// watches) and a host asked it to stop after `limit` of that.
    pub fn unused_stop_after(&self) -> Option<Duration> {
        let state = self.state();
        let unused = state.live.is_empty() && state.screens.is_empty();
        state.stop_when_unused.filter(|_| unused)
    }

    pub(super) fn state(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Starts a session with the creator's settings over computerd's defaults.
    pub fn create(&self, req: CreateSessionRequest) -> Result<Arc<Session>, SessionError> {
        req.validate()?;
        let limits = self.limits_for(&req)?;
        let window = self.heartbeat_window_for(&req)?;
        let id = req.resume.clone().unwrap_or_else(SessionId::new_random);
        let started_at = crate::clock::now_rfc3339();
        let session = Arc::new(Session::new(
            id.clone(),
            req.title.trim().chars().take(TITLE_MAX_CHARS).collect(),
            req.owner.clone(),
            started_at,
            limits,
            self.config.home.clone(),
        ));
        let mut state = self.state();
        if state.live.contains_key(&id) || state.ended.contains_key(&id) {
            return Err(SessionError::InvalidInput(InvalidInput(format!(
                "`resume` is `{}`, a session this computer has already had: resume only a session of a computer that was restored or reset",
                id
            ))));
        }
        let beat = Beat {
            at: Instant::now(),
            window,
        };
        state.heartbeats.insert(req.owner, beat);
        state.stop_when_unused = req
            .settings
            .idle_stop_secs
            .filter(|secs| *secs > 0)
            .map(Duration::from_secs);
        state.live.insert(id.clone(), Arc::clone(&session));
        drop(state);
        tracing::info!(session = %id, title = %session.title, "session started");
        self.changed();
        Ok(session)
    }

    fn limits_for(&self, req: &CreateSessionRequest) -> Result<SessionLimits, SessionError> {
        let s = &req.settings;
        let invalid = |m: String| SessionError::InvalidInput(InvalidInput(m));
        let screen_size = match &s.screen_size {
            Some(text) => ScreenSize::parse(text)
                .map_err(|e| invalid(format!("`settings.screen_size` is `{text}`: {e}")))?,
            None => self.config.screen_size,
        };
        let secs = |field: &str, v: Option<u64>, default: Duration| match v {
            Some(0) => Err(invalid(format!(
                "`settings.{field}` is 0: it must be at least 1 second"
            ))),
            Some(n) => Ok(Duration::from_secs(n)),
            None => Ok(default),
        };
        let idle_timeout = secs(
            "idle_timeout_secs",
            s.idle_timeout_secs,
            self.config.idle_timeout,
        )?;
        let shell_timeout_max = secs(
            "shell_timeout_max_secs",
            s.shell_timeout_max_secs,
            self.config.shell_timeout_max,
        )?;
        let default_shell = self.config.shell_timeout.min(shell_timeout_max);
        let shell_timeout = secs("shell_timeout_secs", s.shell_timeout_secs, default_shell)?;
        if shell_timeout > shell_timeout_max {
            return Err(invalid(format!(
                "`settings.shell_timeout_secs` ({}) exceeds `settings.shell_timeout_max_secs` ({}); lower it or raise the maximum",
                shell_timeout.as_secs(),
                shell_timeout_max.as_secs()
            )));
        }
        Ok(SessionLimits {
            screen_size,
            idle_timeout,
            shell_timeout,
            shell_timeout_max,
        })
    }

    /// How long after the owner's last heartbeat its sessions end: as the
    /// request says, within the protocol's bounds, or computerd's default.
    fn heartbeat_window_for(&self, req: &CreateSessionRequest) -> Result<Duration, SessionError> {
        match req.settings.heartbeat_window_secs {
            None => Ok(self.config.heartbeat_grace),
            Some(secs) if (HEARTBEAT_WINDOW_MIN_SECS..=HEARTBEAT_WINDOW_MAX_SECS).contains(&secs) => {
                Ok(Duration::from_secs(secs))
            }
            Some(secs) => Err(SessionError::InvalidInput(InvalidInput(format!(
                "`settings.heartbeat_window_secs` is {secs}: it must be between {HEARTBEAT_WINDOW_MIN_SECS} and {HEARTBEAT_WINDOW_MAX_SECS} seconds"
            )))),
        }
    }

    /// The live session `id`, counting the call as activity; otherwise why
    /// there is none.
    /// Why `session`'s command or transfer was stopped: its session ended,
    /// or a person took its screen.
    pub fn why_stopped(&self, session: &Session) -> SessionError {
        if let Err(ended) = self.get(&session.id) {
            return ended;
        }
        match session.held_message() {
            Some(message) => SessionError::StoppedByHold(message),
            None => SessionError::Unknown(session.id.clone()),
        }
    }

    pub fn get(&self, id: &SessionId) -> Result<Arc<Session>, SessionError> {
        let state = self.state();
        match state.live.get(id) {
            Some(s) => {
                s.touch();
                Ok(Arc::clone(s))
            }
            None => Err(match state.ended.get(id) {
                Some(reason) => SessionError::Ended(id.clone(), *reason),
                None => SessionError::Unknown(id.clone()),
            }),
        }
    }

    pub fn live(&self) -> Vec<Arc<Session>> {
        let mut all: Vec<_> = self.state().live.values().cloned().collect();
        all.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        all
    }

    pub async fn list(&self) -> Vec<SessionInfo> {
        let mut out = Vec::new();
        for s in self.live() {
            out.push(SessionInfo {
                session_id: s.id.clone(),
                title: s.title.clone(),
                owner: s.owner.clone(),
                started_at: s.started_at.clone(),
                screen: s.current_screen().map(|sc| sc.number),
                viewers: s.viewers.load(std::sync::atomic::Ordering::SeqCst),
            });
        }
        out
    }

    /// Ends a session: it is gone for the agent at once, then its screen
    /// closes, unless viewers watch it: then it stays open until the last
    /// one leaves. Files are never touched, running shell commands are
    /// killed. Runs in a task of its own: a request dropped half way (a
    /// client that hung up) must not leave an ended session's screen open.
    pub async fn end(
        self: &Arc<Self>,
        id: &SessionId,
        reason: EndReason,
    ) -> Result<Option<ScreenNumber>, SessionError> {
        let (sessions, id) = (Arc::clone(self), id.clone());
        tokio::spawn(async move { sessions.end_now(&id, reason).await })
            .await
            .unwrap_or_else(|e| Err(join_failed(e)))
    }

    async fn end_now(
        &self,
        id: &SessionId,
        reason: EndReason,
    ) -> Result<Option<ScreenNumber>, SessionError> {
        let session = {
            let mut state = self.state();
            let Some(session) = state.live.remove(id) else {
                return Err(match state.ended.get(id) {
                    Some(r) => SessionError::Ended(id.clone(), *r),
                    None => SessionError::Unknown(id.clone()),
                });
            };
            state.ended.insert(id.clone(), reason);
            state.ended_order.push_back(id.clone());
            session.mark_ended();
            while state.ended_order.len() > ENDED_REMEMBERED {
                if let Some(old) = state.ended_order.pop_front() {
                    state.ended.remove(&old);
                }
            }
            session
        };
        tracing::info!(session = %id, ?reason, "session ended");
        self.changed();
        // Its recording, if any, closes complete up to its last step.
        self.recordings.session_ended(session.recorder_slot()).await;
        // Waits for a screen that is still opening; `screen_of` sees the
        // session is gone and does not hand it out.
        let screen = {
            let _opening = session.opening.lock().await;
            session.take_screen()
        };
        let number = screen.as_ref().map(|s| s.number);
        if let Some(screen) = screen {
            // Viewers are counted under the same lock, so either they are
            // still here (and the last to leave closes the screen) or the
            // screen is closed now.
            let close_now = {
                let mut state = self.state();
                if session.viewers.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                    state.screens.remove(&screen.number).is_some()
                } else {
                    false
                }
            };
            if close_now {
                screen.close().await;
                self.changed();
            } else {
                tracing::info!(screen = %screen.number, "screen stays open until its viewers leave");
            }
        }
        Ok(number)
    }

    /// Records a heartbeat; returns how many live sessions the owner has.
    pub fn heartbeat(&self, owner: &OwnerId) -> u32 {
        let mut state = self.state();
        let at = Instant::now();
        state
            .heartbeats
            .entry(owner.clone())
            .and_modify(|beat| beat.at = at)
            .or_insert(Beat {
                at,
                window: self.config.heartbeat_grace,
            });
        state.live.values().filter(|s| &s.owner == owner).count() as u32
    }

    /// Ends every session of `owner` (its host is shutting down).
    pub async fn end_owner(self: &Arc<Self>, owner: &OwnerId, reason: EndReason) -> u32 {
        let ids: Vec<SessionId> = self
            .state()
            .live
            .values()
            .filter(|s| &s.owner == owner)
            .map(|s| s.id.clone())
            .collect();
        let ended = futures::future::join_all(ids.iter().map(|id| self.end(id, reason))).await;
        ended.iter().filter(|r| r.is_ok()).count() as u32
    }

    /// Ends every session and closes every screen, watched or not
    /// (computerd is shutting down).
    pub async fn end_all(self: &Arc<Self>, reason: EndReason) {
        let ids: Vec<SessionId> = self.state().live.keys().cloned().collect();
        futures::future::join_all(ids.iter().map(|id| self.end(id, reason))).await;
        let watched: Vec<Arc<Screen>> = self
            .state()
            .screens
            .drain()
            .map(|(_, open)| open.screen)
            .collect();
        futures::future::join_all(watched.iter().map(|s| s.close())).await;
    }

    /// Sessions that should end now, with the reason.
    pub fn expired(&self, now: Instant) -> Vec<(SessionId, EndReason)> {
        let state = self.state();
        state
            .live
            .values()
            .filter_map(|s| {
                // An owner without a beat has none to lose yet.
                let lost = state
                    .heartbeats
                    .get(&s.owner)
                    .is_some_and(|beat| now.saturating_duration_since(beat.at) > beat.window);
                if lost {
                    Some((s.id.clone(), EndReason::HeartbeatLost))
                } else if s.idle_for(now) > s.limits.idle_timeout {
                    Some((s.id.clone(), EndReason::Idle))
                } else {
                    None
                }
            })
            .collect()
    }

    /// Tells the viewers' lists that something they show changed (a
    /// session started or stopped recording).
    pub fn touch_overview(&self) {
        self.changed();
    }

    /// Wakes everyone waiting in [`Sessions::changes`].
    pub(super) fn changed(&self) {
        self.changes
            .send_modify(|generation| *generation = generation.wrapping_add(1));
    }

    /// A receiver that wakes whenever [`Sessions::overview`] may have changed.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Every live session, and every ended one whose screen viewers still
    /// watch, oldest first.
    pub fn overview(&self) -> Vec<SessionOverview> {
        let state = self.state();
        let mut out: Vec<SessionOverview> = state
            .live
            .values()
            .map(|session| {
                let screen = state
                    .screens
                    .values()
                    .find(|open| Arc::ptr_eq(&open.session, session));
                SessionOverview::of(session, screen.map(|o| o.screen.as_ref()), false)
            })
            .collect();
        out.extend(
            state
                .screens
                .values()
                .filter(|open| !state.live.contains_key(&open.session.id))
                .map(|open| SessionOverview::of(&open.session, Some(&open.screen), true)),
        );
        out.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        out
    }
}

/// A spawned task of the registry did not finish: it panicked (the panic
/// goes on) or the runtime is shutting down.
pub(super) fn join_failed(e: tokio::task::JoinError) -> SessionError {
    if e.is_panic() {
        std::panic::resume_unwind(e.into_panic());
    }
    SessionError::Screen(ScreenError::ShuttingDown)
}

/// Why `id` is no longer live, or `None` while it is.
pub(super) fn ended_reason(state: &State, id: &SessionId) -> Option<EndReason> {
    if state.live.contains_key(id) {
        return None;
    }
    // Forgotten after ENDED_REMEMBERED later ends; ended all the same.
    Some(
        state
            .ended
            .get(id)
            .copied()
            .unwrap_or(EndReason::EndedByAgent),
    )
}

/// The heartbeat and idle timers on tokio's paused clock: time moves only
/// when a test advances it, so each boundary is checked to the millisecond
/// without waiting. No screen is opened, so neither X nor Docker is needed.
#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::browser::{BrowserSettings, Browsers};
    use computer_protocol::SessionSettings;
    use tokio::time::advance;

    /// The registry's settings, kept alive with it: the home is a folder of
    /// the test's own.
    pub(in crate::sessions) struct TestSessions {
        pub sessions: Arc<Sessions>,
        _home: tempfile::TempDir,
    }

    /// A registry whose owners lose their sessions `grace` after their last
    /// heartbeat.
    pub(in crate::sessions) fn sessions_with_grace(grace: Duration) -> TestSessions {
        let home = tempfile::tempdir().expect("temp home");
        let mut config = Config::for_tests(home.path());
        config.heartbeat_grace = grace;
        let home_path = config.home.clone();
        let browsers = Arc::new(Browsers::new(BrowserSettings {
            home: config.home.clone(),
            devtools_port_base: config.devtools_port_base,
            env: Vec::new(),
        }));
        let paths = ScreenPaths {
            home: config.home.clone(),
            vnc_password_file: home.path().join("vnc-password"),
            fluxbox_dir: config.fluxbox_dir.clone(),
            display_base: config.display_base,
            rfb_port_base: config.rfb_port_base,
            rfb_interface: config.rfb_interface.clone(),
            companions: Vec::new(),
            env: Vec::new(),
        };
        TestSessions {
            sessions: Arc::new(Sessions::new(
                Arc::new(config),
                paths,
                Arc::new(Recordings::new(&home_path, browsers)),
            )),
            _home: home,
        }
    }

    /// A new session of `owner` with `settings`.
    fn request(owner: &str, settings: SessionSettings) -> CreateSessionRequest {
        CreateSessionRequest {
            title: format!("{owner}'s session"),
            owner: OwnerId(owner.into()),
            settings,
            resume: None,
        }
    }

    /// Starts a session of `owner` that idles out after `idle_secs`.
    pub(in crate::sessions) fn start(
        sessions: &Sessions,
        owner: &str,
        idle_secs: u64,
    ) -> SessionId {
        let settings = SessionSettings {
            idle_timeout_secs: Some(idle_secs),
            ..SessionSettings::default()
        };
        let session = sessions.create(request(owner, settings));
        session.expect("the session starts").id.clone()
    }

    const GRACE: Duration = Duration::from_secs(30);
    const HOUR: u64 = 3600;
    const MS: Duration = Duration::from_millis(1);

    fn expired_now(sessions: &Sessions) -> Vec<(SessionId, EndReason)> {
        sessions.expired(Instant::now())
    }

    /// After a restore the host asks for its session again under the same
    /// id; an id this computerd has had is refused, and so is one that is
    /// no id at all.
    #[tokio::test(start_paused = true)]
    async fn a_session_resumes_under_its_id_once() {
        let t = sessions_with_grace(GRACE);
        let request = |resume: &str| CreateSessionRequest {
            title: "resumed".into(),
            owner: OwnerId("host-a".into()),
            settings: SessionSettings::default(),
            resume: Some(SessionId::parse(resume).unwrap()),
        };
        let id = "0f8e2a4c-1b3d-4e5f-9a7b-123456789abc";
        let resumed = t.sessions.create(request(id)).expect("resumed");
        assert_eq!(resumed.id.as_str(), id);
        let refused = |req| match t.sessions.create(req) {
            Ok(_) => panic!("the session should be refused"),
            Err(e) => e,
        };
        let again = refused(request(id));
        assert!(again.to_string().contains("already had"), "{again}");
        let bad = serde_json::from_value::<CreateSessionRequest>(serde_json::json!({
            "title": "resumed", "owner": "host-a", "resume": "../x"
        }))
        .unwrap_err();
        assert!(bad.to_string().contains("is not a session id"), "{bad}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_owner_without_heartbeats_loses_its_sessions_just_after_the_grace() {
        let t = sessions_with_grace(GRACE);
        let id = start(&t.sessions, "host-a", HOUR);
        let created = Instant::now();
        assert!(t.sessions.expired(created + GRACE).is_empty());
        assert_eq!(
            t.sessions.expired(created + GRACE + MS),
            vec![(id, EndReason::HeartbeatLost)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_heartbeat_restarts_the_grace_of_its_owner_only() {
        let t = sessions_with_grace(GRACE);
        let beating = start(&t.sessions, "beating", HOUR);
        let silent = start(&t.sessions, "silent", HOUR);
        advance(Duration::from_secs(20)).await;
        assert_eq!(t.sessions.heartbeat(&OwnerId("beating".into())), 1);
        advance(Duration::from_secs(10) + MS).await;
        assert_eq!(
            expired_now(&t.sessions),
            vec![(silent, EndReason::HeartbeatLost)]
        );
        advance(Duration::from_secs(20) - MS).await;
        assert!(
            expired_now(&t.sessions)
                .iter()
                .all(|(id, _)| *id != beating),
            "30 s after its heartbeat, not yet"
        );
        advance(MS).await;
        assert!(expired_now(&t.sessions).contains(&(beating, EndReason::HeartbeatLost)));
    }

    /// A session of `owner` whose host asked for `window_secs`.
    fn start_with_window(
        sessions: &Sessions,
        owner: &str,
        window_secs: u64,
    ) -> Result<SessionId, SessionError> {
        let settings = SessionSettings {
            heartbeat_window_secs: Some(window_secs),
            ..SessionSettings::default()
        };
        sessions
            .create(request(owner, settings))
            .map(|s| s.id.clone())
    }

    #[tokio::test(start_paused = true)]
    async fn an_owner_that_asked_for_a_short_window_loses_its_sessions_after_it_alone() {
        let t = sessions_with_grace(GRACE);
        let quick = start_with_window(&t.sessions, "quick", 6).expect("6 s is allowed");
        let default = start(&t.sessions, "default", HOUR);
        advance(Duration::from_secs(4)).await;
        // A heartbeat keeps the window the session asked for.
        assert_eq!(t.sessions.heartbeat(&OwnerId("quick".into())), 1);
        advance(Duration::from_secs(6)).await;
        assert!(
            expired_now(&t.sessions).is_empty(),
            "6 s after its beat, not yet"
        );
        advance(MS).await;
        assert_eq!(
            expired_now(&t.sessions),
            vec![(quick, EndReason::HeartbeatLost)]
        );
        advance(GRACE - Duration::from_secs(10)).await;
        assert!(expired_now(&t.sessions).contains(&(default, EndReason::HeartbeatLost)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_outside_its_bounds_is_refused_naming_the_field_and_the_bounds() {
        let t = sessions_with_grace(GRACE);
        for secs in [
            0,
            HEARTBEAT_WINDOW_MIN_SECS - 1,
            HEARTBEAT_WINDOW_MAX_SECS + 1,
        ] {
            let refused =
                start_with_window(&t.sessions, "host-a", secs).expect_err("outside the bounds");
            assert_eq!(
                refused.to_string(),
                format!("`settings.heartbeat_window_secs` is {secs}: it must be between 3 and 3600 seconds")
            );
        }
        assert!(t.sessions.live().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_session_ends_after_its_idle_timeout_and_a_call_restarts_it() {
        let t = sessions_with_grace(Duration::from_secs(HOUR * 24));
        let id = start(&t.sessions, "host-a", 60);
        advance(Duration::from_secs(59)).await;
        assert!(expired_now(&t.sessions).is_empty());
        // A call on the session (any route's `get`) counts as activity.
        t.sessions.get(&id).expect("live");
        advance(Duration::from_secs(60)).await;
        assert!(expired_now(&t.sessions).is_empty(), "60 s idle, not more");
        advance(MS).await;
        assert_eq!(expired_now(&t.sessions), vec![(id, EndReason::Idle)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_running_command_or_a_viewer_keeps_a_session_from_idling() {
        let t = sessions_with_grace(Duration::from_secs(HOUR * 24));
        let id = start(&t.sessions, "host-a", 60);
        let session = t.sessions.get(&id).expect("live");

        let command = session.command_started("sleep 600");
        advance(Duration::from_secs(600)).await;
        assert!(expired_now(&t.sessions).is_empty(), "a command runs");
        // The command's end counts as activity: a full idle timeout again.
        drop(command);
        advance(Duration::from_secs(60)).await;
        assert!(expired_now(&t.sessions).is_empty());

        session
            .viewers
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        advance(Duration::from_secs(600)).await;
        assert!(expired_now(&t.sessions).is_empty(), "a viewer watches");
        session
            .viewers
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(expired_now(&t.sessions), vec![(id, EndReason::Idle)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_keeps_its_session_from_idling_until_it_answers() {
        let t = sessions_with_grace(Duration::from_secs(HOUR * 24));
        let id = start(&t.sessions, "host-a", 60);
        let session = t.sessions.get(&id).expect("live");
        // A call longer than the idle timeout (a screen opening on a busy
        // machine, a long settle) is not idleness.
        let call = session.call_started();
        advance(Duration::from_secs(120)).await;
        assert!(expired_now(&t.sessions).is_empty(), "a call is answered");
        // Its answer restarts the timer: a full idle timeout again.
        drop(call);
        advance(Duration::from_secs(60)).await;
        assert!(expired_now(&t.sessions).is_empty(), "60 s idle, not more");
        advance(MS).await;
        assert_eq!(expired_now(&t.sessions), vec![(id, EndReason::Idle)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_heartbeat_is_the_reason_when_both_timers_ran_out() {
        let t = sessions_with_grace(GRACE);
        let id = start(&t.sessions, "host-a", 10);
        advance(GRACE + MS).await;
        assert_eq!(
            expired_now(&t.sessions),
            vec![(id, EndReason::HeartbeatLost)]
        );
    }
}
