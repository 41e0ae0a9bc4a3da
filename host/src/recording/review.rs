//! `computer-use-mcp review`: check a package against its manifest and open
//! its page; list the recordings kept in the computer; fetch one home (a
//! recording whose session ended without `stop_recording`, or one still
//! open when its host died).

use super::attest::{self, Attestation, SentLog, ATTESTATION_FILE};
use super::deliver::{deliver, destination, folder_name};
use super::package_file::{not_a_file, open_regular, read_regular, LIST_MAX_BYTES};
use super::render::{read_walkthrough, write_page};
use crate::client::ClientError;
use crate::computer::StartError;
use crate::transfer::{HostFiles, TransferError};
use computer_protocol::endpoints::{
    CreateSession, DeleteRecording, EndSession, ListRecordings, NoBody, PackageRecording,
};
use computer_protocol::recording::{Manifest, RecordingId, Walkthrough, MANIFEST_FORMAT};
use computer_protocol::{CreateSessionRequest, InvalidInput, OwnerId};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(60);

pub const USAGE: &str =
    "usage: computer-use-mcp review [--unattested] PATH | --list | --fetch ID [PATH] | --delete ID";

/// Files of a package that `manifest.json` does not vouch for: itself, the
/// host's attestation, and the page the host renders again from
/// `walkthrough.json` (the computer's copy is never opened).
const NOT_IN_MANIFEST: [&str; 3] = ["manifest.json", ATTESTATION_FILE, "index.html"];

/// What is wrong with a package, file by file.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    Missing(String),
    Changed {
        path: String,
        why: String,
    },
    Unlisted(String),
    /// The package differs from what the host sent and saw.
    Unattested(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing(path) => write!(f, "missing: {path}"),
            Problem::Changed { path, why } => write!(f, "changed: {path} ({why})"),
            Problem::Unlisted(path) => write!(f, "not in the manifest: {path}"),
            Problem::Unattested(why) => write!(f, "not what the host saw: {why}"),
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
    #[error("`review` takes a package folder, `--list`, `--fetch ID [PATH]` or `--delete ID`\n{usage}", usage = USAGE)]
    Usage,
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{}", mismatch(dir, problems))]
    Mismatch {
        dir: PathBuf,
        problems: Vec<Problem>,
    },
    /// No `host-attestation.json`: nothing but the computer vouches for it.
    #[error("{} carries no host attestation ({ATTESTATION_FILE}): nothing but the computer itself vouches that its steps and frames are what the agent did and saw. Packages made before computer-use-mcp 0.9, and ones fetched by a host that did not record them, have none. To read it anyway as the computer's own account: computer-use-mcp review --unattested {}", dir.display(), dir.display())]
    Unattested { dir: PathBuf },
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
        "{} does not match what was recorded; {} problem(s):\n",
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
    let text = match read_regular(&manifest_path, LIST_MAX_BYTES) {
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
    let mut checked = 0;
    for entry in &manifest.files {
        listed.insert(entry.path.clone());
        if NOT_IN_MANIFEST.contains(&entry.path.as_str()) {
            continue;
        }
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
        checked += 1;
        match hash_regular(dir, &entry.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                problems.push(Problem::Missing(entry.path.clone()))
            }
            Err(e) => problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: e.to_string(),
            }),
            Ok((size, _)) if size != entry.size => problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: format!("{size} bytes, the manifest says {}", entry.size),
            }),
            Ok((_, sha)) if sha != entry.sha256 => problems.push(Problem::Changed {
                path: entry.path.clone(),
                why: "its sha256 differs from the manifest's".into(),
            }),
            Ok(_) => {}
        }
    }
    for path in files_in(dir) {
        if !NOT_IN_MANIFEST.contains(&path.as_str()) && !listed.contains(&path) {
            problems.push(Problem::Unlisted(path));
        }
    }
    if problems.is_empty() {
        Ok(Ok(checked))
    } else {
        Ok(Err(problems))
    }
}

/// Every entry beneath `dir` that is not a folder (links included, never
/// followed), as `/`-separated relative paths.
fn files_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push((entry.path(), format!("{path}/"))),
                Ok(_) => out.push(path),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// Size and sha256 of the package's file `relative`, read in pieces; no
