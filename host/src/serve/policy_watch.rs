//! A tenant's network policy changed in the tenants file applies to its
//! running computer within a second, without a restart: the file is read
//! again when its bytes change, and each tenant whose policy differs gets
//! it put in force on its computer's guard (`docker::guard::set_policy`),
//! on every later start, and on a guard made again after the computer
//! restarts behind the server's back (`Link::set_network`). Nothing inside
//! a computer can reach the file or the guard's control socket.
//!
//! Only the policies change at run time: a token or a tenant added or
//! removed takes effect when the server starts again, and a log line says
//! so. A file that no longer reads well leaves the policies in force as
//! they were, with a log line naming the fault.

use super::tenants::read_tenants;
use crate::docker::{find_computer, guard, resolve_endpoint, ComputerState};
use crate::settings::{process_env, Settings};
use crate::tenant::Tenant;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the file is looked at: a change applies well within 1 s.
const POLL: Duration = Duration::from_millis(250);

/// Watches `path` for the server's `tenants` until `stop`.
pub fn spawn(path: PathBuf, tenants: Vec<Arc<Tenant>>, stop: CancellationToken) {
    tokio::spawn(async move {
        let mut seen = tokio::fs::read(&path).await.ok();
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(POLL) => {}
            }
            let now = tokio::fs::read(&path).await.ok();
            if now == seen {
                continue;
            }
            seen = now;
            reload(&path, &tenants).await;
        }
    });
}

async fn reload(path: &Path, tenants: &[Arc<Tenant>]) {
    let shown = path.display().to_string();
    let entries = match read_tenants(path) {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!("{e}; the network policies in force stay as they were");
            return;
        }
    };
    let server = process_env();
    let known = |name: &str| tenants.iter().any(|t| t.name.as_deref() == Some(name));
    if entries.len() != tenants.len() || entries.iter().any(|e| !known(&e.name)) {
        tracing::info!("`{shown}` adds or removes tenants: that takes effect when the server starts again; changed network policies apply now");
    }
    for tenant in tenants {
        let Some(entry) = entries
            .iter()
            .find(|e| tenant.name.as_deref() == Some(e.name.as_str()))
        else {
            continue;
        };
        match entry.network_policy(&shown, &server) {
            Ok(policy) => {
                if tenant.set_network(policy) {
                    apply(tenant).await;
                }
            }
            Err(e) => tracing::warn!("{e}; that tenant's network policy stays as it was"),
        }
    }
}

/// Puts the tenant's policy in force on its computer, if it runs; a
/// stopped one gets it when it starts.
async fn apply(tenant: &Tenant) {
    let name = tenant.name.as_deref().unwrap_or_default();
    let env = process_env();
    let outcome = async {
        let settings = Settings::for_start_computer(&env).map_err(|e| e.to_string())?;
        let endpoint = resolve_endpoint(&env).map_err(|e| e.to_string())?;
        let docker = endpoint.connect().await.map_err(|e| e.to_string())?;
        let wanted = tenant.computer(&settings.computer);
        tenant.link.set_network(wanted.network.clone());
        let running = find_computer(&docker, &wanted.name)
            .await
            .map_err(|e| e.to_string())?
            .is_some_and(|found| found.state == ComputerState::Running);
        if running {
            guard::set_policy(&docker, &wanted.name, &wanted.network)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok::<bool, String>(running)
    }
    .await;
    match outcome {
        Ok(true) => tracing::info!("the tenant `{name}`'s new network policy is in force"),
        Ok(false) => tracing::info!(
            "the tenant `{name}`'s new network policy applies when its computer starts"
        ),
        Err(e) => tracing::warn!("the tenant `{name}`'s new network policy could not be put in force on its running computer: {e}"),
    }
}
