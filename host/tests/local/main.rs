//! The local tier: host tests that need neither Docker nor an X server (the
//! command line, and the host against a stub computer that lies), in one
//! binary that the fast loop (`scripts/test-fast.sh`) runs.

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod hostile_computer;
mod proxy_settings;
