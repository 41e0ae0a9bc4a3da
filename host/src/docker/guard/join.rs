//! The guard of a computer that owns its network namespace (one made
//! before the guard owned it): a guard joins the namespace after each
//! start of the computer, before computerd's first call, and ends itself
//! when the computer stops. A guard left from an earlier start is
//! replaced. A server that finds the guard running puts its own policy in
//! force, so a changed setting applies without a restart.
//!
//! What it cannot close: the moment between the computer's start and its
//! guard's, in which code the computer's root planted in its own files
//! runs unguarded. An upgrade moves such a computer to [`super::owner`].

use super::{
    gone, guard_name, remove, set_policy, start, wait_ready, CALL_DEADLINE, GONE, GUARD_FOR_LABEL,
    GUARD_MEMORY, GUARD_PIDS,
};
use crate::docker::call::{status_of, Call};
use crate::docker::error::DockerError;
use crate::docker::found::FoundComputer;
use crate::docker::image::VERSION_LABEL;
use bollard::models::{ContainerCreateBody, ContainerStateStatusEnum, HostConfig};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use bollard::Docker;
use computer_protocol::network::NetworkPolicy;
use std::time::Duration;

/// Makes sure the computer's current network namespace has its guard, with
/// `policy`, ready before anything else talks to the computer.
pub async fn ensure_guard(
    docker: &Docker,
    computer: &FoundComputer,
    policy: &NetworkPolicy,
) -> Result<(), DockerError> {
    // Several servers may do this at once; one that loses a race (its
    // guard removed under it as stale by another) looks again.
    let mut tries = 0;
    loop {
        match ensure_guard_once(docker, computer, policy).await {
            Err(DockerError::Guard { why, .. }) if tries < 50 && why == GONE => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

async fn ensure_guard_once(
    docker: &Docker,
    computer: &FoundComputer,
    policy: &NetworkPolicy,
) -> Result<(), DockerError> {
    let name = guard_name(&computer.name);
    let joins = format!("container:{}", computer.id);
    if let Some(found) = super::inspect(docker, &name).await? {
        let status = found.state.as_ref().and_then(|s| s.status);
        let same_namespace = found
            .host_config
            .as_ref()
            .and_then(|h| h.network_mode.as_deref())
            == Some(joins.as_str());
        let guard_started = found.state.as_ref().and_then(|s| s.started_at.clone());
        let parse = |t: &String| super::owner::parse_time(t);
        let after_computer = match (
            guard_started.as_ref().and_then(parse),
            computer.started_at.as_ref().and_then(parse),
        ) {
            (Some(guard), Some(computer)) => guard >= computer,
            _ => false,
        };
        // Created and not yet started: another server's, a moment ago.
        let running = status == Some(ContainerStateStatusEnum::RUNNING);
        let current =
            status == Some(ContainerStateStatusEnum::CREATED) || running && after_computer;
        if same_namespace && running && !after_computer {
            // The guard of the computer's previous start: it ends by
            // itself within a second, now that its namespace is gone.
            return Err(gone(&name));
        }
        if same_namespace && current {
            start(docker, &name).await?;
            wait_ready(docker, &name).await?;
            // This server's policy is the one in force from now on: a
            // changed setting applies to the running computer at once.
            set_policy(docker, &computer.name, policy).await?;
            return Ok(());
        }
        // By id: if another server replaced it meanwhile, the new one stays.
        remove(docker, &name, found.id.as_deref().unwrap_or(&name)).await?;
    }
    create_and_start(docker, computer, &name, &joins, policy).await
}

async fn create_and_start(
    docker: &Docker,
    computer: &FoundComputer,
    name: &str,
    joins: &str,
    policy: &NetworkPolicy,
) -> Result<(), DockerError> {
    let policy_json = serde_json::to_string(policy).unwrap_or_else(|_| "{}".into());
    let mut labels =
        std::collections::HashMap::from([(GUARD_FOR_LABEL.to_string(), computer.name.clone())]);
    if let Some(version) = &computer.version {
        labels.insert(VERSION_LABEL.to_string(), version.clone());
    }
    let body = ContainerCreateBody {
        image: Some(computer.image.clone()),
        entrypoint: Some(vec!["/usr/local/bin/computerd".into()]),
        cmd: Some(vec!["net-guard".into(), "run".into(), policy_json]),
        user: Some("root".into()),
        labels: Some(labels),
        host_config: Some(HostConfig {
            network_mode: Some(joins.to_string()),
            cap_drop: Some(vec!["ALL".into()]),
            cap_add: Some(vec!["NET_ADMIN".into()]),
            memory: Some(GUARD_MEMORY),
            pids_limit: Some(GUARD_PIDS),
            security_opt: Some(vec!["no-new-privileges".into()]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let create = Call::new(
        format!("creating the network guard `{name}`"),
        "the computer runs without network until its guard starts",
        CALL_DEADLINE,
    );
    let options = CreateContainerOptionsBuilder::default().name(name).build();
    match create
        .run_raw(docker.create_container(Some(options), body))
        .await?
    {
        Ok(_) => {}
        // Another server is making it at this moment.
        Err(e) if status_of(&e) == Some(409) => {}
        Err(e) => return Err(create.failed(e)),
    }
    start(docker, name).await?;
    wait_ready(docker, name).await
}
