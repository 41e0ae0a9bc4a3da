//! MCP over Streamable HTTP at `/mcp`, with rmcp's server. A client of the
//! revisions before 2026-07-28 opens an MCP session (one `initialize`),
//! which gets its own [`Agent`], so several clients share one computer,
//! each with its own sessions and heartbeat; a session that ends (the
//! client's DELETE, or no request for [`IDLE_SESSION_END`]) drops its
//! agent, which ends its computer sessions. A 2026-07-28 client has no MCP
//! session: rmcp serves each request statelessly, and all such requests of
//! one tenant share one agent for the process, the session_id being their
//! handle.
//!
//! Who may connect: one bearer token (`COMPUTER_USE_HTTP_TOKEN`, one
//! computer), or a tenants file (`COMPUTER_USE_HTTP_TENANTS`, a computer
//! per tenant, see [`crate::tenant`]). Each tenant has its own rmcp service
//! and MCP session store, so no request of one reaches another's sessions.
//! Host files are confined beneath `COMPUTER_USE_TRANSFER_ROOT`. Each
//! tenant has its share of connections and MCP sessions, and connections
//! that prove no token cannot crowd the tenants out (see [`super::shares`]).

use super::guard::{Guard, HostName, HOSTS_VAR, ORIGINS_VAR};
use super::shares::{Doorway, ShareLimits, TenantShare, Ticket, UNPROVEN_MAX};
use super::tenants::{read_tenants, TENANTS_VAR};
use crate::agent::Agent;
use crate::mcp::ComputerUseServer;
use crate::settings::HTTP_TOKEN;
use crate::tenant::Tenant;
use crate::transfer::{HostFiles, TRANSFER_ROOT_VAR};
use axum::extract::{Extension, Request, State};
use axum::response::{IntoResponse, Response};
use computer_protocol::Hidden;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// An MCP session with no request for this long is ended, with its agent's
/// computer sessions: the client went away without saying so.
pub const IDLE_SESSION_END: Duration = Duration::from_secs(30 * 60);
/// The largest request body: MCP requests are JSON-RPC messages, the
/// largest a `write_file` of 10 MiB in base64 or escaped text.
pub const BODY_LIMIT_BYTES: usize = 32 * 1024 * 1024;

type McpService = StreamableHttpService<ComputerUseServer, LocalSessionManager>;

/// `serve --http ADDR [--allow-remote]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    pub allow_remote: bool,
}

/// A `serve` command line that cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServeArgsError {
    #[error("`--http` needs an address, for example `--http 127.0.0.1:8931`")]
    NoAddress,
    #[error(
        "`--http {value}` is not an address with a port; use for example `--http 127.0.0.1:8931`"
    )]
    BadAddress {
        value: String,
        #[source]
        source: std::net::AddrParseError,
    },
    #[error("unknown argument `{arg}` for `serve`")]
    Unknown { arg: String },
    #[error("`--allow-remote` needs `--http ADDR`")]
    RemoteWithoutHttp,
}

impl HttpOptions {
    /// Reads the arguments after `serve`; `Ok(None)` means stdio.
    pub fn parse(args: &[String]) -> Result<Option<HttpOptions>, ServeArgsError> {
        let mut addr = None;
        let mut allow_remote = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--http" => {
                    let value = it.next().ok_or(ServeArgsError::NoAddress)?;
                    let parsed: SocketAddr =
                        value.parse().map_err(|source| ServeArgsError::BadAddress {
                            value: value.clone(),
                            source,
                        })?;
                    addr = Some(parsed);
                }
                "--allow-remote" => allow_remote = true,
                other => {
                    return Err(ServeArgsError::Unknown {
                        arg: other.to_string(),
                    })
                }
            }
        }
        match addr {
            Some(addr) => Ok(Some(HttpOptions { addr, allow_remote })),
            None if allow_remote => Err(ServeArgsError::RemoteWithoutHttp),
            None => Ok(None),
        }
    }
}

