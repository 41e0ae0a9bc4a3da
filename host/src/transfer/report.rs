//! What the agent gets back from a transfer.

use computer_protocol::archive::human_bytes;
use computer_protocol::{Skipped, TransferDirection, TransferSummary};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// Skipped entries spelled out in the text; all of them (up to the wire
/// limit) are in the structured content.
const SKIPPED_IN_TEXT: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub struct TransferReport {
    pub direction: TransferDirection,
    /// The absolute path that was copied.
    pub source: String,
    /// The absolute path of the copy.
    pub path: String,
    pub files: u64,
    pub folders: u64,
    pub symlinks: u64,
    pub bytes: u64,
    pub duration_ms: u64,
    /// Entries left out, each with why.
    pub skipped: Vec<Skipped>,
    /// Skipped entries beyond the listed ones.
    pub skipped_more: u64,
}

impl TransferReport {
    pub fn new(
        direction: TransferDirection,
        source: String,
        summary: TransferSummary,
        took: Duration,
    ) -> TransferReport {
        TransferReport {
            direction,
            source,
            path: summary.path,
            files: summary.files,
            folders: summary.folders,
            symlinks: summary.symlinks,
            bytes: summary.bytes,
            duration_ms: took.as_millis() as u64,
            skipped: summary.skipped,
            skipped_more: summary.skipped_more,
        }
    }

    /// The summary a person or model reads.
    pub fn text(&self) -> String {
        let (from, to) = match self.direction {
            TransferDirection::ToComputer => ("this machine", "the computer"),
            TransferDirection::FromComputer => ("the computer", "this machine"),
        };
        let mut text = format!(
            "Copied `{}` from {from} to `{}` on {to}: {}, {}, {}, {} in {:.1} s.",
            self.source,
            self.path,
            count(self.files, "file", "files"),
            count(self.folders, "folder", "folders"),
            count(self.symlinks, "symlink", "symlinks"),
            human_bytes(self.bytes),
            self.duration_ms as f64 / 1000.0
        );
        let total = self.skipped.len() as u64 + self.skipped_more;
        if total > 0 {
            let _ = write!(text, "\nSkipped {total}:");
            for s in self.skipped.iter().take(SKIPPED_IN_TEXT) {
                let _ = write!(text, "\n- `{}`: {}", s.path, s.reason);
            }
            let unlisted = total.saturating_sub(SKIPPED_IN_TEXT as u64);
            if unlisted > 0 {
                let _ = write!(text, "\n- and {unlisted} more (see the structured result)");
            }
        }
        text
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::SkipKind;

    #[test]
    fn the_text_gives_where_how_much_and_what_was_skipped() {
        let report = TransferReport::new(
            TransferDirection::FromComputer,
            "/home/computer/proj".into(),
            TransferSummary {
                path: "/home/me/proj".into(),
                files: 3,
                folders: 2,
                symlinks: 1,
                bytes: 2_500_000,
                skipped: vec![Skipped {
                    path: "proj/fifo".into(),
                    kind: SkipKind::Pipe,
                    reason: "a named pipe holds no data to copy".into(),
                }],
                skipped_more: 0,
            },
            Duration::from_millis(1234),
        );
        assert_eq!(
            report.text(),
            "Copied `/home/computer/proj` from the computer to `/home/me/proj` on this machine: 3 files, 2 folders, 1 symlink, 2.5 MB in 1.2 s.\nSkipped 1:\n- `proj/fifo`: a named pipe holds no data to copy"
        );
    }
}
