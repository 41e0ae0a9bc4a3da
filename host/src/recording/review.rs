//! `computer-use-mcp review`: check a package against its manifest and open
//! its page; list the recordings kept in the computer; fetch one home (a
//! recording whose session ended without `stop_recording`, or one still
//! open when its host died).

use super::deliver::{deliver, destination, folder_name};
use crate::client::ClientError;
use crate::computer::StartError;
use crate::transfer::{HostFiles, TransferError};
use computer_protocol::endpoints::{
    CreateSession, EndSession, ListRecordings, NoBody, PackageRecording,
};
use computer_protocol::recording::{Manifest, RecordingId, MANIFEST_FORMAT};
use computer_protocol::{CreateSessionRequest, InvalidInput, OwnerId};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(60);

pub const USAGE: &str = "usage: computer-use-mcp review PATH | --list | --fetch ID [PATH]";

/// What is wrong with a package, file by file.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    Missing(String),
    Changed { path: String, why: String },
    Unlisted(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing(path) => write!(f, "missing: {path}"),
            Problem::Changed { path, why } => write!(f, "changed: {path} ({why})"),
            Problem::Unlisted(path) => write!(f, "not in the manifest: {path}"),
        }
    }
}

/// Why a folder's `manifest.json` cannot be used to check it.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{} cannot be read ({source}): give the folder of a package that stop_recording or `review --fetch` wrote", path.display())]
    Unreadable { path: PathBuf, source: io::Error },
    #[error("{} is not a manifest ({source})", path.display())]
    NotAManifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} has format `{format}`; this computer-use-mcp reads `{readable}`", path.display(), readable = MANIFEST_FORMAT)]
    OtherFormat { path: PathBuf, format: String },
}

/// Why `review` did not do what it was asked; printed after
/// `computer-use-mcp review: `, with exit code 1.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("`review` takes a package folder, `--list`, or `--fetch ID [PATH]`\n{usage}", usage = USAGE)]
    Usage,
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{}", mismatch(dir, problems))]
    Mismatch {
        dir: PathBuf,
        problems: Vec<Problem>,
    },
    #[error("{}: {source}", path.display())]
    NoIndex { path: PathBuf, source: io::Error },
    /// `--fetch`'s recording id is not one.
    #[error(transparent)]
    RecordingId(#[from] InvalidInput),
    #[error(transparent)]
    Start(#[from] StartError),
    #[error(transparent)]
    Computer(#[from] ClientError),
    /// The package could not be brought to this machine.
    #[error(transparent)]
    Transfer(#[from] TransferError),
}

fn mismatch(dir: &Path, problems: &[Problem]) -> String {
    let mut text = format!(
        "{} does not match its manifest; {} file(s) differ:\n",
        dir.display(),
        problems.len()
    );
    for p in problems {
        let _ = writeln!(text, "  {p}");
    }
    text.push_str("the package was changed after it was made: do not trust what it shows");
    text
}

/// Checks every file of the package in `dir` against `manifest.json`.
/// `Ok` holds how many files were checked.
pub fn verify(dir: &Path) -> Result<Result<usize, Vec<Problem>>, ManifestError> {
    let manifest_path = dir.join("manifest.json");
    let text = match std::fs::read(&manifest_path) {
        Ok(text) => text,
        Err(source) => {
            return Err(ManifestError::Unreadable {
                path: manifest_path,
                source,
            })
        }
    };
    let manifest: Manifest = match serde_json::from_slice(&text) {
        Ok(manifest) => manifest,
        Err(source) => {
            return Err(ManifestError::NotAManifest {
                path: manifest_path,
                source,
            })
        }
    };
    if manifest.format != MANIFEST_FORMAT {
        return Err(ManifestError::OtherFormat {
            path: manifest_path,
            format: manifest.format,
        });
    }
    let mut problems = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    for entry in &manifest.files {
        listed.insert(entry.path.clone());
        // A manifest names files inside the package, nothing else.
        if entry
            .path
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
        {
            problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: "the manifest names a path outside the package".into(),
            });
            continue;
        }
        match std::fs::read(dir.join(&entry.path)) {
            Err(_) => problems.push(Problem::Missing(entry.path.clone())),
            Ok(bytes) if bytes.len() as u64 != entry.size => problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: format!("{} bytes, the manifest says {}", bytes.len(), entry.size),
            }),
            Ok(bytes) if sha256_hex(&bytes) != entry.sha256 => problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: "its sha256 differs from the manifest's".into(),
            }),
            Ok(_) => {}
        }
    }
    let mut present = Vec::new();
    files_in(dir, "", &mut present);
    for path in present {
        if path != "manifest.json" && !listed.contains(&path) {
            problems.push(Problem::Unlisted(path));
        }
    }
    if problems.is_empty() {
        Ok(Ok(manifest.files.len()))
    } else {
        Ok(Err(problems))
    }
}