/// Serves MCP over HTTP until Ctrl+C or SIGTERM, then ends every agent's
/// sessions. Refuses to start without a good token or tenants file, or on a
/// non-loopback address without `--allow-remote`.
pub async fn serve(options: HttpOptions) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && !options.allow_remote {
        anyhow::bail!("`--http {}` is not a loopback address: MCP over HTTP drives a computer with passwordless sudo, so it listens on 127.0.0.1 unless `--allow-remote` is given (and then put a TLS proxy in front)", options.addr);
    }
    let origins = std::env::var(ORIGINS_VAR).ok();
    // Checked before binding: bad access settings must not leave a port open.
    let Access { tokens, tenants } = access_from_env()?;
    let listed_hosts = listed_hosts(std::env::var(HOSTS_VAR).ok().as_deref())?;
    if options.addr.ip().is_unspecified() && listed_hosts.is_empty() {
        anyhow::bail!("`--http {}` listens on every address, so no `Host` a client sends can be checked against it: set `{HOSTS_VAR}` to the names clients reach this server under, comma-separated (for example `mcp.example.com,192.168.1.5:{}`), or listen on one address", options.addr, options.addr.port());
    }
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let bound = listener.local_addr()?;
    let hosts = allowed_hosts(bound, listed_hosts);
    let guard = Guard::for_tokens(tokens, origins.as_deref(), hosts.clone());
    if options.allow_remote {
        tracing::warn!("`--allow-remote`: MCP over plain HTTP on {bound}. The bearer token and everything the agents do cross the network unencrypted: put a TLS proxy in front, and let only it reach this port");
    }

    let stop = CancellationToken::new();
    if let Some(path) = std::env::var_os(TENANTS_VAR).filter(|p| !p.is_empty()) {
        super::policy_watch::spawn(path.into(), tenants.clone(), stop.clone());
    }
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop.child_token());
    let services = tenants
        .iter()
        .map(|tenant| mcp_service(tenant, config.clone()))
        .collect();
    let limits = ShareLimits::from_env(&crate::settings::process_env(), tenants.len())?;
    let shares = tenants.iter().map(|_| TenantShare::new(limits)).collect();
    let served = Arc::new(Served {
        guard,
        services,
        shares,
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(dispatch))
        .with_state(served)
        .layer(tower_http::limit::RequestBodyLimitLayer::new(
            BODY_LIMIT_BYTES,
        ));
    // Tests and scripts read the port from this line (`--http 127.0.0.1:0`).
    eprintln!("computer-use-mcp: MCP over HTTP at http://{bound}/mcp");
    let shutdown = stop.clone();
    let capacity = UNPROVEN_MAX + limits.connections_per_tenant * tenants.len();
    super::listener::serve(
        listener,
        app,
        Arc::new(Doorway::default()),
        capacity,
        async move {
            super::stop_signal().await;
            shutdown.cancel();
        },
    )
    .await?;
    for tenant in &tenants {
        crate::heartbeat::end_every_agent(&tenant.link).await;
    }
    crate::open::remove_password_files();
    Ok(())
}

/// The tokens that pass and the tenant each one belongs to, in the same
/// order.
struct Access {
    tokens: Vec<Hidden<String>>,
    tenants: Vec<Arc<Tenant>>,
}

/// [`HTTP_TOKEN`] alone for one computer, or [`TENANTS_VAR`]'s file.
fn access_from_env() -> anyhow::Result<Access> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let quota = crate::transfer::quota_from_env(&crate::settings::process_env())?;
    let files = HostFiles::for_http(var(TRANSFER_ROOT_VAR).as_deref())?.with_quota(quota);
    match (var(HTTP_TOKEN), var(TENANTS_VAR)) {
        (Some(_), Some(_)) => anyhow::bail!("both `{HTTP_TOKEN}` and `{TENANTS_VAR}` are set: use `{HTTP_TOKEN}` for one computer, or `{TENANTS_VAR}` for a computer per tenant, and unset the other"),
        (None, Some(path)) => {
            let entries = read_tenants(std::path::Path::new(&path))?;
            let server = crate::settings::process_env();
            let mut tokens = Vec::new();
            let mut tenants = Vec::new();
            let sharing = u32::try_from(entries.len()).unwrap_or(u32::MAX);
            for entry in entries {
                let files = files.for_tenant(&entry.name)?;
                let network = entry.network_policy(&path, &server)?;
                let home_key = entry.home_key();
                tenants.push(Tenant::new(
                    Some((entry.name, home_key)),
                    files,
                    network,
                    sharing,
                ));
                tokens.push(entry.token);
            }
            Ok(Access { tokens, tenants })
        }
        (token, None) => {
            // Checks the token's presence and length.
            Guard::new(token.as_deref(), None, vec![])?;
            let token = Hidden::new(token.unwrap_or_default());
            Ok(Access {
                tokens: vec![token],
                tenants: vec![Tenant::new(None, files, None, 1)],
            })
        }
    }
}

/// One tenant's MCP endpoint, with its own MCP sessions.
fn mcp_service(tenant: &Arc<Tenant>, config: StreamableHttpServerConfig) -> McpService {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE_SESSION_END);
    let sessionless = Arc::new(Agent::new(Arc::clone(tenant)));
    let tenant = Arc::clone(tenant);
    StreamableHttpService::new(
        move || {
            Ok(ComputerUseServer::for_http(
                Arc::clone(&tenant),
                Arc::clone(&sessionless),
            ))
        },
        Arc::new(sessions),
        config,
    )
}

/// What every request goes through: the guard, its tenant's share, then
/// its tenant's service.
struct Served {
    guard: Guard,
    /// In the guard's token order.
    services: Vec<McpService>,
    /// In the same order.
    shares: Vec<TenantShare>,
}

