//! request_handoff, wait_handoff and cancel_handoff: the agent asks a
//! person to take its screen, waits without hanging, and gets it back.

use super::desktop::{frame_options, observation_result, IMAGE_ONLY};
use super::ToolResult;
use crate::mcp::args::{Args, HandoffArgs, SessionArgs, WaitHandoffArgs};
use crate::mcp::progress::reporting;
use crate::mcp::result::structured;
use crate::mcp::{ComputerUseServer, ToolError};
use crate::settings::process_env;
use computer_protocol::endpoints::{CancelHandoff, NoBody, Observe, RequestHandoff, WaitHandoff};
use computer_protocol::handoff::{
    handback_digest, HandoffRequest, HandoffState, HandoffStatus, HandoffWaitRequest,
    ScreenChanges, HANDBACK_CODE_CHARS, HOLD_DEFAULT_SECS, WAIT_DEFAULT_SECS, WAIT_MAX_SECS,
};
use computer_protocol::recording::StepRecord;
use computer_protocol::{InvalidInput, Observation, ObserveRequest, SessionId};
use rand::distr::{Alphanumeric, SampleString};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// `COMPUTER_USE_HANDOFF_TIMEOUT`: a hold nobody returns expires after it.
pub const HANDOFF_TIMEOUT_VAR: &str = "COMPUTER_USE_HANDOFF_TIMEOUT";
const API_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Serialize, JsonSchema)]
struct Requested {
    handoff_id: String,
    screen: u8,
    /// The viewer on that screen, for the person.
    viewer_url: String,
    /// When the hold ends by itself as `expired`, in seconds.
    expires_in_secs: u64,
    /// This session's shell commands, transfers and DevTools bridge that
    /// the hold stopped.
    stopped: Vec<String>,
}

/// wait_handoff's and cancel_handoff's structured result.
#[derive(Serialize, JsonSchema)]
struct HandoffOutcome {
    handoff_id: String,
    /// `held`, `returned`, `cancelled` or `expired`.
    state: String,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<String>,
    held_ms: u64,
    /// The person took control at some point.
    taken: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<ScreenChanges>,
    #[serde(flatten)]
    observation: Option<Observation>,
}

