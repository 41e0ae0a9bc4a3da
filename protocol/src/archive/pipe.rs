//! Bridges between the blocking tar code and async HTTP bodies, with a
//! bounded number of chunks in flight so memory stays small whatever the
//! size of the transfer.
//!
//! Both directions carry an explicit end: a sender that stops without
//! saying so (cancelled, failed, dropped) is an error at the other end, never
//! a short archive that happens to look complete. [`Tracked`] keeps a
//! reader's own error, so the unpacker tells a broken stream from a bad
//! archive.

use bytes::{Bytes, BytesMut};
use futures::Stream;
use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Bytes gathered before a chunk is handed on: large enough that per-chunk
/// costs vanish, small enough that the chunks in flight stay in the low
/// megabytes.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// Chunks queued between the two sides.
pub const CHUNKS_IN_FLIGHT: usize = 8;

enum Piece {
    Data(Bytes),
    End,
    Failed(io::Error),
}

/// The error a side sees when the other stopped without finishing.
#[derive(Debug, thiserror::Error)]
#[error("the other side stopped before the end of the data")]
pub struct Stopped;

fn stopped() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, Stopped)
}

/// A blocking [`Write`] whose bytes come out of the paired [`ChunkStream`].
/// Call [`ChunkWriter::finish`] at the end; dropping it without that makes
/// the stream end with an error.
pub struct ChunkWriter {
    tx: mpsc::Sender<Piece>,
    buffer: BytesMut,
    /// Stops a send that waits on a reader that does not read.
    stop: CancellationToken,
    /// Longest wait for the reader to take a chunk; `None` waits as long as
    /// the reader is there.
    stall: Option<Duration>,
    runtime: tokio::runtime::Handle,
}

/// The async end of a [`ChunkWriter`]: its bytes in chunks, then the end,
/// or an error when the writer stopped without finishing.
pub struct ChunkStream {
    rx: mpsc::Receiver<Piece>,
    ended: bool,
}

/// A writer and the stream of what it writes. `stop` interrupts a writer
/// that waits for the stream to be read; `stall` bounds that wait. Must be
/// called inside a Tokio runtime, whose handle the writer keeps.
pub fn chunk_pipe(stop: CancellationToken, stall: Option<Duration>) -> (ChunkWriter, ChunkStream) {
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let writer = ChunkWriter {
        tx,
        buffer: BytesMut::with_capacity(CHUNK_BYTES),
        stop,
        stall,
        runtime: tokio::runtime::Handle::current(),
    };
    (writer, ChunkStream { rx, ended: false })
}

impl ChunkWriter {
    /// Sends what is buffered and the end. Blocking: call it where the
    /// writing happened, off the async threads.
    pub fn finish(mut self) -> io::Result<()> {
        self.send_buffer()?;
        self.send(Piece::End)
    }

    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = self.buffer.split().freeze();
        self.buffer.reserve(CHUNK_BYTES);
        self.send(Piece::Data(chunk))
    }

    fn send(&self, piece: Piece) -> io::Result<()> {
        let stall = self.stall;
        self.runtime.block_on(async {
            let wait = async {
                match stall {
                    Some(limit) => tokio::time::sleep(limit).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                sent = self.tx.send(piece) => sent.map_err(|_| stopped()),
                _ = self.stop.cancelled() => Err(stopped()),
                _ = wait => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the receiving side took no data for {} s", stall.unwrap_or_default().as_secs()),
                )),
            }
        })
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = CHUNK_BYTES - self.buffer.len();
        let taken = data.len().min(room);
        self.buffer.extend_from_slice(&data[..taken]);
        if self.buffer.len() >= CHUNK_BYTES {
            self.send_buffer()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        // Chunks leave when full or at `finish`; a flush in between would
        // only make them smaller.
        Ok(())
    }
}

impl Stream for ChunkStream {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Piece::Data(chunk))) => Poll::Ready(Some(Ok(chunk))),
            Poll::Ready(Some(Piece::End)) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Piece::Failed(e))) => {
                self.ended = true;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(Some(Err(stopped())))
            }
        }
    }
}

/// The async side that feeds a [`ChunkReader`].
pub struct ChunkFeeder {
    tx: mpsc::Sender<Piece>,
}

/// A blocking [`Read`] of what a [`ChunkFeeder`] sends. It reads the end of
/// the data only when the feeder called [`ChunkFeeder::end`]; a feeder
/// dropped before that is an error.
pub struct ChunkReader {
    rx: mpsc::Receiver<Piece>,
    current: Bytes,
    ended: bool,
}