async fn dispatch(
    State(served): State<Arc<Served>>,
    Extension(ticket): Extension<Arc<Ticket>>,
    mut request: Request,
) -> Response {
    let ending_session = request.method() == axum::http::Method::DELETE;
    match served.guard.check(request.headers()) {
        Ok(tenant) => {
            let share = &served.shares[tenant];
            if let Err(full) = ticket.prove(share) {
                return too_many(format!("this tenant has {} connections open, its share of this server (COMPUTER_USE_HTTP_CONNECTIONS divided among the tenants): close some, or wait for long calls to end", full.max));
            }
            // No MCP session named: an `initialize` (or a request of a
            // client that keeps none) may make one, so a slot is reserved.
            if request.method() == axum::http::Method::POST
                && !request.headers().contains_key("mcp-session-id")
            {
                match share.sessions.reserve() {
                    Some(slot) => {
                        request.extensions_mut().insert(slot);
                    }
                    None => return too_many(format!("this tenant has {} MCP sessions open, its limit (COMPUTER_USE_HTTP_SESSIONS): end some (a client's DELETE, or 30 minutes without a request ends one)", share.sessions.max())),
                }
            }
            let response = served.services[tenant]
                .handle(request)
                .await
                .map(axum::body::Body::new);
            if ending_session {
                session_ended_response(response)
            } else {
                response
            }
        }
        Err((status, reason)) => (status, reason).into_response(),
    }
}

/// 429 with `text`, closing the connection.
fn too_many(text: String) -> Response {
    (
        axum::http::StatusCode::TOO_MANY_REQUESTS,
        [(axum::http::header::CONNECTION, "close")],
        text,
    )
        .into_response()
}

/// rmcp answers a DELETE that ended the MCP session with 202 Accepted, but
/// the session is gone by then, and clients (the official Python SDK among
/// them) expect 200 or 204: with 202 they log a failed termination on every
/// clean exit. Any other answer (no session, wrong protocol version) is
/// passed on as it is.
fn session_ended_response(response: Response) -> Response {
    if response.status() == axum::http::StatusCode::ACCEPTED {
        axum::http::StatusCode::NO_CONTENT.into_response()
    } else {
        response
    }
}

/// The names in [`HOSTS_VAR`], each checked, or an error naming the first
/// that is not a `host` or `host:port`.
fn listed_hosts(listed: Option<&str>) -> anyhow::Result<Vec<String>> {
    let names = listed.unwrap_or("").split(',').map(str::trim);
    names
        .filter(|name| !name.is_empty())
        .map(|name| match HostName::parse(name) {
            Some(_) => Ok(name.to_string()),
            None => Err(anyhow::anyhow!("`{HOSTS_VAR}` lists `{name}`, which is not a `host` or `host:port`: list the names clients reach this server under, comma-separated, without a scheme or path (for example `mcp.example.com,192.168.1.5:8931`)")),
        })
        .collect()
}

/// The `Host` values a request may carry: the bound address (unless it is
/// every address), `localhost` for a loopback one, and `listed`.
fn allowed_hosts(bound: SocketAddr, listed: Vec<String>) -> Vec<String> {
    let port = bound.port();
    let mut hosts = listed;
    if !bound.ip().is_unspecified() {
        hosts.push(bound.to_string());
    }
    if bound.ip().is_loopback() {
        for name in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
            if !hosts.contains(&name) {
                hosts.push(name);
            }
        }
    }
    hosts
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
            .to_string()
            .contains("needs an address"));
        assert!(HttpOptions::parse(&args(&["--http", "localhost"]))
            .unwrap_err()
            .to_string()
            .contains("not an address"));
        assert!(HttpOptions::parse(&args(&["--allow-remote"])).is_err());
    }

    #[test]
    fn an_ended_session_is_204_and_other_answers_pass() {
        use axum::http::StatusCode;
        let ended = session_ended_response(StatusCode::ACCEPTED.into_response());
        assert_eq!(ended.status(), StatusCode::NO_CONTENT);
        let missing = session_ended_response(StatusCode::NOT_FOUND.into_response());
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn hosts_for_a_loopback_bind() {
        let hosts = allowed_hosts("127.0.0.1:8931".parse().unwrap(), vec![]);
        assert_eq!(hosts, vec!["127.0.0.1:8931", "localhost:8931"]);
    }

    #[test]
    fn hosts_for_every_address_are_the_listed_ones() {
        let listed = listed_hosts(Some(" mcp.example.com , 10.0.0.5:8931,")).unwrap();
        assert_eq!(listed, vec!["mcp.example.com", "10.0.0.5:8931"]);
        let hosts = allowed_hosts("0.0.0.0:8931".parse().unwrap(), listed);
        assert_eq!(hosts, vec!["mcp.example.com", "10.0.0.5:8931"]);
        assert_eq!(listed_hosts(None).unwrap(), Vec::<String>::new());
        let e = listed_hosts(Some("ok.example,https://mcp.example.com")).unwrap_err();
        assert!(
            e.to_string().contains(
                "`COMPUTER_USE_HTTP_HOSTS` lists `https://mcp.example.com`, which is not a `host` or `host:port`"
            ),
            "{e}"
        );
    }
}