/// folder on the way may be a link.
fn hash_regular(dir: &Path, relative: &str) -> io::Result<(u64, String)> {
    let mut at = dir.to_path_buf();
    let parts: Vec<&str> = relative.split('/').collect();
    for folder in &parts[..parts.len() - 1] {
        at.push(folder);
        if !std::fs::symlink_metadata(&at)?.is_dir() {
            return Err(not_a_file());
        }
    }
    at.push(parts[parts.len() - 1]);
    let mut file = open_regular(&at)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = io::Read::read(&mut file, &mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    Ok((size, attest::hex(&hasher.finalize())))
}

/// Checks the package against what this server sent and saw: its
/// attestation's signature, the manifest it received, and each step and
/// frame. Answers notes for a clean package.
fn check_attestation(
    dir: &Path,
    walkthrough: &Walkthrough,
    unattested_ok: bool,
) -> Result<Vec<String>, ReviewError> {
    let mismatch = |problems: Vec<Problem>| ReviewError::Mismatch {
        dir: dir.to_path_buf(),
        problems,
    };
    let unattested = |why: String| mismatch(vec![Problem::Unattested(why)]);
    let bytes = match read_regular(&dir.join(ATTESTATION_FILE), LIST_MAX_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound && unattested_ok => {
            return Ok(vec![format!(
                "UNATTESTED: no {ATTESTATION_FILE}; what follows is the computer's own account"
            )])
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ReviewError::Unattested {
                dir: dir.to_path_buf(),
            })
        }
        Err(e) => return Err(unattested(format!("{ATTESTATION_FILE}: {e}"))),
    };
    let attestation: Attestation = serde_json::from_slice(&bytes)
        .map_err(|e| unattested(format!("{ATTESTATION_FILE} cannot be read ({e})")))?;
    let signed = attest::signed_here(&attestation)
        .map_err(|e| unattested(format!("this server's recording key cannot be read ({e})")))?;
    if attestation.format != attest::ATTESTATION_FORMAT || !signed {
        return Err(unattested(format!(
            "{ATTESTATION_FILE} does not verify with this server's key: it was edited, or another server (or another {}) made it; review the package where it was recorded",
            crate::state::STATE_DIR_VAR
        )));
    }
    let mut problems = Vec::new();
    if attestation.recording_id != walkthrough.recording_id {
        problems.push(Problem::Unattested(format!(
            "the attestation is recording `{}`'s, the walkthrough says `{}`",
            attestation.recording_id, walkthrough.recording_id
        )));
    }
    let manifest = read_regular(&dir.join("manifest.json"), LIST_MAX_BYTES)
        .map_err(|e| unattested(format!("manifest.json: {e}")))?;
    if attest::hex(&Sha256::digest(&manifest)) != attestation.manifest_sha256 {
        problems.push(Problem::Unattested(
            "manifest.json is not the one the host received with the package".into(),
        ));
    }
    let frames: Vec<String> = files_in(dir)
        .into_iter()
        .filter(|p| p.starts_with("frames/"))
        .collect();
    let compared = attest::compare(
        &attestation.steps,
        &attestation.frames,
        walkthrough,
        &frames,
    );
    problems.extend(compared.problems.into_iter().map(Problem::Unattested));
    if !problems.is_empty() {
        return Err(mismatch(problems));
    }
    let mut notes = vec![format!(
        "attested: its {} step(s) and their frames are the ones this server sent and returned to the agent (page titles, window names and network lines are the computer's own account)",
        walkthrough.steps.len()
    )];
    notes.extend(compared.notes);
    Ok(notes)
}

