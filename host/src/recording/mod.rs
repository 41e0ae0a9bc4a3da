//! The host's side of recordings: which sessions of an agent record, each
//! call sent to computerd as a step, and the package brought home.
//!
//! # Layout
//! - `step`: one call as a recording keeps it, secrets hidden.
//! - `attest`: the host's log of the steps it sent and the frames it
//!   returned, and the signed `host-attestation.json` made from it.
//! - `deliver`: where a package goes on the host, and copying it there with
//!   `file_transfer`'s download.
//! - `error`: why a package is not on the host ([`RecordingError`]).
//! - `package_file`: reading a package's files on the host without
//!   following a link or blocking on a FIFO.
//! - `render`: the walkthrough page, rendered by the host from
//!   `walkthrough.json` (the computer's own page is never opened).
//! - `review`: the `review` command: check a package, list and fetch the
//!   recordings kept in the computer.
//!
//! Steps leave the agent's path at once: each goes into the recording's
//! queue, and one task per recording sends them to computerd in order.
//! `stop_recording` waits for the queue to drain before it closes the
//! recording, so the package holds every call made before it. Each step is
//! logged in the host's own folder before it leaves (`attest::SentLog`);
//! delivering the package signs that log into it.

pub mod attest;
mod deliver;
mod error;
mod package_file;
mod render;
pub mod review;
mod step;

pub use deliver::{deliver, destination, folder_name, Delivered};
pub use error::RecordingError;
use step::frame_of;
pub use step::step_of;

use crate::client::ComputerdClient;
use computer_protocol::endpoints::RecordStep;
use computer_protocol::recording::{RecordingId, RecordingTally, StepRecord};
use computer_protocol::SessionId;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// `COMPUTER_USE_RECORDING_MAX_MB`.
pub const MAX_MB_VAR: &str = "COMPUTER_USE_RECORDING_MAX_MB";
/// How long one step may take to reach computerd.
const STEP_DEADLINE: Duration = Duration::from_secs(15);

enum Queued {
    /// The step, and what the host logs of it.
    Step(Box<(StepRecord, attest::SentStep)>),
    /// Answers once every step before it was sent.
    Drained(oneshot::Sender<()>),
}

/// One session's recording, as its agent sees it.
pub struct HostRecording {
    pub id: RecordingId,
    pub task: String,
    pub started_at: String,
    queue: mpsc::UnboundedSender<Queued>,
    tally: Arc<Mutex<RecordingTally>>,
    /// The agent was told the recording is full.
    told_full: AtomicBool,
    /// The host's log of the steps sent, signed into the package.
    pub log: attest::SentLog,
    /// Secrets typed so far, hidden from every later step (host memory
    /// only, for the recording's life).
    secrets: Mutex<Vec<String>>,
}

