//! The tar stream of `file_transfer`, written and read with the rules of
//! [`crate::transfer`]. Behind the `archive` feature.
//!
//! It lives beside the wire types because the archive is the wire format of
//! a transfer: computerd and the host both write it (sending) and read it
//! (receiving), and the safety rules for reading it must be one
//! implementation, not two that drift apart.
//!
//! # Layout
//! - [`plan`](mod@plan): before any data moves, what the source is and where the copy
//!   lands ([`plan::plan`], [`plan::describe_source`]).
//! - [`pack`](mod@pack): a file or folder out as tar, pipes, sockets and devices
//!   skipped and listed in a trailer ([`trailer`]).
//! - [`located`]: a path as a handle on its deepest existing folder and
//!   the rest; everything a transfer touches is reached through it.
//! - [`unpack`](mod@unpack): tar in at a planned [`Target`], entry by entry,
//!   its filesystem steps in `write`.
//! - [`pipe`]: bounded bridges between the blocking tar code and async
//!   HTTP bodies, each with an explicit end.
//! - [`extension`]: long names and pax records, read with a cap so a
//!   hostile sender cannot make the receiver allocate at will.
//! - [`temp`]: temporary names, removed whenever a transfer stops.
//! - [`open`]: opening a file that must be a regular file, without
//!   blocking on a pipe swapped in for it.
//! - [`progress`]: counts shared with whoever reports progress.
//! - [`error`]: [`ArchiveError`], with its wire code.
//!
//! Everything but [`pipe`] is blocking filesystem work; run it off async
//! threads.

pub mod error;
pub mod extension;
pub mod located;
pub mod open;
pub mod pack;
pub mod pipe;
pub mod plan;
pub mod progress;
pub mod temp;
pub mod trailer;
pub mod umask;
pub mod unpack;
mod write;

pub use error::ArchiveError;
pub use located::Located;
pub use open::{open_regular, open_regular_in, OpenError, Symlinks};
pub use pack::{pack, pack_at};
pub use pipe::{chunk_pipe, feed_pipe, ChunkFeeder, ChunkReader, ChunkStream, ChunkWriter};
pub use plan::{
    describe_source, describe_source_at, locate_source, plan, plan_at, Destination, Target,
};
pub use progress::{human_bytes, Done, Progress};
pub use temp::TEMP_PREFIX;
pub use unpack::{unpack, UnpackOptions};
