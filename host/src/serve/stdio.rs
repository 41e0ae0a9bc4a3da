//! MCP over stdio: the process serves one agent until stdin closes.

use crate::agent::Agent;
use crate::mcp::ComputerUseServer;
use crate::tenant::Tenant;
use rmcp::ServiceExt;
use std::sync::Arc;

/// Serves until stdin closes, Ctrl+C or SIGTERM, then ends the agent's
/// sessions, waiting at most 3 s.
pub async fn serve() -> anyhow::Result<()> {
    let agent = Arc::new(Agent::new(Tenant::local()));
    let server = ComputerUseServer::new(Arc::clone(&agent));
    let running = server.serve(rmcp::transport::stdio()).await?;
    let cancel = running.cancellation_token();
    tokio::select! {
        result = running.waiting() => {
            if let Err(e) = result {
                tracing::warn!("MCP service ended: {e}");
            }
        }
        _ = super::stop_signal() => {
            cancel.cancel();
        }
    }
    agent.close().await;
    crate::open::remove_password_files();
    Ok(())
}
