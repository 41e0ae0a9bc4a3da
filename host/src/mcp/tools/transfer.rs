//! file_transfer.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, TransferArgs};
use crate::mcp::result::structured;
use crate::settings::process_env;
use crate::transfer::{self, StallLimit, TransferError, TransferRequest};
use computer_protocol::archive::{human_bytes, Progress};
use computer_protocol::SessionId;
use rmcp::model::{JsonObject, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;
use std::time::Duration;

/// How often progress is reported while a transfer runs.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

pub async fn file_transfer(
    host: &Agent,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
) -> ToolResult {
    let a: TransferArgs = parse(arguments)?;
    let conn = host.reach(&a.session_id).await?;
    let session = SessionId(a.session_id.clone());
    let req = TransferRequest {
        direction: a.direction,
        host_path: a.host_path,
        computer_path: a.computer_path,
        overwrite: a.overwrite,
    };
    let progress = Arc::new(Progress::default());
    let stall = StallLimit::from_env(&process_env());
    let run = transfer::run(&conn.client, &session, &req, Arc::clone(&progress), stall);
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
        Err(TransferError::Computer(e)) => Err(host.explain(&a.session_id, e).await),
        Err(e) => Err(e.to_string()),
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
