//! The filesystem steps of unpacking, each on a folder handle: names from
//! archive bytes, modes, times and symlinks, as each OS takes them.

use cap_std::fs::Dir;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::Path;

#[cfg(unix)]
pub(super) fn os_part(part: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(part).to_os_string()
}

#[cfg(not(unix))]
pub(super) fn os_part(part: &[u8]) -> OsString {
    // Windows rules have refused names that are not UTF-8 by now.
    OsString::from(String::from_utf8_lossy(part).into_owned())
}

#[cfg(unix)]
pub(super) fn set_mode(folder: &Dir, below: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::Permissions::from_mode(mode);
    folder.set_permissions(below, cap_std::fs::Permissions::from_std(mode))
}

#[cfg(not(unix))]
pub(super) fn set_mode(_: &Dir, _: &Path, _: u32) -> io::Result<()> {
    Ok(())
}

pub(super) fn finish_file(file: &File, mode: u32, mtime: Option<u64>) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    if mode & 0o222 == 0 {
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(true);
        file.set_permissions(permissions)?;
    }
    if let Some(mtime) = mtime {
        // The time is a courtesy; a filesystem that refuses it still has
        // the right content.
        // A hostile sender's time can be near u64::MAX seconds, which no
        // `SystemTime` holds; such a time is left out.
        if let Some(time) = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(mtime))
        {
            let _ = file.set_modified(time);
        }
    }
    Ok(())
}

/// The link's target is written as the archive gives it, whatever it
/// points to: nothing is resolved through it here.
#[cfg(unix)]
pub(super) fn make_symlink(target: &[u8], folder: &Dir, name: &Path) -> io::Result<()> {
    folder.symlink_contents(os_part(target), name)
}

#[cfg(windows)]
pub(super) fn make_symlink(target: &[u8], folder: &Dir, name: &Path) -> io::Result<()> {
    let target = std::str::from_utf8(target)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
        .replace('/', "\\");
    // Windows needs to know whether the link is to a folder.
    if folder.is_dir(&target) {
        folder.symlink_dir(&target, name)
    } else {
        folder.symlink_file(&target, name)
    }
}

#[cfg(not(any(unix, windows)))]
pub(super) fn make_symlink(_: &[u8], _: &Dir, _: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symlinks are not supported here",
    ))
}
