//! start_computer and end_session.

use super::ToolResult;
use crate::agent::AgentError;
use crate::mcp::args::{Args, SessionArgs, StartComputerArgs};
use crate::mcp::result::structured;
use crate::mcp::tools::recording::delivered_text;
use crate::mcp::{ComputerUseServer, ToolError};
use crate::recording::{destination, folder_name, Delivered, RecordingError};
use computer_protocol::endpoints::{CreateSession, EndSession, NoBody};
use computer_protocol::{CreateSessionRequest, CreateSessionResponse, ScreenNumber, SessionId};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(30);

/// start_computer's structured result.
#[derive(Serialize, JsonSchema)]
struct Started {
    session_id: SessionId,
    viewer_url: String,
    computer: ComputerFacts,
    cwd: String,
}

#[derive(Serialize, JsonSchema)]
struct ComputerFacts {
    name: String,
    image: String,
    state: String,
}

/// end_session's structured result.
#[derive(Serialize, JsonSchema)]
struct Ended {
    session_id: SessionId,
    screen: Option<ScreenNumber>,
    ended: bool,
    /// The package of the session's recording, when it recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    recording: Option<Delivered>,
}

impl ComputerUseServer {
    /// Makes sure the computer runs, connects this process to it and starts
    /// a session titled `title` (under the id `resume`, after a restore).
    /// The caller holds the link's `starting` lock.
    pub(super) async fn connect_session(
        &self,
        title: String,
        resume: Option<SessionId>,
    ) -> Result<
        (
            std::sync::Arc<crate::link::Connection>,
            CreateSessionResponse,
        ),
        ToolError,
    > {
        let host = self.agent();
        let computer = crate::computer::start(host.tenant()).await?;
        let request = CreateSessionRequest {
            title,
            owner: host.owner.clone(),
            settings: computer.session_settings.clone(),
            resume,
        };
        request.validate()?;
        let created = computer
            .client
            .send::<CreateSession>(
                &(),
                &request,
                API_DEADLINE,
                "a session may have started; it ends by itself within a minute",
            )
            .await
            .map_err(AgentError::Computer)?;
        let conn = host.set_connection(computer);
        host.remember(created.session_id.clone(), &conn);
        Ok((conn, created))
    }

    /// Ending a recording session stops its recording and brings the
    /// package to the default folder. When that fails the session still
    /// ends: computerd closes the recording, whose package stays in the
    /// computer for `review --fetch`.
    async fn end_recording(&self, id: &SessionId) -> (Option<Delivered>, Option<String>) {
        let Some(open) = self.agent().recording(id) else {
            return (None, None);
        };
        let host_files = &self.agent().tenant().files;
        let name = folder_name(&open.task, &open.started_at);
        let delivered = match destination(host_files, None, &name) {
            Ok(folder) => self.finish_recording(id, &folder).await,
            Err(e) => {
                if let Some(open) = self.agent().stop_recording(id) {
                    open.drain().await;
                }
                Err(RecordingError::NoDestination {
                    id: open.id.clone(),
                    source: e,
                }
                .into())
            }
        };
        match delivered {
            Ok(d) => {
                let text = delivered_text(&d);
                (Some(d), Some(text))
            }
            Err(e) => (None, Some(e.to_string())),
        }
    }
}

#[tool_router(router = session_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "start_computer",
        output_schema = schema_for_output::<Started>(),
        title = "Start a computer session",
        description = "Start a session on the shared Linux desktop (Debian 13 in Docker), creating or starting the computer if needed. Returns the session_id the other tools take and a viewer_url where people can watch. The session's own screen opens on its first computer_observe.",
        annotations(
            title = "Start a computer session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn start_computer(
        &self,
        Parameters(args): Parameters<Args<StartComputerArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        let _one_at_a_time = self.agent().link().starting.lock().await;
        let (conn, created) = self.connect_session(a.title, None).await?;
        let viewer_url = conn.viewer_url();
        let text = format!(
            "Session {} started on computer `{}` ({}). Working folder: {}. A person can watch at {}. Call computer_observe to open this session's screen.",
            created.session_id, conn.container, conn.state, created.cwd, viewer_url
        );
        let payload = Started {
            session_id: created.session_id,
            viewer_url,
            computer: ComputerFacts {
                name: conn.container.clone(),
                image: conn.image.clone(),
                state: conn.state.clone(),
            },
            cwd: created.cwd,
        };
        Ok(structured(text, &payload))
    }

    #[tool(
        name = "end_session",
        output_schema = schema_for_output::<Ended>(),
        title = "End a session",
        description = "End a session: its screen closes (its Chromium saves logins and bookmarks first) and the screen number is freed. Files are never touched.",
        annotations(
            title = "End a session",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn end_session(&self, Parameters(args): Parameters<Args<SessionArgs>>) -> ToolResult {
        let a = args.read()?;
        let (recording, recording_text) = self.end_recording(&a.session_id).await;
        let r = self
            .session_call::<EndSession>(
                &a.session_id,
                &NoBody {},
                API_DEADLINE,
                "the session may still be ending; it ends by itself within a minute",
            )
            .await?;
        let text = match r.screen {
            Some(n) => format!(
                "Session {} ended; screen {n} closed. Files are untouched.",
                r.session_id
            ),
            None => format!("Session {} ended. Files are untouched.", r.session_id),
        };
        let text = match recording_text {
            Some(more) => format!("{text} {more}"),
            None => text,
        };
        let payload = Ended {
            session_id: r.session_id,
            screen: r.screen,
            ended: true,
            recording,
        };
        Ok(structured(text, &payload))
    }
}
