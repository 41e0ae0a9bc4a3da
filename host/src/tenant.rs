//! Whose computer an agent drives. stdio and a one-token HTTP server have
//! one computer. With `COMPUTER_USE_HTTP_TENANTS`, each tenant has its own:
//! container `<COMPUTER_USE_NAME>-<tenant>` with its own home volume, viewer
//! key, VNC password and ports (a slot the host chooses, see
//! [`crate::docker::slots`]), and host files beneath its own folder of
//! `COMPUTER_USE_TRANSFER_ROOT`. Sessions of one computer share one Linux
//! user, so the computer is the isolation line between people.

use crate::link::Link;
use crate::settings::ComputerSettings;
use crate::transfer::HostFiles;
use computer_protocol::network::NetworkPolicy;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

pub struct Tenant {
    /// `None` for the one computer of stdio or a one-token HTTP server.
    pub name: Option<String>,
    /// The tenant's computer, shared by all of its agents.
    pub link: Arc<Link>,
    /// Where its agents' host paths may lead.
    pub files: HostFiles,
    /// Its own network policy from the tenants file, over the server's;
    /// `None` takes the server's. Changed while the server runs when the
    /// file changes.
    network: RwLock<Option<NetworkPolicy>>,
    /// How many computers of this server share the engine: its default
    /// memory is its part of the share.
    sharing: u32,
    /// The key its home must carry (see `serve::tenants::home_key`); `None`
    /// without a name.
    home_key: Option<String>,
    /// Its agents reach the server over HTTP, so they are not whoever sits
    /// at the server's desktop: nothing opens there for them unless
    /// `COMPUTER_USE_OPEN` says so.
    pub over_http: bool,
}

impl Tenant {
    /// The one computer of a stdio server, whose client is the server's
    /// own user: host paths resolve as in a shell.
    pub fn local() -> Arc<Tenant> {
        Arc::new(Tenant {
            name: None,
            link: Arc::new(Link::new()),
            files: HostFiles::Anywhere,
            network: RwLock::new(None),
            home_key: None,
            sharing: 1,
            over_http: false,
        })
    }

    /// One of `sharing` tenants of an HTTP server (1 for the one computer
    /// of a one-token server); `name` is its name and home key.
    pub fn new(
        name: Option<(String, String)>,
        files: HostFiles,
        network: Option<NetworkPolicy>,
        sharing: u32,
    ) -> Arc<Tenant> {
        let (name, home_key) = name.unzip();
        Arc::new(Tenant {
            name,
            link: Arc::new(Link::new()),
            files,
            network: RwLock::new(network),
            home_key,
            sharing: sharing.max(1),
            over_http: true,
        })
    }

    /// Puts a new policy of the tenant's own in place; whether it differs
    /// from the one before.
    pub fn set_network(&self, policy: Option<NetworkPolicy>) -> bool {
        let mut mine = self.network.write().unwrap_or_else(|e| e.into_inner());
        let changed = *mine != policy;
        *mine = policy;
        changed
    }

    /// `settings` as they apply to this tenant's computer: the name gains
    /// the tenant's, and its own network policy replaces the server's. The
    /// port base is chosen with Docker when the computer is created (see
    /// [`crate::computer::start`]).
    pub fn computer(&self, settings: &ComputerSettings) -> ComputerSettings {
        let mut mine = settings.clone();
        if let Some(name) = &self.name {
            mine.name = computer_name(&settings.name, name);
        }
        if let Some(policy) = &*self.network.read().unwrap_or_else(|e| e.into_inner()) {
            mine.network = policy.clone();
        }
        mine.limits.sharing = self.sharing;
        mine.home_key = self.home_key.clone();
        mine
    }
}

/// The container of tenant `tenant` on a server whose computers are named
/// from `base` (`COMPUTER_USE_NAME`, `computer-use` by default).
pub fn computer_name(base: &str, tenant: &str) -> String {
    format!("{base}-{tenant}")
}

/// A tenant's MCP sessions, counted up to a limit (`COMPUTER_USE_HTTP_SESSIONS`,
/// see `serve::shares`). A slot is reserved before an `initialize` reaches
/// rmcp, and held by the session's server for as long as the session
/// lives; a request that made no session drops it again.
#[derive(Debug)]
pub struct SessionSlots {
    live: Arc<AtomicUsize>,
    max: usize,
}

/// One counted MCP session; the count drops when the last clone goes.
#[derive(Debug, Clone)]
pub struct SessionSlot(#[allow(dead_code)] Arc<SlotHeld>);

#[derive(Debug)]
struct SlotHeld(Arc<AtomicUsize>);

impl Drop for SlotHeld {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl SessionSlots {
    pub fn new(max: usize) -> SessionSlots {
        SessionSlots {
            live: Arc::default(),
            max,
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// A slot, unless `max` are held.
    pub fn reserve(&self) -> Option<SessionSlot> {
        self.live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        Some(SessionSlot(Arc::new(SlotHeld(Arc::clone(&self.live)))))
    }
}

#[cfg(test)]
mod slot_tests {
    use super::*;

    #[test]
    fn slots_are_held_until_the_last_clone_goes() {
        let slots = SessionSlots::new(2);
        let a = slots.reserve().unwrap();
        let b = slots.reserve().unwrap();
        assert!(slots.reserve().is_none());
        let kept = a.clone();
        drop(a);
        assert!(slots.reserve().is_none(), "a clone still holds it");
        drop(kept);
        assert!(slots.reserve().is_some());
        drop(b);
    }
}
