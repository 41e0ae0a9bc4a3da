//! The MCP server: rmcp's tool router, built from the `#[tool_router]`
//! blocks in `tools/` (one per tool area, each tool declared once beside
//! its body), and the guard every call runs under.

use super::error::ToolError;
use super::schema;
use crate::agent::Agent;
use crate::link::Connection;
use crate::tenant::Tenant;
use computer_protocol::endpoints::Endpoint;
use computer_protocol::SessionId;
use futures::FutureExt;
use rmcp::handler::server::tool::{ToolCallContext, ToolRouter};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    InitializeRequestParams, InitializeResult, IntoContents, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The order `tools/list` gives: how an agent meets them.
const ORDER: [&str; 26] = [
    "start_computer",
    "end_session",
    "computer_observe",
    "computer_act",
    "open_path",
    "launch_app",
    "request_handoff",
    "wait_handoff",
    "cancel_handoff",
    "start_chrome_devtools",
    "stop_chrome_devtools",
    "shell",
    "set_cwd",
    "list_files",
    "read_file",
    "write_file",
    "file_transfer",
    "network_log",
    "save_snapshot",
    "list_snapshots",
    "restore_snapshot",
    "reset_computer",
    "delete_snapshot",
    "start_recording",
    "recording_note",
    "stop_recording",
];

/// Tools that are not steps of a recording: they start, stop or end it;
/// a handoff is one step of its own, kept when it ends (see
/// `tools::handoff`).
const NOT_RECORDED: [&str; 6] = [
    "start_recording",
    "stop_recording",
    "end_session",
    "request_handoff",
    "wait_handoff",
    "cancel_handoff",
];

#[derive(Clone)]
pub struct ComputerUseServer {
    caller: Arc<Caller>,
}

/// The tools, routed and listed, built once per process: over HTTP rmcp
/// builds a server for every request that has no MCP session.
struct Catalog {
    router: ToolRouter<ComputerUseServer>,
    /// In [`ORDER`].
    listed: Vec<Tool>,
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let router = ComputerUseServer::router();
        let listed = ORDER
            .iter()
            .filter_map(|name| router.get(name).cloned())
            .map(published)
            .collect();
        Catalog { router, listed }
    })
}

/// A tool as clients see it: its schemas made plain (see [`schema`]).
fn published(mut tool: Tool) -> Tool {
    tool.input_schema = Arc::new(schema::publish_input(&tool.input_schema));
    if let Some(output) = &tool.output_schema {
        tool.output_schema = Some(Arc::new(schema::publish_output(output)));
    }
    tool
}

/// Whose calls a server answers, and so which agent's sessions they reach.
enum Caller {
    /// The one agent of a stdio process.
    Fixed(Arc<Agent>),
    /// An HTTP service. One that serves an MCP session (an `initialize`
    /// came) gets its own agent, which ends with the session. Requests
    /// without a session (the 2026-07-28 revision has none; each request
    /// stands alone and the session_id is the only handle) share one agent
    /// that lives as long as the process.
    Http {
        tenant: Arc<Tenant>,
        own: OnceLock<Arc<Agent>>,
        sessionless: Arc<Agent>,
        /// The tenant's count of MCP sessions, held while this one lives
        /// (reserved by `serve::http` before the `initialize` came in).
        slot: OnceLock<crate::tenant::SessionSlot>,
    },
}

impl ComputerUseServer {
    /// A server for one agent, as stdio has.
    pub fn new(agent: Arc<Agent>) -> ComputerUseServer {
        Self::with_caller(Caller::Fixed(agent))
    }

    /// A server for one tenant's HTTP service; see [`Caller::Http`].
    pub fn for_http(tenant: Arc<Tenant>, sessionless: Arc<Agent>) -> ComputerUseServer {
        Self::with_caller(Caller::Http {
            tenant,
            own: OnceLock::new(),
            sessionless,
            slot: OnceLock::new(),
        })
    }

    fn with_caller(caller: Caller) -> ComputerUseServer {
        ComputerUseServer {
            caller: Arc::new(caller),
        }
    }

    /// The agent this call belongs to.
    pub fn agent(&self) -> &Arc<Agent> {
        match self.caller.as_ref() {
            Caller::Fixed(agent) => agent,
            Caller::Http {
                own, sessionless, ..
            } => own.get().unwrap_or(sessionless),
        }
    }

