//! A download: a file or folder out as a tar stream.

use super::STALL_LIMIT;
use bytes::Bytes;
use computer_protocol::archive::{chunk_pipe, pack, ArchiveError, Progress};
use computer_protocol::TransferSource;
use futures::{Stream, StreamExt};
use std::io;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// The archive of `source` at `path`, written as the stream is read. The
/// stream ends with an error, never a clean end, when the sending stops
/// early: the session ended (`ended`), a file could not be read, or the
/// host took no data for [`STALL_LIMIT`]. Dropping the stream (the host
/// went away) stops the sending too.
pub fn send(
    path: PathBuf,
    source: TransferSource,
    ended: CancellationToken,
) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
    let stop = ended.child_token();
    let (writer, stream) = chunk_pipe(stop.clone(), Some(STALL_LIMIT));
    tokio::task::spawn_blocking(move || {
        let packed = pack(
            &path,
            &source.name,
            source.kind,
            writer,
            &Progress::default(),
        );
        match packed.and_then(|(writer, _)| {
            writer
                .finish()
                .map_err(|source| ArchiveError::Unsent { source })
        }) {
            Ok(()) => tracing::debug!(path = %path.display(), "download sent"),
            // The host sees a broken stream; this says why.
            Err(e) => tracing::info!(path = %path.display(), "download stopped: {e}"),
        }
    });
    let stop_on_drop = stop.drop_guard();
    stream.map(move |chunk| {
        // Kept until the stream is dropped, which then stops the sending.
        let _ = &stop_on_drop;
        chunk
    })
}
