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
use std::sync::Arc;

pub struct Tenant {
    /// `None` for the one computer of stdio or a one-token HTTP server.
    pub name: Option<String>,
    /// The tenant's computer, shared by all of its agents.
    pub link: Arc<Link>,
    /// Where its agents' host paths may lead.
    pub files: HostFiles,
}

impl Tenant {
    /// The one computer of a stdio server, whose client is the server's
    /// own user: host paths resolve as in a shell.
    pub fn local() -> Arc<Tenant> {
        Arc::new(Tenant {
            name: None,
            link: Arc::new(Link::new()),
            files: HostFiles::Anywhere,
        })
    }

    pub fn new(name: Option<String>, files: HostFiles) -> Arc<Tenant> {
        Arc::new(Tenant {
            name,
            link: Arc::new(Link::new()),
            files,
        })
    }

    /// `settings` as they apply to this tenant's computer: the name gains
    /// the tenant's. The port base is chosen with Docker when the computer
    /// is created (see [`crate::computer::start`]).
    pub fn computer(&self, settings: &ComputerSettings) -> ComputerSettings {
        let mut mine = settings.clone();
        if let Some(name) = &self.name {
            mine.name = computer_name(&settings.name, name);
        }
        mine
    }
}

/// The container of tenant `tenant` on a server whose computers are named
/// from `base` (`COMPUTER_USE_NAME`, `computer-use` by default).
pub fn computer_name(base: &str, tenant: &str) -> String {
    format!("{base}-{tenant}")
}
