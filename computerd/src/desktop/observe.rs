//! `computer_observe`: a screenshot of the session's own screen, left out when
//! nothing changed since the session's previous one.

use super::{blocking, DesktopError};
use crate::capture::{active_window_title, cursor_position, encode_png};
use crate::clock::now_rfc3339;
use crate::screens::Screen;
use crate::sessions::{Session, Sessions};
use base64::Engine;
use computer_protocol::{Cursor, FrameId, Observation};
use std::sync::Arc;

pub async fn observe(
    sessions: &Arc<Sessions>,
    session: &Arc<Session>,
) -> Result<Observation, DesktopError> {
    let screen = sessions.screen_of(session).await?;
    let session = Arc::clone(session);
    blocking(move || capture_observation(&session, &screen).map(|(o, _)| o)).await
}

/// Captures the screen now and applies the unchanged-frame rule; also
/// returns the frame's fingerprint. Blocking.
pub fn capture_observation(
    session: &Session,
    screen: &Screen,
) -> Result<(Observation, u64), DesktopError> {
    screen.with_x(|x| {
        let frame = x.capturer.grab(&x.display)?;
        let captured_at = now_rfc3339();
        let fingerprint = frame.fingerprint();
        let (cx, cy) = cursor_position(&x.display)?;
        let active_window = active_window_title(&x.display)?;
        let unchanged = {
            let mut last = session.last_shown.lock().unwrap_or_else(|e| e.into_inner());
            let unchanged = *last == Some(fingerprint);
            *last = Some(fingerprint);
            unchanged
        };
        let png_base64 = if unchanged {
            None
        } else {
            let png = encode_png(&frame)?;
            Some(base64::engine::general_purpose::STANDARD.encode(png))
        };
        let observation = Observation {
            frame_id: FrameId(session.next_frame_id()),
            captured_at,
            width: frame.width,
            height: frame.height,
            cursor: Cursor { x: cx, y: cy },
            active_window,
            unchanged,
            png_base64,
        };
        Ok((observation, fingerprint))
    })?
}
