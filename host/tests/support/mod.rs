//! Helpers shared by the host's integration tests.
#![allow(dead_code)] // Each test binary uses a different part.

pub mod docker;
pub mod mcp;
pub mod remote;
pub mod schema;
