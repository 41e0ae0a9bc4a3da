//! The actions of `computer_act` and the checks every batch passes before any
//! action runs.

use crate::error::InvalidInput;
use crate::limits::{
    ACTIONS_MAX, SCROLL_STEPS_DEFAULT, SCROLL_STEPS_MAX, SCROLL_STEPS_MIN, SETTLE_DEFAULT_MS,
    TYPE_TEXT_MAX_CHARS, WAIT_MAX_MS,
};
use crate::observe::Observation;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Button {
    #[default]
    Left,
    Middle,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

fn default_steps() -> u32 {
    SCROLL_STEPS_DEFAULT
}

/// One action. Coordinates are pixels of the session's screen, origin top-left.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Press and release a button at a point.
    Click {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y: Option<i32>,
        /// A node of the session's latest text view, in place of x/y.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        element: Option<String>,
        #[serde(default)]
        button: Button,
    },
    /// Move the pointer.
    Move {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y: Option<i32>,
        /// A node of the session's latest text view, in place of x/y.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        element: Option<String>,
    },
    /// Press a button (for drags), optionally moving first.
    Down {
        #[serde(default)]
        button: Button,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y: Option<i32>,
        /// A node of the session's latest text view, in place of x/y.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        element: Option<String>,
    },
    /// Release a button, optionally moving first.
    Up {
        #[serde(default)]
        button: Button,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y: Option<i32>,
        /// A node of the session's latest text view, in place of x/y.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        element: Option<String>,
    },
    /// Type any Unicode text; `\n` presses Return. A `secret` text (a
    /// password) is typed all the same but never shown: recordings, logs
    /// and errors show `•••` in its place.
    Type {
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        secret: bool,
    },
    /// Press a key chord such as `enter`, `ctrl+shift+t`, `cmd+a`.
    Key { key: String },
    /// Scroll by wheel steps, optionally moving first.
    Scroll {
        direction: ScrollDirection,
        #[serde(default = "default_steps")]
        steps: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y: Option<i32>,
        /// A node of the session's latest text view, in place of x/y.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        element: Option<String>,
    },
    /// Pause, 0 to 5000 ms.
    Wait { ms: u64 },
    /// Raise and focus a window by class or title (case-insensitive
    /// substring), or start the app when none matches.
    Focus { target: String },
}

/// Which kind of [`Action`] an outcome is about: its `type` tag. An enum on
/// the wire too, so an answer can only name a kind of action that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Click,
    Move,
    Down,
    Up,
    Type,
    Key,
    Scroll,
    Wait,
    Focus,
}