    /// Every tool of every area.
    pub fn router() -> ToolRouter<ComputerUseServer> {
        Self::session_tools()
            + Self::desktop_tools()
            + Self::devtools_tools()
            + Self::shell_tools()
            + Self::file_tools()
            + Self::transfer_tools()
            + Self::recording_tools()
            + Self::handoff_tools()
            + Self::network_tools()
            + Self::snapshot_tools()
    }

    /// Calls route `E` of session `id` and reads its answer, every failure
    /// explained for the agent (see [`Agent::reach`], [`Agent::answer`]).
    /// `still_running` says what a timeout after `deadline` leaves behind.
    pub(super) async fn session_call<E: Endpoint<Key = SessionId>>(
        &self,
        id: &SessionId,
        body: &E::Request,
        deadline: Duration,
        still_running: &'static str,
    ) -> Result<E::Response, ToolError> {
        let conn = self.reach(id).await?;
        let answered = conn
            .client
            .send::<E>(id, body, deadline, still_running)
            .await;
        self.answer(id, answered).await
    }

    /// The connection for a call on session `id`, see [`Agent::reach`].
    pub(super) async fn reach(&self, id: &SessionId) -> Result<Arc<Connection>, ToolError> {
        Ok(self.agent().reach(id).await?)
    }

    /// A computerd answer for the agent, see [`Agent::answer`].
    pub(super) async fn answer<T>(
        &self,
        id: &SessionId,
        result: Result<T, crate::client::ClientError>,
    ) -> Result<T, ToolError> {
        self.agent()
            .answer(id, result)
            .await
            .map_err(ToolError::Computer)
    }
}

const INSTRUCTIONS: &str = "Gives you a Linux desktop (Debian 13) shared with other agents and with people watching. Call start_computer with a short title to get a session_id, then computer_observe to see your screen, computer_act to click and type, open_path and launch_app to open pages, files and apps on your screen, shell to run commands, and the file tools to read and write files. Call end_session when done.";

impl ServerHandler for ComputerUseServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "computer-use",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    /// An MCP session starts: over HTTP it gets its own agent here.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Caller::Http {
            tenant, own, slot, ..
        } = self.caller.as_ref()
        {
            own.get_or_init(|| Arc::new(Agent::new(Arc::clone(tenant))));
            let reserved = context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<crate::tenant::SessionSlot>());
            if let Some(reserved) = reserved {
                let _ = slot.set(reserved.clone());
            }
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: catalog().listed.clone(),
            ..Default::default()
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        catalog().router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        // An agent that misspells a tool reads the list and tries again,
        // as with any other mistake in a call.
        let router = &catalog().router;
        if !router.has_route(&name) {
            return Ok(failed(ToolError::UnknownTool {
                known: ORDER.join(", "),
                name,
            }));
        }
        let recording = self.recording_of(&name, request.arguments.as_ref());
        let arguments = recording.as_ref().and(request.arguments.clone());
        let started_at = crate::recording::now_rfc3339();
        let started = std::time::Instant::now();
        let cancelled = context.ct.clone();
        let call = ToolCallContext::new(self, request, context);
        let mut response = guard(&name, router.call(call), cancelled.cancelled()).await;
        if let (Some(recording), Ok(answered)) = (recording, response.as_mut()) {
            let took = started.elapsed().as_millis() as u64;
            recording.record_call(&name, arguments.as_ref(), started_at, took, answered);
            if let (Some(notice), CallToolResponse::Complete(result)) =
                (recording.full_notice(), answered)
            {
                result.content.push(rmcp::model::ContentBlock::text(notice));
            }
        }
        response
    }
}

impl ComputerUseServer {
    /// The recording a call of tool `name` is a step of, if any.
    fn recording_of(
        &self,
        name: &str,
        arguments: Option<&rmcp::model::JsonObject>,
    ) -> Option<Arc<crate::recording::HostRecording>> {
        if NOT_RECORDED.contains(&name) {
            return None;
        }
        let id = SessionId::parse(arguments?.get("session_id")?.as_str()?).ok()?;
        self.agent().recording(&id)
    }
}

/// An `isError` result with the error's message.
fn failed(error: ToolError) -> CallToolResponse {
    CallToolResult::error(error.into_contents()).into()
}

