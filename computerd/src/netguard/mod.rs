//! `computerd net-guard`: the computer's network guard. It runs in a
//! container of its own that owns the computer's network namespace (the
//! computer joins it, and starts only once these rules hold) with
//! CAP_NET_ADMIN, which the computer's container lacks: the computer's root
//! can neither change its rules, nor see or signal its process, nor set the
//! socket mark its own connections carry.
//!
//! Data flows: [`rules`] sends every TCP connection and DNS lookup of the
//! computer to [`proxy`] and [`resolver`]; those judge it by [`verdict`]
//! (after [`sniff`] for web traffic; [`dns`] for lookups), forward what is
//! allowed on marked sockets ([`relay`] moves the bytes), and write every
//! connection and refused lookup to the [`journal`]. In `open` mode the
//! rules let the kernel forward TCP to public addresses itself (the
//! [`kernel_path`]), which logs those connections from the kernel's
//! connection tracking ([`conntrack`]). [`control`] answers the host (the log, a new policy)
//! on a Unix socket in the guard's own filesystem, and computerd (the
//! denials during a call) on a loopback port of the shared namespace.
//!
//! Subcommands: `run POLICY_JSON` (the container's command), `log
//! DENIED_ONLY LIMIT`,
//! `policy POLICY_JSON` (both through `docker exec` into the guard).

mod conntrack;
mod control;
mod dns;
mod error;
mod journal;
mod kernel_path;
mod proxy;
mod relay;
mod resolver;
mod rules;
mod sniff;
mod verdict;

pub use control::{denials_since, started_between, DENIALS_PORT};
pub use journal::now_ms;

/// The guard's denials since `since_ms`, one line each, for a call's result.
pub async fn denial_lines_since(since_ms: u64) -> Vec<String> {
    denials_since(since_ms)
        .await
        .iter()
        .map(computer_protocol::network::NetworkLogEntry::denial_line)
        .collect()
}

use computer_protocol::network::NetworkPolicy;
use error::GuardError;
use journal::Journal;
use kernel_path::KernelPath;
use parking_lot::RwLock;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;
use verdict::Surroundings;

/// The mark on the guard's own sockets: the only traffic the rules let out.
const MARK: u32 = 0x2b1d;
const PROXY_PORT: u16 = 15001;
const DNS_PORT: u16 = 15053;
/// The guard's own line on stdout once its rules hold and it listens; the
/// host waits for it before the computer's first call.
pub const READY_LINE: &str = "computer-use network guard: ready";

pub struct Guard {
    policy: RwLock<Arc<NetworkPolicy>>,
    journal: Arc<Journal>,
    /// Where the kernel forwards `open` mode's public connections itself;
    /// `None` where it cannot log them, and the proxy carries everything.
    kernel_path: Option<Arc<KernelPath>>,
    around: Surroundings,
    gateway: Option<IpAddr>,
    mark: u32,
    proxy_port: u16,
}

impl Guard {
    fn policy(&self) -> Arc<NetworkPolicy> {
        self.policy.read().clone()
    }

    /// Installs the rules for `policy` and makes it the one in force.
    fn set_policy(&self, policy: NetworkPolicy) -> Result<(), GuardError> {
        let text = rules::ruleset(
            &policy,
            &self.around,
            self.gateway,
            rules::Ports {
                proxy: PROXY_PORT,
                dns: DNS_PORT,
            },
            self.mark,
            self.kernel_path
                .as_ref()
                .map(|_| kernel_path::CONNECTION_MARK),
        );
        rules::apply(&text)?;
        *self.policy.write() = Arc::new(policy);
        Ok(())
    }
}

/// Sets `SO_MARK`; needs CAP_NET_ADMIN, which is the point.
fn set_mark(socket: &impl AsRawFd, mark: u32) -> io::Result<()> {
    set_socket_option(socket, libc::SOL_SOCKET, libc::SO_MARK, &mark)
}

/// `setsockopt(2)` with a value of the type the option takes (an int, a
/// `timeval`, ...).
fn set_socket_option<T>(
    socket: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    // SAFETY: the value is a live `T` and the length given is its size.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn marked_socket(target: SocketAddr, mark: u32) -> io::Result<tokio::net::TcpSocket> {
    let socket = if target.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    set_mark(&socket, mark)?;
    Ok(socket)
}

/// `computerd net-guard ...`; returns the process's exit code.
pub fn main(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        Some("run") => run(args.get(1).map(String::as_str).unwrap_or("{}")),
        Some("log") => {
            // `log DENIED_ONLY LIMIT`, as the host passes them.
            let words: Vec<&str> = args[1..].iter().map(String::as_str).collect();
            control::ask(&format!("log {}", words.join(" "))).map(|answer| println!("{answer}"))
        }
        Some("policy") => {
            let json = args.get(1).map(String::as_str).unwrap_or("");
            control::ask(&format!("policy {json}")).map(|answer| println!("{answer}"))
        }
        _ => Err(GuardError::Usage),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("computerd net-guard: {e}");
            1
        }
    }
}

