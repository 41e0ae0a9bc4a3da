//! The real host binary with rmcp's client (over stdio, or HTTP with
//! `COMPUTER_USE_TEST_TRANSPORT=http`), against a real Docker engine and the
//! real image.

use crate::support::docker::{shared_computer, TestComputer};
use crate::support::mcp::{
    call, connect, is_error, live_sessions, ok, shell_ok, start_session, text, wait_session_gone,
};
use base64::Engine;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ContentBlock};
use rmcp::service::PeerRequestOptions;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_listed_at_once_without_touching_docker() {
    let computer = TestComputer::new();
    // A Docker endpoint that does not exist: listing must not need one.
    let (client, _) = connect(
        &computer,
        &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
    )
    .await;
    let started = Instant::now();
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(started.elapsed() < Duration::from_secs(2));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "start_computer",
        "end_session",
        "computer_observe",
        "computer_act",
        "shell",
        "set_cwd",
        "list_files",
        "read_file",
        "write_file",
        "open_path",
        "launch_app",
        "start_chrome_devtools",
        "stop_chrome_devtools",
        "start_recording",
        "recording_note",
        "stop_recording",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let observe = tools.iter().find(|t| t.name == "computer_observe").unwrap();
    let hints = observe.annotations.as_ref().expect("annotations");
    assert_eq!(hints.read_only_hint, Some(true));
    let act = tools.iter().find(|t| t.name == "computer_act").unwrap();
    let schema = serde_json::to_string(&act.input_schema).unwrap();
    assert!(
        schema.contains("settle_ms") && schema.contains("actions"),
        "{schema}"
    );
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("computer-use")
    );

    // Without start_computer, a session tool says what to do, and the
    // unreachable engine is named by start_computer.
    let r = call(
        &client,
        "shell",
        json!({"session_id": "nope", "command": "true"}),
    )
    .await;
    assert!(
        is_error(&r) && text(&r).contains("start_computer"),
        "{}",
        text(&r)
    );
    let r = call(&client, "start_computer", json!({"title": "no docker"})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        text(&r).contains("/nonexistent/docker.sock"),
        "{}",
        text(&r)
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_session_through_mcp() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "whole session"})).await;
    let sid = started["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let viewer = started["viewer_url"].as_str().unwrap();
    assert!(
        viewer.starts_with(&format!("http://127.0.0.1:{}/#key=", computer.port_base)),
        "{viewer}"
    );
    assert_eq!(viewer.rsplit('=').next().unwrap().len(), 32);
    assert_eq!(started["computer"]["name"], computer.name.as_str());

    // Observe: a PNG of the session's own 1280x800 screen.
    let (o, result) = ok(&client, "computer_observe", json!({"session_id": sid})).await;
    assert_eq!(
        (o["width"].as_u64(), o["height"].as_u64()),
        (Some(1280), Some(800))
    );
    let png = result
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Image(i) => Some(i.clone()),
            _ => None,
        })
        .expect("an image");
    assert_eq!(png.mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&png.data)
        .unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    // Act: open a terminal through focus, type into it, and see the result.
    let (a, _) = ok(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [
            {"type": "focus", "target": "terminal"},
            {"type": "type", "text": "echo héllo > ~/typed.txt\n"}
        ], "settle_ms": 500}),
    )
    .await;
    assert_eq!(a["outcomes"].as_array().unwrap().len(), 2, "{a}");
    let mut typed = String::new();
    for _ in 0..100 {
        let (r, _) = ok(
            &client,
            "shell",
            json!({"session_id": sid, "command": "cat ~/typed.txt 2>/dev/null"}),
        )
        .await;
        typed = r["stdout"].as_str().unwrap_or_default().to_string();
        if typed == "héllo\n" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(typed, "héllo\n");

    // Shell and files.
    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo $DISPLAY; id -un; exit 4", "timeout": "30s"}),
    )
    .await;
    assert_eq!(r["exit_code"], 4);
    assert_eq!(r["stdout"], ":1\ncomputer\n");
    let (w, _) = ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "work/notes.md", "content": "# notes\n"}),
    )
    .await;
    assert_eq!(w["path"], "/home/computer/work/notes.md");
    let (c, _) = ok(
        &client,
        "set_cwd",
        json!({"session_id": sid, "path": "work"}),
    )
    .await;
    assert_eq!(c["path"], "/home/computer/work");
    let (l, _) = ok(&client, "list_files", json!({"session_id": sid})).await;
    assert_eq!(l["entries"][0]["name"], "notes.md");
    let (rd, result) = ok(
        &client,
        "read_file",
        json!({"session_id": sid, "path": "notes.md"}),
    )
    .await;
    assert_eq!(rd["text"], "# notes\n");
    assert!(text(&result).contains("# notes"));

    // End: later calls say the session ended and what to do.
    let (e, _) = ok(&client, "end_session", json!({"session_id": sid})).await;
    assert_eq!(e["screen"], 1);
    let r = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    assert!(is_error(&r));
    assert!(
        text(&r).contains("end_session") && text(&r).contains("start_computer"),
        "{}",
        text(&r)
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_a_tool_error_naming_the_field() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let r = call(&client, "start_computer", json!({"title": ""})).await;
    assert!(is_error(&r) && text(&r).contains("`title`"), "{}", text(&r));
    let r = call(&client, "start_computer", json!({"title": 5})).await;
    assert!(is_error(&r) && text(&r).contains("title"), "{}", text(&r));
    let (s, _) = ok(&client, "start_computer", json!({"title": "bad input"})).await;
    let sid = s["session_id"].as_str().unwrap().to_string();
    let cases = [
        (
            "computer_act",
            json!({"session_id": sid, "actions": vec![json!({"type": "wait", "ms": 1}); 25]}),
            "24",
        ),
        (
            "computer_act",
            json!({"session_id": sid, "actions": [{"type": "click", "x": "a", "y": 1}]}),
            "`actions[0].x`",
        ),
        (
            "computer_act",
            json!({"session_id": sid, "actions": [{"type": "scroll", "direction": "down", "steps": 50}]}),
            "steps",
        ),
        (
            "computer_act",
            json!({"session_id": sid, "actions": [{"type": "wait", "ms": 1}], "settle_ms": 9000}),
            "settle_ms",
        ),
        (
            "shell",
            json!({"session_id": sid, "command": "true", "timeout": "1d"}),
            "timeout",
        ),
        (
            "shell",
            json!({"session_id": sid, "command": "true", "timeout": 100000}),
            "COMPUTER_USE_SHELL_TIMEOUT_MAX",
        ),
        ("shell", json!({"session_id": sid}), "command"),
        (
            "read_file",
            json!({"session_id": sid, "path": "/nope"}),
            "/nope",
        ),
        (
            "write_file",
            json!({"session_id": sid, "path": "/home/computer", "content": "x"}),
            "folder",
        ),
        (
            "set_cwd",
            json!({"session_id": sid, "path": "/etc/passwd"}),
            "/etc/passwd",
        ),
        (
            "computer_observe",
            json!({"session_id": "no-such-session"}),
            "start_computer",
        ),
        ("no_such_tool", json!({}), "start_computer"),
    ];
    for (tool, args, needle) in cases {
        let r = call(&client, tool, args.clone()).await;
        assert!(is_error(&r), "{tool} {args} should fail: {}", text(&r));
        assert!(
            text(&r).contains(needle),
            "{tool} {args}: `{}` should mention `{needle}`",
            text(&r)
        );
    }
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_going_away_ends_the_sessions_within_three_seconds() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let (s, _) = ok(&client, "start_computer", json!({"title": "stdin close"})).await;
    let sid = s["session_id"].as_str().unwrap().to_string();
    assert!(live_sessions(computer)
        .await
        .iter()
        .any(|x| x["session_id"] == json!(sid)));
    // Cancelling the client closes the host's stdin (stdio), or deletes its
    // MCP session (HTTP).
    client.cancel().await.ok();
    let took = wait_session_gone(computer, &sid, Duration::from_secs(5)).await;
    assert!(took <= Duration::from_secs(3), "took {took:?}");
}