#[tool_router(router = handoff_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "request_handoff",
        output_schema = schema_for_output::<Requested>(),
        title = "Ask a person to take the screen",
        description = "Ask a person to take this session's screen for what only they should do (sign-in, CAPTCHA, 2FA, payment). A viewer tab opens for them with your reason; only it can hand back. Until then this session's screen, shell, file and DevTools calls are refused and its commands stop; programs in the computer can still see what the person types. Call wait_handoff until `returned`. Unreturned, it expires after COMPUTER_USE_HANDOFF_TIMEOUT (15 min).",
        annotations(
            title = "Ask a person to take the screen",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn request_handoff(&self, Parameters(args): Parameters<Args<HandoffArgs>>) -> ToolResult {
        let a = args.read()?;
        computer_protocol::handoff::check_request(&a.reason, a.expected.as_deref())?;
        let expire_secs = hold_timeout()?;
        // The person's proof of handing back: made here, kept here and put
        // only in the link opened for the person; the computer gets its
        // digest, so nothing running in it can end the hold as the person.
        let code = Alphanumeric.sample_string(&mut rand::rng(), HANDBACK_CODE_CHARS);
        let request = HandoffRequest {
            reason: a.reason,
            expected: a.expected,
            expire_secs,
            handback_digest: handback_digest(&code),
        };
        let started = self
            .session_call::<RequestHandoff>(
                &a.session_id,
                &request,
                API_DEADLINE,
                "the hold may have started; cancel_handoff ends it",
            )
            .await?;
        let handback = crate::open::Handback {
            handoff_id: started.handoff_id.clone(),
            code: code.into(),
        };
        self.agent().keep_handback(&a.session_id, handback.clone());
        let conn = self.reach(&a.session_id).await?;
        let viewer_url = computer_protocol::viewer_link(
            conn.port_base,
            &conn.viewer_key,
            Some(started.screen.0),
        );
        let target = crate::open::Target {
            client: conn.client.clone(),
            port_base: conn.port_base,
            key: conn.viewer_key.clone(),
        };
        self.agent()
            .link()
            .opener
            .handoff_opened(conn.open, target, started.screen.0, handback);
        let mut text = format!(
            "Screen {} is now the person's (handoff `{}`). A viewer tab opened for them with your reason, Take control and Hand back; Hand back works only from that tab's link, which you never see (with COMPUTER_USE_OPEN=none the link is on this server's stderr). {viewer_url} lets anyone with the key watch. Call wait_handoff until it says `returned`. Until then this session's screen tools, shell, file tools and DevTools are refused.",
            started.screen, started.handoff_id
        );
        if !started.stopped.is_empty() {
            text.push_str(&format!(
                " Stopped so the person types alone: {}.",
                started.stopped.join("; ")
            ));
        }
        Ok(structured(
            text,
            &Requested {
                handoff_id: started.handoff_id,
                screen: started.screen.0,
                viewer_url,
                expires_in_secs: expire_secs,
                stopped: started.stopped,
            },
        ))
    }

    #[tool(
        name = "wait_handoff",
        output_schema = schema_for_output::<HandoffOutcome>(),
        title = "Wait for the person to hand the screen back",
        description = "Wait for the person to hand the screen back. state: `held` (call again), `returned` (their note, how long, what changed: windows, the page's URL and title; a screenshot), `cancelled` or `expired`. What they typed is never reported.",
        annotations(
            title = "Wait for the person to hand the screen back",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn wait_handoff(
        &self,
        Parameters(args): Parameters<Args<WaitHandoffArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        let a = args.read()?;
        let secs = a.timeout.unwrap_or(WAIT_DEFAULT_SECS);
        if !(1..=WAIT_MAX_SECS).contains(&secs) {
            return Err(ToolError::Invalid(InvalidInput(format!(
                "`timeout` is {secs}: wait 1 to {WAIT_MAX_SECS} seconds, then call wait_handoff again"
            ))));
        }
        let frame = frame_options(a.frame())?;
        let request = HandoffWaitRequest {
            wait_ms: secs * 1000,
        };
        let waiting = self.session_call::<WaitHandoff>(
            &a.session_id,
            &request,
            Duration::from_secs(secs) + API_DEADLINE,
            "nothing keeps running; call wait_handoff again",
        );
        let status = reporting(
            &context,
            "waiting for the person to hand the screen back",
            waiting,
        )
        .await?;
        if status.state == HandoffState::Held {
            let text = format!(
                "Still with the person after {} s (handoff `{}`). Call wait_handoff again.",
                status.held_ms / 1000,
                status.handoff_id
            );
            return Ok(structured(text, &outcome(status, None)));
        }
        if status.state == HandoffState::Returned
            && !self.agent().handed_back_by_person(
                &a.session_id,
                &status.handoff_id,
                status.handback_code.as_deref(),
            )
        {
            return Err(ToolError::HandBackNotByPerson {
                handoff_id: status.handoff_id,
            });
        }
        self.agent().forget_handback(&a.session_id);
        self.record_hold(&a.session_id, &status);
        let text = ended_text(&status);
        if status.state != HandoffState::Returned {
            return Ok(structured(text, &outcome(status, None)));
        }
        let observe = ObserveRequest {
            frame,
            ..ObserveRequest::default()
        };
        let observation = self
            .session_call::<Observe>(
                &a.session_id,
                &observe,
                API_DEADLINE,
                "nothing keeps running; observe again",
            )
            .await?;
        observation_result(format!("{text}\n"), observation, &IMAGE_ONLY, |o| {
            outcome(status, Some(o))
        })
    }

    #[tool(
        name = "cancel_handoff",
        output_schema = schema_for_output::<HandoffOutcome>(),
        title = "Take the screen back from the person",
        description = "End this session's handoff: the screen is yours again and the person's request goes away. Says how long it was held and what changed.",
        annotations(
            title = "Take the screen back from the person",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn cancel_handoff(&self, Parameters(args): Parameters<Args<SessionArgs>>) -> ToolResult {
        let a = args.read()?;
        let status = self
            .session_call::<CancelHandoff>(
                &a.session_id,
                &NoBody {},
                API_DEADLINE,
                "nothing keeps running",
            )
            .await?;
        self.agent().forget_handback(&a.session_id);
        self.record_hold(&a.session_id, &status);
        Ok(structured(ended_text(&status), &outcome(status, None)))
    }
}

impl ComputerUseServer {
    /// A recording keeps the hold as one step: its reason, how long, the
    /// note; no frames (the person's screen is not the agent's to record).
    fn record_hold(&self, id: &SessionId, status: &HandoffStatus) {
        let Some(recording) = self.agent().recording(id) else {
            return;
        };
        let mut text = format!(
            "{}; held for {} s",
            state_word(status.state),
            status.held_ms / 1000
        );
        if let Some(note) = &status.note {
            text.push_str(&format!("; note: {note}"));
        }
        let started = time::OffsetDateTime::now_utc()
            - time::Duration::milliseconds(status.held_ms.min(i64::MAX as u64) as i64);
        recording.record(
            StepRecord {
                tool: "handoff".into(),
                arguments: serde_json::json!({
                    "session_id": id,
                    "reason": status.reason,
                    "expected": status.expected,
                }),
                started_at: started
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default(),
                duration_ms: status.held_ms,
                is_error: false,
                text,
                frame_id: None,
                points: Vec::new(),
                secret: false,
            },
            None,
        );
    }
}

fn hold_timeout() -> Result<u64, ToolError> {
    let env = process_env();
    let Some(text) = env
        .get(HANDOFF_TIMEOUT_VAR)
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(HOLD_DEFAULT_SECS);
    };
    match computer_protocol::parse_duration(text) {
        Ok(d) if d.as_secs() >= 1 => Ok(d.as_secs()),
        _ => Err(ToolError::Invalid(InvalidInput(format!(
            "`{HANDOFF_TIMEOUT_VAR}` is `{text}`: give a duration such as `900`, `90s`, `15m` or `1h`, at least 1 second"
        )))),
    }
}

fn state_word(state: HandoffState) -> &'static str {
    match state {
        HandoffState::Held => "held",
        HandoffState::Returned => "returned",
        HandoffState::Cancelled => "cancelled",
        HandoffState::Expired => "expired",
    }
}

