//! Where a recording's package goes on the host, and copying it there.
//!
//! The folder is checked before the recording is stopped (`destination`),
//! so a bad `host_path` leaves the recording open and nothing written. The
//! copy itself is `file_transfer`'s download of the package folder: the
//! same tar rules, unpacked under a temporary name and renamed at the end.

use super::attest::SentLog;
use crate::client::ComputerdClient;
use crate::transfer::{self, HostFiles, StallLimit, TransferError, TransferRequest};
use computer_protocol::archive::Progress;
use computer_protocol::recording::RecordingPackage;
use computer_protocol::{SessionId, TransferDirection};
use schemars::JsonSchema;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The default folder, beneath the working folder (or the transfer root).
pub const EVIDENCE_DIR: &str = "computer-use-evidence";

/// A package on the host.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Delivered {
    pub recording_id: String,
    /// The package's folder.
    pub path: String,
    /// Its `index.html`, to open in a browser.
    pub index: String,
    pub steps: u32,
    pub bytes: u64,
    /// The recording reached its size limit and stopped growing.
    pub full: bool,
}

/// `<task>-<UTC start>`: the task in lowercase letters, digits and `-`, and
/// the start as `20261201T235959Z`.
pub fn folder_name(task: &str, started_at: &str) -> String {
    let mut name = String::new();
    for c in task.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name: String = name.trim_matches('-').chars().take(48).collect();
    let name = name.trim_end_matches('-');
    let name = if name.is_empty() { "recording" } else { name };
    let digits: String = started_at
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let stamp = if digits.len() == 14 {
        format!("{}T{}Z", &digits[..8], &digits[8..])
    } else {
        digits
    };
    format!("{name}-{stamp}")
}

/// The package's folder for `host_path` (none: the default), checked:
/// beneath the allowed host files, not a file, not there yet, and in a
/// folder this process can write.
pub fn destination(
    host_files: &HostFiles,
    host_path: Option<&str>,
    name: &str,
) -> Result<PathBuf, TransferError> {
    let typed = host_path.unwrap_or(EVIDENCE_DIR);
    let resolved = host_files.resolve(typed)?;
    let folder = match std::fs::metadata(&resolved) {
        Ok(meta) if meta.is_dir() => resolved.join(name),
        Ok(_) => {
            return Err(TransferError::Evidence(format!(
                "`host_path` `{typed}` is a file: give a folder (the package goes inside it as `{name}/`) or a new folder's path; the recording goes on"
            )))
        }
        Err(_) if host_path.is_none() => resolved.join(name),
        Err(_) => resolved,
    };
    if folder.exists() {
        return Err(TransferError::Evidence(format!(
            "`host_path`: {} exists already: give another folder; the recording goes on",
            folder.display()
        )));
    }
    check_writable(&folder, typed)?;
    Ok(folder)
}

/// The nearest folder that exists above `folder` takes a new file.
fn check_writable(folder: &Path, typed: &str) -> Result<(), TransferError> {
    let existing = folder
        .ancestors()
        .skip(1)
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        return Err(TransferError::Evidence(format!(
            "`host_path` `{typed}` cannot be written: {} is a file, not a folder; give a folder this server can write; the recording goes on",
            existing.display()
        )));
    }
    let probe = existing.join(format!(".computer-use-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(TransferError::Evidence(format!(
            "`host_path` `{typed}` cannot be written: {} refused a new file ({e}); give a folder this server can write; the recording goes on",
            existing.display()
        ))),
    }
}

/// Copies the package from the computer to `folder`, writes its page from
/// `walkthrough.json` with the host's template, and signs what `log` holds
/// into it (when the host logged this recording).
pub async fn deliver(
    client: &ComputerdClient,
    session: &SessionId,
    package: &RecordingPackage,
    folder: &Path,
    host_files: &HostFiles,
    log: Option<&SentLog>,
) -> Result<Delivered, TransferError> {
    let request = TransferRequest {
        direction: TransferDirection::FromComputer,
        host_path: folder.display().to_string(),
        computer_path: package.dir.clone(),
        overwrite: false,
    };
    let env = crate::settings::process_env();
    transfer::run(
        client,
        session,
        &request,
        host_files,
        Arc::new(Progress::default()),
        StallLimit::from_env(&env),
    )
    .await?;
    let unusable = |e: std::io::Error| {
        TransferError::Evidence(format!(
            "the package reached {} but cannot be finished there ({e}); do not trust what it shows",
            folder.display()
        ))
    };
    // Finished through the folder's handle, opened as the copy's files
    // were: a folder swapped for a link since cannot lead the page out.
    let handle = host_files.open_folder(&request.host_path)?;
    let walkthrough = super::render::read_walkthrough(&handle).map_err(unusable)?;
    super::render::write_page(&handle, &walkthrough).map_err(unusable)?;
    if let Some(log) = log.filter(|l| l.exists()) {
        super::attest::attest(&handle, &package.recording_id, log).map_err(unusable)?;
    }
    Ok(Delivered {
        recording_id: package.recording_id.0.clone(),
        path: folder.display().to_string(),
        index: folder.join("index.html").display().to_string(),
        steps: package.steps,
        bytes: package.bytes,
        full: package.full,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_plain_and_sortable() {
        assert_eq!(
            folder_name("Fix the login (2nd try)!", "2026-12-01T23:59:59.123Z"),
            "fix-the-login-2nd-try-20261201T235959Z"
        );
        assert_eq!(
            folder_name("日本", "2026-12-01T00:00:00Z"),
            "recording-20261201T000000Z"
        );
    }

    #[test]
    fn a_file_or_an_existing_folder_is_refused_before_anything() {
        let dir = tempfile::tempdir().unwrap();
        let files = HostFiles::Beneath(
            crate::transfer::Root::open(&dir.path().display().to_string()).unwrap(),
        );
        std::fs::write(dir.path().join("a-file"), "x").unwrap();
        let e = destination(&files, Some("a-file"), "t-1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a file"), "{e}");
        let inside = destination(&files, None, "t-1").unwrap();
        assert!(
            inside.ends_with("computer-use-evidence/t-1"),
            "{}",
            inside.display()
        );
        std::fs::create_dir_all(dir.path().join("out/t-1")).unwrap();
        let e = destination(&files, Some("out"), "t-1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exists already"), "{e}");
        assert!(destination(&files, Some("../x"), "t-1").is_err());
        // Beneath a root the lookup itself refuses; anywhere, the check does.
        assert!(destination(&files, Some("a-file/sub"), "t-1").is_err());
        let under_a_file = dir.path().join("a-file/sub").display().to_string();
        let e = destination(&HostFiles::Anywhere, Some(&under_a_file), "t-1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot be written") && e.contains("is a file"),
            "{e}"
        );
    }
}
