//! Opening a page in a browser over DevTools and waiting until it loaded.

use super::cdp::{Cdp, CdpError};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How a page open ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLoad {
    /// True when the page finished loading before the deadline.
    pub loaded: bool,
    /// True when the loaded page was also drawn before the deadline: the
    /// caller's screenshot shows it.
    pub painted: bool,
    pub waited: Duration,
}

/// Opens `url` in the first tab (when `reuse_blank` and it is still blank)
/// or a new tab, brings it to the front and waits until its document is
/// complete and drawn.
pub async fn open(
    cdp: &Cdp,
    url: &str,
    reuse_blank: bool,
    deadline: Duration,
) -> Result<PageLoad, CdpError> {
    let started = Instant::now();
    let blank = if reuse_blank {
        first_page(cdp).await?
    } else {
        None
    };
    let target_id = match &blank {
        Some(target_id) => target_id.clone(),
        None => {
            let created = cdp
                .call("Target.createTarget", json!({ "url": url }))
                .await?;
            string_field(&created, "targetId", "Target.createTarget")?
        }
    };
    // One session on the tab serves the navigation and the wait.
    let session = attach(cdp, &target_id).await?;
    let opened = async {
        if blank.is_some() {
            cdp.call_in(&session, "Page.navigate", json!({ "url": url }))
                .await?;
        }
        cdp.call("Target.activateTarget", json!({ "targetId": target_id }))
            .await?;
        let loaded = wait_loaded(cdp, &session, started, deadline).await;
        let painted = loaded && wait_painted(cdp, &session, started, deadline).await;
        Ok((loaded, painted))
    }
    .await;
    detach(cdp, &session).await;
    let (loaded, painted) = opened?;
    Ok(PageLoad {
        loaded,
        painted,
        waited: started.elapsed(),
    })
}

/// The blank tab the browser started with, if it is still blank: a page
/// a person opened there meanwhile is kept, and a page target that is no
/// tab (a preloaded new-tab page) is never taken for it.
async fn first_page(cdp: &Cdp) -> Result<Option<String>, CdpError> {
    let targets = cdp.call("Target.getTargets", json!({})).await?;
    let field = |t: &Value, name: &str| t.get(name).and_then(Value::as_str).map(str::to_string);
    Ok(targets
        .get("targetInfos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| {
            field(t, "type").as_deref() == Some("page")
                && field(t, "url").as_deref() == Some("about:blank")
        })
        .and_then(|t| field(t, "targetId")))
}

async fn attach(cdp: &Cdp, target_id: &str) -> Result<String, CdpError> {
    let attached = cdp
        .call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )
        .await?;
    string_field(&attached, "sessionId", "Target.attachToTarget")
}

async fn detach(cdp: &Cdp, session_id: &str) {
    let _ = cdp
        .call(
            "Target.detachFromTarget",
            json!({ "sessionId": session_id }),
        )
        .await;
}

/// Polls the tab until its document left `about:blank` and is complete,
/// or the deadline passes (then false). A page still loading is not an
/// error: the agent gets a screenshot of how far it got.
async fn wait_loaded(cdp: &Cdp, session: &str, started: Instant, deadline: Duration) -> bool {
    let check = "document.readyState === 'complete' && location.href !== 'about:blank'";
    cdp.poll_until_true(session, check, started, deadline).await
}

/// Waits until the loaded page is on the screen before the caller's
/// screenshot. Two animation frames of the tab are not enough alone: they
/// say the renderer made a frame, not that the browser drew it in its
/// window, and a Chromium just started on a busy machine showed its empty
/// grey window after both. So first the document's first paint, which
/// Chromium reports only once that frame was presented (a page with
/// nothing but white never has one: it gets [`FIRST_PAINT_WAIT`]), then
/// two frames for what the page drew since. The wait runs to the page's
/// deadline (at least [`PAINT_WAIT_MIN`]); a hidden tab never paints, so
/// it is not waited for. Returns whether the frames came.
async fn wait_painted(cdp: &Cdp, session: &str, started: Instant, deadline: Duration) -> bool {
    let painted = format!(
        "(async () => {{
            if (document.visibilityState !== 'visible') return false;
            await new Promise(seen => {{
                const paints = new PerformanceObserver(() => {{ paints.disconnect(); seen(); }});
                paints.observe({{ type: 'paint', buffered: true }});
                setTimeout(() => {{ paints.disconnect(); seen(); }}, {});
            }});
            await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
            return true;
        }})()",
        FIRST_PAINT_WAIT.as_millis()
    );
    let left = deadline
        .saturating_sub(started.elapsed())
        .max(PAINT_WAIT_MIN);
    let answer = tokio::time::timeout(
        left,
        cdp.call_in(
            session,
            "Runtime.evaluate",
            json!({ "expression": painted, "awaitPromise": true, "returnByValue": true }),
        ),
    )
    .await;
    matches!(answer, Ok(Ok(a)) if a.pointer("/result/value") == Some(&Value::Bool(true)))
}

/// How long a loaded page that reported no first paint yet is given to:
/// a blank page never does.
const FIRST_PAINT_WAIT: Duration = Duration::from_secs(2);
/// How long a page that loaded at its deadline still gets to be drawn.
const PAINT_WAIT_MIN: Duration = Duration::from_secs(3);

fn string_field(answer: &Value, field: &str, method: &str) -> Result<String, CdpError> {
    answer
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| CdpError::Refused {
            method: method.to_string(),
            message: format!("the answer has no `{field}`"),
        })
}
