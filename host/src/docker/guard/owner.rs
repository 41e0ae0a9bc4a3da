//! The guard that owns a computer's network namespace. It is made before
//! the computer (which joins it with `network_mode: container:<id>`),
//! publishes the computer's ports and carries `host.docker.internal`, and
//! starts and says its rules hold before each start of the computer.
//!
//! Docker ties the two by the guard's id: a computer cannot start while its
//! guard does not run, and the guard can never be swapped for another
//! under a computer. So the guard lives as long as its computer: a stopped
//! computer's guard keeps running (and holding the ports), and only a
//! removal or an upgrade of the computer removes it.

use super::{
    ask_ready_policy, gone, guard_name, remove, CALL_DEADLINE, GUARD_FOR_LABEL, GUARD_MEMORY,
    GUARD_PIDS,
};
use crate::docker::call::{message_of, status_of, Call};
use crate::docker::error::DockerError;
use crate::docker::found::{FoundComputer, OwnerFacts};
use crate::docker::image::VERSION_LABEL;
use crate::docker::{limits, ports};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use bollard::Docker;
use computer_protocol::network::NetworkPolicy;
use std::time::Duration;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A guard of a computer's name never started and younger than this, with
/// no computer yet, is another server's, about to create its computer; any
/// other was left behind by a computer removed by hand. (Its creation time is the
/// engine's clock, compared with this machine's.)
const IN_FLIGHT: Duration = Duration::from_secs(10);

/// What a new computer's guard is made with.
pub struct OwnerPlan<'a> {
    pub computer: &'a str,
    pub image: &'a str,
    /// The computer's image version, which the guard carries too.
    pub version: &'a str,
    pub port_base: u16,
    pub policy: &'a NetworkPolicy,
}

