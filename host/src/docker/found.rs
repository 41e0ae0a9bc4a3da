//! What Docker says about a computer's container, read without changing
//! anything: whether it runs ([`ComputerState`]), and the facts the host
//! needs to reach it or to decide what to do with it ([`FoundComputer`]).
//! Starting, upgrading and the dialer build on this; it builds on nothing
//! of theirs.
//!
//! A computer's network namespace belongs to its network guard
//! ([`Namespace::Guards`]): the ports are published on the guard's
//! container, so they are read from there. A computer made before the
//! guard owned the namespace has one of its own ([`Namespace::Own`]),
//! with its ports on itself, until an upgrade recreates it.

use super::call::{status_of, Call};
use super::error::DockerError;
use super::image::{is_older_than_binary, VERSION_LABEL};
use super::ports;
use bollard::models::{ContainerInspectResponse, ContainerStateStatusEnum};
use bollard::Docker;
use computer_protocol::Token;
use std::fmt;
use std::time::Duration;

/// The computer user's home, where the home volume is mounted.
pub const HOME: &str = "/home/computer";
/// The variable that carries the API token into the container, and that marks
/// a container as one this program made.
pub const TOKEN_VAR: &str = "COMPUTERD_TOKEN";
/// The label of a computer made by a restore or a reset: `snapshot NAME`
/// or `reset`, so that a session of the computer it replaced can say why
/// it ended.
pub const ORIGIN_LABEL: &str = "computer-use.origin";

/// The environment of every `docker exec` into a computer: the container's
/// own carries the token, and what an exec runs (a tunnel's relay, doctor's
/// `df`) would show it in `/proc/<pid>/environ` to the agent's code, which
/// runs as the same user. computerd's entrypoint hides it the same way.
pub fn exec_env() -> Vec<String> {
    vec![format!("{TOKEN_VAR}=")]
}
const INSPECT_DEADLINE: Duration = Duration::from_secs(15);

/// The computer's state as the user thinks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputerState {
    Missing,
    Stopped,
    Running,
}

impl fmt::Display for ComputerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComputerState::Missing => "missing",
            ComputerState::Stopped => "stopped",
            ComputerState::Running => "running",
        })
    }
}

/// What Docker says about an existing computer container. Reading it changes
/// nothing. `Debug` leaves the token out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundComputer {
    pub id: String,
    pub name: String,
    pub state: ComputerState,
    /// Docker's own word for the state (`running`, `exited`, `paused`, ...).
    pub status: String,
    pub exit_code: Option<i64>,
    /// The image reference it was created from.
    pub image: String,
    /// Its `computer-use.version` label.
    pub version: Option<String>,
    /// The API token from its environment; `None` for a container this
    /// program did not make.
    pub token: Option<Token>,
    /// First host port, from its configured bindings (known while stopped).
    pub port_base: Option<u16>,
    /// Host port of the API; known only while it runs.
    pub api_port: Option<u16>,
    /// When Docker last started it: a restart keeps the id, not this.
    pub started_at: Option<String>,
    /// The named volume on `/home/computer`.
    pub volume: Option<String>,
    /// Whose network namespace it runs in.
    pub namespace: Namespace,
    /// Its `computer-use.origin` label: `snapshot NAME` or `reset` when a
    /// restore or a reset made it.
    pub origin: Option<String>,
}

/// Whose network namespace a computer runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespace {
    /// Its own, joined by its guard after each start (made before the
    /// guard owned the namespace).
    Own,
    /// Its guard's (`network_mode: container:<id>`), which exists before
    /// the computer starts; `None` when that container is gone.
    Guards(Option<OwnerFacts>),
}

/// The guard container that owns a computer's network namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerFacts {
    pub id: String,
    pub name: String,
    pub running: bool,
    pub started_at: Option<String>,
}

impl Namespace {
    /// The owner's container id from a `HostConfig.NetworkMode`.
    fn owner_id(network_mode: Option<&str>) -> Option<&str> {
        network_mode?.strip_prefix("container:")
    }
}

impl FoundComputer {
    /// It runs an older image than this binary's.
    pub fn upgrade_pending(&self) -> bool {
        is_older_than_binary(self.version.as_deref())
    }

    /// `http://127.0.0.1:<port>` while it runs.
    pub fn api_url(&self) -> Option<String> {
        self.api_port
            .map(|port| format!("http://{}:{port}", ports::LOOPBACK))
    }

    /// The guard that owns its namespace, when one does and it exists.
    pub fn owner(&self) -> Option<&OwnerFacts> {
        match &self.namespace {
            Namespace::Guards(owner) => owner.as_ref(),
            Namespace::Own => None,
        }
    }

