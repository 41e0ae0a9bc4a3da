//! The computer's container: finding it, and making sure it runs.
//!
//! The rules (spec "Design"): a missing computer is created; a stopped one is
//! started; a running one is never touched. The only removal is a stopped
//! computer on an older image than this binary's, which is created again on
//! the newer image with the same home volume and the same ports, and a
//! stopped computer that owns its network namespace (made before its guard
//! did), which is created again inside a guard's. A computer never moves to
//! an older image.
//!
//! A computer comes with its network guard (`super::guard::owner`): the
//! guard is created first and owns the network namespace, the computer
//! joins it, and each start of the computer waits until the guard's rules
//! hold. An upgrade removes and creates both.
//!
//! Several MCP servers (one per agent) may run this at the same moment, so a
//! step that loses a race to another one (a name already taken, a container
//! already gone) looks again instead of failing.

use super::call::{message_of, status_of, Call};
use super::creation::Creation;
use super::dialer::Dialer;
use super::endpoint::DockerEndpoint;
use super::error::DockerError;
use super::found::{find_computer, ComputerState, FoundComputer, Namespace};
use super::guard;
use super::image::{binary_version, compare_versions, ensure_image, ImageFacts};
use super::limits;
use super::ports;
use super::probe;
use crate::settings::ComputerSettings;
use bollard::models::{ContainerStateStatusEnum, VolumeCreateRequest};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use computer_protocol::{Token, ViewerKey};
use rand::distr::{Alphanumeric, SampleString};
use std::cmp::Ordering;
use std::path::Path;
use std::time::Duration;

const TOKEN_CHARS: usize = 40;

const CREATE_DEADLINE: Duration = Duration::from_secs(60);
/// Starting publishes 17 ports; on a busy engine that takes seconds.
const START_DEADLINE: Duration = Duration::from_secs(60);
const REMOVE_DEADLINE: Duration = Duration::from_secs(60);
const VOLUME_DEADLINE: Duration = Duration::from_secs(30);
/// computerd answers `/health` within a second of starting; the margin is for
/// a first start on a slow disk.
const HEALTH_DEADLINE: Duration = Duration::from_secs(30);
/// How long to keep looking again after losing races to another server. A
/// name stays reserved (but not yet visible) while another create runs.
const SETTLE_DEADLINE: Duration = Duration::from_secs(15);
const SETTLE_PAUSE: Duration = Duration::from_millis(200);

/// What [`ensure_computer`] had to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Startup {
    /// There was no computer; it was created and started.
    Created,
    /// It was stopped and has been started as it was.
    Started,
    /// It was stopped on an older image; it was created again on the current
    /// image with the same home volume and ports.
    Recreated { previous_version: Option<String> },
    /// It was running already and was left alone.
    AlreadyRunning,
}

/// A running computer whose computerd answered its health probe. `Debug`
/// leaves the token out, so no log line or panic message can carry it.
#[derive(Clone, Debug)]
pub struct Computer {
    /// Container name.
    pub name: String,
    /// Container id; changes only when the computer is created again.
    pub id: String,
    /// When Docker last started it: with the id, which run of it this is
    /// (its API port stays the same across a restart, as its guard
    /// publishes it).
    pub started_at: Option<String>,
    /// The image reference the container was created from.
    pub image: String,
    /// The container's `computer-use.version` label.
    pub image_version: Option<String>,
    /// Always [`ComputerState::Running`] once returned.
    pub state: ComputerState,
    pub startup: Startup,
    /// It runs an older image than this binary's; it is used as it is and
    /// upgraded the next time it is found stopped.
    pub upgrade_pending: bool,
    /// computerd's API, `http://127.0.0.1:<port>`, from the dialer.
    pub api_url: String,
    /// Bearer token of the API.
    pub token: Token,
    /// The viewer's port on this machine's 127.0.0.1; VNC of screen N is
    /// on `port_base + N`.
    pub port_base: u16,
    /// How its ports are reached, for finding its API again later.
    pub dialer: Dialer,
    /// The viewer key (also the VNC password), when computerd gave it.
    pub viewer_key: Option<ViewerKey>,
    /// Its `computer-use.origin` label (made by a restore or a reset).
    pub origin: Option<String>,
}

