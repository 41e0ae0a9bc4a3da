//! The one error a tool call can end in. Every variant carries a message
//! written for the agent (what went wrong, the field or limit, the fix),
//! and every one becomes an `isError` tool result with that text, so a
//! model can read it and correct itself. Only a malformed request to the
//! MCP server itself is a protocol error, and rmcp answers those.

use super::args::ArgumentsError;
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
    /// The computer could not be started or reached, or refused the call;
    /// the message is already explained for the agent (see
    /// [`crate::agent::Agent::explain`]).
    #[error("{0}")]
    Computer(String),
    /// The computer answered something the host will not pass on, such as
    /// a text view larger than was asked for.
    #[error("{0}")]
    Refused(String),
    /// `file_transfer` failed on the host's side or the stream broke.
    #[error("{0}")]
    Transfer(String),
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
