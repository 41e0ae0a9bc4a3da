//! Handoffs end to end: the real host binary over stdio (or HTTP with
//! `COMPUTER_USE_TEST_TRANSPORT=http`), a real computer, and the person's
//! side in the real viewer in headless Chromium
//! (`computerd/tests/browser/handoff.test.mjs`).

use crate::support::docker::TestComputer;
use crate::support::mcp::{
    connect, connect_with, host_command, ok, refused, shell_ok, start_session, text,
};
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REASON: &str = "Sign in as <b>admin</b> & accept the terms";
const EXPECTED: &str = "a page titled Signed in";
const NOTE: &str = "Signed in; the 2FA code came by SMS.";

/// Runs the person's side in Chromium; fails with its output.
fn person_hands_back(viewer_url: &str) {
    let browser_dir = test_support::require_playwright();
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", "handoff.test.mjs"])
        .current_dir(&browser_dir)
        .env("VIEWER_URL", viewer_url)
        .env("REASON", REASON)
        .env("EXPECTED", EXPECTED)
        .env("NOTE", NOTE)
        .stdin(Stdio::null())
        .output()
        .expect("node runs (apt-get install nodejs)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ℹ fail 0") && !stdout.contains("ℹ pass 0"),
        "the person's side failed in Chromium:\n{stdout}\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_takes_the_screen_and_hands_it_back() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let sid = start_session(&client, "handoff").await;
    let other = start_session(&client, "another agent's work").await;
    ok(&client, "computer_observe", json!({"session_id": sid})).await;

    let (requested, _) = ok(
        &client,
        "request_handoff",
        json!({"session_id": sid, "reason": REASON, "expected": EXPECTED}),
    )
    .await;
    let id = requested["handoff_id"].as_str().unwrap().to_string();
    let viewer_url = requested["viewer_url"].as_str().unwrap().to_string();
    assert!(
        viewer_url.contains(&format!("&screen={}", requested["screen"])),
        "{viewer_url}"
    );

    // The held screen refuses the agent, naming the handoff and the way on.
    for (tool, args) in [
        ("computer_observe", json!({"session_id": sid})),
        (
            "computer_act",
            json!({"session_id": sid, "actions": [{"type": "key", "key": "enter"}]}),
        ),
        (
            "open_path",
            json!({"session_id": sid, "target": "https://example.com"}),
        ),
        ("launch_app", json!({"session_id": sid, "app": "terminal"})),
    ] {
        let e = refused(&client, tool, args).await;
        assert!(
            e.contains(&id) && e.contains(REASON) && e.contains("wait_handoff"),
            "{tool}: {e}"
        );
    }
    let e = refused(
        &client,
        "request_handoff",
        json!({"session_id": sid, "reason": "again"}),
    )
    .await;
    assert!(e.contains("already held") && e.contains(&id), "{e}");
    // Everything else works: another session, shell and files on this one.
    ok(&client, "computer_observe", json!({"session_id": other})).await;
    ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "~/signed-in.html", "content": "<title>Signed in</title><h1>Welcome</h1>"}),
    )
    .await;
    let (waited, _) = ok(
        &client,
        "wait_handoff",
        json!({"session_id": sid, "timeout": 1}),
    )
    .await;
    assert_eq!(waited["state"], "held");

    // The person opens a page (their browsing, here started for them)...
    let opened = shell_ok(
        &client,
        &sid,
        "computer-use-launch browser \"$HOME/signed-in.html\" 2>&1",
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = shell_ok(
            &client,
            &sid,
            "xdotool search --onlyvisible --name 'Signed in' getwindowname || true",
        )
        .await;
        if r["stdout"].as_str().unwrap().contains("Signed in") {
            break;
        }
        if Instant::now() > deadline {
            let windows = shell_ok(&client, &sid, "xdotool search --onlyvisible --name . getwindowname %@ 2>&1; env | grep -i -E 'display|browser|launch'").await;
            panic!("the page never showed: {r}\nxdg-open: {opened}\nwindows: {windows}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // ...and hands back in the viewer, with a note.
    let url = viewer_url.clone();
    tokio::task::spawn_blocking(move || person_hands_back(&url))
        .await
        .unwrap();

    let (back, result) = ok(
        &client,
        "wait_handoff",
        json!({"session_id": sid, "timeout": 10}),
    )
    .await;
    assert_eq!(back["state"], "returned", "{}", text(&result));
    assert_eq!(back["note"], NOTE);
    assert_eq!(back["taken"], true);
    assert_eq!(back["handoff_id"], id.as_str());
    let changes = &back["changes"];
    assert_eq!(changes["page_after"]["title"], "Signed in", "{changes}");
    assert!(changes["page_after"]["url"]
        .as_str()
        .unwrap()
        .ends_with("signed-in.html"));
    assert!(
        !changes["windows_opened"].as_array().unwrap().is_empty(),
        "{changes}"
    );
    assert!(
        result.content.iter().any(|c| c.as_image().is_some()),
        "a returned screen comes with a frame"
    );
    assert!(back["frame_id"].is_u64(), "{back}");
    assert!(text(&result).contains(NOTE));
    // The screen is the agent's again.
    ok(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "move", "x": 5, "y": 5}]}),
    )
    .await;
    let e = refused(&client, "wait_handoff", json!({"session_id": sid})).await;
    assert!(
        e.contains("no handoff") && e.contains("request_handoff"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_expiry_bad_input_and_the_recorded_step() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_HANDOFF_TIMEOUT", "3s")]).await;
    let sid = start_session(&client, "short holds").await;
    let host_dir = tempfile::tempdir().unwrap();

    for (args, field) in [
        (
            json!({"session_id": sid, "reason": ""}),
            "`reason` is empty",
        ),
        (json!({"session_id": sid, "reason": "r".repeat(501)}), "501"),
        (
            json!({"session_id": sid, "reason": "ok", "expected": "e".repeat(501)}),
            "`expected`",
        ),
    ] {
        let e = refused(&client, "request_handoff", args).await;
        assert!(e.contains(field), "{e}");
    }
    let e = refused(
        &client,
        "wait_handoff",
        json!({"session_id": sid, "timeout": 46}),
    )
    .await;
    assert!(e.contains("`timeout`") && e.contains("45"), "{e}");
    let e = refused(&client, "cancel_handoff", json!({"session_id": sid})).await;
    assert!(e.contains("no handoff"), "{e}");

    ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "hold steps"}),
    )
    .await;
    // Expiry: nobody hands back within 3 s.
    ok(
        &client,
        "request_handoff",
        json!({"session_id": sid, "reason": "Approve the payment"}),
    )
    .await;
    let started = Instant::now();
    let (expired, _) = ok(
        &client,
        "wait_handoff",
        json!({"session_id": sid, "timeout": 20}),
    )
    .await;
    assert_eq!(expired["state"], "expired", "{expired}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    ok(&client, "computer_observe", json!({"session_id": sid})).await;

    // Cancel: the agent takes the screen back at once.
    ok(
        &client,
        "request_handoff",
        json!({"session_id": sid, "reason": "Solve the CAPTCHA"}),
    )
    .await;
    let (cancelled, _) = ok(&client, "cancel_handoff", json!({"session_id": sid})).await;
    assert_eq!(cancelled["state"], "cancelled");
    ok(&client, "computer_observe", json!({"session_id": sid})).await;

    let (stopped, _) = ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": host_dir.path().to_str().unwrap()}),
    )
    .await;
    let package = PathBuf::from(stopped["path"].as_str().unwrap());
    let data: Value =
        serde_json::from_slice(&std::fs::read(package.join("walkthrough.json")).unwrap()).unwrap();
    let holds: Vec<&Value> = data["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["tool"] == "handoff")
        .collect();
    assert_eq!(holds.len(), 2, "{data}");
    assert_eq!(holds[0]["arguments"]["reason"], "Approve the payment");
    assert!(
        holds[0]["text"].as_str().unwrap().starts_with("expired"),
        "{}",
        holds[0]
    );
    assert!(holds[1]["text"].as_str().unwrap().starts_with("cancelled"));
    assert!(holds
        .iter()
        .all(|h| h.get("before").is_none() && h.get("after").is_none()));
}