impl Computer {
    /// `http://127.0.0.1:<base>/#key=<key>`, once the key is known.
    pub fn viewer_url(&self) -> Option<String> {
        self.viewer_key
            .as_ref()
            .map(|key| computer_protocol::viewer_link(self.port_base, key, None))
    }
}

/// Makes sure the computer runs and its computerd answers, creating,
/// starting or upgrading it by the rules above, and returns how to reach it.
/// This is the first Docker call the host makes.
pub async fn ensure_computer(
    settings: &ComputerSettings,
    endpoint: &DockerEndpoint,
) -> Result<Computer, DockerError> {
    let docker = endpoint.connect().await?;
    let dialer = Dialer::new(endpoint, &docker, settings.tunnel);
    let config_dir = endpoint.config_dir.as_deref();
    if let Some(key) = &settings.home_key {
        check_home(&docker, settings, key).await?;
    }
    let settle_by = tokio::time::Instant::now() + SETTLE_DEADLINE;
    loop {
        let found = find_computer(&docker, &settings.name).await?;
        let outcome = match found {
            None => {
                let image = ensure_image(&docker, &settings.image, config_dir).await?;
                let plan = Creation {
                    name: &settings.name,
                    image: &settings.image,
                    facts: &image,
                    port_base: settings.port_base,
                    volume: settings.volume(),
                    replacing: false,
                    limits: &settings.limits,
                    network: &settings.network,
                    home_key: settings.home_key.as_deref(),
                    origin: None,
                };
                create_and_start(&docker, &plan)
                    .await?
                    .map(|()| Startup::Created)
            }
            Some(found) => {
                if found.token.is_none() {
                    return Err(DockerError::NotOurs { name: found.name });
                }
                match found.state {
                    ComputerState::Running => Some(Startup::AlreadyRunning),
                    _ => start_or_upgrade(&docker, settings, config_dir, &found).await?,
                }
            }
        };
        // `None`: another MCP server changed the computer under us; look again.
        if let Some(startup) = outcome {
            return ready(&docker, &dialer, settings, startup).await;
        }
        if tokio::time::Instant::now() >= settle_by {
            return Err(DockerError::Busy {
                name: settings.name.clone(),
                status: "being changed by another program".into(),
                fix: "wait until it settles and call start_computer again".into(),
            });
        }
        tokio::time::sleep(SETTLE_PAUSE).await;
    }
}

/// The label of a tenant's home volume: the key of the token it was made
/// for (see `serve::tenants::home_key`).
pub const HOME_KEY_LABEL: &str = "computer-use.home-key";

/// A tenant's home volume made for another key is not this tenant's: a
/// name given to someone new does not hand them the old tenant's files and
/// logins. A home without the label (made before homes had one) passes.
async fn check_home(
    docker: &Docker,
    settings: &ComputerSettings,
    key: &str,
) -> Result<(), DockerError> {
    let volume = settings.volume();
    let call = Call::new(
        format!("looking at the home volume `{volume}`"),
        "nothing was changed",
        VOLUME_DEADLINE,
    );
    let found = match call.run_raw(docker.inspect_volume(&volume)).await? {
        Ok(found) => found,
        Err(e) if status_of(&e) == Some(404) => return Ok(()),
        Err(e) => return Err(call.failed(e)),
    };
    match found.labels.get(HOME_KEY_LABEL) {
        Some(made_for) if made_for != key => Err(DockerError::HomeOfAnother {
            name: settings.name.clone(),
            volume,
            made_for: made_for.clone(),
        }),
        _ => Ok(()),
    }
}

