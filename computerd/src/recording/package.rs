//! Builds a recording's package from what is on disk: `walkthrough.json`
//! (the steps as data), `index.html` (the page, the same data inlined so it
//! opens from disk with no server), and `manifest.json` (sha256 and size of
//! every other file). Works on a closed recording and on one still open (up
//! to its last step), so a recording whose host died can still be fetched.

use super::store::{write_atomically, Store};
use computer_protocol::recording::{
    walkthrough_page, Manifest, ManifestEntry, RecordingPackage, Walkthrough, MANIFEST_FORMAT,
    WALKTHROUGH_FORMAT,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Builds (or builds again) the package of the recording in `store`.
pub fn build(store: &Store) -> std::io::Result<RecordingPackage> {
    let meta = store.read_meta()?;
    let steps = store.read_steps()?;
    // A frame a secret step showed was removed after it was listed.
    let frames: BTreeMap<_, _> = store
        .read_frames()?
        .into_iter()
        .filter(|f| store.package_dir().join(&f.path).is_file())
        .map(|f| (f.path, f.file))
        .collect();
    let walkthrough = Walkthrough {
        format: WALKTHROUGH_FORMAT.to_string(),
        recording_id: meta.recording_id.clone(),
        task: meta.task.clone(),
        session_id: meta.session_id.clone(),
        session_title: meta.session_title.clone(),
        started_at: meta.started_at.clone(),
        ended_at: meta
            .ended_at
            .clone()
            .unwrap_or_else(crate::clock::now_rfc3339),
        full: meta.full,
        max_bytes: meta.max_bytes,
        steps,
        frames,
    };
    let dir = store.package_dir();
    let json = serde_json::to_string_pretty(&walkthrough).map_err(std::io::Error::other)?;
    write_atomically(&dir.join("walkthrough.json"), json.as_bytes())?;
    write_atomically(&dir.join("index.html"), walkthrough_page(&json).as_bytes())?;
    let manifest = manifest(&dir)?;
    let bytes = manifest.files.iter().map(|f| f.size).sum::<u64>();
    let json = serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?;
    write_atomically(&dir.join("manifest.json"), &json)?;
    Ok(RecordingPackage {
        recording_id: meta.recording_id,
        task: meta.task,
        started_at: meta.started_at,
        dir: dir.display().to_string(),
        steps: walkthrough.steps.len() as u32,
        bytes: bytes + json.len() as u64,
        full: meta.full,
    })
}

/// Every file of the package but the manifest, sorted by path.
fn manifest(dir: &Path) -> std::io::Result<Manifest> {
    let mut files = Vec::new();
    collect(dir, "", &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Manifest {
        format: MANIFEST_FORMAT.to_string(),
        files,
    })
}

fn collect(dir: &Path, prefix: &str, out: &mut Vec<ManifestEntry>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Temporary files of a write in progress, and the manifest itself.
        if name.starts_with('.') || (prefix.is_empty() && name == "manifest.json") {
            continue;
        }
        let path = format!("{prefix}{name}");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(&entry.path(), &format!("{path}/"), out)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(entry.path())?;
            out.push(ManifestEntry {
                path,
                size: bytes.len() as u64,
                sha256: sha256_hex(&bytes),
            });
        }
    }
    Ok(())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
