//! The one error shape on the wire.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What every failing computerd route returns, with an HTTP status that
/// matches [`ErrorCode::http_status`]. `message` is written for the agent: it
/// names the field or thing at fault and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    pub code: ErrorCode,
    pub message: String,
}

/// Broad classes of failure; the host picks its reaction by code, never by
/// parsing the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Missing or wrong bearer token.
    Unauthorized,
    /// The request is malformed or a value is out of range.
    InvalidInput,
    /// No session with that id was ever made by this computerd.
    UnknownSession,
    /// The session existed and has ended; the message says why.
    SessionEnded,
    /// A file or folder does not exist.
    NotFound,
    /// The target exists in a form that the call cannot use (a folder where a
    /// file is needed, a binary file for a text read).
    Conflict,
    /// Permission denied by the filesystem.
    PermissionDenied,
    /// A fixed capacity is used up (all 16 screens taken).
    Exhausted,
    /// The screen is not reacting to a repeated batch of actions.
    NotReacting,
    /// Something the computer needs (Xvnc, a display) failed.
    Unavailable,
    /// A bug or an unexpected system error.
    Internal,
}

impl ErrorCode {
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::Unauthorized => 401,
            ErrorCode::InvalidInput => 400,
            ErrorCode::UnknownSession | ErrorCode::NotFound => 404,
            ErrorCode::SessionEnded => 410,
            ErrorCode::Conflict | ErrorCode::NotReacting => 409,
            ErrorCode::PermissionDenied => 403,
            ErrorCode::Exhausted => 429,
            ErrorCode::Unavailable => 503,
            ErrorCode::Internal => 500,
        }
    }
}

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WireError {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WireError {}

/// An error that knows how the API answers it: its wire code, and its text
/// as the message. Every error that can leave computerd implements it, so
/// one conversion turns any of them into a [`WireError`].
pub trait Coded: std::error::Error {
    fn code(&self) -> ErrorCode;

    /// The error as the API sends it.
    fn to_wire(&self) -> WireError {
        WireError::new(self.code(), self.to_string())
    }
}

impl Coded for InvalidInput {
    fn code(&self) -> ErrorCode {
        ErrorCode::InvalidInput
    }
}

/// Input that breaks a rule of the tool contract. Its text names the
/// argument by its full path (`actions[2].x`), says what is wrong and how to
/// fix it; it always answers as [`ErrorCode::InvalidInput`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput(pub String);

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidInput {}

impl From<InvalidInput> for WireError {
    fn from(e: InvalidInput) -> WireError {
        WireError::new(ErrorCode::InvalidInput, e.0)
    }
}
