//! Blocking work (files, archives, X connections of their own) off the
//! async threads, with its panic carried on in the caller as if the work
//! had run inline.

use tokio::task::JoinHandle;

/// Runs `f` on tokio's blocking pool and returns what it returns.
pub async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    join(tokio::task::spawn_blocking(f)).await
}

/// Waits for work started with `tokio::task::spawn_blocking`.
pub async fn join<T>(handle: JoinHandle<T>) -> T {
    handle
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}
