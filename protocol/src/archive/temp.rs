//! Temporary names. Every file is written under one in its own folder and
//! renamed into place, so nobody sees half a file under the real name, and
//! whatever stops a transfer removes what it left.

use cap_std::fs::{Dir, OpenOptions};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Every temporary name starts with this, so leftovers are easy to find.
pub const TEMP_PREFIX: &str = ".computer-use-transfer-";

/// Attempts at a fresh name before giving up; a clash needs another
/// process with the same id and clock.
const NAME_ATTEMPTS: usize = 16;

/// A name in a folder (reached through its handle) that is removed when
/// dropped, unless renamed into place with [`TempPath::rename_to`].
#[derive(Debug)]
pub struct TempPath<'a> {
    folder: &'a Dir,
    name: PathBuf,
    armed: bool,
}

fn fresh_name() -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Fixed length, so a long name being copied cannot make it too long.
    PathBuf::from(format!(
        "{TEMP_PREFIX}{:x}-{count:x}-{nanos:x}.tmp",
        std::process::id()
    ))
}

impl<'a> TempPath<'a> {
    /// Creates an empty file only this user can read until its mode is set.
    pub fn create_file(folder: &'a Dir) -> io::Result<(TempPath<'a>, File)> {
        let mut file = None;
        let temp = TempPath::create_with(folder, |folder, name| {
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            cap_std::fs::OpenOptionsExt::mode(&mut options, 0o600);
            file = Some(folder.open_with(name, &options)?.into_std());
            Ok(())
        })?;
        Ok((temp, file.expect("created with the temp name")))
    }

    /// Makes something at a fresh name in `folder` with `make`, which must
    /// fail with `AlreadyExists` when the name is taken.
    pub fn create_with(
        folder: &'a Dir,
        mut make: impl FnMut(&Dir, &Path) -> io::Result<()>,
    ) -> io::Result<TempPath<'a>> {
        let mut last = None;
        for _ in 0..NAME_ATTEMPTS {
            let name = fresh_name();
            match make(folder, &name) {
                Ok(()) => {
                    return Ok(TempPath {
                        folder,
                        name,
                        armed: true,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    /// The temporary name, in its folder.
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// Renames over `target` in the same folder, replacing a file or
    /// symlink there.
    pub fn rename_to(mut self, target: &Path) -> io::Result<()> {
        self.folder.rename(&self.name, self.folder, target)?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for TempPath<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.folder.remove_file(&self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_temp_files_are_removed_and_renamed_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Dir::open_ambient_dir(dir.path(), cap_std::ambient_authority()).unwrap();
        let (temp, file) = TempPath::create_file(&folder).unwrap();
        let name = temp.name().to_string_lossy().into_owned();
        assert!(name.starts_with(TEMP_PREFIX), "{name}");
        drop(file);
        drop(temp);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        let (temp, file) = TempPath::create_file(&folder).unwrap();
        drop(file);
        temp.rename_to(Path::new("kept")).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["kept"]);
    }
}
