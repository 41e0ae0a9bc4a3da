//! The computer's published ports. All of them bind 127.0.0.1 on the host so
//! nothing is reachable from the network:
//!
//! | host port        | container port | serves                         |
//! | ---------------- | -------------- | ------------------------------ |
//! | base             | 6080           | viewer page and its WebSocket  |
//! | base+1..=base+16 | 5901..=5916    | raw VNC of screens 1 to 16     |
//! | chosen by Docker | 7070           | the computerd API              |

use bollard::models::{PortBinding, PortMap};
use computer_protocol::limits::SCREENS_MAX;
use std::net::{Ipv4Addr, TcpListener};

pub const VIEWER_PORT: u16 = 6080;
/// Screen N serves VNC on `VNC_PORT_BASE + N`.
pub const VNC_PORT_BASE: u16 = 5900;
pub const API_PORT: u16 = 7070;
/// Host ports taken from the base on: the viewer and one per screen.
pub const HOST_PORTS: u16 = 1 + SCREENS_MAX as u16;
pub const LOOPBACK: &str = "127.0.0.1";

fn key(port: u16) -> String {
    format!("{port}/tcp")
}

/// Container port and host port of every fixed binding.
fn fixed(base: u16) -> impl Iterator<Item = (u16, u16)> {
    std::iter::once((VIEWER_PORT, base))
        .chain((1..=SCREENS_MAX as u16).map(move |n| (VNC_PORT_BASE + n, base + n)))
}

/// The ports the container exposes (all of them are published).
pub fn exposed_ports() -> Vec<String> {
    fixed(0)
        .map(|(container, _)| key(container))
        .chain(std::iter::once(key(API_PORT)))
        .collect()
}

/// Bindings for a computer whose first host port is `base`. The API gets an
/// empty host port, which Docker fills with a free one.
pub fn port_bindings(base: u16) -> PortMap {
    let bind = |host_port: String| {
        Some(vec![PortBinding {
            host_ip: Some(LOOPBACK.to_string()),
            host_port: Some(host_port),
        }])
    };
    fixed(base)
        .map(|(container, host)| (key(container), bind(host.to_string())))
        .chain(std::iter::once((key(API_PORT), bind(String::new()))))
        .collect()
}

/// The base port an existing container was created with, from its
/// configured bindings (present even while it is stopped).
pub fn base_from_bindings(bindings: &PortMap) -> Option<u16> {
    host_port(bindings, VIEWER_PORT)
}

/// The host port Docker gave the API, from a running container's
/// `NetworkSettings.Ports`. Prefers the 127.0.0.1 binding.
pub fn api_host_port(ports: &PortMap) -> Option<u16> {
    host_port(ports, API_PORT)
}

fn host_port(map: &PortMap, container_port: u16) -> Option<u16> {
    let bindings = map.get(&key(container_port))?.as_ref()?;
    let loopback = bindings
        .iter()
        .find(|b| b.host_ip.as_deref() == Some(LOOPBACK));
    loopback
        .or(bindings.first())?
        .host_port
        .as_deref()?
        .parse()
        .ok()
        .filter(|p| *p != 0)
}

/// The fixed host ports (viewer and VNC of `base`) that a running
/// container's `NetworkSettings.Ports` does not publish as they should be.
pub fn unpublished(ports: &PortMap, base: u16) -> Vec<u16> {
    fixed(base)
        .filter(|(container, host)| host_port(ports, *container) != Some(*host))
        .map(|(_, host)| host)
        .collect()
}

/// The first of the computer's fixed host ports that something on
/// 127.0.0.1 already uses. Docker would also refuse it, but only after
/// creating the container, and with a message that does not name the setting.
pub fn first_taken(base: u16) -> Option<u16> {
    fixed(base)
        .map(|(_, host)| host)
        .find(|port| TcpListener::bind((Ipv4Addr::LOCALHOST, *port)).is_err())
}

/// The host port in Docker's complaint about a taken port, such as
/// `Bind for 127.0.0.1:20901 failed: port is already allocated` or
/// `listen tcp4 127.0.0.1:20901: bind: address already in use`.
pub fn taken_port_in(message: &str) -> Option<u16> {
    if !(message.contains("port is already allocated")
        || message.contains("address already in use"))
    {
        return None;
    }
    let at = message.find("127.0.0.1:")? + "127.0.0.1:".len();
    let digits: String = message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_seventeen_ports_and_the_api_on_loopback() {
        let map = port_bindings(20900);
        assert_eq!(map.len(), 18);
        for (container, binding) in &map {
            let binding = binding.as_ref().unwrap();
            assert_eq!(binding.len(), 1, "{container}");
            assert_eq!(
                binding[0].host_ip.as_deref(),
                Some("127.0.0.1"),
                "{container}"
            );
        }
        assert_eq!(
            map["6080/tcp"].as_ref().unwrap()[0].host_port.as_deref(),
            Some("20900")
        );
        assert_eq!(
            map["5901/tcp"].as_ref().unwrap()[0].host_port.as_deref(),
            Some("20901")
        );
        assert_eq!(
            map["5916/tcp"].as_ref().unwrap()[0].host_port.as_deref(),
            Some("20916")
        );
        assert_eq!(
            map["7070/tcp"].as_ref().unwrap()[0].host_port.as_deref(),
            Some("")
        );
        let mut exposed = exposed_ports();
        exposed.sort();
        let mut keys: Vec<String> = map.keys().cloned().collect();
        keys.sort();
        assert_eq!(exposed, keys);
        assert_eq!(base_from_bindings(&map), Some(20900));
        // An unfilled API port is no port.
        assert_eq!(api_host_port(&map), None);
    }

    #[test]
    fn names_the_ports_not_published() {
        let mut map = port_bindings(20900);
        assert_eq!(unpublished(&map, 20900), Vec::<u16>::new());
        map.remove("5903/tcp");
        assert_eq!(unpublished(&map, 20900), vec![20903]);
        assert_eq!(unpublished(&map, 21000).len(), 17);
    }

    #[test]
    fn finds_the_port_in_dockers_messages() {
        let allocated = "driver failed programming external connectivity on endpoint cu (3f2a): Bind for 127.0.0.1:20903 failed: port is already allocated";
        assert_eq!(taken_port_in(allocated), Some(20903));
        let in_use = "driver failed programming external connectivity on endpoint cu: failed to bind port 127.0.0.1:20900/tcp: Error starting userland proxy: listen tcp4 127.0.0.1:20900: bind: address already in use";
        assert_eq!(taken_port_in(in_use), Some(20900));
        assert_eq!(taken_port_in("no such image"), None);
    }

    #[test]
    fn sees_a_taken_port() {
        // Other programs here hold ports too, and one below ours would be
        // the right answer for its block: so the block is one whose ports
        // below ours were free a moment before the look.
        let free = |port: u16| TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok();
        for _ in 0..50 {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            let taken = listener.local_addr().unwrap().port();
            // The listener sits on the fourth screen's port of this base.
            let Some(base) = taken.checked_sub(4) else {
                continue;
            };
            if (base..taken).all(free) {
                assert_eq!(first_taken(base), Some(taken));
                return;
            }
        }
        panic!("no port on 127.0.0.1 had four free ports below it in 50 tries");
    }
}