pub fn feed_pipe() -> (ChunkFeeder, ChunkReader) {
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    (
        ChunkFeeder { tx },
        ChunkReader {
            rx,
            current: Bytes::new(),
            ended: false,
        },
    )
}

/// The reader went away, usually because it stopped on an error of its own.
#[derive(Debug)]
pub struct ReaderGone;

impl ChunkFeeder {
    pub async fn send(&self, chunk: Bytes) -> Result<(), ReaderGone> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.tx
            .send(Piece::Data(chunk))
            .await
            .map_err(|_| ReaderGone)
    }

    /// All data was sent.
    pub async fn end(self) -> Result<(), ReaderGone> {
        self.tx.send(Piece::End).await.map_err(|_| ReaderGone)
    }

    /// The data cannot be completed; the reader fails with `error`.
    pub async fn fail(self, error: io::Error) {
        let _ = self.tx.send(Piece::Failed(error)).await;
    }
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            if self.ended || out.is_empty() {
                return Ok(0);
            }
            match self.rx.blocking_recv() {
                Some(Piece::Data(chunk)) => self.current = chunk,
                Some(Piece::End) => self.ended = true,
                Some(Piece::Failed(e)) => return Err(e),
                None => return Err(stopped()),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current[..n]);
        bytes::Buf::advance(&mut self.current, n);
        Ok(n)
    }
}

/// The reader, remembering its own error so that a failure of the stream
/// is told apart from one of the filesystem or of the archive's format.
pub(super) struct Tracked<R> {
    pub(super) inner: R,
    pub(super) error: Rc<RefCell<Option<io::Error>>>,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.inner.read(out).inspect_err(|e| {
            if e.kind() != io::ErrorKind::Interrupted {
                *self.error.borrow_mut() = Some(io::Error::new(e.kind(), e.to_string()));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test(flavor = "multi_thread")]
    async fn a_finished_writer_ends_the_stream() {
        let (mut writer, mut stream) = chunk_pipe(CancellationToken::new(), None);
        let job = tokio::task::spawn_blocking(move || {
            writer.write_all(&vec![7u8; CHUNK_BYTES + 10])?;
            writer.finish()
        });
        let mut total = 0;
        while let Some(chunk) = stream.next().await {
            total += chunk.expect("no error").len();
        }
        assert_eq!(total, CHUNK_BYTES + 10);
        job.await.unwrap().unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_dropped_writer_is_an_error_not_an_end() {
        let (mut writer, mut stream) = chunk_pipe(CancellationToken::new(), None);
        tokio::task::spawn_blocking(move || {
            writer.write_all(b"half").unwrap();
            drop(writer);
        })
        .await
        .unwrap();
        let last = stream.next().await.expect("an item");
        assert!(last.is_err(), "{last:?}");
        assert!(stream.next().await.is_none());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_stopped_writer_gives_up_on_a_reader_that_does_not_read() {
        let stop = CancellationToken::new();
        let (mut writer, _stream) = chunk_pipe(stop.clone(), None);
        let job = tokio::task::spawn_blocking(move || {
            // More than the pipe holds: blocks until stopped.
            writer.write_all(&vec![0u8; CHUNK_BYTES * (CHUNKS_IN_FLIGHT + 2)])
        });
        stop.cancel();
        let err = job.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_writer_with_a_stall_limit_gives_up() {
        let (mut writer, _stream) =
            chunk_pipe(CancellationToken::new(), Some(Duration::from_millis(200)));
        let job = tokio::task::spawn_blocking(move || {
            writer.write_all(&vec![0u8; CHUNK_BYTES * (CHUNKS_IN_FLIGHT + 2)])
        });
        let err = job.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_reader_sees_the_end_only_when_the_feeder_says_so() {
        let (feeder, mut reader) = feed_pipe();
        let read = tokio::task::spawn_blocking(move || {
            let mut all = Vec::new();
            reader.read_to_end(&mut all).map(|_| all)
        });
        feeder.send(Bytes::from_static(b"abc")).await.unwrap();
        feeder.send(Bytes::from_static(b"def")).await.unwrap();
        feeder.end().await.unwrap();
        assert_eq!(read.await.unwrap().unwrap(), b"abcdef");

        let (feeder, mut reader) = feed_pipe();
        let read = tokio::task::spawn_blocking(move || {
            let mut all = Vec::new();
            reader.read_to_end(&mut all)
        });
        feeder.send(Bytes::from_static(b"abc")).await.unwrap();
        drop(feeder);
        let err = read.await.unwrap().unwrap_err();
        assert!(err.get_ref().is_some_and(|e| e.is::<Stopped>()), "{err}");
    }
}
