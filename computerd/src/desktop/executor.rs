//! The action executor: runs a batch's actions in order and stops at the
//! first failure. Actions that only need X run back to back as one job on
//! the screen's X thread; a `wait` sleeps here, and the two steps that are
//! async (starting an app when a `focus` finds no window, and activating a
//! node over the accessibility bus) are awaited here. So the X thread never
//! waits on async work and no async thread waits on X.
//!
//! The executor knows the screen only through [`XSide`] and [`Hands`], and
//! the async steps through [`Steps`], so its rules are tested with a fake.

use crate::a11y::A11yError;
use crate::apps::FocusError;
use crate::desktop::effects::EffectsWatch;
use crate::display::{within, XFault};
use crate::input::InputError;
use crate::screens::ScreenError;
use computer_protocol::recording::{ScreenPoint, SECRET_SHOWN_AS};
use computer_protocol::{Action, ActionOutcome};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// What the executor does with X: one screen's input and windows.
pub trait Hands: Send + 'static {
    /// The screen's width and height in pixels.
    fn size(&self) -> (u16, u16);
    /// A pointer, scroll or key action.
    fn perform(&mut self, action: &Action) -> Result<(), InputError>;
    /// Raises and focuses the first window whose class or title holds
    /// `target`; false when none does.
    fn focus(&mut self, target: &str) -> Result<bool, XFault>;
    /// Raises and focuses one window.
    fn raise(&mut self, window: u32) -> Result<(), XFault>;
}

/// Where the [`Hands`] live: jobs run there one at a time, in order.
pub trait XSide: Sync {
    type Hands: Hands;
    fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Self::Hands) -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, ScreenError>> + Send;
}

/// The async steps of a batch.
pub trait Steps: Sync {
    /// Starts the app `target` names (no window matched it) and focuses
    /// its window.
    fn launch(&self, target: &str) -> impl Future<Output = Result<(), FocusError>> + Send;
    /// Activates (or focuses) the node of action `index` over the
    /// accessibility bus.
    fn activate(&self, index: usize) -> impl Future<Output = Result<(), ActionError>> + Send;
}

/// A click by ref on a node whose app gives no position: the node's window
/// is raised first as a click would, then the node is activated over the
/// bus, unless it is a field that has the focus already.
#[derive(Debug, Clone, Copy)]
pub struct BusClick {
    pub window: Option<u32>,
    /// The node is a field with the focus already: GTK refuses to give it
    /// again, and raising its window was all the click had to do.
    pub already_focused: bool,
}

/// Why one action of a batch failed; its text is the action's `error` in
/// the result, where the agent reads it.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
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
    #[error(transparent)]
    X(#[from] XFault),
    #[error("`actions[{index}].ref` needs the screen's accessibility bus, which is not running: {reason}")]
    NoBus { index: usize, reason: String },
    #[error("`actions[{index}].ref`: {source}")]
    Activate { index: usize, source: A11yError },
}

/// What a job on the X thread left for the executor to do next.
enum Next {
    /// Every action of the job ran; go on after it.
    Ran,
    /// An action failed: the batch ends.
    Failed,
    /// `focus` found no window: start the app, awaited here.
    Launch,
    /// A click on a bus node whose window is raised: activate it.
    Activate,
}

/// Runs `actions` in order, the first failure ending the batch, and
/// returns each one's outcome with the watch it was handed (which credits
/// what each action changed).
pub async fn execute<X: XSide, S: Steps>(
    x: &X,
    steps: &S,
    actions: Arc<[Action]>,
    by_bus: Arc<HashMap<usize, BusClick>>,
    mut watch: Option<EffectsWatch>,
) -> Result<(Vec<ActionOutcome>, Option<EffectsWatch>), ScreenError> {
    let mut outcomes = Vec::with_capacity(actions.len());
    let mut index = 0;
    while index < actions.len() {
        if let Action::Wait { ms } = actions[index] {
            if let Some(watch) = watch.as_mut() {
                watch.before(index, &actions[index]);
            }
            tokio::time::sleep(Duration::from_millis(ms)).await;
            outcomes.push(outcome(index, &actions[index], Ok(())));
            index += 1;
            continue;
        }
        let (first, batch, clicks) = (index, Arc::clone(&actions), Arc::clone(&by_bus));
        let (ran, next, returned) = x
            .run(move |hands| {
                let (ran, next) = run_on_x(hands, first, &batch, &clicks, watch.as_mut());
                (ran, next, watch)
            })
            .await?;
        watch = returned;
        index += ran.len();
        outcomes.extend(ran);
        let result = match next {
            Next::Ran => continue,
            Next::Failed => break,
            Next::Launch => {
                let Action::Focus { target } = &actions[index] else {
                    unreachable!("only a focus asks to launch");
                };
                steps.launch(target).await.map_err(ActionError::from)
            }
            Next::Activate => steps.activate(index).await,
        };
        let failed = result.is_err();
        outcomes.push(outcome(index, &actions[index], result));
        if failed {
            break;
        }
        index += 1;
    }
    Ok((outcomes, watch))
}

