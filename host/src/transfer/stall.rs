//! The stall rules. A transfer has no total time limit: a terabyte may take
//! hours. It fails instead when no data moves for the limit, or when the
//! computer does not answer within the limit after the last data was sent.

use crate::settings::Env;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// Test-only: the stall limit in whole seconds instead of 60, so that tests
/// of a stalled transfer do not wait a minute. Not a user setting.
pub const STALL_SECS_VAR: &str = "COMPUTER_USE_TRANSFER_STALL_SECS";

const DEFAULT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallLimit(pub Duration);

impl StallLimit {
    /// 60 s, unless [`STALL_SECS_VAR`] holds a whole number of seconds.
    pub fn from_env(env: &Env) -> StallLimit {
        let secs = env
            .get(STALL_SECS_VAR)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| *s > 0);
        StallLimit(secs.map_or(DEFAULT, Duration::from_secs))
    }

    pub fn secs(self) -> u64 {
        self.0.as_secs()
    }
}

/// When data last moved, written by the stream that moves it and watched by
/// [`Movement::stalled`].
#[derive(Debug)]
pub struct Movement {
    start: Instant,
    /// Milliseconds from `start` to the last movement.
    last: AtomicU64,
    /// All data was sent; what remains is the computer's answer.
    sent_all: AtomicBool,
}

/// Which rule a stalled transfer broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// No data moved.
    NoData,
    /// Everything was sent and no answer came.
    NoAnswer,
}

impl Default for Movement {
    fn default() -> Self {
        Movement {
            start: Instant::now(),
            last: AtomicU64::new(0),
            sent_all: AtomicBool::new(false),
        }
    }
}

impl Movement {
    pub fn moved(&self) {
        let now = self.start.elapsed().as_millis() as u64;
        self.last.fetch_max(now, Ordering::Relaxed);
    }

    pub fn sent_all(&self) {
        self.moved();
        self.sent_all.store(true, Ordering::Relaxed);
    }

    /// Resolves once nothing moved for `limit`. Sleeps until the moment the
    /// limit would run out and looks again, rather than polling.
    pub async fn stalled(&self, limit: Duration) -> Stall {
        loop {
            let last = self.start + Duration::from_millis(self.last.load(Ordering::Relaxed));
            let deadline = last + limit;
            if Instant::now() >= deadline {
                return if self.sent_all.load(Ordering::Relaxed) {
                    Stall::NoAnswer
                } else {
                    Stall::NoData
                };
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_limit_is_a_minute_unless_a_test_shortens_it() {
        let mut env = Env::new();
        assert_eq!(StallLimit::from_env(&env).0, Duration::from_secs(60));
        env.insert(STALL_SECS_VAR.into(), "3".into());
        assert_eq!(StallLimit::from_env(&env).0, Duration::from_secs(3));
        env.insert(STALL_SECS_VAR.into(), "0".into());
        assert_eq!(StallLimit::from_env(&env).0, Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn movement_keeps_a_transfer_alive_and_silence_stops_it() {
        let movement = Arc::new(Movement::default());
        let limit = Duration::from_secs(60);
        let watch = tokio::spawn({
            let movement = Arc::clone(&movement);
            async move { movement.stalled(limit).await }
        });
        // Data every 50 s for ten minutes: never 60 s of silence.
        for _ in 0..12 {
            tokio::time::sleep(Duration::from_secs(50)).await;
            assert!(!watch.is_finished());
            movement.moved();
        }
        movement.sent_all();
        let started = Instant::now();
        assert_eq!(watch.await.unwrap(), Stall::NoAnswer);
        assert_eq!(started.elapsed(), limit);

        let quiet = Movement::default();
        assert_eq!(quiet.stalled(limit).await, Stall::NoData);
    }
}
