//! MCP over Streamable HTTP at `/mcp`, with rmcp's server. A client of the
//! revisions before 2026-07-28 opens an MCP session (one `initialize`),
//! which gets its own [`Agent`], so several clients share one computer,
//! each with its own sessions and heartbeat; a session that ends (the
//! client's DELETE, or no request for [`IDLE_SESSION_END`]) drops its
//! agent, which ends its computer sessions. A 2026-07-28 client has no MCP
//! session: rmcp serves each request statelessly, and all such requests
//! share one agent for the process, the session_id being their handle.

use super::guard::{Guard, ORIGINS_VAR, TOKEN_VAR};
use crate::agent::Agent;
use crate::link::Link;
use crate::mcp::ComputerUseServer;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// An MCP session with no request for this long is ended, with its agent's
/// computer sessions: the client went away without saying so.
pub const IDLE_SESSION_END: Duration = Duration::from_secs(30 * 60);

/// `serve --http ADDR [--allow-remote]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    pub allow_remote: bool,
}

impl HttpOptions {
    /// Reads the arguments after `serve`; `Ok(None)` means stdio.
    pub fn parse(args: &[String]) -> Result<Option<HttpOptions>, String> {
        let mut addr = None;
        let mut allow_remote = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--http" => {
                    let value = it
                        .next()
                        .ok_or("`--http` needs an address, for example `--http 127.0.0.1:8931`")?;
                    let parsed: SocketAddr = value.parse().map_err(|_| {
                        format!("`--http {value}` is not an address with a port; use for example `--http 127.0.0.1:8931`")
                    })?;
                    addr = Some(parsed);
                }
                "--allow-remote" => allow_remote = true,
                other => return Err(format!("unknown argument `{other}` for `serve`")),
            }
        }
        match addr {
            Some(addr) => Ok(Some(HttpOptions { addr, allow_remote })),
            None if allow_remote => Err("`--allow-remote` needs `--http ADDR`".into()),
            None => Ok(None),
        }
    }
}

/// Serves MCP over HTTP until Ctrl+C or SIGTERM, then ends every agent's
/// sessions. Refuses to start without a good token, or on a non-loopback
/// address without `--allow-remote`.
pub async fn serve(options: HttpOptions) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && !options.allow_remote {
        anyhow::bail!("`--http {}` is not a loopback address: MCP over HTTP drives a computer with passwordless sudo, so it listens on 127.0.0.1 unless `--allow-remote` is given (and then put a TLS proxy in front)", options.addr);
    }
    let token = std::env::var(TOKEN_VAR).ok();
    let origins = std::env::var(ORIGINS_VAR).ok();
    // Checked before binding: a bad token must not leave a port open.
    Guard::new(token.as_deref(), None, vec![])?;
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let bound = listener.local_addr()?;
    let hosts = allowed_hosts(bound);
    let guard = Arc::new(Guard::new(
        token.as_deref(),
        origins.as_deref(),
        hosts.clone(),
    )?);
    if options.allow_remote {
        tracing::warn!("`--allow-remote`: MCP over plain HTTP on {bound}. The bearer token and everything the agents do cross the network unencrypted: put a TLS proxy in front, and let only it reach this port");
    }

    let link = Arc::new(Link::new());
    let stop = CancellationToken::new();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE_SESSION_END);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop.child_token());
    let factory_link = Arc::clone(&link);
    let sessionless = Arc::new(Agent::new(Arc::clone(&link)));
    let mcp = StreamableHttpService::new(
        move || {
            Ok(ComputerUseServer::for_http(
                Arc::clone(&factory_link),
                Arc::clone(&sessionless),
            ))
        },
        Arc::new(sessions),
        config,
    );
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(guard, check_request));
    // Tests and scripts read the port from this line (`--http 127.0.0.1:0`).
    eprintln!("computer-use-mcp: MCP over HTTP at http://{bound}/mcp");
    let shutdown = stop.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            super::stop_signal().await;
            shutdown.cancel();
        })
        .await?;
    crate::heartbeat::end_every_agent(&link).await;
    crate::open::remove_password_files();
    Ok(())
}

/// The `Host` values a request may carry: the bound address, and
/// `localhost` for a loopback one.
fn allowed_hosts(bound: SocketAddr) -> Vec<String> {
    let port = bound.port();
    let mut hosts = vec![bound.to_string()];
    if bound.ip().is_loopback() {
        for name in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
            if !hosts.contains(&name) {
                hosts.push(name);
            }
        }
    }
    hosts
}

async fn check_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match guard.check(request.headers()) {
        Ok(()) => next.run(request).await,
        Err((status, reason)) => (status, reason).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn serve_arguments() {
        assert_eq!(HttpOptions::parse(&args(&[])), Ok(None));
        let o = HttpOptions::parse(&args(&["--http", "127.0.0.1:8931"]))
            .unwrap()
            .unwrap();
        assert_eq!(o.addr.port(), 8931);
        assert!(!o.allow_remote);
        let o = HttpOptions::parse(&args(&["--allow-remote", "--http", "0.0.0.0:1"]))
            .unwrap()
            .unwrap();
        assert!(o.allow_remote);
        assert!(HttpOptions::parse(&args(&["--http"]))
            .unwrap_err()
            .contains("needs an address"));
        assert!(HttpOptions::parse(&args(&["--http", "localhost"]))
            .unwrap_err()
            .contains("not an address"));
        assert!(HttpOptions::parse(&args(&["--allow-remote"])).is_err());
    }

    #[test]
    fn hosts_for_a_loopback_bind() {
        let hosts = allowed_hosts("127.0.0.1:8931".parse().unwrap());
        assert_eq!(hosts, vec!["127.0.0.1:8931", "localhost:8931"]);
    }
}