/// Runs `review` with its arguments; returns the process's exit code.
pub async fn run(args: &[String]) -> i32 {
    let outcome = match args {
        [flag] if flag == "--list" => list().await,
        [flag, id] if flag == "--fetch" => fetch(id, None).await,
        [flag, id, path] if flag == "--fetch" => fetch(id, Some(path)).await,
        [flag, id] if flag == "--delete" => delete(id).await,
        [path] if !path.starts_with('-') => check_and_open(Path::new(path), false),
        [flag, path] if flag == "--unattested" => check_and_open(Path::new(path), true),
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

/// Checks the package, writes its page again from `walkthrough.json` with
/// the host's template, and opens that in the person's browser (as the
/// viewer is opened; `COMPUTER_USE_OPEN=none` leaves it closed).
fn check_and_open(dir: &Path, unattested_ok: bool) -> Result<String, ReviewError> {
    let checked = match verify(dir)? {
        Ok(n) => n,
        Err(problems) => {
            return Err(ReviewError::Mismatch {
                dir: dir.to_path_buf(),
                problems,
            })
        }
    };
    // Read once: checked against the attestation, then rendered.
    let folder = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority());
    let walkthrough = folder
        .as_ref()
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))
        .and_then(read_walkthrough)
        .map_err(|e| ReviewError::Mismatch {
            dir: dir.to_path_buf(),
            problems: vec![Problem::Unattested(e.to_string())],
        })?;
    let notes = check_attestation(dir, &walkthrough, unattested_ok)?;
    let index_path = dir.join("index.html");
    let written = folder.and_then(|folder| write_page(&folder, &walkthrough));
    let index = match written.and_then(|()| std::fs::canonicalize(&index_path)) {
        Ok(index) => index,
        Err(source) => {
            return Err(ReviewError::NoIndex {
                path: index_path,
                source,
            })
        }
    };
    let mut text = format!(
        "{}: all {checked} files match the manifest\n",
        dir.display()
    );
    for note in notes {
        let _ = writeln!(text, "{note}");
    }
    let _ = writeln!(text, "open {}", index.display());
    let open = std::env::var(crate::settings::OPEN).unwrap_or_default();
    if open.trim() != "none" {
        // Percent-encoded: a `#` or `?` in a folder name is part of the
        // path, not the start of a fragment that opens another file.
        let opened = match url::Url::from_file_path(&index) {
            Ok(url) => crate::open::open_url(url.as_str()).map_err(|e| e.to_string()),
            Err(()) => Err("the path is not absolute".to_string()),
        };
        if let Err(e) = opened {
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
    text.push_str("fetch one with: computer-use-mcp review --fetch ID [PATH]; delete one with: review --delete ID\n");
    Ok(text)
}

/// Deletes ended recording `id` in the computer (a package already brought
/// home stays).
async fn delete(id: &str) -> Result<String, ReviewError> {
    let id = RecordingId::parse(id)?;
    let started = crate::computer::start(&crate::tenant::Tenant::local()).await?;
    let deleted = started
        .client
        .send::<DeleteRecording>(
            &id,
            &NoBody {},
            API_DEADLINE,
            "it may be deleted; `review --list` tells",
        )
        .await?;
    Ok(format!(
        "deleted recording {} from computer `{}` ({})\n",
        deleted.recording_id,
        started.container,
        computer_protocol::archive::human_bytes(deleted.bytes)
    ))
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
        resume: None,
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
    // The host that recorded it logged each step: sign that into the copy.
    let log = SentLog::of(&started.container, &package.recording_id).ok();
    let delivered = deliver(
        client,
        &session,
        &package,
        &folder,
        &host_files,
        log.as_ref(),
    )
    .await;
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
        std::fs::write(dir.join("walkthrough.json"), "data").unwrap();
        std::fs::write(dir.join("frames/a.png"), "png").unwrap();
        let entry = |path: &str, bytes: &[u8]| ManifestEntry {
            path: path.into(),
            size: bytes.len() as u64,
            sha256: attest::hex(&Sha256::digest(bytes)),
        };
        let manifest = Manifest {
            format: MANIFEST_FORMAT.into(),
            files: vec![
                entry("frames/a.png", b"png"),
                entry("walkthrough.json", b"data"),
            ],
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
        std::fs::write(dir.path().join("walkthrough.json"), "datA").unwrap();
        // The page is the host's to write again: never checked, never listed.
        std::fs::write(dir.path().join("index.html"), "any page").unwrap();
        std::fs::remove_file(dir.path().join("frames/a.png")).unwrap();
        std::fs::write(dir.path().join("extra.js"), "x").unwrap();
        let problems = verify(dir.path()).unwrap().unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            shown.contains(&"missing: frames/a.png".to_string()),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|p| p.starts_with("changed: walkthrough.json")),
            "{shown:?}"
        );
        assert!(
            shown.contains(&"not in the manifest: extra.js".to_string()),
            "{shown:?}"
        );
    }

    #[test]
    fn a_listed_link_or_fifo_is_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        package(dir.path());
        std::fs::remove_file(dir.path().join("frames/a.png")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("frames/a.png")).unwrap();
        std::fs::remove_file(dir.path().join("walkthrough.json")).unwrap();
        let fifo =
            std::ffi::CString::new(dir.path().join("walkthrough.json").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let problems = verify(dir.path()).unwrap().unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        for p in problems {
            assert!(
                p.to_string().contains("a link, folder or special file"),
                "{p}"
            );
        }
        // A linked folder on the way is not followed either.
        let outside = tempfile::tempdir().unwrap();
        std::fs::remove_file(dir.path().join("frames/a.png")).unwrap();
        std::fs::remove_dir(dir.path().join("frames")).unwrap();
        std::fs::write(outside.path().join("a.png"), "png").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("frames")).unwrap();
        let problems = verify(dir.path()).unwrap().unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().starts_with("changed: frames/a.png")),
            "{problems:?}"
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
            "/p does not match what was recorded; 2 problem(s):\n  missing: frames/a.png\n  not in the manifest: extra.js\nthe package was changed after it was made: do not trust what it shows"
        );
        assert_eq!(
            ReviewError::Usage.to_string(),
            format!("`review` takes a package folder, `--list`, `--fetch ID [PATH]` or `--delete ID`\n{USAGE}")
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
