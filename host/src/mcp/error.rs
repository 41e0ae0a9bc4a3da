//! The one error a tool call can end in. Every variant carries a message
//! written for the agent (what went wrong, the field or limit, the fix),
//! and every one becomes an `isError` tool result with that text, so a
//! model can read it and correct itself. Only a malformed request to the
//! MCP server itself is a protocol error, and rmcp answers those.
//!
//! A variant that wraps another error shows that error's text and gives
//! it as its [`source`](std::error::Error::source), so logs and tests can
//! reach the cause.

use super::args::ArgumentsError;
use super::bounds::RefusedAnswer;
use crate::agent::AgentError;
use crate::computer::StartError;
use crate::recording::RecordingError;
use crate::settings::SettingsError;
use crate::transfer::TransferError;
use computer_protocol::InvalidInput;
use rmcp::model::{ContentBlock, IntoContents};

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema: the message names the
    /// field (`actions[2].x`) and what was expected.
    #[error("{0}")]
    Arguments(#[from] ArgumentsError),
    /// The arguments fit the schema but break a limit of the contract
    /// (a frame size, a settle time, a file over 10 MB).
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    /// A `COMPUTER_USE_*` setting the tool reads is not usable; the
    /// message names it and what it takes.
    #[error("{0}")]
    Setting(#[from] SettingsError),
    /// The computer could not be started: its settings, the Docker
    /// endpoint or the engine.
    #[error("{0}")]
    Start(#[from] StartError),
    /// The computer could not be reached, or refused the call; the error
    /// is already explained for the agent (see
    /// [`crate::agent::Agent::explain`]).
    #[error("{0}")]
    Computer(#[from] AgentError),
    /// The computer answered something the host will not pass on, such as
    /// a text view larger than was asked for.
    #[error("{0}")]
    Refused(#[from] RefusedAnswer),
    /// `file_transfer` failed on the host's side or the stream broke.
    #[error("{0}")]
    Transfer(#[from] TransferError),
    /// A recording's package did not reach this machine (it stays in the
    /// computer), or recordings are off.
    #[error("{0}")]
    Recording(#[from] RecordingError),
    /// The computer says a hold was handed back, but not with the code of
    /// the person's link: something inside it ended the hold.
    #[error("the computer says handoff `{handoff_id}` was handed back, but not with the code of the person's link: something inside the computer ended it, not the person, and what it said is not passed on. The screen is this session's again; check it with computer_observe, and call request_handoff again if you still need the person")]
    HandBackNotByPerson { handoff_id: String },
    /// A snapshot was refused or failed; the message says what became of
    /// the computer.
    #[error("{0}")]
    Snapshot(#[from] crate::docker::snapshot::SnapshotError),
    #[error("there is no tool `{name}`; the tools are: {known}")]
    UnknownTool { name: String, known: String },
    #[error("`{tool}` was cancelled")]
    Cancelled { tool: String },
    /// A bug: the tool panicked. The server keeps running.
    #[error("`{tool}` failed inside computer-use-mcp ({reason}); this is a bug, please report it. The MCP server keeps running; call the tool again or try another way")]
    Panicked { tool: String, reason: String },
}

/// rmcp puts a tool's `Err` into an `isError` result with this content.
impl IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(self.to_string())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientError;
    use std::error::Error as _;

    #[test]
    fn a_wrapped_error_is_the_source_and_keeps_its_text() {
        let cause = TransferError::NoRoot;
        let text = cause.to_string();
        let e = ToolError::from(cause);
        assert_eq!(e.to_string(), text);
        let source = e.source().expect("the transfer error is the source");
        assert!(
            matches!(
                source.downcast_ref::<TransferError>(),
                Some(TransferError::NoRoot)
            ),
            "{source:?}"
        );
    }

    #[test]
    fn a_computer_error_leads_down_to_computerd_s_own() {
        let call = ClientError::Unreachable {
            url: "http://127.0.0.1:20900/v1/computer".into(),
            container: "computer-use".into(),
            reason: "connection refused".into(),
        };
        let e = ToolError::Computer(AgentError::StillUnreachable {
            container: "computer-use".into(),
            source: call,
        });
        assert!(e.to_string().starts_with(
            "cannot reach the computer `computer-use` at http://127.0.0.1:20900/v1/computer (connection refused), although Docker says it runs"
        ));
        let agent = e.source().expect("the agent's error");
        assert!(agent.downcast_ref::<AgentError>().is_some(), "{agent:?}");
        assert_eq!(agent.to_string(), e.to_string());
        let computerd = agent.source().expect("computerd's error");
        assert!(
            matches!(
                computerd.downcast_ref::<ClientError>(),
                Some(ClientError::Unreachable { .. })
            ),
            "{computerd:?}"
        );
    }

    #[test]
    fn an_error_of_its_own_has_no_source() {
        let e = ToolError::Cancelled {
            tool: "shell".into(),
        };
        assert!(e.source().is_none());
        assert_eq!(e.to_string(), "`shell` was cancelled");
    }
}
