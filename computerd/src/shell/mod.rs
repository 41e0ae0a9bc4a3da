//! Running one command for an agent: `bash -lc <command>` in the session's
//! working folder, with no input, stdout and stderr captured apart, and a
//! timeout that kills everything the command started.
//!
//! # Layout
//! - [`run`](run()): spawns, waits for exit or the deadline, collects the result.
//! - `process`: the spawned process tree and how to kill all of it.
//! - `family`: which processes in `/proc` belong to one command.
//! - `capture_stream`: reading one output pipe into a bounded head/tail buffer.
//!
//! Commands share nothing, so several may run at once, from one session or many.

mod capture_stream;
mod family;
mod process;
mod run;

use computer_protocol::{Coded, ErrorCode};
use std::path::PathBuf;
use std::time::Duration;

pub use run::{run, EXIT_GRACE};

#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("could not start `bash`: {0}")]
    Spawn(std::io::Error),
    /// The working folder was removed (or renamed) after `set_cwd` chose it.
    #[error("the working folder `{}` no longer exists: call `set_cwd` with a folder that exists", .0.display())]
    CwdMissing(PathBuf),
    #[error("could not wait for `bash` to exit: {0}")]
    Wait(std::io::Error),
}

impl Coded for ShellError {
    fn code(&self) -> ErrorCode {
        match self {
            ShellError::CwdMissing(_) => ErrorCode::NotFound,
            ShellError::Spawn(_) | ShellError::Wait(_) => ErrorCode::Internal,
        }
    }
}

/// One command to run.
pub struct ShellSpec {
    /// Passed to `bash -lc` as one argument, so it may hold pipes, `&&`,
    /// newlines and anything else bash reads.
    pub command: String,
    /// The folder the command starts in: the session's working folder.
    pub cwd: PathBuf,
    /// Added to computerd's own environment (HOME, DISPLAY, ...); a name given
    /// here replaces the inherited value.
    pub env: Vec<(String, String)>,
    /// How long the command may run before it and everything it started are
    /// killed. Already validated by the caller.
    pub timeout: Duration,
}
