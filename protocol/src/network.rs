//! The computer's network policy and its log, shared by the host (which
//! reads the settings and asks for the log) and computerd's network guard
//! (which enforces the policy from a container of its own, see
//! `computerd/src/netguard`).
//!
//! Containment is not part of the policy: every computer is kept from other
//! computers, the host, private, link-local and multicast ranges
//! ([`blocked_range`]) whatever the mode. The policy only narrows the public
//! internet (`mode`) and names the exceptions to containment (`private`,
//! `host_ports`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Entries of `network_log`, per call.
pub const LOG_LIMIT_MAX: usize = 500;
pub const LOG_LIMIT_DEFAULT: usize = 50;
/// Entries the guard keeps per computer; the oldest go first.
pub const LOG_KEPT: usize = 2000;
/// Entries of `COMPUTER_USE_EGRESS_ALLOW`.
pub const ALLOW_ENTRIES_MAX: usize = 256;
/// The name under which the computer reaches `COMPUTER_USE_HOST_PORTS`.
pub const HOST_NAME: &str = "host.docker.internal";

pub const EGRESS: &str = "COMPUTER_USE_EGRESS";
pub const EGRESS_ALLOW: &str = "COMPUTER_USE_EGRESS_ALLOW";
pub const EGRESS_PRIVATE: &str = "COMPUTER_USE_EGRESS_PRIVATE";
pub const HOST_PORTS: &str = "COMPUTER_USE_HOST_PORTS";
pub const EGRESS_DNS: &str = "COMPUTER_USE_EGRESS_DNS";

/// A setting of the policy that cannot be used: the variable, its value,
/// and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{variable}` is `{value}`: {expected}")]
pub struct PolicyError {
    pub variable: &'static str,
    pub value: String,
    pub expected: String,
}

fn policy_error(variable: &'static str, value: &str, expected: String) -> PolicyError {
    PolicyError {
        variable,
        value: value.to_string(),
        expected,
    }
}

/// `COMPUTER_USE_EGRESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EgressMode {
    /// The public internet.
    #[default]
    Open,
    /// Only the names (and `host:port` entries) of the allow-list.
    Allowlist,
    /// Nothing.
    None,
}

impl EgressMode {
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        match text.trim() {
            "open" | "" => Ok(Self::Open),
            "allowlist" => Ok(Self::Allowlist),
            "none" => Ok(Self::None),
            other => Err(policy_error(
                EGRESS,
                other,
                "use `open` (the public internet), `allowlist` (only COMPUTER_USE_EGRESS_ALLOW) or `none`".into(),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Allowlist => "allowlist",
            Self::None => "none",
        }
    }
}

/// One entry of `COMPUTER_USE_EGRESS_ALLOW`: a name (`example.com`), every
/// name under one (`*.example.com`, not `example.com` itself), either for
/// HTTP and HTTPS; or `host:port` for plain TCP to that port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AllowEntry {
    /// Lower case; `*.` first for a wildcard; may be an IP address.
    pub host: String,
    /// `None`: HTTP (by `Host`) and HTTPS (by SNI) on any port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

impl AllowEntry {
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let text = text.trim().to_ascii_lowercase();
        let bad = |why: &str| {
            policy_error(
                EGRESS_ALLOW,
                &text,
                format!("the entry {why}: write names such as `example.com`, `*.example.com` or `db.example.com:5432`, comma-separated"),
            )
        };
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => {
                let port: u16 = port
                    .parse()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| bad("has a port that is not 1..65535"))?;
                (host.to_string(), Some(port))
            }
            None => (text.clone(), None),
        };
        let name = host.strip_prefix("*.").unwrap_or(&host);
        if name.is_empty() || name.len() > 253 {
            return Err(bad("has no name, or one over 253 characters"));
        }
        if name.parse::<IpAddr>().is_err() {
            let label_ok = |label: &str| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            };
            if !name.split('.').all(label_ok) {
                return Err(bad(
                    "is not a host name (letters, digits, `-`, dots; `*.` only first)",
                ));
            }
        } else if host.starts_with("*.") {
            return Err(bad("puts `*.` before an address"));
        }
        Ok(Self { host, port })
    }

    /// Whether `name` (lower case, no trailing dot) is this entry's.
    pub fn matches_name(&self, name: &str) -> bool {
        match self.host.strip_prefix("*.") {
            Some(suffix) => {
                name.len() > suffix.len() + 1
                    && name.ends_with(suffix)
                    && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            }
            None => name == self.host,
        }
    }
}

impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// An address range, `10.1.0.0/16` or `fd00::/8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Cidr {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let text = text.trim();
        let bad = || {
            policy_error(
                EGRESS_PRIVATE,
                text,
                "that is not a range: write an address and a prefix length, such as `192.168.1.0/24` or `fd00::/8`, comma-separated".into(),
            )
        };
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(bad)?,
            None => bits,
        };
        Ok(Self {
            addr: mask(addr, prefix),
            prefix,
        })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                mask(ip, self.prefix) == self.addr
            }
            _ => false,
        }
    }
}

