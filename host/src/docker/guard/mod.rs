//! The computer's network guard: a second container, `<name>-network`,
//! that holds CAP_NET_ADMIN (which the computer's own container never has)
//! and runs `computerd net-guard`. It owns the namespace's firewall, the
//! proxy and the resolver every connection of the computer goes through,
//! and the connection log (`computerd/src/netguard`); in `open` mode the
//! kernel forwards public TCP itself and the guard logs it from the
//! connection tracking, which needs the byte counters the owner's
//! container turns on. The computer's root
//! cannot reach any of it: another container's processes, filesystem and
//! capabilities.
//!
//! - [`owner`]: the guard owns the network namespace and the computer joins
//!   it (`network_mode: container:<guard>`). The guard is created and its
//!   rules hold before the computer first starts, and they outlive every
//!   restart of the computer: no moment exists in which the computer's
//!   code runs with an unguarded network. Docker refuses to start the
//!   computer while its guard is not running, and a computer whose guard
//!   stops keeps loopback only. Every computer made by this version.
//! - [`join`]: a computer made before that owns its namespace; its guard
//!   joins it after each start, until an upgrade recreates the computer.
//!
//! Here: what both share, the guard's container, its readiness, and the
//! questions asked of it (its policy, its log).

use super::call::{status_of, Call};
use super::error::DockerError;
use super::found::{FoundComputer, Namespace};
use bollard::models::ContainerInspectResponse;
use bollard::query_parameters::{LogsOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use computer_protocol::network::{NetworkLog, NetworkPolicy};
use futures::StreamExt;
use std::time::Duration;

mod join;
pub mod owner;

pub use owner::{clear_leftover, create_owner, OwnerPlan};

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

/// Makes sure the running `computer` is guarded with `policy` before
/// anything is sent to it, whichever namespace it runs in. Returns whether
/// the computer must be restarted to join its guard again (see
/// [`owner::ensure_owner`]).
pub async fn ensure(
    docker: &Docker,
    computer: &FoundComputer,
    policy: &NetworkPolicy,
) -> Result<bool, DockerError> {
    match &computer.namespace {
        Namespace::Own => join::ensure_guard(docker, computer, policy)
            .await
            .map(|()| false),
        Namespace::Guards(owner) => {
            owner::ensure_owner(docker, computer, owner.as_ref(), policy).await
        }
    }
}

/// The container `name`, or `None` when there is none.
async fn inspect(
    docker: &Docker,
    name: &str,
) -> Result<Option<ContainerInspectResponse>, DockerError> {
    let call = Call::new(
        format!("inspecting the network guard `{name}`"),
        "nothing was changed",
        CALL_DEADLINE,
    );
    match call.run_raw(docker.inspect_container(name, None)).await? {
        Ok(found) => Ok(Some(found)),
        Err(e) if status_of(&e) == Some(404) => Ok(None),
        Err(e) => Err(call.failed(e)),
    }
}

/// Waits until the started guard `guard` holds its rules, then puts this
/// server's `policy` in force on it: the one a changed setting or tenants
/// file asks for, whoever created the guard.
async fn ask_ready_policy(
    docker: &Docker,
    guard: &str,
    computer: &str,
    policy: &NetworkPolicy,
) -> Result<(), DockerError> {
    wait_ready(docker, guard).await?;
    set_policy(docker, computer, policy).await.map(|_| ())
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

pub(crate) async fn remove(docker: &Docker, name: &str, id: &str) -> Result<(), DockerError> {
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
