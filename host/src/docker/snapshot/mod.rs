//! Snapshots: a computer's whole file state, kept on its own engine. A
//! snapshot is a pair made while the computer is paused: an image of the
//! container's filesystem (`docker commit`, what the agent installed or
//! broke outside home) and a volume holding a copy of its home, both
//! labelled with the computer's name and the snapshot's. No snapshot byte
//! passes through the host: the engine commits, and a short-lived copier
//! container on the engine copies volumes ([`copier`]).
//!
//! [`name`] checks the names and notes an agent gives; [`store`] lists,
//! finds and deletes the pairs; [`mod@save`] makes one; [`mod@restore`] puts one
//! back, or resets the computer to its image with an empty home, by
//! creating its container again beside the old one and swapping them once
//! the home is in place, so that a failure before the swap leaves the
//! computer as it was; [`template`] starts a computer that does not exist
//! yet from a snapshot (`COMPUTER_USE_TEMPLATE`).
//!
//! Processes are not kept: a restored computer's desktop starts fresh.

pub mod copier;
pub mod name;
pub mod restore;
pub mod save;
pub mod store;
pub mod template;

pub use name::{check_note, SnapshotName};
pub use restore::{recordings_in_progress, restore, session_named, Restored, Target};
pub use save::{save, Saved};
pub use store::{delete, list, Snapshot};

use super::error::DockerError;

/// Labels of a snapshot's image and volume.
pub const OF_LABEL: &str = "computer-use.snapshot.of";
pub const NAME_LABEL: &str = "computer-use.snapshot.name";
pub const NOTE_LABEL: &str = "computer-use.snapshot.note";
pub const CREATED_LABEL: &str = "computer-use.snapshot.created";
/// The name of the volume that holds the home copy; set on the image.
pub const HOME_LABEL: &str = "computer-use.snapshot.home";
/// The home copy's size in bytes; set on the image.
pub const HOME_BYTES_LABEL: &str = "computer-use.snapshot.home-bytes";
/// The size of the filesystem changes the image holds over its parent.
pub const LAYER_BYTES_LABEL: &str = "computer-use.snapshot.layer-bytes";
/// The repository every snapshot image is tagged in; the tag is random
/// (snapshots are found by their labels, never by the tag), and the tag
/// keeps `docker image prune` from taking them.
pub const REPOSITORY: &str = "computer-use-snapshot";

/// `COMPUTER_USE_SNAPSHOTS_MAX`: snapshots per computer.
pub const MAX_VAR: &str = "COMPUTER_USE_SNAPSHOTS_MAX";
pub const MAX_DEFAULT: usize = 10;
/// The most `COMPUTER_USE_SNAPSHOTS_MAX` may say: each snapshot holds a
/// copy of the home on the engine's disk.
pub const MAX_LIMIT: usize = 100;
/// `COMPUTER_USE_SNAPSHOT_SPARE_MB`: disk a save leaves free on the engine.
pub const SPARE_VAR: &str = "COMPUTER_USE_SNAPSHOT_SPARE_MB";
pub const SPARE_MB_DEFAULT: u64 = 256;
pub const SPARE_MB_LIMIT: u64 = 1_048_576;

/// What a save may take, from the server's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveLimits {
    /// Snapshots per computer.
    pub max: usize,
    /// Bytes the engine's disk keeps free after a save.
    pub spare_bytes: u64,
}

impl SaveLimits {
    /// `COMPUTER_USE_SNAPSHOTS_MAX` and `COMPUTER_USE_SNAPSHOT_SPARE_MB`
    /// from `env`; a bad value names the setting and its range.
    pub fn from_env(
        env: &std::collections::HashMap<String, String>,
    ) -> Result<SaveLimits, SnapshotError> {
        let get = |name: &str| env.get(name).map(String::as_str);
        let spare_mb = match get(SPARE_VAR).map(str::trim).filter(|t| !t.is_empty()) {
            None => SPARE_MB_DEFAULT,
            Some(text) => text
                .parse::<u64>()
                .ok()
                .filter(|mb| *mb <= SPARE_MB_LIMIT)
                .ok_or_else(|| {
                    SnapshotError::Invalid(format!(
                        "{SPARE_VAR} is `{text}`: give whole megabytes from 0 to {SPARE_MB_LIMIT} (default {SPARE_MB_DEFAULT})"
                    ))
                })?,
        };
        Ok(SaveLimits {
            max: max_from(get(MAX_VAR))?,
            spare_bytes: spare_mb * 1024 * 1024,
        })
    }
}

