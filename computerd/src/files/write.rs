//! Replacing a file for `write_file`, atomically: the content goes to a temp
//! file in the same folder, is synced, and is renamed over the target, so a
//! reader sees the old file or the new one, never half of either.

use super::error::FilesError;
use super::paths::{resolve, shown};
use computer_protocol::limits::WRITE_MAX_BYTES;
use computer_protocol::{WriteFileRequest, WriteFileResponse};
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Symlinks followed at most, as the kernel's own limit (ELOOP).
const SYMLINK_HOPS_MAX: usize = 40;

/// Writes `req.content` to `req.path`, creating missing folders. An existing
/// file keeps its permission bits; a new one gets the usual mode for the
/// umask (0644 with the common 022).
///
/// A symlink is written through, as an editor does: the file it points to gets
/// the content and the link stays a link, so dotfiles kept as links into a
/// repository stay linked. The result then names the file written.
pub fn write(
    home: &Path,
    cwd: &Path,
    req: &WriteFileRequest,
) -> Result<WriteFileResponse, FilesError> {
    let requested = resolve(home, cwd, &req.path);
    if req.content.len() > WRITE_MAX_BYTES {
        return Err(FilesError::ContentTooLarge {
            path: shown(&requested),
            size: req.content.len(),
        });
    }
    if req.path.ends_with('/') {
        return Err(FilesError::NotAFilePath {
            path: shown(&requested),
        });
    }
    let (target, through_link) = follow_symlinks(&requested)?;

    let existing_permissions = match std::fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(FilesError::WriteFolder {
                path: shown(&target),
            })
        }
        Ok(metadata) if !metadata.is_file() => {
            return Err(FilesError::NotRegular {
                path: shown(&target),
            })
        }
        Ok(metadata) => {
            // Renaming over a file needs only the folder to be writable; honour
            // the file's own permission as writing in place would.
            OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|err| FilesError::io(&target, "write", err))?;
            Some(metadata.permissions())
        }
        // Not there, or a part of the path is a file: creating the folders
        // below says which.
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            None
        }
        Err(err) => return Err(FilesError::io(&target, "write", err)),
    };

    let folder = target.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(folder).map_err(|err| match err.kind() {
        // A part of the path is a file where a folder is needed.
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => FilesError::ParentIsFile {
            path: shown(blocking_file(folder)),
        },
        _ => FilesError::io(folder, "create the folder", err),
    })?;

    replace(
        folder,
        &target,
        req.content.as_bytes(),
        existing_permissions,
    )
    .map_err(|err| FilesError::io(&target, "write", err))?;

    let path = if through_link {
        std::fs::canonicalize(&target).unwrap_or(target)
    } else {
        target
    };
    Ok(WriteFileResponse {
        path: shown(&path),
        bytes: req.content.len() as u64,
    })
}

/// The file a path leads to through any symlinks, and whether there were
/// any. A dangling link leads to the path it names, which is then created.
fn follow_symlinks(path: &Path) -> Result<(PathBuf, bool), FilesError> {
    let mut current = path.to_path_buf();
    for hop in 0..=SYMLINK_HOPS_MAX {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)
                    .map_err(|err| FilesError::io(&current, "write", err))?;
                // Relative targets count from the link's folder. `..` is left
                // to the kernel, which resolves it physically as it would
                // when opening the link.
                current = current.parent().unwrap_or(Path::new("/")).join(target);
            }
            _ => return Ok((current, hop > 0)),
        }
    }
    Err(FilesError::io(
        path,
        "write",
        io::Error::other(format!("more than {SYMLINK_HOPS_MAX} symlinks in a row")),
    ))
}

/// The part of `folder` that exists and is not a folder.
fn blocking_file(folder: &Path) -> &Path {
    folder
        .ancestors()
        .find(|part| std::fs::metadata(part).is_ok_and(|metadata| !metadata.is_dir()))
        .unwrap_or(folder)
}

/// Writes `content` to a temp file in `folder` and renames it to `target`.
fn replace(
    folder: &Path,
    target: &Path,
    content: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let mut temp = TempFile {
        path: folder.join(format!(".computerd-write-{}.tmp", uuid::Uuid::new_v4())),
        armed: true,
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        // Reduced by the umask, as for any new file.
        .mode(0o666)
        .open(&temp.path)?;
    file.write_all(content)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp.path, target)?;
    temp.armed = false;
    // Makes the rename itself durable. It is already visible; a failure here
    // only weakens what survives a power cut, not worth failing the write for.
    if let Ok(folder) = File::open(folder) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// A temp file removed when a write fails half way.
struct TempFile {
    path: PathBuf,
    /// False once renamed into place.
    armed: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
