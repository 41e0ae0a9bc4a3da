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
//! - `retention`: which ended recordings go when a new one starts, and the
//!   disk's free space (no recording fills it).
//!
//! Data flows: the host starts a recording on a session; every frame the
//! session captures goes to the recorder (`desktop::capture_observation`),
//! every tool call arrives as a step from the host; the writer appends both
//! to disk. Stopping the recording, or the session ending any way, closes it
//! and builds the package, which the host copies home with `file_transfer`'s
//! download.

mod package;
mod recorder;
mod retention;
mod store;
mod summary;

pub use recorder::{FrameSeen, Recorder};

use crate::browser::Browsers;
use computer_protocol::recording::{
    check_task, RecordingDeleted, RecordingId, RecordingPackage, RecordingStarted,
    RecordingSummary, RecordingTally, Retention, StartRecordingRequest, StepRecord, RECORDINGS_DIR,
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
    #[error("recording `{0}` is still recording: stop it with `stop_recording` (or end its session) before deleting it")]
    StillOpen(RecordingId),
    #[error("the computer's disk has {free} free; a recording may grow to {max} (COMPUTER_USE_RECORDING_MAX_MB) and {floor} must stay free beside it: delete old recordings (`computer-use-mcp review --list`, then `review --delete ID`), free space in the computer, or lower COMPUTER_USE_RECORDING_MAX_MB")]
    DiskShort {
        free: String,
        max: String,
        floor: String,
    },
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
            RecordingError::StillOpen(_) => ErrorCode::Conflict,
            RecordingError::DiskShort { .. } => ErrorCode::Exhausted,
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
        if let Some(open) = slot.get() {
            return Err(RecordingError::AlreadyRecording(open.id.clone()));
        }
        let pruned = match req.keep {
            Some(keep) => self.prune(keep)?,
            None => Vec::new(),
        };
        self.check_disk(req.max_bytes)?;
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
            pruned,
        })
    }

    /// Deletes the ended recordings `keep` does not keep, to make room for
    /// a new one; returns their ids.
    fn prune(&self, keep: Retention) -> Result<Vec<RecordingId>, RecordingError> {
        let open: Vec<RecordingId> = self.open_map().keys().cloned().collect();
        let existing: Vec<retention::Kept> = self
            .ids()?
            .into_iter()
            .map(|id| {
                let started = Store::new(&self.root, &id)
                    .read_meta()
                    .ok()
                    .and_then(|meta| {
                        time::OffsetDateTime::parse(
                            &meta.started_at,
                            &time::format_description::well_known::Rfc3339,
                        )
                        .ok()
                    });
                retention::Kept {
                    open: open.contains(&id),
                    id,
                    started,
                }
            })
            .collect();
        let pruned = retention::to_prune(&existing, keep, time::OffsetDateTime::now_utc());
        for id in &pruned {
            let dir = self.root.join(&id.0);
            std::fs::remove_dir_all(&dir).map_err(self.io(&dir))?;
            tracing::info!(recording = %id, "recording deleted to keep to the retention");
        }
        Ok(pruned)
    }

    /// Refuses a recording that could fill the computer's disk.
    fn check_disk(&self, max_bytes: u64) -> Result<(), RecordingError> {
        if let Some(free) = retention::short_of_room(&self.root, max_bytes) {
            let mb = |b: u64| format!("{} MB", b / (1024 * 1024));
            return Err(RecordingError::DiskShort {
                free: mb(free),
                max: mb(max_bytes),
                floor: mb(retention::DISK_FLOOR_BYTES),
            });
        }
        Ok(())
    }

    /// Deletes ended recording `id` and its files.
    pub fn delete(&self, id: &RecordingId) -> Result<RecordingDeleted, RecordingError> {
        if self.open_map().contains_key(id) {
            return Err(RecordingError::StillOpen(id.clone()));
        }
        let store = Store::new(&self.root, id);
        if !store.dir.join("recording.json").is_file() {
            return Err(RecordingError::Unknown(id.clone()));
        }
        let (_, bytes) = on_disk(&store);
        std::fs::remove_dir_all(&store.dir).map_err(self.io(&store.dir))?;
        tracing::info!(recording = %id, "recording deleted");
        Ok(RecordingDeleted {
            recording_id: id.clone(),
            bytes,
        })
    }

    /// The ids of every recording folder, in no order.
    fn ids(&self) -> Result<Vec<RecordingId>, RecordingError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(&self.root)(e)),
        };
        Ok(entries
            .flatten()
            .filter_map(|e| RecordingId::parse(&e.file_name().to_string_lossy()).ok())
            .collect())
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
        let open = self.open_map().clone();
        let mut out = Vec::new();
        for id in self.ids()? {
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
    let tail: u16 = rand::random();
    RecordingId(format!(
        "{}-{tail:04x}",
        retention::id_time(time::OffsetDateTime::now_utc())
    ))
}
