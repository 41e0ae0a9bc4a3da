//! Why a recording's package is not on this machine. The recording itself
//! is safe: its package stays in the computer, where `review --fetch`
//! finds it.

use crate::transfer::TransferError;
use computer_protocol::recording::RecordingId;

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// Over HTTP without a transfer root there is nowhere to write a
    /// package, so nothing is recorded at all.
    #[error("recordings are off over HTTP without `COMPUTER_USE_TRANSFER_ROOT`: their packages are written on this server's machine, and only beneath that folder. The server's operator can set it (for example `COMPUTER_USE_TRANSFER_ROOT=/srv/computer-use/files`); nothing was recorded")]
    NoRoot,
    /// The session ended, but the default folder for its package is not
    /// usable.
    #[error("recording `{id}` could not be copied to this machine: {source}. It stays in the computer: `computer-use-mcp review --fetch {id} PATH` brings it home")]
    NoDestination {
        id: RecordingId,
        source: TransferError,
    },
    /// The host's own folder, where it logs what it sends, is not usable.
    #[error("recordings need this server's own folder, where it logs each step it sends and keeps the key that signs packages: {0}. Set {var} to a folder this user can write; nothing was recorded", var = crate::state::STATE_DIR_VAR)]
    NoStateFolder(std::io::Error),
    #[error("recording `{id}` stopped, but its package could not be copied to this machine: {source}. It stays in the computer: `computer-use-mcp review --fetch {id} PATH` brings it home")]
    NotCopied {
        id: RecordingId,
        source: TransferError,
    },
}
