//! Opening the viewer when a session's screen opens (`COMPUTER_USE_OPEN`):
//! the first screen opens one browser tab through `$BROWSER`; with a viewer
//! page connected, the next screen switches that page instead.

mod support;

use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::docker::TestComputer;
use support::mcp::{connect, ok};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// Lines written by the fake browser, waiting until there are `count`.
async fn opened_links(file: &std::path::Path, count: usize) -> Vec<String> {
    let started = Instant::now();
    loop {
        let lines: Vec<String> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        if lines.len() >= count {
            return lines;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the browser was not opened: {lines:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_screen_opens_one_tab_or_switches_an_open_page() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("opened.txt");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" >> {}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let browser_path = browser.display().to_string();
    let (client, _) = connect(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", "browser"),
            ("BROWSER", browser_path.as_str()),
        ],
    )
    .await;

    let (a, _) = ok(&client, "start_computer", json!({"title": "first"})).await;
    let viewer_url = a["viewer_url"].as_str().unwrap().to_string();
    let key = viewer_url.rsplit("key=").next().unwrap().to_string();
    ok(
        &client,
        "computer_observe",
        json!({"session_id": a["session_id"]}),
    )
    .await;
    let links = opened_links(&log, 1).await;
    assert_eq!(links, vec![format!("{viewer_url}&screen=1")]);

    // A viewer page connects to the live channel; the next screen switches it.
    let base = computer.port_base;
    let mut request = format!("ws://127.0.0.1:{base}/api/live?key={key}")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "Origin",
        format!("http://127.0.0.1:{base}").parse().unwrap(),
    );
    let (mut page, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("the live channel opens");
    let (b, _) = ok(&client, "start_computer", json!({"title": "second"})).await;
    ok(
        &client,
        "computer_observe",
        json!({"session_id": b["session_id"]}),
    )
    .await;
    let started = Instant::now();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), page.next())
            .await
            .expect("a message within 20 s")
            .expect("the channel stays open")
            .expect("a frame");
        if let Message::Text(text) = message {
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["type"] == "focus" {
                assert_eq!(v["screen"], 2);
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(20));
    }
    // The page was switched, so no second tab.
    assert_eq!(opened_links(&log, 1).await.len(), 1);
    page.close(None).await.ok();
    client.cancel().await.ok();
}
