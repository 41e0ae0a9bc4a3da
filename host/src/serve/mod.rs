//! The transports: MCP over stdio (one agent, the process's peer) and over
//! Streamable HTTP (one agent per MCP session, one computer per tenant):
//! `guard` checks each HTTP request's token, Host and Origin, `tenants`
//! reads the tenants file, `policy_watch` applies its changed network
//! policies to running computers, `listener` accepts connections with a
//! header deadline and a cap, and `shares` divides connections and MCP
//! sessions among the tenants.

pub mod guard;
pub mod http;
mod listener;
mod policy_watch;
mod shares;
pub mod stdio;
pub mod tenants;

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