impl HostRecording {
    /// Starts the task that sends this recording's steps.
    pub fn new(
        client: ComputerdClient,
        session: SessionId,
        id: RecordingId,
        task: String,
        started_at: String,
        log: attest::SentLog,
    ) -> HostRecording {
        let (queue, mut queued) = mpsc::unbounded_channel();
        let tally = Arc::new(Mutex::new(RecordingTally::default()));
        let seen = Arc::clone(&tally);
        let kept_log = log.clone();
        tokio::spawn(async move {
            while let Some(item) = queued.recv().await {
                match item {
                    Queued::Step(queued) => {
                        let (step, logged) = *queued;
                        // Logged before it leaves: a host killed right after
                        // sending still vouches for the step.
                        if let Err(e) = log.sent(&logged) {
                            tracing::warn!(session = %session, "the host's log of recording steps cannot be written: {e}");
                        }
                        let sent = client
                            .send::<RecordStep>(&session, &step, STEP_DEADLINE, "nothing")
                            .await;
                        match sent {
                            Ok(now) => *seen.lock() = now,
                            Err(e) => {
                                let _ = log.unsent(&logged);
                                tracing::warn!(session = %session, "a recorded step was not kept: {e}")
                            }
                        }
                    }
                    Queued::Drained(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        HostRecording {
            id,
            task,
            started_at,
            queue,
            tally,
            told_full: AtomicBool::new(false),
            log: kept_log,
            secrets: Mutex::new(Vec::new()),
        }
    }

    /// Records a finished tool call as a step (see [`step_of`]), hiding
    /// every secret typed so far in the recording.
    pub fn record_call(
        &self,
        tool: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        started_at: String,
        duration_ms: u64,
        response: &rmcp::model::CallToolResponse,
    ) {
        let earlier = self.secrets.lock().clone();
        let step = step_of(tool, arguments, started_at, duration_ms, response, &earlier);
        let typed = step::secrets(arguments)
            .into_iter()
            .filter(|s| s.chars().count() >= step::SECRET_REMEMBERED_MIN_CHARS);
        {
            let mut known = self.secrets.lock();
            for secret in typed {
                if !known.contains(&secret) {
                    known.push(secret);
                }
            }
        }
        let frame = frame_of(response);
        self.record(step, frame.as_deref());
    }

    /// Queues `step`, whose result showed the agent `frame` (the image's
    /// bytes) when it showed one.
    pub fn record(&self, step: StepRecord, frame: Option<&[u8]>) {
        let logged = attest::sent_step(&step, frame);
        let _ = self.queue.send(Queued::Step(Box::new((step, logged))));
    }

    /// Waits until every step recorded so far reached computerd.
    pub async fn drain(&self) {
        let (done, wait) = oneshot::channel();
        if self.queue.send(Queued::Drained(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// Once, when the recording has filled up: the sentence the agent's
    /// next result carries.
    pub fn full_notice(&self) -> Option<String> {
        let tally = *self.tally.lock();
        if !tally.full || self.told_full.swap(true, Ordering::SeqCst) {
            return None;
        }
        Some(format!(
            "Note: recording `{}` reached its size limit ({MAX_MB_VAR}) and stopped growing: later calls are not in it. Call stop_recording to keep what it holds, then start_recording again.",
            self.id
        ))
    }
}

/// Now, in RFC 3339 (UTC), as steps are timed.
pub use crate::clock::now_rfc3339;

/// `COMPUTER_USE_RECORDING_MAX_MB` in bytes: 1 to 1048576 MB (1 TiB), default 512.
pub fn max_bytes(env: &crate::settings::Env) -> Result<u64, crate::settings::SettingsError> {
    let default = computer_protocol::recording::DEFAULT_MAX_MB;
    let mb =
        crate::settings::whole_number(env, MAX_MB_VAR, 1..=1_048_576, default, " of megabytes")?;
    Ok(mb * 1024 * 1024)
}

/// `COMPUTER_USE_RECORDINGS_KEEP`: how many recordings a computer keeps.
pub const KEEP_VAR: &str = "COMPUTER_USE_RECORDINGS_KEEP";
/// `COMPUTER_USE_RECORDINGS_KEEP_DAYS`: how old a kept recording may be.
pub const KEEP_DAYS_VAR: &str = "COMPUTER_USE_RECORDINGS_KEEP_DAYS";
const KEEP_DEFAULT: u64 = 20;
const KEEP_DAYS_DEFAULT: u64 = 30;

/// Which recordings the computer keeps when a new one starts: the newest
/// [`KEEP_VAR`] (the new one included), none older than [`KEEP_DAYS_VAR`].
pub fn retention(
    env: &crate::settings::Env,
) -> Result<computer_protocol::recording::Retention, crate::settings::SettingsError> {
    use crate::settings::whole_number;
    Ok(computer_protocol::recording::Retention {
        count: whole_number(env, KEEP_VAR, 1..=1000, KEEP_DEFAULT, "")? as u32,
        days: whole_number(env, KEEP_DAYS_VAR, 1..=3650, KEEP_DAYS_DEFAULT, " of days")? as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_limit_is_whole_megabytes() {
        let env = |v: &str| {
            [(MAX_MB_VAR.to_string(), v.to_string())]
                .into_iter()
                .collect()
        };
        assert_eq!(max_bytes(&Default::default()).unwrap(), 512 << 20);
        assert_eq!(max_bytes(&env("2")).unwrap(), 2 << 20);
        for bad in ["0", "-1", "1.5", "1048577", "lots"] {
            let e = max_bytes(&env(bad)).unwrap_err().to_string();
            assert!(e.contains(MAX_MB_VAR) && e.contains("1 to 1048576"), "{e}");
        }
    }

    #[test]
    fn retention_has_defaults_and_names_a_bad_setting() {
        let kept = retention(&Default::default()).unwrap();
        assert_eq!((kept.count, kept.days), (20, 30));
        let env: crate::settings::Env = [(KEEP_VAR.to_string(), "0".to_string())]
            .into_iter()
            .collect();
        let e = retention(&env).unwrap_err().to_string();
        assert!(e.contains(KEEP_VAR) && e.contains("1 to 1000"), "{e}");
    }
}
