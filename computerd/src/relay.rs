//! `computerd relay 127.0.0.1:PORT`: one TCP connection to a port of this
//! computer, carried over the process's stdin and stdout.
//!
//! The host runs it with `docker exec` when the engine is remote: the exec's
//! attached streams ride the engine connection (TLS or ssh) the host already
//! has, so computerd's API, the viewer and VNC are reached without any port
//! published beyond the remote machine's loopback. One relay carries one
//! connection; HTTP keep-alive makes that many calls.
//!
//! Only loopback addresses are relayed: the relay is a way into this
//! computer's own services, not out of it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsFd;

/// Bytes moved per read; a frame or a tar block arrives in a few.
const CHUNK: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("usage: computerd relay 127.0.0.1:PORT (one address, a loopback one)")]
    Usage,
    #[error("`{0}` is not a loopback address: the relay only reaches this computer's own ports")]
    NotLoopback(SocketAddr),
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("relaying {addr}: {source}")]
    Io {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The address to relay, from the arguments after `relay`.
pub fn target(args: &[String]) -> Result<SocketAddr, RelayError> {
    let [addr] = args else {
        return Err(RelayError::Usage);
    };
    let addr: SocketAddr = addr.parse().map_err(|_| RelayError::Usage)?;
    if !addr.ip().is_loopback() {
        return Err(RelayError::NotLoopback(addr));
    }
    Ok(addr)
}

/// Connects to `addr` and copies stdin to it and it to stdout until the
/// connection closes. Stdin's end closes the connection's sending half, so a
/// request already sent still gets its answer.
pub fn run(addr: SocketAddr) -> Result<(), RelayError> {
    let socket = TcpStream::connect(addr).map_err(|source| RelayError::Connect { addr, source })?;
    // Every hop adds latency; small writes (a key press, a VNC update
    // request) must not wait for Nagle.
    let _ = socket.set_nodelay(true);
    let io = |source| RelayError::Io { addr, source };
    // Unbuffered handles on fds 0 and 1: Rust's own stdout is line-buffered.
    let stdin = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned().map_err(io)?);
    let stdout = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().map_err(io)?);
    let sending = socket.try_clone().map_err(io)?;
    std::thread::spawn(move || {
        let _ = copy(stdin, &sending);
        let _ = sending.shutdown(Shutdown::Write);
    });
    copy(&socket, stdout).map_err(io)
}

/// Copies until end of input, writing each chunk as soon as it is read.
fn copy(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_loopback_address_is_relayed() {
        assert_eq!(
            target(&args(&["127.0.0.1:7070"])).unwrap(),
            "127.0.0.1:7070".parse().unwrap()
        );
        assert!(target(&args(&["[::1]:6080"])).is_ok());
    }

    #[test]
    fn other_addresses_and_shapes_are_refused() {
        assert!(matches!(
            target(&args(&["10.0.0.1:7070"])),
            Err(RelayError::NotLoopback(_))
        ));
        assert!(matches!(target(&args(&[])), Err(RelayError::Usage)));
        assert!(matches!(
            target(&args(&["127.0.0.1:7070", "x"])),
            Err(RelayError::Usage)
        ));
        assert!(matches!(
            target(&args(&["localhost:7070"])),
            Err(RelayError::Usage)
        ));
    }

    #[test]
    fn bytes_go_both_ways_and_the_answer_outlives_the_end_of_input() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // An echo server that answers only after its input ended, as an
        // HTTP server may after a half-close.
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            conn.read_to_end(&mut got).unwrap();
            conn.write_all(&got).unwrap();
        });
        let socket = TcpStream::connect(addr).unwrap();
        let sending = socket.try_clone().unwrap();
        let input = std::io::Cursor::new(b"hello through the relay".to_vec());
        std::thread::spawn(move || {
            copy(input, &sending).unwrap();
            sending.shutdown(Shutdown::Write).unwrap();
        });
        let mut out = Vec::new();
        copy(&socket, &mut out).unwrap();
        server.join().unwrap();
        assert_eq!(out, b"hello through the relay");
    }
}
