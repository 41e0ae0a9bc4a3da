//! The computer's network guard: a second container, `<name>-network`,
//! that joins the computer's network namespace holding CAP_NET_ADMIN (which
//! the computer's own container never has) and runs `computerd net-guard`.
//! It owns the namespace's firewall, the proxy and the resolver every
//! connection of the computer goes through, and the connection log
//! (`computerd/src/netguard`). The computer's root cannot reach any of it:
//! another container's processes, filesystem and capabilities.
//!
//! The guard lives as long as the namespace it joined: the host starts one
//! each time the computer starts (before computerd's first call), and it ends
//! itself when the computer stops. A guard left from an earlier start of the
//! computer is replaced. A server that finds the guard running puts its own
//! policy in force, so a changed setting applies without a restart.

use super::call::{status_of, Call};
use super::error::DockerError;
use super::found::FoundComputer;
use super::image::VERSION_LABEL;
use bollard::models::{ContainerCreateBody, ContainerStateStatusEnum, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
};
use bollard::Docker;
use computer_protocol::network::{NetworkLog, NetworkPolicy};
use futures::StreamExt;
use std::time::Duration;

/// The label that ties a guard to its computer.
pub const GUARD_FOR_LABEL: &str = "computer-use.network-guard-for";
/// What the guard prints once its rules hold (computerd's `READY_LINE`).
const READY_LINE: &str = "computer-use network guard: ready";
const READY_DEADLINE: Duration = Duration::from_secs(20);
const CALL_DEADLINE: Duration = Duration::from_secs(30);
/// The guard is one small process: a proxy, a resolver, a log.
const GUARD_MEMORY: i64 = 128 * 1024 * 1024;
const GUARD_PIDS: i64 = 64;
/// Why a guard failed when another server removed it under this one.
const GONE: &str = "it was removed while it started";

