//! Port bases for tenants' computers. Each computer publishes 17 ports from
//! its base; a tenant's computer gets the first slot of 17 above
//! `COMPUTER_USE_PORT_BASE` (whose own slot stays the one-computer case's)
//! that no computer on the engine was created with, running or stopped, and
//! whose ports nothing else on this machine holds. A computer keeps the base
//! it was created with, so a slot is chosen once per tenant.

use super::call::Call;
use super::error::DockerError;
use super::found::find_computer;
use super::image::VERSION_LABEL;
use super::ports::{first_taken, HOST_PORTS};
use crate::settings::PORT_BASE_MAX;
use bollard::query_parameters::ListContainersOptions;
use bollard::Docker;
use std::collections::HashMap;
use std::time::Duration;

const LIST_DEADLINE: Duration = Duration::from_secs(30);

/// The base for a new tenant computer: see the module doc.
pub async fn choose_port_base(docker: &Docker, first: u16) -> Result<u16, DockerError> {
    let held = computer_port_bases(docker).await?;
    first_free_slot(first, &held, |base| first_taken(base).is_some())
        .ok_or(DockerError::NoPortSlot { first })
}

/// The bases every computer on the engine was created with.
async fn computer_port_bases(docker: &Docker) -> Result<Vec<u16>, DockerError> {
    let options = ListContainersOptions {
        all: true,
        filters: Some(HashMap::from([(
            "label".to_string(),
            vec![VERSION_LABEL.to_string()],
        )])),
        ..Default::default()
    };
    let listed = Call::new(
        "listing the computers",
        "nothing was changed",
        LIST_DEADLINE,
    )
    .run(docker.list_containers(Some(options)))
    .await?;
    let mut bases = Vec::new();
    for summary in listed {
        let Some(name) = summary.names.into_iter().flatten().next() else {
            continue;
        };
        let name = name.trim_start_matches('/');
        if let Some(base) = find_computer(docker, name).await?.and_then(|c| c.port_base) {
            bases.push(base);
        }
    }
    Ok(bases)
}

/// The first slot above `first` (`first + 17k`, k >= 1) that overlaps no
/// base in `held` and that `taken` does not flag.
pub fn first_free_slot(first: u16, held: &[u16], taken: impl Fn(u16) -> bool) -> Option<u16> {
    let overlaps = |base: u16| {
        held.iter()
            .any(|&h| base < h.saturating_add(HOST_PORTS) && h < base.saturating_add(HOST_PORTS))
    };
    (1u32..)
        .map(|k| u32::from(first) + k * u32::from(HOST_PORTS))
        .take_while(|&base| base <= u32::from(PORT_BASE_MAX))
        .map(|base| base as u16)
        .find(|&base| !overlaps(base) && !taken(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_take_slots_above_the_base_around_existing_computers() {
        let none = |_| false;
        assert_eq!(first_free_slot(20900, &[], none), Some(20917));
        assert_eq!(first_free_slot(20900, &[20900, 20917], none), Some(20934));
        // A computer made with an odd base blocks the slots it overlaps.
        assert_eq!(first_free_slot(20900, &[20930], none), Some(20951));
        // Ports held by something else are skipped too.
        assert_eq!(first_free_slot(20900, &[], |b| b == 20917), Some(20934));
        // No room above the last base.
        assert_eq!(first_free_slot(65519, &[], none), None);
    }
}
