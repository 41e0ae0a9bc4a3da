//! start_recording, recording_note and stop_recording; end_session also
//! stops a recording (see [`ComputerUseServer::finish_recording`]).

use super::ToolResult;
use crate::mcp::args::{Args, RecordingNoteArgs, StartRecordingArgs, StopRecordingArgs};
use crate::mcp::result::structured;
use crate::mcp::{ComputerUseServer, ToolError};
use crate::recording::attest::SentLog;
use crate::recording::{self, deliver, folder_name, Delivered, HostRecording, RecordingError};
use crate::settings::process_env;
use crate::transfer::HostFiles;
use computer_protocol::archive::human_bytes;
use computer_protocol::endpoints::{NoBody, StartRecording, StopRecording};
use computer_protocol::recording::{check_note, check_task, StartRecordingRequest};
use computer_protocol::{InvalidInput, SessionId};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(30);
/// Building a package reads and hashes every frame once.
const STOP_DEADLINE: Duration = Duration::from_secs(120);

#[derive(Serialize, JsonSchema)]
struct RecordingStartedResult {
    recording_id: String,
    started_at: String,
}

#[derive(Serialize, JsonSchema)]
struct NoteAdded {
    recording_id: String,
}

#[tool_router(router = recording_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "start_recording",
        output_schema = schema_for_output::<RecordingStartedResult>(),
        title = "Record what you do in this session",
        description = "Record this session for a person to review step by step: each later tool call on it becomes a step with its arguments, result and the screen before and after. Type secrets with `secret: true` (shown as •••). Add notes with recording_note; stop_recording or end_session delivers the package.",
        annotations(
            title = "Record what you do in this session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn start_recording(
        &self,
        Parameters(args): Parameters<Args<StartRecordingArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        check_task(&a.task)?;
        if let HostFiles::Refused = self.agent().tenant().files {
            return Err(RecordingError::NoRoot.into());
        }
        if let Some(open) = self.agent().recording(&a.session_id) {
            return Err(ToolError::Invalid(InvalidInput(format!(
                "this session records already (recording `{}`): call `stop_recording` before starting another",
                open.id
            ))));
        }
        let env = process_env();
        let max_bytes = recording::max_bytes(&env)?;
        let keep = recording::retention(&env)?;
        // The host logs what it sends in its own folder: that must work
        // before the recording starts.
        crate::state::folder("recordings").map_err(state_unusable)?;
        let request = StartRecordingRequest {
            task: a.task.trim().to_string(),
            max_bytes,
            keep: Some(keep),
        };
        let started = self
            .session_call::<StartRecording>(
                &a.session_id,
                &request,
                API_DEADLINE,
                "the recording may have started; stop_recording stops it",
            )
            .await?;
        let conn = self.reach(&a.session_id).await?;
        let log = SentLog::of(&conn.container, &started.recording_id).map_err(state_unusable)?;
        let host = HostRecording::new(
            conn.client.clone(),
            a.session_id.clone(),
            started.recording_id.clone(),
            request.task.clone(),
            started.started_at.clone(),
            log,
        );
        self.agent().start_recording(&a.session_id, host);
        let mut text = format!(
            "Recording `{}` started for \"{}\": every tool call on this session is now a step of it. Type secrets with `secret: true`. Call recording_note to add notes and stop_recording to get the package.",
            started.recording_id, request.task
        );
        if !started.pruned.is_empty() {
            let ids: Vec<&str> = started.pruned.iter().map(|id| id.0.as_str()).collect();
            text.push_str(&format!(
                " The computer keeps {} recordings, none older than {} days ({} and {}): it deleted {}.",
                keep.count,
                keep.days,
                recording::KEEP_VAR,
                recording::KEEP_DAYS_VAR,
                ids.join(", ")
            ));
        }
        Ok(structured(
            text,
            &RecordingStartedResult {
                recording_id: started.recording_id.0,
                started_at: started.started_at,
            },
        ))
    }

    #[tool(
        name = "recording_note",
        output_schema = schema_for_output::<NoteAdded>(),
        title = "Add a note to the recording",
        description = "Add a note (what you checked, found or concluded) to this session's recording, as its own step.",
        annotations(
            title = "Add a note to the recording",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn recording_note(
        &self,
        Parameters(args): Parameters<Args<RecordingNoteArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        check_note(&a.text)?;
        // Known session first, so an ended one says why.
        self.reach(&a.session_id).await?;
        let Some(open) = self.agent().recording(&a.session_id) else {
            return Err(ToolError::Invalid(InvalidInput(not_recording())));
        };
        // The call itself is the note's step (see `server::call_tool`).
        Ok(structured(
            format!("Note added to recording `{}`.", open.id),
            &NoteAdded {
                recording_id: open.id.0.clone(),
            },
        ))
    }

    #[tool(
        name = "stop_recording",
        output_schema = schema_for_output::<Delivered>(),
        title = "Stop recording and get the package",
        description = "Stop this session's recording and copy its package here: index.html (a walkthrough to open from disk), walkthrough.json, frames/, manifest.json and host-attestation.json (signed by the host); `computer-use-mcp review PATH` checks it.",
        annotations(
            title = "Stop recording and get the package",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn stop_recording(
        &self,
        Parameters(args): Parameters<Args<StopRecordingArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        self.reach(&a.session_id).await?;
        let Some(open) = self.agent().recording(&a.session_id) else {
            return Err(ToolError::Invalid(InvalidInput(not_recording())));
        };
        let host_files = &self.agent().tenant().files;
        let folder = recording::destination(
            host_files,
            a.host_path.as_deref(),
            &folder_name(&open.task, &open.started_at),
        )?;
        let delivered = self.finish_recording(&a.session_id, &folder).await?;
        Ok(structured(delivered_text(&delivered), &delivered))
    }
}

impl ComputerUseServer {
    /// Stops session `id`'s recording (every queued step sent first),
    /// builds its package in the computer and copies it to `folder`.
    pub(crate) async fn finish_recording(
        &self,
        id: &SessionId,
        folder: &std::path::Path,
    ) -> Result<Delivered, ToolError> {
        let Some(open) = self.agent().stop_recording(id) else {
            return Err(ToolError::Invalid(InvalidInput(not_recording())));
        };
        open.drain().await;
        let package = self
            .session_call::<StopRecording>(id, &NoBody {}, STOP_DEADLINE, "the package may still be building in the computer; `computer-use-mcp review --list` shows it")
            .await?;
        let conn = self.reach(id).await?;
        let host_files = &self.agent().tenant().files;
        deliver(
            &conn.client,
            id,
            &package,
            folder,
            host_files,
            Some(&open.log),
        )
        .await
        .map_err(|source| {
            RecordingError::NotCopied {
                id: package.recording_id,
                source,
            }
            .into()
        })
    }
}

/// What stop_recording and end_session say of a package.
pub fn delivered_text(d: &Delivered) -> String {
    let mut text = format!(
        "Recording `{}` stopped: {} steps, {}. The package is at {}; open {} in a browser (or run `computer-use-mcp review {}`).",
        d.recording_id,
        d.steps,
        human_bytes(d.bytes),
        d.path,
        d.index,
        d.path
    );
    if d.full {
        text.push_str(" It reached its size limit (COMPUTER_USE_RECORDING_MAX_MB) and stopped growing, so later calls are missing.");
    }
    text
}

fn state_unusable(e: std::io::Error) -> ToolError {
    RecordingError::NoStateFolder(e).into()
}

fn not_recording() -> String {
    "this session is not recording: call `start_recording` first".to_string()
}
