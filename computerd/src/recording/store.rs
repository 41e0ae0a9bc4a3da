//! One recording on disk, under `~/.local/share/computer-use/recordings/<id>/`:
//!
//! - `recording.json`: [`Meta`], rewritten (temp file + rename) when the
//!   recording starts, fills up and closes;
//! - `journal.jsonl`: one finished [`Step`] per line, appended as each call
//!   ends, so a computerd that dies keeps every step before it;
//! - `frames.jsonl`: one [`FrameLine`] per frame file written;
//! - `package/frames/<sha256>.<ext>`: each frame once, by content hash;
//! - `package/`: also `index.html`, `walkthrough.json`, `manifest.json` once
//!   built (see `package`).

use computer_protocol::recording::{FrameFile, RecordingId, Step};
use computer_protocol::SessionId;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What a recording is, beside its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub recording_id: RecordingId,
    pub task: String,
    pub session_id: SessionId,
    pub session_title: String,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    pub max_bytes: u64,
    pub full: bool,
}

/// A frame file, as `frames.jsonl` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameLine {
    pub path: String,
    #[serde(flatten)]
    pub file: FrameFile,
}

/// The folders and files of one recording.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    pub fn new(root: &Path, id: &RecordingId) -> Store {
        Store {
            dir: root.join(&id.0),
        }
    }

    /// Makes the recording's folders (owner only) and writes its meta.
    pub fn create(&self, meta: &Meta) -> std::io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.frames_dir())?;
        self.write_meta(meta)
    }

    pub fn package_dir(&self) -> PathBuf {
        self.dir.join("package")
    }

    pub fn frames_dir(&self) -> PathBuf {
        self.package_dir().join("frames")
    }

    pub fn read_meta(&self) -> std::io::Result<Meta> {
        let text = std::fs::read(self.dir.join("recording.json"))?;
        serde_json::from_slice(&text).map_err(std::io::Error::other)
    }

    pub fn write_meta(&self, meta: &Meta) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(meta).map_err(std::io::Error::other)?;
        write_atomically(&self.dir.join("recording.json"), &json)
    }

    /// Appends one line to `name`; returns the bytes written.
    pub fn append_line<T: Serialize>(&self, name: &str, value: &T) -> std::io::Result<u64> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(self.dir.join(name))?;
        file.write_all(&line)?;
        Ok(line.len() as u64)
    }

    /// The steps written so far; a torn last line (computerd died while
    /// writing it) is left out.
    pub fn read_steps(&self) -> std::io::Result<Vec<Step>> {
        read_lines(&self.dir.join("journal.jsonl"))
    }

    pub fn read_frames(&self) -> std::io::Result<Vec<FrameLine>> {
        read_lines(&self.dir.join("frames.jsonl"))
    }
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> std::io::Result<Vec<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// Writes `bytes` to a temporary file beside `path` and renames it over
/// `path`, so a reader sees the old file or the new one, never half.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(bytes)?;
    drop(file);
    std::fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_left_out() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::new(root.path(), &RecordingId("r1".into()));
        std::fs::create_dir_all(&store.dir).unwrap();
        store
            .append_line(
                "frames.jsonl",
                &FrameLine {
                    path: "frames/a.png".into(),
                    file: FrameFile {
                        width: 2,
                        height: 1,
                        bytes: 9,
                    },
                },
            )
            .unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(store.dir.join("frames.jsonl"))
            .unwrap();
        file.write_all(b"{\"path\":\"frames/b").unwrap();
        let frames = store.read_frames().unwrap();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].path, "frames/a.png");
        assert!(store.read_steps().unwrap().is_empty());
    }
}
