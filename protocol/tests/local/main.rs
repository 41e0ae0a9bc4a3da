//! The protocol crate's integration tests, one binary (the fast tier: no
//! Docker, no X), so the workspace links one executable for them:
//! - [`archive`]: the archive engine on real files;
//! - [`fixtures`]: every wire type against its JSON fixture;
//! - [`helpers`]: the checks of the helpers every tier shares
//!   (`test-support`), which has no test binary of its own.

mod archive;
mod fixtures;
mod helpers;
