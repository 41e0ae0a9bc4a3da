//! What runs for a session beside its screen: its shell commands
//! ([`command`]) and its file transfers ([`transfer`]). Each is counted as
//! the session's running work while it runs, and stopped, with everything
//! it started, when its session ends or a person takes its screen; the
//! error then says which.

mod command;
mod transfer;

pub use command::run_command;
pub use transfer::{check_upload, describe_source, download, upload};

use crate::sessions::SessionError;
use crate::shell::ShellError;
use crate::transfer::TransferError;
use computer_protocol::{Coded, ErrorCode, InvalidInput};

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Shell(#[from] ShellError),
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

impl Coded for JobError {
    fn code(&self) -> ErrorCode {
        match self {
            JobError::InvalidInput(e) => e.code(),
            JobError::Session(e) => e.code(),
            JobError::Shell(e) => e.code(),
            JobError::Transfer(e) => e.code(),
        }
    }
}
