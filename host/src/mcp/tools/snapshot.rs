//! save_snapshot, list_snapshots, restore_snapshot, reset_computer and
//! delete_snapshot: the computer's whole file state kept on its engine
//! (`docker::snapshot`), put back, or thrown away for a fresh one.
//!
//! A restore or a reset replaces the computer's container, so every session
//! ends; the caller's comes back under the same id on a fresh screen, and
//! is refused while another session is live unless the caller says to end
//! them. The snapshots are the tenant's computer's own: a tenant names no
//! other computer, so it sees and restores no other's.

use super::ToolResult;
use crate::computer::StartError;
use crate::docker::image::ensure_image;
use crate::docker::snapshot::{self, Snapshot, SnapshotError, SnapshotName, Target};
use crate::mcp::args::{
    Args, ResetComputerArgs, RestoreSnapshotArgs, SaveSnapshotArgs, SessionArgs, SnapshotArgs,
};
use crate::mcp::progress::reporting;
use crate::mcp::result::structured;
use crate::mcp::tools::desktop::{observation_result, IMAGE_ONLY};
use crate::mcp::{ComputerUseServer, ToolError};
use computer_protocol::endpoints::{ListRecordings, ListSessions, NoBody, Observe};
use computer_protocol::{Observation, ObserveRequest, SessionId};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Serialize, JsonSchema)]
struct SavedResult {
    name: String,
    size_bytes: u64,
    /// How long the computer was paused.
    frozen_ms: u64,
    took_ms: u64,
}

#[derive(Serialize, JsonSchema)]
struct ListedResult {
    snapshots: Vec<Snapshot>,
}

#[derive(Serialize, JsonSchema)]
struct EndedSession {
    session_id: SessionId,
    title: String,
}

#[derive(Serialize, JsonSchema)]
struct RestoredResult {
    /// The snapshot restored; absent after a reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// The caller's session, under the same id on a fresh screen.
    session_id: SessionId,
    ended_sessions: Vec<EndedSession>,
    took_ms: u64,
    /// The caller's fresh screen, as computer_observe gives it.
    frame: Observation,
}

#[derive(Serialize, JsonSchema)]
struct DeletedResult {
    name: String,
    deleted: bool,
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

impl ComputerUseServer {
    /// The engine and the name of the computer session `id` is on.
    async fn snapshot_engine(
        &self,
        id: &SessionId,
    ) -> Result<(bollard::Docker, String), ToolError> {
        let conn = self.reach(id).await?;
        Ok((conn.dialer.docker().clone(), conn.container.clone()))
    }