/// Runs one tool call to its result. A cancelled call drops `run`, which
/// stops what it started: an HTTP stream closes, a transfer removes its
/// temporary files. A panic inside the tool becomes a tool error: rmcp
/// sends no answer for a request whose handler panicked, so the call would
/// otherwise hang.
async fn guard(
    name: &str,
    run: impl Future<Output = Result<CallToolResponse, ErrorData>>,
    cancelled: impl Future<Output = ()>,
) -> Result<CallToolResponse, ErrorData> {
    let run = AssertUnwindSafe(run).catch_unwind();
    tokio::select! {
        outcome = run => outcome.unwrap_or_else(|panic| Ok(failed(ToolError::Panicked {
            tool: name.to_string(),
            reason: panic_text(panic.as_ref()).to_string(),
        }))),
        _ = cancelled => Ok(failed(ToolError::Cancelled { tool: name.to_string() })),
    }
}

/// What a panic said, when it said it as text.
fn panic_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::InvalidInput;
    use std::future::pending;

    fn text(response: &Result<CallToolResponse, ErrorData>) -> String {
        match response {
            Ok(CallToolResponse::Complete(result)) => {
                assert_eq!(result.is_error, Some(true));
                serde_json::to_value(&result.content).unwrap().to_string()
            }
            other => panic!("not a tool result: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_panicking_tool_answers_with_an_error() {
        let run = async {
            let mtime = u64::MAX;
            let _ = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
            Ok(failed(ToolError::Invalid(InvalidInput(
                "unreachable".into(),
            ))))
        };
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            guard("file_transfer", run, pending()),
        )
        .await
        .expect("a panicking tool answers at once");
        let shown = text(&result);
        assert!(
            shown.contains("`file_transfer` failed inside computer-use-mcp")
                && shown.contains("overflow"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_panic_on_a_blocking_thread_is_caught_too() {
        let run = async {
            crate::blocking::run(|| -> Result<CallToolResponse, ErrorData> {
                panic!("unpacking blew up")
            })
            .await
        };
        let result = guard("file_transfer", run, pending()).await;
        assert!(
            text(&result).contains("unpacking blew up"),
            "{}",
            text(&result)
        );
    }

    #[tokio::test]
    async fn results_and_cancellation_pass_through() {
        let ok = guard(
            "shell",
            async { Ok(failed(ToolError::Invalid(InvalidInput("e".into())))) },
            pending(),
        )
        .await;
        assert!(text(&ok).contains('e'));
        let cancelled = guard("shell", pending(), async {}).await;
        assert!(
            text(&cancelled).contains("`shell` was cancelled"),
            "{}",
            text(&cancelled)
        );
    }

    /// What a model reads of the tools on every request: their
    /// descriptions and input schemas, as compact JSON.
    #[test]
    fn the_tool_definitions_fit_their_budget_and_use_standard_formats() {
        const BUDGET: usize = 18_000;
        let listed = &catalog().listed;
        let size: usize = listed
            .iter()
            .map(|t| {
                t.description.as_deref().map_or(0, str::len)
                    + serde_json::to_string(&t.input_schema).unwrap().len()
            })
            .sum();
        assert!(
            size <= BUDGET,
            "the tool definitions are {size} characters, over {BUDGET}: say less, or say it once"
        );
        for tool in listed {
            for schema in [Some(&tool.input_schema), tool.output_schema.as_ref()]
                .into_iter()
                .flatten()
            {
                let text = serde_json::to_string(schema).unwrap();
                for rust_format in ["int8", "int16", "int32", "int64", "uint", "double", "float"] {
                    assert!(
                        !text.contains(&format!("\"format\":\"{rust_format}")),
                        "{} publishes the format {rust_format}",
                        tool.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_tool_is_listed_once_in_order() {
        let router = ComputerUseServer::router();
        let mut routed: Vec<_> = router.list_all().into_iter().map(|t| t.name).collect();
        routed.sort();
        let mut ordered: Vec<_> = ORDER.iter().map(|n| n.to_string()).collect();
        ordered.sort();
        assert_eq!(
            routed.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            ordered
        );
        for tool in router.list_all() {
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert!(annotations.title.is_some(), "{} has a title", tool.name);
            assert!(tool.title.is_some(), "{} has a title", tool.name);
            assert!(annotations.read_only_hint.is_some());
            assert!(annotations.destructive_hint.is_some());
            assert!(annotations.idempotent_hint.is_some());
            assert!(annotations.open_world_hint.is_some());
        }
    }
}
