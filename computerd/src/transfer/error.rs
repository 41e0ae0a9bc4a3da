//! What can stop a transfer on the computer.

use computer_protocol::archive::ArchiveError;
use computer_protocol::{Coded, ErrorCode};

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),

    /// The session ended while the transfer ran; the caller says why.
    #[error("the session ended during the transfer; its temporary files were removed")]
    SessionEnded,
}

impl Coded for TransferError {
    fn code(&self) -> ErrorCode {
        match self {
            TransferError::Archive(e) => e.code(),
            TransferError::SessionEnded => ErrorCode::SessionEnded,
        }
    }
}
