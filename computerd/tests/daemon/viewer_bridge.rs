//! The WebSocket bridge from a viewer to a screen's Xvnc, and what a viewer
//! being there does to its session: no idle end, and a screen that outlives
//! its ended session until the last viewer leaves.

use crate::common::viewer::{connect, get, read_bytes, Browser, Socket};
use crate::common::{wait_until, Daemon, DaemonOptions};
use futures::SinkExt;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const LIMIT: Duration = Duration::from_secs(10);

async fn watch(d: &Daemon, key: &str, screen: u8) -> Socket {
    connect(
        d,
        &format!("/api/screen/{screen}?key={key}"),
        &Browser::ours(d),
    )
    .await
    .expect("screen socket")
}

/// Checks the RFB handshake through `socket`: the server's version, our
/// answer, and its security types, which must offer VncAuth (2) only.
async fn handshake(socket: &mut Socket) {
    let version = read_bytes(socket, 12, LIMIT).await;
    assert_eq!(version, b"RFB 003.008\n");
    socket
        .send(Message::Binary(b"RFB 003.008\n".to_vec().into()))
        .await
        .expect("send version");
    let types = read_bytes(socket, 2, LIMIT).await;
    assert_eq!(types, [1, 2], "one security type, VncAuth");
}

async fn session_info(d: &Daemon, id: &str) -> Option<Value> {
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["session_id"] == id)
        .cloned()
}

fn lock_file(d: &Daemon, screen: u8) -> String {
    format!("/tmp/.X{}-lock", d.display_base + u32::from(screen))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_speaks_rfb_both_ways() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let id = d.create_session("Bridge check").await;
    let screen = d.open_screen(&id).await;
    let mut socket = watch(&d, &key, screen).await;
    handshake(&mut socket).await;
    // Two viewers at once: Xvnc is shared.
    let mut second = watch(&d, &key, screen).await;
    handshake(&mut second).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_refuses_screens_that_are_not_open() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let ours = Browser::ours(&d);
    for (path, status) in [
        ("/api/screen/0", 400),
        ("/api/screen/17", 400),
        ("/api/screen/one", 400),
        ("/api/screen/4", 404),
    ] {
        let refused = connect(&d, &format!("{path}?key={key}"), &ours).await;
        assert_eq!(refused.err(), Some(status), "{path}");
    }
    let (status, body) = get(&d, &format!("/api/screen/4?key={key}"), &d.viewer_addr).await;
    // Not an upgrade: axum refuses before the screen is looked up.
    assert_ne!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watched_session_does_not_go_idle() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let v = d
        .ok(
            "/v1/sessions",
            json!({"title": "Idle watch", "owner": "o", "settings": {"idle_timeout_secs": 1}}),
        )
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    let screen = d.open_screen(&id).await;
    let mut socket = watch(&d, &key, screen).await;
    handshake(&mut socket).await;
    let info = session_info(&d, &id).await.expect("live");
    assert_eq!(info["viewers"], 1);
    // Three idle timeouts and more: the session stays while watched. Listing
    // sessions is not agent activity.
    let watched_since = Instant::now();
    while watched_since.elapsed() < Duration::from_secs(4) {
        let info = session_info(&d, &id).await;
        assert!(
            info.is_some_and(|i| i["viewers"] == 1),
            "the watched session ended or lost its viewer after {:?}",
            watched_since.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(socket);
    // Once nobody watches, the idle timer runs again.
    wait_until("the unwatched session to end as idle", LIMIT, || async {
        session_info(&d, &id).await.is_none().then_some(())
    })
    .await;
    let (status, body) = d
        .post(&format!("/v1/sessions/{id}/observe"), json!({}))
        .await;
    assert_eq!(status, 410);
    assert_eq!(body["code"], "session_ended");
    assert!(body["message"].as_str().unwrap().contains("idle"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ended_session_keeps_its_screen_until_the_last_viewer_leaves() {
    let d = Daemon::start_with(DaemonOptions::default()).await;
    let key = d.viewer_key().await;
    let id = d.create_session("End while watched").await;
    let screen = d.open_screen(&id).await;
    let lock = lock_file(&d, screen);
    assert!(Path::new(&lock).exists(), "{lock}");
    let mut first = watch(&d, &key, screen).await;
    handshake(&mut first).await;
    let mut second = watch(&d, &key, screen).await;
    handshake(&mut second).await;

    let (status, body) = d.call("DELETE", &format!("/v1/sessions/{id}"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["screen"], u64::from(screen));
    // Gone for the agent at once.
    let (status, _) = d
        .post(&format!("/v1/sessions/{id}/observe"), json!({}))
        .await;
    assert_eq!(status, 410);
    assert!(session_info(&d, &id).await.is_none());
    // Still there for the viewers, and marked ended in their list.
    assert!(
        Path::new(&lock).exists(),
        "the watched screen closed with its session"
    );
    let (_, listing) = get(&d, &format!("/api/sessions?key={key}"), &d.viewer_addr).await;
    let listing: Value = serde_json::from_str(&listing).unwrap();
    assert_eq!(listing["sessions"][0]["ended"], true, "{listing}");
    assert_eq!(listing["sessions"][0]["viewers"], 2, "{listing}");
    // A newcomer may still join the lingering screen.
    let mut third = watch(&d, &key, screen).await;
    handshake(&mut third).await;

    drop(first);
    drop(third);
    wait_until("the viewer count to drop to one", LIMIT, || async {
        let (_, l) = get(&d, &format!("/api/sessions?key={key}"), &d.viewer_addr).await;
        let l: Value = serde_json::from_str(&l).unwrap();
        (l["sessions"][0]["viewers"] == 1).then_some(())
    })
    .await;
    assert!(
        Path::new(&lock).exists(),
        "the screen closed while still watched"
    );

    drop(second);
    // A closing screen stays listed until its processes are gone and its
    // number is free: leaving the list is the promise the test waits on.
    wait_until(
        "the screen to leave the list after the last viewer",
        LIMIT,
        || async {
            let (_, l) = get(&d, &format!("/api/sessions?key={key}"), &d.viewer_addr).await;
            (l == r#"{"type":"sessions","sessions":[]}"#).then_some(())
        },
    )
    .await;
    assert!(!Path::new(&lock).exists(), "Xvnc is gone with the screen");
    // Its number is free again.
    let next = d.create_session("Next").await;
    assert_eq!(d.open_screen(&next).await, screen);
}
