//! The MCP server: lists the tools and routes each call to its tool.

use super::catalog;
use super::result::error;
use super::tools::ToolResult;
use super::tools::{desktop, devtools, files, session, shell, transfer};
use crate::agent::Agent;
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

#[derive(Clone)]
pub struct ComputerUseServer {
    pub host: Arc<Agent>,
    tools: Arc<Vec<Tool>>,
}

impl ComputerUseServer {
    pub fn new(host: Arc<Agent>) -> ComputerUseServer {
        ComputerUseServer {
            host,
            tools: Arc::new(catalog::tools()),
        }
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

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools.as_ref().clone(),
            ..Default::default()
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let host = &self.host;
        let args = request.arguments;
        let name = request.name.to_string();
        let run = async {
            match name.as_str() {
                "start_computer" => session::start_computer(host, args).await,
                "end_session" => session::end_session(host, args).await,
                "computer_observe" => desktop::observe(host, args).await,
                "computer_act" => desktop::act(host, args).await,
                "shell" => shell::shell(host, args).await,
                "open_path" => desktop::open_path(host, args).await,
                "launch_app" => desktop::launch_app(host, args).await,
                "start_chrome_devtools" => devtools::start(host, args).await,
                "stop_chrome_devtools" => devtools::stop(host, args).await,
                "set_cwd" => files::set_cwd(host, args).await,
                "list_files" => files::list_files(host, args).await,
                "read_file" => files::read_file(host, args).await,
                "write_file" => files::write_file(host, args).await,
                "file_transfer" => transfer::file_transfer(host, args, &context).await,
                other => Err(format!(
                    "there is no tool `{other}`; the tools are: {}",
                    self.tools
                        .iter()
                        .map(|t| t.name.as_ref())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        };
        Ok(settle(&name, run, context.ct.cancelled()).await.into())
    }
}

/// Runs one tool call to its result. A cancelled call drops `run`, which
/// stops what it started: an HTTP stream closes, a transfer removes its
/// temporary files. A panic inside the tool becomes a tool error: rmcp
/// sends no answer for a request whose handler panicked, so the call would
/// otherwise hang.
async fn settle(
    name: &str,
    run: impl Future<Output = ToolResult>,
    cancelled: impl Future<Output = ()>,
) -> CallToolResult {
    let run = AssertUnwindSafe(run).catch_unwind();
    let outcome = tokio::select! {
        outcome = run => outcome.unwrap_or_else(|panic| Err(format!(
            "`{name}` failed inside computer-use-mcp ({}); this is a bug, please report it. The MCP server keeps running; call the tool again or try another way",
            panic_text(panic.as_ref())
        ))),
        _ = cancelled => Err(format!("`{name}` was cancelled")),
    };
    match outcome {
        Ok(result) => result,
        Err(message) => error(message),
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
    use std::future::pending;

    fn text(result: &CallToolResult) -> String {
        serde_json::to_value(&result.content).unwrap().to_string()
    }

    #[tokio::test]
    async fn a_panicking_tool_answers_with_an_error() {
        let run = async {
            let mtime = u64::MAX;
            let _ = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
            Ok(error("unreachable"))
        };
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            settle("file_transfer", run, pending()),
        )
        .await
        .expect("a panicking tool answers at once");
        assert_eq!(result.is_error, Some(true));
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
            tokio::task::spawn_blocking(|| -> ToolResult { panic!("unpacking blew up") })
                .await
                .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
        };
        let result = settle("file_transfer", run, pending()).await;
        assert!(
            text(&result).contains("unpacking blew up"),
            "{}",
            text(&result)
        );
    }

    #[tokio::test]
    async fn results_and_cancellation_pass_through() {
        let ok = settle("shell", async { Ok(error("e")) }, pending()).await;
        assert!(text(&ok).contains('e'));
        let cancelled = settle("shell", pending(), async {}).await;
        assert!(
            text(&cancelled).contains("`shell` was cancelled"),
            "{}",
            text(&cancelled)
        );
    }
}
