//! The firewall of the computer's network namespace, as one nftables table
//! replaced atomically (`nft -f -`). The guard's container holds
//! CAP_NET_ADMIN in that namespace; the computer's container does not, so
//! nothing inside the computer, root included, can change these rules.
//!
//! - Out: loopback is free. Every other TCP connection is redirected to the
//!   proxy and every lookup (UDP or TCP port 53, to any server) to the
//!   resolver, unless its socket carries the guard's mark, which only a
//!   holder of CAP_NET_ADMIN can set. Marked traffic may reach public IPv4
//!   addresses, the resolver on port 53, the named private ranges and host
//!   ports; everything else (raw sockets are impossible without CAP_NET_RAW,
//!   but UDP, ICMP and all of IPv6 are not) is refused at once.
//! - The kernel path: in `open` mode, with `kernel_path` given, a TCP
//!   connection to a public IPv4 address (not contained, not the engine's
//!   machine) is not redirected: the kernel forwards it and gives it that
//!   connection mark, which the guard's log follows. Only these rules can
//!   set a connection mark, so the mark admits nothing else.
//! - In: only the engine's side (published ports, through the bridge's
//!   gateway) may open connections; other computers cannot.

use super::error::GuardError;
use super::verdict::Surroundings;
use computer_protocol::network::{EgressMode, NetworkPolicy, BLOCKED_V4};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::IpAddr;
use std::process::{Command, Stdio};

pub const TABLE: &str = "computer_use_guard";

/// Where the rules send the computer's traffic.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    pub proxy: u16,
    pub dns: u16,
}

/// The whole table, replacing any earlier one in the same transaction.
pub fn ruleset(
    policy: &NetworkPolicy,
    around: &Surroundings,
    gateway: Option<IpAddr>,
    ports: Ports,
    mark: u32,
    kernel_path: Option<u32>,
) -> String {
    let contained: Vec<&str> = BLOCKED_V4.iter().map(|(range, _)| *range).collect();
    let private4: Vec<String> = policy
        .private
        .iter()
        .filter(|c| c.addr.is_ipv4())
        .map(ToString::to_string)
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "table inet {TABLE}");
    let _ = writeln!(out, "delete table inet {TABLE}");
    let _ = writeln!(out, "table inet {TABLE} {{");
    let _ = writeln!(
        out,
        "  set contained4 {{ type ipv4_addr; flags interval; elements = {{ {} }} }}",
        contained.join(", ")
    );
    if private4.is_empty() {
        let _ = writeln!(out, "  set private4 {{ type ipv4_addr; flags interval; }}");
    } else {
        let _ = writeln!(
            out,
            "  set private4 {{ type ipv4_addr; flags interval; elements = {{ {} }} }}",
            private4.join(", ")
        );
    }
    let (proxy, dns) = (ports.proxy, ports.dns);
    let kernel_path = kernel_path.filter(|_| policy.mode == EgressMode::Open);
    let (forward, admit) = match kernel_path {
        Some(ct) => (
            format!(
                "    meta nfproto ipv4 meta l4proto tcp ip daddr != @contained4 ip daddr != {} ct mark set {ct:#x} accept\n",
                around.host
            ),
            format!("    ct mark {ct:#x} accept\n"),
        ),
        None => (String::new(), String::new()),
    };
    let _ = writeln!(
        out,
        "  chain redirect_out {{
    type nat hook output priority -100; policy accept;
    oifname \"lo\" accept
    meta mark {mark:#x} accept
    meta nfproto ipv4 udp dport 53 redirect to :{dns}
    meta nfproto ipv4 tcp dport 53 redirect to :{dns}
{forward}    meta nfproto ipv4 meta l4proto tcp redirect to :{proxy}
  }}"
    );
    let mut marked = String::new();
    let _ = writeln!(marked, "    ip daddr @private4 accept");
    if !policy.host_ports.is_empty() {
        let ports: Vec<String> = policy.host_ports.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            marked,
            "    ip daddr {} tcp dport {{ {} }} accept",
            around.host,
            ports.join(", ")
        );
    }
    match around.resolver {
        IpAddr::V4(r) => {
            let _ = writeln!(
                marked,
                "    ip daddr {r} meta l4proto {{ udp, tcp }} th dport 53 accept"
            );
        }
        IpAddr::V6(r) => {
            let _ = writeln!(
                marked,
                "    ip6 daddr {r} meta l4proto {{ udp, tcp }} th dport 53 accept"
            );
        }
    }
    let _ = writeln!(marked, "    ip daddr @contained4 jump refuse");
    let _ = writeln!(marked, "    meta nfproto ipv4 accept");
    let _ = writeln!(
        out,
        "  chain refuse {{
    meta l4proto tcp reject with tcp reset
    reject with icmpx type admin-prohibited
  }}
  chain marked_out {{
{marked}    jump refuse
  }}
  chain filter_out {{
    type filter hook output priority 0; policy drop;
    oifname \"lo\" accept
    # Redirected to the proxy or the resolver: the output hook still sees
    # the old interface, since the route changes after it.
    ip daddr 127.0.0.0/8 accept
    ct state established,related accept
{admit}    meta mark {mark:#x} jump marked_out
    jump refuse
  }}"
    );
    let from_engine = match gateway {
        Some(IpAddr::V4(g)) => format!("    ip saddr {g} accept\n"),
        Some(IpAddr::V6(g)) => format!("    ip6 saddr {g} accept\n"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "  chain filter_in {{
    type filter hook input priority 0; policy drop;
    iifname \"lo\" accept
    ct state established,related accept
{from_engine}    jump refuse
  }}
}}"
    );
    out
}

