//! Recordings of what agents did: kept inside the computer as they happen,
//! so a host that dies loses nothing, and packaged as a walkthrough a
//! person opens from disk.
//!
//! # Layout
//! - `recorder`: one open recording: the handle a session holds and the
//!   writer task that owns its files.
//! - `store`: a recording's files and folders on disk.
//! - `summary`: each step's kind and one-line summary.
//! - `package`: builds `index.html`, `walkthrough.json` and `manifest.json`
//!   from what is on disk.
//!
//! Data flows: the host starts a recording on a session; every frame the
//! session captures goes to the recorder (`desktop::capture_observation`),
//! every tool call arrives as a step from the host; the writer appends both
//! to disk. Stopping the recording, or the session ending any way, closes it
//! and builds the package, which the host copies home with `file_transfer`'s
//! download.

mod package;
mod recorder;
mod store;
mod summary;

pub use recorder::{FrameSeen, Recorder};

use crate::browser::Browsers;
use computer_protocol::recording::{
    check_task, RecordingId, RecordingPackage, RecordingStarted, RecordingSummary, RecordingTally,
    StartRecordingRequest, StepRecord, RECORDINGS_DIR,
};
use computer_protocol::{Coded, ErrorCode, InvalidInput, SessionId};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use store::{Meta, Store};

/// A session's open recording, if any. The session holds the slot; these
/// functions fill and empty it, checking and filling it in one step.
#[derive(Debug, Default)]
pub struct RecorderSlot(Mutex<Option<Arc<Recorder>>>);

impl RecorderSlot {
    pub fn get(&self) -> Option<Arc<Recorder>> {
        self.0.lock().clone()
    }

