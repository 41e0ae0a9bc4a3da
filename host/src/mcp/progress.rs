//! Progress notifications for long calls: every 5 s while a call runs,
//! when the client gave a progress token, so a client (and the person
//! watching it) knows the call is alive. `file_transfer` reports bytes its
//! own way; `shell`, `computer_act` and `wait_handoff` report time.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use std::future::Future;
use std::time::{Duration, Instant};

/// How often a long call reports.
pub const EVERY: Duration = Duration::from_secs(5);

/// Runs `work`, sending "`what`: N s" every [`EVERY`] until it ends.
pub async fn reporting<T>(
    context: &RequestContext<RoleServer>,
    what: &str,
    work: impl Future<Output = T>,
) -> T {
    let ticking = tick(
        context.peer.clone(),
        context.meta.get_progress_token(),
        what,
    );
    tokio::select! {
        done = work => done,
        never = ticking => match never {},
    }
}

async fn tick(
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    what: &str,
) -> std::convert::Infallible {
    let Some(token) = token else {
        return std::future::pending().await;
    };
    let started = Instant::now();
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let seconds = started.elapsed().as_secs();
        let note = ProgressNotificationParam::new(token.clone(), seconds as f64)
            .with_message(format!("{what}: {seconds} s"));
        if let Err(e) = peer.notify_progress(note).await {
            tracing::debug!("progress notification not sent: {e}");
        }
    }
}