impl OwnerPlan<'_> {
    fn body(&self) -> ContainerCreateBody {
        let policy_json = serde_json::to_string(self.policy).unwrap_or_else(|_| "{}".into());
        let labels = [
            (GUARD_FOR_LABEL.to_string(), self.computer.to_string()),
            (VERSION_LABEL.to_string(), self.version.to_string()),
        ];
        // The log rotation of the computer's container, and nothing of its
        // other limits: the guard has its own, smaller ones.
        let log_config = limits::limited(HostConfig::default()).log_config;
        ContainerCreateBody {
            image: Some(self.image.to_string()),
            entrypoint: Some(vec!["/usr/local/bin/computerd".into()]),
            cmd: Some(vec!["net-guard".into(), "run".into(), policy_json]),
            user: Some("root".into()),
            labels: Some(labels.into()),
            exposed_ports: Some(ports::exposed_ports()),
            host_config: Some(HostConfig {
                port_bindings: Some(ports::port_bindings(self.port_base)),
                // The machine the engine runs on, for COMPUTER_USE_HOST_PORTS;
                // the computer reads the owner's hosts file.
                extra_hosts: Some(vec![format!(
                    "{}:host-gateway",
                    computer_protocol::network::HOST_NAME
                )]),
                cap_drop: Some(vec!["ALL".into()]),
                cap_add: Some(vec!["NET_ADMIN".into()]),
                // Byte counters per connection, so the guard can log the
                // connections `open` mode lets the kernel forward itself
                // (without them every connection passes its proxy).
                sysctls: Some(
                    [(
                        "net.netfilter.nf_conntrack_acct".to_string(),
                        "1".to_string(),
                    )]
                    .into(),
                ),
                memory: Some(GUARD_MEMORY),
                pids_limit: Some(GUARD_PIDS),
                security_opt: Some(vec!["no-new-privileges".into()]),
                log_config,
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// Clears the way for a new computer's guard: a guard of that name left
/// behind by a computer removed by hand (`docker rm -f <name>`) still
/// holds the ports, and goes. Returns `false` when the guard there is
/// another server's of a moment ago, about to get its computer, so the
/// caller looks again.
pub async fn clear_leftover(docker: &Docker, computer: &str) -> Result<bool, DockerError> {
    let name = guard_name(computer);
    let Some(there) = super::inspect(docker, &name).await? else {
        return Ok(true);
    };
    let created = there.created.as_deref().and_then(parse_time);
    let young =
        created.is_some_and(|at| (OffsetDateTime::now_utc() - at).unsigned_abs() < IN_FLIGHT);
    // Another server starts its guard only once its computer exists.
    let never_started = there.state.as_ref().and_then(|s| s.status)
        == Some(bollard::models::ContainerStateStatusEnum::CREATED);
    if young && never_started {
        return Ok(false);
    }
    tracing::info!(
        guard = name,
        "removing a network guard whose computer was removed"
    );
    remove(docker, &name, there.id.as_deref().unwrap_or(&name)).await?;
    Ok(true)
}

/// Creates (without starting) the guard a new computer will join, and
/// returns its id; `None` when another server created one under that name
/// first, so the caller looks again.
pub async fn create_owner(
    docker: &Docker,
    plan: &OwnerPlan<'_>,
) -> Result<Option<String>, DockerError> {
    let name = guard_name(plan.computer);
    let create = Call::new(
        format!("creating the network guard `{name}`"),
        "nothing was created",
        CALL_DEADLINE,
    );
    let options = CreateContainerOptionsBuilder::default().name(&name).build();
    match create
        .run_raw(docker.create_container(Some(options), plan.body()))
        .await?
    {
        Ok(created) => Ok(Some(created.id)),
        Err(e) if status_of(&e) == Some(409) => Ok(None),
        Err(e) => Err(create.failed(e)),
    }
}

/// Makes sure the guard that owns `computer`'s namespace runs with
/// `policy` in force, starting it when it is stopped. Returns whether the
/// computer, if it runs, sits in a namespace older than its guard's (the
/// guard was stopped or restarted under it): it then has loopback only and
/// must be restarted to join the guard again.
pub async fn ensure_owner(
    docker: &Docker,
    computer: &FoundComputer,
    owner: Option<&OwnerFacts>,
    policy: &NetworkPolicy,
) -> Result<bool, DockerError> {
    let owner = owner.ok_or_else(|| DockerError::GuardGone {
        name: computer.name.clone(),
        guard: guard_name(&computer.name),
    })?;
    let mut started_now = false;
    if !owner.running {
        let call = Call::new(
            format!("starting the network guard `{}`", owner.name),
            format!(
                "the computer `{}` cannot start without it; see `docker logs {}`",
                computer.name, owner.name
            ),
            CALL_DEADLINE,
        );
        // A start of a running container (another server's) is a success.
        match call
            .run_raw(docker.start_container(&owner.id, None))
            .await?
        {
            Ok(()) => started_now = true,
            Err(e) if status_of(&e) == Some(404) => return Err(gone(&owner.name)),
            Err(e) => {
                return Err(match message_of(&e).and_then(ports::taken_port_in) {
                    Some(port) => DockerError::ExistingPortTaken {
                        port,
                        base: computer.port_base.unwrap_or(port),
                        name: computer.name.clone(),
                    },
                    None => call.failed(e),
                })
            }
        }
    }
    ask_ready_policy(docker, &owner.name, &computer.name, policy).await?;
    let computer_runs = computer.status == "running";
    let stale = started_now
        || match (
            owner.started_at.as_deref().and_then(parse_time),
            computer.started_at.as_deref().and_then(parse_time),
        ) {
            (Some(guard), Some(computer)) => guard > computer,
            _ => false,
        };
    Ok(computer_runs && stale)
}

/// An engine's RFC 3339 time. Parsed, not compared as text: the engine
/// writes fractions of a second with as many digits as they need.
pub(super) fn parse_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_publishes_the_ports_and_holds_only_net_admin() {
        let policy = NetworkPolicy::default();
        let plan = OwnerPlan {
            computer: "computer-use",
            image: "computer-use-mcp:dev",
            version: "0.4.0",
            port_base: 20900,
            policy: &policy,
        };
        let body = plan.body();
        let host = body.host_config.unwrap();
        let bindings = host.port_bindings.unwrap();
        assert_eq!(ports::base_from_bindings(&bindings), Some(20900));
        assert_eq!(host.cap_drop.unwrap(), vec!["ALL".to_string()]);
        assert_eq!(host.cap_add.unwrap(), vec!["NET_ADMIN".to_string()]);
        assert_eq!(
            host.sysctls.unwrap()["net.netfilter.nf_conntrack_acct"],
            "1",
            "the kernel path needs the namespace's byte counters"
        );
        assert!(host.extra_hosts.unwrap()[0].ends_with(":host-gateway"));
        assert_eq!(
            body.labels
                .unwrap()
                .get(GUARD_FOR_LABEL)
                .map(String::as_str),
            Some("computer-use")
        );
    }

    #[test]
    fn times_with_any_number_of_fraction_digits_compare_as_times() {
        let short = parse_time("2026-12-05T03:00:00.5Z").unwrap();
        let long = parse_time("2026-12-05T03:00:00.123456789Z").unwrap();
        assert!(short > long);
    }
}
