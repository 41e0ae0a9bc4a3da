//! computer_observe, computer_act, open_path and launch_app.

use super::ToolResult;
use crate::mcp::args::{ActArgs, Args, LaunchAppArgs, ObserveArgs, OpenPathArgs};
use crate::mcp::result::{structured, with_image};
use crate::mcp::{ComputerUseServer, ToolError};
use crate::settings::{process_env, FrameDefaults};
use computer_protocol::endpoints::{self, Endpoint};
use computer_protocol::limits::SETTLE_DEFAULT_MS;
use computer_protocol::textview::TEXT_VIEW_MAX_CHARS;
use computer_protocol::{
    ActRequest, Action, ActionOutcome, FrameId, FrameOptions, ImageFormat, LaunchAppRequest,
    Observation, ObserveRequest, OpenPathRequest, OpenSettle, OpenedResponse, SessionId, Settling,
    TextViewOptions,
};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// Opening a screen and capturing it fits well inside this.
const OBSERVE_DEADLINE: Duration = Duration::from_secs(30);
const NOTHING_RUNS: &str = "nothing keeps running; observe again";

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
/// the image unless the frame is unchanged.
pub fn observation_result<P: Serialize>(
    prefix: String,
    mut observation: Observation,
    payload: impl FnOnce(Observation) -> P,
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
    let text = match &observation.reduced {
        Some(why) => format!("{text} Note: {why}."),
        None => text,
    };
    let text = match &observation.text_view {
        Some(view) => format!("{text}\nText view {}:\n{}", view.view_id, view.render()),
        None => text,
    };
    let image = observation.image_base64.take();
    let mime = observation.format.mime();
    let result = structured(text, &payload(observation));
    match image {
        Some(data) => with_image(result, data, mime),
        None => result,
    }
}

/// A text view from the computer is held to what was asked: at most
/// `max_nodes` nodes and a bounded text, so a hostile computer cannot
/// flood the agent's context.
fn check_text_view(observation: &Observation, asked: &TextViewOptions) -> Result<(), ToolError> {
    let Some(view) = &observation.text_view else {
        return if asked.view.wants_text() {
            Err(ToolError::Refused(
                "the computer answered without the text view it was asked for; observe again"
                    .into(),
            ))
        } else {
            Ok(())
        };
    };
    let nodes = view.node_count();
    if nodes > asked.max_nodes() {
        return Err(ToolError::Refused(format!(
            "the computer sent a text view of {nodes} nodes where {} were asked for; it was refused",
            asked.max_nodes()
        )));
    }
    let chars = view.render().len();
    if chars > TEXT_VIEW_MAX_CHARS {
        return Err(ToolError::Refused(format!(
            "the computer sent a text view of {chars} characters, over the limit of {TEXT_VIEW_MAX_CHARS}; it was refused"
        )));
    }
    Ok(())
}

/// The frame an agent asked for; without `max_side` the host's defaults
/// bound both its longest side and its pixel count.
fn frame_options(
    max_side: Option<u32>,
    format: Option<ImageFormat>,
    quality: Option<u8>,
) -> Result<FrameOptions, ToolError> {
    let options = match max_side {
        Some(side) => FrameOptions {
            max_side: Some(side),
            max_pixels: None,
            format: format.unwrap_or_default(),
            quality,
        },
        None => {
            let defaults = FrameDefaults::from_env(&process_env())
                .map_err(|e| ToolError::Invalid(e.to_string()))?;
            FrameOptions {
                max_side: Some(defaults.max_side),
                max_pixels: Some(defaults.max_pixels),
                format: format.unwrap_or_default(),
                quality,
            }
        }
    };
    options.validate().map_err(ToolError::Invalid)?;
    Ok(options)
}