/// A stopped computer: recreated when it is on an older image and the
/// current image is newer than it, or when it owns its network namespace
/// (made before guards did) and the image is the same version, so that it
/// moves into a guard's; otherwise started as it is.
async fn start_or_upgrade(
    docker: &Docker,
    settings: &ComputerSettings,
    config_dir: Option<&Path>,
    found: &FoundComputer,
) -> Result<Option<Startup>, DockerError> {
    let name = &found.name;
    if found.namespace == Namespace::Guards(None) {
        return Err(DockerError::GuardGone {
            name: name.clone(),
            guard: guard::guard_name(name),
        });
    }
    let port_base = found.port_base.ok_or_else(|| DockerError::Damaged {
        name: name.clone(),
        what: "viewer port (container port 6080) bound on the host",
    })?;
    let moves_in = found.namespace == Namespace::Own;
    if !found.upgrade_pending() && !moves_in {
        return start_existing(docker, found, port_base, &settings.network).await;
    }
    let image = ensure_image(docker, &settings.image, config_dir).await?;
    let image_version = image.version.as_deref().unwrap_or(binary_version());
    let order = found
        .version
        .as_deref()
        .and_then(|old| compare_versions(image_version, old));
    let newer = order == Some(Ordering::Greater);
    if moves_in && order == Some(Ordering::Equal) {
        tracing::info!(
            name,
            "the computer owns its network namespace; creating it again inside its guard's, with its home"
        );
    } else if !newer && moves_in {
        // Never onto an older image; its guard joins it after each start.
        return start_existing(docker, found, port_base, &settings.network).await;
    } else if !newer {
        // Recreating on an image that is no newer would gain nothing.
        tracing::warn!(
            name,
            image = settings.image,
            image_version,
            "the computer is older than this binary, but its image is no newer; starting it as it is"
        );
        return start_existing(docker, found, port_base, &settings.network).await;
    }
    // Nothing is removed unless its ports can be bound again; a running
    // guard holds them for the computer.
    let guard_holds_ports = found.owner().is_some_and(|owner| owner.running);
    if let Some(port) = ports::first_taken(port_base).filter(|_| !guard_holds_ports) {
        if changed_since(docker, name, Some(found)).await? {
            return Ok(None);
        }
        return Err(DockerError::ExistingPortTaken {
            port,
            base: port_base,
            name: name.clone(),
        });
    }
    tracing::info!(
        name,
        from = found.version.as_deref().unwrap_or("?"),
        to = image_version,
        "creating the stopped computer again on the newer image; its home volume stays"
    );
    let removal = Call::new(
        format!(
            "removing the stopped computer `{name}` to create it again on `{}`",
            settings.image
        ),
        format!(
            "the computer `{name}` is stopped and may still exist; its home volume is untouched"
        ),
        REMOVE_DEADLINE,
    );
    // By id: if another server already replaced it, the new one stays.
    let options = RemoveContainerOptionsBuilder::default()
        .force(false)
        .v(false)
        .build();
    match removal
        .run_raw(docker.remove_container(&found.id, Some(options)))
        .await?
    {
        Ok(()) => {}
        Err(e) if status_of(&e) == Some(404) => {}
        // Someone started it meanwhile; it is not ours to remove any more.
        Err(e) if status_of(&e) == Some(409) => return Ok(None),
        Err(e) => return Err(removal.failed(e)),
    }
    // Its guard runs the old image's computerd; the new computer gets a new
    // one. A computer that owned its namespace may have left the guard that
    // joined it.
    let old_guard = guard::guard_name(name);
    let old_guard_id = found
        .owner()
        .map_or(old_guard.as_str(), |owner| owner.id.as_str());
    guard::remove(docker, &old_guard, old_guard_id).await?;
    let plan = Creation {
        name,
        image: &settings.image,
        facts: &image,
        port_base,
        volume: found.volume.clone().unwrap_or_else(|| settings.volume()),
        replacing: true,
        limits: &settings.limits,
        network: &settings.network,
        home_key: settings.home_key.as_deref(),
        origin: None,
    };
    Ok(create_and_start(docker, &plan)
        .await?
        .map(|()| Startup::Recreated {
            previous_version: found.version.clone(),
        }))
}

