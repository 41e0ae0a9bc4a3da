//! The computer's memory limit and the kills of the kernel's out-of-memory
//! killer under it, as the container's memory cgroup shows them. The agent
//! learns of a kill from the next `shell` answer: a process that vanished
//! with nothing on stderr is otherwise a mystery.
//!
//! Both cgroup versions are read, because engines differ: cgroup v2 (Docker
//! Desktop, current Linux distributions) shows the container's own cgroup at
//! `/sys/fs/cgroup` with `memory.events` and `memory.max`; cgroup v1 (older
//! hosts) mounts it at `/sys/fs/cgroup/memory` with `memory.oom_control` and
//! `memory.limit_in_bytes`. Both have an `oom_kill <count>` line.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Where the kernel shows cgroups inside the container.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// v1 writes "no limit" as the largest page-aligned number; anything this
/// big is no limit in practice.
const V1_UNLIMITED_FROM: u64 = 1 << 62;

/// This container's memory cgroup, looked for once.
pub fn container() -> Option<&'static MemoryCgroup> {
    static FOUND: OnceLock<Option<MemoryCgroup>> = OnceLock::new();
    FOUND.get_or_init(MemoryCgroup::detect).as_ref()
}

/// The memory cgroup files of one container.
#[derive(Debug, Clone)]
pub struct MemoryCgroup {
    /// The file with the `oom_kill` line.
    events: PathBuf,
    /// The file with the limit.
    limit: PathBuf,
}

impl MemoryCgroup {
    /// The container's memory cgroup, or `None` when neither version's files
    /// are readable (not in a container, or an engine that hides them).
    pub fn detect() -> Option<MemoryCgroup> {
        Self::under(Path::new(CGROUP_ROOT))
    }

    /// As [`MemoryCgroup::detect`], under another root (for tests).
    pub fn under(root: &Path) -> Option<MemoryCgroup> {
        let v2 = MemoryCgroup {
            events: root.join("memory.events"),
            limit: root.join("memory.max"),
        };
        let v1 = MemoryCgroup {
            events: root.join("memory/memory.oom_control"),
            limit: root.join("memory/memory.limit_in_bytes"),
        };
        [v2, v1].into_iter().find(|c| c.oom_kills().is_some())
    }

    /// Processes the out-of-memory killer has killed in the container since
    /// it started.
    pub fn oom_kills(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.events).ok()?;
        parse_oom_kills(&text)
    }

    /// The memory limit in bytes; `None` when there is none.
    pub fn limit(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.limit).ok()?;
        parse_limit(&text)
    }
}

/// The `oom_kill` counter of `memory.events` or `memory.oom_control`.
pub fn parse_oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// `memory.max` (`max` or bytes) or `memory.limit_in_bytes` (bytes, huge
/// for none).
pub fn parse_limit(text: &str) -> Option<u64> {
    let text = text.trim();
    if text == "max" {
        return None;
    }
    text.parse().ok().filter(|&n| n < V1_UNLIMITED_FROM)
}

/// The kills one session has been told about, so that each kill is reported
/// once to each session, on its first command after the kill.
#[derive(Debug)]
pub struct OomWatermark {
    seen: AtomicU64,
}

impl OomWatermark {
    /// Kills before now are not this session's news.
    pub fn starting_now(cgroup: Option<&MemoryCgroup>) -> OomWatermark {
        OomWatermark {
            seen: AtomicU64::new(cgroup.and_then(MemoryCgroup::oom_kills).unwrap_or(0)),
        }
    }

    /// Kills since the last call (or since the session started), given the
    /// container's counter now.
    pub fn news(&self, total: u64) -> u64 {
        // fetch_max: two commands ending together report each kill once.
        let before = self.seen.fetch_max(total, Ordering::SeqCst);
        total.saturating_sub(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_oom_kill_line_of_either_version() {
        let v2 = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(parse_oom_kills(v2), Some(2));
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n";
        assert_eq!(parse_oom_kills(v1), Some(5));
        // `oom_kill_disable` is not the counter.
        assert_eq!(parse_oom_kills("oom_kill_disable 0\n"), None);
    }

    #[test]
    fn reads_limits_and_their_absence() {
        assert_eq!(parse_limit("536870912\n"), Some(512 << 20));
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("junk"), None);
    }

    #[test]
    fn finds_v2_then_v1_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(MemoryCgroup::under(dir.path()).is_none());
        std::fs::create_dir(dir.path().join("memory")).unwrap();
        std::fs::write(
            dir.path().join("memory/memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("memory/memory.limit_in_bytes"),
            "1073741824\n",
        )
        .unwrap();
        let v1 = MemoryCgroup::under(dir.path()).expect("v1 files");
        assert_eq!((v1.oom_kills(), v1.limit()), (Some(1), Some(1 << 30)));
        std::fs::write(dir.path().join("memory.events"), "oom 0\noom_kill 4\n").unwrap();
        std::fs::write(dir.path().join("memory.max"), "max\n").unwrap();
        let v2 = MemoryCgroup::under(dir.path()).expect("v2 files");
        assert_eq!((v2.oom_kills(), v2.limit()), (Some(4), None));
    }

    #[test]
    fn each_kill_is_news_once() {
        let mark = OomWatermark::starting_now(None);
        assert_eq!(mark.news(0), 0);
        assert_eq!(mark.news(2), 2);
        assert_eq!(mark.news(2), 0);
        assert_eq!(mark.news(3), 1);
        // A counter that went back (a restarted container) is no news.
        assert_eq!(mark.news(1), 0);
    }
}
