//! The working folder and the file tools: `set_cwd`, `list_files`,
//! `read_file`, `write_file`.
//!
//! # Layout
//! - `paths`: turning an agent's path (`~`, relative, absolute) into an
//!   absolute one.
//! - `cwd`: checking and settling a new working folder.
//! - `list`: one folder, folders first, capped.
//! - `read`: images by magic bytes (`magic`), text through `text`, which reads
//!   in one bounded pass whatever the file's size.
//! - `write`: atomic replacement through a temp file.
//! - `error`: [`FilesError`] and its wire code.
//!
//! Everything here is blocking `std::fs`; the caller runs it on a blocking
//! thread. Paths in results and errors are absolute, so an agent can reuse them
//! whatever its working folder becomes.

mod cwd;
mod error;
mod list;
mod magic;
mod paths;
mod read;
mod text;
mod write;

pub use cwd::set_cwd;
pub use error::FilesError;
pub use list::list;
pub use paths::{normalize, resolve};
pub use read::read;
pub use write::write;