/// Why a snapshot call did nothing or failed; each says what became of the
/// computer and what to do.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Docker(#[from] DockerError),
    #[error("{0}")]
    Invalid(String),
    #[error("the computer `{computer}` already has a snapshot named `{name}`: give another name, or delete that one first with delete_snapshot")]
    Exists { computer: String, name: String },
    #[error("the computer `{computer}` has no snapshot named `{name}`; {}", known(.existing))]
    Unknown {
        computer: String,
        name: String,
        existing: Vec<String>,
    },
    #[error("the computer `{computer}` has {count} snapshots, the most {MAX_VAR} allows ({max}): delete one with delete_snapshot, or raise {MAX_VAR}")]
    TooMany {
        computer: String,
        count: usize,
        max: usize,
    },
    #[error("the engine's disk is short: the snapshot needs {} and {} is free beyond the {} kept spare ({SPARE_VAR}); nothing was saved and the computer runs as it was. Free disk on the engine (`docker system df`, delete_snapshot) and try again", human(*.needed), human(*.free), human(*.spare))]
    DiskShort { needed: u64, free: u64, spare: u64 },
    #[error("the computer `{computer}` does not run: call start_computer first")]
    NotRunning { computer: String },
    #[error("{what} failed: {why}. {aftermath}")]
    Failed {
        what: String,
        why: String,
        aftermath: String,
    },
    /// A restore or reset that failed after the computer was stopped and
    /// started again as it was; the caller's session was started again.
    #[error("{error} Your session {session} goes on, on a fresh screen.")]
    Resumed {
        error: Box<SnapshotError>,
        session: String,
    },
    #[error("the snapshot `{name}` needs its image `{image}` (version {version}), which the engine no longer has: it cannot be restored; delete it with delete_snapshot")]
    ImageGone {
        name: String,
        image: String,
        version: String,
    },
}

/// `len` random characters of `[a-z0-9]`, for the names of what a
/// snapshot makes (Docker wants repository and volume names lower case).
fn random_suffix(len: usize) -> String {
    use rand::distr::{Alphanumeric, SampleString};
    Alphanumeric
        .sample_string(&mut rand::rng(), len)
        .to_lowercase()
}

fn known(existing: &[String]) -> String {
    if existing.is_empty() {
        "it has none: save one with save_snapshot".to_string()
    } else {
        format!("it has: {}", existing.join(", "))
    }
}

fn human(bytes: u64) -> String {
    computer_protocol::archive::human_bytes(bytes)
}

/// `COMPUTER_USE_SNAPSHOTS_MAX` read from `value`: a whole number
/// 1..=[`MAX_LIMIT`], [`MAX_DEFAULT`] when unset.
pub fn max_from(value: Option<&str>) -> Result<usize, SnapshotError> {
    let Some(text) = value.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(MAX_DEFAULT);
    };
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(SnapshotError::Invalid(format!(
            "{MAX_VAR} is `{text}`: give a whole number of snapshots per computer from 1 to {MAX_LIMIT} (default {MAX_DEFAULT})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_read_with_its_bounds() {
        assert_eq!(max_from(None).unwrap(), MAX_DEFAULT);
        assert_eq!(max_from(Some(" 3 ")).unwrap(), 3);
        for bad in ["0", "101", "ten", "-1"] {
            let e = max_from(Some(bad)).unwrap_err().to_string();
            assert!(e.contains(MAX_VAR) && e.contains("1 to 100"), "{e}");
        }
    }

    #[test]
    fn the_spare_disk_is_read_in_megabytes_with_its_bounds() {
        let env = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::HashMap<_, _>>()
        };
        let plain = SaveLimits::from_env(&env(&[])).unwrap();
        assert_eq!(plain.spare_bytes, 256 * 1024 * 1024);
        assert_eq!(plain.max, MAX_DEFAULT);
        assert_eq!(
            SaveLimits::from_env(&env(&[(SPARE_VAR, "0")]))
                .unwrap()
                .spare_bytes,
            0
        );
        for bad in ["-1", "1048577", "lots"] {
            let e = SaveLimits::from_env(&env(&[(SPARE_VAR, bad)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(SPARE_VAR) && e.contains("0 to 1048576"), "{e}");
        }
        let e = SaveLimits::from_env(&env(&[(MAX_VAR, "0")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains(MAX_VAR), "{e}");
    }

    #[test]
    fn an_unknown_name_lists_the_ones_that_exist() {
        let e = SnapshotError::Unknown {
            computer: "c".into(),
            name: "x".into(),
            existing: vec!["a".into(), "b".into()],
        };
        assert!(e.to_string().ends_with("it has: a, b"), "{e}");
        let none = SnapshotError::Unknown {
            computer: "c".into(),
            name: "x".into(),
            existing: vec![],
        };
        assert!(none.to_string().contains("save_snapshot"), "{none}");
    }
}