/// Runs actions from `first` on the X thread until a wait, the end of the
/// batch, a failure, or a step that must be awaited off the thread (that
/// action's outcome is then left to the executor).
fn run_on_x<H: Hands>(
    hands: &mut H,
    first: usize,
    actions: &[Action],
    by_bus: &HashMap<usize, BusClick>,
    mut watch: Option<&mut EffectsWatch>,
) -> (Vec<ActionOutcome>, Next) {
    let mut ran = Vec::new();
    for (index, action) in actions.iter().enumerate().skip(first) {
        if matches!(action, Action::Wait { .. }) {
            break;
        }
        if let Some(watch) = watch.as_deref_mut() {
            watch.before(index, action);
        }
        let result = match (action, by_bus.get(&index)) {
            (Action::Click { .. }, Some(click)) => {
                let raised = click.window.map_or(Ok(()), |w| hands.raise(w));
                match raised {
                    Ok(()) if !click.already_focused => return (ran, Next::Activate),
                    other => other.map_err(ActionError::from),
                }
            }
            (Action::Focus { target }, _) => match hands.focus(target) {
                Ok(true) => Ok(()),
                Ok(false) => return (ran, Next::Launch),
                Err(e) => Err(e.into()),
            },
            _ => check_coordinates(hands, index, action).and_then(|()| Ok(hands.perform(action)?)),
        };
        let failed = result.is_err();
        ran.push(outcome(index, action, result));
        if failed {
            return (ran, Next::Failed);
        }
    }
    (ran, Next::Ran)
}