    /// `owner` is the inspection of the container whose namespace it
    /// joined, if any: where its ports are published.
    fn from_inspect(
        name: &str,
        inspect: ContainerInspectResponse,
        owner: Option<ContainerInspectResponse>,
    ) -> FoundComputer {
        let status = inspect
            .state
            .as_ref()
            .and_then(|s| s.status)
            .unwrap_or(ContainerStateStatusEnum::EMPTY);
        let state = match status {
            // A restarting or paused container is the user's or Docker's
            // business; it counts as running so nothing here touches it.
            ContainerStateStatusEnum::RUNNING
            | ContainerStateStatusEnum::RESTARTING
            | ContainerStateStatusEnum::PAUSED
            | ContainerStateStatusEnum::STOPPING
            | ContainerStateStatusEnum::REMOVING => ComputerState::Running,
            _ => ComputerState::Stopped,
        };
        let joins = Namespace::owner_id(
            inspect
                .host_config
                .as_ref()
                .and_then(|h| h.network_mode.as_deref()),
        )
        .is_some();
        let publisher = if joins {
            owner.as_ref()
        } else {
            Some(&inspect)
        };
        let port_base = publisher
            .and_then(|p| p.host_config.as_ref())
            .and_then(|h| h.port_bindings.as_ref())
            .and_then(ports::base_from_bindings);
        // The owner's ports answer only while the computer runs too.
        let api_port = publisher
            .filter(|_| status == ContainerStateStatusEnum::RUNNING || !joins)
            .and_then(|p| p.network_settings.as_ref())
            .and_then(|n| n.ports.as_ref())
            .and_then(ports::api_host_port);
        let namespace = match (joins, owner) {
            (false, _) => Namespace::Own,
            (true, None) => Namespace::Guards(None),
            (true, Some(owner)) => Namespace::Guards(Some(OwnerFacts {
                id: owner.id.unwrap_or_default(),
                name: owner
                    .name
                    .map(|n| n.trim_start_matches('/').to_string())
                    .unwrap_or_default(),
                running: owner.state.as_ref().and_then(|s| s.status)
                    == Some(ContainerStateStatusEnum::RUNNING),
                started_at: owner.state.and_then(|s| s.started_at),
            })),
        };
        let config = inspect.config.unwrap_or_default();
        let labels = config.labels.clone().unwrap_or_default();
        let token = config.env.as_ref().and_then(|env| {
            env.iter()
                .find_map(|e| e.strip_prefix(TOKEN_VAR)?.strip_prefix('='))
                .map(Token::new)
        });
        let volume = inspect.mounts.as_ref().and_then(|mounts| {
            mounts
                .iter()
                .find(|m| m.destination.as_deref() == Some(HOME))
                .and_then(|m| m.name.clone())
        });
        FoundComputer {
            id: inspect.id.unwrap_or_default(),
            name: name.to_string(),
            state,
            status: status.to_string(),
            exit_code: inspect.state.as_ref().and_then(|s| s.exit_code),
            started_at: inspect.state.and_then(|s| s.started_at),
            image: config.image.unwrap_or_default(),
            version: labels.get(VERSION_LABEL).cloned(),
            origin: labels.get(ORIGIN_LABEL).cloned(),
            token,
            port_base,
            api_port,
            volume,
            namespace,
        }
    }
}

/// The computer named `name`, or `None` when there is none.
pub async fn find_computer(
    docker: &Docker,
    name: &str,
) -> Result<Option<FoundComputer>, DockerError> {
    let call = Call::new(
        format!("inspecting the container `{name}`"),
        "nothing was changed",
        INSPECT_DEADLINE,
    );
    let inspect = match call.run_raw(docker.inspect_container(name, None)).await? {
        Ok(inspect) => inspect,
        Err(e) if status_of(&e) == Some(404) => return Ok(None),
        Err(e) => return Err(call.failed(e)),
    };
    let owner_id = Namespace::owner_id(
        inspect
            .host_config
            .as_ref()
            .and_then(|h| h.network_mode.as_deref()),
    );
    let owner = match owner_id {
        None => None,
        Some(id) => {
            let call = Call::new(
                format!("inspecting the network guard of `{name}`"),
                "nothing was changed",
                INSPECT_DEADLINE,
            );
            match call.run_raw(docker.inspect_container(id, None)).await? {
                Ok(owner) => Some(owner),
                Err(e) if status_of(&e) == Some(404) => None,
                Err(e) => return Err(call.failed(e)),
            }
        }
    };
    Ok(Some(FoundComputer::from_inspect(name, inspect, owner)))
}
