//! file_transfer.

use super::ToolResult;
use crate::mcp::args::{Args, TransferArgs};
use crate::mcp::result::structured;
use crate::mcp::ComputerUseServer;
use crate::settings::process_env;
use crate::transfer::{self, StallLimit, TransferError, TransferReport, TransferRequest};
use computer_protocol::archive::{human_bytes, Progress};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, Peer, RoleServer};
use std::sync::Arc;
use std::time::Duration;

/// How often progress is reported while a transfer runs.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

#[tool_router(router = transfer_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "file_transfer",
        output_schema = schema_for_output::<TransferReport>(),
        title = "Copy files between this machine and the computer",
        description = "Copy a file or folder tree from this machine to the computer (to_computer) or back (from_computer): any size, keeping empty folders, modes and symlinks. Like `cp -r`: into an existing folder under its own name, else to the path (parents created). An existing target is refused before anything is written unless overwrite (files replaced, folders merged; a file never replaces a folder or back). Fails after 60 s without progress. Special, unsafe or unreadable entries are skipped and listed. host_path is on this server's machine; over HTTP, relative to COMPUTER_USE_TRANSFER_ROOT.",
        annotations(
            title = "Copy files between this machine and the computer",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn file_transfer(
        &self,
        Parameters(args): Parameters<Args<TransferArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        let host_files = &self.agent().tenant().files;
        // Over HTTP without a root nothing is asked of the computer either.
        if let crate::transfer::HostFiles::Refused = host_files {
            return Err(TransferError::NoRoot.into());
        }
        let conn = self.reach(&a.session_id).await?;
        let session = a.session_id.clone();
        let req = TransferRequest {
            direction: a.direction,
            host_path: a.host_path,
            computer_path: a.computer_path,
            overwrite: a.overwrite,
        };
        let progress = Arc::new(Progress::default());
        let stall = StallLimit::from_env(&process_env());
        let run = transfer::run(
            &conn.client,
            &session,
            &req,
            host_files,
            Arc::clone(&progress),
            stall,
        );
        let reporting = report_progress(
            context.peer.clone(),
            context.meta.get_progress_token(),
            &progress,
        );
        let outcome = tokio::select! {
            outcome = run => outcome,
            never = reporting => match never {},
        };
        match outcome {
            Ok(report) => Ok(structured(report.text(), &report)),
            Err(TransferError::Computer(e)) => {
                Err(self.agent().explain(&a.session_id, e).await.into())
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Sends the bytes and files so far while the transfer runs, when the
/// client asked for progress. Never returns; the transfer's end drops it.
async fn report_progress(
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    progress: &Progress,
) -> std::convert::Infallible {
    let Some(token) = token else {
        return std::future::pending().await;
    };
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reported = None;
    loop {
        tick.tick().await;
        let done = progress.done();
        // MCP wants the progress value to grow with every notification.
        if reported.is_some_and(|bytes| done.bytes <= bytes) {
            continue;
        }
        reported = Some(done.bytes);
        let note =
            ProgressNotificationParam::new(token.clone(), done.bytes as f64).with_message(format!(
                "{} files, {} folders, {} so far",
                done.files,
                done.folders,
                human_bytes(done.bytes)
            ));
        if let Err(e) = peer.notify_progress(note).await {
            tracing::debug!("progress notification not sent: {e}");
        }
    }
}
