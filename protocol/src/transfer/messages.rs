//! What `file_transfer` sends over the API besides the tar stream itself.

use serde::{Deserialize, Serialize};

/// Which way a transfer goes, seen from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TransferDirection {
    /// From the host's `host_path` to the computer's `computer_path`.
    ToComputer,
    /// From the computer's `computer_path` to the host's `host_path`.
    FromComputer,
}

/// What is copied: one file, or a folder with everything in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    File,
    Folder,
}

impl ItemKind {
    pub fn noun(self) -> &'static str {
        match self {
            ItemKind::File => "file",
            ItemKind::Folder => "folder",
        }
    }
}

/// Where an upload lands and how. Sent as the JSON body of
/// `transfer/check`, and as the query of `transfer/upload`, so that the
/// upload re-checks exactly what the check approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadRequest {
    /// The destination as the agent wrote it (`computer_path`); resolved like
    /// the file tools' paths.
    pub path: String,
    /// The name of what is copied, the last part of `host_path`. It becomes
    /// the name inside `path` when `path` is an existing folder.
    pub name: String,
    pub kind: ItemKind,
    /// Replace files and merge folders that are already there.
    #[serde(default)]
    pub overwrite: bool,
}

/// The answer to `transfer/check`: the upload may go ahead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadTarget {
    /// The absolute path the copy will have.
    pub path: String,
    /// Something is there already and will be replaced (a file) or merged
    /// into (a folder); only possible with `overwrite`.
    pub exists: bool,
}

/// The body of `transfer/source` and `transfer/download`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRequest {
    /// The file or folder to send (`computer_path`).
    pub path: String,
}

/// What a download would send, so that the host can check its destination
/// before any data moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferSource {
    /// The absolute path.
    pub path: String,
    /// Its last part: the name the copy gets inside an existing folder.
    pub name: String,
    pub kind: ItemKind,
}

/// What a finished transfer wrote at its destination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TransferSummary {
    /// The absolute path of the copy.
    pub path: String,
    /// Regular files written (hard links count as files).
    pub files: u64,
    /// Folders created or merged into, the copied folder included.
    pub folders: u64,
    /// Symlinks created, kept as links.
    pub symlinks: u64,
    /// Bytes of file content written.
    pub bytes: u64,
    /// Entries left out, each with the reason: pipes, sockets and devices,
    /// unreadable files, names or symlinks the destination cannot hold, and
    /// archive entries refused because they would land outside the
    /// destination. At most [`SKIPPED_LISTED_MAX`] are listed.
    pub skipped: Vec<Skipped>,
    /// Skipped entries beyond the listed ones.
    #[serde(default)]
    pub skipped_more: u64,
    /// Entries written that can make this machine run the sender's code
    /// later: git hooks and config, symlinks out of the copy. At most
    /// [`CAUTIONS_LISTED_MAX`] are listed. Left out of the JSON when empty,
    /// so a summary without any reads as it did before the list existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cautions: Vec<Caution>,
    /// Such entries beyond the listed ones.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cautions_more: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Entries to look at listed in one reply: enough to see what kind of
/// thing came, few enough to read.
pub const CAUTIONS_LISTED_MAX: usize = 20;

/// Skipped entries listed in one reply; the rest are only counted, so a
/// folder of a million sockets cannot make a reply of a million lines.
pub const SKIPPED_LISTED_MAX: usize = 1000;

/// Bytes kept of a skipped entry's `path` and `reason`; the rest is cut,
/// so a sender's list cannot hold more than a few megabytes in all.
pub const SKIPPED_TEXT_MAX_BYTES: usize = 1024;

impl TransferSummary {
    /// Adds a skipped entry, its texts cut to [`SKIPPED_TEXT_MAX_BYTES`],
    /// or counts it once the list is full.
    pub fn skip(&mut self, skipped: Skipped) {
        if self.skipped.len() < SKIPPED_LISTED_MAX {
            self.skipped.push(Skipped {
                path: cut(skipped.path),
                kind: skipped.kind,
                reason: cut(skipped.reason),
            });
        } else {
            self.skipped_more = self.skipped_more.saturating_add(1);
        }
    }

