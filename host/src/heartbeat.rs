//! Keeps an agent's sessions alive with a heartbeat every 10 s (a third of
//! `COMPUTER_USE_HEARTBEAT_WINDOW` when that is set shorter than 30 s), and
//! ends them all at once when the agent goes away. Each beat first asks Docker
//! where the computer's API is now (see [`crate::link`]), so the token never
//! goes to a port a restart left behind.

use crate::link::{Link, CONFIRMED_FOR};
use computer_protocol::endpoints::{EndOwnerSessions, Heartbeat, NoBody};
use computer_protocol::OwnerId;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// computerd ends an owner's sessions 30 s after its last heartbeat by
/// default, so three beats may be lost before anything ends. Also the
/// longest pace: a beat must find its tunnel connection still pooled.
pub const INTERVAL: Duration = Duration::from_secs(10);
/// How long shutdown waits for computerd to end the sessions.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// Beats for `owner` until the task is aborted, at the pace the process's
/// heartbeat window asks for. A window setting that is wrong beats at the
/// default pace: `start_computer` refuses it before any session exists.
pub async fn run(link: Arc<Link>, owner: OwnerId) {
    let window = crate::settings::heartbeat_window(&crate::settings::process_env())
        .ok()
        .flatten()
        .unwrap_or(crate::settings::DEFAULT_HEARTBEAT_WINDOW);
    every(pace(window), || beat(&link, &owner)).await
}

/// Three beats to a window, and never slower than [`INTERVAL`].
fn pace(window: Duration) -> Duration {
    (window / 3).min(INTERVAL)
}

/// Runs `beat` at once, then [`INTERVAL`] after each start. A beat that
/// outlasts the interval (Docker slow to answer the check) is followed by
/// the next at once and the pace resumes from there: late beats are not
/// sent in a burst, which would only repeat the same news.
async fn every<F, Fut>(interval: Duration, mut beat: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        beat().await;
    }
}

/// One heartbeat, once Docker confirms where the computer's API is; nothing
/// while this process has no computer.
async fn beat(link: &Link, owner: &OwnerId) {
    if link.connection().is_none() {
        return;
    }
    let conn = match link.confirmed("heartbeat", Duration::ZERO).await {
        Ok(conn) => conn,
        Err(why) => {
            tracing::warn!("no heartbeat sent: {why}");
            return;
        }
    };
    let sent = conn
        .client
        .send::<Heartbeat>(owner, &NoBody {}, INTERVAL, "nothing")
        .await;
    if let Err(e) = sent {
        tracing::warn!("heartbeat failed: {e}");
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
        tracing::warn!("the sessions of `{}` were not ended (the computer's API could not be confirmed); they end by themselves within the heartbeat window (`COMPUTER_USE_HEARTBEAT_WINDOW`, 30 s unless set)", owner.0);
        return;
    };
    let ended = conn
        .client
        .send::<EndOwnerSessions>(
            owner,
            &NoBody {},
            SHUTDOWN_WAIT,
            "the sessions end by themselves within the heartbeat window",
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

/// The beat's pace on tokio's paused clock: each test runs minutes of beats
/// at once, and the times are exact.
#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use tokio::time::{sleep, Instant};

    /// Runs `every(INTERVAL, ..)` for `run_for` with beats that each take
    /// `takes(n)` for the n-th; returns when each beat started, in seconds
    /// from the start.
    async fn beats(run_for: Duration, takes: impl Fn(usize) -> Duration) -> Vec<u64> {
        let started = Instant::now();
        let starts = Mutex::new(Vec::new());
        let beating = every(INTERVAL, || {
            let n = {
                let mut starts = starts.lock();
                starts.push(started.elapsed().as_secs());
                starts.len()
            };
            sleep(takes(n))
        });
        let _ = tokio::time::timeout(run_for, beating).await;
        starts.into_inner()
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_beat_goes_at_once_then_one_every_10_s() {
        let starts = beats(Duration::from_secs(45), |_| Duration::ZERO).await;
        assert_eq!(starts, [0, 10, 20, 30, 40]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_beat_delays_the_next_instead_of_a_burst_of_late_ones() {
        // The second beat waits 25 s on Docker: the third goes as it ends,
        // and the pace resumes from there.
        let slow = |n| match n {
            2 => Duration::from_secs(25),
            _ => Duration::from_secs(1),
        };
        let starts = beats(Duration::from_secs(60), slow).await;
        assert_eq!(starts, [0, 10, 35, 45, 55]);
    }

    #[test]
    fn three_beats_go_in_a_window_and_never_fewer_than_one_in_10_s() {
        assert_eq!(pace(Duration::from_secs(30)), INTERVAL);
        assert_eq!(pace(Duration::from_secs(6)), Duration::from_secs(2));
        assert_eq!(pace(Duration::from_secs(3)), Duration::from_secs(1));
        assert_eq!(pace(Duration::from_secs(3600)), INTERVAL);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_computer_a_beat_sends_nothing() {
        let link = Link::new();
        let owner = OwnerId("agent".into());
        let beat = tokio::time::timeout(Duration::from_millis(1), beat(&link, &owner));
        beat.await
            .expect("returns at once: nothing to confirm or send");
    }
}