impl ActionKind {
    /// The tag, as the agent writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Click => "click",
            ActionKind::Move => "move",
            ActionKind::Down => "down",
            ActionKind::Up => "up",
            ActionKind::Type => "type",
            ActionKind::Key => "key",
            ActionKind::Scroll => "scroll",
            ActionKind::Wait => "wait",
            ActionKind::Focus => "focus",
        }
    }

    /// Input an agent expects the screen to answer: pointer, scroll, key
    /// and typing. A wait or a focus is not.
    pub fn is_input(self) -> bool {
        !matches!(self, ActionKind::Wait | ActionKind::Focus)
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Action {
    /// Its kind: the tag, as the agent wrote it.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Click { .. } => ActionKind::Click,
            Action::Move { .. } => ActionKind::Move,
            Action::Down { .. } => ActionKind::Down,
            Action::Up { .. } => ActionKind::Up,
            Action::Type { .. } => ActionKind::Type,
            Action::Key { .. } => ActionKind::Key,
            Action::Scroll { .. } => ActionKind::Scroll,
            Action::Wait { .. } => ActionKind::Wait,
            Action::Focus { .. } => ActionKind::Focus,
        }
    }

    /// Pointer, scroll and key actions: the input whose identical repeats on
    /// a screen that does not change are refused as "not reacting".
    pub fn is_repeatable_input(&self) -> bool {
        matches!(
            self,
            Action::Click { .. }
                | Action::Move { .. }
                | Action::Down { .. }
                | Action::Up { .. }
                | Action::Key { .. }
                | Action::Scroll { .. }
        )
    }

    /// True for a batch the "not reacting" rule counts: at least one
    /// pointer, scroll or key action, and nothing but those and waits (a
    /// pause between clicks is part of the same gesture). A batch of waits
    /// alone is an agent letting a slow job finish, never refused; text and
    /// focus change what the next batch acts on, so they never count.
    pub fn batch_counts_as_repeatable(actions: &[Action]) -> bool {
        actions.iter().any(Action::is_repeatable_input)
            && actions
                .iter()
                .all(|a| a.is_repeatable_input() || matches!(a, Action::Wait { .. }))
    }

    /// Checks the limits that do not depend on the screen. `index` names the
    /// action in the message (`actions[3].steps`).
    pub fn validate(&self, index: usize) -> Result<(), InvalidInput> {
        let at = |field: &str| format!("`actions[{index}].{field}`");
        match self {
            Action::Scroll { steps, .. } if !(SCROLL_STEPS_MIN..=SCROLL_STEPS_MAX).contains(steps) => {
                Err(InvalidInput(format!(
                    "{} is {steps}: scroll takes {SCROLL_STEPS_MIN} to {SCROLL_STEPS_MAX} steps; split a longer scroll into several actions",
                    at("steps")
                )))
            }
            Action::Wait { ms } if *ms > WAIT_MAX_MS => Err(InvalidInput(format!(
                "{} is {ms}: a wait is at most {WAIT_MAX_MS} ms; use several waits or observe again later",
                at("ms")
            ))),
            Action::Type { text, .. } if text.is_empty() => Err(InvalidInput(format!(
                "{} is empty: give the text to type",
                at("text")
            ))),
            Action::Type { text, .. } if text.chars().count() > TYPE_TEXT_MAX_CHARS => Err(InvalidInput(format!(
                "{} has {} characters: the limit is {TYPE_TEXT_MAX_CHARS}; type it in parts across several calls, or put long text in a file with `write_file`",
                at("text"),
                text.chars().count()
            ))),
            Action::Key { key } if key.trim().is_empty() => Err(InvalidInput(format!(
                "{} is empty: give a key such as `enter` or `ctrl+c`",
                at("key")
            ))),
            Action::Focus { target } if target.trim().is_empty() => Err(InvalidInput(format!(
                "{} is empty: give a window class or title",
                at("target")
            ))),
            Action::Down { x, y, .. } | Action::Up { x, y, .. } | Action::Scroll { x, y, .. }
                if x.is_some() != y.is_some() =>
            {
                Err(InvalidInput(format!(
                    "{} and {} go together: give both to move first, or neither",
                    at("x"),
                    at("y")
                )))
            }
            _ => self.check_target(&at),
        }
    }
}

impl Action {
    /// A click at a screen point.
    pub fn click_at(x: i32, y: i32, button: Button) -> Action {
        Action::Click {
            x: Some(x),
            y: Some(y),
            element: None,
            button,
        }
    }

    /// A pointer move to a screen point.
    pub fn move_to(x: i32, y: i32) -> Action {
        Action::Move {
            x: Some(x),
            y: Some(y),
            element: None,
        }
    }

    /// The node ref of a pointer action, if it names one.
    pub fn element(&self) -> Option<&str> {
        match self {
            Action::Click { element, .. }
            | Action::Move { element, .. }
            | Action::Down { element, .. }
            | Action::Up { element, .. }
            | Action::Scroll { element, .. } => element.as_deref(),
            _ => None,
        }
    }

