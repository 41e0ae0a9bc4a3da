//! `file_transfer` on the computer's side: checks before any data moves,
//! receiving an upload's tar stream into a destination, and sending a file
//! or folder out as one.
//!
//! # Layout
//! - `check`: where an upload would land and whether it may
//!   ([`check_upload`]), and what a download would send ([`describe`]).
//! - `receive`: an upload, from the request body to files in place.
//! - `send`: a download, from files to a stream for the response body.
//! - `error`: [`TransferError`] and its wire code.
//!
//! The archive rules themselves (destination, overwrite, temporary names,
//! safety) are `computer_protocol::archive`'s, shared with the host. This
//! module adds the computer's paths, bounded streaming between HTTP and the
//! blocking tar code, and stopping when the session ends or the other side
//! goes quiet.

mod check;
mod error;
mod receive;
mod send;

use std::time::Duration;

pub use check::{check_upload, describe};
pub use error::TransferError;
pub use receive::receive;
pub use send::send;

/// How long the host may leave a transfer without moving data before
/// computerd gives up on it. Longer than the host's own 60 s limit, so that
/// the host, which can tell the agent why, notices first.
pub const STALL_LIMIT: Duration = Duration::from_secs(90);
