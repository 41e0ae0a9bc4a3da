//! The transparent TCP proxy: every TCP connection the computer opens to
//! an address outside itself is redirected here by the rules; this reads
//! where it was going (`SO_ORIGINAL_DST`), applies
//! [`verdict`](super::verdict), and either joins it to a marked connection
//! of its own (which the rules let out) or refuses it at once: a 403 page
//! for HTTP, a reset otherwise.

use super::relay::relay;
use super::resolver::resolve_a;
use super::sniff::{sniff, Sniffed, SNIFF_MAX};
use super::verdict::{after_sniff, before_sniff, Verdict};
use super::{marked_socket, Guard};
use computer_protocol::network::{blocked_range, NetworkLogEntry};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Web clients speak first, at once; a browser's preconnected socket may
/// wait longer before its request.
const WEB_SNIFF_WAIT: Duration = Duration::from_secs(10);
/// Other ports: a client that says nothing this soon is refused, so a
/// denied server-first protocol (ssh) fails fast instead of hanging.
const OTHER_SNIFF_WAIT: Duration = Duration::from_millis(50);
const CONNECT_DEADLINE: Duration = Duration::from_secs(15);

pub async fn serve(listener: TcpListener, guard: Arc<Guard>) {
    loop {
        match listener.accept().await {
            Ok((client, _)) => {
                let guard = guard.clone();
                tokio::spawn(async move { handle(client, &guard).await });
            }
            Err(e) => {
                tracing::warn!("the proxy cannot accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// The address a redirected connection was sent to.
fn original_destination(stream: &TcpStream) -> io::Result<SocketAddrV4> {
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: the buffer is a sockaddr_in of the length passed.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_IP,
            libc::SO_ORIGINAL_DST,
            (&raw mut addr).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(SocketAddrV4::new(
        Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr)),
        u16::from_be(addr.sin_port),
    ))
}

struct Attempt {
    started: Instant,
    started_ms: u64,
    at: String,
    host: Option<String>,
    dst: SocketAddrV4,
}

impl Attempt {
    fn entry(&self, allowed: bool, rule: String, bytes_out: u64, bytes_in: u64) -> NetworkLogEntry {
        NetworkLogEntry {
            at: self.at.clone(),
            host: self.host.clone(),
            address: self.dst.ip().to_string(),
            port: self.dst.port(),
            allowed,
            rule,
            bytes_out,
            bytes_in,
            duration_ms: self.started.elapsed().as_millis() as u64,
        }
    }
}

async fn handle(mut client: TcpStream, guard: &Guard) {
    let Ok(dst) = original_destination(&client) else {
        // Not redirected: something in the computer dialled the proxy's
        // own port. Nothing to forward.
        return;
    };
    let mut attempt = Attempt {
        started: Instant::now(),
        started_ms: super::journal::now_ms(),
        at: crate::clock::now_rfc3339(),
        host: guard.journal.name_of(*dst.ip()),
        dst,
    };
    if dst.ip().is_loopback() || dst.port() == guard.proxy_port && dst.ip().is_unspecified() {
        return;
    }
    let policy = guard.policy();
    let mut first = Vec::new();
    let verdict = match before_sniff(
        &policy,
        &guard.around,
        *dst.ip(),
        dst.port(),
        attempt.host.as_deref(),
    ) {
        Verdict::Sniff => {
            let wait = if matches!(dst.port(), 80 | 443 | 8080 | 8443) {
                WEB_SNIFF_WAIT
            } else {
                OTHER_SNIFF_WAIT
            };
            let sniffed = read_first(&mut client, &mut first, wait).await;
            if let Sniffed::Http { host } | Sniffed::Tls { server_name: host } = &sniffed {
                attempt.host = Some(host.clone());
            }
            after_sniff(&policy, *dst.ip(), dst.port(), &sniffed)
        }
        other => other,
    };
    let (target, rule) = match verdict {
        Verdict::Connect { rule } => (SocketAddr::V4(dst), rule),
        Verdict::Resolve { name, rule } => match where_name_goes(guard, &name, *dst.ip()).await {
            Ok(ip) => (SocketAddr::V4(SocketAddrV4::new(ip, dst.port())), rule),
            Err(why) => return refuse(client, guard, &attempt, &first, why.to_string()).await,
        },
        Verdict::Deny { rule } => {
            // An HTTP client denied by its address alone still gets the
            // page that says why, if it speaks at once.
            if first.is_empty() && matches!(dst.port(), 80 | 8080) {
                read_first(&mut client, &mut first, OTHER_SNIFF_WAIT).await;
            }
            return refuse(client, guard, &attempt, &first, rule).await;
        }
        Verdict::Sniff => unreachable!("after_sniff decides"),
    };
    let upstream = match connect_marked(target, guard.mark).await {
        Ok(stream) => stream,
        Err(e) => {
            let why = format!("{rule}; connecting failed: {e}");
            guard
                .journal
                .record(attempt.started_ms, attempt.entry(true, why, 0, 0));
            reset(client);
            return;
        }
    };
    let number = guard
        .journal
        .record(attempt.started_ms, attempt.entry(true, rule, 0, 0));
    let (out, inn) = join(client, upstream, &first).await;
    let duration_ms = attempt.started.elapsed().as_millis() as u64;
    guard.journal.finish(number, out, inn, duration_ms);
}

/// Reads the client's first bytes until they say where it goes, for at
/// most `wait` (and at most [`SNIFF_MAX`] bytes).
async fn read_first(client: &mut TcpStream, first: &mut Vec<u8>, wait: Duration) -> Sniffed {
    let deadline = tokio::time::Instant::now() + wait;
    let mut chunk = [0u8; 4096];
    loop {
        let verdict = sniff(first);
        if verdict != Sniffed::More {
            return verdict;
        }
        match tokio::time::timeout_at(deadline, client.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => {
                first.extend_from_slice(&chunk[..n]);
                if first.len() > SNIFF_MAX {
                    return Sniffed::Unknown;
                }
            }
            _ => return Sniffed::Unknown,
        }
    }
}

/// Where an allowed name's connection goes: the address asked for when the
/// computer's own lookup of that name gave it, otherwise the name's first
/// address by the guard's resolver, so that `/etc/hosts` cannot point an
/// allowed name elsewhere. The result is contained like any address.
async fn where_name_goes(
    guard: &Guard,
    name: &str,
    asked: Ipv4Addr,
) -> Result<Ipv4Addr, NameRefused> {
    let target = if guard.journal.addresses_of(name).contains(&asked) {
        asked
    } else {
        let found = resolve_a(guard, name)
            .await
            .map_err(|source| NameRefused::LookupFailed {
                name: name.to_string(),
                source,
            })?;
        guard.journal.learn(name, &found);
        if found.contains(&asked) {
            asked
        } else {
            *found.first().ok_or_else(|| NameRefused::NoIpv4 {
                name: name.to_string(),
            })?
        }
    };
    let policy = guard.policy();
    match blocked_range(target.into()) {
        Some(range) if policy.allowed_private(target.into()).is_none() => {
            Err(NameRefused::Contained {
                name: name.to_string(),
                target,
                range,
            })
        }
        _ => Ok(target),
    }
}

/// Why a connection to an allowed name goes nowhere; the refusal's page
/// and the log say it.
#[derive(Debug, thiserror::Error)]
enum NameRefused {
    #[error("`{name}` is allowed, but the guard could not look it up: {source}")]
    LookupFailed {
        name: String,
        #[source]
        source: io::Error,
    },
    #[error("`{name}` is allowed, but it has no IPv4 address")]
    NoIpv4 { name: String },
    #[error("`{name}` resolves to {target}, in the {range}, out of the computer's reach")]
    Contained {
        name: String,
        target: Ipv4Addr,
        range: String,
    },
}

async fn connect_marked(target: SocketAddr, mark: u32) -> io::Result<TcpStream> {
    let socket = marked_socket(target, mark)?;
    tokio::time::timeout(CONNECT_DEADLINE, socket.connect(target))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no answer within 15 s"))?
}

/// Relays both ways until both sides are done; bytes sent out (with the
/// sniffed head) and in.
async fn join(client: TcpStream, mut upstream: TcpStream, first: &[u8]) -> (u64, u64) {
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    if !first.is_empty() && upstream.write_all(first).await.is_err() {
        return (0, 0);
    }
    let (out, inn) = relay(&client, &upstream).await;
    (out + first.len() as u64, inn)
}

/// Logs the denial and refuses: HTTP gets a 403 that names the host and
/// the setting; anything else a reset.
async fn refuse(
    mut client: TcpStream,
    guard: &Guard,
    attempt: &Attempt,
    first: &[u8],
    rule: String,
) {
    guard
        .journal
        .record(attempt.started_ms, attempt.entry(false, rule.clone(), 0, 0));
    if matches!(sniff(first), Sniffed::Http { .. })
        || first.first().is_some_and(u8::is_ascii_uppercase)
    {
        let target = attempt
            .host
            .clone()
            .unwrap_or_else(|| attempt.dst.ip().to_string());
        let body = format!(
            "computer-use-mcp refused this request: the computer may not reach {target} (port {}).\nWhy: {rule}.\nThe network policy is set where the MCP server runs; see the README's \"Network\" section.\n",
            attempt.dst.port()
        );
        let response = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Computer-Use-Denied: {target}\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(response.as_bytes()).await;
        let _ = client.shutdown().await;
        return;
    }
    reset(client);
}

/// Closes with a reset, so the client's connect or read fails at once.
fn reset(client: TcpStream) {
    let _ = client.set_zero_linger();
    drop(client);
}
