//! start_computer and end_session.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, SessionArgs, StartComputerArgs};
use crate::mcp::result::structured;
use computer_protocol::{
    check_viewer_key, routes, ComputerInfo, CreateSessionRequest, CreateSessionResponse,
    EndSessionResponse, SessionId,
};
use reqwest::Method;
use rmcp::model::JsonObject;
use std::time::Duration;

const API_DEADLINE: Duration = Duration::from_secs(30);

pub async fn start_computer(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: StartComputerArgs = parse(arguments)?;
    let _one_at_a_time = host.link().starting.lock().await;
    let started = crate::computer::start(&host.owner).await?;
    let settings = started.session_settings.clone();
    let request = CreateSessionRequest {
        title: a.title,
        owner: host.owner.clone(),
        settings,
    };
    request.validate()?;
    let client = &started.client;
    let info: ComputerInfo = client
        .call(
            Method::GET,
            routes::COMPUTER,
            None::<&()>,
            API_DEADLINE,
            "nothing keeps running",
        )
        .await
        .map_err(|e| e.to_string())?;
    // The key goes into links and command lines (the browser opener, the
    // VNC viewer); a tampered computer must not choose what they run.
    check_viewer_key(&info.viewer_key).map_err(|e| e.to_string())?;
    let created: CreateSessionResponse = client
        .call(
            Method::POST,
            routes::SESSIONS,
            Some(&request),
            API_DEADLINE,
            "a session may have started; it ends by itself within a minute",
        )
        .await
        .map_err(|e| e.to_string())?;
    let viewer_url = format!(
        "http://127.0.0.1:{}/#key={}",
        started.port_base, info.viewer_key
    );
    let conn = host.set_connection(crate::link::Connection {
        client: started.client.clone(),
        viewer_url: viewer_url.clone(),
        container: started.container.clone(),
        image: started.image.clone(),
        state: started.state.clone(),
        boot_id: info.boot_id.clone(),
        shell_timeout_max: started.shell_timeout_max,
        open: started.open,
        vnc_viewer: started.vnc_viewer.clone(),
        port_base: started.port_base,
        viewer_key: info.viewer_key.clone(),
        docker: started.docker.clone(),
        container_id: started.container_id.clone(),
    });
    host.remember(created.session_id.clone(), info.boot_id);
    let payload = serde_json::json!({
        "session_id": created.session_id,
        "viewer_url": viewer_url,
        "computer": {"name": conn.container, "image": conn.image, "state": conn.state},
        "cwd": created.cwd,
    });
    let text = format!(
        "Session {} started on computer `{}` ({}). Working folder: {}. A person can watch at {}. Call computer_observe to open this session's screen.",
        created.session_id, conn.container, conn.state, created.cwd, viewer_url
    );
    Ok(structured(text, &payload))
}

pub async fn end_session(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: SessionArgs = parse(arguments)?;
    let conn = host.reach(&a.session_id).await?;
    let id = SessionId(a.session_id.clone());
    let ended = conn
        .client
        .call(
            Method::DELETE,
            &routes::session(&id),
            None::<&()>,
            API_DEADLINE,
            "the session may still be ending; it ends by itself within a minute",
        )
        .await;
    let r: EndSessionResponse = host.answer(&a.session_id, ended).await?;
    host.forget(&id);
    let text = match r.screen {
        Some(n) => format!(
            "Session {} ended; screen {n} closed. Files are untouched.",
            r.session_id
        ),
        None => format!("Session {} ended. Files are untouched.", r.session_id),
    };
    Ok(structured(
        text,
        &serde_json::json!({"session_id": r.session_id, "screen": r.screen, "ended": true}),
    ))
}
