//! `to_computer`: host files packed as tar and streamed up to computerd.

use super::error::TransferError;
use super::stall::{Movement, Stall};
use super::Job;
use crate::client::ClientError;
use bytes::Bytes;
use computer_protocol::archive::{chunk_pipe, describe_source_at, pack_at, ArchiveError};
use computer_protocol::endpoints::{Endpoint, TransferCheck, TransferUpload};
use computer_protocol::{TransferSummary, UploadRequest, UploadTarget};
use futures::{Stream, StreamExt};
use std::io;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What a failed check leaves behind.
const NOTHING_WRITTEN: &str = "nothing was written; try again";

pub(super) async fn to_computer(job: &Job<'_>) -> Result<(String, TransferSummary), TransferError> {
    let typed = &job.req.host_path;
    let (located, source) = job.host_files.locate_source(typed)?;
    // Read from here on through the located folder's handle only.
    let located = Arc::new(located);
    let described = {
        let (located, source) = (Arc::clone(&located), source.clone());
        crate::blocking::run(move || describe_source_at(&located, &source, "host_path")).await?
    };
    let (name, kind) = described;
    let upload = UploadRequest {
        path: job.req.computer_path.clone(),
        name: name.clone(),
        kind,
        overwrite: job.req.overwrite,
    };

    // Refusals come before any data moves.
    let _: UploadTarget = job
        .client
        .send::<TransferCheck>(job.session, &upload, job.stall.0, NOTHING_WRITTEN)
        .await?;

    // Stops the packing however this future ends: finished, failed, or
    // dropped because the call was cancelled.
    let stop = CancellationToken::new();
    let _stop_on_drop = stop.clone().drop_guard();
    let (writer, chunks) = chunk_pipe(stop.clone(), None);
    let packing = tokio::task::spawn_blocking({
        let (source, progress) = (source.clone(), Arc::clone(&job.progress));
        move || {
            let (writer, _) = pack_at(&located, &source, &name, kind, writer, &progress)?;
            writer
                .finish()
                .map_err(|source| ArchiveError::Unsent { source })
        }
    });
    let movement = Arc::new(Movement::default());
    let body = reqwest::Body::wrap_stream(watched(chunks, Arc::clone(&movement)));
    let route = TransferUpload::path(job.session);
    let send = job
        .client
        .streaming::<TransferUpload>(job.session)
        .query(&upload)
        .body(body)
        .send();
    let sent = tokio::select! {
        sent = send => sent,
        stall = movement.stalled(job.stall.0) => {
            stop.cancel();
            return Err(match stall {
                Stall::NoData => TransferError::Stalled { secs: job.stall.secs(), done: job.progress.done() },
                Stall::NoAnswer => TransferError::NoAnswer { secs: job.stall.secs() },
            });
        }
    };
    let response = match sent {
        Ok(response) => response,
        Err(e) => {
            // The body broke off: the host's side failing is the better
            // explanation, then the session having ended.
            stop.cancel();
            if let Err(packed) = crate::blocking::join(packing).await {
                if !matches!(packed, ArchiveError::Unsent { .. }) {
                    return Err(packed.into());
                }
            }
            return Err(job
                .broken::<TransferCheck>(&upload, NOTHING_WRITTEN, e)
                .await);
        }
    };
    if !response.status().is_success() {
        // computerd answers a refusal at once, while the body may still be
        // streaming; stop it.
        stop.cancel();
        return Err(job
            .client
            .error_of(&route, response, job.stall.0)
            .await
            .into());
    }
    let summary: TransferSummary = match job
        .client
        .json_of::<TransferUpload>(&route, response, job.stall.0, NOTHING_WRITTEN)
        .await
    {
        Ok(summary) => summary,
        Err(ClientError::Timeout { .. }) => {
            return Err(TransferError::NoAnswer {
                secs: job.stall.secs(),
            })
        }
        Err(e) => return Err(e.into()),
    };
    crate::blocking::join(packing).await?;
    Ok((source.display().to_string(), summary))
}

/// The chunks, noting each one reqwest takes and the end.
fn watched(
    chunks: impl Stream<Item = io::Result<Bytes>> + Send + 'static,
    movement: Arc<Movement>,
) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
    let at_end = Arc::clone(&movement);
    chunks
        .inspect(move |_| movement.moved())
        .chain(futures::stream::poll_fn(move |_| {
            at_end.sent_all();
            std::task::Poll::Ready(None)
        }))
}
