//! One command from spawn to result.

use super::capture_stream::StreamCapture;
use super::process;
use super::{ShellError, ShellSpec};
use computer_protocol::ShellResult;
use std::convert::Infallible;
use std::time::Duration;
use tokio::time::Instant;

/// How long output is still read after `bash` exited. A background job
/// started without redirecting its output (`server &`) keeps the pipes open
/// for as long as it runs; waiting for end of file would hang the call until
/// it ends. What such a job prints in this window is kept, the rest is not
/// read, and the job keeps running.
pub const EXIT_GRACE: Duration = Duration::from_millis(300);

/// Most time spent reaping `bash` after it was sent SIGKILL. It dies at once;
/// this only guards against a kernel that does not deliver.
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// Runs `bash -lc <command>` and returns its exit code and output. A non-zero
/// exit is a result, not an error. On timeout everything the command started
/// is killed (see `process`) and the output printed until then is returned
/// with `timed_out: true` and no exit code.
///
/// Dropping the returned future before it completes kills the command too.
pub async fn run(spec: ShellSpec) -> Result<ShellResult, ShellError> {
    let started = Instant::now();
    let deadline = started + spec.timeout;
    let (mut child, tree) = process::spawn(&spec)?;
    let mut stdout = StreamCapture::new(child.stdout.take().expect("stdout is piped"));
    let mut stderr = StreamCapture::new(child.stderr.take().expect("stderr is piped"));

    let exited = {
        // Read both pipes while waiting, or a command printing more than a
        // pipe holds would block forever. This future never completes by
        // itself; it is dropped when bash exits or time runs out.
        let reading = async {
            tokio::join!(stdout.drain(), stderr.drain());
            std::future::pending::<Infallible>().await
        };
        tokio::select! {
            status = child.wait() => Some(status),
            () = tokio::time::sleep_until(deadline) => None,
            never = reading => match never {},
        }
    };

    let (exit_code, timed_out, survivors) = match exited {
        Some(status) => {
            let status = status.map_err(ShellError::Wait)?;
            tree.release();
            // None when bash itself was killed by a signal.
            (status.code(), false, 0)
        }
        None => {
            let survivors = tree.kill().await;
            if tokio::time::timeout(REAP_LIMIT, child.wait())
                .await
                .is_err()
            {
                tracing::warn!("bash did not exit within {REAP_LIMIT:?} of SIGKILL");
            }
            (None, true, survivors)
        }
    };

    // Killed or exited, the pipes normally close now; the grace covers a
    // job that still holds them (see EXIT_GRACE).
    let _ = tokio::time::timeout(EXIT_GRACE, async {
        tokio::join!(stdout.drain(), stderr.drain())
    })
    .await;

    Ok(ShellResult {
        exit_code,
        duration_ms: started.elapsed().as_millis() as u64,
        timed_out,
        survivors: u32::try_from(survivors).unwrap_or(u32::MAX),
        oom_kills: 0,
        memory_limit: None,
        stdout: stdout.finish().into_text(),
        stderr: stderr.finish().into_text(),
        network_denials: Vec::new(),
    })
}
