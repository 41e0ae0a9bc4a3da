//! Checking a new working folder for `set_cwd`.

use super::error::FilesError;
use super::paths::{resolve, shown};
use std::path::{Path, PathBuf};

/// The folder `path` names (relative to `cwd`, `~` being `home`), as an
/// absolute path with symlinks resolved, so later relative paths and `shell`
/// calls start from a folder that cannot change under them by a link moving.
pub fn set_cwd(home: &Path, cwd: &Path, path: &str) -> Result<PathBuf, FilesError> {
    let folder = resolve(home, cwd, path);
    let metadata =
        std::fs::metadata(&folder).map_err(|err| FilesError::io(&folder, "open", err))?;
    if !metadata.is_dir() {
        return Err(FilesError::NotAFolder {
            path: shown(&folder),
        });
    }
    std::fs::canonicalize(&folder).map_err(|err| FilesError::io(&folder, "open", err))
}
