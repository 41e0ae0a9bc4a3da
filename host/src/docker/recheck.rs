//! Where the computer's API is now, asked of Docker before the token goes
//! anywhere. Docker gives the API a new random host port at each start of
//! the container that publishes it, so after a restart the old port is free
//! for anyone on this machine to bind: the token may only go to the port
//! Docker publishes for the container now. The computer's guard publishes
//! it and outlives the computer's restarts, so a restart keeps the port:
//! the start time tells one run of the computer from the next.

use super::dialer::Dialer;
use super::error::DockerError;
use super::found::{find_computer, ComputerState};

/// What Docker says about the computer a connection was made to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recheck {
    /// The same container runs with its API on the same port.
    Unchanged,
    /// It runs with its API somewhere else or anew: it was restarted (new
    /// start time, maybe a new port) or created again under the same name
    /// (new id).
    Moved {
        api_url: String,
        token: computer_protocol::Token,
        container_id: String,
        started_at: Option<String>,
    },
    /// It exists but does not run, or runs without a published API.
    Stopped {
        status: String,
        exit_code: Option<i64>,
    },
    /// There is no container of that name any more.
    Missing,
}

/// Compares what Docker says of `name` now, reached through `dialer`,
/// with the connection's container id, start time and API URL.
pub async fn recheck(
    dialer: &Dialer,
    name: &str,
    container_id: &str,
    started_at: Option<&str>,
    api_url: &str,
) -> Result<Recheck, DockerError> {
    let Some(found) = find_computer(dialer.docker(), name).await? else {
        return Ok(Recheck::Missing);
    };
    // A save pauses the computer for a moment (`snapshot::save`): the same
    // run, behind the same published port, which answers once unpaused.
    if found.status == "paused"
        && found.id == container_id
        && found.started_at.as_deref() == started_at
    {
        return Ok(Recheck::Unchanged);
    }
    // A paused or restarting container counts as running for the Docker
    // side, but only a running one with a published API can answer.
    let running = found.state == ComputerState::Running && found.status == "running";
    let reach = if running {
        dialer.reach(&found).await?
    } else {
        None
    };
    let published = match reach {
        Some(reach) => reach.api_url,
        None => {
            return Ok(Recheck::Stopped {
                status: found.status,
                exit_code: found.exit_code,
            })
        }
    };
    if found.id == container_id && found.started_at.as_deref() == started_at && published == api_url
    {
        return Ok(Recheck::Unchanged);
    }
    match found.token {
        Some(token) => Ok(Recheck::Moved {
            api_url: published,
            token,
            container_id: found.id,
            started_at: found.started_at,
        }),
        // Not a container this program made: nothing is sent to it.
        None => Ok(Recheck::Missing),
    }
}
