//! Routes for handoffs: the agent asks a person to take its screen, waits
//! for them to hand it back, or takes it back itself. Handing back is the
//! viewer's (`viewer::http::handoff`), never the agent's.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::handoff::{screen_facts, HandoffError, Hold};
use crate::sessions::Session;
use axum::extract::State;
use axum::Json;
use computer_protocol::endpoints::NoBody;
use computer_protocol::handoff::{
    check_request, HandoffRequest, HandoffStarted, HandoffState, HandoffStatus, HandoffWaitRequest,
    WAIT_MAX_SECS,
};
use std::sync::Arc;
use std::time::Duration;

/// The screen refuses the agent while a person holds it.
pub fn refuse_held(session: &Session) -> Result<(), ApiError> {
    match session.held_message() {
        Some(message) => Err(ApiError::new(
            computer_protocol::ErrorCode::Conflict,
            message,
        )),
        None => Ok(()),
    }
}

/// Why a session's command or transfer was stopped: its session ended, or
/// a person took its screen.
pub fn why_stopped(app: &AppState, session: &Session) -> ApiError {
    if let Err(ended) = app.sessions.get(&session.id) {
        return ended.into();
    }
    match session.held_message() {
        Some(message) => ApiError::new(
            computer_protocol::ErrorCode::Conflict,
            format!("stopped: {message}"),
        ),
        None => crate::sessions::SessionError::Unknown(session.id.clone()).into(),
    }
}

pub async fn request(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<HandoffRequest>,
) -> Result<Json<HandoffStarted>, ApiError> {
    check_request(&req.reason, req.expected.as_deref())?;
    if req.handback_digest.len() != 64
        || !req.handback_digest.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(ApiError::invalid(
            "`handback_digest` is not a SHA-256 in hex (64 characters of 0-9a-f): send the digest of the hand-back code",
        ));
    }
    if req.expire_secs == 0 {
        return Err(ApiError::invalid(
            "`expire_secs` is 0: a hold needs at least 1 second",
        ));
    }
    if let Some(hold) = session.hold().filter(|h| h.is_held()) {
        return Err(HandoffError::AlreadyHeld {
            id: hold.id.clone(),
            screen: hold.screen,
            reason: hold.reason.clone(),
        }
        .into());
    }
    let screen = app.sessions.screen_of(&session).await?;
    let before = screen_facts(&screen, &app.browsers).await;
    let hold = Arc::new(Hold::new(
        screen.number,
        req.reason.trim().to_string(),
        req.expected
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty()),
        Duration::from_secs(req.expire_secs),
        before,
        req.handback_digest,
    ));
    {
        let mut slot = session.hold_slot();
        if let Some(other) = slot.as_ref().filter(|h| h.is_held()) {
            return Err(HandoffError::AlreadyHeld {
                id: other.id.clone(),
                screen: other.screen,
                reason: other.reason.clone(),
            }
            .into());
        }
        *slot = Some(Arc::clone(&hold));
    }
    // The person may type secrets now: nothing this session started keeps
    // running beside them, and the screen's DevTools bridge (which reads
    // the page) stops until the agent has the screen again.
    let mut stopped = session.stop_running();
    let bridge = app.devtools.stop(screen.number).await;
    if bridge.was_running {
        stopped.push(format!("the DevTools bridge {}", bridge.bridge));
    }
    tracing::info!(session = %session.id, handoff = %hold.id, screen = %screen.number, stopped = stopped.len(), "screen handed to a person");
    tokio::spawn(expire(app.clone(), Arc::clone(&hold), Arc::clone(&screen)));
    app.sessions.touch_overview();
    Ok(Json(HandoffStarted {
        handoff_id: hold.id.clone(),
        screen: screen.number,
        started_at: hold.started_at.clone(),
        stopped,
    }))
}

/// Ends a hold nobody returned once its time is up.
async fn expire(app: AppState, hold: Arc<Hold>, screen: Arc<crate::screens::Screen>) {
    tokio::time::sleep_until(hold.expires.into()).await;
    if !hold.is_held() {
        return;
    }
    let after = screen_facts(&screen, &app.browsers).await;
    if hold.end(HandoffState::Expired, Some(&after)) {
        tracing::info!(handoff = %hold.id, "hold expired");
        app.sessions.touch_overview();
    }
}

pub async fn wait(
    State(_app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<HandoffWaitRequest>,
) -> Result<Json<HandoffStatus>, ApiError> {
    let hold = session.hold().ok_or(HandoffError::NoHold)?;
    let limit = Duration::from_millis(req.wait_ms.min(WAIT_MAX_SECS * 1000));
    let status = hold.wait(limit).await;
    if status.state != HandoffState::Held {
        // An ended hold is told once; the screen is the agent's again.
        session.clear_hold(&hold);
    }
    Ok(Json(status))
}

pub async fn cancel(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(_): ApiJson<NoBody>,
) -> Result<Json<HandoffStatus>, ApiError> {
    let hold = session.hold().ok_or(HandoffError::NoHold)?;
    if hold.is_held() {
        let screen = app.sessions.screen_of(&session).await?;
        let after = screen_facts(&screen, &app.browsers).await;
        hold.end(HandoffState::Cancelled, Some(&after));
        tracing::info!(handoff = %hold.id, "hold cancelled by the agent");
    }
    session.clear_hold(&hold);
    app.sessions.touch_overview();
    Ok(Json(hold.status()))
}