/// Starts a stopped computer: first its guard, which must hold its rules
/// (and the ports) before the computer runs anything.
async fn start_existing(
    docker: &Docker,
    found: &FoundComputer,
    port_base: u16,
    policy: &computer_protocol::network::NetworkPolicy,
) -> Result<Option<Startup>, DockerError> {
    let name = &found.name;
    let taken = |port| DockerError::ExistingPortTaken {
        port,
        base: port_base,
        name: name.clone(),
    };
    let guard_holds_ports = found.owner().is_some_and(|owner| owner.running);
    if let Some(port) = ports::first_taken(port_base).filter(|_| !guard_holds_ports) {
        if changed_since(docker, name, Some(found)).await? {
            return Ok(None);
        }
        return Err(taken(port));
    }
    if let Namespace::Guards(owner) = &found.namespace {
        guard::owner::ensure_owner(docker, found, owner.as_ref(), policy).await?;
    }
    let call = Call::new(
        format!("starting the computer `{name}`"),
        format!("the computer `{name}` exists and may be stopped; see `docker logs {name}`"),
        START_DEADLINE,
    );
    // A start of a running container is a success (304), which covers
    // another server starting it first.
    match call
        .run_raw(docker.start_container(&found.id, None))
        .await?
    {
        Ok(()) => Ok(Some(Startup::Started)),
        Err(e) if status_of(&e) == Some(404) => Ok(None),
        Err(e) => match message_of(&e).and_then(ports::taken_port_in) {
            Some(_) if changed_since(docker, name, Some(found)).await? => Ok(None),
            Some(port) => Err(taken(port)),
            None => Err(call.failed(e)),
        },
    }
}

/// Whether the computer changed since `seen` was read (`None`: there was
/// none). Another MCP server starting the same computer binds its ports, so
/// a taken port is then no error: the caller looks again.
async fn changed_since(
    docker: &Docker,
    name: &str,
    seen: Option<&FoundComputer>,
) -> Result<bool, DockerError> {
    let now = find_computer(docker, name).await?;
    Ok(match (seen, now) {
        (None, None) => false,
        (Some(before), Some(now)) => before.id != now.id || before.state != now.state,
        _ => true,
    })
}

/// Creates, without starting it, a computer container named `name` that
/// is to take the place of `found` (stopped, or about to be): same home
/// volume, same guard, same token and ports, from `image` (a snapshot's or
/// the current one) at `version`. For a restore or a reset, which start it
/// once the home is in place.
pub(crate) async fn create_replacement(
    docker: &Docker,
    settings: &ComputerSettings,
    found: &FoundComputer,
    (image, version): (&str, Option<String>),
    name: &str,
    origin: &str,
) -> Result<String, DockerError> {
    let damaged = |what| DockerError::Damaged {
        name: found.name.clone(),
        what,
    };
    let port_base = found
        .port_base
        .ok_or_else(|| damaged("viewer port (container port 6080) bound on the host"))?;
    let guard_id = found
        .owner()
        .map(|owner| owner.id.clone())
        .ok_or_else(|| damaged("network guard owning its network"))?;
    let token = found.token.clone().ok_or_else(|| DockerError::NotOurs {
        name: found.name.clone(),
    })?;
    let facts = ImageFacts {
        id: image.to_string(),
        version,
    };
    let plan = Creation {
        name,
        image,
        facts: &facts,
        port_base,
        volume: found.volume.clone().unwrap_or_else(|| settings.volume()),
        replacing: true,
        limits: &settings.limits,
        network: &settings.network,
        home_key: settings.home_key.as_deref(),
        origin: Some(origin),
    };
    let left_behind = format!("the computer `{}` is as it was", found.name);
    let resources = limits::for_engine(docker, plan.limits, &left_behind).await?;
    let creation = Call::new(
        format!("creating the container `{name}` from `{image}`"),
        left_behind,
        CREATE_DEADLINE,
    );
    let options = CreateContainerOptionsBuilder::default().name(name).build();
    let body = plan.body(&token, &resources, &guard_id);
    Ok(creation
        .run(docker.create_container(Some(options), body))
        .await?
        .id)
}

