//! The last few KiB a child wrote to a pipe, so that an error about the
//! child can quote what it said before it failed.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// Bytes kept: enough for the dozen lines an X server prints before it
/// gives up, small enough to keep for every screen.
pub const TAIL_BYTES: usize = 4096;

/// The end of a child's output, filled by a task that reads the pipe until
/// it closes. Reading never stops early: a child blocked on a full pipe would
/// hang.
#[derive(Debug, Clone)]
pub struct OutputTail {
    bytes: Arc<Mutex<VecDeque<u8>>>,
    /// True once the pipe reached its end (the child and its heirs closed it).
    closed: watch::Receiver<bool>,
}

impl Default for OutputTail {
    fn default() -> Self {
        OutputTail {
            bytes: Arc::default(),
            closed: watch::channel(true).1,
        }
    }
}

impl OutputTail {
    /// Reads `pipe` to its end in a task, keeping the last [`TAIL_BYTES`].
    pub fn follow(pipe: impl AsyncRead + Unpin + Send + 'static) -> OutputTail {
        let (closing, closed) = watch::channel(false);
        let tail = OutputTail {
            bytes: Arc::default(),
            closed,
        };
        let filling = tail.clone();
        tokio::spawn(async move {
            let mut pipe = pipe;
            let mut buf = [0u8; 1024];
            while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                filling.push(&buf[..n]);
            }
            let _ = closing.send(true);
        });
        tail
    }

    /// Waits up to `limit` for the pipe to reach its end: a child that just
    /// exited may have last words still in the pipe.
    pub async fn wait_closed(&self, limit: Duration) {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(limit, closed.wait_for(|c| *c)).await;
    }

    fn push(&self, data: &[u8]) {
        let mut bytes = self.bytes.lock();
        bytes.extend(data);
        let excess = bytes.len().saturating_sub(TAIL_BYTES);
        bytes.drain(..excess);
    }

    /// The last `lines` complete or partial lines, trimmed; the first line
    /// kept may have lost its start to the byte limit.
    pub fn last_lines(&self, lines: usize) -> String {
        let bytes = self.bytes.lock();
        let copy: Vec<u8> = bytes.iter().copied().collect();
        drop(bytes);
        let text = String::from_utf8_lossy(&copy);
        let kept: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        kept[kept.len().saturating_sub(lines)..].join("\n")
    }
}

/// What a child said, as one line for an error: its non-empty lines
/// joined with ` | `, or `nothing`.
pub fn one_line(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        "nothing".to_string()
    } else {
        lines.join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes_and_lines() {
        let tail = OutputTail::default();
        for i in 0..1000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert_eq!(tail.bytes.lock().len(), TAIL_BYTES);
        assert_eq!(tail.last_lines(2), "line 998\nline 999");
    }

    #[test]
    fn blank_lines_are_not_counted() {
        let tail = OutputTail::default();
        tail.push(b"first\n\n  \nsecond\n\n");
        assert_eq!(tail.last_lines(2), "first\nsecond");
    }
}
