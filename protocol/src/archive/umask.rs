//! This process's umask, read once without changing it.
//!
//! `umask(2)` can only be read by setting it, which would briefly give
//! every other thread's new files the wrong mode. Linux reports it in
//! `/proc/self/status`; elsewhere a folder made with mode 0777 shows which
//! bits the umask clears.

use std::sync::OnceLock;

/// Used when the umask cannot be read: the common default.
#[cfg(unix)]
const FALLBACK: u32 = 0o022;

/// The umask, read on first use.
pub fn process_umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(read_umask)
}

#[cfg(unix)]
fn read_umask() -> u32 {
    from_proc_status()
        .or_else(from_probe_folder)
        .unwrap_or(FALLBACK)
}

#[cfg(not(unix))]
fn read_umask() -> u32 {
    // Windows has no umask; modes are not written there.
    0
}

#[cfg(unix)]
fn from_proc_status() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    u32::from_str_radix(value.trim(), 8).ok()
}

#[cfg(unix)]
fn from_probe_folder() -> Option<u32> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let probe = std::env::temp_dir().join(format!(
        ".computer-use-umask-{}-{nanos}",
        std::process::id()
    ));
    std::fs::DirBuilder::new().mode(0o777).create(&probe).ok()?;
    let mode = std::fs::metadata(&probe).map(|m| m.permissions().mode());
    let _ = std::fs::remove_dir(&probe);
    Some(!mode.ok()? & 0o777)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_of_reading_agree() {
        let probed = from_probe_folder().expect("the temp folder is writable");
        if let Some(proc) = from_proc_status() {
            assert_eq!(proc, probed);
        }
        assert_eq!(process_umask(), probed);
    }
}
