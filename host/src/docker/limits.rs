//! What a new computer container may use: memory, CPUs, processes, log space
//! and capabilities. Agent code runs in it as root through sudo, so these
//! bound what a runaway or hostile command can do to the machine around it.
//!
//! Memory is limited by default to a share of the engine's memory, so that a
//! runaway build or page meets the out-of-memory killer inside the computer
//! instead of taking the person's machine (on Linux there is no VM around
//! the engine). The share leaves the rest to the machine; the floor keeps
//! Chromium, LibreOffice and a build working on a small engine. Tenants of
//! one server divide the share among them, so that their computers
//! together stay within it (16 tenants on a 24 GiB engine get 1.1 GiB
//! each), down to a smaller floor that still runs a desktop and a browser. CPUs are not
//! limited unless `COMPUTER_USE_CPUS` says so: the scheduler already shares
//! them fairly, and builds want them all.
//!
//! They apply to containers created from now on; an existing container keeps
//! the configuration it was created with until an upgrade recreates it.

use super::call::Call;
use super::error::DockerError;
use crate::settings::{format_cpus, MemoryLimit, ResourceLimits, SettingsError, CPUS};
use bollard::models::{HostConfig, HostConfigLogConfig};
use bollard::Docker;
use std::time::Duration;

const INFO_DEADLINE: Duration = Duration::from_secs(15);

/// The default memory limit is this share of the engine's memory...
pub const MEMORY_SHARE_PERCENT: u64 = 75;
/// ...and never less than this.
pub const MEMORY_DEFAULT_MIN: u64 = 2 * 1024 * 1024 * 1024;
/// A tenant's part of the share is never less than this.
pub const TENANT_MEMORY_MIN: u64 = 1024 * 1024 * 1024;

/// Processes and threads in one computer. A fork bomb stops here instead of
/// exhausting the host's pid space. Measured (`scripts/soak.sh --browsers`,
/// 2026-12-05): 16 screens, a Chromium on each and 16 agents running
/// shell, act and file calls peaked at 2109; this is about twice that, for
/// pages with more tabs and a parallel build beside them.
pub const PIDS_LIMIT: i64 = 4096;
/// A tenant's part of [`PIDS_LIMIT`] when several share the engine is never
/// less than this: one screen with its browser took about 130, so this
/// still runs a few screens and a build. 16 tenants then stay within the
/// 32768 pids of a kernel with the smallest default `pid_max`.
pub const TENANT_PIDS_MIN: i64 = 1024;

/// The container's log is computerd's stderr; rotated so it never fills the
/// disk.
pub const LOG_MAX_SIZE: &str = "10m";
pub const LOG_MAX_FILES: &str = "3";

/// Capabilities root in the container does not get.
/// - `NET_RAW`: raw and packet sockets, which would send past the network
///   guard's proxy (`ping` works without it, through ICMP datagram sockets,
///   as far as the guard lets ICMP out: not at all).
/// - `NET_ADMIN` (never in Docker's defaults; named so it never comes
///   back): the computer's firewall, routes and socket marks belong to its
///   network guard (`super::guard`).
/// - `MKNOD`: device nodes.
/// - `SYS_CHROOT`: nothing in the image chroots (Chromium runs with
///   `--no-sandbox`).
///
/// `AUDIT_WRITE` stays: without it every `sudo` prints "unable to send audit
/// message" into the agent's output.
pub const DROPPED_CAPABILITIES: &[&str] = &["NET_RAW", "NET_ADMIN", "MKNOD", "SYS_CHROOT"];

