//! A session's file transfers: the checks before any data moves, and the
//! two streaming directions, each running as the session's work.
//! [`crate::transfer`] reads and writes the tar streams.

use super::JobError;
use crate::sessions::{Session, Sessions};
use crate::transfer::{self, TransferError};
use bytes::Bytes;
use computer_protocol::{
    SourceRequest, TransferSource, TransferSummary, UploadRequest, UploadTarget,
};
use futures::{Stream, StreamExt};
use std::path::Path;
use std::sync::Arc;

/// Where an upload of `req` would land, and whether something is there.
pub async fn check_upload(
    home: &Path,
    session: &Arc<Session>,
    req: UploadRequest,
) -> Result<UploadTarget, JobError> {
    Ok(session
        .in_folders(home, move |home, cwd| {
            transfer::check_upload(&home, &cwd, &req)
        })
        .await?)
}

/// What a download of `req` would send.
pub async fn describe_source(
    home: &Path,
    session: &Arc<Session>,
    req: SourceRequest,
) -> Result<TransferSource, JobError> {
    let (_, source) = session
        .in_folders(home, move |home, cwd| transfer::describe(&home, &cwd, &req))
        .await?;
    Ok(source)
}

/// Unpacks the tar stream `body` as `req` says.
pub async fn upload<S, E>(
    sessions: &Sessions,
    home: &Path,
    session: &Arc<Session>,
    req: UploadRequest,
    body: S,
) -> Result<TransferSummary, JobError>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let running = session.command_started(&format!("to_computer {}", req.path));
    // A hold that began since the caller's check missed this transfer.
    session.check_free()?;
    let received = transfer::receive(
        home.to_path_buf(),
        session.cwd(),
        req,
        body,
        running.stopped(),
    )
    .await;
    received.map_err(|e| explain(sessions, session, e))
}

/// The tar stream of what `req` names; the session counts as running it
/// until the stream is dropped.
pub async fn download(
    home: &Path,
    session: &Arc<Session>,
    req: SourceRequest,
) -> Result<impl Stream<Item = std::io::Result<Bytes>> + Send + 'static, JobError> {
    let (path, source) = session
        .in_folders(home, move |home, cwd| transfer::describe(&home, &cwd, &req))
        .await?;
    let running = session.command_started(&format!("from_computer {}", path.display()));
    // A hold that began since the caller's check missed this transfer.
    session.check_free()?;
    Ok(
        transfer::send(path, source, running.stopped()).map(move |chunk| {
            let _ = &running;
            chunk
        }),
    )
}

/// A transfer that stopped because its session ended, or a person took its
/// screen, says which, as any call on an ended session does.
fn explain(sessions: &Sessions, session: &Arc<Session>, error: TransferError) -> JobError {
    match error {
        TransferError::SessionEnded => sessions.why_stopped(session).into(),
        other => other.into(),
    }
}