/// Replaces the table with `ruleset`.
pub fn apply(ruleset: &str) -> Result<(), GuardError> {
    let mut child = Command::new("nft")
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GuardError::NftMissing)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(ruleset.as_bytes())
            .map_err(GuardError::NftInput)?;
    }
    let output = child.wait_with_output().map_err(GuardError::NftWait)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(GuardError::NftRefused {
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ruleset_redirects_unmarked_traffic_and_names_each_exception() {
        let policy = NetworkPolicy::from_settings(
            Some("open"),
            None,
            Some("192.168.7.0/24,fd00::/8"),
            Some("3000,5173"),
            None,
        )
        .unwrap();
        let around = Surroundings {
            host: "172.17.0.1".parse().unwrap(),
            resolver: "10.255.255.53".parse().unwrap(),
        };
        let text = ruleset(
            &policy,
            &around,
            Some("172.17.0.1".parse().unwrap()),
            Ports {
                proxy: 15001,
                dns: 15053,
            },
            0x2b1d,
            None,
        );
        assert!(text
            .starts_with("table inet computer_use_guard\ndelete table inet computer_use_guard\n"));
        for wanted in [
            "elements = { 0.0.0.0/8, 10.0.0.0/8,",
            "set private4 { type ipv4_addr; flags interval; elements = { 192.168.7.0/24 } }",
            "meta mark 0x2b1d accept",
            "udp dport 53 redirect to :15053",
            "meta l4proto tcp redirect to :15001",
            "ip daddr 172.17.0.1 tcp dport { 3000, 5173 } accept",
            "ip daddr 10.255.255.53 meta l4proto { udp, tcp } th dport 53 accept",
            "ip daddr @contained4 jump refuse",
            "type filter hook output priority 0; policy drop;",
            "ip saddr 172.17.0.1 accept",
        ] {
            assert!(text.contains(wanted), "missing `{wanted}` in\n{text}");
        }
        // The exceptions come before the containment rule.
        assert!(text.find("@private4 accept").unwrap() < text.find("@contained4 jump").unwrap());
        let plain = ruleset(
            &NetworkPolicy::default(),
            &around,
            None,
            Ports { proxy: 1, dns: 2 },
            1,
            None,
        );
        assert!(plain.contains("set private4 { type ipv4_addr; flags interval; }"));
        assert!(!plain.contains("tcp dport {"), "no host ports");
        assert!(!plain.contains("ct mark"), "no kernel path unless asked");
    }

    #[test]
    fn the_kernel_path_forwards_public_tcp_in_open_mode_only() {
        let around = Surroundings {
            host: "172.17.0.1".parse().unwrap(),
            resolver: "10.255.255.53".parse().unwrap(),
        };
        let ports = Ports {
            proxy: 15001,
            dns: 15053,
        };
        let open = ruleset(
            &NetworkPolicy::default(),
            &around,
            None,
            ports,
            0x2b1d,
            Some(0x2b1e),
        );
        let forward = "meta nfproto ipv4 meta l4proto tcp ip daddr != @contained4 ip daddr != 172.17.0.1 ct mark set 0x2b1e accept";
        assert!(open.contains(forward), "{open}");
        // Before the proxy's redirect, after the resolver's.
        assert!(open.find(forward).unwrap() < open.find("redirect to :15001").unwrap());
        assert!(open.find("redirect to :15053").unwrap() < open.find(forward).unwrap());
        assert!(open.contains("    ct mark 0x2b1e accept\n"), "{open}");
        for mode in ["allowlist", "none"] {
            let policy =
                NetworkPolicy::from_settings(Some(mode), Some("allowed.test"), None, None, None)
                    .unwrap();
            let text = ruleset(&policy, &around, None, ports, 0x2b1d, Some(0x2b1e));
            assert!(!text.contains("ct mark"), "{mode}: {text}");
        }
    }
}