fn ended_text(s: &HandoffStatus) -> String {
    let mut text = match s.state {
        HandoffState::Returned => format!("The person handed the screen back after {} s.", s.held_ms / 1000),
        HandoffState::Cancelled => format!("Handoff cancelled after {} s: the screen is yours again.", s.held_ms / 1000),
        HandoffState::Expired => format!("Nobody handed the screen back within {HANDOFF_TIMEOUT_VAR}; the hold expired after {} s and the screen is yours again.", s.held_ms / 1000),
        HandoffState::Held => format!("Still held after {} s.", s.held_ms / 1000),
    };
    if let Some(note) = &s.note {
        text.push_str(&format!(" Their note: \"{note}\"."));
    }
    if let Some(c) = &s.changes {
        if c.active_window_before != c.active_window_after {
            text.push_str(&format!(
                " Active window: {} → {}.",
                c.active_window_before.as_deref().unwrap_or("none"),
                c.active_window_after.as_deref().unwrap_or("none")
            ));
        }
        if !c.windows_opened.is_empty() {
            text.push_str(&format!(" Opened: {}.", c.windows_opened.join(", ")));
        }
        if !c.windows_closed.is_empty() {
            text.push_str(&format!(" Closed: {}.", c.windows_closed.join(", ")));
        }
        if c.page_before != c.page_after {
            if let Some(p) = &c.page_after {
                text.push_str(&format!(" The page is now \"{}\" ({}).", p.title, p.url));
            }
        }
    }
    text
}

fn outcome(s: HandoffStatus, observation: Option<Observation>) -> HandoffOutcome {
    HandoffOutcome {
        handoff_id: s.handoff_id,
        state: state_word(s.state).to_string(),
        reason: s.reason,
        expected: s.expected,
        held_ms: s.held_ms,
        taken: s.taken,
        note: s.note,
        changes: s.changes,
        observation,
    }
}
