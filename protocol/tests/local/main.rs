//! The protocol crate's integration tests, one binary (the fast tier: no
//! Docker, no X), so the workspace links one executable for them:
//! - [`archive`]: the archive engine on real files;
//! - [`fixtures`]: every wire type against its JSON fixture.

mod archive;
mod fixtures;