    /// The point of a pointer action, when it has both x and y.
    pub fn point(&self) -> Option<(i32, i32)> {
        match self {
            Action::Click { x, y, .. }
            | Action::Move { x, y, .. }
            | Action::Down { x, y, .. }
            | Action::Up { x, y, .. }
            | Action::Scroll { x, y, .. } => x.zip(*y),
            _ => None,
        }
    }

    /// Sets the point of a pointer action and drops its ref (the ref or
    /// frame pixels resolved to screen pixels).
    pub fn set_point(&mut self, point: (i32, i32)) {
        match self {
            Action::Click { x, y, element, .. }
            | Action::Move { x, y, element, .. }
            | Action::Down { x, y, element, .. }
            | Action::Up { x, y, element, .. }
            | Action::Scroll { x, y, element, .. } => {
                *x = Some(point.0);
                *y = Some(point.1);
                *element = None;
            }
            _ => {}
        }
    }

    /// A point or a ref, never both; click and move need one of them.
    fn check_target(&self, at: &dyn Fn(&str) -> String) -> Result<(), InvalidInput> {
        let needs_target = matches!(self, Action::Click { .. } | Action::Move { .. });
        let has_point = self.point().is_some();
        match self.element() {
            Some(_) if has_point => Err(InvalidInput(format!(
                "{} and {}/{} both name a target: give either a ref from the latest text view or x and y",
                at("ref"),
                at("x"),
                at("y")
            ))),
            Some(r) if !is_node_ref(r) => Err(InvalidInput(format!(
                "{} is `{}`: a ref looks like `e12`, as listed by `computer_observe` with view text",
                at("ref"),
                r.chars().take(20).collect::<String>()
            ))),
            None if needs_target && !has_point => Err(InvalidInput(format!(
                "{} needs {} and {}, or {} (a node of the latest text view)",
                self.kind(),
                at("x"),
                at("y"),
                at("ref")
            ))),
            _ => Ok(()),
        }
    }
}

/// `e` followed by digits, as the text view writes refs.
pub fn is_node_ref(text: &str) -> bool {
    text.len() > 1
        && text.len() <= 12
        && text.starts_with('e')
        && text[1..].bytes().all(|b| b.is_ascii_digit())
}

fn default_observe() -> bool {
    true
}

fn default_settle() -> u64 {
    SETTLE_DEFAULT_MS
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActRequest {
    pub actions: Vec<Action>,
    #[serde(default = "default_observe")]
    pub observe: bool,
    #[serde(default = "default_settle")]
    pub settle_ms: u64,
    /// When given, every x/y of the batch is in this frame's pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<crate::ids::FrameId>,
    /// The shape of the screenshot taken after the batch.
    #[serde(default)]
    pub frame: crate::frame::FrameOptions,
    /// When the screenshot is taken: after `settle_ms` (`fixed`), or once
    /// the screen has been still for `quiet_ms` (`quiet`, `settle_ms` then
    /// being the longest wait).
    #[serde(default)]
    pub settle: Settle,
    #[serde(default = "default_quiet")]
    pub quiet_ms: u64,
}

use crate::settle::{default_settled, Settling};
pub use crate::settle::{
    Settle, QUIET_DEFAULT_MS, QUIET_MAX_MS, QUIET_MIN_MS, QUIET_SETTLE_DEFAULT_MS,
};

fn default_quiet() -> u64 {
    QUIET_DEFAULT_MS
}

impl ActRequest {
    /// The batch's settle options.
    pub fn settling(&self) -> Settling {
        Settling {
            settle: self.settle,
            settle_ms: self.settle_ms,
            quiet_ms: self.quiet_ms,
        }
    }

    /// Checks the batch before any action runs.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        let count = self.actions.len();
        if count == 0 {
            return Err(InvalidInput(format!(
                "`actions` is empty: give 1 to {ACTIONS_MAX} actions"
            )));
        }
        if count > ACTIONS_MAX {
            return Err(InvalidInput(format!(
                "`actions` has {count} actions: the limit is {ACTIONS_MAX}; split the batch into several calls"
            )));
        }
        self.settling().validate()?;
        for (index, action) in self.actions.iter().enumerate() {
            action.validate(index)?;
        }
        self.frame.validate()
    }
}

