//! The pages a browser has open, kept current from DevTools target events
//! (`Target.setDiscoverTargets`), so reading which page changed costs no
//! round trip: `computer_act` checks it after every action. Chromium tells
//! a navigation but not the title the page sets later:
//! [`Cdp::settled_page`](super::Cdp::settled_page) reads that once, for a
//! batch that navigated.

use computer_protocol::handoff::PageFacts;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;

/// The page [`super::native_a11y`] opens in a hidden tab while it reads a
/// menu of the browser's; it is no page of the person's or the agent's, so
/// the lists skip it.
pub const SWITCH_PAGE: &str = "chrome://accessibility";

#[derive(Debug, Default)]
pub struct Pages {
    inner: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    /// URL and title by target id, pages only.
    pages: HashMap<String, PageFacts>,
    /// Bumped each time a page opens or its URL or title changes.
    version: u64,
    /// The page that changed last.
    latest: Option<String>,
}

impl Pages {
    /// Counts changes: equal numbers mean nothing changed in between.
    pub fn version(&self) -> u64 {
        self.lock().version
    }

    /// The page whose URL or title changed last, as it is now.
    pub fn latest(&self) -> Option<PageFacts> {
        let known = self.lock();
        known
            .latest
            .as_ref()
            .and_then(|id| known.pages.get(id))
            .cloned()
    }

    /// The target id of the page that changed last.
    pub fn latest_id(&self) -> Option<String> {
        self.lock().latest.clone()
    }

    /// Takes in one DevTools event; anything but a target event is ignored.
    pub fn on_event(&self, method: &str, params: &Value) {
        match method {
            "Target.targetCreated" | "Target.targetInfoChanged" => {
                let Some(info) = params.get("targetInfo") else {
                    return;
                };
                if info.get("type").and_then(Value::as_str) != Some("page") {
                    return;
                }
                let (Some(id), Some(url)) = (
                    info.get("targetId").and_then(Value::as_str),
                    info.get("url").and_then(Value::as_str),
                ) else {
                    return;
                };
                // The hidden tab that turns on native accessibility is no
                // page of the person's or the agent's.
                if url.starts_with(SWITCH_PAGE) {
                    return;
                }
                let title = info.get("title").and_then(Value::as_str).unwrap_or("");
                let page = PageFacts {
                    url: url.to_string(),
                    title: title.to_string(),
                };
                let mut known = self.lock();
                // Other changes (a session attached, say) are not news.
                if known.pages.get(id) != Some(&page) {
                    known.pages.insert(id.to_string(), page);
                    known.version += 1;
                    known.latest = Some(id.to_string());
                }
            }
            "Target.targetDestroyed" => {
                if let Some(id) = params.get("targetId").and_then(Value::as_str) {
                    self.lock().pages.remove(id);
                }
            }
            _ => {}
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Known> {
        self.inner.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(id: &str, kind: &str, url: &str, title: &str, attached: bool) -> Value {
        json!({"targetInfo": {"targetId": id, "type": kind, "url": url, "title": title, "attached": attached}})
    }

    #[test]
    fn only_a_new_url_or_title_of_a_page_counts() {
        let pages = Pages::default();
        pages.on_event(
            "Target.targetCreated",
            &info("A", "page", "about:blank", "", false),
        );
        assert_eq!(pages.version(), 1);
        pages.on_event(
            "Target.targetInfoChanged",
            &info("A", "page", "about:blank", "", true),
        );
        pages.on_event(
            "Target.targetCreated",
            &info("W", "service_worker", "http://x/sw.js", "", false),
        );
        pages.on_event("Page.loadEventFired", &json!({}));
        assert_eq!(pages.version(), 1);
        pages.on_event(
            "Target.targetInfoChanged",
            &info("A", "page", "http://x/next", "Next", true),
        );
        assert_eq!(pages.version(), 2);
        assert_eq!(
            pages.latest(),
            Some(PageFacts {
                url: "http://x/next".into(),
                title: "Next".into()
            })
        );
        pages.on_event("Target.targetDestroyed", &json!({"targetId": "A"}));
        assert_eq!((pages.version(), pages.latest()), (2, None));
    }
}
