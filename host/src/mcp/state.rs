//! What this MCP server process knows: its owner id, the computer it is
//! connected to, and the sessions it started (with the computerd boot they
//! belong to, so "unknown session" after a restart can say why).

use crate::client::{ClientError, ComputerdClient};
use computer_protocol::{ErrorCode, OwnerId, SessionId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A computer this process reached through `start_computer`.
#[derive(Debug, Clone)]
pub struct Connection {
    pub client: ComputerdClient,
    pub viewer_url: String,
    pub container: String,
    pub image: String,
    pub state: String,
    /// computerd's boot id when this process connected.
    pub boot_id: String,
    /// Longest shell timeout of the settings read by start_computer; the
    /// host's deadline for a shell call without its own timeout.
    pub shell_timeout_max: std::time::Duration,
    /// What opens when a session's screen opens (`COMPUTER_USE_OPEN`).
    pub open: crate::settings::OpenMode,
    /// The Windows VNC viewer for `vnc` mode.
    pub vnc_viewer: Option<std::path::PathBuf>,
    pub port_base: u16,
    pub viewer_key: String,
}

pub struct Host {
    /// Identifies this process to computerd for heartbeats; unique per run.
    pub owner: OwnerId,
    connection: Mutex<Option<Arc<Connection>>>,
    /// Sessions this process started, with the boot id they were made under.
    sessions: Mutex<HashMap<SessionId, String>>,
    /// Serialises start_computer so two concurrent calls create one container.
    pub starting: tokio::sync::Mutex<()>,
    /// Sessions whose screen this process has already shown to the person.
    announced: Mutex<std::collections::HashSet<SessionId>>,
    opener: Arc<crate::open::Opener>,
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

impl Host {
    pub fn new() -> Host {
        let short = uuid::Uuid::new_v4().simple().to_string();
        Host {
            owner: OwnerId(format!("host-{}-{}", std::process::id(), &short[..8])),
            connection: Mutex::new(None),
            sessions: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
            announced: Mutex::new(std::collections::HashSet::new()),
            opener: Arc::new(crate::open::Opener::default()),
        }
    }

    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.connection
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_connection(&self, connection: Connection) -> Arc<Connection> {
        let connection = Arc::new(connection);
        *self.connection.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&connection));
        connection
    }

    pub fn remember(&self, id: SessionId, boot_id: String) {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, boot_id);
    }

    pub fn forget(&self, id: &SessionId) {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    pub fn session_count(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// The client for a session's calls, or the error an agent should see
    /// when this process never started a computer.
    pub fn client_for(&self, id: &str) -> Result<Arc<Connection>, String> {
        self.connection().ok_or_else(|| {
            format!("there is no session `{id}` in this MCP server: call start_computer first and use the session_id it returns")
        })
    }

    /// Called after a successful observe or act: the first time for a
    /// session, opens the viewer on its screen in the background.
    pub fn announce_screen(&self, id: &str) {
        let sid = SessionId(id.to_string());
        let first = self
            .announced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sid.clone());
        let Some(conn) = self.connection() else {
            return;
        };
        if !first || conn.open == crate::settings::OpenMode::None {
            return;
        }
        let opener = Arc::clone(&self.opener);
        tokio::spawn(async move {
            let listed: Result<computer_protocol::SessionsResponse, _> = conn
                .client
                .call(
                    reqwest::Method::GET,
                    computer_protocol::routes::SESSIONS,
                    None::<&()>,
                    std::time::Duration::from_secs(5),
                    "nothing",
                )
                .await;
            let screen = listed
                .ok()
                .and_then(|l| l.sessions.into_iter().find(|s| s.session_id == sid))
                .and_then(|s| s.screen);
            if let Some(screen) = screen {
                let target = crate::open::Target {
                    client: conn.client.clone(),
                    port_base: conn.port_base,
                    key: conn.viewer_key.clone(),
                };
                opener.screen_opened(conn.open, target, screen.0, conn.vnc_viewer.clone());
            }
        });
    }

    /// Turns a client error into the agent's message. An unknown session that
    /// this process started under an earlier computerd boot ended because the
    /// computer restarted.
    pub fn explain(&self, id: &str, error: ClientError) -> String {
        if error.code() == Some(ErrorCode::UnknownSession) {
            let sid = SessionId(id.to_string());
            let known = self
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&sid)
                .cloned();
            let current = self.connection().map(|c| c.boot_id.clone());
            if let (Some(made_in), Some(now)) = (known, current) {
                if made_in != now {
                    return computer_protocol::EndReason::ComputerRestarted.explain(&sid);
                }
            }
        }
        error.to_string()
    }
}
