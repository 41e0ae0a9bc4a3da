//! start_chrome_devtools and stop_chrome_devtools: Chrome DevTools' own MCP
//! tools for the session's browser, which the agent calls through `shell`.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, SessionArgs};
use crate::mcp::result::structured;
use crate::settings::{process_env, DevtoolsSettings};
use computer_protocol::routes::{session_action, SessionRoute};
use computer_protocol::{DevToolsStartRequest, DevToolsStarted, DevToolsStopped, SessionId};
use reqwest::Method;
use rmcp::model::JsonObject;
use std::time::Duration;

/// A browser start (30 s), `mcpc connect` (60 s) and the tool list (60 s)
/// fit inside this.
const START_DEADLINE: Duration = Duration::from_secs(180);
const STOP_DEADLINE: Duration = Duration::from_secs(60);

pub async fn start(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: SessionArgs = parse(arguments)?;
    let settings =
        DevtoolsSettings::for_start_chrome_devtools(&process_env()).map_err(|e| e.to_string())?;
    let conn = host.reach(&a.session_id).await?;
    let path = session_action(
        &SessionId(a.session_id.clone()),
        SessionRoute::DevToolsStart,
    );
    let req = DevToolsStartRequest {
        idle_secs: settings.idle.as_secs().max(1),
    };
    let answer = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&req),
            START_DEADLINE,
            "the browser or the bridge may still be starting; call start_chrome_devtools again",
        )
        .await;
    let started: DevToolsStarted = host.answer(&a.session_id, answer).await?;
    host.announce_screen(&a.session_id);
    Ok(structured(instructions(&started), &started))
}

pub async fn stop(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: SessionArgs = parse(arguments)?;
    let conn = host.reach(&a.session_id).await?;
    let path = session_action(&SessionId(a.session_id.clone()), SessionRoute::DevToolsStop);
    let answer = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&serde_json::json!({})),
            STOP_DEADLINE,
            "the bridge may still be stopping",
        )
        .await;
    let stopped: DevToolsStopped = host.answer(&a.session_id, answer).await?;
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
