//! What a screen shows, as facts an agent can compare before and after a
//! hold: the active window, the windows open, the page of its Chromium.
//! Never what was typed.

use crate::browser::shown::shown_page;
use crate::browser::Browsers;
use crate::screens::Screen;
use crate::windows::{active_window_title, list_windows};
use computer_protocol::handoff::{PageFacts, ScreenChanges};
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenFacts {
    pub active_window: Option<String>,
    /// (X window id, title) of each window, in stacking order.
    pub windows: Vec<(u32, String)>,
    pub page: Option<PageFacts>,
}

/// The screen's facts now. A part that cannot be read is left empty: the
/// facts describe, they never fail a handoff.
pub async fn screen_facts(screen: &Arc<Screen>, browsers: &Browsers) -> ScreenFacts {
    let (active_window, windows) = screen
        .with_x(|x| {
            let active = active_window_title(&x.display).ok().flatten();
            let windows = list_windows(&x.display)
                .map(|list| list.into_iter().map(|w| (w.id, w.title)).collect())
                .unwrap_or_default();
            (active, windows)
        })
        .await
        .unwrap_or_default();
    let page = shown_page(browsers, screen.number, active_window.as_deref())
        .await
        .map(|p| PageFacts {
            url: p.url,
            title: p.title,
        });
    ScreenFacts {
        active_window,
        windows,
        page,
    }
}

impl ScreenFacts {
    /// What changed from these facts to `after`.
    pub fn changes_to(&self, after: &ScreenFacts) -> ScreenChanges {
        let ids = |facts: &ScreenFacts| -> Vec<u32> { facts.windows.iter().map(|w| w.0).collect() };
        let (before_ids, after_ids) = (ids(self), ids(after));
        ScreenChanges {
            active_window_before: self.active_window.clone(),
            active_window_after: after.active_window.clone(),
            windows_opened: after
                .windows
                .iter()
                .filter(|w| !before_ids.contains(&w.0))
                .map(|w| w.1.clone())
                .collect(),
            windows_closed: self
                .windows
                .iter()
                .filter(|w| !after_ids.contains(&w.0))
                .map(|w| w.1.clone())
                .collect(),
            page_before: self.page.clone(),
            page_after: after.page.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_opened_and_closed_are_told_apart_by_id() {
        let before = ScreenFacts {
            active_window: Some("Terminal".into()),
            windows: vec![(1, "Terminal".into()), (2, "Old".into())],
            page: None,
        };
        let after = ScreenFacts {
            active_window: Some("Sign in - Chromium".into()),
            // Same title, new window: it opened.
            windows: vec![(1, "Terminal".into()), (3, "Old".into())],
            page: Some(PageFacts {
                url: "https://example.test/".into(),
                title: "Sign in".into(),
            }),
        };
        let c = before.changes_to(&after);
        assert_eq!(c.windows_opened, ["Old"]);
        assert_eq!(c.windows_closed, ["Old"]);
        assert_eq!(c.active_window_after.as_deref(), Some("Sign in - Chromium"));
        assert_eq!(c.page_before, None);
        assert_eq!(c.page_after.unwrap().title, "Sign in");
    }
}