/// A client that keeps the progress notifications it receives.
#[derive(Clone, Default)]
struct Progress {
    seen: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Progress {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(params);
    }
}

async fn call_with(
    client: &RunningService<RoleClient, Progress>,
    tool: &str,
    args: Value,
) -> Value {
    let result = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert_ne!(result.is_error, Some(true), "{tool}: {:?}", result.content);
    result.structured_content.unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn long_waits_and_long_commands_send_progress() {
    let computer = TestComputer::new();
    let progress = Progress::default();
    let (client, _) = connect_with(host_command(&computer, &[]), progress.clone()).await;
    let started = call_with(&client, "start_computer", json!({"title": "progress"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    call_with(
        &client,
        "request_handoff",
        json!({"session_id": sid, "reason": "Nobody will come"}),
    )
    .await;

    // rmcp's client sends a progress token with every request.
    let waited = call_with(
        &client,
        "wait_handoff",
        json!({"session_id": sid, "timeout": 20}),
    )
    .await;
    assert_eq!(waited["state"], "held");
    let seen = progress.seen.lock().unwrap().clone();
    assert!(seen.len() >= 3, "progress during a 20 s wait: {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].progress < w[1].progress),
        "{seen:?}"
    );
    assert!(seen[0]
        .message
        .as_deref()
        .unwrap_or("")
        .contains("waiting for the person"));
    call_with(&client, "cancel_handoff", json!({"session_id": sid})).await;

    progress.seen.lock().unwrap().clear();
    let ran = call_with(
        &client,
        "shell",
        json!({"session_id": sid, "command": "sleep 11; echo done"}),
    )
    .await;
    assert_eq!(ran["stdout"], "done\n");
    let seen = progress.seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "progress during an 11 s command: {seen:?}");
    assert!(seen[0]
        .message
        .as_deref()
        .unwrap_or("")
        .contains("shell still running"));

    progress.seen.lock().unwrap().clear();
    call_with(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "wait", "ms": 5000}, {"type": "wait", "ms": 5000}, {"type": "wait", "ms": 1000}]}),
    )
    .await;
    let seen = progress.seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "progress during an 11 s act: {seen:?}");
}
