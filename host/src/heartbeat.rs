//! Keeps this process's sessions alive with a heartbeat every 10 s, and ends
//! them all at once when the process shuts down. Each beat first asks Docker
//! where the computer's API is now (see `mcp::state`), so the token never
//! goes to a port a restart left behind.

use crate::mcp::Host;
use computer_protocol::{routes, HeartbeatResponse};
use reqwest::Method;
use std::sync::Arc;
use std::time::Duration;

/// computerd ends an owner's sessions 30 s after its last heartbeat, so three
/// beats may be lost before anything ends.
pub const INTERVAL: Duration = Duration::from_secs(10);
/// How long shutdown waits for computerd to end the sessions.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

pub async fn run(host: Arc<Host>) {
    let mut ticker = tokio::time::interval(INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if host.connection().is_none() {
            continue;
        }
        let conn = match host.confirmed("heartbeat", Duration::ZERO).await {
            Ok(conn) => conn,
            Err(why) => {
                tracing::warn!("no heartbeat sent: {why}");
                continue;
            }
        };
        let path = routes::heartbeat(&host.owner);
        let sent: Result<HeartbeatResponse, _> = conn
            .client
            .call(
                Method::POST,
                &path,
                Some(&serde_json::json!({})),
                INTERVAL,
                "nothing",
            )
            .await;
        if let Err(e) = sent {
            tracing::warn!("heartbeat failed: {e}");
        }
    }
}

/// Ends every session of this process, waiting at most [`SHUTDOWN_WAIT`].
pub async fn end_all(host: &Host) {
    if host.connection().is_none() {
        return;
    }
    let checked = tokio::time::timeout(
        SHUTDOWN_WAIT,
        host.confirmed("shutdown", crate::mcp::state::CONFIRMED_FOR),
    );
    let Ok(Ok(conn)) = checked.await else {
        tracing::warn!("the sessions were not ended at exit (the computer's API could not be confirmed); they end by themselves within 30 s");
        return;
    };
    let path = routes::owner_sessions(&host.owner);
    let ended: Result<HeartbeatResponse, _> = conn
        .client
        .call(
            Method::DELETE,
            &path,
            None::<&()>,
            SHUTDOWN_WAIT,
            "the sessions end by themselves within 30 s",
        )
        .await;
    match ended {
        Ok(r) => tracing::info!("ended {} session(s)", r.sessions),
        Err(e) => tracing::warn!("could not end the sessions at exit: {e}"),
    }
}
