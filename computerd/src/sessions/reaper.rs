//! Ends sessions whose owner stopped sending heartbeats or that sat idle.

use super::registry::Sessions;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the timers are checked; the end comes at most this late.
const TICK: Duration = Duration::from_millis(500);

pub async fn run_reaper(sessions: Arc<Sessions>) {
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        for (id, reason) in sessions.expired(Instant::now()) {
            let _ = sessions.end(&id, reason).await;
        }
    }
}
