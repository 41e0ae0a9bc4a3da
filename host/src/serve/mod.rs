//! The transports: MCP over stdio (one agent, the process's peer) and over
//! Streamable HTTP (one agent per MCP session). Both share one
//! [`crate::link::Link`] to the computer.

pub mod guard;
pub mod http;
pub mod stdio;

/// Resolves on Ctrl+C or SIGTERM.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler installs");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
