//! Keeps an agent's sessions alive with a heartbeat every 10 s, and ends
//! them all at once when the agent goes away. Each beat first asks Docker
//! where the computer's API is now (see [`crate::link`]), so the token never
//! goes to a port a restart left behind.

use crate::link::{Link, CONFIRMED_FOR};
use computer_protocol::endpoints::{EndOwnerSessions, Heartbeat, NoBody};
use computer_protocol::OwnerId;
use std::sync::Arc;
use std::time::Duration;

/// computerd ends an owner's sessions 30 s after its last heartbeat, so three
/// beats may be lost before anything ends.
pub const INTERVAL: Duration = Duration::from_secs(10);
/// How long shutdown waits for computerd to end the sessions.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// Beats for `owner` until the task is aborted.
pub async fn run(link: Arc<Link>, owner: OwnerId) {
    let mut ticker = tokio::time::interval(INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if link.connection().is_none() {
            continue;
        }
        let conn = match link.confirmed("heartbeat", Duration::ZERO).await {
            Ok(conn) => conn,
            Err(why) => {
                tracing::warn!("no heartbeat sent: {why}");
                continue;
            }
        };
        let sent = conn
            .client
            .send::<Heartbeat>(&owner, &NoBody {}, INTERVAL, "nothing")
            .await;
        if let Err(e) = sent {
            tracing::warn!("heartbeat failed: {e}");
        }
    }
}

/// Ends every session of `owner`, waiting at most [`SHUTDOWN_WAIT`].
pub async fn end_all(link: &Link, owner: &OwnerId) {
    if link.connection().is_none() {
        link.remove_owner(owner);
        return;
    }
    let checked = tokio::time::timeout(SHUTDOWN_WAIT, link.confirmed("shutdown", CONFIRMED_FOR));
    let Ok(Ok(conn)) = checked.await else {
        tracing::warn!("the sessions of `{}` were not ended (the computer's API could not be confirmed); they end by themselves within 30 s", owner.0);
        return;
    };
    let ended = conn
        .client
        .send::<EndOwnerSessions>(
            owner,
            &NoBody {},
            SHUTDOWN_WAIT,
            "the sessions end by themselves within 30 s",
        )
        .await;
    match ended {
        Ok(r) => {
            link.remove_owner(owner);
            tracing::info!("ended {} session(s) of `{}`", r.sessions, owner.0);
        }
        Err(e) => tracing::warn!("could not end the sessions of `{}`: {e}", owner.0),
    }
}

/// Ends the sessions of every agent still open, at once (process shutdown).
pub async fn end_every_agent(link: &Link) {
    let owners = link.owners();
    futures::future::join_all(owners.iter().map(|owner| end_all(link, owner))).await;
}
