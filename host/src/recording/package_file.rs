//! A package's files as the host reads them: the package came from the
//! computer, so a listed file may be a link to anything on this machine, a
//! FIFO that never answers, or far larger than any package.

use cap_std::fs::Dir;
use computer_protocol::archive::{open_regular_in, OpenError, Symlinks};
use std::io;
use std::path::Path;

/// Largest `manifest.json` or `host-attestation.json` read.
pub const LIST_MAX_BYTES: u64 = 64 << 20;

/// Opens `path` to read only when it is a regular file itself: a link is
/// not followed, and a FIFO or device is refused without blocking.
pub fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(not_a_file());
    }
    let file = match options.open(path) {
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_a_file()),
        other => other?,
    };
    if !file.metadata()?.is_file() {
        return Err(not_a_file());
    }
    Ok(file)
}

pub fn not_a_file() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "a link, folder or special file where the package has a plain file",
    )
}

/// The bytes of regular file `path`, at most `max`.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_at_most(open_regular(path)?, max)
}

/// The bytes of regular file `name` in `folder` (reached through its
/// handle, a link at `name` not followed), at most `max`.
pub fn read_regular_in(folder: &Dir, name: &str, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular_in(folder, Path::new(name), Symlinks::Refuse).map_err(|e| match e {
        OpenError::NotRegular => not_a_file(),
        #[cfg(unix)]
        OpenError::Io(e) if e.raw_os_error() == Some(libc::ELOOP) => not_a_file(),
        OpenError::Io(e) => e,
    })?;
    read_at_most(file, max)
}

/// Writes `bytes` as `name` in `folder` under a temporary name, then
/// renames it into place: whatever `name` was (a link the computer planted
/// included) is replaced, never written through.
pub fn replace_in(folder: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let temp = format!(".{name}.{}", std::process::id());
    folder.write(&temp, bytes)?;
    folder.rename(&temp, folder, name)
}

fn read_at_most(file: std::fs::File, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(file, max + 1), &mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max} bytes, more than a package ever holds"),
        ));
    }
    Ok(bytes)
}
