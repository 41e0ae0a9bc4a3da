//! The process's one link to the computer: where its API is, its token,
//! the computerd boot it runs, and who may start it. Every agent (MCP
//! client) of this process shares it; what each agent owns lives in
//! [`crate::agent`].
//!
//! The token goes only to the API port Docker publishes for the computer
//! now: the connection is checked with Docker before each heartbeat, before
//! a tool call when the last check is older than [`CONFIRMED_FOR`], and after
//! any call that could not reach computerd. A restarted computer is followed
//! to its new port; while it is stopped or removed, nothing is sent and
//! every call says so.

use crate::client::{ClientError, ComputerdClient};
use crate::docker::recheck::{recheck, Recheck};
use crate::docker::{DockerError, Way};
use computer_protocol::endpoints::{GetComputer, NoBody};
use computer_protocol::{ComputerInfo, OwnerId};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a Docker check of the API port holds for tool calls. A check
/// costs one `docker inspect`; calls in a burst share it. The window is what
/// is left of finding 12 of the review: closing it needs computerd to prove
/// it knows the token before the host sends it.
pub const CONFIRMED_FOR: Duration = Duration::from_secs(2);
/// How long a computer restarted elsewhere gets to answer on its new port.
const NEW_PORT_DEADLINE: Duration = Duration::from_secs(5);
/// How long a call through a tunnel waits for Docker's check before going
/// on unconfirmed. A `docker cp` holds the container's lock in the engine
/// for as long as it copies, so the check may wait that long; meanwhile the
/// heartbeat must still go out well within computerd's 15 s keep-alive, on
/// the tunnel connection it already has (a new one needs an exec, which
/// waits for the same lock).
const TUNNEL_CHECK_WAIT: Duration = Duration::from_secs(2);

/// A computer this process reached through `start_computer`
/// ([`crate::computer::start`] makes it). Its token and viewer key are
/// hidden from `Debug` by their types.
#[derive(Clone, Debug)]
pub struct Connection {
    pub client: ComputerdClient,
    pub container: String,
    pub image: String,
    pub state: String,
    /// computerd's boot id when this process connected.
    pub boot_id: String,
    /// The session settings `start_computer` read, sent with each new
    /// session.
    pub session_settings: computer_protocol::SessionSettings,
    /// Longest shell timeout of the settings read by start_computer; the
    /// host's deadline for a shell call without its own timeout.
    pub shell_timeout_max: std::time::Duration,
    /// What opens when a session's screen opens (`COMPUTER_USE_OPEN`).
    pub open: crate::settings::OpenMode,
    /// The Windows VNC viewer for `vnc` mode.
    pub vnc_viewer: Option<std::path::PathBuf>,
    pub port_base: u16,
    pub viewer_key: computer_protocol::ViewerKey,
    /// How the computer's ports are reached, with the engine it runs on,
    /// for checking where its API is.
    pub dialer: crate::docker::Dialer,
    /// The container's id; another id under the same name is another
    /// computer.
    pub container_id: String,
    /// When Docker last started it; another time is another run, with a
    /// new computerd behind the same port.
    pub started_at: Option<String>,
    /// The network policy of the server that connected; a restarted
    /// computer gets its guard again with it before anything is sent.
    pub network: computer_protocol::network::NetworkPolicy,
    /// What the container was made from when a restore or a reset made it
    /// (`snapshot NAME`, `reset`), so that the sessions it ended say why.
    pub origin: Option<String>,
}

