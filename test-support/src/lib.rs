//! Helpers the workspace's tests share, so that each suite waits, refuses to
//! skip, and builds and compares trees of files the same way. A
//! dev-dependency of `protocol`, `computerd` and `host`; never published.
//! Its own checks are in protocol's fast tier
//! (`protocol/tests/local/helpers.rs`).
//!
//! # Layout
//! - [`wait`]: wait on a concrete condition with a deadline, never a bare
//!   sleep; the panic names what was awaited and for how long.
//! - [`programs`]: fail loudly, with the install command, when a program a
//!   test drives is missing: the suite never passes by skipping.
//! - [`tree`]: make trees of files (modes, symlinks, pipes), describe them
//!   so a copy can be compared with its source, and find the temporary
//!   files a transfer left behind.
//! - [`tarball`]: archives for the transfer tests, packed and unpacked by
//!   `computer_protocol::archive` or crafted entry by entry.
//!
//! Helpers that only one crate's tests use stay with them (computerd's
//! daemon, Xvnc and Fluxbox helpers in `computerd/tests/common/`, the host's
//! Docker and MCP helpers in `host/tests/support/`).

pub mod programs;
pub mod tarball;
pub mod tree;
pub mod wait;

pub use programs::{require_playwright, require_program, require_programs};
pub use wait::{wait_until, wait_until_blocking, wait_until_holds};