/// Creates the volume (kept if it exists) and the container, and starts it.
/// `Ok(None)` when another server created a container of that name first.
async fn create_and_start(docker: &Docker, plan: &Creation<'_>) -> Result<Option<()>, DockerError> {
    let name = plan.name;
    let base = plan.port_base;
    let left_behind = if plan.replacing {
        format!(
            "the old computer `{name}` was removed; its home volume `{}` is untouched",
            plan.volume
        )
    } else {
        "nothing was created".to_string()
    };
    if !guard::clear_leftover(docker, name).await? {
        return Ok(None);
    }
    if let Some(port) = ports::first_taken(base) {
        // Any container of this name now is another server's work.
        if changed_since(docker, name, None).await? {
            return Ok(None);
        }
        return Err(if plan.replacing {
            DockerError::ExistingPortTaken {
                port,
                base,
                name: name.to_string(),
            }
        } else {
            DockerError::PortTaken { port, base }
        });
    }
    let resources = limits::for_engine(docker, plan.limits, &left_behind).await?;
    Call::new(
        format!("creating the home volume `{}`", plan.volume),
        left_behind.clone(),
        VOLUME_DEADLINE,
    )
    .run(
        docker.create_volume(VolumeCreateRequest {
            name: Some(plan.volume.clone()),
            // Docker keeps the labels of a volume that exists already.
            labels: plan
                .home_key
                .map(|key| [(HOME_KEY_LABEL.to_string(), key.to_string())].into()),
            ..Default::default()
        }),
    )
    .await?;
    let version = plan.version();
    let owner = guard::OwnerPlan {
        computer: name,
        image: plan.image,
        version: &version,
        port_base: base,
        policy: plan.network,
    };
    let Some(guard_id) = guard::create_owner(docker, &owner).await? else {
        return Ok(None);
    };
    let token = Token::new(Alphanumeric.sample_string(&mut rand::rng(), TOKEN_CHARS));
    let creation = Call::new(
        format!("creating the container `{name}` from `{}`", plan.image),
        left_behind,
        CREATE_DEADLINE,
    );
    let options = CreateContainerOptionsBuilder::default().name(name).build();
    let body = plan.body(&token, &resources, &guard_id);
    let id = match creation
        .run_raw(docker.create_container(Some(options), body))
        .await?
    {
        Ok(created) => created.id,
        Err(e) if status_of(&e) == Some(409) => return Ok(None),
        Err(e) => return Err(creation.failed(e)),
    };
    // Both exist now, so another server finds the computer and starts the
    // same pair; the guard goes first, as at every start.
    let Some(found) = find_computer(docker, name).await? else {
        return Ok(None);
    };
    match start_existing(docker, &found, base, plan.network).await {
        Err(DockerError::ExistingPortTaken { port, .. }) => {
            // Both were made a moment ago and hold nothing; they go, so
            // that a new COMPUTER_USE_PORT_BASE takes effect.
            for (what, id) in [
                ("computer", id.as_str()),
                ("network guard", guard_id.as_str()),
            ] {
                let options = RemoveContainerOptionsBuilder::default().force(true).build();
                let _ = Call::new(
                    format!("removing the {what} that could not start"),
                    "",
                    REMOVE_DEADLINE,
                )
                .run(docker.remove_container(id, Some(options)))
                .await;
            }
            Err(DockerError::PortTaken { port, base })
        }
        other => other.map(|started| started.map(|_| ())),
    }
}

/// Waits for computerd and gathers what the host needs to call it.
async fn ready(
    docker: &Docker,
    dialer: &Dialer,
    settings: &ComputerSettings,
    startup: Startup,
) -> Result<Computer, DockerError> {
    let name = settings.name.as_str();
    let vanished = || DockerError::Vanished {
        name: name.to_string(),
    };
    let mut found = find_computer(docker, name).await?.ok_or_else(vanished)?;
    if let Some(fix) = busy_fix(&found.status, name) {
        return Err(DockerError::Busy {
            name: name.to_string(),
            status: found.status.clone(),
            fix,
        });
    }
    // It can die before its ports are even listed.
    if found.state != ComputerState::Running {
        return Err(DockerError::Exited {
            name: name.to_string(),
            exit_code: found.exit_code.unwrap_or(-1),
        });
    }
    // The guard holds the computer's network before the agent's first call.
    match guard::ensure(docker, &found, &settings.network).await {
        Ok(false) => {}
        Ok(true) => {
            tracing::warn!(
                name,
                "the computer's network guard was stopped or restarted under it, so it had loopback only; restarting the computer to join its guard again"
            );
            restart(docker, &found).await?;
            found = find_computer(docker, name).await?.ok_or_else(vanished)?;
        }
        Err(e) => {
            // A computer that died meanwhile takes its namespace with it;
            // that, not the guard, is what to report.
            if let Some(now) = find_computer(docker, name).await? {
                if now.status != "running" {
                    return Err(DockerError::Exited {
                        name: name.to_string(),
                        exit_code: now.exit_code.unwrap_or(-1),
                    });
                }
            }
            return Err(e);
        }
    }
    let reach = dialer
        .reach(&found)
        .await?
        .ok_or_else(|| DockerError::Damaged {
            name: name.to_string(),
            what: "API port (container port 7070) bound on the host",
        })?;
    let api_url = reach.api_url;
    let token = found.token.clone().ok_or_else(|| DockerError::NotOurs {
        name: name.to_string(),
    })?;
    probe::wait_healthy(docker, name, &api_url, HEALTH_DEADLINE).await?;
    let viewer_key = match probe::viewer_key(name, &api_url, &token).await {
        Ok(key) => Some(key),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    };
    if let (true, Some(key)) = (reach.viewer_taken, &viewer_key) {
        if let Err(e) = probe::prove_viewer(name, reach.port_base, key).await {
            // The next start binds the ports again, once the program left.
            dialer.close_tunnel(name);
            return Err(e);
        }
    }
    let upgrade_pending = found.upgrade_pending();
    Ok(Computer {
        name: found.name,
        id: found.id,
        started_at: found.started_at,
        image: found.image,
        image_version: found.version,
        state: ComputerState::Running,
        startup,
        upgrade_pending,
        api_url,
        token,
        port_base: reach.port_base,
        dialer: dialer.clone(),
        viewer_key,
        origin: found.origin,
    })
}

