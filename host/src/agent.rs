//! One agent: an MCP client of this process (the stdio peer, or one HTTP
//! MCP session). It has its own owner id at computerd, its own sessions
//! (with the computerd boot each was made under, so "unknown session" after
//! a restart can say why), its own heartbeat, and the screens already shown.
//! When the agent closes (stdio ends, the HTTP session is deleted or
//! expires), its sessions end and its heartbeat stops; the link to the
//! computer stays for the other agents.

use crate::client::ClientError;
use crate::link::{Connection, Link, LinkError, CONFIRMED_FOR};
use crate::open::Handback;
use crate::recording::HostRecording;
use crate::tenant::Tenant;
use computer_protocol::{ErrorCode, OwnerId, ScreenNumber, SessionId};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After a call failed to connect while Docker still lists the container as
/// running, Docker may just not have seen it stop yet: look again this often,
/// this long.
const SETTLE_EVERY: Duration = Duration::from_millis(250);
const SETTLE_FOR: Duration = Duration::from_secs(3);

/// Why a call on one of this agent's sessions got no answer from the
/// computer, explained for the agent (see [`Agent::explain`]).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error(transparent)]
    Refused(#[from] SessionRefused),
    /// The call could not reach computerd (`source`, a
    /// [`ClientError::Unreachable`]), and for [`SETTLE_FOR`] Docker kept
    /// saying the container runs.
    #[error("cannot reach the computer `{container}` at {}, although Docker says it runs: computerd inside it may be starting or stuck. Try again in a few seconds; if this persists, see `docker logs {container}` and call start_computer", where_and_why(source))]
    StillUnreachable {
        container: String,
        source: ClientError,
    },
    /// computerd's answer or failure, which needs no more explaining.
    #[error(transparent)]
    Computer(#[from] ClientError),
}

/// Why this agent sends nothing for a session it was given.
#[derive(Debug, thiserror::Error)]
pub enum SessionRefused {
    /// Not a session this agent started: another agent's is, to this one,
    /// a session that does not exist (computerd's own words).
    #[error("{}", computer_protocol::no_such_session(id))]
    NoSuchSession { id: SessionId },
    /// Made under an earlier computerd boot.
    #[error("session `{id}` has ended because the computer `{container}` restarted: its sessions, screens and running programs are gone, files in its home are kept. The computer runs again, so call start_computer only to get a new session (it does not start the computer again)")]
    Restarted { id: String, container: String },
    /// Made before a restore or a reset replaced the computer's container.
    #[error("session `{id}` has ended because the computer `{container}` was {}: its screens and running programs are gone{}. The computer runs, so call start_computer for a new session", restored_to(.origin), files_after(.origin))]
    Restored {
        id: String,
        container: String,
        /// `snapshot NAME` or `reset`.
        origin: String,
    },
}

fn restored_to(origin: &str) -> String {
    match origin {
        "reset" => "reset to a fresh computer".to_string(),
        snapshot => format!("restored to {snapshot}"),
    }
}

fn files_after(origin: &str) -> &'static str {
    match origin {
        "reset" => " and its home is empty",
        _ => " and its files are as the snapshot saved them",
    }
}

/// What an agent knows of one of its sessions: the computerd boot and the
/// container it was made in.
#[derive(Debug, Clone)]
struct Made {
    boot_id: String,
    container_id: String,
}

/// `URL (reason)` of a call that could not reach computerd.
fn where_and_why(error: &ClientError) -> String {
    match error {
        ClientError::Unreachable { url, reason, .. } => format!("{url} ({reason})"),
        other => other.to_string(),
    }
}

