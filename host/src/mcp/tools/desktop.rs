//! computer_observe, computer_act, open_path and launch_app.

use super::ToolResult;
use crate::mcp::args::{parse, ActArgs, LaunchAppArgs, OpenPathArgs, SessionArgs};
use crate::mcp::result::{structured, with_image};
use crate::mcp::state::Host;
use computer_protocol::routes::{session_action, SessionRoute};
use computer_protocol::{
    ActRequest, ActResponse, Action, LaunchAppRequest, Observation, OpenPathRequest,
    OpenedResponse, SessionId,
};
use reqwest::Method;
use rmcp::model::{CallToolResult, JsonObject};
use std::time::Duration;

/// Opening a screen and capturing it fits well inside this.
const OBSERVE_DEADLINE: Duration = Duration::from_secs(30);
const NOTHING_RUNS: &str = "nothing keeps running; observe again";

/// The result of an observation: a line of facts, the structured payload,
/// and the PNG unless the frame is unchanged.
pub fn observation_result(
    prefix: String,
    observation: Observation,
    extra: serde_json::Value,
) -> CallToolResult {
    let facts = format!(
        "frame {} at {}, {}x{}, cursor ({}, {}), active window: {}",
        observation.frame_id,
        observation.captured_at,
        observation.width,
        observation.height,
        observation.cursor.x,
        observation.cursor.y,
        observation
            .active_window
            .as_deref()
            .map(|t| format!("\"{t}\""))
            .unwrap_or_else(|| "none".into()),
    );
    let text = if observation.unchanged {
        format!("{prefix}The screen has not changed since your previous screenshot, so no image is attached ({facts}).")
    } else {
        format!("{prefix}Screenshot: {facts}.")
    };
    let mut payload = serde_json::to_value(&observation).unwrap_or_default();
    if let (Some(map), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
        map.remove("png_base64");
        for (k, v) in extra {
            map.insert(k.clone(), v.clone());
        }
    }
    let png = observation.png_base64.clone();
    let result = structured(text, &payload);
    match png {
        Some(data) => with_image(result, data, "image/png"),
        None => result,
    }
}

pub async fn observe(host: &Host, arguments: Option<JsonObject>) -> ToolResult {
    let a: SessionArgs = parse(arguments)?;
    let conn = host.reach(&a.session_id).await?;
    let path = session_action(&SessionId(a.session_id.clone()), SessionRoute::Observe);
    let observed = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&serde_json::json!({})),
            OBSERVE_DEADLINE,
            NOTHING_RUNS,
        )
        .await;
    let o: Observation = host.answer(&a.session_id, observed).await?;
    host.announce_screen(&a.session_id);
    Ok(observation_result(String::new(), o, serde_json::json!({})))
}

pub async fn act(host: &Host, arguments: Option<JsonObject>) -> ToolResult {
    let a: ActArgs = parse(arguments)?;
    let req = ActRequest {
        actions: a.actions,
        observe: a.observe,
        settle_ms: a.settle_ms,
    };
    req.validate()?;
    let waits: u64 = req
        .actions
        .iter()
        .map(|action| match action {
            Action::Wait { ms } => *ms,
            // A focus may start an app and wait for its window.
            Action::Focus { .. } => 20_000,
            _ => 0,
        })
        .sum();
    let deadline = OBSERVE_DEADLINE + Duration::from_millis(waits + req.settle_ms);
    let conn = host.reach(&a.session_id).await?;
    let path = session_action(&SessionId(a.session_id.clone()), SessionRoute::Act);
    let acted = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&req),
            deadline,
            "some actions may have run; observe the screen to see where things stand",
        )
        .await;
    let r: ActResponse = host.answer(&a.session_id, acted).await?;
    host.announce_screen(&a.session_id);
    let done = r.outcomes.iter().filter(|o| o.ok).count();
    let mut summary = format!("{done} of {} actions done.", r.requested);
    if let Some(failed) = r.outcomes.iter().find(|o| !o.ok) {
        summary.push_str(&format!(
            " Action {} ({}) failed: {}. The actions after it did not run.",
            failed.index,
            failed.kind,
            failed.error.as_deref().unwrap_or("unknown error")
        ));
    }
    let outcomes = serde_json::json!({"outcomes": r.outcomes, "requested": r.requested});
    Ok(match r.observation {
        Some(o) => observation_result(format!("{summary}\n"), o, outcomes),
        None => structured(summary, &outcomes),
    })
}

/// Starting a browser, loading a page (15 s) or waiting for an app's
/// window (20 s), plus the screenshot, fit well inside this.
const OPEN_DEADLINE: Duration = Duration::from_secs(60);
const OPEN_MAY_RUN: &str =
    "what was being opened may still appear; observe the screen to see where things stand";

pub async fn open_path(host: &Host, arguments: Option<JsonObject>) -> ToolResult {
    let a: OpenPathArgs = parse(arguments)?;
    if a.target.trim().is_empty() {
        return Err("`target` is empty: give an http(s) URL or a path on the computer".into());
    }
    let req = OpenPathRequest { target: a.target };
    opened(host, &a.session_id, SessionRoute::OpenPath, &req).await
}

pub async fn launch_app(host: &Host, arguments: Option<JsonObject>) -> ToolResult {
    let a: LaunchAppArgs = parse(arguments)?;
    if a.app.trim().is_empty() {
        return Err("`app` is empty: give `browser`, `terminal`, an installed app's name or a program on PATH".into());
    }
    let req = LaunchAppRequest {
        app: a.app,
        uri: a.uri,
    };
    opened(host, &a.session_id, SessionRoute::LaunchApp, &req).await
}

/// Calls an opening route and shows what opened with the screenshot.
async fn opened<T: serde::Serialize>(
    host: &Host,
    session_id: &str,
    route: SessionRoute,
    req: &T,
) -> ToolResult {
    let conn = host.reach(session_id).await?;
    let path = session_action(&SessionId(session_id.to_string()), route);
    let answer = conn
        .client
        .call(Method::POST, &path, Some(req), OPEN_DEADLINE, OPEN_MAY_RUN)
        .await;
    let r: OpenedResponse = host.answer(session_id, answer).await?;
    host.announce_screen(session_id);
    let extra = serde_json::json!({"summary": r.summary, "ready": r.ready});
    Ok(observation_result(
        format!("{}\n", r.summary),
        r.observation,
        extra,
    ))
}