fn outcome(index: usize, action: &Action, result: Result<(), ActionError>) -> ActionOutcome {
    ActionOutcome {
        index,
        kind: action.kind(),
        ok: result.is_ok(),
        error: result.err().map(|e| hide_secret(index, action, e)),
        at: action.point().map(|(x, y)| ScreenPoint { x, y }),
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
fn check_coordinates<H: Hands>(
    hands: &H,
    index: usize,
    action: &Action,
) -> Result<(), ActionError> {
    let (width, height) = hands.size();
    match action.point() {
        Some((x, y)) if !within(width, height, x, y) => Err(ActionError::OffScreen {
            index,
            x,
            y,
            width,
            height,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::ActionKind;
    use parking_lot::Mutex;
    use serde_json::json;

    /// A screen's X side that records what it was asked to do.
    #[derive(Default)]
    struct FakeHands {
        done: Vec<String>,
        /// Titles `focus` finds.
        windows: Vec<&'static str>,
        /// `perform` fails on this kind of action.
        refuse: Option<ActionKind>,
    }

    impl Hands for FakeHands {
        fn size(&self) -> (u16, u16) {
            (1280, 800)
        }

        fn perform(&mut self, action: &Action) -> Result<(), InputError> {
            if self.refuse == Some(action.kind()) {
                return Err(InputError::HalfPoint);
            }
            self.done.push(action.kind().to_string());
            Ok(())
        }

        fn focus(&mut self, target: &str) -> Result<bool, XFault> {
            let found = self.windows.iter().any(|w| w.contains(target));
            if found {
                self.done.push(format!("focus {target}"));
            }
            Ok(found)
        }

        fn raise(&mut self, window: u32) -> Result<(), XFault> {
            self.done.push(format!("raise {window}"));
            Ok(())
        }
    }

    #[derive(Default)]
    struct FakeScreen {
        hands: Arc<Mutex<FakeHands>>,
        /// Jobs run on the "X thread", to see how a batch is split.
        jobs: Mutex<usize>,
    }

    impl XSide for FakeScreen {
        type Hands = FakeHands;

        async fn run<T: Send + 'static>(
            &self,
            job: impl FnOnce(&mut FakeHands) -> T + Send + 'static,
        ) -> Result<T, ScreenError> {
            *self.jobs.lock() += 1;
            Ok(job(&mut self.hands.lock()))
        }
    }

    /// Async steps that record what they were asked, in the same log.
    struct FakeSteps {
        log: Arc<Mutex<FakeHands>>,
        launch_fails: bool,
    }

    impl Steps for FakeSteps {
        async fn launch(&self, target: &str) -> Result<(), FocusError> {
            self.log.lock().done.push(format!("launch {target}"));
            match self.launch_fails {
                true => Err(FocusError::NotReady {
                    summary: format!("{target} showed no window"),
                }),
                false => Ok(()),
            }
        }

        async fn activate(&self, index: usize) -> Result<(), ActionError> {
            self.log.lock().done.push(format!("activate {index}"));
            Ok(())
        }
    }

    fn action(value: serde_json::Value) -> Action {
        serde_json::from_value(value).expect("a valid action")
    }

    fn click(x: i32, y: i32) -> Action {
        action(json!({"type": "click", "x": x, "y": y}))
    }

    async fn run(
        screen: &FakeScreen,
        launch_fails: bool,
        actions: Vec<Action>,
        by_bus: HashMap<usize, BusClick>,
    ) -> Vec<ActionOutcome> {
        let steps = FakeSteps {
            log: Arc::clone(&screen.hands),
            launch_fails,
        };
        let (outcomes, watch) = execute(screen, &steps, actions.into(), Arc::new(by_bus), None)
            .await
            .expect("the fake screen never fails");
        assert!(watch.is_none());
        outcomes
    }

    fn done(screen: &FakeScreen) -> Vec<String> {
        screen.hands.lock().done.clone()
    }

    #[tokio::test]
    async fn a_batch_runs_in_order_as_one_x_job() {
        let screen = FakeScreen::default();
        let scroll = action(json!({"type": "scroll", "direction": "down", "x": 10, "y": 10}));
        let outcomes = run(
            &screen,
            false,
            vec![click(5, 5), scroll, click(6, 6)],
            HashMap::new(),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok));
        assert_eq!(
            outcomes.iter().map(|o| o.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(done(&screen), ["click", "scroll", "click"]);
        assert_eq!(
            *screen.jobs.lock(),
            1,
            "no step between them needs the executor"
        );
    }

    #[tokio::test]
    async fn a_point_off_the_screen_fails_its_action_and_ends_the_batch() {
        let screen = FakeScreen::default();
        let outcomes = run(
            &screen,
            false,
            vec![click(5, 5), click(1280, 10), click(7, 7)],
            HashMap::new(),
        )
        .await;
        assert_eq!(outcomes.len(), 2);
        assert!(outcomes[0].ok);
        let error = outcomes[1].error.as_deref().unwrap();
        assert!(
            error.contains("`actions[1]` point (1280, 10) is off the screen")
                && error.contains("x runs 0 to 1279"),
            "{error}"
        );
        assert_eq!(done(&screen), ["click"]);
    }

    #[tokio::test]
    async fn an_input_failure_ends_the_batch_and_a_secret_is_not_shown() {
        let screen = FakeScreen::default();
        screen.hands.lock().refuse = Some(ActionKind::Type);
        let secret = Action::Type {
            text: "hunter2".into(),
            secret: true,
        };
        let outcomes = run(&screen, false, vec![secret, click(1, 1)], HashMap::new()).await;
        assert_eq!(outcomes.len(), 1);
        let error = outcomes[0].error.as_deref().unwrap();
        assert!(
            error.contains("(secret, shown as") && !error.contains("hunter2"),
            "{error}"
        );
        assert!(done(&screen).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_sleeps_off_the_x_thread_and_splits_the_batch() {
        let screen = FakeScreen::default();
        let started = tokio::time::Instant::now();
        let outcomes = run(
            &screen,
            false,
            vec![click(1, 1), Action::Wait { ms: 700 }, click(2, 2)],
            HashMap::new(),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok) && outcomes.len() == 3);
        assert_eq!(outcomes[1].kind, ActionKind::Wait);
        assert!(started.elapsed() >= Duration::from_millis(700));
        assert_eq!(*screen.jobs.lock(), 2);
    }

    #[tokio::test]
    async fn focus_starts_the_app_only_when_no_window_matches() {
        let screen = FakeScreen::default();
        screen.hands.lock().windows = vec!["xterm"];
        let focus = |target: &str| Action::Focus {
            target: target.into(),
        };
        let outcomes = run(
            &screen,
            false,
            vec![focus("xterm"), focus("gedit"), click(3, 3)],
            HashMap::new(),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok) && outcomes.len() == 3);
        assert_eq!(done(&screen), ["focus xterm", "launch gedit", "click"]);
    }

    #[tokio::test]
    async fn a_failed_launch_ends_the_batch_with_its_reason() {
        let screen = FakeScreen::default();
        let focus = Action::Focus {
            target: "gedit".into(),
        };
        let outcomes = run(&screen, true, vec![focus, click(3, 3)], HashMap::new()).await;
        assert_eq!(outcomes.len(), 1);
        assert!(!outcomes[0].ok);
        assert!(outcomes[0]
            .error
            .as_deref()
            .unwrap()
            .contains("gedit showed no window"));
        assert_eq!(done(&screen), ["launch gedit"]);
    }

    #[tokio::test]
    async fn a_click_on_a_bus_node_raises_its_window_then_activates_it() {
        let screen = FakeScreen::default();
        let element_click = action(json!({"type": "click", "ref": "e3"}));
        let by_bus = HashMap::from([
            (
                0,
                BusClick {
                    window: Some(42),
                    already_focused: false,
                },
            ),
            (
                1,
                BusClick {
                    window: Some(42),
                    already_focused: true,
                },
            ),
        ]);
        let outcomes = run(
            &screen,
            false,
            vec![element_click.clone(), element_click, click(4, 4)],
            by_bus,
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok) && outcomes.len() == 3);
        assert_eq!(
            done(&screen),
            ["raise 42", "activate 0", "raise 42", "click"],
            "a field that has the focus is only raised"
        );
    }
}
