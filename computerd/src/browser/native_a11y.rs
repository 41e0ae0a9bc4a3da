//! Chromium's own menus over AT-SPI. Chromium registers on the screen's
//! AT-SPI bus, but until its native accessibility is on it shows only empty
//! top-level frames: a context menu's items are not there. The usual switch,
//! `--force-renderer-accessibility`, also builds every page's tree, which
//! slows each page load and costs memory. Chromium's `chrome://accessibility`
//! page turns on the native part alone, for the browser's own windows (tab
//! strip, menus), and leaves pages alone; the mode lasts as long as that
//! page. So while a popup of the browser is read, the page is open in a
//! hidden tab that asked for the mode ([`NativeOn`]); the tab closes when
//! the read is done, and pages never pay for it.

use super::cdp::{Cdp, CdpError};
use super::pages::SWITCH_PAGE;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How long the page may take to load.
const SWITCH_DEADLINE: Duration = Duration::from_secs(2);

/// Asks the browser for the native mode with the message the page's
/// `native` box sends: the box gets its handler late, and a tick before
/// that reaches nothing. `null` until the page can send.
const TICK_NATIVE: &str = "(() => {
    if (typeof chrome === 'undefined' || typeof chrome.send !== 'function') return null;
    chrome.send('setGlobalFlag', [{ flagName: 'native', enabled: true }]);
    return true;
})()";

/// Native accessibility, on while this lives: the hidden tab that holds
/// it closes on drop.
#[derive(Debug)]
pub struct NativeOn<'c> {
    cdp: &'c Cdp,
    target: String,
}

impl Drop for NativeOn<'_> {
    fn drop(&mut self) {
        self.cdp
            .send_and_forget("Target.closeTarget", json!({ "targetId": self.target }));
    }
}

/// Turns on the browser's native accessibility until the answer is
/// dropped. On failure the hidden tab is closed.
pub async fn turn_on(cdp: &Cdp) -> Result<NativeOn<'_>, NativeA11yError> {
    let created = cdp
        .call(
            "Target.createTarget",
            json!({ "url": SWITCH_PAGE, "hidden": true, "background": true }),
        )
        .await?;
    let on = NativeOn {
        cdp,
        target: created
            .get("targetId")
            .and_then(Value::as_str)
            .ok_or(NativeA11yError::NoTab)?
            .to_string(),
    };
    tick(cdp, &on.target).await?;
    Ok(on)
}

async fn tick(cdp: &Cdp, target: &str) -> Result<(), NativeA11yError> {
    let attached = cdp
        .call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        )
        .await?;
    let session = attached
        .get("sessionId")
        .and_then(Value::as_str)
        .ok_or(NativeA11yError::NoTab)?;
    if cdp
        .poll_until_true(session, TICK_NATIVE, Instant::now(), SWITCH_DEADLINE)
        .await
    {
        return Ok(());
    }
    Err(NativeA11yError::NoSwitch {
        waited: SWITCH_DEADLINE,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum NativeA11yError {
    #[error(transparent)]
    Cdp(#[from] CdpError),
    #[error("Chromium opened no tab for `{SWITCH_PAGE}`")]
    NoTab,
    #[error("`{SWITCH_PAGE}` could not reach the browser within {waited:?}")]
    NoSwitch { waited: Duration },
}
