//! `computer_observe`: a screenshot of the session's own screen (or a
//! region of it), shaped to the bounds asked for, and left out when nothing
//! changed since the session's previous one (unless `force` asks for it);
//! and, when asked, the screen's text view.

use super::state::{DesktopState, Shown};
use super::DesktopError;
use crate::browser::Browsers;
use crate::capture::{check_region, shape, shape_kept, Shaped};
use crate::clock::now_rfc3339;
use crate::recording::FrameSeen;
use crate::screens::Screen;
use crate::sessions::{Session, Sessions};
use crate::textview::text_view;
use crate::windows::pointer_and_active_title;
use base64::Engine;
use computer_protocol::{
    Cursor, FrameId, FrameTransform, ImageFormat, Observation, ObserveRequest, Region,
};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub async fn observe(
    sessions: &Arc<Sessions>,
    browsers: &Browsers,
    session: &Arc<Session>,
    state: &Arc<DesktopState>,
    req: ObserveRequest,
) -> Result<Observation, DesktopError> {
    req.frame.validate()?;
    req.text.validate()?;
    let screen = sessions.screen_of(session).await?;
    let text_view = if req.text.view.wants_text() {
        Some(
            text_view(
                &screen,
                browsers.get(screen.number),
                &state.text_views,
                &req.text,
            )
            .await?,
        )
    } else {
        None
    };
    let mut observation = if req.text.view.wants_image() {
        capture_observation(session, state, &screen, req).await?.0
    } else {
        describe_screen(state, &screen).await?
    };
    observation.text_view = text_view;
    Ok(observation)
}

/// An observation without an image (a text view alone): the screen's
/// size, pointer and active window, and a frame id whose pixels are the
/// screen's. The unchanged-frame rule is left alone, as no image is shown.
async fn describe_screen(
    state: &Arc<DesktopState>,
    screen: &Screen,
) -> Result<Observation, DesktopError> {
    let (state, number) = (Arc::clone(state), screen.number);
    screen
        .with_x(move |x| {
            let display = &x.display;
            let whole = Region {
                x: 0,
                y: 0,
                width: u32::from(display.width),
                height: u32::from(display.height),
            };
            let ((cx, cy), active_window) = pointer_and_active_title(display)?;
            let frame_id = state.next_frame_id();
            state.remember_frame(
                frame_id,
                FrameTransform {
                    region: whole,
                    frame_width: whole.width,
                    frame_height: whole.height,
                },
            );
            Ok(Observation {
                screen: number,
                frame_id: FrameId(frame_id),
                captured_at: now_rfc3339(),
                width: whole.width,
                height: whole.height,
                cursor: Cursor { x: cx, y: cy },
                active_window,
                unchanged: false,
                frame_width: whole.width,
                frame_height: whole.height,
                scale: 1.0,
                region: whole,
                format: ImageFormat::Png,
                bytes: 0,
                reduced: None,
                image_base64: None,
                text_view: None,
            })
        })
        .await?
}

/// Captures the screen now, shapes the frame and applies the
/// unchanged-frame rule; also returns the screen's fingerprint. The
/// capture, the shaping and the encoding run on the screen's X thread.
pub async fn capture_observation(
    session: &Session,
    state: &Arc<DesktopState>,
    screen: &Screen,
    req: ObserveRequest,
) -> Result<(Observation, u64), DesktopError> {
    let (state, recorder, number) = (Arc::clone(state), session.recorder(), screen.number);
    screen
        .with_x(move |x| {
            let req = &req;
            let grab = x.capturer.grab_raw(&x.display)?;
            let captured_at = now_rfc3339();
            let fingerprint = grab.fingerprint();
            let (width, height) = (u32::from(grab.width), u32::from(grab.height));
            let whole = Region {
                x: 0,
                y: 0,
                width,
                height,
            };
            let region = match req.region {
                Some(region) => check_region(region, width, height)?,
                None => whole,
            };
            let ((cx, cy), active_window) = pointer_and_active_title(&x.display)?;
            // The same pixels shown the same way: a zoom or another size of an
            // unchanged screen is still news to the agent, and a zoom does not
            // change when only the rest of the screen does (the clock). The
            // whole screen is told by the grab's fingerprint, before any
            // conversion; a zoom by its own pixels.
            let mut frame = None;
            let pixels = if region == whole {
                fingerprint
            } else {
                let converted = frame.insert(grab.to_frame());
                converted.region_fingerprint(region.x, region.y, region.width, region.height)
            };
            let shown_as = shown_key(pixels, region, req);
            // `force` always shows the frame, and it still counts as shown.
            // The X thread runs one observation of a screen at a time, so
            // the last frame cannot change between this read and the write
            // below.
            let previous = state.last_shown.lock().clone();
            let unchanged =
                !req.force && previous.as_ref().is_some_and(|shown| shown.key == shown_as);
            // An unchanged frame is not sent, so it is not converted or
            // encoded again either (a few milliseconds of both cores),
            // unless a recording stores it.
            let shaped = match previous {
                Some(shown) if unchanged && recorder.is_none() => Shaped {
                    bytes: Vec::new(),
                    format: shown.format,
                    transform: shown.transform,
                    reduced: shown.reduced,
                },
                // Shaping reads the server's pixels itself: it converts
                // only the region, halved first when it is shown at half
                // size or less. A scaled whole screen is kept, and the
                // next one redoes only what was drawn since.
                _ => match &frame {
                    Some(frame) => shape(frame, region, &req.frame)?,
                    None => shape_kept(&grab, region, &req.frame, &mut x.rescaler)?,
                },
            };
            *state.last_shown.lock() = Some(Shown {
                key: shown_as,
                transform: shaped.transform,
                format: shaped.format,
                reduced: shaped.reduced.clone(),
            });
            let transform = shaped.transform;
            let frame_id = state.next_frame_id();
            state.remember_frame(frame_id, transform);
            // A recording gets the frame as the agent gets it; its writer
            // stores it, off this path.
            if let Some(recorder) = recorder {
                recorder.frame(FrameSeen {
                    frame_id,
                    bytes: shaped.bytes.clone(),
                    format: shaped.format,
                    transform,
                    active_window: active_window.clone(),
                    screen: number,
                });
            }
            let (image_base64, bytes) = if unchanged {
                (None, 0)
            } else {
                let encoded = base64::engine::general_purpose::STANDARD.encode(&shaped.bytes);
                (Some(encoded), shaped.bytes.len())
            };
            let observation = Observation {
                screen: number,
                frame_id: FrameId(frame_id),
                captured_at,
                width,
                height,
                cursor: Cursor { x: cx, y: cy },
                active_window,
                unchanged,
                frame_width: transform.frame_width,
                frame_height: transform.frame_height,
                scale: f64::from(transform.frame_width) / f64::from(region.width),
                region,
                format: shaped.format,
                bytes,
                reduced: shaped.reduced,
                image_base64,
                text_view: None,
            };
            Ok((observation, fingerprint))
        })
        .await?
}

/// What the unchanged-frame rule compares: the shown pixels of the screen
/// and how they are shown (region, bounds, format), never the encoded
/// bytes.
fn shown_key(fingerprint: u64, region: Region, req: &ObserveRequest) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    fingerprint.hash(&mut hasher);
    (region.x, region.y, region.width, region.height).hash(&mut hasher);
    req.frame.max_side.hash(&mut hasher);
    req.frame.max_pixels.hash(&mut hasher);
    (req.frame.format as u8, req.frame.quality).hash(&mut hasher);
    hasher.finish()
}
