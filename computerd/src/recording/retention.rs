//! Which ended recordings go when a new one starts, and how much room the
//! computer's disk has left for recordings.

use computer_protocol::recording::{RecordingId, Retention};
use std::path::Path;

/// Free space below which no recording grows: what the computer itself,
/// its browser and the agent's files need to keep working.
pub const DISK_FLOOR_BYTES: u64 = 64 * 1024 * 1024;

/// A recording as retention weighs it.
#[derive(Debug, Clone)]
pub struct Kept {
    pub id: RecordingId,
    /// Still recording: never deleted, but it counts.
    pub open: bool,
    /// When it started, from its meta; ids tell the second only, and two
    /// recordings may start within one. `None` (unreadable) counts as the
    /// oldest.
    pub started: Option<time::OffsetDateTime>,
}

/// The recordings to delete so that, with one more, at most `keep.count`
/// remain and none started more than `keep.days` days before `now` (by the
/// time in its id). Open ones always stay; the oldest go first.
pub fn to_prune(existing: &[Kept], keep: Retention, now: time::OffsetDateTime) -> Vec<RecordingId> {
    let cutoff = id_time(now - time::Duration::days(i64::from(keep.days)));
    let mut sorted: Vec<&Kept> = existing.iter().collect();
    sorted.sort_by(|a, b| (a.started, &a.id).cmp(&(b.started, &b.id)));
    // Room for the new one.
    let mut over = (sorted.len() + 1).saturating_sub(keep.count.max(1) as usize);
    let mut pruned = Vec::new();
    for kept in sorted {
        if kept.open {
            continue;
        }
        // Ids start with their start time, so they compare as times.
        let too_old = kept
            .id
            .0
            .get(..cutoff.len())
            .is_some_and(|t| t < cutoff.as_str());
        if too_old || over > 0 {
            pruned.push(kept.id.clone());
            over = over.saturating_sub(1);
        }
    }
    pruned
}

/// The time part of a recording id: `YYYYMMDDTHHMMSSZ`.
pub fn id_time(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// The free bytes on `path`'s filesystem when writing `bytes` more there
/// would leave less than [`DISK_FLOOR_BYTES`]; `None` when they fit (or the
/// free space cannot be read).
pub fn short_of_room(path: &Path, bytes: u64) -> Option<u64> {
    free_bytes(path).filter(|free| *free < bytes.saturating_add(DISK_FLOOR_BYTES))
}

/// Bytes free to an unprivileged writer on the filesystem that holds
/// `path` (or its nearest existing parent); `None` when it cannot be read.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = path.ancestors().find(|p| p.exists())?;
    let name = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `name` is NUL-terminated and `stats` is written by the call
    // before it is read, which happens only when the call succeeds.
    let stats = unsafe {
        if libc::statvfs(name.as_ptr(), stats.as_mut_ptr()) != 0 {
            return None;
        }
        stats.assume_init()
    };
    // Both are u64 on 64-bit Linux (the image's), narrower elsewhere.
    #[allow(clippy::useless_conversion)]
    let (blocks, size) = (u64::from(stats.f_bavail), u64::from(stats.f_frsize));
    Some(blocks.saturating_mul(size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn id(text: &str) -> RecordingId {
        RecordingId(text.to_string())
    }

    fn kept(text: &str, open: bool, started: time::OffsetDateTime) -> Kept {
        Kept {
            id: id(text),
            open,
            started: Some(started),
        }
    }

    #[test]
    fn the_oldest_ended_go_first_and_open_ones_stay() {
        let now = datetime!(2026-12-05 12:00 UTC);
        let existing = vec![
            kept(
                "20261205T110000Z-0003",
                false,
                datetime!(2026-12-05 11:00 UTC),
            ),
            kept(
                "20261205T090000Z-0001",
                true,
                datetime!(2026-12-05 09:00 UTC),
            ),
            kept(
                "20261205T100000Z-0002",
                false,
                datetime!(2026-12-05 10:00 UTC),
            ),
        ];
        let keep = |count| Retention { count, days: 30 };
        assert!(to_prune(&existing, keep(4), now).is_empty());
        // Three kept with the new one: one goes, the oldest ended.
        assert_eq!(
            to_prune(&existing, keep(3), now),
            [id("20261205T100000Z-0002")]
        );
        // One kept: every ended one goes; the open one stays.
        assert_eq!(
            to_prune(&existing, keep(1), now),
            [id("20261205T100000Z-0002"), id("20261205T110000Z-0003")]
        );
    }

    #[test]
    fn within_one_second_the_start_time_orders_not_the_id_s_random_tail() {
        let now = datetime!(2026-12-05 12:00 UTC);
        let existing = vec![
            // Started first, but its tail sorts last.
            kept(
                "20261205T110000Z-ffff",
                false,
                datetime!(2026-12-05 11:00:00.1 UTC),
            ),
            kept(
                "20261205T110000Z-0000",
                false,
                datetime!(2026-12-05 11:00:00.9 UTC),
            ),
        ];
        let keep = Retention { count: 2, days: 30 };
        assert_eq!(
            to_prune(&existing, keep, now),
            [id("20261205T110000Z-ffff")]
        );
    }

    #[test]
    fn recordings_past_the_age_go_whatever_the_count() {
        let now = datetime!(2026-12-05 12:00 UTC);
        let existing = vec![
            kept(
                "20261104T115959Z-0001",
                false,
                datetime!(2026-11-04 11:59:59 UTC),
            ),
            kept(
                "20261105T120001Z-0002",
                false,
                datetime!(2026-11-05 12:00:01 UTC),
            ),
            kept(
                "20261001T000000Z-0003",
                true,
                datetime!(2026-10-01 00:00 UTC),
            ),
        ];
        let keep = Retention {
            count: 100,
            days: 31,
        };
        assert_eq!(
            to_prune(&existing, keep, now),
            [id("20261104T115959Z-0001")]
        );
    }

    #[test]
    fn the_disk_s_free_space_is_read_from_the_nearest_existing_folder() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(&dir.path().join("not/yet/there")).expect("statvfs works");
        assert!(free > 0);
        // More than the disk has is short, and says what is free.
        assert_eq!(
            short_of_room(dir.path(), u64::MAX).map(|f| f > 0),
            Some(true)
        );
    }
}
