//! Temporary names. Every file is written under one in its own folder and
//! renamed into place, so nobody sees half a file under the real name, and
//! whatever stops a transfer removes what it left.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Every temporary name starts with this, so leftovers are easy to find.
pub const TEMP_PREFIX: &str = ".computer-use-transfer-";

/// Attempts at a fresh name before giving up; a clash needs another
/// process with the same id and clock.
const NAME_ATTEMPTS: usize = 16;

/// A path in a folder that is removed when dropped, unless renamed into
/// place with [`TempPath::rename_to`].
#[derive(Debug)]
pub struct TempPath {
    path: PathBuf,
    armed: bool,
}

fn fresh_name(folder: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Fixed length, so a long name being copied cannot make it too long.
    folder.join(format!(
        "{TEMP_PREFIX}{:x}-{count:x}-{nanos:x}.tmp",
        std::process::id()
    ))
}

impl TempPath {
    /// Creates an empty file only this user can read until its mode is set.
    pub fn create_file(folder: &Path) -> io::Result<(TempPath, File)> {
        let mut file = None;
        let temp = TempPath::create_with(folder, |path| {
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            file = Some(options.open(path)?);
            Ok(())
        })?;
        Ok((temp, file.expect("created with the temp name")))
    }

    /// Makes something at a fresh name with `make`, which must fail with
    /// `AlreadyExists` when the name is taken.
    pub fn create_with(
        folder: &Path,
        mut make: impl FnMut(&Path) -> io::Result<()>,
    ) -> io::Result<TempPath> {
        let mut last = None;
        for _ in 0..NAME_ATTEMPTS {
            let path = fresh_name(folder);
            match make(&path) {
                Ok(()) => return Ok(TempPath { path, armed: true }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames over `target`, replacing a file or symlink there.
    pub fn rename_to(mut self, target: &Path) -> io::Result<()> {
        fs::rename(&self.path, target)?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_temp_files_are_removed_and_renamed_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let (temp, file) = TempPath::create_file(dir.path()).unwrap();
        let name = temp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with(TEMP_PREFIX), "{name}");
        drop(file);
        drop(temp);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

        let (temp, file) = TempPath::create_file(dir.path()).unwrap();
        drop(file);
        temp.rename_to(&dir.path().join("kept")).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["kept"]);
    }
}