    /// Restores the computer of session `id` to the snapshot `name`, or
    /// resets it (`None`), then starts the caller's session again under its
    /// id and observes its fresh screen.
    async fn put_back(
        &self,
        id: &SessionId,
        name: Option<SnapshotName>,
        end_other_sessions: bool,
        context: &RequestContext<RoleServer>,
    ) -> ToolResult {
        let conn = self.reach(id).await?;
        // An unknown name is the first thing to hear of.
        let target = match name {
            Some(name) => Target::Snapshot(
                snapshot::store::find(conn.dialer.docker(), &conn.container, &name).await?,
            ),
            None => Target::Reset,
        };
        let listed = conn
            .client
            .send::<ListSessions>(&(), &NoBody {}, API_DEADLINE, "nothing was changed")
            .await;
        let listed = self.answer(id, listed).await?;
        let me = id.clone();
        let title = listed
            .sessions
            .iter()
            .find(|s| s.session_id == me)
            .map(|s| s.title.clone())
            .unwrap_or_else(|| "restored session".to_string());
        let others: Vec<EndedSession> = listed
            .sessions
            .into_iter()
            .filter(|s| s.session_id != me)
            .map(|s| EndedSession {
                session_id: s.session_id,
                title: s.title,
            })
            .collect();
        let what = match &target {
            Target::Snapshot(s) => format!("restoring the computer to snapshot `{}`", s.name),
            Target::Reset => "resetting the computer".to_string(),
        };
        // A recording is evidence of what an agent did: it is stopped (and
        // its package brought home) on purpose, never lost to a restore.
        let recordings = conn
            .client
            .send::<ListRecordings>(&(), &NoBody {}, API_DEADLINE, "nothing was changed")
            .await;
        let recording = snapshot::recordings_in_progress(self.answer(id, recordings).await?);
        if !recording.is_empty() {
            return Err(SnapshotError::Invalid(format!(
                "{what} would lose the recording in progress: {}. Nothing was changed; stop it with stop_recording first",
                recording.join(", ")
            ))
            .into());
        }
        if !others.is_empty() && !end_other_sessions {
            let named: Vec<String> = others
                .iter()
                .map(|s| snapshot::session_named(&s.session_id, &s.title))
                .collect();
            return Err(SnapshotError::Invalid(format!(
                "{what} would end the computer's other live sessions: {}. Nothing was changed; pass `end_other_sessions: true` to end them, or wait until they end",
                named.join(", ")
            ))
            .into());
        }
        let host = self.agent();
        let _one_at_a_time = host.link().starting.lock().await;
        let (settings, endpoint) = crate::computer::wanted(host.tenant())?;
        let docker = conn.dialer.docker().clone();
        let restored = match reporting(
            context,
            &what,
            snapshot::restore(&docker, &settings, endpoint.config_dir.as_deref(), &target),
        )
        .await
        {
            Ok(restored) => restored,
            // A failure after the stop started the old computer again: a
            // new computerd, where the caller's session resumes. Before
            // the stop, the session is still live and resuming is refused.
            Err(error) => {
                return Err(match self.connect_session(title, Some(me.clone())).await {
                    Ok(_) => SnapshotError::Resumed {
                        error: Box::new(error),
                        session: me.to_string(),
                    },
                    Err(_) => error,
                }
                .into())
            }
        };
        let (_conn, created) = self.connect_session(title, Some(me.clone())).await?;
        let observation = self
            .session_call::<Observe>(
                &created.session_id,
                &ObserveRequest::default(),
                API_DEADLINE,
                "nothing keeps running; observe again",
            )
            .await?;
        let done = match &target {
            Target::Snapshot(s) => format!("The computer was restored to snapshot `{}`", s.name),
            Target::Reset => "The computer was reset: the image, an empty home".to_string(),
        };
        let same = if created.session_id == me {
            format!("your session {me} goes on")
        } else {
            // An older computerd, from the snapshot's image version, gives
            // a new id.
            format!(
                "your session goes on as {} (the snapshot's computer gave a new id)",
                created.session_id
            )
        };
        let ended = if others.is_empty() {
            String::new()
        } else {
            format!(" Ended {} other session(s).", others.len())
        };
        let text = format!(
            "{done} in {:.1} s; {same} on a fresh screen (programs that ran are gone).{ended}\n",
            restored.took.as_secs_f64()
        );
        let name = match &target {
            Target::Snapshot(s) => Some(s.name.clone()),
            Target::Reset => None,
        };
        let took_ms = ms(restored.took);
        observation_result(text, observation, &IMAGE_ONLY, |frame| RestoredResult {
            name,
            session_id: created.session_id.clone(),
            ended_sessions: others,
            took_ms,
            frame,
        })
    }
}

#[tool_router(router = snapshot_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "save_snapshot",
        output_schema = schema_for_output::<SavedResult>(),
        title = "Save a snapshot of the computer",
        description = "Save the computer's whole file state (installed software, home, browser logins) under a name, to restore later. The computer pauses briefly; running programs are not kept.",
        annotations(
            title = "Save a snapshot of the computer",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn save_snapshot(
        &self,
        Parameters(args): Parameters<Args<SaveSnapshotArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        let name = SnapshotName::parse(&a.name)?;
        let note = a.note.unwrap_or_default();
        snapshot::check_note(&note)?;
        let limits = snapshot::SaveLimits::from_env(&crate::settings::process_env())?;
        let (docker, computer) = self.snapshot_engine(&a.session_id).await?;
        // One change of the computer at a time in this server: two saves
        // of one name would both find it free.
        let _one_at_a_time = self.agent().link().starting.lock().await;
        let (settings, endpoint) = crate::computer::wanted(self.agent().tenant())?;
        ensure_image(&docker, &settings.image, endpoint.config_dir.as_deref())
            .await
            .map_err(|e| ToolError::Start(StartError::from(e)))?;
        let what = format!("saving snapshot `{name}`");
        let saved = reporting(
            &context,
            &what,
            snapshot::save(&docker, (&computer, &settings.image), &name, &note, limits),
        )
        .await?;
        let text = format!(
            "Saved snapshot `{name}` of `{computer}`: {:.1} MB, in {:.1} s, the computer paused for {:.1} s.",
            saved.snapshot.size_bytes as f64 / 1e6,
            saved.took.as_secs_f64(),
            saved.frozen.as_secs_f64()
        );
        Ok(structured(
            text,
            &SavedResult {
                name: name.to_string(),
                size_bytes: saved.snapshot.size_bytes,
                frozen_ms: ms(saved.frozen),
                took_ms: ms(saved.took),
            },
        ))
    }

    #[tool(
        name = "list_snapshots",
        output_schema = schema_for_output::<ListedResult>(),
        title = "List the computer's snapshots",
        description = "The computer's snapshots, oldest first: name, note, created_at, size_bytes, image_version.",
        annotations(
            title = "List the computer's snapshots",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_snapshots(&self, Parameters(args): Parameters<Args<SessionArgs>>) -> ToolResult {
        let a = args.read()?;
        let (docker, computer) = self.snapshot_engine(&a.session_id).await?;
        let snapshots = snapshot::list(&docker, &computer)
            .await
            .map_err(|e| ToolError::Start(StartError::from(e)))?;
        let mut text = if snapshots.is_empty() {
            format!("The computer `{computer}` has no snapshots.")
        } else {
            format!("Snapshots of `{computer}`:")
        };
        for s in &snapshots {
            text.push_str(&format!(
                "\n{} ({}, {:.1} MB, image {}){}",
                s.name,
                s.created_at,
                s.size_bytes as f64 / 1e6,
                s.image_version,
                if s.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", s.note)
                }
            ));
        }
        Ok(structured(text, &ListedResult { snapshots }))
    }

    #[tool(
        name = "restore_snapshot",
        output_schema = schema_for_output::<RestoredResult>(),
        title = "Restore the computer to a snapshot",
        description = "Put the computer's files back exactly as a snapshot saved them. Running programs end; your session keeps its id on a fresh screen (a frame is returned). Refused while other sessions are live unless end_other_sessions.",
        annotations(
            title = "Restore the computer to a snapshot",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn restore_snapshot(
        &self,
        Parameters(args): Parameters<Args<RestoreSnapshotArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        let name = SnapshotName::parse(&a.name)?;
        self.put_back(&a.session_id, Some(name), a.end_other_sessions, &context)
            .await
    }

    #[tool(
        name = "reset_computer",
        output_schema = schema_for_output::<RestoredResult>(),
        title = "Reset the computer to a fresh one",
        description = "Throw away every change: the computer goes back to its image with an empty home. Same rules and result as restore_snapshot.",
        annotations(
            title = "Reset the computer to a fresh one",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn reset_computer(
        &self,
        Parameters(args): Parameters<Args<ResetComputerArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        self.put_back(&a.session_id, None, a.end_other_sessions, &context)
            .await
    }

    #[tool(
        name = "delete_snapshot",
        output_schema = schema_for_output::<DeletedResult>(),
        title = "Delete a snapshot",
        description = "Delete one of the computer's snapshots and the disk it holds.",
        annotations(
            title = "Delete a snapshot",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn delete_snapshot(
        &self,
        Parameters(args): Parameters<Args<SnapshotArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        let name = SnapshotName::parse(&a.name)?;
        let (docker, computer) = self.snapshot_engine(&a.session_id).await?;
        let gone = snapshot::delete(&docker, &computer, &name).await?;
        Ok(structured(
            format!(
                "Deleted snapshot `{name}` of `{computer}` ({:.1} MB freed).",
                gone.size_bytes as f64 / 1e6
            ),
            &DeletedResult {
                name: name.to_string(),
                deleted: true,
            },
        ))
    }
}
