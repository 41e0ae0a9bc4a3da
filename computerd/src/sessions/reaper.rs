//! Ends sessions whose owner stopped sending heartbeats or that sat idle.

use super::registry::Sessions;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How often the timers are checked; the end comes at most this late.
const TICK: Duration = Duration::from_millis(500);

/// Ends every session whose owner's heartbeat or own idle timeout ran out,
/// checking every [`TICK`]; runs until its task is aborted.
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

/// The reaper's loop on tokio's paused clock: its ticks and the timers it
/// checks move together, as fast as the test advances them.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::registry::tests::{sessions_with_grace, start};
    use crate::sessions::SessionError;
    use computer_protocol::{EndReason, OwnerId, SessionId};
    use tokio::time::sleep;

    const GRACE: Duration = Duration::from_secs(30);

    /// Why `id` ended, once it has.
    fn end_reason(sessions: &Sessions, id: &SessionId) -> Option<EndReason> {
        match sessions.get(id) {
            Ok(_) => None,
            Err(SessionError::Ended(_, reason)) => Some(reason),
            Err(e) => panic!("session `{id}` neither live nor ended: {e}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_without_heartbeats_ends_within_a_tick_of_its_grace() {
        let t = sessions_with_grace(GRACE);
        let started = Instant::now();
        let reaper = tokio::spawn(run_reaper(Arc::clone(&t.sessions)));
        let id = start(&t.sessions, "host-a", 3600);
        sleep(GRACE - TICK).await;
        assert_eq!(end_reason(&t.sessions, &id), None);
        let reason = test_support::wait_until("the reaper to end the session", TICK * 3, || {
            let reason = end_reason(&t.sessions, &id);
            async move { reason }
        })
        .await;
        assert_eq!(reason, EndReason::HeartbeatLost);
        let took = started.elapsed();
        assert!(
            took > GRACE && took <= GRACE + TICK * 2,
            "ended {took:?} after it started"
        );
        reaper.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeats_every_10_s_keep_a_session_alive_for_an_hour() {
        let t = sessions_with_grace(GRACE);
        let reaper = tokio::spawn(run_reaper(Arc::clone(&t.sessions)));
        let id = start(&t.sessions, "host-a", 7200);
        for _ in 0..360 {
            sleep(Duration::from_secs(10)).await;
            t.sessions.heartbeat(&OwnerId("host-a".into()));
        }
        assert_eq!(end_reason(&t.sessions, &id), None);
        reaper.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_session_of_a_beating_owner_ends_as_idle() {
        let t = sessions_with_grace(GRACE);
        let reaper = tokio::spawn(run_reaper(Arc::clone(&t.sessions)));
        let idle = start(&t.sessions, "host-a", 60);
        let busy = start(&t.sessions, "host-a", 60);
        for _ in 0..9 {
            sleep(Duration::from_secs(10)).await;
            t.sessions.heartbeat(&OwnerId("host-a".into()));
            t.sessions.get(&busy).expect("the busy session is live");
        }
        assert_eq!(end_reason(&t.sessions, &idle), Some(EndReason::Idle));
        assert_eq!(end_reason(&t.sessions, &busy), None);
        reaper.abort();
    }
}