impl TryFrom<String> for Cidr {
    type Error = PolicyError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<Cidr> for String {
    fn from(cidr: Cidr) -> Self {
        cidr.to_string()
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix)
            };
            IpAddr::V4(Ipv4Addr::from(bits & kept))
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix)
            };
            IpAddr::V6(Ipv6Addr::from(bits & kept))
        }
    }
}

/// The ranges no computer reaches unless `COMPUTER_USE_EGRESS_PRIVATE`
/// names them: this network, private, shared (carrier-grade NAT),
/// loopback of other machines, link-local, special, benchmarking,
/// documentation-free multicast and reserved space.
pub const BLOCKED_V4: &[(&str, &str)] = &[
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private range"),
    ("100.64.0.0/10", "shared address range"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local range"),
    ("172.16.0.0/12", "private range"),
    ("192.0.0.0/24", "special range"),
    ("192.168.0.0/16", "private range"),
    ("198.18.0.0/15", "benchmarking range"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved range"),
];

/// IPv6 has no public route out of a computer at all (Docker's default
/// bridge gives none), so every IPv6 address is refused; these names say
/// which kind a refused one was.
pub const BLOCKED_V6: &[(&str, &str)] = &[
    ("::/128", "unspecified address"),
    ("::1/128", "loopback"),
    ("fc00::/7", "private range"),
    ("fe80::/10", "link-local range"),
    ("ff00::/8", "multicast"),
];

/// The contained range `ip` falls in (`"private range 10.0.0.0/8"`), or
/// `None` for a public IPv4 address. Every IPv6 address is contained.
pub fn blocked_range(ip: IpAddr) -> Option<String> {
    let table = match ip {
        IpAddr::V4(v4) if v4.is_broadcast() => return Some("broadcast".into()),
        IpAddr::V4(_) => BLOCKED_V4,
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return blocked_range(IpAddr::V4(v4));
            }
            return Some(
                BLOCKED_V6
                    .iter()
                    .find(|(range, _)| Cidr::parse(range).is_ok_and(|c| c.contains(ip)))
                    .map(|(range, what)| format!("{what} {range}"))
                    .unwrap_or_else(|| "IPv6 (computers reach the internet over IPv4 only)".into()),
            );
        }
    };
    table
        .iter()
        .find(|(range, _)| Cidr::parse(range).is_ok_and(|c| c.contains(ip)))
        .map(|(range, what)| format!("{what} {range}"))
}

/// Everything the network guard enforces for one computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkPolicy {
    pub mode: EgressMode,
    /// `COMPUTER_USE_EGRESS_ALLOW` (used in `allowlist` mode).
    #[serde(default)]
    pub allow: Vec<AllowEntry>,
    /// `COMPUTER_USE_EGRESS_PRIVATE`: contained ranges the computer may reach.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>"))]
    pub private: Vec<Cidr>,
    /// `COMPUTER_USE_HOST_PORTS`: ports of the engine's machine, reached as
    /// [`HOST_NAME`].
    #[serde(default)]
    pub host_ports: Vec<u16>,
    /// `COMPUTER_USE_EGRESS_DNS`: the resolver the guard asks instead of
    /// the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub resolver: Option<IpAddr>,
}

