//! computer_observe, computer_act, open_path and launch_app.

use super::ToolResult;
use crate::mcp::args::{ActArgs, Args, FrameRequest, LaunchAppArgs, ObserveArgs, OpenPathArgs};
use crate::mcp::bounds::{
    bound_effect, bound_observation, bound_outcome, cut_text, RefusedAnswer, NOTE_MAX_CHARS,
};
use crate::mcp::effects_text::effect_lines;
use crate::mcp::progress::reporting;
use crate::mcp::result::{structured, with_image};
use crate::mcp::{ComputerUseServer, ToolError};
use crate::settings::{process_env, FrameDefaults};
use computer_protocol::endpoints::{self, Endpoint};
use computer_protocol::limits::{ACTIONS_MAX, SETTLE_DEFAULT_MS};
use computer_protocol::{
    ActRequest, ActResponse, Action, ActionEffect, ActionOutcome, FrameId, FrameOptions,
    LaunchAppRequest, Observation, ObserveRequest, OpenPathRequest, OpenSettle, OpenedResponse,
    SessionId, Settling, TextViewOptions, View,
};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// Opening a screen and capturing it fits well inside this.
const OBSERVE_DEADLINE: Duration = Duration::from_secs(30);
const NOTHING_RUNS: &str = "nothing keeps running; observe again";
/// What the acting tools ask of an observation: a screenshot, no text view.
pub(crate) const IMAGE_ONLY: TextViewOptions = TextViewOptions {
    view: View::Image,
    window: None,
    max_nodes: None,
    cursor: None,
};

/// computer_act's structured result: what ran, and the screenshot's facts
/// when one was taken.
#[derive(Serialize, JsonSchema)]
pub struct Acted {
    /// One outcome per action that ran, in order; the first failure ends them.
    pub outcomes: Vec<ActionOutcome>,
    /// How many actions the batch held.
    pub requested: usize,
    /// False when the screen was still changing as the wait ran out.
    pub settled: bool,
    pub settle_waited_ms: u64,
    /// What each action that ran changed, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<ActionEffect>,
    #[serde(flatten)]
    pub observation: Option<Observation>,
}

/// open_path's and launch_app's structured result.
#[derive(Serialize, JsonSchema)]
pub struct Opened {
    /// What opened, in a sentence.
    pub summary: String,
    /// False when the page was still loading at the deadline.
    pub ready: bool,
    pub settled: bool,
    pub settle_waited_ms: u64,
    #[serde(flatten)]
    pub observation: Observation,
}

/// The result of an observation: a line of facts, the structured payload
/// that `payload` builds from the observation (its image left out), and
/// the image unless the frame is unchanged. Every observation passes the
/// host's bounds here first (`asked`: the text view the agent asked for).
pub fn observation_result<P: Serialize>(
    prefix: String,
    mut observation: Observation,
    asked: &TextViewOptions,
    payload: impl FnOnce(Observation) -> P,
) -> Result<CallToolResult, ToolError> {
    let left_out = bound_observation(&mut observation, asked)?;
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
    let text = match &observation.reduced {
        Some(why) => format!("{text} Note: {why}."),
        None => text,
    };
    let text = left_out
        .iter()
        .fold(text, |text, note| format!("{text} Note: {note}."));
    let text = match &observation.text_view {
        Some(view) => format!("{text}\nText view {}:\n{}", view.view_id, view.render()),
        None => text,
    };
    let image = observation.image_base64.take();
    let mime = observation.format.mime();
    let result = structured(text, &payload(observation));
    Ok(match image {
        Some(data) => with_image(result, data, mime),
        None => result,
    })
}

