//! Waiting on a concrete condition with a deadline, never a bare sleep.
//!
//! The async waits count time on tokio's clock, so a test that pauses time
//! (`tokio::time::pause`, `#[tokio::test(start_paused = true)]`) reaches its
//! deadline as time is advanced; outside such a test tokio's clock is the
//! real one. [`wait_until_blocking`] is for tests without a runtime.

use std::future::Future;
use std::time::Duration;

/// How often [`wait_until`] checks: its checks are requests to a server, a
/// screen or a process, cheap enough to repeat this often.
const ASYNC_EVERY: Duration = Duration::from_millis(50);
/// How often [`wait_until_blocking`] checks: an X request or a file read,
/// in tests that wait for a screen to show a change.
const BLOCKING_EVERY: Duration = Duration::from_millis(10);

/// Polls `check` every 50 ms until it gives `Some`, or panics naming `what`
/// after `limit`.
pub async fn wait_until<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = tokio::time::Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(started.elapsed() < limit, "{}", timed_out(what, limit));
        tokio::time::sleep(ASYNC_EVERY).await;
    }
}

/// Checks `holds` every `every` until it is true, or panics naming `what`
/// after `limit`. For a condition read at once (a counter, a file, a
/// `docker exec`) whose cost decides how often to ask.
pub async fn wait_until_holds(
    what: &str,
    limit: Duration,
    every: Duration,
    mut holds: impl FnMut() -> bool,
) {
    let started = tokio::time::Instant::now();
    while !holds() {
        assert!(started.elapsed() < limit, "{}", timed_out(what, limit));
        tokio::time::sleep(every).await;
    }
}

/// Polls `check` every 10 ms, blocking the thread, until it gives `Some`,
/// or panics naming `what` after `limit`.
pub fn wait_until_blocking<T>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(started.elapsed() < limit, "{}", timed_out(what, limit));
        std::thread::sleep(BLOCKING_EVERY);
    }
}

fn timed_out(what: &str, limit: Duration) -> String {
    format!("timed out after {limit:?} waiting for {what}")
}
