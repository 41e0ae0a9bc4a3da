//! Helpers the workspace's tests share, so that each suite builds and
//! compares trees of files the same way. A dev-dependency of `protocol`,
//! `computerd` and `host`; never published.
//!
//! # Layout
//! - [`tree`]: make trees of files (modes, symlinks, pipes), describe them
//!   so a copy can be compared with its source, and find the temporary
//!   files a transfer left behind.
//! - [`tarball`]: archives for the transfer tests, packed and unpacked by
//!   `computer_protocol::archive` or crafted entry by entry.

pub mod tarball;
pub mod tree;
