//! Opening the viewer when a session's screen opens (`COMPUTER_USE_OPEN`):
//! the first screen opens one browser tab through `$BROWSER`; with a viewer
//! page connected, the next screen switches that page instead; screens that
//! open together share one tab; `vnc` on Linux opens the browser and says
//! why on stderr; `none` runs no opener at all.
//!
//! The browser is a small script on `$BROWSER` that writes each link it gets
//! to a file; the host, the computer and the viewer page are real.

use crate::support::docker::TestComputer;
use crate::support::mcp::{connect, host_command, ok, start_session, Client};
use futures::StreamExt;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// Lines written by the fake browser, waiting until there are `count`.
async fn opened_links(file: &std::path::Path, count: usize) -> Vec<String> {
    let started = Instant::now();
    loop {
        let lines = links_so_far(file);
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

/// Every link the fake browser has been given so far.
fn links_so_far(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// A browser for `$BROWSER` that appends each link it opens to a file in
/// `dir`; returns the script and that file.
fn fake_browser(dir: &Path) -> (String, PathBuf) {
    let log = dir.join("opened.txt");
    let browser = dir.join("browser.sh");
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
    (browser.display().to_string(), log)
}

/// The host's stderr as the test reads it.
type Stderr = Arc<Mutex<String>>;

/// Starts the host over stdio with the opener's debug lines on, and keeps
/// its stderr for the test (echoing it, as the other tests' hosts do). The
/// opener decides in the host, whatever the transport, so stdio suffices.
async fn connect_logged(computer: &TestComputer, env: &[(&str, &str)]) -> (Client, Stderr) {
    let mut cmd = host_command(computer, env);
    cmd.env(
        "COMPUTER_USE_LOG",
        "warn,computer_use_mcp=info,computer_use_mcp::open=debug",
    );
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("computer-use-mcp starts");
    let stderr = stderr.expect("piped stderr");
    let kept: Stderr = Arc::default();
    let sink = Arc::clone(&kept);
    tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
            let mut all = sink.lock().unwrap();
            all.push_str(&line);
            all.push('\n');
        }
    });
    let client = ().serve(transport).await.expect("MCP handshake");
    (client, kept)
}

/// How many of the host's stderr lines match `matches`.
fn count_lines(stderr: &Stderr, matches: impl Fn(&str) -> bool) -> usize {
    stderr
        .lock()
        .unwrap()
        .lines()
        .filter(|l| matches(l))
        .count()
}

/// How many of the host's stderr lines hold `needle`.
fn lines_with(stderr: &Stderr, needle: &str) -> usize {
    count_lines(stderr, |l| l.contains(needle))
}

