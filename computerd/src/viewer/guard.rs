//! Who may use the viewer.
//!
//! The viewer's port is published on the host's 127.0.0.1, so any web page
//! the person visits could try it: by making its own host name resolve to
//! 127.0.0.1 (DNS rebinding, caught by `Host`), or by opening a WebSocket
//! from its own origin (caught by `Origin`; browsers do not apply the
//! same-origin policy to WebSockets). The key is what the person holds;
//! page files carry nothing secret and load without it. The key is too long
//! to guess, so a right key always passes; a client sending many wrong ones
//! is told to wait (see [`super::throttle`]).

use super::error::ViewerError;
use super::throttle::{KeyThrottle, Outcome};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;
use subtle::ConstantTimeEq;

/// The names a browser may use for the viewer.
const HOST_NAMES: [&str; 2] = ["127.0.0.1", "localhost"];

#[derive(Clone)]
pub struct Guard {
    /// Ports a browser may name (see [`Guard::for_viewer`]).
    ports: Vec<u16>,
    key: String,
    /// Shared by every clone: one count of wrong keys per viewer.
    throttle: Arc<KeyThrottle>,
}

impl Guard {
    /// The guard of a viewer bound at `bound`, with the host's base port
    /// `port_base`.
    ///
    /// The base port is always ours: it is the link computerd prints, and
    /// in the container the host publishes the viewer there. The bound port
    /// is ours too only when the viewer listens on loopback, which is
    /// computerd running natively: the browser then reaches that port
    /// itself, and nothing off this machine can. Listening on all
    /// interfaces (the container, at 6080), the bound port is reached only
    /// through the container's network, never by the person's browser, and
    /// a page the host serves at `localhost:6080` (noVNC's own default) is
    /// someone else's page.
    pub fn for_viewer(port_base: u16, bound: SocketAddr, key: String) -> Guard {
        let bound_port = bound.ip().is_loopback().then_some(bound.port());
        Guard::new(std::iter::once(port_base).chain(bound_port), key)
    }

    pub fn new(ports: impl IntoIterator<Item = u16>, key: String) -> Guard {
        Guard::with_throttle(ports, key, KeyThrottle::default())
    }

    pub fn with_throttle(
        ports: impl IntoIterator<Item = u16>,
        key: String,
        throttle: KeyThrottle,
    ) -> Guard {
        let mut ports: Vec<u16> = ports.into_iter().collect();
        ports.sort_unstable();
        ports.dedup();
        Guard {
            ports,
            key,
            throttle: Arc::new(throttle),
        }
    }

    /// The key, for a page that brought a one-time code.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Checks the `Host` header of any request.
    pub fn check_host(&self, host: Option<&str>) -> Result<(), ViewerError> {
        match host {
            Some(host) if self.is_ours(host) => Ok(()),
            other => Err(ViewerError::ForeignHost {
                host: other.unwrap_or("").to_string(),
                allowed: self.allowed(),
            }),
        }
    }

