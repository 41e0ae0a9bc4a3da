//! `computer-use-mcp info`: what this binary would use and what it finds,
//! without changing anything. Each part is gathered on its own, so a broken
//! setting or an unreachable engine still leaves the rest to print.

use crate::docker::image::{inspect_image, pulls_missing_image};
use crate::docker::{
    binary_version, find_computer, resolve_endpoint, viewer_key, ComputerState, Dialer,
    DockerEndpoint, DockerError, EndpointError, FoundComputer, ImageFacts,
};
use crate::serve::tenants::{read_tenants, TenantsError, TENANTS_VAR};
use crate::settings::{process_env, ComputerSettings, Env, SettingsError};
use crate::tenant::computer_name;
use std::fmt;

/// Everything `info` prints.
#[derive(Debug)]
pub struct Info {
    pub version: &'static str,
    /// Name, port base and image from `COMPUTER_USE_*`.
    pub settings: Result<ComputerSettings, SettingsError>,
    pub endpoint: Result<DockerEndpoint, EndpointError>,
    /// The image on the engine; `None` when the engine was not asked.
    pub image: Option<Result<Option<ImageFacts>, DockerError>>,
    pub computer: ComputerReport,
    /// The computer's snapshots; `None` when the engine was not asked.
    pub snapshots: Option<Result<Vec<crate::docker::snapshot::Snapshot>, DockerError>>,
    /// With `COMPUTER_USE_HTTP_TENANTS`: each tenant's computer, or why the
    /// file cannot be used.
    pub tenants: Option<Result<Vec<TenantReport>, TenantsError>>,
}

/// One tenant's computer.
#[derive(Debug)]
pub struct TenantReport {
    pub tenant: String,
    pub container: String,
    pub computer: ComputerReport,
    /// The tenant's own network policy from its line (its summary, or why
    /// it is wrong); `None` when it takes the server's.
    pub network: Option<String>,
}

/// What was found of the computer.
#[derive(Debug)]
pub enum ComputerReport {
    /// A setting or the endpoint is broken; Docker was not asked.
    NotChecked,
    /// Docker could not be asked; the reason.
    Unknown(DockerError),
    Missing,
    Present {
        found: Box<FoundComputer>,
        /// The viewer link while it runs, or why it could not be had.
        viewer: Option<Result<String, DockerError>>,
    },
}

impl ComputerReport {
    pub fn state(&self) -> Option<ComputerState> {
        match self {
            ComputerReport::NotChecked | ComputerReport::Unknown(_) => None,
            ComputerReport::Missing => Some(ComputerState::Missing),
            ComputerReport::Present { found, .. } => Some(found.state),
        }
    }
}

/// Gathers from this process's environment.
pub async fn gather() -> Info {
    gather_from(&process_env()).await
}

/// Gathers from `env`, reading only; the computer is never created, started
/// or changed.
pub async fn gather_from(env: &Env) -> Info {
    let settings = ComputerSettings::from_env(env);
    let endpoint = resolve_endpoint(env);
    let (image, computer, snapshots) = match (&settings, &endpoint) {
        (Ok(settings), Ok(endpoint)) => look(settings, endpoint).await,
        _ => (None, ComputerReport::NotChecked, None),
    };
    let tenants = match env.get(TENANTS_VAR).filter(|v| !v.is_empty()) {
        None => None,
        Some(path) => Some(match read_tenants(std::path::Path::new(path)) {
            Err(e) => Err(e),
            Ok(entries) => {
                let mut reports = Vec::new();
                for entry in entries {
                    let network = match entry.network_policy(path, env) {
                        Ok(policy) => policy.map(|p| p.summary()),
                        Err(e) => Some(e.to_string()),
                    };
                    let base = settings
                        .as_ref()
                        .map(|s| s.name.as_str())
                        .unwrap_or("computer-use");
                    let container = computer_name(base, &entry.name);
                    let computer = match &endpoint {
                        Ok(endpoint) => find(&container, endpoint).await,
                        Err(_) => ComputerReport::NotChecked,
                    };
                    reports.push(TenantReport {
                        tenant: entry.name,
                        container,
                        computer,
                        network,
                    });
                }
                Ok(reports)
            }
        }),
    };
    Info {
        version: binary_version(),
        settings,
        endpoint,
        image,
        computer,
        snapshots,
        tenants,
    }
}

