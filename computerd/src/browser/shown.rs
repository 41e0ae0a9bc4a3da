//! Which page a screen's Chromium shows: read over DevTools when the
//! screen's active window is Chromium, for recordings and handoffs.

use super::pages::SWITCH_PAGE;
use super::registry::Browsers;
use computer_protocol::recording::PageShown;
use computer_protocol::ScreenNumber;
use std::time::Duration;

/// How long the page's URL and title may take to read.
const PAGE_DEADLINE: Duration = Duration::from_secs(1);

/// The URL and title of the page screen `number`'s Chromium shows, when
/// its active window (`window`, its title) is Chromium: the page whose
/// title the window's title starts with, or the first page.
pub async fn shown_page(
    browsers: &Browsers,
    number: ScreenNumber,
    window: Option<&str>,
) -> Option<PageShown> {
    let window = window?;
    if !window.contains("Chromium") {
        return None;
    }
    let browser = browsers.get(number)?;
    let targets = tokio::time::timeout(
        PAGE_DEADLINE,
        browser
            .cdp()
            .call("Target.getTargets", serde_json::json!({})),
    )
    .await
    .ok()?
    .ok()?;
    let pages: Vec<PageShown> = targets
        .get("targetInfos")?
        .as_array()?
        .iter()
        .filter(|t| t.get("type").and_then(|v| v.as_str()) == Some("page"))
        // The hidden tab that reads a menu of the browser's is no page.
        .filter(|t| !text_of(t, "url").starts_with(SWITCH_PAGE))
        .map(|t| PageShown {
            url: text_of(t, "url"),
            title: text_of(t, "title"),
        })
        .collect();
    let by_title = pages
        .iter()
        .find(|p| !p.title.is_empty() && window.starts_with(&p.title));
    by_title.or(pages.first()).cloned()
}

fn text_of(value: &serde_json::Value, field: &str) -> String {
    value
        .get(field)
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string()
}
