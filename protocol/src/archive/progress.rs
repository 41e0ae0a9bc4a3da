//! Counts of a transfer as it runs, shared between the thread that moves
//! the data and whoever reports progress.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Running counts; cheap to update from the copying thread and to read from
/// another. Relaxed ordering is enough: each count is read on its own.
#[derive(Debug, Default)]
pub struct Progress {
    files: AtomicU64,
    folders: AtomicU64,
    symlinks: AtomicU64,
    bytes: AtomicU64,
}

/// The counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Done {
    pub files: u64,
    pub folders: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

impl Progress {
    pub fn add_file(&self) {
        self.files.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_folder(&self) {
        self.folders.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_symlink(&self) {
        self.symlinks.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn done(&self) -> Done {
        Done {
            files: self.files.load(Ordering::Relaxed),
            folders: self.folders.load(Ordering::Relaxed),
            symlinks: self.symlinks.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

impl fmt::Display for Done {
    /// How far a transfer got, for an error that stops it partway.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Done::default() {
            return f.write_str("nothing had been written yet");
        }
        write!(
            f,
            "{} {}, {} {} and {} {} ({}) were written before it and stay in place",
            self.files,
            plural(self.files, "file", "files"),
            self.folders,
            plural(self.folders, "folder", "folders"),
            self.symlinks,
            plural(self.symlinks, "symlink", "symlinks"),
            human_bytes(self.bytes)
        )
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// `512 bytes`, `1.5 KB`, `3.2 GB`: powers of 1000, as disks are sold.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if bytes < 1000 {
        return format!("{bytes} {}", plural(bytes, "byte", "bytes"));
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_people_say_them() {
        assert_eq!(human_bytes(0), "0 bytes");
        assert_eq!(human_bytes(1), "1 byte");
        assert_eq!(human_bytes(999), "999 bytes");
        assert_eq!(human_bytes(1500), "1.5 KB");
        assert_eq!(human_bytes(1_073_741_824), "1.1 GB");
    }

    #[test]
    fn done_says_how_far_it_got() {
        assert_eq!(Done::default().to_string(), "nothing had been written yet");
        let p = Progress::default();
        p.add_file();
        p.add_folder();
        p.add_folder();
        p.add_bytes(2048);
        assert_eq!(
            p.done().to_string(),
            "1 file, 2 folders and 0 symlinks (2.0 KB) were written before it and stay in place"
        );
    }
}
