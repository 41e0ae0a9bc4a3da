//! The MCP side: the server, its tool catalog, arguments, results, and one
//! file per tool area under `tools/`.

pub mod args;
pub mod catalog;
pub mod result;
pub mod server;
pub mod tools;

pub use server::ComputerUseServer;
