//! computer_observe, computer_act, open_path and launch_app.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, ActArgs, LaunchAppArgs, ObserveArgs, OpenPathArgs};
use crate::mcp::result::{structured, with_image};
use crate::settings::{process_env, FrameDefaults};
use computer_protocol::limits::SETTLE_DEFAULT_MS;
use computer_protocol::routes::{session_action, SessionRoute};
use computer_protocol::textview::TEXT_VIEW_MAX_CHARS;
use computer_protocol::{
    ActRequest, ActResponse, Action, FrameId, FrameOptions, ImageFormat, LaunchAppRequest,
    Observation, ObserveRequest, OpenPathRequest, OpenSettle, OpenedResponse, SessionId, Settling,
    TextViewOptions,
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
    let shown = if observation.frame_width == observation.region.width
        && observation.frame_height == observation.region.height
    {
        String::new()
    } else {
        format!(
            ", shown at {}x{} (scale {:.4}; pass frame_id {} to computer_act to click in this frame's pixels)",
            observation.frame_width,
            observation.frame_height,
            observation.scale,
            observation.frame_id
        )
    };
    let region = &observation.region;
    let zoom = if region.width == observation.width && region.height == observation.height {
        String::new()
    } else {
        format!(
            ", region {}x{} at ({}, {})",
            region.width, region.height, region.x, region.y
        )
    };
    let facts = format!(
        "frame {} at {}, screen {}x{}{zoom}{shown}, cursor ({}, {}), active window: {}",
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
    let text = if observation.image_base64.is_none()
        && observation.bytes == 0
        && !observation.unchanged
    {
        format!("{prefix}Screen: {facts}.")
    } else if observation.unchanged {
        format!("{prefix}The screen has not changed since your previous screenshot, so no image is attached ({facts}).")
    } else {
        format!("{prefix}Screenshot: {facts}.")
    };
    let mut payload = serde_json::to_value(&observation).unwrap_or_default();
    if let (Some(map), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
        map.remove("image_base64");
        for (k, v) in extra {
            map.insert(k.clone(), v.clone());
        }
    }
    let text = match &observation.reduced {
        Some(why) => format!("{text} Note: {why}."),
        None => text,
    };
    let text = match &observation.text_view {
        Some(view) => format!("{text}\nText view {}:\n{}", view.view_id, view.render()),
        None => text,
    };
    let image = observation.image_base64.clone();
    let result = structured(text, &payload);
    match image {
        Some(data) => with_image(result, data, observation.format.mime()),
        None => result,
    }
}

/// A text view from the computer is held to what was asked: at most
/// `max_nodes` nodes and a bounded text, so a hostile computer cannot
/// flood the agent's context.
fn check_text_view(observation: &Observation, asked: &TextViewOptions) -> Result<(), String> {
    let Some(view) = &observation.text_view else {
        return if asked.view.wants_text() {
            Err(
                "the computer answered without the text view it was asked for; observe again"
                    .into(),
            )
        } else {
            Ok(())
        };
    };
    let nodes = view.node_count();
    if nodes > asked.max_nodes() {
        return Err(format!(
            "the computer sent a text view of {nodes} nodes where {} were asked for; it was refused",
            asked.max_nodes()
        ));
    }
    let chars = view.render().len();
    if chars > TEXT_VIEW_MAX_CHARS {
        return Err(format!(
            "the computer sent a text view of {chars} characters, over the limit of {TEXT_VIEW_MAX_CHARS}; it was refused"
        ));
    }
    Ok(())
}

/// The frame an agent asked for; without `max_side` the host's defaults
/// bound both its longest side and its pixel count.
fn frame_options(
    max_side: Option<u32>,
    format: Option<ImageFormat>,
    quality: Option<u8>,
) -> Result<FrameOptions, String> {
    let options = match max_side {
        Some(side) => FrameOptions {
            max_side: Some(side),
            max_pixels: None,
            format: format.unwrap_or_default(),
            quality,
        },
        None => {
            let defaults = FrameDefaults::from_env(&process_env()).map_err(|e| e.to_string())?;
            FrameOptions {
                max_side: Some(defaults.max_side),
                max_pixels: Some(defaults.max_pixels),
                format: format.unwrap_or_default(),
                quality,
            }
        }
    };
    options.validate()?;
    Ok(options)
}

pub async fn observe(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: ObserveArgs = parse(arguments)?;
    let text = TextViewOptions {
        view: a.view,
        window: a.window,
        max_nodes: a.max_nodes,
        cursor: a.cursor,
    };
    text.validate()?;
    let req = ObserveRequest {
        frame: frame_options(a.max_side, a.format, a.quality)?,
        region: a.region,
        text: text.clone(),
    };
    let conn = host.reach(&a.session_id).await?;
    let path = session_action(&SessionId(a.session_id.clone()), SessionRoute::Observe);
    let observed = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&req),
            OBSERVE_DEADLINE,
            NOTHING_RUNS,
        )
        .await;
    let o: Observation = host.answer(&a.session_id, observed).await?;
    check_text_view(&o, &text)?;
    host.announce_screen(&a.session_id);
    Ok(observation_result(String::new(), o, serde_json::json!({})))
}

