//! One file per tool area. Each tool reads its arguments, calls computerd,
//! and builds the result; failures come back as `Err(message)`, which the
//! server turns into an `isError` result.

pub mod desktop;
pub mod devtools;
pub mod files;
pub mod session;
pub mod shell;
pub mod transfer;

use rmcp::model::CallToolResult;

pub type ToolResult = Result<CallToolResult, String>;
