//! The computer's DNS: every lookup it sends anywhere (its resolver, any
//! other server, over UDP or TCP) is redirected here. Names the policy
//! allows are forwarded to the real resolver on a marked socket and their
//! addresses remembered; others are refused (and logged). IPv6 answers are
//! empty, since no IPv6 leaves a computer.

use super::dns::{a_records, answer_without_records, query_a, question, TYPE_AAAA};
use super::Guard;
use computer_protocol::network::NetworkLogEntry;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

const UPSTREAM_DEADLINE: Duration = Duration::from_secs(5);
const REFUSED: u8 = 5;
const NO_ERROR: u8 = 0;

pub async fn serve_udp(socket: UdpSocket, guard: Arc<Guard>) {
    let socket = Arc::new(socket);
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((n, from)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        let query = buf[..n].to_vec();
        let (socket, guard) = (socket.clone(), guard.clone());
        tokio::spawn(async move {
            if let Some(answer) = answer(&guard, &query).await {
                let _ = socket.send_to(&answer, from).await;
            }
        });
    }
}

pub async fn serve_tcp(listener: TcpListener, guard: Arc<Guard>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let guard = guard.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(30), serve_tcp_client(stream, &guard))
                .await;
        });
    }
}

async fn serve_tcp_client(mut stream: TcpStream, guard: &Guard) -> io::Result<()> {
    loop {
        let len = usize::from(stream.read_u16().await?);
        let mut query = vec![0u8; len];
        stream.read_exact(&mut query).await?;
        let Some(answer) = answer(guard, &query).await else {
            return Ok(());
        };
        stream.write_u16(answer.len() as u16).await?;
        stream.write_all(&answer).await?;
    }
}

/// The answer to one query, or `None` to drop it.
async fn answer(guard: &Guard, query: &[u8]) -> Option<Vec<u8>> {
    let q = question(query)?;
    let policy = guard.policy();
    if !policy.allows_lookup(&q.name) {
        let rule = match policy.mode {
            computer_protocol::network::EgressMode::None => "COMPUTER_USE_EGRESS=none".to_string(),
            _ => super::verdict::fix_allow(&q.name),
        };
        guard.journal.record(
            super::journal::now_ms(),
            NetworkLogEntry {
                at: crate::clock::now_rfc3339(),
                host: Some(q.name.clone()),
                address: guard.around.resolver.to_string(),
                port: 53,
                allowed: false,
                rule: format!("lookup refused: {rule}"),
                bytes_out: 0,
                bytes_in: 0,
                duration_ms: 0,
            },
        );
        return Some(answer_without_records(query, &q, REFUSED));
    }
    if q.qtype == TYPE_AAAA {
        return Some(answer_without_records(query, &q, NO_ERROR));
    }
    let answer = ask_upstream(guard, query).await.ok()?;
    let addresses = a_records(&answer);
    guard.journal.learn(&q.name, &addresses);
    Some(answer)
}

/// Sends a query to the real resolver from a marked socket.
async fn ask_upstream(guard: &Guard, query: &[u8]) -> io::Result<Vec<u8>> {
    let server = SocketAddr::new(guard.around.resolver, 53);
    let local: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = std::net::UdpSocket::bind(local)?;
    super::set_mark(&socket, guard.mark)?;
    socket.set_nonblocking(true)?;
    let socket = UdpSocket::from_std(socket)?;
    socket.connect(server).await?;
    socket.send(query).await?;
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(UPSTREAM_DEADLINE, socket.recv(&mut buf))
        .await
        .map_err(|_| {
            io::Error::new(io::ErrorKind::TimedOut, format!("{server} did not answer"))
        })??;
    buf.truncate(n);
    Ok(buf)
}

/// The guard's own lookup of `name`'s IPv4 addresses.
pub async fn resolve_a(guard: &Guard, name: &str) -> io::Result<Vec<Ipv4Addr>> {
    let id: u16 = rand::random();
    let answer = ask_upstream(guard, &query_a(id, name)).await?;
    Ok(a_records(&answer))
}