pub fn guard_name(computer: &str) -> String {
    format!("{computer}-network")
}

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
    let inspect = Call::new(
        format!("inspecting the network guard `{name}`"),
        "nothing was changed",
        CALL_DEADLINE,
    );
    match inspect
        .run_raw(docker.inspect_container(&name, None))
        .await?
    {
        Ok(found) => {
            let status = found.state.as_ref().and_then(|s| s.status);
            let same_namespace = found
                .host_config
                .as_ref()
                .and_then(|h| h.network_mode.as_deref())
                == Some(joins.as_str());
            let guard_started = found.state.as_ref().and_then(|s| s.started_at.clone());
            // Parsed, not compared as text: the engine writes fractions
            // of a second with as many digits as they need.
            let parse = |t: &String| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            };
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
        Err(e) if status_of(&e) == Some(404) => {}
        Err(e) => return Err(inspect.failed(e)),
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

/// Starts the guard; one that runs already (another server started it) is
/// a success too.
async fn start(docker: &Docker, name: &str) -> Result<(), DockerError> {
    let call = Call::new(
        format!("starting the network guard `{name}`"),
        format!("see `docker logs {name}`"),
        CALL_DEADLINE,
    );
    match call.run_raw(docker.start_container(name, None)).await? {
        Ok(()) => Ok(()),
        // Gone, or the stale one of that name still on its way out.
        Err(e) if matches!(status_of(&e), Some(404) | Some(409)) => Err(gone(name)),
        Err(e) => Err(call.failed(e)),
    }
}

fn gone(name: &str) -> DockerError {
    DockerError::Guard {
        name: name.to_string(),
        why: GONE.to_string(),
    }
}

async fn remove(docker: &Docker, name: &str, id: &str) -> Result<(), DockerError> {
    let options = RemoveContainerOptionsBuilder::default().force(true).build();
    let call = Call::new(
        format!("removing the stale network guard `{name}`"),
        "nothing else was changed",
        CALL_DEADLINE,
    );
    match call
        .run_raw(docker.remove_container(id, Some(options)))
        .await?
    {
        Ok(()) => Ok(()),
        Err(e) if matches!(status_of(&e), Some(404) | Some(409)) => Ok(()),
        Err(e) => Err(call.failed(e)),
    }
}

/// Follows the guard's output until it says it is ready. A guard another
/// server has created but not yet started has no output to follow yet, so
/// an output that ends early is followed again until the deadline.
async fn wait_ready(docker: &Docker, name: &str) -> Result<(), DockerError> {
    let mut said = String::new();
    let watch = async {
        loop {
            let options = LogsOptionsBuilder::default()
                .follow(true)
                .stdout(true)
                .stderr(true)
                .build();
            let mut logs = docker.logs(name, Some(options));
            while let Some(Ok(chunk)) = logs.next().await {
                said.push_str(&chunk.to_string());
                if said.contains(READY_LINE) {
                    return Ok(true);
                }
            }
            if let Err(e) = docker.inspect_container(name, None).await {
                if status_of(&e) == Some(404) {
                    return Err(gone(name));
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let ready = match tokio::time::timeout(READY_DEADLINE, watch).await {
        Ok(Ok(ready)) => ready,
        Ok(Err(gone)) => return Err(gone),
        Err(_) => false,
    };
    if ready {
        return Ok(());
    }
    Err(DockerError::Guard {
        name: name.to_string(),
        why: match said.trim() {
            "" => format!(
                "it did not say it was ready within {}s",
                READY_DEADLINE.as_secs()
            ),
            text => text.lines().last().unwrap_or(text).to_string(),
        },
    })
}

/// The guard's log: newest first, `limit` entries, denials only if asked.
pub async fn network_log(
    docker: &Docker,
    computer: &str,
    denied_only: bool,
    limit: usize,
) -> Result<NetworkLog, DockerError> {
    let words = [
        "log".to_string(),
        u8::from(denied_only).to_string(),
        limit.to_string(),
    ];
    let answer = ask(docker, computer, &words).await?;
    serde_json::from_str(&answer).map_err(|e| DockerError::Guard {
        name: guard_name(computer),
        why: format!(
            "its log is not JSON ({e}): {}",
            answer.chars().take(200).collect::<String>()
        ),
    })
}

/// Puts `policy` in force on the running guard (within the call).
pub async fn set_policy(
    docker: &Docker,
    computer: &str,
    policy: &NetworkPolicy,
) -> Result<String, DockerError> {
    let json = serde_json::to_string(policy).unwrap_or_default();
    ask(docker, computer, &["policy".to_string(), json]).await
}

/// Runs `computerd net-guard WORDS...` in the guard and returns what it
/// printed.
async fn ask(docker: &Docker, computer: &str, words: &[String]) -> Result<String, DockerError> {
    let name = guard_name(computer);
    let mut argv = vec!["/usr/local/bin/computerd".to_string(), "net-guard".into()];
    argv.extend_from_slice(words);
    let exec = Call::new(
        format!("asking the network guard `{name}`"),
        "nothing was changed",
        CALL_DEADLINE,
    );
    let created = exec
        .run(docker.create_exec(
            &name,
            bollard::exec::CreateExecOptions {
                cmd: Some(argv),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        ))
        .await?;
    let mut out = String::new();
    let mut err = String::new();
    if let bollard::exec::StartExecResults::Attached { mut output, .. } =
        exec.run(docker.start_exec(&created.id, None)).await?
    {
        while let Some(Ok(chunk)) = output.next().await {
            match chunk {
                bollard::container::LogOutput::StdErr { message } => {
                    err.push_str(&String::from_utf8_lossy(&message))
                }
                other => out.push_str(&other.to_string()),
            }
        }
    }
    if out.trim().is_empty() {
        return Err(DockerError::Guard {
            name,
            why: match err.trim() {
                "" => "it answered nothing".into(),
                text => text.to_string(),
            },
        });
    }
    Ok(out)
}
