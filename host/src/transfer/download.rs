//! `from_computer`: computerd's tar stream unpacked into host files.

use super::error::TransferError;
use super::paths::ends_with_separator;
use super::source_name::check_source_name;
use super::{HostFiles, Job};
use crate::error_chain::describe;
use computer_protocol::archive::{
    feed_pipe, plan_at, unpack, ChunkFeeder, Destination, UnpackOptions,
};
use computer_protocol::endpoints::{
    Endpoint, TransferDownload, TransferSource as TransferSourceRoute,
};
use computer_protocol::{SourceRequest, TransferSource, TransferSummary};
use std::io;

/// What a failed request leaves behind.
const NOTHING_WRITTEN: &str = "nothing was written on this machine; try again";

pub(super) async fn from_computer(
    job: &Job<'_>,
) -> Result<(String, TransferSummary), TransferError> {
    let asked = SourceRequest {
        path: job.req.computer_path.clone(),
    };
    let source: TransferSource = job
        .client
        .send::<TransferSourceRoute>(job.session, &asked, job.stall.0, NOTHING_WRITTEN)
        .await?;

    // Refusals come before any data moves. Only the name the agent typed
    // may decide what is written on the host.
    check_source_name(&job.req.computer_path, &source)?;
    let typed = &job.req.host_path;
    // Written from here on through the located folder's handle only.
    let (located, destination) = job.host_files.locate_destination(typed)?;
    let target = {
        let (source, trailing_slash, overwrite) = (
            source.clone(),
            ends_with_separator(typed),
            job.req.overwrite,
        );
        crate::blocking::run(move || {
            plan_at(
                &located,
                &Destination {
                    path: &destination,
                    trailing_slash,
                    name: &source.name,
                    kind: source.kind,
                    overwrite,
                    windows_names: UnpackOptions::for_this_os().windows_names,
                    arg: "host_path",
                },
            )
        })
        .await?
    };

    let route = TransferDownload::path(job.session);
    // The absolute path, so a working folder changed meanwhile cannot
    // change what is sent.
    let exact = SourceRequest {
        path: source.path.clone(),
    };
    let request = job
        .client
        .streaming::<TransferDownload>(job.session)
        .json(&exact)
        .send();
    let response = match tokio::time::timeout(job.stall.0, request).await {
        Err(_) => {
            return Err(TransferError::NoAnswer {
                secs: job.stall.secs(),
            })
        }
        Ok(Err(e)) => {
            return Err(job
                .client
                .transport_error(e, &route, job.stall.0, NOTHING_WRITTEN)
                .into())
        }
        Ok(Ok(response)) => response,
    };
    if !response.status().is_success() {
        return Err(job
            .client
            .error_of(&route, response, job.stall.0)
            .await
            .into());
    }

    // Beneath a root, what its folder holds already counts against the
    // quota; a full folder takes nothing.
    let room = match job.host_files {
        HostFiles::Beneath(root) => root.room().await?,
        _ => None,
    };
    if let Some(room) = room.as_ref().filter(|room| room.left() == 0) {
        return Err(TransferError::QuotaReached {
            room: room.clone(),
            done: Default::default(),
        });
    }

    let (feeder, reader) = feed_pipe();
    let options = UnpackOptions {
        confined: matches!(job.host_files, HostFiles::Beneath(_)),
        ..UnpackOptions::for_this_os()
    };
    let unpacking = tokio::task::spawn_blocking({
        let progress = std::sync::Arc::clone(&job.progress);
        move || unpack(reader, &target, options, &progress)
    });
    let pumped = pump(job, response, feeder, room.as_ref().map(|r| r.left())).await;
    // Dropping the feeder (above, on any failure) has made the unpacking
    // stop and remove its temporary file; its result says how far it got.
    let unpacked = crate::blocking::join(unpacking).await;
    match (pumped, unpacked) {
        (Ok(()), Ok(summary)) => Ok((source.path, summary)),
        (Err(Pumped::QuotaReached), _) => Err(TransferError::QuotaReached {
            room: room.expect("only a root has a quota"),
            done: job.progress.done(),
        }),
        // The host's own failure (a conflict partway, a full disk) is the
        // story even though the pump then saw the reader go.
        (_, Err(e)) if !matches!(e, computer_protocol::archive::ArchiveError::Stream { .. }) => {
            Err(e.into())
        }
        (Err(Pumped::Stalled), _) => Err(TransferError::Stalled {
            secs: job.stall.secs(),
            done: job.progress.done(),
        }),
        (Err(Pumped::Broken(e)), _) => Err(job
            .broken::<TransferSourceRoute>(&exact, NOTHING_WRITTEN, e)
            .await),
        (Ok(()), Err(e)) => Err(e.into()),
    }
}

enum Pumped {
    Stalled,
    Broken(reqwest::Error),
    /// The files written reached the bytes the root's quota had left.
    QuotaReached,
}

/// Moves the response body into the unpacking, each step bounded by the
/// stall limit: waiting for the computer's next chunk, and waiting for the
/// host's disk to take it. With `room`, it stops once the files written
/// reach that many bytes (within a few chunks: the unpacking counts them).
async fn pump(
    job: &Job<'_>,
    mut response: reqwest::Response,
    feeder: ChunkFeeder,
    room: Option<u64>,
) -> Result<(), Pumped> {
    let limit = job.stall.0;
    loop {
        if room.is_some_and(|room| job.progress.done().bytes >= room) {
            feeder
                .fail(io::Error::other("the folder's quota is reached"))
                .await;
            return Err(Pumped::QuotaReached);
        }
        let chunk = match tokio::time::timeout(limit, response.chunk()).await {
            Err(_) => {
                feeder.fail(stalled(limit)).await;
                return Err(Pumped::Stalled);
            }
            Ok(Err(e)) => {
                feeder
                    .fail(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        describe(&e),
                    ))
                    .await;
                return Err(Pumped::Broken(e));
            }
            Ok(Ok(None)) => {
                // A reader gone by now failed on its own; its error tells.
                let _ = feeder.end().await;
                return Ok(());
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        match tokio::time::timeout(limit, feeder.send(chunk)).await {
            Ok(Ok(())) => {}
            // The unpacking stopped on an error of its own.
            Ok(Err(_)) => return Ok(()),
            Err(_) => return Err(Pumped::Stalled),
        }
    }
}

fn stalled(limit: std::time::Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("no data arrived for {} s", limit.as_secs()),
    )
}