/// Why a call on a session cannot go to the computer this process is
/// linked to; each says what became of the session and what to call next.
impl Connection {
    /// The viewer's link: it carries the key, so it is made when shown,
    /// never kept where `Debug` could print it.
    pub fn viewer_url(&self) -> String {
        computer_protocol::viewer_link(self.port_base, &self.viewer_key, None)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// `start_computer` has not run in this process.
    #[error("there is no session `{id}` in this MCP server: call start_computer first and use the session_id it returns")]
    NotConnected { id: String },
    #[error("cannot ask Docker where the computer `{container}` is, so nothing was sent to it: {source}. Once Docker answers again, try again; call start_computer if the computer stopped")]
    DockerUnanswered {
        container: String,
        /// Boxed: a `DockerError` is large, and every tool call's `Result`
        /// has room for a `LinkError` (clippy's `result_large_err`).
        source: Box<DockerError>,
    },
    #[error("the computer `{name}` has stopped (Docker says `{status}`{}), so session `{id}` ended with it: its screens and running programs are gone, files in its home are kept. Call start_computer to start it again and get a new session; `docker logs {name}` may say why it stopped", exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default())]
    Stopped {
        id: String,
        name: String,
        status: String,
        exit_code: Option<i64>,
    },
    #[error("the computer `{name}` no longer exists (its container was removed), so session `{id}` ended with it. Call start_computer to create it again and get a new session")]
    Removed { id: String, name: String },
    /// Docker publishes the API on a new port, where computerd does not
    /// answer yet.
    /// It restarted and its network guard could not be put back, so
    /// nothing goes to it: it must never run unguarded.
    #[error("the computer `{container}` restarted, and its network guard could not be started again, so nothing was sent to it: {source}. Call start_computer")]
    Unguarded {
        container: String,
        source: Box<DockerError>,
    },
    /// Its guard had restarted under it, so it was restarted to join it.
    #[error("the computer `{container}` lost its network when its guard restarted, so it was restarted to join it again; its screens and running programs are gone, files are kept. Call start_computer for a new session")]
    Rejoined { container: String },
    #[error("the computer `{container}` restarted and does not answer yet ({source}); try again in a few seconds")]
    NotAnsweringYet {
        container: String,
        source: ClientError,
    },
}

pub struct Link {
    connection: Mutex<Option<Arc<Connection>>>,
    /// When Docker last confirmed the connection's API port.
    confirmed_at: Mutex<Option<Instant>>,
    /// One Docker check at a time; calls waiting on it reuse its answer.
    checking: tokio::sync::Mutex<()>,
    /// Serialises start_computer so two concurrent calls create one container.
    pub starting: tokio::sync::Mutex<()>,
    pub(crate) opener: Arc<crate::open::Opener>,
    /// The agents whose sessions are not known to have ended yet, so a
    /// shutting-down process can end them all.
    owners: Mutex<HashSet<OwnerId>>,
}

impl Default for Link {
    fn default() -> Self {
        Link::new()
    }
}

impl Link {
    pub fn new() -> Link {
        Link {
            connection: Mutex::new(None),
            confirmed_at: Mutex::new(None),
            checking: tokio::sync::Mutex::new(()),
            starting: tokio::sync::Mutex::new(()),
            opener: Arc::new(crate::open::Opener::default()),
            owners: Mutex::new(HashSet::new()),
        }
    }

    pub(crate) fn add_owner(&self, owner: &OwnerId) {
        self.owners.lock().insert(owner.clone());
    }

    pub(crate) fn remove_owner(&self, owner: &OwnerId) {
        self.owners.lock().remove(owner);
    }

    /// The agents whose sessions may still run.
    pub fn owners(&self) -> Vec<OwnerId> {
        self.owners.lock().iter().cloned().collect()
    }

    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.connection.lock().clone()
    }

    /// Uses `connection` from now on; its API port has just been read from
    /// Docker.
    pub fn set_connection(&self, connection: Connection) -> Arc<Connection> {
        let connection = Arc::new(connection);
        *self.connection.lock() = Some(Arc::clone(&connection));
        self.mark_confirmed();
        connection
    }

    /// A new policy for the connected computer's guard, put in force
    /// elsewhere: the one a restarted computer gets its guard with.
    pub fn set_network(&self, network: computer_protocol::network::NetworkPolicy) {
        let mut connection = self.connection.lock();
        if let Some(current) = connection.as_ref() {
            let mut changed = Connection::clone(current);
            changed.network = network;
            *connection = Some(Arc::new(changed));
        }
    }

    fn mark_confirmed(&self) {
        *self.confirmed_at.lock() = Some(Instant::now());
    }

    /// Nothing is sent until a check finds the computer running again. The
    /// connection stays, to follow the computer when something else (another
    /// MCP server, `docker start`) brings it back. `lost` says why.
    fn lose(&self, lost: LinkError) -> LinkError {
        *self.confirmed_at.lock() = None;
        lost
    }

    /// The connection, once Docker has confirmed within `fresh` that the
    /// container still publishes its API on the connection's port. A
    /// restarted computer's new port replaces the old one; a stopped or
    /// removed computer is an error that says so. `id` names the session in
    /// the messages.
    pub async fn confirmed(&self, id: &str, fresh: Duration) -> Result<Arc<Connection>, LinkError> {
        let _one_check = self.checking.lock().await;
        let conn = self
            .connection()
            .ok_or_else(|| LinkError::NotConnected { id: id.to_string() })?;
        let last = *self.confirmed_at.lock();
        if last.is_some_and(|at| at.elapsed() < fresh) {
            return Ok(conn);
        }
        let check = recheck(
            &conn.dialer,
            &conn.container,
            &conn.container_id,
            conn.started_at.as_deref(),
            conn.client.base_url(),
        );
        let checked = if conn.dialer.way() == Way::Tunnel {
            match tokio::time::timeout(TUNNEL_CHECK_WAIT, check).await {
                Ok(checked) => checked,
                Err(_) => {
                    tracing::warn!("calling the computer `{}` through its tunnel while Docker has not answered within {}s", conn.container, TUNNEL_CHECK_WAIT.as_secs());
                    return Ok(conn);
                }
            }
        } else {
            check.await
        };
        let now = match checked {
            Ok(now) => now,
            // Through a tunnel the API URL is this process's own listener,
            // so the token cannot go astray while Docker is slow to answer
            // (a long `docker cp` holds the container's lock); carry on
            // unconfirmed, and ask again next time.
            Err(e) if conn.dialer.way() == Way::Tunnel => {
                tracing::warn!("calling the computer `{}` through its tunnel while Docker does not answer: {e}", conn.container);
                return Ok(conn);
            }
            Err(source) => {
                return Err(LinkError::DockerUnanswered {
                    container: conn.container.clone(),
                    source: Box::new(source),
                });
            }
        };
        match now {
            Recheck::Unchanged => {
                self.mark_confirmed();
                Ok(conn)
            }
            Recheck::Moved {
                api_url,
                token,
                container_id,
                started_at,
            } => {
                let run = (container_id, started_at);
                self.follow(id, &conn, api_url, token, run).await
            }
            Recheck::Stopped { status, exit_code } => Err(self.lose(LinkError::Stopped {
                id: id.to_string(),
                name: conn.container.clone(),
                status,
                exit_code,
            })),
            Recheck::Missing => Err(self.lose(LinkError::Removed {
                id: id.to_string(),
                name: conn.container.clone(),
            })),
        }
    }

