//! A bollard client over a connector of our own (TLS, ssh), whose idle
//! connections are kept for the next call: each new one costs a handshake
//! or an `ssh` process.

use bollard::{BollardRequest, ClientVersion, Docker};
use hyper_util::client::legacy::connect::Connect;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::sync::Arc;
use std::time::Duration;

/// How long an idle connection (and an ssh process behind it) is kept.
const IDLE: Duration = Duration::from_secs(15);
/// Idle connections kept at most; more calls at once each open their own.
const MAX_IDLE: usize = 4;

/// A client whose requests go to `address` (`scheme://host[:port]`)
/// through `connector`.
pub(crate) fn pooled_docker<C>(
    connector: C,
    address: String,
    timeout_secs: u64,
    version: &ClientVersion,
) -> Result<Docker, bollard::errors::Error>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    let client = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(IDLE)
        .pool_max_idle_per_host(MAX_IDLE)
        .pool_timer(TokioTimer::new())
        .build(connector);
    let client = Arc::new(client);
    Docker::connect_with_custom_transport(
        move |request: BollardRequest| {
            let client = Arc::clone(&client);
            async move { Ok(client.request(request).await?) }
        },
        Some(address),
        timeout_secs,
        version,
    )
}
