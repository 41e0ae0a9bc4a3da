//! What each action of a `computer_act` batch changed: the screen area
//! redrawn after it, the focus, the windows, the page of the screen's
//! Chromium. Changes are credited to the latest action before they were
//! seen; a `wait` lends its time to the action before it.

use crate::frame::Region;
use crate::handoff::PageFacts;
use serde::{Deserialize, Serialize};

/// An action watched at least this long with nothing drawn "changed
/// nothing"; one watched less (the next action followed at once) is left
/// undecided: its redraw may simply not have come yet.
pub const EFFECT_WATCH_MIN_MS: u64 = 100;

/// What one action changed. Every field but `index` and `watched_ms` is
/// optional, so older readers ignore what they do not know.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActionEffect {
    pub index: usize,
    /// How long after the action changes were credited to it (until the
    /// next action that is not a wait, or the screenshot), in ms.
    pub watched_ms: u64,
    /// True when anything below changed; false when nothing did within
    /// `watched_ms` (at least 100 ms); absent when watched too briefly to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
    /// Bounding box of the screen pixels redrawn, in screen pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawn: Option<Region>,
    /// The title of the window that got the focus, when it moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows_opened: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows_closed: Vec<String>,
    /// Menus, dropdowns and tooltips that opened, each as
    /// [`crate::PopupEntry::describe`] says it; the text view lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub popups_opened: Vec<String>,
    /// The page of the screen's Chromium, when its URL or title changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageFacts>,
}

impl ActionEffect {
    /// True when something other than pixels changed.
    pub fn has_news(&self) -> bool {
        self.focused.is_some()
            || !self.windows_opened.is_empty()
            || !self.windows_closed.is_empty()
            || !self.popups_opened.is_empty()
            || self.page.is_some()
    }

    /// Sets `changed` from what was seen and how long it was watched.
    pub fn decide(&mut self) {
        self.changed = if self.drawn.is_some() || self.has_news() {
            Some(true)
        } else if self.watched_ms >= EFFECT_WATCH_MIN_MS {
            Some(false)
        } else {
            None
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changed_needs_a_long_enough_watch() {
        let mut brief = ActionEffect {
            watched_ms: 3,
            ..ActionEffect::default()
        };
        brief.decide();
        assert_eq!(brief.changed, None);
        let mut long = ActionEffect {
            watched_ms: EFFECT_WATCH_MIN_MS,
            ..ActionEffect::default()
        };
        long.decide();
        assert_eq!(long.changed, Some(false));
        let mut opened = ActionEffect {
            watched_ms: 1,
            windows_opened: vec!["xterm".into()],
            ..ActionEffect::default()
        };
        opened.decide();
        assert_eq!(opened.changed, Some(true));
    }

    #[test]
    fn an_old_reader_sees_only_the_fields_it_had() {
        let json = serde_json::to_value(ActionEffect {
            index: 2,
            watched_ms: 300,
            changed: Some(false),
            ..ActionEffect::default()
        })
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"index": 2, "watched_ms": 300, "changed": false})
        );
    }
}