/// Restarts a running computer, so that it joins its guard's namespace
/// again.
pub(crate) async fn restart(docker: &Docker, found: &FoundComputer) -> Result<(), DockerError> {
    let name = &found.name;
    Call::new(
        format!("restarting the computer `{name}` to join its network guard again"),
        format!("see `docker logs {name}`"),
        START_DEADLINE,
    )
    .run(
        docker.restart_container(
            &found.id,
            Some(
                bollard::query_parameters::RestartContainerOptionsBuilder::default()
                    .t(5)
                    .build(),
            ),
        ),
    )
    .await
}

/// What to do about a computer in a state this program leaves to the user.
pub(crate) fn busy_fix(status: &str, name: &str) -> Option<String> {
    use ContainerStateStatusEnum as S;
    let is = |state: S| status == state.to_string();
    if is(S::PAUSED) {
        Some(format!(
            "run `docker unpause {name}` and call start_computer again"
        ))
    } else if is(S::RESTARTING) {
        Some(format!(
            "computerd keeps exiting: see why with `docker logs {name}`, then run `docker stop {name}` and call start_computer again"
        ))
    } else if is(S::STOPPING) || is(S::REMOVING) {
        Some("wait a moment and call start_computer again".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_leaves_the_token_and_the_key_out() {
        let computer = Computer {
            name: "computer-use".into(),
            id: "abc".into(),
            started_at: None,
            image: "computer-use-mcp:dev".into(),
            image_version: None,
            state: ComputerState::Running,
            startup: Startup::Created,
            upgrade_pending: false,
            api_url: "http://127.0.0.1:1".into(),
            token: Token::new("secret-token-0123456789"),
            port_base: 20900,
            dialer: Dialer::new(
                &crate::docker::resolve_endpoint(&Default::default()).unwrap(),
                &Docker::connect_with_http("http://127.0.0.1:1", 1, bollard::API_DEFAULT_VERSION)
                    .unwrap(),
                crate::settings::TunnelMode::Auto,
            ),
            viewer_key: Some(ViewerKey::new("ab3d5fghjkmnpqrstuvwxyz23456789a")),
            origin: None,
        };
        let found = FoundComputer {
            id: "abc".into(),
            name: "computer-use".into(),
            state: ComputerState::Running,
            status: "running".into(),
            exit_code: None,
            image: "computer-use-mcp:dev".into(),
            version: None,
            token: Some(Token::new("secret-token-0123456789")),
            port_base: Some(20900),
            started_at: None,
            api_port: Some(1),
            volume: None,
            namespace: Namespace::Own,
            origin: None,
        };
        for text in [format!("{computer:?}"), format!("{found:?}")] {
            assert!(!text.contains("secret-token"), "{text}");
            assert!(!text.contains("ab3d5fgh"), "{text}");
            assert!(text.contains("Token(hidden)"), "{text}");
        }
    }
}
