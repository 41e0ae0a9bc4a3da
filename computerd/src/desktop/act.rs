//! `computer_act`: runs a batch of actions in order, stopping at the first
//! failure, then observes the screen after `settle_ms`.

use super::effects::EffectsWatch;
use super::observe::capture_observation;
use super::quiet::settle;
use super::{blocking, DesktopError};
use crate::a11y::{self, A11yError, A11yHandle};
use crate::apps::{FocusError, Launcher, OnScreen};
use crate::browser::pages::Pages;
use crate::browser::{BrowserScreen, Browsers};
use crate::input::{focus_window, focus_window_id, InputError};
use crate::screens::{Screen, ScreenX};
use crate::sessions::{Session, Sessions};
use crate::textview::{check_window_unmoved, resolve_ref, RefTarget};
use computer_protocol::limits::REPEAT_UNCHANGED_MAX;
use computer_protocol::recording::{ScreenPoint, SECRET_SHOWN_AS};
use computer_protocol::textview::TREE_DEADLINE_MS;
use computer_protocol::{
    ActRequest, ActResponse, Action, ActionEffect, ActionOutcome, FrameTransform, InvalidInput,
    ObserveRequest,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn act(
    sessions: &Arc<Sessions>,
    session: &Arc<Session>,
    launcher: Arc<Launcher>,
    req: ActRequest,
) -> Result<ActResponse, DesktopError> {
    req.validate()?;
    let mut req = req;
    if let Some(frame_id) = req.frame_id {
        let transform = session.frame(frame_id.0)?;
        req.actions = to_screen(&req.actions, &transform)?;
    }
    let screen = sessions.screen_of(session).await?;
    let accessible = if req.actions.iter().any(|a| a.element().is_some()) {
        let (actions, accessible) = resolve_refs(session, &screen, req.actions).await?;
        req.actions = actions;
        accessible
    } else {
        HashMap::new()
    };

    // Batches of pointer, scroll and key actions (waits between them
    // allowed) are compared as JSON text.
    let repeat_key = Action::batch_counts_as_repeatable(&req.actions)
        .then(|| serde_json::to_string(&req.actions).unwrap_or_default());
    if let Some(key) = &repeat_key {
        let tracker = session.repeats.lock();
        if tracker.should_refuse(key, REPEAT_UNCHANGED_MAX) {
            return Err(DesktopError::NotReacting);
        }
    }

    let requested = req.actions.len();
    let track = repeat_key.is_some();
    let actions = std::mem::take(&mut req.actions);
    let run_screen = Arc::clone(&screen);
    let on = OnScreen {
        screen: BrowserScreen::of(&screen),
        cwd: session.cwd(),
    };
    let starter = AppStarter {
        launcher,
        on,
        runtime: tokio::runtime::Handle::current(),
        screen: Arc::clone(&screen),
        accessible,
    };
    let pages = sessions.browsers().pages(screen.number);
    let (outcomes, before, mut watch) = blocking(move || {
        // Without a watch the batch runs all the same, telling no effects.
        let mut watch = start_watch(&run_screen, pages);
        run_screen
            .with_x(|x| {
                let before = if track {
                    Some(x.capturer.grab(&x.display)?.fingerprint())
                } else {
                    None
                };
                let outcomes = run_actions(x, &actions, &starter, watch.as_mut());
                Ok((outcomes, before, watch))
            })
            .map_err(DesktopError::from)?
    })
    .await?;

    let settled = if req.observe {
        settle(&screen, req.settling()).await
    } else {
        Ok((true, Duration::ZERO))
    };
    let mut effects = match watch.take() {
        Some(watch) => {
            let on = Arc::clone(&screen);
            blocking(move || Ok(finish_watch(&on, watch))).await?
        }
        None => Vec::new(),
    };
    settle_page_title(sessions.browsers(), &screen, &mut effects).await;
    let (settled, waited) = settled?;
    let observation = if req.observe {
        let (s, sc) = (Arc::clone(session), Arc::clone(&screen));
        let shape = ObserveRequest {
            frame: req.frame,
            ..ObserveRequest::default()
        };
        let (observation, after) = blocking(move || capture_observation(&s, &sc, &shape)).await?;
        record_repeat(session, repeat_key, before, Some(after));
        Some(observation)
    } else {
        let after = match before {
            Some(_) => Some(fingerprint_now(&screen).await?),
            None => None,
        };
        record_repeat(session, repeat_key, before, after);
        None
    };
    Ok(ActResponse {
        outcomes,
        requested,
        observation,
        settled,
        settle_waited_ms: waited.as_millis() as u64,
        effects,
    })
}

/// The batch's effects watch, or none when the screen's X server refuses
/// one (it is then logged: the batch itself is not at fault).
fn start_watch(screen: &Screen, pages: Option<Arc<Pages>>) -> Option<EffectsWatch> {
    let started = Instant::now();
    let conn = screen
        .take_watch()
        .map_err(|e| tracing::warn!("no effects for this batch: {e}"))
        .ok()?;
    let watch = EffectsWatch::begin(conn, pages)
        .map_err(|e| tracing::warn!("no effects for this batch: {e}"))
        .ok();
    tracing::debug!(
        cost_us = started.elapsed().as_micros() as u64,
        "effects watch began"
    );
    watch
}

/// A batch that navigated gets its page's title as it is after the
/// settle: Chromium tells the new URL at once but not the title the page
/// sets later. One DevTools round trip, only for such a batch.
async fn settle_page_title(browsers: &Browsers, screen: &Screen, effects: &mut [ActionEffect]) {
    let Some(told) = effects.iter_mut().rev().find_map(|e| e.page.as_mut()) else {
        return;
    };
    let Some(browser) = browsers.get(screen.number) else {
        return;
    };
    let Some(target) = browser.cdp().pages().latest_id() else {
        return;
    };
    if let Some(now) = browser
        .cdp()
        .settled_page(&target, PAGE_TITLE_DEADLINE)
        .await
    {
        if now.url == told.url {
            *told = now;
        }
    }
}

/// How long the settled page's title may take to read.
const PAGE_TITLE_DEADLINE: Duration = Duration::from_millis(250);

fn finish_watch(screen: &Screen, watch: EffectsWatch) -> Vec<ActionEffect> {
    let started = Instant::now();
    let (effects, conn) = watch.finish();
    screen.return_watch(conn);
    tracing::debug!(
        cost_us = started.elapsed().as_micros() as u64,
        "effects watch finished"
    );
    effects
}

fn record_repeat(session: &Session, key: Option<String>, before: Option<u64>, after: Option<u64>) {
    let changed = before.is_none() || before != after;
    session.repeats.lock().record(key, changed);
}

async fn fingerprint_now(screen: &Arc<Screen>) -> Result<u64, DesktopError> {
    let screen = Arc::clone(screen);
    blocking(move || {
        screen
            .with_x(|x| Ok(x.capturer.grab(&x.display)?.fingerprint()))
            .map_err(DesktopError::from)?
    })
    .await
}

/// Runs actions in order; the first failure ends the batch.
/// What a `focus` needs to start an app when no window matches.
struct AppStarter {
    launcher: Arc<Launcher>,
    on: OnScreen,
    /// The batch runs on a blocking thread; starting an app is async.
    runtime: tokio::runtime::Handle,
    /// For clicks by ref on nodes without a position: the screen's AT-SPI
    /// bus and, by action index, the node to act on.
    screen: Arc<Screen>,
    accessible: HashMap<usize, Accessible>,
}

/// A click by ref on a node without a position.
struct Accessible {
    handle: A11yHandle,
    /// Focus the node rather than run its action (fields).
    focus: bool,
    /// It has the focus already: GTK refuses `GrabFocus` on entries.
    focused: bool,
    /// Its window, raised and focused first as a click on it would.
    window: Option<u32>,
}

fn run_actions(
    x: &mut ScreenX,
    actions: &[Action],
    starter: &AppStarter,
    mut watch: Option<&mut EffectsWatch>,
) -> Vec<ActionOutcome> {
    let mut outcomes = Vec::with_capacity(actions.len());
    for (index, action) in actions.iter().enumerate() {
        if let Some(watch) = watch.as_deref_mut() {
            watch.before(index, action);
        }
        let result = run_one(x, index, action, starter);
        let ok = result.is_ok();
        outcomes.push(ActionOutcome {
            index,
            kind: action.kind().to_string(),
            ok,
            error: result.err().map(|e| hide_secret(index, action, e)),
            at: action.point().map(|(x, y)| ScreenPoint { x, y }),
        });
        if !ok {
            break;
        }
    }
    outcomes
}

/// Why one action of a batch failed; its text is the action's `error` in
/// the result, where the agent reads it.
#[derive(Debug, thiserror::Error)]
enum ActionError {
    #[error("`actions[{index}]` point ({x}, {y}) is off the screen: the screen is {width}x{height}, so x runs 0 to {} and y 0 to {}", i32::from(*width) - 1, i32::from(*height) - 1)]
    OffScreen {
        index: usize,
        x: i32,
        y: i32,
        width: u16,
        height: u16,
    },
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Focus(#[from] FocusError),
    #[error("`actions[{index}].ref` needs the screen's accessibility bus, which is not running: {reason}")]
    NoBus { index: usize, reason: String },
    #[error("`actions[{index}].ref`: {source}")]
    Activate { index: usize, source: A11yError },
}

fn run_one(
    x: &mut ScreenX,
    index: usize,
    action: &Action,
    starter: &AppStarter,
) -> Result<(), ActionError> {
    check_coordinates(x, index, action)?;
    match action {
        Action::Wait { ms } => {
            std::thread::sleep(Duration::from_millis(*ms));
            Ok(())
        }
        Action::Focus { target } => {
            if focus_window(&x.display, target)? {
                Ok(())
            } else {
                // The launcher uses X connections of its own, so holding
                // this screen's connection meanwhile is fine.
                Ok(starter
                    .runtime
                    .block_on(starter.launcher.focus_or_launch(&starter.on, target))?)
            }
        }
        Action::Click { .. } if starter.accessible.contains_key(&index) => {
            let target = &starter.accessible[&index];
            if let Some(window) = target.window {
                focus_window_id(&x.display, window)?;
            }
            if target.focus && target.focused {
                return Ok(());
            }
            let bus = starter.screen.a11y().map_err(|e| ActionError::NoBus {
                index,
                reason: e.to_string(),
            })?;
            let deadline = Duration::from_millis(TREE_DEADLINE_MS);
            starter
                .runtime
                .block_on(a11y::activate(bus, &target.handle, target.focus, deadline))
                .map_err(|source| ActionError::Activate { index, source })
        }
        other => Ok(x.input.perform(&x.display, other)?),
    }
}

/// A secret text's failure says what went wrong but not with which
/// character: the reason of a typing error names the character's code.
fn hide_secret(index: usize, action: &Action, reason: ActionError) -> String {
    match action {
        Action::Type { secret: true, .. } => format!(
            "`actions[{index}].text` (secret, shown as {SECRET_SHOWN_AS}) could not be typed: a character in it is a control character other than \\n and \\t, or has no key on this keyboard; the text is not shown"
        ),
        _ => reason.to_string(),
    }
}

/// Out-of-screen coordinates fail the action that has them.
fn check_coordinates(x: &ScreenX, index: usize, action: &Action) -> Result<(), ActionError> {
    match action.point() {
        Some((px, py)) if !x.display.contains(px, py) => Err(ActionError::OffScreen {
            index,
            x: px,
            y: py,
            width: x.display.width,
            height: x.display.height,
        }),
        _ => Ok(()),
    }
}

/// The batch with every ref of the session's latest text view turned into
/// the screen point at its node's centre, or (a click on a node of an app
/// that gives no positions) into the node to act on over the bus, by
/// action index. The view's window must not have moved since.
async fn resolve_refs(
    session: &Session,
    screen: &Arc<Screen>,
    actions: Vec<Action>,
) -> Result<(Vec<Action>, HashMap<usize, Accessible>), DesktopError> {
    let snapshot = session.text_views().lock().latest();
    let mut resolved = Vec::with_capacity(actions.len());
    let mut accessible = HashMap::new();
    for (index, mut action) in actions.into_iter().enumerate() {
        if let Some(element) = action.element() {
            let field = format!("`actions[{index}].ref`");
            match resolve_ref(snapshot.as_deref(), element, &field)? {
                RefTarget::Point(x, y) => action.set_point((x, y)),
                RefTarget::Accessible {
                    handle,
                    focus,
                    focused,
                } => {
                    if !matches!(action, Action::Click { .. }) {
                        return Err(DesktopError::InvalidInput(InvalidInput(format!(
                            "{field} `{element}` has no position on the screen (its app reports none), so only a click can use it; give x and y from the screenshot instead"
                        ))));
                    }
                    let window = snapshot
                        .as_ref()
                        .and_then(|s| s.window.as_ref())
                        .map(|w| w.id);
                    accessible.insert(
                        index,
                        Accessible {
                            handle,
                            focus,
                            focused,
                            window,
                        },
                    );
                }
            }
        }
        resolved.push(action);
    }
    if let Some(snapshot) = snapshot {
        let screen = Arc::clone(screen);
        blocking(move || {
            screen
                .with_x(|x| check_window_unmoved(&x.display, &snapshot))?
                .map_err(DesktopError::from)
        })
        .await?;
    }
    Ok((resolved, accessible))
}

/// The batch with every x/y taken from frame pixels to screen pixels.
fn to_screen(actions: &[Action], transform: &FrameTransform) -> Result<Vec<Action>, DesktopError> {
    actions
        .iter()
        .enumerate()
        .map(|(index, action)| {
            let mut action = action.clone();
            if let Some((x, y)) = action.point() {
                let point = transform.to_screen(x, y).map_err(|e| {
                    DesktopError::InvalidInput(InvalidInput(format!("`actions[{index}]` {e}")))
                })?;
                action.set_point(point);
            }
            Ok(action)
        })
        .collect()
}