pub struct Agent {
    /// Whose computer this agent drives; its link is shared by the
    /// tenant's agents.
    tenant: Arc<Tenant>,
    link: Arc<Link>,
    /// Identifies this agent to computerd for heartbeats; unique per agent.
    pub owner: OwnerId,
    /// Sessions this agent started, with the boot id they were made under.
    /// Ended ones stay, so that a call on one gets computerd's "ended by
    /// end_session" rather than "no such session".
    sessions: Mutex<HashMap<SessionId, Made>>,
    /// Sessions whose screen this agent has already shown to the person.
    announced: Mutex<HashSet<SessionId>>,
    /// Sessions of this agent that record their calls.
    recordings: Mutex<HashMap<SessionId, Arc<HostRecording>>>,
    /// The hand-back code of each session's open handoff: only the
    /// person's link and this map hold it, never the computer.
    handbacks: Mutex<HashMap<SessionId, Handback>>,
    /// The heartbeat task, when a runtime was there to run it.
    beat: Option<tokio::task::AbortHandle>,
    closed: AtomicBool,
}

impl Agent {
    /// A new agent on `tenant`'s computer; its heartbeat starts at once (it
    /// sends nothing until the link is connected).
    pub fn new(tenant: Arc<Tenant>) -> Agent {
        let link = Arc::clone(&tenant.link);
        let short = uuid::Uuid::new_v4().simple().to_string();
        let owner = OwnerId(format!("host-{}-{}", std::process::id(), &short[..8]));
        link.add_owner(&owner);
        let beat = tokio::runtime::Handle::try_current().ok().map(|rt| {
            rt.spawn(crate::heartbeat::run(Arc::clone(&link), owner.clone()))
                .abort_handle()
        });
        Agent {
            tenant,
            link,
            owner,
            sessions: Mutex::new(HashMap::new()),
            announced: Mutex::new(HashSet::new()),
            recordings: Mutex::new(HashMap::new()),
            handbacks: Mutex::new(HashMap::new()),
            beat,
            closed: AtomicBool::new(false),
        }
    }

    /// The recording of session `id`, when it records.
    pub fn recording(&self, id: &SessionId) -> Option<Arc<HostRecording>> {
        self.recordings_map().get(id).cloned()
    }

    /// Keeps the hand-back code of session `id`'s handoff, for
    /// [`Agent::handed_back_by_person`].
    pub fn keep_handback(&self, id: &SessionId, handback: Handback) {
        self.handbacks.lock().insert(id.clone(), handback);
    }

    /// Whether `presented`, the code the computer says the person's page
    /// handed back with, is the one made for handoff `handoff_id`. The
    /// code is forgotten either way: a hold ends once.
    pub fn handed_back_by_person(
        &self,
        id: &SessionId,
        handoff_id: &str,
        presented: Option<&str>,
    ) -> bool {
        let kept = self.handbacks.lock().remove(id);
        handback_matches(kept.as_ref(), handoff_id, presented)
    }

    /// Forgets session `id`'s hand-back code (its hold was cancelled or
    /// expired).
    pub fn forget_handback(&self, id: &SessionId) {
        self.handbacks.lock().remove(id);
    }

    /// Session `id` records from now on; false when it already did.
    pub fn start_recording(&self, id: &SessionId, recording: HostRecording) -> bool {
        let mut map = self.recordings_map();
        if map.contains_key(id) {
            return false;
        }
        map.insert(id.clone(), Arc::new(recording));
        true
    }

    /// Session `id` stops recording; its queue is handed back to drain.
    pub fn stop_recording(&self, id: &SessionId) -> Option<Arc<HostRecording>> {
        self.recordings_map().remove(id)
    }