/// The frame an agent asked for; without `max_side` the host's defaults
/// bound both its longest side and its pixel count.
pub(crate) fn frame_options(request: FrameRequest) -> Result<FrameOptions, ToolError> {
    let FrameRequest {
        max_side,
        format,
        quality,
    } = request;
    let options = match max_side {
        Some(side) => FrameOptions {
            max_side: Some(side),
            max_pixels: None,
            format: format.unwrap_or_default(),
            quality,
        },
        None => {
            let defaults = FrameDefaults::from_env(&process_env())?;
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

#[tool_router(router = desktop_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "computer_observe",
        output_schema = schema_for_output::<Observation>(),
        title = "Screenshot the session's screen",
        description = "Screenshot of this session's own screen (the first call opens it). Large screens come scaled down; computer_act takes the frame_id to use the frame's pixels. Unchanged since this session's last screenshot of the same region and size: no image, unchanged: true. view text lists open menus, dropdowns and tooltips, the windows (topmost first) and one window's accessibility tree, a node per line (`e7 button \"Save\" [focused] @ 412,300 80x28`), from the page in the browser or the accessibility bus (GTK, Qt, LibreOffice; xterm has none); an open <select>'s options are placed in its dropdown, so their refs click them. Over max_nodes or 200000 characters it is cut with a cursor; unchanged, its nodes are left out and refs stay valid.",
        annotations(
            title = "Screenshot the session's screen",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn computer_observe(
        &self,
        Parameters(args): Parameters<Args<ObserveArgs>>,
    ) -> ToolResult {
        let a = args.read()?;
        let frame_request = a.frame();
        let text = TextViewOptions {
            view: a.view,
            window: a.window,
            max_nodes: a.max_nodes,
            cursor: a.cursor,
        };
        text.validate()?;
        let frame = frame_options(frame_request)?;
        let req = ObserveRequest {
            frame,
            region: a.region,
            text: text.clone(),
            force: a.force,
        };
        let o = self
            .session_call::<endpoints::Observe>(&a.session_id, &req, OBSERVE_DEADLINE, NOTHING_RUNS)
            .await?;
        self.agent().announce_screen(&a.session_id, o.screen);
        observation_result(String::new(), o, &text, |o| o)
    }

    #[tool(
        name = "computer_act",
        output_schema = schema_for_output::<Acted>(),
        title = "Act on the session's screen",
        description = "Mouse and keyboard actions on this session's screen, then a screenshot. x/y are screen pixels, or a recent frame's with frame_id; click, move, down, up and scroll take a text view ref instead. Key chords join names (enter, esc, f5, a) with ctrl, alt, shift, super (cmd, meta, win). The 4th identical pointer, scroll or key batch in a row that leaves the screen unchanged is refused. `effects`, per action: `changed` (false: nothing in `watched_ms`, at least 100 ms; absent: too soon to tell), `drawn` (box redrawn, screen px), `focused`, `windows_opened`, `windows_closed`, `popups_opened` (menus, dropdowns), `page` {url, title}; a wait's changes count for the action before it.",
        annotations(
            title = "Act on the session's screen",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn computer_act(
        &self,
        Parameters(args): Parameters<Args<ActArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        let settling = Settling::resolve(a.settle, a.settle_ms, a.quiet_ms, SETTLE_DEFAULT_MS);
        let frame = frame_options(a.frame())?;
        let req = ActRequest {
            actions: a.actions,
            observe: a.observe,
            settle_ms: settling.settle_ms,
            frame_id: a.frame_id.map(FrameId),
            frame,
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
        let acting = self.session_call::<endpoints::Act>(
            &a.session_id,
            &req,
            deadline,
            "some actions may have run; observe the screen to see where things stand",
        );
        let r = reporting(&context, "computer_act still running", acting).await?;
        self.agent().announce_screen(&a.session_id, r.screen);
        act_result(r)
    }

    #[tool(
        name = "open_path",
        output_schema = schema_for_output::<Opened>(),
        title = "Open a page or file on the screen",
        description = "Open an http(s) URL or a file on this session's screen; returns a screenshot once it loaded (or after 15 s, saying so). Pages and HTML, PDF, image, text, JSON and XML files open in the screen's Chromium (signed in wherever the other screens are); other files in their default app. A missing file's error lists its folder.",
        annotations(
            title = "Open a page or file on the screen",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn open_path(&self, Parameters(args): Parameters<Args<OpenPathArgs>>) -> ToolResult {
        let a = args.read()?;
        let frame = frame_options(a.frame())?;
        let req = OpenPathRequest {
            target: a.target,
            frame,
            settling: OpenSettle {
                settle: a.settle,
                settle_ms: a.settle_ms,
                quiet_ms: a.quiet_ms,
            },
        };
        req.validate()?;
        let settling = req.settling.settling();
        self.opened::<endpoints::OpenPath>(&a.session_id, &req, settling)
            .await
    }

    #[tool(
        name = "launch_app",
        output_schema = schema_for_output::<Opened>(),
        title = "Start or raise an app on the screen",
        description = "Start an app on this session's screen, or raise its open window; returns a screenshot once the window shows. An unknown app's error lists the installed ones.",
        annotations(
            title = "Start or raise an app on the screen",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn launch_app(&self, Parameters(args): Parameters<Args<LaunchAppArgs>>) -> ToolResult {
        let a = args.read()?;
        let frame = frame_options(a.frame())?;
        let req = LaunchAppRequest {
            app: a.app,
            uri: a.uri,
            frame,
            settling: OpenSettle {
                settle: a.settle,
                settle_ms: a.settle_ms,
                quiet_ms: a.quiet_ms,
            },
        };
        req.validate()?;
        let settling = req.settling.settling();
        self.opened::<endpoints::LaunchApp>(&a.session_id, &req, settling)
            .await
    }
}

/// computer_act's result: what ran, then the screenshot when one was
/// taken.
fn act_result(mut r: ActResponse) -> Result<CallToolResult, ToolError> {
    if r.outcomes.len() > ACTIONS_MAX {
        return Err(RefusedAnswer::TooManyOutcomes {
            count: r.outcomes.len(),
        }
        .into());
    }
    if r.effects.len() > ACTIONS_MAX {
        return Err(RefusedAnswer::TooManyEffects {
            count: r.effects.len(),
        }
        .into());
    }
    r.outcomes.iter_mut().for_each(bound_outcome);
    r.effects.iter_mut().for_each(bound_effect);
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
    let told = effect_lines(&r.outcomes, &r.effects);
    if !told.is_empty() {
        summary.push('\n');
        summary.push_str(told.trim_end());
    }
    if r.observation.is_some() {
        summary.push(' ');
        summary.push_str(&settle_sentence(
            r.settled,
            r.settle_waited_ms,
            "the last action",
        ));
    }
    let acted = |observation| Acted {
        outcomes: r.outcomes,
        requested: r.requested,
        settled: r.settled,
        settle_waited_ms: r.settle_waited_ms,
        effects: r.effects,
        observation,
    };
    match r.observation {
        Some(o) => observation_result(format!("{summary}\n"), o, &IMAGE_ONLY, |o| acted(Some(o))),
        None => Ok(structured(summary, &acted(None))),
    }
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

impl ComputerUseServer {
    /// Calls an opening route and shows what opened with the screenshot.
    async fn opened<E: Endpoint<Key = SessionId, Response = OpenedResponse>>(
        &self,
        session_id: &SessionId,
        req: &E::Request,
        settling: Settling,
    ) -> ToolResult {
        let deadline = OPEN_DEADLINE + Duration::from_millis(settling.settle_ms);
        let r = self
            .session_call::<E>(session_id, req, deadline, OPEN_MAY_RUN)
            .await?;
        self.agent()
            .announce_screen(session_id, r.observation.screen);
        opened_result(r)
    }
}

/// open_path's and launch_app's result: what opened, and the screenshot.
fn opened_result(mut r: OpenedResponse) -> Result<CallToolResult, ToolError> {
    cut_text(&mut r.summary, NOTE_MAX_CHARS);
    let waited = settle_sentence(r.settled, r.settle_waited_ms, "it opened");
    observation_result(
        format!("{} {waited}\n", r.summary),
        r.observation,
        &IMAGE_ONLY,
        |observation| Opened {
            summary: r.summary,
            ready: r.ready,
            settled: r.settled,
            settle_waited_ms: r.settle_waited_ms,
            observation,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::textview::TEXT_VIEW_MAX_CHARS;
    use computer_protocol::{Cursor, Region, ScreenNumber, TextNode, TextView, View};

    fn observation(nodes: usize, name_len: usize) -> Observation {
        let node = |i: usize| TextNode {
            node_ref: format!("e{i}"),
            role: "button".into(),
            name: "x".repeat(name_len),
            value: None,
            states: vec![],
            bounds: None,
            depth: None,
            children: vec![],
        };
        Observation {
            screen: ScreenNumber(1),
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
            format: computer_protocol::ImageFormat::Png,
            bytes: 0,
            reduced: None,
            image_base64: None,
            text_view: Some(TextView {
                popups: vec![],
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

    /// What the agent reads of a result: its content blocks and its
    /// structured content, as JSON.
    fn shown(result: &CallToolResult) -> (String, serde_json::Value) {
        (
            serde_json::to_value(&result.content).unwrap().to_string(),
            result.structured_content.clone().unwrap_or_default(),
        )
    }

    /// M5: a tampered computer adds a 2 MB text view nobody asked for, a
    /// 100 KB window title and long notes to an act answer; the agent
    /// gets the outcome with every text held to its cap, marked as cut.
    #[test]
    fn an_act_answer_is_bounded_like_an_observation() {
        let mut o = observation(5000, 400);
        assert!(o.text_view.as_ref().unwrap().render().len() > 2_000_000);
        o.active_window = Some("T".repeat(100_000));
        o.reduced = Some("R".repeat(100_000));
        o.captured_at = "C".repeat(100_000);
        let r = ActResponse {
            screen: ScreenNumber(1),
            outcomes: vec![ActionOutcome {
                index: 0,
                kind: computer_protocol::ActionKind::Click,
                ok: false,
                error: Some("E".repeat(100_000)),
                at: None,
            }],
            requested: 1,
            observation: Some(o),
            settled: true,
            settle_waited_ms: 0,
            effects: Vec::new(),
        };
        let result = act_result(r).expect("an act answer is trimmed, not refused");
        let (text, json) = shown(&result);
        assert!(text.len() < 8 * 1024, "{} bytes of text", text.len());
        assert!(json.get("text_view").is_none(), "an unasked text view");
        assert!(
            text.contains("the computer sent a text view that was not asked for"),
            "{text}"
        );
        let title = json["active_window"].as_str().unwrap();
        assert!(
            title.chars().count() <= 256 && title.contains("characters cut"),
            "{title}"
        );
        let error = json["outcomes"][0]["error"].as_str().unwrap();
        assert!(
            error.chars().count() <= 1024 && error.contains("characters cut"),
            "{error}"
        );
        let all = json.to_string();
        assert!(
            all.len() < 16 * 1024,
            "{} bytes of structured content",
            all.len()
        );
    }

    /// An open answer goes through the same bounds.
    #[test]
    fn an_opened_answer_is_bounded_like_an_observation() {
        let mut o = observation(5000, 400);
        o.active_window = Some("T".repeat(100_000));
        let r = OpenedResponse {
            summary: "S".repeat(100_000),
            ready: true,
            observation: o,
            settled: true,
            settle_waited_ms: 0,
        };
        let result = opened_result(r).expect("an open answer is trimmed, not refused");
        let (text, json) = shown(&result);
        assert!(text.len() < 8 * 1024, "{} bytes of text", text.len());
        assert!(json.get("text_view").is_none());
        assert!(json["summary"].as_str().unwrap().contains("characters cut"));
    }

    #[test]
    fn a_text_view_over_what_was_asked_is_refused() {
        let asked = TextViewOptions {
            view: View::Text,
            max_nodes: Some(10),
            ..Default::default()
        };
        let notes =
            bound_observation(&mut observation(10, 5), &asked).expect("within what was asked");
        assert!(notes.is_empty(), "{notes:?}");
        let err = bound_observation(&mut observation(11, 5), &asked)
            .unwrap_err()
            .to_string();
        assert!(err.contains("11 nodes") && err.contains("10"), "{err}");
        let mut missing = observation(1, 1);
        missing.text_view = None;
        assert!(bound_observation(&mut missing, &asked).is_err());
    }

    /// Names far over the field limit and a page over the text limit: the
    /// view is cut to its first nodes with a cursor, not refused.
    #[test]
    fn a_text_view_over_the_text_limit_is_cut_with_a_cursor() {
        let many = TextViewOptions {
            view: View::Text,
            max_nodes: Some(5000),
            ..Default::default()
        };
        let mut o = observation(5000, 400);
        let notes = bound_observation(&mut o, &many).expect("cut, not refused");
        assert!(notes.is_empty(), "{notes:?}");
        let view = o.text_view.unwrap();
        assert!(view.render().len() <= TEXT_VIEW_MAX_CHARS);
        let kept = view.node_count();
        assert!(kept > 100 && kept < 5000, "{kept}");
        assert!(view.nodes.iter().all(|n| n.name.chars().count() <= 160));
        assert_eq!(view.cursor, Some(format!("1.{kept}")));
        let note = view.note.unwrap();
        assert!(note.contains(&format!("`cursor` 1.{kept}")), "{note}");
    }
}
