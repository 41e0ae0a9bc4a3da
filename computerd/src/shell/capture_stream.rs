//! Reading one output pipe of a command into a bounded head/tail buffer.

use crate::truncate::{HeadTail, Shortened};
use computer_protocol::limits::KEEP_HEAD_TAIL_BYTES;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes read from the pipe per call.
const CHUNK_BYTES: usize = 16 * 1024;

/// One pipe and what was read from it. What was read stays here when a
/// [`drain`](Self::drain) is cancelled, so a caller can stop reading at any
/// point (deadline, grace period) and keep the output.
pub(super) struct StreamCapture<R> {
    reader: R,
    kept: HeadTail,
    /// The writer side closed (or reading failed): nothing more will come.
    done: bool,
}

impl<R: AsyncRead + Unpin> StreamCapture<R> {
    pub(super) fn new(reader: R) -> Self {
        StreamCapture {
            reader,
            kept: HeadTail::new(KEEP_HEAD_TAIL_BYTES),
            done: false,
        }
    }

    /// Reads until end of file. Cancel-safe: `read` takes no bytes from the
    /// pipe unless it returns them, and each chunk is stored before the next
    /// await.
    pub(super) async fn drain(&mut self) {
        let mut chunk = vec![0u8; CHUNK_BYTES];
        while !self.done {
            match self.reader.read(&mut chunk).await {
                Ok(0) => self.done = true,
                Ok(read) => self.kept.push(&chunk[..read]),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => {
                    tracing::warn!(error = %err, "reading a command's output failed; keeping what was read");
                    self.done = true;
                }
            }
        }
    }

    pub(super) fn finish(self) -> Shortened {
        self.kept.finish()
    }
}