    fn recordings_map(
        &self,
    ) -> parking_lot::MutexGuard<'_, HashMap<SessionId, Arc<HostRecording>>> {
        self.recordings.lock()
    }

    /// The link to the tenant's computer.
    pub fn link(&self) -> &Arc<Link> {
        &self.link
    }

    pub fn tenant(&self) -> &Arc<Tenant> {
        &self.tenant
    }

    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.link.connection()
    }

    /// See [`Link::set_connection`].
    pub fn set_connection(&self, connection: Connection) -> Arc<Connection> {
        self.link.set_connection(connection)
    }

    /// Stops the heartbeat and ends this agent's sessions, waiting at most
    /// [`crate::heartbeat::SHUTDOWN_WAIT`]. Later calls do nothing.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(beat) = &self.beat {
            beat.abort();
        }
        crate::heartbeat::end_all(&self.link, &self.owner).await;
    }

    /// The connection for a tool call on session `id`: confirmed with Docker
    /// (see [`CONFIRMED_FOR`]), and refused for a session this agent did not
    /// start or made before the computer restarted.
    pub async fn reach(&self, id: &SessionId) -> Result<Arc<Connection>, AgentError> {
        let conn = self.link.confirmed(id.as_str(), CONFIRMED_FOR).await?;
        self.started_in_this_boot(id, &conn)?;
        Ok(conn)
    }

    /// Where session `id` was made, when this process made it.
    fn made(&self, id: &SessionId) -> Option<Made> {
        self.sessions.lock().get(id).cloned()
    }

    /// Refuses session `id` unless this agent started it under the boot
    /// `conn` reaches. Several agents share one computerd token; a session
    /// another agent started is, to this one, a session that does not
    /// exist (computerd's own words), so no agent can drive or end another's.
    fn started_in_this_boot(
        &self,
        id: &SessionId,
        conn: &Connection,
    ) -> Result<(), SessionRefused> {
        match self.made(id) {
            None => Err(SessionRefused::NoSuchSession { id: id.clone() }),
            Some(made) if made.boot_id != conn.boot_id => Err(restarted(id, &made, conn)),
            Some(_) => Ok(()),
        }
    }

    /// Session `id` was made now, on the computer `conn` reaches.
    pub fn remember(&self, id: SessionId, conn: &Connection) {
        let made = Made {
            boot_id: conn.boot_id.clone(),
            container_id: conn.container_id.clone(),
        };
        self.sessions.lock().insert(id, made);
    }

    /// Called after a successful observe or act, with the screen its answer
    /// names: the first time for a session, opens the viewer on that screen
    /// in the background.
    pub fn announce_screen(&self, id: &SessionId, screen: ScreenNumber) {
        let first = self.announced.lock().insert(id.clone());
        let Some(conn) = self.link.connection() else {
            return;
        };
        if !first {
            return;
        }
        if conn.open == crate::settings::OpenMode::None {
            tracing::debug!(target: "computer_use_mcp::open", "session {id}: `COMPUTER_USE_OPEN` is `none`, so no viewer opens");
            return;
        }
        let target = crate::open::Target {
            client: conn.client.clone(),
            port_base: conn.port_base,
            key: conn.viewer_key.clone(),
        };
        self.link
            .opener
            .screen_opened(conn.open, target, screen, conn.vnc_viewer.clone());
    }

    /// A call's result for the agent, its error explained (see
    /// [`Agent::explain`]).
    pub async fn answer<T>(
        &self,
        id: &SessionId,
        result: Result<T, ClientError>,
    ) -> Result<T, AgentError> {
        match result {
            Ok(value) => Ok(value),
            Err(error) => Err(self.explain(id, error).await),
        }
    }

    /// Turns a client error into the agent's error. A call that could not
    /// reach computerd asks Docker why (stopped, removed, restarted on
    /// another port); an unknown session that this process started under an
    /// earlier computerd boot ended because the computer restarted.
    pub async fn explain(&self, id: &SessionId, error: ClientError) -> AgentError {
        match &error {
            ClientError::Unreachable { .. } => self.explain_unreachable(id, error).await,
            ClientError::Api(e) if e.code == ErrorCode::UnknownSession => self
                .explain_unknown(id)
                .await
                .unwrap_or(AgentError::Computer(error)),
            _ => AgentError::Computer(error),
        }
    }

    /// `error` is the call's [`ClientError::Unreachable`].
    async fn explain_unreachable(&self, id: &SessionId, error: ClientError) -> AgentError {
        let settle_by = Instant::now() + SETTLE_FOR;
        loop {
            let conn = match self.link.confirmed(id.as_str(), Duration::ZERO).await {
                Ok(conn) => conn,
                Err(why) => return why.into(),
            };
            if let Err(refused) = self.started_in_this_boot(id, &conn) {
                return refused.into();
            }
            if Instant::now() >= settle_by {
                return AgentError::StillUnreachable {
                    container: conn.container.clone(),
                    source: error,
                };
            }
            tokio::time::sleep(SETTLE_EVERY).await;
        }
    }

    /// `Some(error)` when session `id` was made here under an earlier
    /// computerd boot; the boot is read again, since a restart can keep the
    /// same port.
    async fn explain_unknown(&self, id: &SessionId) -> Option<AgentError> {
        let made = self.made(id)?;
        // Asked of Docker now, not within CONFIRMED_FOR: a restore keeps the
        // API's port, so only Docker tells that the container was replaced.
        let conn = self
            .link
            .confirmed(id.as_str(), Duration::ZERO)
            .await
            .ok()?;
        let info = crate::link::computer_info(&conn.client).await.ok()?;
        (info.boot_id != made.boot_id).then(|| restarted(id, &made, &conn).into())
    }
}

