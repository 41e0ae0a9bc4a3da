//! Why a session call failed: the session is unknown, ended or held by a
//! person, its input was bad, or its screen failed.

use crate::screens::ScreenError;
use computer_protocol::{BadSessionId, Coded, EndReason, ErrorCode, InvalidInput, SessionId};

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error("{}", computer_protocol::no_such_session(.0))]
    Unknown(SessionId),
    /// A path's `{id}` that is no session id: no session has it.
    #[error(transparent)]
    NotAnId(#[from] BadSessionId),
    #[error("{}", .1.explain(.0))]
    Ended(SessionId, EndReason),
    #[error(transparent)]
    Screen(#[from] ScreenError),
    /// A person holds the session's screen (a handoff): the agent waits.
    #[error("{0}")]
    Held(String),
    /// The session's command or transfer stopped when a person took its
    /// screen.
    #[error("stopped: {0}")]
    StoppedByHold(String),
}

impl Coded for SessionError {
    fn code(&self) -> ErrorCode {
        match self {
            SessionError::InvalidInput(_) => ErrorCode::InvalidInput,
            SessionError::Unknown(_) | SessionError::NotAnId(_) => ErrorCode::UnknownSession,
            SessionError::Ended(..) => ErrorCode::SessionEnded,
            SessionError::Screen(e) => e.code(),
            SessionError::Held(_) | SessionError::StoppedByHold(_) => ErrorCode::Conflict,
        }
    }
}