    /// Checks the `Origin` header of a WebSocket upgrade: the page must be
    /// ours. A missing `Origin` is refused too; browsers always send one.
    pub fn check_origin(&self, origin: Option<&str>) -> Result<(), ViewerError> {
        let ours = origin
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|host| self.is_ours(host));
        if ours {
            Ok(())
        } else {
            Err(ViewerError::ForeignOrigin {
                origin: origin.unwrap_or("").to_string(),
                allowed: self.allowed(),
            })
        }
    }

    /// Checks the viewer key `client` sent, in constant time, so it cannot
    /// be guessed byte by byte from response times. A request without a key
    /// is refused without counting as a guess.
    pub fn check_key(&self, client: IpAddr, key: Option<&str>) -> Result<(), ViewerError> {
        let Some(given) = key.filter(|k| !k.is_empty()) else {
            return Err(ViewerError::WrongKey);
        };
        let right = bool::from(given.as_bytes().ct_eq(self.key.as_bytes()));
        match self.throttle.check(client, Instant::now(), right) {
            Outcome::Right => Ok(()),
            Outcome::Wrong => Err(ViewerError::WrongKey),
            Outcome::Throttled(throttled) => Err(ViewerError::TooManyWrongKeys(throttled)),
        }
    }

    /// Checks a WebSocket upgrade: it carries screens and the session list,
    /// so it needs both our page as its origin and the key.
    pub fn check_socket(
        &self,
        client: IpAddr,
        origin: Option<&str>,
        key: Option<&str>,
    ) -> Result<(), ViewerError> {
        self.check_origin(origin)?;
        self.check_key(client, key)
    }

    /// `host:port` with one of our names and ports; names are
    /// case-insensitive, as in DNS.
    fn is_ours(&self, authority: &str) -> bool {
        let Some((name, port)) = authority.rsplit_once(':') else {
            return false;
        };
        let port_ok = port.parse::<u16>().is_ok_and(|p| self.ports.contains(&p));
        port_ok && HOST_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
    }

    fn allowed(&self) -> String {
        self.ports
            .iter()
            .flat_map(|port| HOST_NAMES.iter().map(move |n| format!("http://{n}:{port}")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new([20900, 41234, 20900], KEY.into())
    }

    #[test]
    fn hosts() {
        let g = guard();
        for ok in [
            "127.0.0.1:20900",
            "localhost:20900",
            "LocalHost:41234",
            "127.0.0.1:41234",
        ] {
            assert!(g.check_host(Some(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:20900",
            "127.0.0.1",
            "localhost",
            "127.0.0.1:20901",
            "127.0.0.2:20900",
            "localhost.evil.example:20900",
            "[::1]:20900",
            "",
        ] {
            assert!(g.check_host(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(
            g.check_host(Some("evil.example:20900"))
                .unwrap_err()
                .to_string(),
            "the viewer answers only at http://127.0.0.1:20900, http://localhost:20900, \
             http://127.0.0.1:41234, http://localhost:41234, not at `evil.example:20900`; \
             open the viewer link that `computer-use-mcp info` prints"
        );
        assert!(g.check_host(None).is_err());
    }

    #[test]
    fn origins() {
        let g = guard();
        assert!(g.check_origin(Some("http://127.0.0.1:20900")).is_ok());
        assert!(g.check_origin(Some("http://localhost:41234")).is_ok());
        for bad in [
            "https://127.0.0.1:20900",
            "http://evil.example:20900",
            "http://127.0.0.1:8080",
            "null",
            "",
        ] {
            assert!(g.check_origin(Some(bad)).is_err(), "{bad}");
        }
        assert!(g.check_origin(None).is_err());
    }

    #[test]
    fn the_containers_own_port_is_not_ours() {
        // In the container the viewer listens on all interfaces at 6080 and
        // the host publishes it at its base port: a page the host serves at
        // `localhost:6080` (noVNC's default) is someone else's.
        let g = Guard::for_viewer(20900, "0.0.0.0:6080".parse().unwrap(), "k".into());
        assert!(g.check_host(Some("127.0.0.1:20900")).is_ok());
        assert!(g.check_origin(Some("http://localhost:20900")).is_ok());
        assert!(g.check_host(Some("localhost:6080")).is_err());
        assert!(g.check_origin(Some("http://localhost:6080")).is_err());
        // Published at the port it listens on, it is the same port.
        let g = Guard::for_viewer(6080, "0.0.0.0:6080".parse().unwrap(), "k".into());
        assert!(g.check_origin(Some("http://localhost:6080")).is_ok());
    }

    #[test]
    fn natively_on_loopback_the_bound_port_is_ours_too() {
        for bound in ["127.0.0.1:41234", "[::1]:41234"] {
            let g = Guard::for_viewer(20900, bound.parse().unwrap(), "k".into());
            assert!(g.check_host(Some("localhost:41234")).is_ok(), "{bound}");
            assert!(g.check_origin(Some("http://127.0.0.1:41234")).is_ok());
            assert!(g.check_host(Some("127.0.0.1:20900")).is_ok());
        }
    }

    const KEY: &str = "ab3d5fghjkmnpqrstuvwxyz23456789a";

    #[test]
    fn keys() {
        let g = guard();
        let client = IpAddr::from([127, 0, 0, 1]);
        assert!(g.check_key(client, Some(KEY)).is_ok());
        assert!(
            g.check_key(client, Some("ab3d5fgh")).is_err(),
            "the VNC password is not the key"
        );
        assert!(g.check_key(client, Some(&format!("{KEY}9"))).is_err());
        assert!(g.check_key(client, Some("")).is_err());
        assert!(g.check_key(client, None).is_err());
    }

    #[test]
    fn too_many_wrong_keys_wait_and_the_right_key_still_passes() {
        use super::super::throttle::WRONG_KEYS_PER_CLIENT;
        let g = guard();
        let client = IpAddr::from([127, 0, 0, 1]);
        for _ in 0..WRONG_KEYS_PER_CLIENT {
            assert!(matches!(
                g.check_key(client, Some("wrongkey")),
                Err(ViewerError::WrongKey)
            ));
        }
        let refused = g.check_key(client, Some("wrongkey")).unwrap_err();
        assert_eq!(refused.status(), 429);
        assert!(refused.retry_after().is_some());
        // Clones (one per request) share the count; no key is no guess.
        assert_eq!(
            g.clone().check_key(client, Some("x")).unwrap_err().status(),
            429
        );
        assert_eq!(g.check_key(client, None).unwrap_err().status(), 403);
        assert!(g.check_key(client, Some(KEY)).is_ok());
    }
}
