//! Opening a page in a browser over DevTools and waiting until it loaded.

use super::cdp::{Cdp, CdpError};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How a page open ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLoad {
    /// True when the page finished loading before the deadline.
    pub loaded: bool,
    pub waited: Duration,
}

/// Opens `url` in the first page (when `reuse_blank`) or a new tab, brings
/// it to the front and waits until its document is complete.
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
        Ok(wait_loaded(cdp, &session, started, deadline).await)
    }
    .await;
    detach(cdp, &session).await;
    Ok(PageLoad {
        loaded: opened?,
        waited: started.elapsed(),
    })
}

/// The first open tab, if any.
async fn first_page(cdp: &Cdp) -> Result<Option<String>, CdpError> {
    let targets = cdp.call("Target.getTargets", json!({})).await?;
    Ok(targets
        .get("targetInfos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| t.get("type").and_then(Value::as_str) == Some("page"))
        .and_then(|t| t.get("targetId").and_then(Value::as_str))
        .map(str::to_string))
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
    while started.elapsed() < deadline {
        let answer = cdp
            .call_in(
                session,
                "Runtime.evaluate",
                json!({ "expression": check, "returnByValue": true }),
            )
            .await;
        // While a navigation swaps documents the evaluation can fail;
        // the next poll asks the new one.
        if let Ok(answer) = answer {
            if answer.pointer("/result/value") == Some(&Value::Bool(true)) {
                wait_painted(cdp, session).await;
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Waits for two animation frames of the tab, so the loaded page has
/// reached the screen before the caller's screenshot: a small file loads
/// before Chromium paints its new tab, and the frame would still show the
/// tab before it. A tab that does not paint (hidden) gives up after 1 s.
async fn wait_painted(cdp: &Cdp, session: &str) {
    let painted =
        "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))";
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        cdp.call_in(
            session,
            "Runtime.evaluate",
            json!({ "expression": painted, "awaitPromise": true, "returnByValue": true }),
        ),
    )
    .await;
}

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
