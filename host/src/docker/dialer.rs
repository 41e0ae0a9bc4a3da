//! How the host reaches a computer's ports: computerd's API, the viewer and
//! VNC. The rest of the host only ever sees `http://127.0.0.1:<port>` URLs
//! and a base port; this module decides what stands behind them.
//!
//! - On a local engine (a Unix socket, a named pipe, or TCP to this
//!   machine's loopback), the ports Docker publishes on 127.0.0.1.
//! - On any other engine (TLS, ssh, TCP to another machine), or with
//!   `COMPUTER_USE_TUNNEL=always`, a [`Tunnel`]: listeners on this machine's
//!   127.0.0.1 whose connections ride the engine connection into the
//!   container. The published ports, on the other machine's loopback, are
//!   never used.
//!
//! Tunnels live as long as the process, one per engine and computer name,
//! so every agent of this process and every `start_computer` shares them.

use super::endpoint::{DockerEndpoint, Transport};
use super::error::DockerError;
use super::found::FoundComputer;
use super::tunnel::{Run, Tunnel};
use crate::settings::TunnelMode;
use bollard::Docker;
use parking_lot::Mutex;
use std::sync::Arc;

/// The dialer of one engine.
#[derive(Clone)]
pub struct Dialer {
    docker: Docker,
    /// The engine's address, which with the computer's name keys a tunnel.
    engine: String,
    way: Way,
}

/// Which way the computer's ports are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The ports Docker publishes on this machine's 127.0.0.1.
    Published,
    /// A [`Tunnel`] over the engine connection.
    Tunnel,
}

impl std::fmt::Display for Way {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Way::Published => "the ports the engine publishes on 127.0.0.1",
            Way::Tunnel => "a tunnel over the engine connection (docker exec of `computerd relay`)",
        })
    }
}

impl std::fmt::Debug for Dialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dialer")
            .field("engine", &self.engine)
            .field("way", &self.way)
            .finish_non_exhaustive()
    }
}

/// Where a running computer's ports are, as the rest of the host uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// `http://127.0.0.1:<port>` of computerd's API.
    pub api_url: String,
    /// The viewer's local port; VNC of screen N is on `port_base + N`.
    pub port_base: u16,
    /// The tunnel found the viewer's port held by something else (another
    /// MCP server relaying the same computer, or not).
    pub viewer_taken: bool,
}

/// A tunnel's key: the engine's address and the computer's name.
type TunnelKey = (String, String);

/// Every tunnel of this process.
static TUNNELS: Mutex<Vec<(TunnelKey, Arc<Tunnel>)>> = Mutex::new(Vec::new());

impl Dialer {
    pub fn new(endpoint: &DockerEndpoint, docker: &Docker, mode: TunnelMode) -> Dialer {
        let way = match mode {
            TunnelMode::Always => Way::Tunnel,
            TunnelMode::Auto if is_local(&endpoint.transport) => Way::Published,
            TunnelMode::Auto => Way::Tunnel,
        };
        Dialer {
            docker: docker.clone(),
            engine: endpoint.host.clone(),
            way,
        }
    }

    pub fn way(&self) -> Way {
        self.way
    }

    /// The engine this dialer reaches computers on.
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    /// Where `found` is reached, or `None` while Docker shows it without a
    /// running API (stopped, or started without its API port). Opens the
    /// tunnel the first time, and follows a computer created again.
    pub async fn reach(&self, found: &FoundComputer) -> Result<Option<Reach>, DockerError> {
        self.reach_io(found)
            .await
            .map_err(|source| DockerError::Tunnel {
                name: found.name.clone(),
                source,
            })
    }

    async fn reach_io(&self, found: &FoundComputer) -> std::io::Result<Option<Reach>> {
        // The engine publishes the API only while computerd's container
        // runs: on the remote machine's loopback too, where it says the
        // same even though that port is not used from here.
        let Some(published) = found.api_url() else {
            return Ok(None);
        };
        let port_base = found.port_base.unwrap_or_default();
        if self.way == Way::Published {
            return Ok(Some(Reach {
                api_url: published,
                port_base,
                viewer_taken: false,
            }));
        }
        let run = Run {
            container_id: found.id.clone(),
            started_at: found.started_at.clone().unwrap_or_default(),
        };
        let tunnel = self.tunnel(&found.name, &run, port_base).await?;
        Ok(Some(Reach {
            api_url: tunnel.api_url(&run).await?,
            port_base: tunnel.port_base(),
            viewer_taken: tunnel.viewer_taken(),
        }))
    }

    /// Closes the tunnel of computer `name`, so the next call opens a new
    /// one and binds the ports again.
    pub fn close_tunnel(&self, name: &str) {
        let key = (self.engine.clone(), name.to_string());
        let closed = {
            let mut tunnels = TUNNELS.lock();
            let at = tunnels.iter().position(|(k, _)| *k == key);
            at.map(|i| tunnels.remove(i))
        };
        drop(closed);
    }

    async fn tunnel(&self, name: &str, run: &Run, port_base: u16) -> std::io::Result<Arc<Tunnel>> {
        let key = (self.engine.clone(), name.to_string());
        {
            let tunnels = TUNNELS.lock();
            if let Some((_, tunnel)) = tunnels.iter().find(|(k, _)| *k == key) {
                if tunnel.port_base() == port_base {
                    return Ok(tunnel.clone());
                }
            }
        }
        // New, or the computer was created again on other ports: the old
        // listeners close before the new ones bind.
        self.close_tunnel(name);
        let tunnel = Arc::new(Tunnel::open(&self.docker, run, port_base).await?);
        let mut tunnels = TUNNELS.lock();
        // Two starts at once: the first one's tunnel wins, the other's closes.
        if let Some((_, existing)) = tunnels.iter().find(|(k, _)| *k == key) {
            return Ok(existing.clone());
        }
        tunnels.push((key, tunnel.clone()));
        Ok(tunnel)
    }
}

/// Whether the engine surely runs on this machine, so that what it
/// publishes on 127.0.0.1 is this machine's loopback: a socket or a pipe.
/// TCP is not, even to 127.0.0.1: that is often a remote engine forwarded
/// with `ssh -L`, whose published ports are on the other machine's
/// loopback, and whatever holds the same port here would get the token.
pub fn is_local(transport: &Transport) -> bool {
    match transport {
        Transport::Unix(_) | Transport::NamedPipe(_) => true,
        Transport::Http(_) | Transport::Tls { .. } => false,
        // Even `ssh://localhost` may land in another network namespace.
        Transport::Ssh(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_and_pipes_are_local() {
        assert!(is_local(&Transport::Unix("/var/run/docker.sock".into())));
        assert!(is_local(&Transport::NamedPipe(
            "//./pipe/docker_engine".into()
        )));
    }

    /// N15: loopback TCP may be a forwarded remote engine.
    #[test]
    fn tcp_is_remote_even_to_loopback() {
        assert!(!is_local(&Transport::Http("10.231.0.2:2375".into())));
        assert!(!is_local(&Transport::Http("build-box:2375".into())));
        assert!(!is_local(&Transport::Http("127.0.0.1:2375".into())));
        assert!(!is_local(&Transport::Http("localhost:2375".into())));
        assert!(!is_local(&Transport::Http("[::1]:2375".into())));
    }
}
