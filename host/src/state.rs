//! The host's own folder: what this server keeps that no computer may see
//! or change (the key that signs recordings, the log of steps it sent).
//!
//! `COMPUTER_USE_STATE_DIR` when set; else `$XDG_STATE_HOME/computer-use-mcp`,
//! `~/.local/state/computer-use-mcp` (Linux and other Unix),
//! `~/Library/Application Support/computer-use-mcp` (macOS) or
//! `%LOCALAPPDATA%\computer-use-mcp` (Windows). Made owner-only on first use.

use std::io;
use std::path::{Path, PathBuf};

/// `COMPUTER_USE_STATE_DIR`.
pub const STATE_DIR_VAR: &str = "COMPUTER_USE_STATE_DIR";

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where the folder is, from this process's environment.
pub fn location() -> io::Result<PathBuf> {
    if let Some(dir) = var(STATE_DIR_VAR) {
        return Ok(dir);
    }
    let nowhere = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("no home folder is known for this server's own files: set {STATE_DIR_VAR} to a folder only this user can write"),
        )
    };
    let dir = if cfg!(windows) {
        var("LOCALAPPDATA").ok_or_else(nowhere)?
    } else if cfg!(target_os = "macos") {
        var("HOME")
            .ok_or_else(nowhere)?
            .join("Library/Application Support")
    } else if let Some(state) = var("XDG_STATE_HOME") {
        state
    } else {
        var("HOME").ok_or_else(nowhere)?.join(".local/state")
    };
    Ok(dir.join("computer-use-mcp"))
}

/// The folder `name` inside the state folder, made owner-only (0700) if
/// it is new.
pub fn folder(name: &str) -> io::Result<PathBuf> {
    let dir = location()?.join(name);
    make_private(&dir)?;
    Ok(dir)
}

#[cfg(unix)]
fn make_private(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn make_private(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Writes `bytes` as a new owner-only file `path`, whole or not at all: a
/// file that is there already wins (two processes making the same key
/// agree on the first). Answers whether this call wrote it.
pub fn create_once(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    // Unique within this process too: two tasks may make the same file at
    // once (two recordings signed before the key exists).
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = path.with_extension(format!("new-{}-{count}", std::process::id()));
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp)?;
        io::Write::write_all(&mut file, bytes)?;
        file.sync_all()?;
    }
    // A hard link fails when `path` exists, unlike a rename.
    let linked = std::fs::hard_link(&temp, path);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_writer_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        assert!(create_once(&path, b"first").unwrap());
        assert!(!create_once(&path, b"second").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }
}