/// Session `id`, `made` under an earlier boot of the computer `conn`
/// reaches: restarted, or replaced by a restore or a reset.
fn restarted(id: &SessionId, made: &Made, conn: &Connection) -> SessionRefused {
    match &conn.origin {
        Some(origin) if made.container_id != conn.container_id => SessionRefused::Restored {
            id: id.to_string(),
            container: conn.container.clone(),
            origin: origin.clone(),
        },
        _ => SessionRefused::Restarted {
            id: id.to_string(),
            container: conn.container.clone(),
        },
    }
}

impl Drop for Agent {
    /// An agent dropped without [`Agent::close`] (its HTTP session ended)
    /// still ends its sessions, in the background.
    fn drop(&mut self) {
        if let Some(beat) = &self.beat {
            beat.abort();
        }
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let link = Arc::clone(&self.link);
            let owner = self.owner.clone();
            rt.spawn(async move { crate::heartbeat::end_all(&link, &owner).await });
        }
    }
}

/// Whether `presented` is the code kept for handoff `handoff_id`; nothing
/// kept, another handoff's code or no code at all never match.
fn handback_matches(kept: Option<&Handback>, handoff_id: &str, presented: Option<&str>) -> bool {
    matches!((kept, presented), (Some(kept), Some(presented))
        if kept.handoff_id == handoff_id && kept.code.expose() == presented)
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::Hidden;

    #[test]
    fn only_the_kept_code_of_the_same_handoff_hands_back() {
        let kept = Handback {
            handoff_id: "handoff-1".into(),
            code: Hidden::new("c0de".into()),
        };
        assert!(handback_matches(Some(&kept), "handoff-1", Some("c0de")));
        assert!(!handback_matches(Some(&kept), "handoff-1", Some("c0dE")));
        assert!(!handback_matches(Some(&kept), "handoff-1", None));
        assert!(!handback_matches(Some(&kept), "handoff-2", Some("c0de")));
        assert!(!handback_matches(None, "handoff-1", Some("c0de")));
    }

    #[test]
    fn an_unreachable_computer_that_docker_says_runs_keeps_the_call_error() {
        let call = ClientError::Unreachable {
            url: "http://127.0.0.1:20900/v1/sessions".into(),
            container: "computer-use".into(),
            reason: "connection refused".into(),
        };
        let e = AgentError::StillUnreachable {
            container: "computer-use".into(),
            source: call,
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the computer `computer-use` at http://127.0.0.1:20900/v1/sessions (connection refused), although Docker says it runs: computerd inside it may be starting or stuck. Try again in a few seconds; if this persists, see `docker logs computer-use` and call start_computer"
        );
        let source = std::error::Error::source(&e).expect("the call's error");
        assert!(source.downcast_ref::<ClientError>().is_some(), "{source:?}");
    }

    #[test]
    fn another_agents_session_is_one_that_does_not_exist() {
        let id = SessionId::parse("0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30").unwrap();
        let e = AgentError::from(SessionRefused::NoSuchSession { id: id.clone() });
        assert_eq!(e.to_string(), computer_protocol::no_such_session(&id));
    }
}
