//! The policy applied to one TCP connection: where it may go and by which
//! rule, or why not. Pure, so each rule is tested without sockets.

use super::sniff::Sniffed;
use computer_protocol::network::{blocked_range, EgressMode, NetworkPolicy};
use std::net::Ipv4Addr;

/// Facts about the computer's surroundings, read once when the guard starts.
#[derive(Debug, Clone)]
pub struct Surroundings {
    /// The engine's machine as the computer sees it (`host.docker.internal`).
    pub host: Ipv4Addr,
    /// The resolver the guard forwards allowed lookups to.
    pub resolver: std::net::IpAddr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Connect to the address the computer asked for.
    Connect {
        rule: String,
    },
    /// Connect to where `name` resolves, not to the address asked for.
    Resolve {
        name: String,
        rule: String,
    },
    /// Read the first bytes, then ask [`after_sniff`].
    Sniff,
    Deny {
        rule: String,
    },
}

/// The rule of a connection `open` mode allows, the proxy's and the
/// kernel path's alike.
pub const OPEN_RULE: &str = "COMPUTER_USE_EGRESS=open";

/// The setting to change, for every denial's text.
pub fn fix_allow(name: &str) -> String {
    format!("`{name}` is not in COMPUTER_USE_EGRESS_ALLOW (add it there, or set COMPUTER_USE_EGRESS=open)")
}

/// What the address and port alone decide. `known_name` is the name the
/// computer looked this address up as, if any.
pub fn before_sniff(
    policy: &NetworkPolicy,
    around: &Surroundings,
    ip: Ipv4Addr,
    port: u16,
    known_name: Option<&str>,
) -> Verdict {
    if ip == around.host {
        return if policy.host_ports.contains(&port) {
            Verdict::Connect {
                rule: format!("COMPUTER_USE_HOST_PORTS {port}"),
            }
        } else {
            Verdict::Deny {
                rule: format!(
                    "the engine's machine: only COMPUTER_USE_HOST_PORTS are reachable, and {port} is not one of them"
                ),
            }
        };
    }
    if let Some(range) = blocked_range(ip.into()) {
        return match policy.allowed_private(ip.into()) {
            Some(cidr) => Verdict::Connect {
                rule: format!("COMPUTER_USE_EGRESS_PRIVATE {cidr}"),
            },
            None => Verdict::Deny {
                rule: format!("{range} is out of the computer's reach (name it in COMPUTER_USE_EGRESS_PRIVATE to allow it)"),
            },
        };
    }
    match policy.mode {
        EgressMode::None => Verdict::Deny {
            rule: "COMPUTER_USE_EGRESS=none".into(),
        },
        EgressMode::Open => Verdict::Connect {
            rule: OPEN_RULE.into(),
        },
        EgressMode::Allowlist => {
            let by_name = known_name.and_then(|name| policy.allows_tcp(name, port));
            let by_address = policy.allows_tcp(&ip.to_string(), port);
            match by_name.or(by_address) {
                Some(entry) => Verdict::Connect {
                    rule: format!("COMPUTER_USE_EGRESS_ALLOW {entry}"),
                },
                None => Verdict::Sniff,
            }
        }
    }
}

