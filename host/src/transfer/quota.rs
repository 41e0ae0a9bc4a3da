//! How much of the server's disk one HTTP client's files may take: a quota
//! on each folder beneath `COMPUTER_USE_TRANSFER_ROOT` (a tenant's own, or
//! the root itself for a single client). Downloads into it, and so the
//! recordings delivered there, count what the folder holds before they
//! start and stop when the quota is reached.

use crate::settings::{whole_number, Env, SettingsError};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::io;
use std::path::{Path, PathBuf};

/// The setting: megabytes per folder.
pub const TRANSFER_QUOTA_VAR: &str = "COMPUTER_USE_TRANSFER_QUOTA_MB";
/// 4 GiB each: 16 tenants take 64 GiB at most.
pub const TRANSFER_QUOTA_DEFAULT_MB: u64 = 4096;
/// Up to 1 TiB.
const TRANSFER_QUOTA_MAX_MB: u64 = 1 << 20;
const MB: u64 = 1024 * 1024;

/// The quota in bytes, from [`TRANSFER_QUOTA_VAR`]; `0` there is none
/// (nothing is counted: for a root that other files share).
pub fn from_env(env: &Env) -> Result<Option<u64>, SettingsError> {
    whole_number(
        env,
        TRANSFER_QUOTA_VAR,
        0..=TRANSFER_QUOTA_MAX_MB,
        TRANSFER_QUOTA_DEFAULT_MB,
        " of megabytes (0 for none)",
    )
    .map(|mb| (mb > 0).then_some(mb * MB))
}

/// Bytes of disk the regular files beneath `folder` take (allocated, so a
/// sparse file counts what it holds, not its length), symlinks not
/// followed (a link takes its own few bytes, not its target's). Files that
/// vanish while they are counted count as nothing. Every folder is listed
/// through `folder`'s handle, so one swapped for a link meanwhile cannot
/// lead the count outside it.
pub fn used_beneath(folder: &Path) -> io::Result<u64> {
    let top = Dir::open_ambient_dir(folder, ambient_authority())?;
    let mut used = 0u64;
    // Paths below `top`, not open folders: a deep tree holds no more than
    // one listing open at a time.
    let mut pending = vec![PathBuf::new()];
    while let Some(below) = pending.pop() {
        let listed = if below.as_os_str().is_empty() {
            top.entries()
        } else {
            top.read_dir(&below)
        };
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !below.as_os_str().is_empty() => {
                continue
            }
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(below.join(entry.file_name()));
            } else if meta.is_file() {
                used = used.saturating_add(allocated(&meta));
            }
        }
    }
    Ok(used)
}

#[cfg(unix)]
fn allocated(meta: &cap_std::fs::Metadata) -> u64 {
    use cap_std::fs::MetadataExt;
    meta.blocks().saturating_mul(512)
}

#[cfg(not(unix))]
fn allocated(meta: &cap_std::fs::Metadata) -> u64 {
    meta.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_files_take_on_disk_counts_and_symlinks_do_not_lead_elsewhere() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![0u8; 10_000]).unwrap();
        std::fs::create_dir_all(root.path().join("a/b")).unwrap();
        std::fs::write(root.path().join("a/one"), vec![0u8; 300]).unwrap();
        std::fs::write(root.path().join("a/b/two"), vec![0u8; 700]).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("a/elsewhere")).unwrap();
        // A gigabyte in length, nothing on disk.
        std::fs::File::create(root.path().join("sparse"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let used = used_beneath(root.path()).unwrap();
        assert!(used < 10_000, "{used}");
        std::fs::write(root.path().join("a/b/full"), vec![1u8; 100_000]).unwrap();
        assert!(used_beneath(root.path()).unwrap() >= used + 100_000);
    }

    #[test]
    fn the_setting_is_megabytes_with_a_default_and_a_range() {
        let env = |v: &str| Env::from([(TRANSFER_QUOTA_VAR.to_string(), v.to_string())]);
        assert_eq!(from_env(&Env::new()).unwrap(), Some(4096 * MB));
        assert_eq!(from_env(&env("10")).unwrap(), Some(10 * MB));
        assert_eq!(from_env(&env("0")).unwrap(), None);
        for bad in ["-1", "2TB", "1048577"] {
            let e = from_env(&env(bad)).unwrap_err().to_string();
            assert!(
                e.contains(TRANSFER_QUOTA_VAR) && e.contains("0 to 1048576"),
                "{e}"
            );
        }
    }
}
