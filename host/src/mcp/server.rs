//! The MCP server: lists the tools and routes each call to its tool.

use super::catalog;
use super::result::error;
use super::state::Host;
use super::tools::{desktop, files, session, shell, transfer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

#[derive(Clone)]
pub struct ComputerUseServer {
    pub host: Arc<Host>,
    tools: Arc<Vec<Tool>>,
}

impl ComputerUseServer {
    pub fn new(host: Arc<Host>) -> ComputerUseServer {
        ComputerUseServer {
            host,
            tools: Arc::new(catalog::tools()),
        }
    }
}

const INSTRUCTIONS: &str = "Gives you a Linux desktop (Debian 13) shared with other agents and with people watching. Call start_computer with a short title to get a session_id, then computer_observe to see your screen, computer_act to click and type, shell to run commands, and the file tools to read and write files. Call end_session when done.";

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
        // A cancelled call drops `run`, which stops what it started: an
        // HTTP stream closes, a transfer removes its temporary files.
        let outcome = tokio::select! {
            outcome = run => outcome,
            _ = context.ct.cancelled() => Err(format!("`{name}` was cancelled")),
        };
        Ok(match outcome {
            Ok(result) => result,
            Err(message) => error(message),
        }
        .into())
    }
}
