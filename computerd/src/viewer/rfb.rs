//! Reaching a screen's Xvnc from inside the computer.

use super::error::ViewerError;
use computer_protocol::ScreenNumber;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::net::TcpStream;

/// Where to connect to a VNC server listening on `interface`: a wildcard
/// address is reached through loopback.
pub fn rfb_address(interface: &str, port: u16) -> SocketAddr {
    let ip = match interface.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Ok(IpAddr::V6(v6)) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        Ok(ip) => ip,
        // The setting is checked at start; loopback is where Xvnc listens.
        Err(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    SocketAddr::new(ip, port)
}

pub async fn connect(
    screen: ScreenNumber,
    interface: &str,
    port: u16,
) -> Result<TcpStream, ViewerError> {
    let address = rfb_address(interface, port);
    let stream = TcpStream::connect(address)
        .await
        .map_err(|source| ViewerError::Xvnc {
            screen,
            address,
            source,
        })?;
    // RFB is chatty with small messages (pointer events); batching them
    // would make the remote pointer lag.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_become_loopback() {
        assert_eq!(rfb_address("0.0.0.0", 5901).to_string(), "127.0.0.1:5901");
        assert_eq!(rfb_address("::", 5902).to_string(), "[::1]:5902");
        assert_eq!(
            rfb_address("127.0.0.1", 10001).to_string(),
            "127.0.0.1:10001"
        );
        assert_eq!(rfb_address("10.0.0.5", 5901).to_string(), "10.0.0.5:5901");
    }
}
