//! The MCP side: the server and its tool router, the arguments, the
//! results, the one tool error, and one file per tool area under `tools/`
//! (each declares its tools with `#[tool_router]`).

mod action_shape;
pub mod args;
pub mod bounds;
mod effects_text;
pub mod error;
pub mod progress;
pub mod result;
pub mod schema;
pub mod server;
pub mod tools;

pub use error::ToolError;
pub use server::ComputerUseServer;