    /// Moves the connection to the port Docker now publishes, and learns the
    /// new computerd boot so the old sessions can say they ended.
    async fn follow(
        &self,
        id: &str,
        old: &Connection,
        api_url: String,
        token: computer_protocol::Token,
        (container_id, started_at): (String, Option<String>),
    ) -> Result<Arc<Connection>, LinkError> {
        tracing::info!(
            "the computer `{}` moved from {} to {api_url}; following it",
            old.container,
            old.client.base_url()
        );
        // A computer started behind this server's back (`docker restart`)
        // finds its guard as it left it, unless that was stopped too; one
        // made before the guard owned its namespace has a new namespace
        // and no guard in it yet.
        let unguarded = |source: DockerError| LinkError::Unguarded {
            container: old.container.clone(),
            source: Box::new(source),
        };
        let found = crate::docker::find_computer(old.dialer.docker(), &old.container)
            .await
            .map_err(unguarded)?
            .ok_or_else(|| LinkError::Removed {
                id: id.to_string(),
                name: old.container.clone(),
            })?;
        let rejoin = crate::docker::guard::ensure(old.dialer.docker(), &found, &old.network)
            .await
            .map_err(unguarded)?;
        if rejoin {
            // Its guard was restarted under it, so it has loopback only;
            // the restart makes a new run, which the next check follows.
            crate::docker::container::restart(old.dialer.docker(), &found)
                .await
                .map_err(unguarded)?;
            return Err(self.lose(LinkError::Rejoined {
                container: old.container.clone(),
            }));
        }
        let client = ComputerdClient::new(api_url, token, old.container.clone());
        let info: ComputerInfo =
            computer_info(&client)
                .await
                .map_err(|source| LinkError::NotAnsweringYet {
                    container: old.container.clone(),
                    source,
                })?;
        let mut moved = old.clone();
        moved.client = client;
        moved.container_id = container_id;
        moved.started_at = started_at;
        moved.origin = found.origin.clone();
        moved.boot_id = info.boot_id;
        moved.viewer_key = info.viewer_key;
        Ok(self.set_connection(moved))
    }
}

/// computerd's facts (its boot id above all), asked of a computer that may
/// just have restarted.
pub(crate) async fn computer_info(client: &ComputerdClient) -> Result<ComputerInfo, ClientError> {
    client
        .send::<GetComputer>(&(), &NoBody {}, NEW_PORT_DEADLINE, "nothing keeps running")
        .await
}

#[cfg(test)]
mod tests {
    use super::{LinkError, TUNNEL_CHECK_WAIT};

    #[test]
    fn a_lost_computer_says_what_became_of_the_session() {
        let stopped = |exit_code| LinkError::Stopped {
            id: "s1".into(),
            name: "computer-use".into(),
            status: "exited".into(),
            exit_code,
        };
        assert_eq!(
            stopped(Some(137)).to_string(),
            "the computer `computer-use` has stopped (Docker says `exited`, exit code 137), so session `s1` ended with it: its screens and running programs are gone, files in its home are kept. Call start_computer to start it again and get a new session; `docker logs computer-use` may say why it stopped"
        );
        assert!(stopped(None)
            .to_string()
            .contains("(Docker says `exited`), so session `s1`"));
        let removed = LinkError::Removed {
            id: "s1".into(),
            name: "computer-use".into(),
        };
        assert_eq!(
            removed.to_string(),
            "the computer `computer-use` no longer exists (its container was removed), so session `s1` ended with it. Call start_computer to create it again and get a new session"
        );
    }

    /// A heartbeat through a tunnel goes out at most the interval plus the
    /// Docker check after the previous one; its connection must still be in
    /// the pool then, or it needs a new exec (see `client::POOL_IDLE`).
    #[test]
    fn the_heartbeat_finds_its_connection_still_pooled() {
        assert!(crate::heartbeat::INTERVAL + TUNNEL_CHECK_WAIT < crate::client::POOL_IDLE);
    }
}