/// What happened to one action. Actions after a failure are not run and get
/// no outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActionOutcome {
    pub index: usize,
    #[serde(rename = "type")]
    pub kind: ActionKind,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The screen point a pointer or scroll action used (after `ref` and
    /// `frame_id` were resolved), in screen pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<crate::recording::ScreenPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActResponse {
    /// The session's screen the actions ran on, also without an
    /// observation.
    pub screen: crate::ScreenNumber,
    pub outcomes: Vec<ActionOutcome>,
    /// Actions in the batch; more than `outcomes` when one failed.
    pub requested: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    /// False when the wait for a still screen ran out while it still
    /// changed (quiet mode); true otherwise.
    #[serde(default = "default_settled")]
    pub settled: bool,
    /// How long computerd waited after the last action.
    #[serde(default)]
    pub settle_waited_ms: u64,
    /// What each action that ran changed, in order (absent from older
    /// computerd versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<crate::effects::ActionEffect>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(json: &str) -> ActRequest {
        serde_json::from_str(json).expect("valid batch")
    }

    #[test]
    fn an_outcome_names_its_action_by_the_tag_the_agent_wrote() {
        let req = batch(
            r#"{"actions":[{"type":"click","x":1,"y":2},{"type":"move","x":1,"y":2},{"type":"down"},{"type":"up"},{"type":"type","text":"a"},{"type":"key","key":"a"},{"type":"scroll","direction":"up"},{"type":"wait","ms":1},{"type":"focus","target":"x"}]}"#,
        );
        for action in &req.actions {
            let tag = serde_json::to_value(action).unwrap()["type"].clone();
            assert_eq!(serde_json::to_value(action.kind()).unwrap(), tag);
            assert_eq!(action.kind().to_string(), tag.as_str().unwrap());
        }
        // A computer can only name a kind of action that exists.
        let outcome = |kind: &str| {
            serde_json::from_value::<ActionOutcome>(
                serde_json::json!({"index": 0, "type": kind, "ok": true}),
            )
        };
        assert_eq!(outcome("scroll").unwrap().kind, ActionKind::Scroll);
        assert!(outcome(&"K".repeat(100_000)).is_err());
        assert!(!ActionKind::Wait.is_input() && !ActionKind::Focus.is_input());
        assert!(ActionKind::Type.is_input() && ActionKind::Click.is_input());
    }

    #[test]
    fn defaults_fill_in() {
        let req = batch(
            r#"{"actions":[{"type":"click","x":1,"y":2},{"type":"scroll","direction":"down"}]}"#,
        );
        assert!(req.observe);
        assert_eq!(req.settle_ms, 300);
        assert_eq!(
            req.actions[0],
            Action::Click {
                x: Some(1),
                y: Some(2),
                element: None,
                button: Button::Left
            }
        );
        assert_eq!(
            req.actions[1],
            Action::Scroll {
                direction: ScrollDirection::Down,
                steps: 3,
                x: None,
                y: None,
                element: None
            }
        );
        assert_eq!(req.validate(), Ok(()));
    }

    #[test]
    fn pointer_targets_are_a_point_or_a_ref() {
        let by_ref = batch(
            r#"{"actions":[{"type":"click","ref":"e12"},{"type":"scroll","direction":"down","ref":"e3"}]}"#,
        );
        assert_eq!(by_ref.validate(), Ok(()));
        assert_eq!(by_ref.actions[0].element(), Some("e12"));
        let mut resolved = by_ref.actions[0].clone();
        resolved.set_point((5, 6));
        assert_eq!((resolved.point(), resolved.element()), (Some((5, 6)), None));
        let err = batch(r#"{"actions":[{"type":"click"}]}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`actions[0].x`") && err.contains("`actions[0].ref`"),
            "{err}"
        );
        let err = batch(r#"{"actions":[{"type":"move","x":1,"y":2,"ref":"e1"}]}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("either"), "{err}");
        let err = batch(r#"{"actions":[{"type":"click","ref":"button"}]}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("`e12`"), "{err}");
    }

    #[test]
    fn limits_name_the_field() {
        let err = batch(r#"{"actions":[{"type":"wait","ms":10},{"type":"scroll","direction":"up","steps":21}]}"#)
            .validate()
            .unwrap_err().to_string();
        assert!(
            err.contains("`actions[1].steps`") && err.contains("1 to 20"),
            "{err}"
        );
        let err = batch(r#"{"actions":[{"type":"wait","ms":5001}]}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`actions[0].ms`") && err.contains("5000"),
            "{err}"
        );
        let err = batch(r#"{"actions":[],"settle_ms":1}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("`actions` is empty"), "{err}");
        let err = batch(r#"{"actions":[{"type":"wait","ms":0}],"settle_ms":6000}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("`settle_ms`"), "{err}");
        let many = format!(
            r#"{{"actions":[{}]}}"#,
            vec![r#"{"type":"wait","ms":0}"#; 25].join(",")
        );
        let err = batch(&many).validate().unwrap_err().to_string();
        assert!(err.contains("25 actions") && err.contains("24"), "{err}");
        let long = format!(
            r#"{{"actions":[{{"type":"type","text":"{}"}}]}}"#,
            "é".repeat(10_001)
        );
        let err = batch(&long).validate().unwrap_err().to_string();
        assert!(
            err.contains("`actions[0].text`")
                && err.contains("10001 characters")
                && err.contains("10000")
                && err.contains("write_file"),
            "{err}"
        );
        let longest = format!(
            r#"{{"actions":[{{"type":"type","text":"{}"}}]}}"#,
            "é".repeat(10_000)
        );
        assert_eq!(batch(&longest).validate(), Ok(()));
        let err = batch(r#"{"actions":[{"type":"down","x":3}]}"#)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("`actions[0].x`"), "{err}");
    }

    #[test]
    fn unknown_fields_and_types_are_refused() {
        assert!(serde_json::from_str::<ActRequest>(r#"{"actions":[{"type":"jump"}]}"#).is_err());
        assert!(serde_json::from_str::<ActRequest>(
            r#"{"actions":[{"type":"move","x":1,"y":1,"z":1}]}"#
        )
        .is_err());
        assert!(serde_json::from_str::<ActRequest>(r#"{"actions":[],"obsrve":false}"#).is_err());
    }

    #[test]
    fn repeatable_input_is_pointer_scroll_and_key_only() {
        assert!(Action::Key { key: "a".into() }.is_repeatable_input());
        assert!(!Action::Type {
            text: "a".into(),
            secret: false
        }
        .is_repeatable_input());
        assert!(!Action::Focus { target: "a".into() }.is_repeatable_input());
        assert!(!Action::Wait { ms: 10 }.is_repeatable_input());
    }

    #[test]
    fn a_batch_of_only_waits_never_counts_toward_the_repeat_rule() {
        let wait = Action::Wait { ms: 5000 };
        let key = Action::Key { key: "a".into() };
        let focus = Action::Focus { target: "a".into() };
        assert!(!Action::batch_counts_as_repeatable(std::slice::from_ref(
            &wait
        )));
        assert!(!Action::batch_counts_as_repeatable(&[
            wait.clone(),
            wait.clone()
        ]));
        assert!(!Action::batch_counts_as_repeatable(&[]));
        assert!(Action::batch_counts_as_repeatable(std::slice::from_ref(
            &key
        )));
        assert!(Action::batch_counts_as_repeatable(&[
            key.clone(),
            wait.clone()
        ]));
        assert!(!Action::batch_counts_as_repeatable(&[key, wait, focus]));
    }
}
