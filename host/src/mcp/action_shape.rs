//! One `computer_act` action as a model is shown it: a flat object whose
//! `type` says which of the other fields it takes. The protocol's
//! [`Action`](computer_protocol::Action) is an enum with a variant per type,
//! which schemars writes as nine objects repeating x, y and ref (5 KB of the
//! tool list, a third of it); and serde reports a bad field inside a tagged
//! enum with no field name. [`ActionShape`] fixes both: it is the published
//! schema, and [`bad_field`] reads a refused action through it to name the
//! field at fault. Actions themselves are still read as `Action`.

use computer_protocol::limits::{
    SCROLL_STEPS_DEFAULT, SCROLL_STEPS_MAX, SCROLL_STEPS_MIN, TYPE_TEXT_MAX_CHARS, WAIT_MAX_MS,
};
use computer_protocol::{Button, ScrollDirection};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // read only to find a bad field
enum ActionKind {
    Click,
    Move,
    Down,
    Up,
    Scroll,
    Type,
    Key,
    Wait,
    Focus,
}

// One action; what each type does is said once, on `ActArgs::actions`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read only to find a bad field
pub struct ActionShape {
    #[serde(rename = "type")]
    kind: ActionKind,
    x: Option<i32>,
    y: Option<i32>,
    /// A text view node (`e12`) in place of x,y.
    #[serde(rename = "ref")]
    element: Option<String>,
    button: Option<Button>,
    direction: Option<ScrollDirection>,
    #[schemars(range(min = SCROLL_STEPS_MIN, max = SCROLL_STEPS_MAX))]
    /// Default 3.
    steps: Option<u32>,
    /// Any Unicode; `\n` presses Return.
    #[schemars(length(max = TYPE_TEXT_MAX_CHARS))]
    text: Option<String>,
    /// With `text`: typed, but shown as `•••` in recordings, logs and errors.
    secret: Option<bool>,
    /// A chord such as `enter`, `ctrl+shift+t`, `cmd+a`.
    key: Option<String>,
    #[schemars(range(max = WAIT_MAX_MS))]
    ms: Option<u64>,
    target: Option<String>,
}

// `steps` says its default in words; the bounds come from the limits.
const _: () = assert!(SCROLL_STEPS_DEFAULT == 3);

/// Where in one refused action the fault is, as `(field, error)`, when
/// reading it field by field finds one (`x`: invalid type: string "a",
/// expected i32). None when the flat reading passes: then the fault is in
/// how the fields combine, which `Action`'s own message says.
pub fn bad_field(action: &serde_json::Value) -> Option<(String, serde_json::Error)> {
    match serde_path_to_error::deserialize::<_, ActionShape>(action) {
        Ok(_) => None,
        Err(e) => {
            let path = e.path().to_string();
            (path != "." && !path.is_empty()).then(|| (path, e.into_inner()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_field_is_named() {
        let (field, error) = bad_field(&json!({"type": "click", "x": "a"})).unwrap();
        assert_eq!(field, "x");
        assert!(error.to_string().contains("expected i32"), "{error}");
        let (field, _) = bad_field(&json!({"type": "scroll", "direction": "sideways"})).unwrap();
        assert_eq!(field, "direction");
        assert!(bad_field(&json!({"type": "click", "x": 1, "y": 2})).is_none());
    }
}
