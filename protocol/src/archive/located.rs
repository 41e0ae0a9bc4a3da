//! A path as a transfer uses it: a handle on the deepest folder of the path
//! that existed when it was looked up, and the rest of the path below it.
//!
//! Everything a transfer reads or writes is then reached through that
//! handle (cap-std: `openat2` with `RESOLVE_BENEATH` where the kernel has
//! it), never by the full path again. A folder on the way renamed, or
//! swapped for a symlink, after the lookup cannot lead the transfer
//! anywhere else: what lies above the handle is no longer read at all, and
//! nothing below it may lead out of it.
//!
//! Who makes the handle decides what "the path" may mean: a shell's rules
//! on the computer and for a stdio client ([`Located::ambient`]), or
//! confinement beneath a transfer root, where the host opens it through the
//! root's own handle.

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Located {
    /// The deepest existing folder on the path (symlinks on the way
    /// followed, as the caller's rules allow).
    pub folder: Dir,
    /// Where `folder` is, for messages.
    pub folder_path: PathBuf,
    /// The part of the path below `folder`, not looked up yet: empty when
    /// the path is that folder; otherwise its first component is missing or
    /// is not a folder.
    pub rest: PathBuf,
}

impl Located {
    /// `path` (absolute) as a shell resolves it: every symlink on the way
    /// is followed.
    pub fn ambient(path: &Path) -> io::Result<Located> {
        let mut folder_path = path.to_path_buf();
        let mut rest = Vec::new();
        loop {
            match Dir::open_ambient_dir(&folder_path, ambient_authority()) {
                Ok(folder) => {
                    return Ok(Located {
                        folder,
                        folder_path,
                        rest: rest.into_iter().rev().collect(),
                    })
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    let Some(name) = folder_path.file_name().map(|n| n.to_os_string()) else {
                        return Err(e);
                    };
                    rest.push(name);
                    folder_path.pop();
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The whole path, for messages.
    pub fn path(&self) -> PathBuf {
        if self.rest.as_os_str().is_empty() {
            self.folder_path.clone()
        } else {
            self.folder_path.join(&self.rest)
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_existing_folder_is_opened_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/file"), "x").unwrap();

        let at = Located::ambient(&dir.path().join("a")).unwrap();
        assert_eq!(at.folder_path, dir.path().join("a"));
        assert_eq!(at.rest, PathBuf::new());

        let at = Located::ambient(&dir.path().join("a/new/deeper")).unwrap();
        assert_eq!(at.folder_path, dir.path().join("a"));
        assert_eq!(at.rest, Path::new("new/deeper"));
        assert_eq!(at.path(), dir.path().join("a/new/deeper"));

        // A file is not a folder to stand in.
        let at = Located::ambient(&dir.path().join("a/file")).unwrap();
        assert_eq!(at.rest, Path::new("file"));
        let at = Located::ambient(&dir.path().join("a/file/below")).unwrap();
        assert_eq!(at.rest, Path::new("file/below"));
    }

    #[test]
    fn the_handle_keeps_its_folder_when_the_path_changes() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let at = Located::ambient(&dir.path().join("a/new")).unwrap();
        // The folder is moved away and a symlink to elsewhere takes its name.
        std::fs::rename(dir.path().join("a"), dir.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("a")).unwrap();
        at.folder.write(&at.rest, "kept").unwrap();
        assert!(dir.path().join("moved/new").exists());
        assert!(!outside.path().join("new").exists());
    }
}