/// A tenant's computer, state and ports only: its viewer key is the
/// tenant's to share.
async fn find(container: &str, endpoint: &DockerEndpoint) -> ComputerReport {
    let docker = match endpoint.connect().await {
        Ok(docker) => docker,
        Err(e) => return ComputerReport::Unknown(e),
    };
    match find_computer(&docker, container).await {
        Err(e) => ComputerReport::Unknown(e),
        Ok(None) => ComputerReport::Missing,
        Ok(Some(found)) => ComputerReport::Present {
            found: Box::new(found),
            viewer: None,
        },
    }
}

async fn look(
    settings: &ComputerSettings,
    endpoint: &DockerEndpoint,
) -> (
    Option<Result<Option<ImageFacts>, DockerError>>,
    ComputerReport,
    Option<Result<Vec<crate::docker::snapshot::Snapshot>, DockerError>>,
) {
    let docker = match endpoint.connect().await {
        Ok(docker) => docker,
        Err(e) => return (None, ComputerReport::Unknown(e), None),
    };
    let snapshots = crate::docker::snapshot::list(&docker, &settings.name).await;
    let image = inspect_image(&docker, &settings.image).await;
    let computer = match find_computer(&docker, &settings.name).await {
        Err(e) => ComputerReport::Unknown(e),
        Ok(None) => ComputerReport::Missing,
        Ok(Some(found)) => {
            // On a remote engine the published API is on that machine's
            // loopback: the dialer reaches it through a tunnel.
            let dialer = Dialer::new(endpoint, &docker, settings.tunnel);
            let reach = if found.state == ComputerState::Running {
                dialer.reach(&found).await.ok().flatten()
            } else {
                None
            };
            let viewer = match (reach, &found.token) {
                (Some(reach), Some(token)) => Some(
                    viewer_key(&found.name, &reach.api_url, token)
                        .await
                        .map(|key| computer_protocol::viewer_link(reach.port_base, &key, None)),
                ),
                _ => None,
            };
            ComputerReport::Present {
                found: Box::new(found),
                viewer,
            }
        }
    };
    (Some(image), computer, Some(snapshots))
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let build = if pulls_missing_image() {
            "release build"
        } else {
            "dev build"
        };
        writeln!(f, "computer-use-mcp {} ({build})", self.version)?;
        match &self.settings {
            Ok(s) => {
                write!(f, "image:    {}", s.image)?;
                match &self.image {
                    Some(Ok(Some(facts))) => match &facts.version {
                        Some(v) => write!(f, " (present, version {v})")?,
                        None => write!(f, " (present, no version label)")?,
                    },
                    Some(Ok(None)) if pulls_missing_image() => {
                        write!(f, " (not present; start_computer pulls it)")?
                    }
                    Some(Ok(None)) => write!(f, " (not present; build it with `just image`)")?,
                    Some(Err(e)) => write!(f, " (cannot tell: {e})")?,
                    None => {}
                }
                writeln!(f)?;
            }
            Err(e) => writeln!(f, "settings: {e}")?,
        }
        if let Ok(s) = &self.settings {
            writeln!(
                f,
                "network:  {}; never another computer, this machine's other ports, private or link-local ranges",
                s.network.summary()
            )?;
        }
        match &self.endpoint {
            Ok(e) => writeln!(f, "docker:   {e}, over {}", e.transport)?,
            Err(e) => writeln!(f, "docker:   {e}")?,
        }
        let name = self
            .settings
            .as_ref()
            .map(|s| s.name.as_str())
            .unwrap_or("?");
        match &self.computer {
            ComputerReport::NotChecked => {
                writeln!(f, "computer: not checked; fix the problem above first")?
            }
            ComputerReport::Unknown(e) => writeln!(f, "computer: unknown: {e}")?,
            ComputerReport::Missing => writeln!(
                f,
                "computer: `{name}` does not exist; start_computer creates it"
            )?,
            ComputerReport::Present { found, viewer } => {
                write_found(f, found)?;
                match viewer {
                    Some(Ok(url)) => writeln!(f, "viewer:   {url}")?,
                    Some(Err(e)) => writeln!(f, "viewer:   unknown: {e}")?,
                    None => {}
                }
            }
        }
        match &self.snapshots {
            None => {}
            Some(Err(e)) => writeln!(f, "snapshots: unknown: {e}")?,
            Some(Ok(all)) if all.is_empty() => writeln!(
                f,
                "snapshots: none; save one with save_snapshot or `computer-use-mcp snapshot save NAME`"
            )?,
            Some(Ok(all)) => writeln!(
                f,
                "snapshots: {}",
                crate::docker::snapshot::store::summary(all)
            )?,
        }
        if let Some(template) = self
            .settings
            .as_ref()
            .ok()
            .and_then(|s| s.template.as_ref())
        {
            writeln!(
                f,
                "template: {template} (COMPUTER_USE_TEMPLATE): a computer that does not exist yet starts from it"
            )?;
        }
        match &self.tenants {
            None => {}
            Some(Err(e)) => writeln!(f, "tenants:  {e}")?,
            Some(Ok(tenants)) => {
                writeln!(
                    f,
                    "tenants:  {} ({TENANTS_VAR}), each with a computer of its own",
                    tenants.len()
                )?;
                for t in tenants {
                    writeln!(
                        f,
                        "  {}: {}",
                        t.tenant,
                        tenant_line(&t.container, &t.computer)
                    )?;
                    if let Some(network) = &t.network {
                        writeln!(f, "    network: {network}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

fn tenant_line(container: &str, computer: &ComputerReport) -> String {
    match computer {
        ComputerReport::NotChecked => format!("`{container}` not checked"),
        ComputerReport::Unknown(e) => format!("`{container}` unknown: {e}"),
        ComputerReport::Missing => format!(
            "`{container}` does not exist yet; the tenant's first start_computer creates it"
        ),
        ComputerReport::Present { found, .. } => {
            let ports = found
                .port_base
                .map(|b| format!(", ports {b}-{}", b + 16))
                .unwrap_or_default();
            format!("`{container}` is {}{ports}", found.state)
        }
    }
}

fn write_found(f: &mut fmt::Formatter<'_>, found: &FoundComputer) -> fmt::Result {
    let name = &found.name;
    let status = if found.status == found.state.to_string() {
        String::new()
    } else {
        format!(" ({})", found.status)
    };
    let version = found.version.as_deref().unwrap_or("unknown");
    match found.state {
        ComputerState::Running => writeln!(f, "computer: `{name}` is running{status}, image version {version}")?,
        _ => writeln!(
            f,
            "computer: `{name}` is stopped{status}, image version {version}; start_computer starts it"
        )?,
    }
    let binary = binary_version();
    match (&found.version, found.upgrade_pending(), found.state) {
        (None, ..) => writeln!(f, "upgrade:  unknown: the container has no version label")?,
        (Some(v), true, ComputerState::Running) => writeln!(
            f,
            "upgrade:  pending: the computer runs {v} and this binary is {binary}; run `docker stop {name}` and call start_computer to move it to the new image (files in home stay)"
        )?,
        (Some(v), true, _) => writeln!(
            f,
            "upgrade:  pending: the computer is {v} and this binary is {binary}; the next start_computer creates it again on the new image (files in home stay)"
        )?,
        (Some(_), false, _) => writeln!(f, "upgrade:  none pending")?,
    }
    Ok(())
}
