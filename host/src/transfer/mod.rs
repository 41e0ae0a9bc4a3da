//! `file_transfer` on the host: host paths, and streaming tar between the
//! host's files and computerd in either direction, with memory bounded by a
//! few chunks whatever the size, no total time limit, and the stall rules.
//!
//! # Layout
//! - `paths`: host paths as the agent writes them (absolute, `~`, or
//!   relative to this process's working folder).
//! - `root`: which host files a transfer may touch: any over stdio, only
//!   those beneath `COMPUTER_USE_TRANSFER_ROOT` over HTTP.
//! - `quota`: how much a root folder may hold (downloads stop there).
//! - `upload`: `to_computer`: check on the computer, pack the host files,
//!   stream them up.
//! - `download`: `from_computer`: ask what the computer would send, check
//!   the host destination, stream it down and unpack.
//! - `source_name`: the computer's item name must be the one typed.
//! - `stall`: no data moving for 60 s, or no answer 60 s after the last
//!   data, fails the transfer.
//! - `report`: what the agent gets back.
//! - `error`: [`TransferError`].
//!
//! The archive rules (destination, overwrite, temporary names, safety,
//! Windows names) are `computer_protocol::archive`'s, the same code computerd
//! runs. A transfer stops when its future is dropped (the MCP call was
//! cancelled): the HTTP stream closes, computerd removes its temporary file,
//! and the host's unpacking removes its own.

mod download;
mod error;
mod paths;
mod quota;
mod report;
mod root;
mod source_name;
mod stall;
mod upload;

pub use error::TransferError;
pub use paths::resolve_host_path;
pub use quota::{from_env as quota_from_env, TRANSFER_QUOTA_VAR};
pub use report::TransferReport;
pub use root::{HostFiles, Room, Root, RootError, TRANSFER_ROOT_VAR};
pub use stall::{Movement, StallLimit, STALL_SECS_VAR};

use crate::client::{ClientError, ComputerdClient};
use crate::error_chain::describe;
use computer_protocol::archive::Progress;
use computer_protocol::endpoints::Endpoint;
use computer_protocol::{SessionId, TransferDirection};
use error::session_gone;
use std::sync::Arc;
use std::time::Instant;

/// One `file_transfer` call.
#[derive(Debug, Clone)]
pub struct TransferRequest {
    pub direction: TransferDirection,
    pub host_path: String,
    pub computer_path: String,
    pub overwrite: bool,
}

/// Runs a transfer to its end. `progress` counts what was written (to the
/// computer: read from the host) as it goes, for progress notifications.
pub async fn run(
    client: &ComputerdClient,
    session: &SessionId,
    req: &TransferRequest,
    host_files: &HostFiles,
    progress: Arc<Progress>,
    stall: StallLimit,
) -> Result<TransferReport, TransferError> {
    let started = Instant::now();
    let job = Job {
        client,
        session,
        req,
        host_files,
        progress,
        stall,
    };
    let (source, summary) = match req.direction {
        TransferDirection::ToComputer => upload::to_computer(&job).await?,
        TransferDirection::FromComputer => download::from_computer(&job).await?,
    };
    Ok(TransferReport::new(
        req.direction,
        source,
        summary,
        started.elapsed(),
    ))
}

/// What both directions work with.
struct Job<'a> {
    client: &'a ComputerdClient,
    session: &'a SessionId,
    req: &'a TransferRequest,
    /// Where `req.host_path` may lead.
    host_files: &'a HostFiles,
    progress: Arc<Progress>,
    stall: StallLimit,
}

impl Job<'_> {
    /// The stream broke off with `e`. When the session ended meanwhile,
    /// asking route `E` about `asked` again says so and why; otherwise the
    /// broken connection is the answer. `left` says what a timeout of that
    /// question leaves behind, as for [`ComputerdClient::send`].
    async fn broken<E: Endpoint<Key = SessionId>>(
        &self,
        asked: &E::Request,
        left: &'static str,
        e: reqwest::Error,
    ) -> TransferError {
        // Only a refusal naming the session matters; whatever else comes
        // back, the broken connection is the story.
        let again = self
            .client
            .send::<E>(self.session, asked, self.stall.0, left)
            .await;
        match again {
            Err(ClientError::Api(wire)) if session_gone(wire.code) => ClientError::Api(wire).into(),
            _ => TransferError::Broken {
                reason: describe(&e),
                done: self.progress.done(),
            },
        }
    }
}
