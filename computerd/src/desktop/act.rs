//! `computer_act`: a batch from request to result. Frame and ref
//! coordinates become screen points, the unchanged-batch rule may refuse
//! it, the executor runs its actions (see `executor`), then the screen
//! settles and is observed.

use super::effects::{BarePopup, EffectsWatch, Finished};
use super::executor::{execute, ActionError, BusClick, Hands, Steps, XSide};
use super::observe::capture_observation;
use super::quiet::settle;
use super::state::DesktopState;
use super::DesktopError;
use crate::a11y::{self, A11yHandle};
use crate::apps::{FocusError, Launcher, OnScreen};
use crate::browser::pages::Pages;
use crate::browser::{Browser, BrowserScreen, Browsers};
use crate::display::XFault;
use crate::input::InputError;
use crate::screens::{Screen, ScreenError, ScreenX, WatchConnection};
use crate::sessions::{Session, Sessions};
use crate::textview::{
    check_popups_shown, check_window_unmoved, fill_popup_items, resolve_ref, RefTarget,
    POPUP_ITEMS_DEADLINE,
};
use crate::windows::{focus_window, focus_window_id, WmMenus};
use computer_protocol::limits::REPEAT_UNCHANGED_MAX;
use computer_protocol::textview::TREE_DEADLINE_MS;
use computer_protocol::{
    ActRequest, ActResponse, Action, ActionEffect, FrameTransform, InvalidInput, ObserveRequest,
    PopupEntry,
};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn act(
    sessions: &Arc<Sessions>,
    browsers: &Browsers,
    session: &Arc<Session>,
    state: &Arc<DesktopState>,
    launcher: &Arc<Launcher>,
    req: ActRequest,
) -> Result<ActResponse, DesktopError> {
    req.validate()?;
    let mut req = req;
    if let Some(frame_id) = req.frame_id {
        let transform = state.frame(frame_id.0)?;
        req.actions = to_screen(&req.actions, &transform)?;
    }
    let screen = sessions.screen_of(session).await?;
    let (by_bus, nodes) = if req.actions.iter().any(|a| a.element().is_some()) {
        let (actions, by_bus, nodes) = resolve_refs(state, &screen, req.actions).await?;
        req.actions = actions;
        (by_bus, nodes)
    } else {
        (HashMap::new(), HashMap::new())
    };

    // Batches of pointer, scroll and key actions (waits between them
    // allowed) are compared as JSON text.
    let repeat_key = Action::batch_counts_as_repeatable(&req.actions)
        .then(|| serde_json::to_string(&req.actions).unwrap_or_default());
    if let Some(key) = &repeat_key {
        let tracker = state.repeats.lock();
        if tracker.should_refuse(key, REPEAT_UNCHANGED_MAX) {
            return Err(DesktopError::NotReacting);
        }
    }

    let requested = req.actions.len();
    let track = repeat_key.is_some();
    let actions: Arc<[Action]> = std::mem::take(&mut req.actions).into();
    let pages = browsers.pages(screen.number);
    let (kept, display_number) = (screen.take_watch(), screen.display_number);
    let wm_menus = screen.wm_menus();
    // Without a watch the batch runs all the same, telling no effects.
    let (before, watch) = screen
        .with_x(move |x| {
            let before = match track {
                true => Some(x.capturer.grab_raw(&x.display)?.fingerprint()),
                false => None,
            };
            Ok::<_, DesktopError>((before, start_watch(kept, display_number, pages, wm_menus)))
        })
        .await??;
    let steps = ActSteps {
        launcher,
        on: OnScreen {
            screen: BrowserScreen::of(&screen),
            cwd: session.cwd(),
        },
        screen: &screen,
        nodes,
    };
    let (outcomes, mut watch) = execute(&*screen, &steps, actions, Arc::new(by_bus), watch).await?;

    let settled = if req.observe {
        settle(&screen, req.settling()).await
    } else {
        Ok((true, Duration::ZERO))
    };
    let mut effects = match watch.take() {
        Some(watch) => {
            let finished = screen.with_x(move |_| finish_watch(watch)).await?;
            screen.return_watch(finished.conn);
            let mut effects = finished.effects;
            let browser = browsers.get(screen.number);
            list_popup_items(
                &screen,
                browser.as_deref(),
                &mut effects,
                finished.bare_popups,
            )
            .await;
            effects
        }
        None => Vec::new(),
    };
    settle_page_title(browsers, &screen, &mut effects).await;
    let (settled, waited) = settled?;
    let observation = if req.observe {
        let shape = ObserveRequest {
            frame: req.frame,
            ..ObserveRequest::default()
        };
        let (observation, after) = capture_observation(session, state, &screen, shape).await?;
        record_repeat(state, repeat_key, before, Some(after));
        Some(observation)
    } else {
        let after = match before {
            Some(_) => Some(fingerprint_now(&screen).await?),
            None => None,
        };
        record_repeat(state, repeat_key, before, after);
        None
    };
    Ok(ActResponse {
        screen: screen.number,
        outcomes,
        requested,
        observation,
        settled,
        settle_waited_ms: waited.as_millis() as u64,
        effects,
    })
}

impl Hands for ScreenX {
    fn size(&self) -> (u16, u16) {
        (self.display.width, self.display.height)
    }

    fn perform(&mut self, action: &Action) -> Result<(), InputError> {
        self.input.perform(&self.display, action)
    }

    fn focus(&mut self, target: &str) -> Result<bool, XFault> {
        focus_window(&self.display, target)
    }

    fn raise(&mut self, window: u32) -> Result<(), XFault> {
        focus_window_id(&self.display, window)
    }
}