fn files_in(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
        match entry.file_type() {
            Ok(t) if t.is_dir() => files_in(&entry.path(), &format!("{path}/"), out),
            Ok(_) => out.push(path),
            Err(_) => {}
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `review` with its arguments; returns the process's exit code.
pub async fn run(args: &[String]) -> i32 {
    let outcome = match args {
        [flag] if flag == "--list" => list().await,
        [flag, id] if flag == "--fetch" => fetch(id, None).await,
        [flag, id, path] if flag == "--fetch" => fetch(id, Some(path)).await,
        [path] if !path.starts_with('-') => check_and_open(Path::new(path)),
        _ => Err(ReviewError::Usage),
    };
    match outcome {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("computer-use-mcp review: {e}");
            1
        }
    }
}

/// Checks the package and opens its page in the person's browser (as the
/// viewer is opened; `COMPUTER_USE_OPEN=none` leaves it closed).
fn check_and_open(dir: &Path) -> Result<String, ReviewError> {
    let checked = match verify(dir)? {
        Ok(n) => n,
        Err(problems) => {
            return Err(ReviewError::Mismatch {
                dir: dir.to_path_buf(),
                problems,
            })
        }
    };
    let index_path = dir.join("index.html");
    let index = match std::fs::canonicalize(&index_path) {
        Ok(index) => index,
        Err(source) => {
            return Err(ReviewError::NoIndex {
                path: index_path,
                source,
            })
        }
    };
    let mut text = format!(
        "{}: all {checked} files match the manifest\nopen {}\n",
        dir.display(),
        index.display()
    );
    let open = std::env::var(crate::settings::OPEN).unwrap_or_default();
    if open.trim() != "none" {
        let url = format!("file://{}", index.display());
        if let Err(e) = crate::open::open_url(&url) {
            let _ = writeln!(
                text,
                "could not open a browser ({e}); open the file above yourself"
            );
        }
    }
    Ok(text)
}

async fn list() -> Result<String, ReviewError> {
    let started = crate::computer::start(&crate::tenant::Tenant::local()).await?;
    let listed = started
        .client
        .send::<ListRecordings>(&(), &NoBody {}, API_DEADLINE, "nothing")
        .await?;
    if listed.recordings.is_empty() {
        return Ok(format!(
            "no recordings in computer `{}`\n",
            started.container
        ));
    }
    let mut text = String::new();
    for r in listed.recordings {
        let state = if r.recording {
            "recording".to_string()
        } else {
            format!("ended {}", r.ended_at.as_deref().unwrap_or("?"))
        };
        let _ = writeln!(
            text,
            "{}  {}  {} steps  {}  started {}  {}  session \"{}\"",
            r.recording_id,
            r.task,
            r.steps,
            computer_protocol::archive::human_bytes(r.bytes),
            r.started_at,
            state,
            r.session_title
        );
    }
    text.push_str("fetch one with: computer-use-mcp review --fetch ID [PATH]\n");
    Ok(text)
}

/// Builds recording `id`'s package in the computer and copies it home,
/// through a short session of its own.
async fn fetch(id: &str, path: Option<&str>) -> Result<String, ReviewError> {
    let id = RecordingId::parse(id)?;
    let started = crate::computer::start(&crate::tenant::Tenant::local()).await?;
    let client = &started.client;
    let package = client
        .send::<PackageRecording>(&id, &NoBody {}, API_DEADLINE, "nothing")
        .await?;
    let host_files = HostFiles::Anywhere;
    let folder = destination(
        &host_files,
        path,
        &folder_name(&package.task, &package.started_at),
    )?;
    let request = CreateSessionRequest {
        title: format!("review --fetch {id}"),
        owner: OwnerId(format!("review-{}", std::process::id())),
        settings: Default::default(),
    };
    let session = client
        .send::<CreateSession>(
            &(),
            &request,
            API_DEADLINE,
            "a session may have started; it ends by itself within a minute",
        )
        .await?
        .session_id;
    let delivered = deliver(client, &session, &package, &folder, &host_files).await;
    let _ = client
        .send::<EndSession>(&session, &NoBody {}, API_DEADLINE, "nothing")
        .await;
    let delivered = delivered?;
    Ok(format!(
        "recording {} ({} steps) is at {}\nopen {}\n",
        delivered.recording_id, delivered.steps, delivered.path, delivered.index
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::recording::ManifestEntry;

    fn package(dir: &Path) {
        std::fs::create_dir_all(dir.join("frames")).unwrap();
        std::fs::write(dir.join("index.html"), "page").unwrap();
        std::fs::write(dir.join("frames/a.png"), "png").unwrap();
        let entry = |path: &str, bytes: &[u8]| ManifestEntry {
            path: path.into(),
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        };
        let manifest = Manifest {
            format: MANIFEST_FORMAT.into(),
            files: vec![entry("frames/a.png", b"png"), entry("index.html", b"page")],
        };
        std::fs::write(
            dir.join("manifest.json"),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn every_missing_changed_or_added_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path());
        assert_eq!(verify(dir.path()).unwrap(), Ok(2));
        std::fs::write(dir.path().join("index.html"), "pagE").unwrap();
        std::fs::remove_file(dir.path().join("frames/a.png")).unwrap();
        std::fs::write(dir.path().join("extra.js"), "x").unwrap();
        let problems = verify(dir.path()).unwrap().unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            shown.contains(&"missing: frames/a.png".to_string()),
            "{shown:?}"
        );
        assert!(
            shown.iter().any(|p| p.starts_with("changed: index.html")),
            "{shown:?}"
        );
        assert!(
            shown.contains(&"not in the manifest: extra.js".to_string()),
            "{shown:?}"
        );
    }

    #[test]
    fn a_changed_package_lists_what_differs_and_says_not_to_trust_it() {
        let e = ReviewError::Mismatch {
            dir: PathBuf::from("/p"),
            problems: vec![
                Problem::Missing("frames/a.png".into()),
                Problem::Unlisted("extra.js".into()),
            ],
        };
        assert_eq!(
            e.to_string(),
            "/p does not match its manifest; 2 file(s) differ:\n  missing: frames/a.png\n  not in the manifest: extra.js\nthe package was changed after it was made: do not trust what it shows"
        );
        assert_eq!(
            ReviewError::Usage.to_string(),
            format!("`review` takes a package folder, `--list`, or `--fetch ID [PATH]`\n{USAGE}")
        );
    }

    #[test]
    fn a_folder_without_a_manifest_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = verify(dir.path()).unwrap_err();
        assert!(matches!(e, ManifestError::Unreadable { .. }), "{e:?}");
        assert!(
            e.to_string().contains("manifest.json cannot be read"),
            "{e}"
        );
    }
}
