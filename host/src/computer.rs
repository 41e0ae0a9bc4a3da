//! `start_computer`'s first half: read the settings the spec says it reads,
//! make sure the computer runs (Docker), ask its computerd who it is, and
//! hand back the one description of a running computer this process keeps
//! (a [`Connection`]), with the session defaults to pass on.

use crate::client::{ClientError, ComputerdClient};
use crate::docker::slots::choose_port_base;
use crate::docker::{ensure_computer, find_computer, resolve_endpoint, DockerError, EndpointError};
use crate::link::Connection;
use crate::settings::{process_env, Settings, SettingsError};
use crate::tenant::Tenant;
use computer_protocol::endpoints::{GetComputer, NoBody};
use computer_protocol::{check_viewer_key, InvalidViewerKey};
use std::time::Duration;

/// How long computerd gets to say who it is once Docker says it runs.
const COMPUTER_INFO_DEADLINE: Duration = Duration::from_secs(30);

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
    /// computerd did not say who it is (`GET /v1/computer`).
    #[error(transparent)]
    Computerd(Box<ClientError>),
    /// computerd named a viewer key that is not one: the key goes into
    /// links and command lines (the browser opener, the VNC viewer), and a
    /// tampered computer must not choose what they run.
    #[error(transparent)]
    ViewerKey(#[from] InvalidViewerKey),
}

impl From<ClientError> for StartError {
    fn from(e: ClientError) -> StartError {
        StartError::Computerd(Box::new(e))
    }
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

/// Reads the settings, makes sure `tenant`'s computer runs and asks its
/// computerd who it is. Errors are for the agent: they name the variable
/// or the Docker problem and the fix.
pub async fn start(tenant: &Tenant) -> Result<Connection, StartError> {
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
    let client = ComputerdClient::new(
        computer.api_url.clone(),
        computer.token.clone(),
        computer.name.clone(),
    );
    let info = client
        .send::<GetComputer>(
            &(),
            &NoBody {},
            COMPUTER_INFO_DEADLINE,
            "nothing keeps running",
        )
        .await?;
    check_viewer_key(info.viewer_key.expose())?;
    Ok(Connection {
        client,
        container: computer.name.clone(),
        image: computer.image.clone(),
        state: state.to_string(),
        boot_id: info.boot_id,
        session_settings: settings.session.to_wire(),
        shell_timeout_max: settings.session.shell_timeout_max,
        open: settings.open,
        vnc_viewer: settings.vnc_viewer.clone(),
        port_base: computer.port_base,
        viewer_key: info.viewer_key,
        dialer: computer.dialer.clone(),
        container_id: computer.id.clone(),
        started_at: computer.started_at.clone(),
        network: wanted.network.clone(),
        origin: computer.origin.clone(),
    })
}