pub async fn act(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: ActArgs = parse(arguments)?;
    let settling = Settling::resolve(a.settle, a.settle_ms, a.quiet_ms, SETTLE_DEFAULT_MS);
    let req = ActRequest {
        actions: a.actions,
        observe: a.observe,
        settle_ms: settling.settle_ms,
        frame_id: a.frame_id.map(FrameId),
        frame: frame_options(a.max_side, a.format, a.quality)?,
        settle: settling.settle,
        quiet_ms: settling.quiet_ms,
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
    if r.observation.is_some() {
        summary.push(' ');
        summary.push_str(&settle_sentence(
            r.settled,
            r.settle_waited_ms,
            "the last action",
        ));
    }
    let outcomes = serde_json::json!({
        "outcomes": r.outcomes,
        "requested": r.requested,
        "settled": r.settled,
        "settle_waited_ms": r.settle_waited_ms,
    });
    Ok(match r.observation {
        Some(o) => observation_result(format!("{summary}\n"), o, outcomes),
        None => structured(summary, &outcomes),
    })
}

/// When the screenshot was taken, for the agent.
fn settle_sentence(settled: bool, waited_ms: u64, after: &str) -> String {
    if settled {
        format!("Screenshot taken {waited_ms} ms after {after}.")
    } else {
        format!("The screen was still changing when the {waited_ms} ms wait ran out; this screenshot may catch it mid-change.")
    }
}

/// Starting a browser, loading a page (15 s) or waiting for an app's
/// window (20 s), plus the screenshot, fit well inside this.
const OPEN_DEADLINE: Duration = Duration::from_secs(60);
const OPEN_MAY_RUN: &str =
    "what was being opened may still appear; observe the screen to see where things stand";

pub async fn open_path(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: OpenPathArgs = parse(arguments)?;
    let req = OpenPathRequest {
        target: a.target,
        frame: frame_options(a.max_side, a.format, a.quality)?,
        settling: OpenSettle {
            settle: a.settle,
            settle_ms: a.settle_ms,
            quiet_ms: a.quiet_ms,
        },
    };
    req.validate()?;
    let settling = req.settling.settling();
    opened(host, &a.session_id, SessionRoute::OpenPath, &req, settling).await
}

pub async fn launch_app(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: LaunchAppArgs = parse(arguments)?;
    let req = LaunchAppRequest {
        app: a.app,
        uri: a.uri,
        frame: frame_options(a.max_side, a.format, a.quality)?,
        settling: OpenSettle {
            settle: a.settle,
            settle_ms: a.settle_ms,
            quiet_ms: a.quiet_ms,
        },
    };
    req.validate()?;
    let settling = req.settling.settling();
    opened(host, &a.session_id, SessionRoute::LaunchApp, &req, settling).await
}

/// Calls an opening route and shows what opened with the screenshot.
async fn opened<T: serde::Serialize>(
    host: &Agent,
    session_id: &str,
    route: SessionRoute,
    req: &T,
    settling: Settling,
) -> ToolResult {
    let conn = host.reach(session_id).await?;
    let path = session_action(&SessionId(session_id.to_string()), route);
    let deadline = OPEN_DEADLINE + Duration::from_millis(settling.settle_ms);
    let answer = conn
        .client
        .call(Method::POST, &path, Some(req), deadline, OPEN_MAY_RUN)
        .await;
    let r: OpenedResponse = host.answer(session_id, answer).await?;
    host.announce_screen(session_id);
    let extra = serde_json::json!({
        "summary": r.summary,
        "ready": r.ready,
        "settled": r.settled,
        "settle_waited_ms": r.settle_waited_ms,
    });
    let waited = settle_sentence(r.settled, r.settle_waited_ms, "it opened");
    Ok(observation_result(
        format!("{} {waited}\n", r.summary),
        r.observation,
        extra,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::{Cursor, Region, TextNode, TextView, View};

    fn observation(nodes: usize, name_len: usize) -> Observation {
        let node = |i: usize| TextNode {
            node_ref: format!("e{i}"),
            role: "button".into(),
            name: "x".repeat(name_len),
            value: None,
            states: vec![],
            bounds: None,
            children: vec![],
        };
        Observation {
            frame_id: FrameId(1),
            captured_at: String::new(),
            width: 10,
            height: 10,
            cursor: Cursor { x: 0, y: 0 },
            active_window: None,
            unchanged: false,
            frame_width: 10,
            frame_height: 10,
            scale: 1.0,
            region: Region {
                x: 0,
                y: 0,
                width: 10,
                height: 10,
            },
            format: ImageFormat::Png,
            bytes: 0,
            reduced: None,
            image_base64: None,
            text_view: Some(TextView {
                view_id: 1,
                windows: vec![],
                window: None,
                source: None,
                nodes: (0..nodes).map(node).collect(),
                total_nodes: nodes,
                offset: 0,
                note: None,
                cursor: None,
                unchanged: false,
            }),
        }
    }

    #[test]
    fn a_text_view_over_what_was_asked_is_refused() {
        let asked = TextViewOptions {
            view: View::Text,
            max_nodes: Some(10),
            ..Default::default()
        };
        assert_eq!(check_text_view(&observation(10, 5), &asked), Ok(()));
        let err = check_text_view(&observation(11, 5), &asked).unwrap_err();
        assert!(err.contains("11 nodes") && err.contains("10"), "{err}");
        // Names far over the field limit: the text as a whole is bounded.
        let many = TextViewOptions {
            view: View::Text,
            max_nodes: Some(5000),
            ..Default::default()
        };
        let err = check_text_view(&observation(5000, 400), &many).unwrap_err();
        assert!(err.contains("characters"), "{err}");
        let mut missing = observation(1, 1);
        missing.text_view = None;
        assert!(check_text_view(&missing, &asked).is_err());
    }
}