/// `host_config` with the log and capability limits above (processes are
/// in [`Resources`], as tenants share them).
pub fn limited(host_config: HostConfig) -> HostConfig {
    HostConfig {
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

/// The memory and CPU limits of a new computer, worked out from the settings
/// and the engine's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    /// Bytes; `None`: no limit.
    pub memory: Option<u64>,
    pub nano_cpus: Option<i64>,
    /// Processes and threads: [`PIDS_LIMIT`], divided among tenants.
    pub pids: i64,
}

impl Resources {
    /// `engine_memory`: the engine's `MemTotal` from `docker info`, when it
    /// gave one.
    pub fn resolve(limits: &ResourceLimits, engine_memory: Option<u64>) -> Resources {
        let memory = match limits.memory {
            MemoryLimit::Unlimited => None,
            MemoryLimit::Bytes(bytes) => Some(bytes),
            MemoryLimit::EngineShare => Some(default_memory(engine_memory, limits.sharing)),
        };
        Resources {
            memory,
            nano_cpus: limits.nano_cpus,
            pids: default_pids(limits.sharing),
        }
    }
}

/// [`PIDS_LIMIT`] divided among `sharing` computers, at least
/// [`TENANT_PIDS_MIN`] each.
pub fn default_pids(sharing: u32) -> i64 {
    (PIDS_LIMIT / i64::from(sharing.max(1))).max(TENANT_PIDS_MIN.min(PIDS_LIMIT))
}

/// The limits of a computer about to be created on `docker`'s engine: asks
/// the engine for its memory (for the default) and CPU count (more CPUs than
/// it has is refused by name here rather than by Docker's create).
pub(crate) async fn for_engine(
    docker: &Docker,
    limits: &ResourceLimits,
    left_behind: &str,
) -> Result<Resources, DockerError> {
    let info = Call::new(
        "reading the engine's memory and CPU count (`docker info`)",
        left_behind,
        INFO_DEADLINE,
    )
    .run(docker.info())
    .await?;
    let engine_memory = info.mem_total.and_then(|m| u64::try_from(m).ok());
    if let (Some(nano), Some(cpus)) = (limits.nano_cpus, info.ncpu.filter(|n| *n > 0)) {
        if nano > cpus.saturating_mul(1_000_000_000) {
            return Err(SettingsError {
                name: CPUS,
                value: format_cpus(nano),
                expected: format!(
                    "the Docker engine has {cpus} CPUs; use at most `{cpus}`, or `0` for no limit"
                ),
            }
            .into());
        }
    }
    Ok(Resources::resolve(limits, engine_memory))
}

/// [`MEMORY_SHARE_PERCENT`] of the engine's memory divided among `sharing`
/// computers, at least [`MEMORY_DEFAULT_MIN`] for one computer and
/// [`TENANT_MEMORY_MIN`] for each of several (also when the engine does
/// not say).
pub fn default_memory(engine_memory: Option<u64>, sharing: u32) -> u64 {
    let total = u128::from(engine_memory.unwrap_or(0));
    let among = u128::from(sharing.max(1));
    let share =
        u64::try_from(total * u128::from(MEMORY_SHARE_PERCENT) / 100 / among).unwrap_or(u64::MAX);
    let floor = if sharing > 1 {
        TENANT_MEMORY_MIN
    } else {
        MEMORY_DEFAULT_MIN
    };
    share.max(floor)
}

/// `host_config` with the memory and CPU limits of `resources`. Swap is
/// limited to the same number, which means no swap beyond the memory limit:
/// a computer that swaps is slower than one whose runaway process is killed.
pub fn with_resources(host_config: HostConfig, resources: &Resources) -> HostConfig {
    let memory = resources
        .memory
        .map(|m| i64::try_from(m).unwrap_or(i64::MAX));
    HostConfig {
        memory,
        memory_swap: memory,
        nano_cpus: resources.nano_cpus,
        pids_limit: Some(resources.pids),
        ..host_config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024 * 1024 * 1024;

    #[test]
    fn tenants_divide_the_pids_down_to_a_floor() {
        assert_eq!(default_pids(1), 4096);
        assert_eq!(default_pids(2), 2048);
        assert_eq!(default_pids(4), 1024);
        assert_eq!(default_pids(16), 1024);
        assert_eq!(default_pids(0), 4096);
    }

    fn resolve(memory: MemoryLimit, engine: Option<u64>) -> Option<u64> {
        let limits = ResourceLimits {
            memory,
            nano_cpus: None,
            sharing: 1,
        };
        Resources::resolve(&limits, engine).memory
    }

    #[test]
    fn the_default_is_three_quarters_of_the_engine_and_at_least_2_gib() {
        assert_eq!(
            resolve(MemoryLimit::EngineShare, Some(16 * GIB)),
            Some(12 * GIB)
        );
        assert_eq!(
            resolve(MemoryLimit::EngineShare, Some(2 * GIB)),
            Some(2 * GIB)
        );
        assert_eq!(resolve(MemoryLimit::EngineShare, None), Some(2 * GIB));
        assert_eq!(
            resolve(MemoryLimit::Bytes(GIB / 2), Some(16 * GIB)),
            Some(GIB / 2)
        );
        assert_eq!(resolve(MemoryLimit::Unlimited, Some(16 * GIB)), None);
    }

    #[test]
    fn tenants_divide_the_share_down_to_their_own_floor() {
        let engine = Some(24 * GIB);
        assert_eq!(default_memory(engine, 1), 18 * GIB);
        assert_eq!(default_memory(engine, 2), 9 * GIB);
        // 16 tenants fit on a 24 GiB engine, together within the share.
        assert_eq!(default_memory(engine, 16), 18 * GIB / 16);
        assert!(16 * default_memory(engine, 16) <= 18 * GIB);
        // On a small engine, each still gets a desktop's worth.
        assert_eq!(default_memory(Some(8 * GIB), 16), GIB);
        assert_eq!(default_memory(None, 4), GIB);
        // A set limit is not divided.
        let set = ResourceLimits {
            memory: MemoryLimit::Bytes(4 * GIB),
            nano_cpus: None,
            sharing: 16,
        };
        assert_eq!(Resources::resolve(&set, engine).memory, Some(4 * GIB));
    }

    #[test]
    fn swap_equals_memory_and_cpus_are_nano_cpus() {
        let host = with_resources(
            HostConfig::default(),
            &Resources {
                memory: Some(3 * GIB),
                nano_cpus: Some(1_500_000_000),
                pids: 2048,
            },
        );
        assert_eq!(host.pids_limit, Some(2048));
        assert_eq!(host.memory, Some(3 * GIB as i64));
        assert_eq!(host.memory_swap, Some(3 * GIB as i64));
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        let none = with_resources(
            HostConfig::default(),
            &Resources {
                memory: None,
                nano_cpus: None,
                pids: PIDS_LIMIT,
            },
        );
        assert_eq!(
            (none.memory, none.memory_swap, none.nano_cpus),
            (None, None, None)
        );
    }
}
