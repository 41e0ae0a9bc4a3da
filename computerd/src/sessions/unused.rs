//! Stops the computer once nothing has used it for as long as its host
//! asked (`COMPUTER_USE_IDLE_STOP`, passed with each session): computerd
//! ends, and its container with it. The next `start_computer` starts it
//! again, with its home. A live session (and so a recording or a handoff)
//! or a screen a viewer still watches keeps it up.

use super::registry::Sessions;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How often the computer is looked at; it stops at most this late.
const TICK: Duration = Duration::from_secs(1);

/// Notifies `stop` once the computer has been unused for the time its
/// newest session's host gave; runs until then, or until aborted.
pub async fn run_unused_stop(sessions: Arc<Sessions>, stop: Arc<Notify>) {
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut unused_since: Option<Instant> = None;
    loop {
        ticker.tick().await;
        let Some(limit) = sessions.unused_stop_after() else {
            unused_since = None;
            continue;
        };
        let since = *unused_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= limit {
            tracing::info!(
                "no session and no viewer for {}s (COMPUTER_USE_IDLE_STOP): stopping the computer; start_computer starts it again",
                limit.as_secs()
            );
            stop.notify_one();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::registry::tests::sessions_with_grace;
    use computer_protocol::{CreateSessionRequest, EndReason, OwnerId, SessionSettings};

    fn stopping_after(secs: Option<u64>) -> CreateSessionRequest {
        CreateSessionRequest {
            title: "t".into(),
            owner: OwnerId("host-a".into()),
            settings: SessionSettings {
                idle_stop_secs: secs,
                ..SessionSettings::default()
            },
            resume: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_computer_stops_once_unused_for_the_time_its_host_gave() {
        let t = sessions_with_grace(Duration::from_secs(3600));
        let stop = Arc::new(Notify::new());
        let watcher = tokio::spawn(run_unused_stop(Arc::clone(&t.sessions), Arc::clone(&stop)));
        let live = t.sessions.create(stopping_after(Some(60))).unwrap();
        // A live session keeps it up, however long.
        tokio::time::sleep(Duration::from_secs(600)).await;
        assert!(!watcher.is_finished());
        let _ = t.sessions.end(&live.id, EndReason::EndedByAgent).await;
        let ended = Instant::now();
        tokio::time::timeout(Duration::from_secs(63), stop.notified())
            .await
            .expect("it stops about a minute after the session ended");
        assert!(
            ended.elapsed() >= Duration::from_secs(60),
            "{:?}",
            ended.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn without_the_setting_it_never_stops() {
        let t = sessions_with_grace(Duration::from_secs(3600));
        let stop = Arc::new(Notify::new());
        let watcher = tokio::spawn(run_unused_stop(Arc::clone(&t.sessions), Arc::clone(&stop)));
        let live = t.sessions.create(stopping_after(None)).unwrap();
        let _ = t.sessions.end(&live.id, EndReason::EndedByAgent).await;
        tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
        assert!(!watcher.is_finished());
        watcher.abort();
    }
}