fn run(policy_json: &str) -> Result<(), GuardError> {
    let policy: NetworkPolicy =
        serde_json::from_str(policy_json).map_err(GuardError::PolicyJson)?;
    crate::log_to_stderr();
    let gateway = default_gateway();
    let around = Surroundings {
        host: host_address()
            .or(gateway.and_then(|g| match g {
                IpAddr::V4(v4) => Some(v4),
                IpAddr::V6(_) => None,
            }))
            .unwrap_or(Ipv4Addr::UNSPECIFIED),
        resolver: policy
            .resolver
            .or_else(configured_resolver)
            .ok_or(GuardError::NoResolver)?,
    };
    let journal = Arc::new(Journal::default());
    // Subscribed before the first rule holds, so no connection goes unseen.
    let kernel_path = KernelPath::start(journal.clone());
    let guard = Arc::new(Guard {
        policy: RwLock::new(Arc::new(NetworkPolicy::default())),
        journal,
        kernel_path,
        around,
        gateway,
        mark: MARK,
        proxy_port: PROXY_PORT,
    });
    guard.set_policy(policy)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(GuardError::Runtime)?;
    runtime.block_on(async move {
        let loopback = Ipv4Addr::LOCALHOST;
        let proxy = tokio::net::TcpListener::bind((loopback, PROXY_PORT))
            .await
            .map_err(GuardError::listen(format!("{loopback}:{PROXY_PORT}")))?;
        let dns_udp = tokio::net::UdpSocket::bind((loopback, DNS_PORT))
            .await
            .map_err(GuardError::listen(format!("udp {loopback}:{DNS_PORT}")))?;
        let dns_tcp = tokio::net::TcpListener::bind((loopback, DNS_PORT))
            .await
            .map_err(GuardError::listen(format!("{loopback}:{DNS_PORT}")))?;
        let control = control::bind()?;
        let denials = tokio::net::TcpListener::bind((loopback, DENIALS_PORT))
            .await
            .map_err(GuardError::listen(format!("{loopback}:{DENIALS_PORT}")))?;
        tokio::spawn(proxy::serve(proxy, guard.clone()));
        tokio::spawn(resolver::serve_udp(dns_udp, guard.clone()));
        tokio::spawn(resolver::serve_tcp(dns_tcp, guard.clone()));
        tokio::spawn(control::serve_host(control, guard.clone()));
        tokio::spawn(control::serve_computer(denials, guard.clone()));
        tracing::info!(
            policy = guard.policy().summary(),
            resolver = %guard.around.resolver,
            host = %guard.around.host,
            kernel_path = guard.kernel_path.is_some(),
            "the computer's network is contained"
        );
        println!("{READY_LINE}");
        // Where this guard owns the namespace, its interfaces last as long
        // as it does. Where it joined a computer's own namespace (one made
        // before guards owned it), they go when the computer stops, and so
        // does this guard.
        while has_interfaces() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        tracing::info!("the computer's network is gone; the guard ends");
        Ok(())
    })
}

/// Whether the namespace still has an interface besides loopback.
fn has_interfaces() -> bool {
    std::fs::read_dir("/sys/class/net")
        .is_ok_and(|dir| dir.flatten().any(|entry| entry.file_name() != "lo"))
}

/// The default route's gateway, from `/proc/net/route`: the engine's side
/// of the bridge.
fn default_gateway() -> Option<IpAddr> {
    let table = std::fs::read_to_string("/proc/net/route").ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1) == Some(&"00000000"))
            .then(|| u32::from_str_radix(fields.get(2)?, 16).ok())
            .flatten()
            .map(|hex| IpAddr::V4(Ipv4Addr::from(u32::from_be(hex))))
    })
}

/// `host.docker.internal` in the namespace's hosts file (Docker writes it
/// when the computer starts, before any of the agent's code runs).
fn host_address() -> Option<Ipv4Addr> {
    let hosts = std::fs::read_to_string("/etc/hosts").ok()?;
    hosts.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let addr = words.next()?.parse::<Ipv4Addr>().ok()?;
        words
            .any(|w| w == computer_protocol::network::HOST_NAME)
            .then_some(addr)
    })
}

fn configured_resolver() -> Option<IpAddr> {
    let conf = std::fs::read_to_string("/etc/resolv.conf").ok()?;
    conf.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("nameserver")?;
        rest.trim().parse().ok()
    })
}