    fn take(&self) -> Option<Arc<Recorder>> {
        self.0.lock().take()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error("this session records already (recording `{0}`): call `stop_recording` before starting another")]
    AlreadyRecording(RecordingId),
    #[error("this session is not recording: call `start_recording` first")]
    NotRecording,
    #[error("no recording `{0}` in this computer: `computer-use-mcp review --list` lists them")]
    Unknown(RecordingId),
    #[error("the recording's files in {dir} could not be written: {source}; check the free space in the computer (`df -h ~`)")]
    Io {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

impl Coded for RecordingError {
    fn code(&self) -> ErrorCode {
        match self {
            RecordingError::InvalidInput(_) => ErrorCode::InvalidInput,
            RecordingError::AlreadyRecording(_) | RecordingError::NotRecording => {
                ErrorCode::Conflict
            }
            RecordingError::Unknown(_) => ErrorCode::NotFound,
            RecordingError::Io { .. } => ErrorCode::Internal,
        }
    }
}

/// Every recording of this computer: the open ones, and the folder that
/// keeps them all.
pub struct Recordings {
    root: PathBuf,
    browsers: Arc<Browsers>,
    open: Mutex<HashMap<RecordingId, Arc<Recorder>>>,
}

impl Recordings {
    pub fn new(home: &std::path::Path, browsers: Arc<Browsers>) -> Recordings {
        Recordings {
            root: home.join(RECORDINGS_DIR),
            browsers,
            open: Mutex::new(HashMap::new()),
        }
    }

    fn open_map(&self) -> parking_lot::MutexGuard<'_, HashMap<RecordingId, Arc<Recorder>>> {
        self.open.lock()
    }

    fn io(&self, dir: &std::path::Path) -> impl FnOnce(std::io::Error) -> RecordingError {
        let dir = dir.display().to_string();
        move |source| RecordingError::Io { dir, source }
    }

    /// Starts recording the session `session_id`, whose slot is `slot`.
    pub fn start(
        &self,
        slot: &RecorderSlot,
        session_id: &SessionId,
        session_title: &str,
        req: StartRecordingRequest,
    ) -> Result<RecordingStarted, RecordingError> {
        check_task(&req.task)?;
        if req.max_bytes == 0 {
            return Err(RecordingError::InvalidInput(InvalidInput(
                "`max_bytes` is 0: a recording needs room for at least one step".into(),
            )));
        }
        let mut slot = slot.0.lock();
        if let Some(open) = slot.as_ref() {
            return Err(RecordingError::AlreadyRecording(open.id.clone()));
        }
        let started_at = crate::clock::now_rfc3339();
        let id = new_id();
        let meta = Meta {
            recording_id: id.clone(),
            task: req.task.trim().to_string(),
            session_id: session_id.clone(),
            session_title: session_title.to_string(),
            started_at: started_at.clone(),
            ended_at: None,
            max_bytes: req.max_bytes,
            full: false,
        };
        let store = Store::new(&self.root, &id);
        let recorder = Recorder::start(store.clone(), meta, Arc::clone(&self.browsers))
            .map_err(self.io(&store.dir))?;
        let recorder = Arc::new(recorder);
        *slot = Some(Arc::clone(&recorder));
        drop(slot);
        self.open_map().insert(id.clone(), recorder);
        tracing::info!(session = %session_id, recording = %id, "recording started");
        Ok(RecordingStarted {
            recording_id: id,
            started_at,
        })
    }

    pub fn step(
        &self,
        slot: &RecorderSlot,
        step: StepRecord,
    ) -> Result<RecordingTally, RecordingError> {
        let recorder = slot.get().ok_or(RecordingError::NotRecording)?;
        Ok(recorder.step(step))
    }

    pub async fn stop(&self, slot: &RecorderSlot) -> Result<RecordingPackage, RecordingError> {
        let recorder = slot.take().ok_or(RecordingError::NotRecording)?;
        self.close(&recorder).await
    }

    async fn close(&self, recorder: &Recorder) -> Result<RecordingPackage, RecordingError> {
        let dir = self.root.join(&recorder.id.0);
        let package = recorder.close().await.map_err(self.io(&dir));
        self.open_map().remove(&recorder.id);
        tracing::info!(recording = %recorder.id, "recording closed");
        package
    }

    /// Closes the recording of a session that ended any other way than
    /// `stop_recording`; its package stays in the computer.
    pub async fn session_ended(&self, slot: &RecorderSlot) {
        if let Some(recorder) = slot.take() {
            if let Err(e) = self.close(&recorder).await {
                tracing::warn!(recording = %recorder.id, "closing the recording of an ended session: {e}");
            }
        }
    }

    /// Every recording kept in the computer, oldest first.
    pub fn list(&self) -> Result<Vec<RecordingSummary>, RecordingError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(&self.root)(e)),
        };
        let open = self.open_map().clone();
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(id) = RecordingId::parse(&name) else {
                continue;
            };
            let store = Store::new(&self.root, &id);
            let Ok(meta) = store.read_meta() else {
                continue;
            };
            let (steps, bytes) = match open.get(&id) {
                Some(recorder) => {
                    let tally = recorder.tally();
                    (tally.steps, tally.bytes)
                }
                None => on_disk(&store),
            };
            out.push(RecordingSummary {
                recording_id: id.clone(),
                task: meta.task,
                session_id: meta.session_id,
                session_title: meta.session_title,
                started_at: meta.started_at,
                ended_at: meta.ended_at,
                recording: open.contains_key(&id),
                steps,
                bytes,
            });
        }
        out.sort_by(|a, b| a.recording_id.cmp(&b.recording_id));
        Ok(out)
    }

    /// Builds the package of recording `id`: closed, or still open (up to
    /// its last step).
    pub async fn package(&self, id: &RecordingId) -> Result<RecordingPackage, RecordingError> {
        let open = self.open_map().get(id).cloned();
        let store = Store::new(&self.root, id);
        if let Some(recorder) = open {
            return recorder.snapshot().await.map_err(self.io(&store.dir));
        }
        if !store.dir.join("recording.json").is_file() {
            return Err(RecordingError::Unknown(id.clone()));
        }
        let dir = store.dir.clone();
        tokio::task::spawn_blocking(move || package::build(&store))
            .await
            .map_err(std::io::Error::other)
            .and_then(|built| built)
            .map_err(self.io(&dir))
    }
}

/// Steps and bytes of a closed recording, from its files.
fn on_disk(store: &Store) -> (u32, u64) {
    let steps = store.read_steps().map(|s| s.len() as u32).unwrap_or(0);
    let size = |name: &str| {
        std::fs::metadata(store.dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let frames: u64 = store
        .read_frames()
        .map(|f| f.iter().map(|f| f.file.bytes).sum())
        .unwrap_or(0);
    (steps, frames + size("journal.jsonl") + size("frames.jsonl"))
}

/// The start time in UTC and a random tail: sorts by time, never clashes.
fn new_id() -> RecordingId {
    let now = time::OffsetDateTime::now_utc();
    let tail: u16 = rand::random();
    RecordingId(format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z-{tail:04x}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    ))
}
