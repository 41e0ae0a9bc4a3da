//! The file that hands the VNC key to TigerVNC on Windows (`-passwd FILE`;
//! Windows viewers read no password from a link). It is readable by this
//! user only and lives just long enough for the viewer to read it: it goes
//! after [`LIFETIME`], or sooner when the server exits.
//!
//! Only the Windows opener writes these files; the module builds on every
//! system so that its tests run everywhere.
#![cfg_attr(not(windows), allow(dead_code))]

use parking_lot::Mutex;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempPath;

/// How long a password file may exist: TigerVNC reads it as it starts.
pub const LIFETIME: Duration = Duration::from_secs(15);

/// A file still on disk; taking the path out of it removes the file.
type Pending = Arc<Mutex<Option<TempPath>>>;

/// The password file could not be made or filled.
#[derive(Debug, thiserror::Error)]
#[error("could not write the VNC password file: {0}")]
pub struct PasswordFileError(#[from] std::io::Error);

/// The password files a process has written and not yet removed.
#[derive(Debug)]
pub struct PasswordFiles {
    pending: Mutex<Vec<Pending>>,
    /// [`LIFETIME`]; shorter in the tests, which check the removal
    /// without waiting the whole of it.
    lifetime: Duration,
}

/// This process's files, emptied when the server exits.
pub static PASSWORD_FILES: PasswordFiles = PasswordFiles::new();

impl PasswordFiles {
    pub const fn new() -> PasswordFiles {
        PasswordFiles::with_lifetime(LIFETIME)
    }

    const fn with_lifetime(lifetime: Duration) -> PasswordFiles {
        PasswordFiles {
            pending: Mutex::new(Vec::new()),
            lifetime,
        }
    }

    /// Writes the password file for `key` and returns its path; a thread
    /// removes it after its lifetime ([`LIFETIME`]) unless [`PasswordFiles::remove_all`]
    /// does first.
    pub fn write(&self, key: &str) -> Result<PathBuf, PasswordFileError> {
        // tempfile creates it for this user only (mode 0600 on Unix, the
        // user's private temp folder on Windows).
        let mut file = tempfile::Builder::new()
            .prefix("computer-use-vnc-")
            .tempfile()?;
        file.write_all(&super::vnc_password::obfuscate(key))?;
        let path = file.into_temp_path();
        let shown = path.to_path_buf();
        let pending: Pending = Arc::new(Mutex::new(Some(path)));
        {
            let mut list = self.pending.lock();
            list.retain(|p| p.lock().is_some());
            list.push(Arc::clone(&pending));
        }
        let lifetime = self.lifetime;
        std::thread::spawn(move || {
            std::thread::sleep(lifetime);
            remove(&pending);
        });
        Ok(shown)
    }

    /// Removes every file still on disk (the server is exiting).
    pub fn remove_all(&self) {
        for pending in self.pending.lock().drain(..) {
            remove(&pending);
        }
    }
}

fn remove(pending: &Pending) {
    // Dropping the TempPath deletes the file.
    pending.lock().take();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn holds_the_obfuscated_key() {
        let files = PasswordFiles::new();
        let path = files.write("ab3d5fgh").unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            super::super::vnc_password::obfuscate("ab3d5fgh")
        );
        files.remove_all();
    }

    #[cfg(unix)]
    #[test]
    fn only_its_user_may_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let files = PasswordFiles::new();
        let path = files.write("ab3d5fgh").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "mode {mode:o}");
        files.remove_all();
    }

    #[test]
    fn is_removed_after_its_lifetime() {
        // The real lifetime is 15 s; the removal is the same code with a
        // shorter one, so the fast loop does not wait 15 s on it.
        assert_eq!(LIFETIME, Duration::from_secs(15));
        assert_eq!(PasswordFiles::new().lifetime, LIFETIME);
        let lifetime = Duration::from_millis(400);
        let files = PasswordFiles::with_lifetime(lifetime);
        let written = Instant::now();
        let path = files.write("ab3d5fgh").unwrap();
        while path.exists() {
            assert!(
                written.elapsed() < lifetime + Duration::from_secs(5),
                "{} still exists after {:?}",
                path.display(),
                written.elapsed()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let gone_after = written.elapsed();
        assert!(
            gone_after >= lifetime,
            "removed after {gone_after:?}, before the viewer could read it"
        );
    }

    #[test]
    fn every_file_is_removed_when_the_server_exits() {
        let files = PasswordFiles::new();
        let paths = [
            files.write("first123").unwrap(),
            files.write("second12").unwrap(),
        ];
        assert!(paths.iter().all(|p| p.exists()));
        files.remove_all();
        for path in &paths {
            assert!(!path.exists(), "{} was left behind", path.display());
        }
        // The timers that fire later find nothing left to remove.
        files.remove_all();
    }
}
