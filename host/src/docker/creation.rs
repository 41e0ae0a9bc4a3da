//! What a new computer container is made from ([`Creation`]): its name,
//! image, ports, home volume, limits and network policy, gathered by
//! `container` for a first creation, an upgrade or a snapshot's
//! replacement, and the body Docker creates it with.

use super::found::{HOME, ORIGIN_LABEL, TOKEN_VAR};
use super::image::{binary_version, ImageFacts, VERSION_LABEL};
use super::limits;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use computer_protocol::Token;

/// Chromium keeps its renderers' memory in /dev/shm; Docker's 64 MB default
/// crashes tabs.
const SHM_SIZE: i64 = 2 * 1024 * 1024 * 1024;

/// Everything a new computer container is made from.
pub(super) struct Creation<'a> {
    pub(super) name: &'a str,
    pub(super) image: &'a str,
    pub(super) facts: &'a ImageFacts,
    pub(super) port_base: u16,
    pub(super) volume: String,
    /// It takes the place of an older computer of the same name, which the
    /// error messages mention.
    pub(super) replacing: bool,
    /// Memory and CPUs, from the settings of the server that creates it.
    pub(super) limits: &'a crate::settings::ResourceLimits,
    /// What its guard lets out, from the same settings.
    pub(super) network: &'a computer_protocol::network::NetworkPolicy,
    /// The tenant's home key, labelled on a home volume made now.
    pub(super) home_key: Option<&'a str>,
    /// What it was made from when not the plain image: a snapshot's name,
    /// or a reset (see `found::ORIGIN_LABEL`).
    pub(super) origin: Option<&'a str>,
}

impl Creation<'_> {
    /// The image version the container and its guard carry. An image
    /// without the label counts as this binary's version.
    pub(super) fn version(&self) -> String {
        self.facts
            .version
            .clone()
            .unwrap_or_else(|| binary_version().to_string())
    }

    /// The computer's container, in the network namespace of the guard
    /// `guard_id`, which publishes its ports and carries its hosts file.
    pub(super) fn body(
        &self,
        token: &Token,
        resources: &limits::Resources,
        guard_id: &str,
    ) -> ContainerCreateBody {
        let mut env = vec![
            format!("{TOKEN_VAR}={}", token.expose()),
            format!("COMPUTER_USE_PORT_BASE={}", self.port_base),
            "LANG=en_US.UTF-8".to_string(),
            "LC_ALL=en_US.UTF-8".to_string(),
        ];
        match iana_time_zone::get_timezone() {
            Ok(zone) => env.push(format!("TZ={zone}")),
            Err(e) => {
                tracing::warn!("the computer keeps UTC: cannot read the host's time zone: {e}")
            }
        }
        ContainerCreateBody {
            image: Some(self.image.to_string()),
            env: Some(env),
            labels: Some(
                [(VERSION_LABEL.to_string(), self.version())]
                    .into_iter()
                    .chain(
                        self.origin
                            .map(|o| (ORIGIN_LABEL.to_string(), o.to_string())),
                    )
                    .collect(),
            ),
            host_config: Some(limits::with_resources(
                limits::limited(HostConfig {
                    network_mode: Some(format!("container:{guard_id}")),
                    mounts: Some(vec![Mount {
                        target: Some(HOME.to_string()),
                        source: Some(self.volume.clone()),
                        typ: Some(MountType::VOLUME),
                        ..Default::default()
                    }]),
                    shm_size: Some(SHM_SIZE),
                    ..Default::default()
                }),
                resources,
            )),
            ..Default::default()
        }
    }
}
