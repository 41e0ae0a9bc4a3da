//! What a new computer container may use: processes, log space and
//! capabilities. Agent code runs in it as root through sudo, so these bound
//! what a runaway or hostile command can do to the machine around it.
//! Memory and CPU are not limited: builds and browsers need what the machine
//! has, and Docker Desktop's VM already bounds both.
//!
//! They apply to containers created from now on; an existing container keeps
//! the configuration it was created with until an upgrade recreates it.

use bollard::models::{HostConfig, HostConfigLogConfig};

/// Processes and threads in the container. A fork bomb stops here instead of
/// exhausting the host's pid space; Chromium, LibreOffice and a parallel
/// build together use a few hundred.
pub const PIDS_LIMIT: i64 = 4096;

/// The container's log is computerd's stderr; rotated so it never fills the
/// disk.
pub const LOG_MAX_SIZE: &str = "10m";
pub const LOG_MAX_FILES: &str = "3";

/// Capabilities root in the container does not get.
/// - `NET_RAW`: raw sockets, for ARP or DNS spoofing of other containers on
///   the bridge (`ping` works without it, through ICMP datagram sockets).
/// - `MKNOD`: device nodes.
/// - `SYS_CHROOT`: nothing in the image chroots (Chromium runs with
///   `--no-sandbox`).
///
/// `AUDIT_WRITE` stays: without it every `sudo` prints "unable to send audit
/// message" into the agent's output.
pub const DROPPED_CAPABILITIES: &[&str] = &["NET_RAW", "MKNOD", "SYS_CHROOT"];

/// `host_config` with the limits above.
pub fn limited(host_config: HostConfig) -> HostConfig {
    HostConfig {
        pids_limit: Some(PIDS_LIMIT),
        log_config: Some(HostConfigLogConfig {
            typ: Some("json-file".to_string()),
            config: Some(
                [
                    ("max-size".to_string(), LOG_MAX_SIZE.to_string()),
                    ("max-file".to_string(), LOG_MAX_FILES.to_string()),
                ]
                .into(),
            ),
        }),
        cap_drop: Some(DROPPED_CAPABILITIES.iter().map(|c| c.to_string()).collect()),
        ..host_config
    }
}
