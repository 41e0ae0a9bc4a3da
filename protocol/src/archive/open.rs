//! Opening a file that must be a regular file, without a window in which
//! it can turn into something else.
//!
//! Checking a path first and opening it after leaves a gap: a process that
//! swaps the file for a named pipe in between makes `open` wait for a
//! writer forever, on a blocking thread nothing can cancel. So the path is
//! opened without blocking, and the opened handle itself is checked.

use cap_std::fs::Dir;
use std::fs::File;
use std::io;
use std::path::Path;

/// Whether a symlink at the path itself is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    /// The path was named by the agent: what it points to is meant.
    Follow,
    /// The path was found as a regular file while walking a tree: a
    /// symlink there now is a swap, and is refused.
    Refuse,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("it is not a regular file (a pipe, socket or device) now")]
    NotRegular,
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<OpenError> for io::Error {
    fn from(e: OpenError) -> io::Error {
        match e {
            OpenError::NotRegular => io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
            OpenError::Io(e) => e,
        }
    }
}

/// Opens `path` for reading if it is a regular file, returning at once
/// whatever it is.
pub fn open_regular(path: &Path, symlinks: Symlinks) -> Result<File, OpenError> {
    let file = open_without_blocking(path, symlinks)?;
    if !file.metadata()?.is_file() {
        return Err(OpenError::NotRegular);
    }
    #[cfg(unix)]
    blocking_again(&file)?;
    Ok(file)
}

/// [`open_regular`] for `name` beneath `folder`, reached through its
/// handle.
pub fn open_regular_in(folder: &Dir, name: &Path, symlinks: Symlinks) -> Result<File, OpenError> {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).follow(match symlinks {
        Symlinks::Follow => FollowSymlinks::Yes,
        Symlinks::Refuse => FollowSymlinks::No,
    });
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = folder.open_with(name, &options)?.into_std();
    if !file.metadata()?.is_file() {
        return Err(OpenError::NotRegular);
    }
    #[cfg(unix)]
    blocking_again(&file)?;
    Ok(file)
}

/// `O_NONBLOCK` makes opening a pipe return at once instead of waiting for
/// a writer; `O_NOCTTY` keeps a terminal from becoming the daemon's own.
#[cfg(unix)]
fn open_without_blocking(path: &Path, symlinks: Symlinks) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if symlinks == Symlinks::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

/// Opening a named pipe on Windows does not wait for a writer.
#[cfg(not(unix))]
fn open_without_blocking(path: &Path, _: Symlinks) -> io::Result<File> {
    File::open(path)
}

/// Clears `O_NONBLOCK` again: reads of a regular file ignore it on Linux,
/// but not every system promises that.
#[cfg(unix)]
fn blocking_again(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for as long as `file` lives; F_GETFL and
    // F_SETFL only read and set its status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::sync::mpsc;
    use std::time::Duration;

    /// `open_regular` on another thread, with a deadline: before the fix a
    /// pipe never answered.
    fn open_soon(path: &Path, symlinks: Symlinks) -> Result<File, OpenError> {
        let (tx, rx) = mpsc::channel();
        let path = path.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(open_regular(&path, symlinks));
        });
        rx.recv_timeout(Duration::from_secs(5))
            .expect("opening did not return within 5 s")
    }

    fn mkfifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string naming a path in the test's folder.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn a_pipe_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        mkfifo(&pipe);
        for symlinks in [Symlinks::Follow, Symlinks::Refuse] {
            let err = open_soon(&pipe, symlinks).unwrap_err();
            assert!(matches!(err, OpenError::NotRegular), "{err:?}");
        }
        // Also behind a symlink the agent named.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&pipe, &link).unwrap();
        let err = open_soon(&link, Symlinks::Follow).unwrap_err();
        assert!(matches!(err, OpenError::NotRegular), "{err:?}");
    }

    #[test]
    fn a_file_opens_for_blocking_reads_and_symlinks_follow_the_choice() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "content").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();

        let mut text = String::new();
        let mut opened = open_soon(&file, Symlinks::Refuse).unwrap();
        opened.read_to_string(&mut text).unwrap();
        assert_eq!(text, "content");
        use std::os::fd::AsRawFd;
        // SAFETY: reads the status flags of a descriptor `opened` holds.
        let flags = unsafe { libc::fcntl(opened.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);

        assert!(open_soon(&link, Symlinks::Follow).is_ok());
        let err = open_soon(&link, Symlinks::Refuse).unwrap_err();
        assert!(matches!(err, OpenError::Io(_)), "{err:?}");
    }
}