/// What the first bytes decide in `allowlist` mode: a web request goes
/// where its own name resolves, if that name is allowed.
pub fn after_sniff(policy: &NetworkPolicy, ip: Ipv4Addr, port: u16, sniffed: &Sniffed) -> Verdict {
    let name = match sniffed {
        Sniffed::Http { host } => host,
        Sniffed::Tls { server_name } => server_name,
        Sniffed::More | Sniffed::Unknown => {
            return Verdict::Deny {
                rule: format!(
                    "{}: plain TCP needs a `host:{port}` entry in COMPUTER_USE_EGRESS_ALLOW",
                    fix_allow(&ip.to_string())
                ),
            }
        }
    };
    match policy.allows_web(name) {
        Some(entry) => Verdict::Resolve {
            name: name.clone(),
            rule: format!("COMPUTER_USE_EGRESS_ALLOW {entry}"),
        },
        None => Verdict::Deny {
            rule: fix_allow(name),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around() -> Surroundings {
        Surroundings {
            host: Ipv4Addr::new(172, 17, 0, 1),
            resolver: "10.255.255.53".parse().unwrap(),
        }
    }

    fn policy(mode: &str, allow: &str) -> NetworkPolicy {
        NetworkPolicy::from_settings(
            Some(mode),
            Some(allow),
            Some("192.168.7.0/24"),
            Some("3000"),
            None,
        )
        .unwrap()
    }

    fn ip(text: &str) -> Ipv4Addr {
        text.parse().unwrap()
    }

    #[test]
    fn containment_holds_in_every_mode_with_its_named_exceptions() {
        for mode in ["open", "allowlist", "none"] {
            let p = policy(mode, "allowed.test,10.0.0.5:80");
            let deny = |addr: &str, port| {
                matches!(
                    before_sniff(&p, &around(), ip(addr), port, None),
                    Verdict::Deny { .. }
                )
            };
            assert!(deny("172.17.0.1", 22), "the host's other ports ({mode})");
            assert!(deny("172.17.0.3", 7070), "another computer ({mode})");
            assert!(deny("169.254.169.254", 80), "metadata ({mode})");
            assert!(
                deny("10.0.0.5", 80),
                "an allow entry does not open a contained range ({mode})"
            );
            assert_eq!(
                before_sniff(&p, &around(), ip("172.17.0.1"), 3000, None),
                Verdict::Connect {
                    rule: "COMPUTER_USE_HOST_PORTS 3000".into()
                }
            );
            assert_eq!(
                before_sniff(&p, &around(), ip("192.168.7.9"), 5432, None),
                Verdict::Connect {
                    rule: "COMPUTER_USE_EGRESS_PRIVATE 192.168.7.0/24".into()
                }
            );
        }
        let Verdict::Deny { rule } =
            before_sniff(&policy("open", ""), &around(), ip("10.1.1.1"), 80, None)
        else {
            panic!("denied")
        };
        assert!(
            rule.contains("private range 10.0.0.0/8")
                && rule.contains("COMPUTER_USE_EGRESS_PRIVATE"),
            "{rule}"
        );
    }

    #[test]
    fn modes_decide_public_addresses() {
        let public = ip("203.0.113.20");
        assert!(matches!(
            before_sniff(&policy("open", ""), &around(), public, 443, None),
            Verdict::Connect { .. }
        ));
        assert!(matches!(
            before_sniff(&policy("none", ""), &around(), public, 443, None),
            Verdict::Deny { .. }
        ));
        let list = policy("allowlist", "allowed.test,echo.test:7000,203.0.113.20:22");
        assert_eq!(
            before_sniff(&list, &around(), public, 443, None),
            Verdict::Sniff
        );
        assert!(matches!(
            before_sniff(&list, &around(), public, 7000, Some("echo.test")),
            Verdict::Connect { .. }
        ));
        assert!(matches!(
            before_sniff(&list, &around(), public, 22, None),
            Verdict::Connect { .. }
        ));
    }

    #[test]
    fn web_requests_are_judged_by_their_own_name() {
        let list = policy("allowlist", "allowed.test,*.allowed.test");
        let public = ip("203.0.113.20");
        let http = |host: &str| Sniffed::Http { host: host.into() };
        assert_eq!(
            after_sniff(&list, public, 80, &http("allowed.test")),
            Verdict::Resolve {
                name: "allowed.test".into(),
                rule: "COMPUTER_USE_EGRESS_ALLOW allowed.test".into()
            }
        );
        let tls = Sniffed::Tls {
            server_name: "www.allowed.test".into(),
        };
        assert!(matches!(
            after_sniff(&list, public, 443, &tls),
            Verdict::Resolve { .. }
        ));
        let Verdict::Deny { rule } = after_sniff(&list, public, 80, &http("denied.test")) else {
            panic!("denied")
        };
        assert!(
            rule.contains("`denied.test`") && rule.contains("COMPUTER_USE_EGRESS_ALLOW"),
            "{rule}"
        );
        assert!(matches!(
            after_sniff(&list, public, 22, &Sniffed::Unknown),
            Verdict::Deny { .. }
        ));
    }
}
