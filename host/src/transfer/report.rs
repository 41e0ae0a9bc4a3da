//! What the agent gets back from a transfer.

use computer_protocol::archive::human_bytes;
use computer_protocol::{Caution, Skipped, TransferDirection, TransferSummary};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// Skipped entries spelled out in the text; all of them (up to the wire
/// limit) are in the structured content.
const SKIPPED_IN_TEXT: usize = 20;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
    /// Entries written on this machine that can make it run the computer's
    /// code later (git hooks and config, symlinks out of the copy), for the
    /// agent and the person to look at before using the copy.
    pub cautions: Vec<Caution>,
    /// Such entries beyond the listed ones.
    pub cautions_more: u64,
}

impl TransferReport {
    pub fn new(
        direction: TransferDirection,
        source: String,
        summary: TransferSummary,
        took: Duration,
    ) -> TransferReport {
        let (cautions, cautions_more) = match direction {
            TransferDirection::FromComputer => (summary.cautions, summary.cautions_more),
            // An upload's are on the computer, which runs anything anyway,
            // and its list comes from computerd, which is not trusted.
            TransferDirection::ToComputer => (Vec::new(), 0),
        };
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
            cautions,
            cautions_more,
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
        self.write_cautions(&mut text);
        text
    }

    /// The entries to look at before using the copy; the summary lists at
    /// most [`computer_protocol::transfer::CAUTIONS_LISTED_MAX`].
    fn write_cautions(&self, text: &mut String) {
        let total = (self.cautions.len() as u64).saturating_add(self.cautions_more);
        if total == 0 {
            return;
        }
        let _ = write!(
            text,
            "\nLook before you use it: {} written can make this machine run the computer's code or write where it chose:",
            count(total, "entry", "entries")
        );
        for c in &self.cautions {
            let _ = match &c.target {
                Some(target) => write!(text, "\n- `{}` → `{target}`: {}", c.path, c.kind.why()),
                None => write!(text, "\n- `{}`: {}", c.path, c.kind.why()),
            };
        }
        if self.cautions_more > 0 {
            // Only counted: the structured result does not list them either.
            let _ = write!(text, "\n- and {} more", self.cautions_more);
        }
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::{CautionKind, SkipKind};

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
                ..TransferSummary::default()
            },
            Duration::from_millis(1234),
        );
        assert_eq!(
            report.text(),
            "Copied `/home/computer/proj` from the computer to `/home/me/proj` on this machine: 3 files, 2 folders, 1 symlink, 2.5 MB in 1.2 s.\nSkipped 1:\n- `proj/fifo`: a named pipe holds no data to copy"
        );
    }

    #[test]
    fn the_text_lists_what_to_look_at_before_using_a_download() {
        let caution = |path: &str, kind, target: Option<&str>| Caution {
            path: path.into(),
            kind,
            target: target.map(Into::into),
        };
        let summary = TransferSummary {
            path: "/home/me/proj".into(),
            files: 2,
            folders: 3,
            symlinks: 1,
            cautions: vec![
                caution("/home/me/proj/.git/config", CautionKind::GitConfig, None),
                caution(
                    "/home/me/proj/notes",
                    CautionKind::SymlinkOutside,
                    Some("/home/me/.bashrc"),
                ),
            ],
            cautions_more: 3,
            ..TransferSummary::default()
        };
        let download = TransferReport::new(
            TransferDirection::FromComputer,
            "/home/computer/proj".into(),
            summary.clone(),
            Duration::from_millis(100),
        );
        let text = download.text();
        let look = text
            .split_once("\nLook before you use")
            .map(|(_, rest)| rest);
        assert_eq!(
            look,
            Some(" it: 5 entries written can make this machine run the computer's code or write where it chose:\n- `/home/me/proj/.git/config`: git runs the commands a repository's config names (`core.fsmonitor`, `core.hooksPath`, ...)\n- `/home/me/proj/notes` → `/home/me/.bashrc`: a symlink out of the copy: what is saved through it lands there\n- and 3 more"),
            "{text}"
        );

        // An upload's entries are on the computer, which runs anything anyway.
        let upload = TransferReport::new(
            TransferDirection::ToComputer,
            "/home/me/proj".into(),
            summary,
            Duration::from_millis(100),
        );
        assert!(upload.cautions.is_empty() && upload.cautions_more == 0);
        assert!(!upload.text().contains("Look before"), "{}", upload.text());
    }
}
