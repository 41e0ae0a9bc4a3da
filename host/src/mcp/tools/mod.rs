//! One file per tool area. Each declares its tools with rmcp's
//! `#[tool_router]` on [`crate::mcp::ComputerUseServer`]: name, title,
//! description, annotations and the argument type beside the body. A tool
//! reads its arguments, calls computerd through the typed endpoints, and
//! builds the result; failures are [`crate::mcp::ToolError`]s, which rmcp
//! turns into `isError` results.

pub mod desktop;
pub mod devtools;
pub mod files;
pub mod handoff;
pub mod network;
pub mod recording;
pub mod session;
pub mod shell;
pub mod snapshot;
pub mod transfer;

use crate::mcp::ToolError;
use rmcp::model::CallToolResult;

pub type ToolResult = Result<CallToolResult, ToolError>;