    /// Counts `more` skipped entries that are not listed.
    pub fn skip_unlisted(&mut self, more: u64) {
        self.skipped_more = self.skipped_more.saturating_add(more);
    }

    /// Adds an entry to look at, or counts it once the list is full.
    pub fn caution(&mut self, caution: Caution) {
        if self.cautions.len() < CAUTIONS_LISTED_MAX {
            self.cautions.push(Caution {
                path: cut(caution.path),
                kind: caution.kind,
                target: caution.target.map(cut),
            });
        } else {
            self.cautions_more = self.cautions_more.saturating_add(1);
        }
    }

    /// Every skipped entry, listed or not.
    pub fn skipped_total(&self) -> u64 {
        (self.skipped.len() as u64).saturating_add(self.skipped_more)
    }
}

/// `text` cut to at most [`SKIPPED_TEXT_MAX_BYTES`] on a character
/// boundary, with `…` saying it was cut.
fn cut(mut text: String) -> String {
    if text.len() <= SKIPPED_TEXT_MAX_BYTES {
        return text;
    }
    let mut end = SKIPPED_TEXT_MAX_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
    text
}

/// One entry a transfer left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Skipped {
    /// `/`-separated, starting with the copied item's name.
    pub path: String,
    pub kind: SkipKind,
    /// Says why, for a person.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SkipKind {
    /// A named pipe (FIFO).
    Pipe,
    Socket,
    /// A character or block device.
    Device,
    /// The sender could not read it.
    Unreadable,
    /// A name that is not valid on Windows.
    WindowsName,
    /// A symlink Windows refuses to make.
    WindowsSymlink,
    /// An archive entry that would land outside the destination: `..`, an
    /// absolute name, a path through a symlink, a hard link out; or a
    /// symlink that would replace a regular file already there.
    Refused,
    /// An archive entry of a kind no transfer writes.
    Unsupported,
}

/// An entry written that deserves a look before the copy is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Caution {
    /// Where it was written, on the machine that received the copy.
    pub path: String,
    pub kind: CautionKind,
    /// A symlink's target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CautionKind {
    /// `.git/config`: git runs the commands it names (`core.fsmonitor`,
    /// `core.hooksPath`, ...).
    GitConfig,
    /// In `.git/hooks`: git runs it.
    GitHook,
    /// A `.git` that is not a folder: it sends git to the repository it
    /// names, with that repository's hooks and config.
    GitLink,
    /// A symlink whose target is outside the copy: writing through it
    /// writes there.
    SymlinkOutside,
}

impl CautionKind {
    /// Says why, for a person.
    pub fn why(self) -> &'static str {
        match self {
            CautionKind::GitConfig => {
                "git runs the commands a repository's config names (`core.fsmonitor`, `core.hooksPath`, ...)"
            }
            CautionKind::GitHook => "git runs its hooks",
            CautionKind::GitLink => "this `.git` sends git to another repository, with its hooks and config",
            CautionKind::SymlinkOutside => "a symlink out of the copy: what is saved through it lands there",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(path: String, reason: String) -> Skipped {
        Skipped {
            path,
            kind: SkipKind::Pipe,
            reason,
        }
    }

    #[test]
    fn skipped_texts_are_cut() {
        let mut summary = TransferSummary::default();
        summary.skip(skipped("é".repeat(10_000), "a".repeat(16 << 20)));
        summary.skip(skipped("p".into(), "short".into()));
        let first = &summary.skipped[0];
        assert!(
            first.path.len() <= SKIPPED_TEXT_MAX_BYTES,
            "{}",
            first.path.len()
        );
        assert!(first.reason.len() <= SKIPPED_TEXT_MAX_BYTES);
        assert!(first.path.ends_with('…') && first.reason.ends_with('…'));
        assert_eq!(summary.skipped[1], skipped("p".into(), "short".into()));
    }

    #[test]
    fn counts_never_overflow() {
        let mut summary = TransferSummary::default();
        summary.skip_unlisted(u64::MAX - 1);
        summary.skip_unlisted(u64::MAX);
        assert_eq!(summary.skipped_more, u64::MAX);
        assert_eq!(summary.skipped_total(), u64::MAX);
    }
}
