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
/// included) is replaced, never written through. The temporary name is
/// random and created new, so neither a file or link the computer left in
/// the folder nor another writer of the same package ever shares it.
pub fn replace_in(folder: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let temp = format!(".{name}.{:016x}", rand::random::<u64>());
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = folder.open_with(&temp, &options)?;
    if let Err(e) = io::Write::write_all(&mut file, bytes) {
        let _ = folder.remove_file(&temp);
        return Err(e);
    }
    drop(file);
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

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    #[test]
    fn writers_of_one_package_never_share_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Dir::open_ambient_dir(dir.path(), ambient_authority()).unwrap();
        let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 << 10]).collect();
        std::thread::scope(|scope| {
            for bytes in &contents {
                let folder = &folder;
                scope.spawn(move || replace_in(folder, "index.html", bytes).unwrap());
            }
        });
        let written = std::fs::read(dir.path().join("index.html")).unwrap();
        assert!(contents.contains(&written), "one writer's whole file");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["index.html"], "no temporary file left");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_name_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("index.html")).unwrap();
        let folder = Dir::open_ambient_dir(dir.path(), ambient_authority()).unwrap();
        replace_in(&folder, "index.html", b"page").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        let placed = dir.path().join("index.html");
        assert!(!placed.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(placed).unwrap(), "page");
    }
}