/// Whether process `pid` has exited (gone, or a zombie its parent has not
/// reaped yet).
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Sends `signal` to a host with a session on its screen; the host ends the
/// session and exits within 3 s.
async fn a_signal_ends_the_sessions_within_three_seconds(signal: i32) {
    let computer = shared_computer();
    let (client, pid) = connect(computer, &[]).await;
    let sid = start_session(&client, "signalled").await;
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    assert!(live_sessions(computer)
        .await
        .iter()
        .any(|x| x["session_id"] == json!(sid)));
    let sent = Instant::now();
    // SAFETY: signalling the host process this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
    while !exited(pid) {
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "the host still runs 3 s after signal {signal}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = sent.elapsed();
    eprintln!("the host exited {took:?} after signal {signal}");
    // The host ended the session before it exited, not the heartbeat later.
    assert!(
        !live_sessions(computer)
            .await
            .iter()
            .any(|x| x["session_id"] == json!(sid)),
        "session {sid} outlived the host, which exited {took:?} after signal {signal}"
    );
    drop(client);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_the_sessions_within_three_seconds() {
    a_signal_ends_the_sessions_within_three_seconds(libc::SIGINT).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_sessions_within_three_seconds() {
    a_signal_ends_the_sessions_within_three_seconds(libc::SIGTERM).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_host_loses_its_sessions_by_heartbeat_and_their_screens_are_freed() {
    let computer = shared_computer();
    // An 8 s window: the host beats every 2.7 s, so the session ends
    // between about 5 and 8.5 s after the kill.
    let (client, pid) = connect(computer, &[("COMPUTER_USE_HEARTBEAT_WINDOW", "8s")]).await;
    let (s, _) = ok(&client, "start_computer", json!({"title": "killed host"})).await;
    let sid = s["session_id"].as_str().unwrap().to_string();
    // The first observe opens the session's screen.
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    let screen = live_sessions(computer)
        .await
        .into_iter()
        .find(|x| x["session_id"] == json!(sid))
        .and_then(|x| x["screen"].as_u64())
        .expect("the session has a screen");
    // By pid: the computer is shared, and another test's session may take
    // the freed screen number, and start its own Xvnc on it, at once.
    let xvnc = format!("^Xvnc :{screen} ");
    let found =
        crate::support::docker::docker_output(&["exec", &computer.name, "pgrep", "-f", &xvnc]);
    let xvnc_pid = String::from_utf8_lossy(&found.stdout).trim().to_string();
    assert!(
        found.status.success() && xvnc_pid.parse::<u32>().is_ok(),
        "no one Xvnc for screen {screen}: {xvnc_pid:?}"
    );
    // SAFETY: killing the host process this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let took = wait_session_gone(computer, &sid, Duration::from_secs(20)).await;
    assert!(
        took >= Duration::from_secs(4),
        "ended too early ({took:?}): heartbeats were not the cause"
    );
    // The session is gone from the list; its screen's server is gone too.
    let freed_by = Instant::now() + Duration::from_secs(5);
    // Running, and not a zombie its parent has not reaped yet.
    let status = format!("/proc/{xvnc_pid}/status");
    while crate::support::docker::docker_output(&[
        "exec",
        &computer.name,
        "grep",
        "-qs",
        "^State:[[:space:]]*[^Z[:space:]]",
        &status,
    ])
    .status
    .success()
    {
        assert!(
            Instant::now() < freed_by,
            "screen {screen}'s Xvnc still runs after its session ended"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(client);
}

/// Whether a process whose whole command line is `command` runs in the
/// computer, asked through a second `shell` call.
async fn runs(client: &crate::support::mcp::Client, sid: &str, command: &str) -> bool {
    // `[s]leep` keeps the pattern from matching this call's own bash.
    let pattern = format!("^[{}]{}$", &command[..1], &command[1..]);
    let r = shell_ok(client, sid, &format!("pgrep -f '{pattern}'")).await;
    r["exit_code"] == json!(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_shell_call_stops_its_command_and_the_session_carries_on() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start_session(&client, "cancel shell").await;
    // A duration no other test uses, so the process is this call's.
    let command = "sleep 37";
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new("shell").with_arguments(
                    json!({"session_id": sid, "command": command, "timeout": 120})
                        .as_object()
                        .cloned()
                        .unwrap(),
                ),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("request sent");
    let running_by = Instant::now() + Duration::from_secs(30);
    while !runs(&client, &sid, command).await {
        assert!(Instant::now() < running_by, "`{command}` never started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cancelled = Instant::now();
    handle
        .cancel(Some("test cancels".into()))
        .await
        .expect("cancellation sent");
    // The command stops long before its 37 s are up.
    let stopped_by = cancelled + Duration::from_secs(5);
    while runs(&client, &sid, command).await {
        assert!(
            Instant::now() < stopped_by,
            "`{command}` still runs {:?} after the call was cancelled",
            cancelled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The session carries on.
    let r = shell_ok(&client, &sid, "echo still-here").await;
    assert_eq!(r["stdout"], "still-here\n", "{r}");
    client.cancel().await.ok();
}
