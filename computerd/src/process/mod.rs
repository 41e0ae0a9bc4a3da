//! Supervised child processes (Xvnc, Fluxbox). A task waits on each child so
//! that it is reaped the moment it exits and its exit is known to everyone
//! holding the handle; stopping sends SIGTERM, then SIGKILL after a grace.
//! A handle dropped without `stop` kills its child: a cancelled start must
//! not leave an X server behind that holds its display.
//!
//! `table` reads the machine's process table from `/proc`.

mod output_tail;
mod table;

pub use output_tail::{one_line, OutputTail};
pub use table::{command_line, process_entry, process_table, start_time, ProcessEntry};

use std::future::Future;
use std::time::Duration;
use tokio::process::Command;
use tokio::sync::watch;

/// A running child and the news of its exit.
#[derive(Debug)]
pub struct Supervised {
    pub name: String,
    pub pid: i32,
    /// `None` while running, then a description of how it exited.
    exit: watch::Receiver<Option<String>>,
    /// What the child wrote to stderr, when the command piped it.
    stderr: Option<OutputTail>,
}

impl Supervised {
    /// Spawns `command` and starts watching it. When the command pipes
    /// stderr, its last lines are kept for [`Supervised::stderr_tail`].
    /// `kill_on_drop` is not used: children are stopped explicitly so that
    /// their exit can be awaited.
    pub fn spawn(name: &str, mut command: Command) -> std::io::Result<Supervised> {
        let mut child = command.spawn()?;
        let pid = child.id().map(|p| p as i32).unwrap_or(0);
        let stderr = child.stderr.take().map(OutputTail::follow);
        let (tx, rx) = watch::channel(None);
        let label = name.to_string();
        tokio::spawn(async move {
            let description = match child.wait().await {
                Ok(status) => status.to_string(),
                Err(e) => format!("could not be waited for: {e}"),
            };
            tracing::debug!(child = %label, pid, %description, "child exited");
            let _ = tx.send(Some(description));
        });
        Ok(Supervised {
            name: name.to_string(),
            pid,
            exit: rx,
            stderr,
        })
    }

    /// How the child exited, or `None` while it runs.
    pub fn exit_status(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// The last `lines` lines the child wrote to stderr (empty when it was
    /// not piped or the child said nothing).
    pub fn stderr_tail(&self, lines: usize) -> String {
        self.stderr
            .as_ref()
            .map(|tail| tail.last_lines(lines))
            .unwrap_or_default()
    }

    /// The last `lines` lines of stderr once the child has exited: waits
    /// (up to `limit`) for what is still in the pipe.
    pub async fn last_words(&self, lines: usize, limit: Duration) -> String {
        if let Some(tail) = &self.stderr {
            tail.wait_closed(limit).await;
        }
        self.stderr_tail(lines)
    }

    /// Resolves once the child has exited (or its watcher is gone).
    pub fn exited(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.exit.clone();
        async move {
            let _ = rx.wait_for(|e| e.is_some()).await;
        }
    }

    /// Waits up to `wait` for the child to exit on its own.
    pub async fn wait_exit(&self, wait: Duration) -> Option<String> {
        let mut rx = self.exit.clone();
        let done = tokio::time::timeout(wait, rx.wait_for(|e| e.is_some())).await;
        match done {
            Ok(Ok(status)) => status.clone(),
            _ => None,
        }
    }

    /// SIGTERM, then SIGKILL if the child is still there after `grace`.
    pub async fn stop(&self, grace: Duration) {
        if self.exit_status().is_some() || self.pid <= 0 {
            return;
        }
        // SAFETY: kill(2) with a pid we spawned and a valid signal number.
        unsafe { libc::kill(self.pid, libc::SIGTERM) };
        if self.wait_exit(grace).await.is_none() {
            self.kill();
            self.wait_exit(Duration::from_secs(5)).await;
        }
    }

    /// SIGKILL now, without waiting.
    pub fn kill(&self) {
        if self.exit_status().is_some() || self.pid <= 0 {
            return;
        }
        // SAFETY: kill(2) with a pid we spawned, not yet reaped (its exit was
        // not reported), and a valid signal number.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
    }
}

impl Drop for Supervised {
    /// The fallback when `stop` was never called (a start cut short, a
    /// screen dropped without `close`): the child must not outlive its handle.
    fn drop(&mut self) {
        if self.exit_status().is_none() && self.pid > 0 {
            tracing::warn!(child = %self.name, pid = self.pid, "killing a child that was not stopped");
            self.kill();
        }
    }
}