impl XSide for Screen {
    type Hands = ScreenX;

    fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut ScreenX) -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, ScreenError>> + Send {
        self.with_x(job)
    }
}

/// A batch's async steps on a real screen.
struct ActSteps<'a> {
    launcher: &'a Launcher,
    on: OnScreen,
    screen: &'a Arc<Screen>,
    /// By action index, the bus node a click by ref activates.
    nodes: HashMap<usize, BusNode>,
}

/// A node without a position, reached over the accessibility bus.
struct BusNode {
    handle: A11yHandle,
    /// Focus the node rather than run its action (fields).
    focus: bool,
}

impl Steps for ActSteps<'_> {
    fn launch(&self, target: &str) -> impl Future<Output = Result<(), FocusError>> + Send {
        self.launcher.focus_or_launch(&self.on, target)
    }

    async fn activate(&self, index: usize) -> Result<(), ActionError> {
        let node = &self.nodes[&index];
        let bus = self.screen.a11y().map_err(|e| ActionError::NoBus {
            index,
            reason: e.to_string(),
        })?;
        let deadline = Duration::from_millis(TREE_DEADLINE_MS);
        a11y::activate(bus, &node.handle, node.focus, deadline)
            .await
            .map_err(|source| ActionError::Activate { index, source })
    }
}

/// The batch's effects watch, or none when the screen's X server refuses
/// one (it is then logged: the batch itself is not at fault).
fn start_watch(
    kept: Option<WatchConnection>,
    display_number: u32,
    pages: Option<Arc<Pages>>,
    wm_menus: Arc<WmMenus>,
) -> Option<EffectsWatch> {
    let started = Instant::now();
    let conn = match kept {
        Some(conn) => conn,
        None => WatchConnection::open(display_number)
            .map_err(|e| tracing::warn!("no effects for this batch: {e}"))
            .ok()?,
    };
    let watch = EffectsWatch::begin(conn, pages)
        .map(|watch| watch.with_wm_menus(wm_menus))
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

/// The popups the batch opened that are still shown and whose toolkit
/// lists their items over AT-SPI (Chromium's context menu) are named in
/// their effects with those items, as the text view will list them.
async fn list_popup_items(
    screen: &Screen,
    browser: Option<&Browser>,
    effects: &mut [ActionEffect],
    bare: Vec<BarePopup>,
) {
    if bare.is_empty() {
        return;
    }
    let (told, mut popups): (Vec<(usize, String)>, Vec<PopupEntry>) = bare
        .into_iter()
        .map(|b| ((b.index, b.said), b.popup))
        .unzip();
    fill_popup_items(screen, browser, &mut popups, POPUP_ITEMS_DEADLINE).await;
    for ((index, said), popup) in told.into_iter().zip(popups) {
        if popup.items.is_empty() {
            continue;
        }
        let named = effects
            .iter_mut()
            .filter(|e| e.index == index)
            .flat_map(|e| e.popups_opened.iter_mut())
            .find(|p| **p == said);
        if let Some(named) = named {
            *named = popup.describe();
        }
    }
}

fn finish_watch(watch: EffectsWatch) -> Finished {
    let started = Instant::now();
    let finished = watch.finish();
    tracing::debug!(
        cost_us = started.elapsed().as_micros() as u64,
        "effects watch finished"
    );
    finished
}

fn record_repeat(
    state: &DesktopState,
    key: Option<String>,
    before: Option<u64>,
    after: Option<u64>,
) {
    let changed = before.is_none() || before != after;
    state.repeats.lock().record(key, changed);
}

async fn fingerprint_now(screen: &Screen) -> Result<u64, DesktopError> {
    screen
        .with_x(|x| Ok(x.capturer.grab_raw(&x.display)?.fingerprint()))
        .await?
}

/// The batch with every ref of the session's latest text view turned into
/// the screen point at its node's centre, or (a click on a node of an app
/// that gives no positions) into the node to act on over the bus, by
/// action index. The view's window must not have moved since, nor a
/// popup whose item a ref names have closed.
async fn resolve_refs(
    state: &DesktopState,
    screen: &Screen,
    actions: Vec<Action>,
) -> Result<ResolvedRefs, DesktopError> {
    let snapshot = state.text_views.lock().latest();
    let mut resolved = Vec::with_capacity(actions.len());
    let (mut by_bus, mut nodes) = (HashMap::new(), HashMap::new());
    let mut popups = Vec::new();
    for (index, mut action) in actions.into_iter().enumerate() {
        if let Some(element) = action.element() {
            let field = format!("`actions[{index}].ref`");
            match resolve_ref(snapshot.as_deref(), element, &field)? {
                RefTarget::Point(x, y) => action.set_point((x, y)),
                RefTarget::InPopup { x, y, popup } => {
                    action.set_point((x, y));
                    popups.push(popup);
                }
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
                    let already_focused = focus && focused;
                    by_bus.insert(
                        index,
                        BusClick {
                            window,
                            already_focused,
                        },
                    );
                    nodes.insert(index, BusNode { handle, focus });
                }
            }
        }
        resolved.push(action);
    }
    if let Some(snapshot) = snapshot {
        screen
            .with_x(move |x| {
                check_window_unmoved(&x.display, &snapshot)?;
                check_popups_shown(&x.display, &snapshot, &popups)
            })
            .await??;
    }
    Ok((resolved, by_bus, nodes))
}

/// The batch with refs resolved, the clicks that go over the bus, and
/// their nodes, by action index.
type ResolvedRefs = (
    Vec<Action>,
    HashMap<usize, BusClick>,
    HashMap<usize, BusNode>,
);

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
