//! What can stop a transfer on the host, said for the agent.

use crate::client::ClientError;
use computer_protocol::archive::{human_bytes, ArchiveError, Done};
use computer_protocol::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// Where a recording's package would go, refused (the message is whole).
    #[error("{0}")]
    Evidence(String),

    #[error("`host_path` is empty: give a file or folder on this machine (absolute, `~/...`, or relative to the MCP server's working folder)")]
    EmptyHostPath,

    #[error("`host_path` starts with `~` but {var} is not set for the MCP server: give an absolute path")]
    NoHome { var: &'static str },

    #[error("`host_path` `{path}` is relative, but the MCP server's working folder cannot be read ({reason}): give an absolute path")]
    NoWorkingFolder { path: String, reason: String },

    #[error("`host_path` `{path}` is refused: over HTTP this server's files are not the client's, and {path} is not beneath `COMPUTER_USE_TRANSFER_ROOT` ({root}) because {why}. Give a path relative to that folder (for example `notes.txt` or `reports/`); nothing was read or written")]
    OutsideRoot {
        path: String,
        root: String,
        why: &'static str,
    },

    #[error("`host_path` `{path}` cannot be looked up beneath `COMPUTER_USE_TRANSFER_ROOT` ({root}): {reason}; nothing was read or written")]
    RootUnreadable {
        path: String,
        root: String,
        reason: String,
    },

    #[error("file_transfer is off over HTTP: this server's files belong to the machine it runs on, not to its HTTP clients, and `COMPUTER_USE_TRANSFER_ROOT` is not set. The server's operator can set it to a folder (for example `COMPUTER_USE_TRANSFER_ROOT=/srv/computer-use/files`); clients then copy to and from that folder only, with `host_path` relative to it. Nothing was read or written")]
    NoRoot,

    /// The host side of the archive: reading or writing host files.
    #[error(transparent)]
    Archive(#[from] ArchiveError),

    /// computerd refused or failed; the tool explains it with the session.
    #[error(transparent)]
    Computer(#[from] ClientError),

    /// computerd described another item than the one asked for.
    #[error("the computer answered `computer_path` `{computer_path}` with `{answered}`, and {why}, so nothing was written; the computer may have been tampered with: check the path with list_files, or remove the container with `docker rm -f <name>` (its home volume stays) and call start_computer again")]
    ForeignSource {
        computer_path: String,
        answered: String,
        why: &'static str,
    },

    /// `computer_path` named no item of its own (`.`, `~`, `..`) and the
    /// computer's answer is a hidden name: such a name (`.zshenv`,
    /// `.bashrc`) runs code on the host, so only the agent may type it.
    #[error("`computer_path` `{computer_path}` leaves the item's name to the computer, which answered `{answered}`; a name starting with `.` is written on the host only when you type it, so nothing was written: give the full path instead, such as `{path}`")]
    UntypedHiddenName {
        computer_path: String,
        answered: String,
        path: String,
    },

    #[error("no data moved for {secs} s, so the transfer was stopped after {}; files already complete stay, temporary files were removed. The computer may be overloaded or stopped (check `docker ps`); call file_transfer again", moved(.done))]
    Stalled { secs: u64, done: Done },

    #[error("the folder {} on this server may hold {} (`COMPUTER_USE_TRANSFER_QUOTA_MB`) and held {} when the copy began, so it stopped after {}; files already complete stay, temporary files were removed. Ask the server's operator to free room there or raise the quota", .room.folder, human_bytes(.room.quota), human_bytes(.room.used), moved(.done))]
    QuotaReached { room: super::Room, done: Done },

    #[error("the computer did not answer within {secs} s after the last data was sent; it may still be finishing the copy: look at `computer_path` with list_files before trying again")]
    NoAnswer { secs: u64 },

    #[error("the connection to the computer broke during the transfer ({reason}) after {}; files already complete stay, temporary files were removed. Check that the computer runs (`docker ps`), then call file_transfer again", moved(.done))]
    Broken { reason: String, done: Done },
}

/// How much had moved, in either direction.
fn moved(done: &Done) -> String {
    format!(
        "{} {} ({})",
        done.files,
        if done.files == 1 { "file" } else { "files" },
        human_bytes(done.bytes)
    )
}

/// computerd says the session is gone: ended, or never known.
pub(super) fn session_gone(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::SessionEnded | ErrorCode::UnknownSession)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_says_how_much_had_moved() {
        let e = TransferError::Stalled {
            secs: 60,
            done: Done {
                files: 2,
                folders: 1,
                symlinks: 0,
                bytes: 3_000_000,
            },
        };
        assert!(
            e.to_string().starts_with(
                "no data moved for 60 s, so the transfer was stopped after 2 files (3.0 MB);"
            ),
            "{e}"
        );
    }
}
