//! Recordings against a real computerd: steps find the frames their calls
//! captured, a session that ends without `stop` (its host's heartbeats
//! stopped) closes its recording complete, and the package is built from
//! what is on disk.

use crate::common::{wait_until, Daemon, DaemonOptions};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn step(tool: &str, frame_id: Option<&Value>, text: &str) -> Value {
    let mut step = json!({
        "tool": tool, "arguments": {"session_id": "s"}, "started_at": "2026-12-01T00:00:00Z",
        "duration_ms": 5, "is_error": false, "text": text
    });
    if let Some(id) = frame_id {
        step["frame_id"] = id.clone();
    }
    step
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_ended_by_lost_heartbeats_closes_its_recording_complete() {
    let d = Daemon::start_with(DaemonOptions {
        env: vec![("COMPUTERD_HEARTBEAT_GRACE", "3s".into())],
    })
    .await;
    // Heartbeats keep the session alive while the test records; then they
    // stop, as when the host dies.
    let session = d.create_session_as("reaped", "reaped-owner").await;
    let beat = || d.post("/v1/owners/reaped-owner/heartbeat", json!({}));
    let base = format!("/v1/sessions/{session}/recording");
    let started = d
        .ok(
            &base,
            json!({"task": "Reaped task", "max_bytes": 50_000_000}),
        )
        .await;
    let id = started["recording_id"].as_str().unwrap().to_string();

    let (status, again) = d
        .post(&base, json!({"task": "again", "max_bytes": 1}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert!(again["message"]
        .as_str()
        .unwrap()
        .contains("records already"));

    let first = d
        .ok(&format!("/v1/sessions/{session}/observe"), json!({}))
        .await;
    d.ok(
        &format!("{base}/steps"),
        step("computer_observe", Some(&first["frame_id"]), "one"),
    )
    .await;
    d.shell(&session, "xterm -geometry 40x10+10+10 >/dev/null 2>&1 &")
        .await;
    let second = wait_until("a changed screen", Duration::from_secs(20), || async {
        beat().await;
        let o = d
            .ok(&format!("/v1/sessions/{session}/observe"), json!({}))
            .await;
        (o["unchanged"] == false).then_some(o)
    })
    .await;
    d.ok(
        &format!("{base}/steps"),
        step("computer_observe", Some(&second["frame_id"]), "two"),
    )
    .await;
    d.ok(
        &format!("{base}/steps"),
        step("recording_note", None, "three"),
    )
    .await;

    // No heartbeats come: the reaper ends the session, which closes it.
    let listed = wait_until(
        "the recording to close",
        Duration::from_secs(60),
        || async {
            let (_, listed) = d.call("GET", "/v1/recordings", None).await;
            let entry = listed["recordings"]
                .as_array()?
                .iter()
                .find(|r| r["recording_id"] == id.as_str())?
                .clone();
            (entry["recording"] == false).then_some(entry)
        },
    )
    .await;
    assert_eq!(listed["steps"], 3, "{listed}");
    assert!(listed["ended_at"].is_string(), "{listed}");
    assert_eq!(listed["task"], "Reaped task");

    let package = d
        .ok(&format!("/v1/recordings/{id}/package"), json!({}))
        .await;
    let dir = std::path::PathBuf::from(package["dir"].as_str().unwrap());
    assert!(dir.starts_with(d.home.path().join(".local/share/computer-use/recordings")));
    for file in ["index.html", "walkthrough.json", "manifest.json"] {
        assert!(
            dir.join(file).is_file(),
            "{file} missing from {}",
            dir.display()
        );
    }
    let walkthrough: Value =
        serde_json::from_slice(&std::fs::read(dir.join("walkthrough.json")).unwrap()).unwrap();
    let steps = walkthrough["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    // Each step found its own frame; the second's "before" is the first's.
    let (one, two) = (&steps[0], &steps[1]);
    assert!(
        one["after"].is_string() && one.get("before").is_none(),
        "{one}"
    );
    assert_eq!(two["before"], one["after"]);
    assert_ne!(two["after"], one["after"]);
    assert!(dir.join(two["after"].as_str().unwrap()).is_file());
    assert_eq!(steps[2]["kind"], "note");

    let (status, _) = d
        .post("/v1/recordings/20990101T000000Z-0000/package", json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = d.post("/v1/recordings/..%2Fetc/package", json!({})).await;
    assert!(
        status == StatusCode::BAD_REQUEST || status == StatusCode::NOT_FOUND,
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn steps_and_stop_need_a_recording() {
    let d = Daemon::start().await;
    let session = d.create_session("not recording").await;
    let base = format!("/v1/sessions/{session}/recording");
    let (status, body) = d
        .post(&format!("{base}/steps"), step("shell", None, "x"))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["message"].as_str().unwrap().contains("not recording"));
    let (status, _) = d.post(&format!("{base}/stop"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, body) = d.post(&base, json!({"task": " ", "max_bytes": 1000})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().unwrap().contains("`task`"),
        "{body}"
    );
}
