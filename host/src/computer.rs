//! `start_computer`'s first half: read the settings the spec says it reads,
//! make sure the computer runs (Docker), and hand back a computerd client
//! with the session defaults to pass on.

use crate::client::ComputerdClient;
use crate::docker::slots::choose_port_base;
use crate::docker::{ensure_computer, find_computer, resolve_endpoint, DockerError, EndpointError};
use crate::settings::{process_env, OpenMode, Settings, SettingsError};
use crate::tenant::Tenant;
use computer_protocol::SessionSettings;
use std::time::Duration;

/// A running, healthy computer.
#[derive(Debug, Clone)]
pub struct Started {
    pub client: ComputerdClient,
    pub container: String,
    pub image: String,
    /// `created`, `started`, `recreated` or `running`.
    pub state: String,
    pub port_base: u16,
    pub session_settings: SessionSettings,
    /// Longest shell timeout, for the host's own call deadlines.
    pub shell_timeout_max: Duration,
    pub open: OpenMode,
    pub vnc_viewer: Option<std::path::PathBuf>,
    /// How its ports are reached, with the engine it runs on, for checking
    /// later where its API is.
    pub dialer: crate::docker::Dialer,
    pub container_id: String,
    pub started_at: Option<String>,
    /// The network policy its guard holds, put in force again if it restarts.
    pub network: computer_protocol::network::NetworkPolicy,
    /// What a restore or a reset made it from (its `computer-use.origin`).
    pub origin: Option<String>,
}

/// Why the computer could not be started; each names the variable or the
/// Docker problem and the fix, for the agent.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// Boxed: a `DockerError` is large, and every tool call's `Result`
    /// has room for a `StartError` (clippy's `result_large_err`; paths are
    /// larger on Windows, which is where it first failed).
    #[error(transparent)]
    Docker(Box<DockerError>),
    /// The template a new computer was to start from (`COMPUTER_USE_TEMPLATE`).
    #[error(transparent)]
    Template(Box<crate::docker::snapshot::SnapshotError>),
}

impl From<DockerError> for StartError {
    fn from(e: DockerError) -> StartError {
        StartError::Docker(Box::new(e))
    }
}

/// Tenants' computers not yet created get their port slot one at a time,
/// so two first starts cannot choose the same one.
static CHOOSING_PORTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `tenant`'s computer settings and its engine, as `start` reads them: for
/// the calls that change the computer without starting it (snapshots).
pub fn wanted(
    tenant: &Tenant,
) -> Result<
    (
        crate::settings::ComputerSettings,
        crate::docker::DockerEndpoint,
    ),
    StartError,
> {
    let (settings, endpoint) = read(tenant)?;
    Ok((tenant.computer(&settings.computer), endpoint))
}

/// The settings `start_computer` reads for `tenant`, and the engine.
fn read(tenant: &Tenant) -> Result<(Settings, crate::docker::DockerEndpoint), StartError> {
    let env = process_env();
    let mut settings = Settings::for_start_computer(&env)?;
    if tenant.over_http {
        settings = settings.for_remote_agent(&env);
    }
    Ok((settings, resolve_endpoint(&env)?))
}

/// Reads the settings and makes sure `tenant`'s computer runs. Errors are
/// for the agent: they name the variable or the Docker problem and the fix.
pub async fn start(tenant: &Tenant) -> Result<Started, StartError> {
    let (settings, endpoint) = read(tenant)?;
    let docker = endpoint.connect().await?;
    let mut wanted = tenant.computer(&settings.computer);
    // Only a tenant's port slot and a template need to know before
    // `ensure_computer` looks itself.
    let missing = (tenant.name.is_some() || wanted.template.is_some())
        && find_computer(&docker, &wanted.name).await?.is_none();
    if let Some(template) = wanted.template.clone().filter(|_| missing) {
        let forked = crate::docker::snapshot::template::prepare(
            &docker,
            &wanted,
            endpoint.config_dir.as_deref(),
            &template,
        )
        .await
        .map_err(|e| StartError::Template(Box::new(e)))?;
        if let Some(image) = forked {
            wanted.image = image;
        }
    }
    let computer = if tenant.name.is_some() && missing {
        let _one_at_a_time = CHOOSING_PORTS.lock().await;
        wanted.port_base = choose_port_base(&docker, settings.computer.port_base).await?;
        ensure_computer(&wanted, &endpoint).await
    } else {
        ensure_computer(&wanted, &endpoint).await
    }?;
    let state = match computer.startup {
        crate::docker::Startup::Created => "created",
        crate::docker::Startup::Started => "started",
        crate::docker::Startup::Recreated { .. } => "recreated",
        crate::docker::Startup::AlreadyRunning => "running",
    };
    Ok(Started {
        client: ComputerdClient::new(
            computer.api_url.clone(),
            computer.token.clone(),
            computer.name.clone(),
        ),
        container: computer.name.clone(),
        image: computer.image.clone(),
        state: state.to_string(),
        port_base: computer.port_base,
        session_settings: settings.session.to_wire(),
        shell_timeout_max: settings.session.shell_timeout_max,
        open: settings.open,
        vnc_viewer: settings.vnc_viewer.clone(),
        dialer: computer.dialer.clone(),
        container_id: computer.id.clone(),
        started_at: computer.started_at.clone(),
        network: wanted.network.clone(),
        origin: computer.origin.clone(),
    })
}
