//! The viewer's live channel pushes the whole session list whenever it
//! changes, against a real computerd with real screens.

use crate::common::viewer::{connect, next_json, Browser, Socket};
use crate::common::Daemon;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a change may take to reach the page.
const PUSH_LIMIT: Duration = Duration::from_secs(10);

/// Reads list messages until one satisfies `wanted`; panics after the limit.
async fn list_until(
    socket: &mut Socket,
    what: &str,
    wanted: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + PUSH_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        assert!(
            !left.is_zero(),
            "the live channel did not push {what} within {PUSH_LIMIT:?}"
        );
        let message = next_json(socket, left).await;
        if message["type"] != "sessions" {
            continue;
        }
        let sessions = message["sessions"].as_array().expect("sessions").clone();
        if wanted(&sessions) {
            return sessions;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_live_channel_pushes_the_list_when_sessions_and_screens_change() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let mut page = connect(&d, &format!("/api/live?key={key}"), &Browser::ours(&d))
        .await
        .expect("live channel");
    let first = next_json(&mut page, PUSH_LIMIT).await;
    assert_eq!(first, json!({"type": "sessions", "sessions": []}));

    let id = d.create_session("Push check").await;
    let list = list_until(&mut page, "the new session", |l| l.len() == 1).await;
    let started_at = list[0]["started_at"]
        .as_str()
        .expect("started_at")
        .to_string();
    assert!(
        time::OffsetDateTime::parse(&started_at, &time::format_description::well_known::Rfc3339)
            .is_ok(),
        "{started_at}"
    );
    assert_eq!(
        list[0],
        json!({"title": "Push check", "started_at": started_at, "screen": null, "size": null, "viewers": 0, "ended": false, "recording": false, "handoff": null})
    );

    let screen = d.open_screen(&id).await;
    let list = list_until(&mut page, "the opened screen", |l| {
        l[0]["screen"] != Value::Null
    })
    .await;
    assert_eq!(list[0]["screen"], u64::from(screen));
    assert_eq!(list[0]["size"], "1280x800");

    // A viewer arriving and leaving is a change too.
    let watcher = connect(
        &d,
        &format!("/api/screen/{screen}?key={key}"),
        &Browser::ours(&d),
    )
    .await
    .expect("screen socket");
    list_until(&mut page, "one viewer", |l| l[0]["viewers"] == 1).await;
    drop(watcher);
    list_until(&mut page, "no viewers", |l| l[0]["viewers"] == 0).await;

    let other = d.create_session("Second").await;
    list_until(&mut page, "two sessions", |l| l.len() == 2).await;
    d.call("DELETE", &format!("/v1/sessions/{id}"), None).await;
    let list = list_until(&mut page, "the end of the first", |l| l.len() == 1).await;
    assert_eq!(list[0]["title"], "Second");
    d.call("DELETE", &format!("/v1/sessions/{other}"), None)
        .await;
    list_until(&mut page, "an empty list", |l| l.is_empty()).await;
}