#[tool_router(router = desktop_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "computer_observe",
        output_schema = schema_for_output::<Observation>(),
        title = "Screenshot the session's screen",
        description = "Take a screenshot of this session's own screen with frame_id, captured_at, screen size, cursor position and active window title. The frame keeps to max_side (default 1568 px) and about 1.15 megapixels, so a large screen comes scaled down: the result gives frame_width, frame_height and scale, and computer_act takes that frame_id to click in the frame's own pixels. region {x,y,width,height} (screen pixels) returns only that part, at up to full resolution (zoom). format png (default) or jpeg with quality. Frames stay under 1 MB. The first call opens the screen. When nothing changed since this session's previous screenshot of the same region and size, the image is left out and unchanged is true. view text (or both) returns the screen as text: its windows (title, class, pid, geometry, focus; topmost first) and the accessibility tree of the focused window or of window (class or title), one line per node such as `e7 button \"Save\" [focused] @ 412,300 80x28`; pages in the browser come from the page itself, other apps (GTK, Qt, LibreOffice) from the screen's accessibility bus, and apps that expose nothing (xterm) are listed with a note. A tree over max_nodes (default 400) is cut with a cursor for the next page; an unchanged view leaves its nodes out and its refs stay valid.",
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
        let text = TextViewOptions {
            view: a.view,
            window: a.window,
            max_nodes: a.max_nodes,
            cursor: a.cursor,
        };
        text.validate().map_err(ToolError::Invalid)?;
        let req = ObserveRequest {
            frame: frame_options(a.max_side, a.format, a.quality)?,
            region: a.region,
            text: text.clone(),
        };
        let o = self
            .session_call::<endpoints::Observe>(&a.session_id, &req, OBSERVE_DEADLINE, NOTHING_RUNS)
            .await?;
        check_text_view(&o, &text)?;
        self.agent().announce_screen(&a.session_id);
        Ok(observation_result(String::new(), o, |o| o))
    }

    #[tool(
        name = "computer_act",
        output_schema = schema_for_output::<Acted>(),
        title = "Act on the session's screen",
        description = "Run 1 to 24 mouse and keyboard actions in order on this session's screen, then (observe=true, default) return a screenshot taken settle_ms (default 300, max 5000) after the last action, or with settle: quiet as soon as the screen has been still for quiet_ms (default 250; settle_ms then the longest wait, default 3000). x/y are screen pixels, or the pixels of a recent frame when frame_id is given; click, move, down, up and scroll take ref instead (a node of this session's latest text view: the action lands on the centre of its visible part). max_side, format and quality shape the screenshot as in computer_observe. Actions: click {x,y or ref, button}, move {x,y or ref}, down/up {button, optional x,y}, type {text: any Unicode up to 10000 characters, \\n presses Enter}, key {key: chord such as enter, esc, f5, ctrl+shift+t, cmd+a; modifiers ctrl, alt (option), shift, super (cmd, meta, win)}, scroll {direction up|down|left|right, steps 1..20 default 3, optional x,y}, wait {ms 0..5000}, focus {target: window class or title; starts the app when none matches}. The first failing action stops the batch. The 4th identical batch of pointer, scroll or key actions in a row that leaves the screen unchanged is refused.",
        annotations(
            title = "Act on the session's screen",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn computer_act(&self, Parameters(args): Parameters<Args<ActArgs>>) -> ToolResult {
        let a = args.read()?;
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
        req.validate().map_err(ToolError::Invalid)?;
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
        let r = self
            .session_call::<endpoints::Act>(
                &a.session_id,
                &req,
                deadline,
                "some actions may have run; observe the screen to see where things stand",
            )
            .await?;
        self.agent().announce_screen(&a.session_id);
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
        let acted = |observation| Acted {
            outcomes: r.outcomes,
            requested: r.requested,
            settled: r.settled,
            settle_waited_ms: r.settle_waited_ms,
            observation,
        };
        Ok(match r.observation {
            Some(o) => observation_result(format!("{summary}\n"), o, |o| acted(Some(o))),
            None => structured(summary, &acted(None)),
        })
    }

    #[tool(
        name = "open_path",
        output_schema = schema_for_output::<Opened>(),
        title = "Open a page or file on the screen",
        description = "Open an http(s) URL or a file on this session's screen and return a screenshot once it loaded (or after 15 s, saying it was still loading). Pages and HTML, PDF, image, text, JSON and XML files open in the screen's own Chromium (started when needed, signed in wherever the other screens are); other files open in their default app. settle, settle_ms and quiet_ms as in computer_act, counted from when it opened: by default no extra wait; with settle: quiet the screenshot waits until the screen has been still for quiet_ms (for pages that animate after loading). max_side, format and quality shape the screenshot as in computer_observe. A missing file is an error that lists what the folder holds.",
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
        let req = OpenPathRequest {
            target: a.target,
            frame: frame_options(a.max_side, a.format, a.quality)?,
            settling: OpenSettle {
                settle: a.settle,
                settle_ms: a.settle_ms,
                quiet_ms: a.quiet_ms,
            },
        };
        req.validate().map_err(ToolError::Invalid)?;
        let settling = req.settling.settling();
        self.opened::<endpoints::OpenPath>(&a.session_id, &req, settling)
            .await
    }

    #[tool(
        name = "launch_app",
        output_schema = schema_for_output::<Opened>(),
        title = "Start or raise an app on the screen",
        description = "Start an app on this session's screen, or raise its window when one is open, and return a screenshot once its window shows. app: `browser` (the screen's Chromium), `terminal`, an installed application (.desktop id or name), or a program on PATH. uri: optional, opened in the app (the browser opens it in a new tab). settle, settle_ms and quiet_ms as in open_path. max_side, format and quality shape the screenshot as in computer_observe. An unknown app is an error that lists the installed ones.",
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
        req.validate().map_err(ToolError::Invalid)?;
        let settling = req.settling.settling();
        self.opened::<endpoints::LaunchApp>(&a.session_id, &req, settling)
            .await
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
        session_id: &str,
        req: &E::Request,
        settling: Settling,
    ) -> ToolResult {
        let deadline = OPEN_DEADLINE + Duration::from_millis(settling.settle_ms);
        let r = self
            .session_call::<E>(session_id, req, deadline, OPEN_MAY_RUN)
            .await?;
        self.agent().announce_screen(session_id);
        let waited = settle_sentence(r.settled, r.settle_waited_ms, "it opened");
        Ok(observation_result(
            format!("{} {waited}\n", r.summary),
            r.observation,
            |observation| Opened {
                summary: r.summary,
                ready: r.ready,
                settled: r.settled,
                settle_waited_ms: r.settle_waited_ms,
                observation,
            },
        ))
    }
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
            depth: None,
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
        let err = check_text_view(&observation(11, 5), &asked)
            .unwrap_err()
            .to_string();
        assert!(err.contains("11 nodes") && err.contains("10"), "{err}");
        // Names far over the field limit: the text as a whole is bounded.
        let many = TextViewOptions {
            view: View::Text,
            max_nodes: Some(5000),
            ..Default::default()
        };
        let err = check_text_view(&observation(5000, 400), &many)
            .unwrap_err()
            .to_string();
        assert!(err.contains("characters"), "{err}");
        let mut missing = observation(1, 1);
        missing.text_view = None;
        assert!(check_text_view(&missing, &asked).is_err());
    }
}