/// Waits until the host's stderr has `count` lines that match `matches`.
async fn wait_for_lines(stderr: &Stderr, count: usize, matches: impl Fn(&str) -> bool) {
    let started = Instant::now();
    loop {
        let found = count_lines(stderr, &matches);
        if found >= count {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{found} of {count} expected stderr lines after 20 s:\n{}",
            stderr.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `start_computer` then `computer_observe`, which opens the session's screen.
async fn open_a_screen(client: &Client, title: &str) -> String {
    let sid = start_session(client, title).await;
    ok(client, "computer_observe", json!({"session_id": sid})).await;
    sid
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_screen_opens_one_tab_or_switches_an_open_page() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let (browser_path, log) = fake_browser(dir.path());
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
    // The browser's command line holds a one-time code, never the key
    // (every user of the machine can read a command line); the page trades
    // the code for the key once.
    let links = opened_links(&log, 1).await;
    let base = computer.port_base;
    let code = links[0]
        .strip_prefix(&format!("http://127.0.0.1:{base}/#code="))
        .and_then(|rest| rest.strip_suffix("&screen=1"))
        .unwrap_or_else(|| panic!("{links:?}"))
        .to_string();
    assert!(
        !links[0].contains("key=") && !links[0].contains(&key),
        "{links:?}"
    );
    let redeem = || {
        let code = code.clone();
        async move {
            let response = reqwest::get(format!("http://127.0.0.1:{base}/api/code?code={code}"))
                .await
                .unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let (status, body) = redeem().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["key"],
        key.as_str()
    );
    let (status, body) = redeem().await;
    assert_eq!(status, 403, "a code opens once: {body}");
    assert!(body.contains("used already"), "{body}");

    // A viewer page connects to the live channel; the next screen switches it.
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

#[tokio::test(flavor = "multi_thread")]
async fn screens_opening_together_open_one_tab() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let (browser, log) = fake_browser(dir.path());
    let (client, stderr) = connect_logged(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", "browser"),
            ("BROWSER", browser.as_str()),
        ],
    )
    .await;
    let mut sessions = Vec::new();
    for title in ["one", "two", "three"] {
        sessions.push(start_session(&client, title).await);
    }
    // Their screens open at once, with no viewer page anywhere.
    futures::future::join_all(
        sessions
            .iter()
            .map(|sid| ok(&client, "computer_observe", json!({"session_id": sid}))),
    )
    .await;
    // Wait until the opener has decided for all three screens.
    wait_for_lines(&stderr, 3, |l| {
        l.contains(": opened a browser tab on it") || l.contains(": no tab of its own")
    })
    .await;
    assert_eq!(lines_with(&stderr, ": opened a browser tab on it"), 1);
    // The host logs the tab once it started the browser, which writes the
    // link a moment later: a busy machine showed the log line first.
    let links = opened_links(&log, 1).await;
    assert_eq!(links.len(), 1, "{links:?}");
    assert!(links[0].contains("&screen="), "{links:?}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn vnc_on_linux_opens_the_browser_and_says_why() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let (browser, log) = fake_browser(dir.path());
    let (client, stderr) = connect_logged(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", "vnc"),
            ("BROWSER", browser.as_str()),
            // Windows only: no error, no effect here.
            ("COMPUTER_USE_VNC_VIEWER", "/no/such/vncviewer"),
        ],
    )
    .await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "vnc"})).await;
    let viewer_url = started["viewer_url"].as_str().unwrap().to_string();
    ok(
        &client,
        "computer_observe",
        json!({"session_id": started["session_id"]}),
    )
    .await;
    let links = opened_links(&log, 1).await;
    let base = computer.port_base;
    assert!(
        links.len() == 1
            && links[0].starts_with(&format!("http://127.0.0.1:{base}/#code="))
            && links[0].ends_with("&screen=1"),
        "{links:?}"
    );
    let key = viewer_url.rsplit("key=").next().unwrap();
    assert!(!links[0].contains(key), "{links:?}");
    wait_for_lines(&stderr, 1, |l| {
        l.contains("WARN") && l.ends_with("opening the browser instead of a VNC viewer: `COMPUTER_USE_OPEN` is `vnc`, which runs a native viewer on macOS and Windows only; on this system the viewer opens in the browser")
    })
    .await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn none_runs_no_opener() {
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let quiet_dir = dir.path().join("none");
    std::fs::create_dir(&quiet_dir).unwrap();
    let (quiet_browser, quiet_log) = fake_browser(&quiet_dir);
    let (quiet, quiet_stderr) = connect_logged(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", "none"),
            ("BROWSER", quiet_browser.as_str()),
        ],
    )
    .await;
    open_a_screen(&quiet, "none").await;
    wait_for_lines(&quiet_stderr, 1, |l| {
        l.contains("`COMPUTER_USE_OPEN` is `none`, so no viewer opens")
    })
    .await;

    // A second server on the same computer, in `browser` mode, opens its
    // tab; by then the first one has had longer to open one, and did not.
    let (browser, log) = fake_browser(dir.path());
    let (control, _) = connect(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", "browser"),
            ("BROWSER", browser.as_str()),
        ],
    )
    .await;
    open_a_screen(&control, "browser").await;
    assert_eq!(opened_links(&log, 1).await.len(), 1);
    assert_eq!(links_so_far(&quiet_log), Vec::<String>::new());
    assert!(!quiet_log.exists(), "the `none` server ran its browser");
    let quiet_lines = quiet_stderr.lock().unwrap().clone();
    assert!(
        !quiet_lines.contains("opened a browser tab") && !quiet_lines.contains("could not open"),
        "{quiet_lines}"
    );
    quiet.cancel().await.ok();
    control.cancel().await.ok();
}
