//! An upload: the request body's tar stream written at its destination.

use super::check::upload_target;
use super::error::TransferError;
use super::STALL_LIMIT;
use bytes::Bytes;
use computer_protocol::archive::{feed_pipe, unpack, ChunkFeeder, Progress, UnpackOptions};
use computer_protocol::{TransferSummary, UploadRequest};
use futures::{Stream, StreamExt};
use std::fmt::Display;
use std::io;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// After a refusal, how long the rest of an upload is read and thrown away.
/// Reading it lets the host see the answer: a server that closes a
/// connection with unread data resets it, and the answer can be lost.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// Checks the destination again (it may have changed since the check
/// route), then writes `body` there. Stops, removing its temporary files,
/// when `ended` is cancelled or no data arrives for [`STALL_LIMIT`].
pub async fn receive<S, E>(
    home: PathBuf,
    cwd: PathBuf,
    req: UploadRequest,
    mut body: S,
    ended: CancellationToken,
) -> Result<TransferSummary, TransferError>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Display,
{
    let checked = crate::blocking::run(move || upload_target(&home, &cwd, &req)).await;
    let target = match checked {
        Ok(target) => target,
        Err(e) => {
            drain_later(body);
            return Err(e);
        }
    };
    let (feeder, reader) = feed_pipe();
    let job = tokio::task::spawn_blocking(move || {
        unpack(
            reader,
            &target,
            UnpackOptions::default(),
            &Progress::default(),
        )
    });
    let pumped = tokio::select! {
        pumped = pump(&mut body, feeder) => Some(pumped),
        // Dropping the feeder stops the unpacking, which removes its
        // temporary file.
        () = ended.cancelled() => None,
    };
    let result = crate::blocking::join(job).await;
    match (result, pumped) {
        (_, None) => {
            drain_later(body);
            Err(TransferError::SessionEnded)
        }
        (Ok(summary), _) => Ok(summary),
        (Err(e), Some(Pumped::ReaderGone)) => {
            drain_later(body);
            Err(e.into())
        }
        (Err(e), Some(_)) => Err(e.into()),
    }
}

enum Pumped {
    /// The body ended and the reader was told.
    Ended,
    /// The body failed or stalled; the reader was told.
    Failed,
    /// The reader stopped first, on an error of its own.
    ReaderGone,
}

/// Moves the body into the pipe, chunk by chunk, as fast as the unpacking
/// takes them.
async fn pump<S, E>(body: &mut S, feeder: ChunkFeeder) -> Pumped
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Display,
{
    loop {
        match tokio::time::timeout(STALL_LIMIT, body.next()).await {
            Err(_) => {
                feeder
                    .fail(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no data arrived for {} s", STALL_LIMIT.as_secs()),
                    ))
                    .await;
                return Pumped::Failed;
            }
            Ok(None) => {
                return match feeder.end().await {
                    Ok(()) => Pumped::Ended,
                    Err(_) => Pumped::ReaderGone,
                }
            }
            Ok(Some(Err(e))) => {
                feeder
                    .fail(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("the upload broke off: {e}"),
                    ))
                    .await;
                return Pumped::Failed;
            }
            Ok(Some(Ok(chunk))) => {
                if feeder.send(chunk).await.is_err() {
                    return Pumped::ReaderGone;
                }
            }
        }
    }
}

/// Reads what is left of `body` in the background and throws it away.
fn drain_later<S, E>(mut body: S)
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
{
    tokio::spawn(async move {
        let _ = tokio::time::timeout(DRAIN_LIMIT, async {
            while let Some(Ok(_)) = body.next().await {}
        })
        .await;
    });
}
