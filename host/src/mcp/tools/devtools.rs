//! start_chrome_devtools and stop_chrome_devtools: Chrome DevTools' own MCP
//! tools for the session's browser, which the agent calls through `shell`.

use super::ToolResult;
use crate::mcp::args::{Args, SessionArgs};
use crate::mcp::result::structured;
use crate::mcp::ComputerUseServer;
use crate::settings::{process_env, DevtoolsSettings};
use computer_protocol::endpoints::{DevToolsStart, DevToolsStop, NoBody};
use computer_protocol::{DevToolsStartRequest, DevToolsStarted, DevToolsStopped};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use std::time::Duration;

/// A browser start (30 s), `mcpc connect` (60 s) and the tool list (60 s)
/// fit inside this.
const START_DEADLINE: Duration = Duration::from_secs(180);
const STOP_DEADLINE: Duration = Duration::from_secs(60);

#[tool_router(router = devtools_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "start_chrome_devtools",
        output_schema = schema_for_output::<DevToolsStarted>(),
        title = "Start Chrome DevTools for the screen's browser",
        description = "Start Chrome DevTools' MCP tools (DOM snapshot, console, network, script evaluation, screenshots, traces) for this session's browser, starting it if needed. Call them through shell: `mcpc @cdt-N tools-call <tool> '<json>'` (N and the tools are in the reply). It stops after COMPUTER_USE_DEVTOOLS_IDLE (10m) unused; the next call restarts it, pages kept. Needs COMPUTER_USE_SHELL_TIMEOUT_MAX >= 60.",
        annotations(
            title = "Start Chrome DevTools for the screen's browser",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn start_chrome_devtools(
        &self,
        Parameters(args): Parameters<Args<SessionArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        let settings = DevtoolsSettings::for_start_chrome_devtools(&process_env())?;
        let req = DevToolsStartRequest {
            idle_secs: settings.idle.as_secs().max(1),
        };
        let started = self
            .session_call::<DevToolsStart>(
                &a.session_id,
                &req,
                START_DEADLINE,
                "the browser or the bridge may still be starting; call start_chrome_devtools again",
            )
            .await?;
        self.agent().announce_screen(&a.session_id, started.screen);
        Ok(structured(instructions(&started), &started))
    }

    #[tool(
        name = "stop_chrome_devtools",
        output_schema = schema_for_output::<DevToolsStopped>(),
        title = "Stop Chrome DevTools for the screen's browser",
        description = "Stop this session's DevTools bridge now, freeing about 300 MB. The browser and its pages stay.",
        annotations(
            title = "Stop Chrome DevTools for the screen's browser",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn stop_chrome_devtools(
        &self,
        Parameters(args): Parameters<Args<SessionArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        let stopped = self
            .session_call::<DevToolsStop>(
                &a.session_id,
                &NoBody {},
                STOP_DEADLINE,
                "the bridge may still be stopping",
            )
            .await?;
        let text = if stopped.was_running {
            format!("Stopped the DevTools bridge {} and freed its memory. `mcpc {} ...` now fails until start_chrome_devtools runs again.", stopped.bridge, stopped.bridge)
        } else {
            format!(
                "No DevTools bridge was running for this session ({}); nothing to stop.",
                stopped.bridge
            )
        };
        Ok(structured(text, &stopped))
    }
}

/// How to call the bridge, written for the agent.
fn instructions(s: &DevToolsStarted) -> String {
    let name = &s.bridge;
    let mut text = format!(
        "Chrome DevTools for screen {} is {} as `{name}`, attached to this screen's Chromium (DevTools port {} inside the computer). Call its tools with the shell tool:\n\n  mcpc {name} tools-call <tool> '<json arguments>'\n\nFor example `mcpc {name} tools-call list_pages '{{}}'`, then `mcpc {name} tools-call take_snapshot '{{\"pageId\": 1}}'`. Tools marked [pageId] need the `pageId` that list_pages prints before each page. `mcpc {name} tools-list` describes every argument.\n",
        s.screen, s.state, s.devtools_port
    );
    text.push_str("\nTools:\n");
    for tool in &s.tools {
        let mark = if tool.needs_page_id { " [pageId]" } else { "" };
        text.push_str(&format!("- {}{mark}: {}\n", tool.name, tool.summary));
    }
    text.push_str(&format!(
        "\nThe bridge stops by itself after {} without calls and the next mcpc call starts it again, with the pages kept; stop_chrome_devtools stops it now, and end_session stops it too.",
        computer_protocol::duration::format_duration(Duration::from_secs(s.idle_stop_secs))
    ));
    text
}