impl NetworkPolicy {
    /// Reads the four settings; each error names its variable and the fix.
    pub fn from_settings(
        mode: Option<&str>,
        allow: Option<&str>,
        private: Option<&str>,
        host_ports: Option<&str>,
        resolver: Option<&str>,
    ) -> Result<Self, PolicyError> {
        let mode = EgressMode::parse(mode.unwrap_or(""))?;
        let allow = split_list(allow)
            .map(AllowEntry::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if allow.len() > ALLOW_ENTRIES_MAX {
            return Err(policy_error(
                EGRESS_ALLOW,
                &format!("{} entries", allow.len()),
                format!("the limit is {ALLOW_ENTRIES_MAX} entries; use `*.` wildcards"),
            ));
        }
        if mode == EgressMode::Allowlist && allow.is_empty() {
            return Err(policy_error(
                EGRESS_ALLOW,
                "",
                "COMPUTER_USE_EGRESS is `allowlist`, so list the names the computer may reach (such as `example.com,*.example.com`), or use COMPUTER_USE_EGRESS=none".into(),
            ));
        }
        let private = split_list(private)
            .map(Cidr::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let host_ports = split_list(host_ports)
            .map(|p| {
                p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    policy_error(
                        HOST_PORTS,
                        p,
                        "that is not a port: list ports 1..65535, comma-separated, such as `3000,5173`".into(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let resolver = match resolver.map(str::trim).filter(|r| !r.is_empty()) {
            Some(text) => Some(text.parse::<IpAddr>().map_err(|_| {
                policy_error(
                    EGRESS_DNS,
                    text,
                    "give the address of a DNS server, such as `192.0.2.53`".into(),
                )
            })?),
            None => None,
        };
        Ok(Self {
            mode,
            allow,
            private,
            host_ports,
            resolver,
        })
    }

    /// The allow-list entry that lets HTTP or HTTPS reach `name`, for the
    /// log's rule.
    pub fn allows_web(&self, name: &str) -> Option<&AllowEntry> {
        self.allow
            .iter()
            .find(|e| e.port.is_none() && e.matches_name(name))
    }

    /// The `host:port` entry that lets plain TCP reach `name` (a name or an
    /// address) on `port`.
    pub fn allows_tcp(&self, name: &str, port: u16) -> Option<&AllowEntry> {
        self.allow
            .iter()
            .find(|e| e.port == Some(port) && e.matches_name(name))
    }

    /// Whether a DNS name may be answered: any entry's name.
    pub fn allows_lookup(&self, name: &str) -> bool {
        match self.mode {
            EgressMode::Open => true,
            EgressMode::None => false,
            EgressMode::Allowlist => self.allow.iter().any(|e| e.matches_name(name)),
        }
    }

    /// The range of `COMPUTER_USE_EGRESS_PRIVATE` holding `ip`.
    pub fn allowed_private(&self, ip: IpAddr) -> Option<&Cidr> {
        self.private.iter().find(|c| c.contains(ip))
    }

    /// One line for `info` and the log's answer.
    pub fn summary(&self) -> String {
        let mut text = match self.mode {
            EgressMode::Open => "open (the public internet)".to_string(),
            EgressMode::None => "none (no network)".to_string(),
            EgressMode::Allowlist => format!(
                "allowlist: {}",
                self.allow
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if !self.private.is_empty() {
            let ranges: Vec<String> = self.private.iter().map(ToString::to_string).collect();
            text.push_str(&format!("; private ranges allowed: {}", ranges.join(", ")));
        }
        if !self.host_ports.is_empty() {
            let ports: Vec<String> = self.host_ports.iter().map(ToString::to_string).collect();
            text.push_str(&format!(
                "; host ports as {HOST_NAME}: {}",
                ports.join(", ")
            ));
        }
        text
    }
}

fn split_list(text: Option<&str>) -> impl Iterator<Item = &str> {
    text.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// One connection (or refused lookup) the computer made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkLogEntry {
    /// RFC 3339, when it started.
    pub at: String,
    /// The name asked for (SNI, `Host`, or the name it was looked up as),
    /// when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub address: String,
    pub port: u16,
    pub allowed: bool,
    /// Why: the allow-list entry, the mode, or the contained range.
    pub rule: String,
    pub bytes_out: u64,
    pub bytes_in: u64,
    pub duration_ms: u64,
}

impl NetworkLogEntry {
    /// One line for a recording's step: the denial line, or
    /// `network allowed: example.com (93.184.215.14:443): COMPUTER_USE_EGRESS=open`.
    pub fn line(&self) -> String {
        if self.allowed {
            format!("network allowed: {}: {}", self.target(), self.rule)
        } else {
            self.denial_line()
        }
    }

    fn target(&self) -> String {
        match &self.host {
            Some(host) => format!("{host} ({}:{})", self.address, self.port),
            None => format!("{}:{}", self.address, self.port),
        }
    }

    /// `denied: denied.test (203.0.113.20:80): not in COMPUTER_USE_EGRESS_ALLOW`.
    pub fn denial_line(&self) -> String {
        format!("network denied: {}: {}", self.target(), self.rule)
    }
}

/// What the guard answers about its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkLog {
    pub policy: NetworkPolicy,
    /// Newest first.
    pub entries: Vec<NetworkLogEntry>,
    /// Entries dropped since the guard started, oldest first.
    #[serde(default)]
    pub dropped: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn contained_ranges_are_named_and_public_addresses_are_not() {
        for (addr, what) in [
            ("10.1.2.3", "private range 10.0.0.0/8"),
            ("172.17.0.1", "private range 172.16.0.0/12"),
            ("192.168.65.254", "private range 192.168.0.0/16"),
            ("100.64.0.1", "shared address range 100.64.0.0/10"),
            ("169.254.169.254", "link-local range 169.254.0.0/16"),
            ("224.0.0.251", "multicast 224.0.0.0/4"),
            ("255.255.255.255", "broadcast"),
            ("fe80::1", "link-local range fe80::/10"),
            ("fd00::1", "private range fc00::/7"),
            ("::ffff:10.0.0.1", "private range 10.0.0.0/8"),
        ] {
            assert_eq!(blocked_range(ip(addr)).as_deref(), Some(what), "{addr}");
        }
        assert!(blocked_range(ip("2001:db8::1")).is_some());
        for public in ["203.0.113.10", "198.51.100.7", "8.8.8.8", "151.101.2.132"] {
            assert_eq!(blocked_range(ip(public)), None, "{public}");
        }
    }

    #[test]
    fn ranges_parse_mask_and_match() {
        let lan = Cidr::parse("192.168.1.77/24").unwrap();
        assert_eq!(lan.to_string(), "192.168.1.0/24");
        assert!(lan.contains(ip("192.168.1.5")));
        assert!(!lan.contains(ip("192.168.2.5")));
        assert!(!lan.contains(ip("::1")));
        assert_eq!(Cidr::parse("10.0.0.9").unwrap().to_string(), "10.0.0.9/32");
        assert!(Cidr::parse("fd00::/8").unwrap().contains(ip("fd12::1")));
        let err = Cidr::parse("10.0.0.0/33").unwrap_err().to_string();
        assert!(
            err.contains("COMPUTER_USE_EGRESS_PRIVATE") && err.contains("10.0.0.0/33"),
            "{err}"
        );
    }

    #[test]
    fn wildcards_match_names_under_them_only() {
        let entry = AllowEntry::parse("*.Example.com").unwrap();
        assert!(entry.matches_name("www.example.com"));
        assert!(entry.matches_name("a.b.example.com"));
        assert!(!entry.matches_name("example.com"));
        assert!(!entry.matches_name("badexample.com"));
        let plain = AllowEntry::parse("example.com").unwrap();
        assert!(plain.matches_name("example.com"));
        assert!(!plain.matches_name("www.example.com"));
        let tcp = AllowEntry::parse("db.example.com:5432").unwrap();
        assert_eq!(tcp.port, Some(5432));
        for bad in [
            "exa mple.com",
            "*.",
            "a.*.com",
            "x.com:0",
            "x.com:99999",
            "*.10.0.0.1",
        ] {
            let err = AllowEntry::parse(bad).unwrap_err().to_string();
            assert!(err.contains("COMPUTER_USE_EGRESS_ALLOW"), "{bad}: {err}");
        }
    }

    #[test]
    fn settings_read_into_a_policy_with_errors_that_name_the_variable() {
        let policy = NetworkPolicy::from_settings(
            Some("allowlist"),
            Some("allowed.test, *.allowed.test,echo.test:7000"),
            Some("192.168.1.0/24"),
            Some("3000,5173"),
            Some("203.0.113.53"),
        )
        .unwrap();
        assert!(policy.allows_web("www.allowed.test").is_some());
        assert!(policy.allows_web("denied.test").is_none());
        assert!(policy.allows_tcp("echo.test", 7000).is_some());
        assert!(policy.allows_tcp("echo.test", 7001).is_none());
        assert!(policy.allows_lookup("echo.test"));
        assert!(!policy.allows_lookup("denied.test"));
        assert!(policy.allowed_private(ip("192.168.1.9")).is_some());
        assert_eq!(policy.host_ports, vec![3000, 5173]);
        let summary = policy.summary();
        assert!(
            summary.starts_with("allowlist: allowed.test, *.allowed.test, echo.test:7000"),
            "{summary}"
        );
        for (args, variable) in [
            (
                [Some("closed"), None, None, None, None],
                "`COMPUTER_USE_EGRESS` is `closed`",
            ),
            (
                [Some("allowlist"), None, None, None, None],
                "COMPUTER_USE_EGRESS_ALLOW",
            ),
            (
                [None, None, None, Some("80,http"), None],
                "COMPUTER_USE_HOST_PORTS",
            ),
            (
                [None, None, None, None, Some("dns.test")],
                "COMPUTER_USE_EGRESS_DNS",
            ),
        ] {
            let [m, a, p, h, r] = args;
            let err = NetworkPolicy::from_settings(m, a, p, h, r)
                .unwrap_err()
                .to_string();
            assert!(err.contains(variable), "{err}");
        }
        let open = NetworkPolicy::from_settings(None, None, None, None, None).unwrap();
        assert_eq!(open.mode, EgressMode::Open);
        assert!(open.allows_lookup("anything.example"));
        assert!(!NetworkPolicy {
            mode: EgressMode::None,
            ..open
        }
        .allows_lookup("x.example"));
    }

    #[test]
    fn a_policy_goes_through_json_unchanged() {
        let policy = NetworkPolicy::from_settings(
            Some("allowlist"),
            Some("a.test,*.b.test,c.test:22"),
            Some("10.9.0.0/16,fd00::/8"),
            Some("3000"),
            None,
        )
        .unwrap();
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(
            serde_json::from_str::<NetworkPolicy>(&json).unwrap(),
            policy
        );
    }
}
