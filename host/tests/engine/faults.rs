//! Faults the host survives, end to end: the real host binary with rmcp's
//! client (over stdio, or HTTP with `COMPUTER_USE_TEST_TRANSPORT=http`), a
//! real Docker engine and the real image. Each fault leaves
//! the agent a message that says what happened and what to do, and
//! `start_computer` brings the computer back with its home intact.
//!
//! Covered elsewhere: a killed host's sessions ending by heartbeat
//! (`mcp_session.rs`, `a_killed_host_loses_its_sessions_by_heartbeat`), a
//! cancelled `file_transfer` leaving no temporary files (`mcp_transfer.rs`,
//! `progress_is_reported_and_cancelling_or_ending_the_session_leaves_no_temporary_files`),
//! and a restarted Docker engine (`faults_dockerd.rs`, alone in its binary).

use crate::support::docker::{docker, docker_output, inspect, inspect_network, TestComputer};
use crate::support::mcp::{call, connect, is_error, ok, text, Client};
use serde_json::{json, Value};
use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};
use test_support::wait_until_holds;

/// What the tests write in home before a fault and read after recovery.
const KEPT: &str = "kept.txt";
const KEPT_TEXT: &str = "still here after the fault\n";

async fn start(client: &Client, title: &str) -> (String, Value) {
    let (started, _) = ok(client, "start_computer", json!({ "title": title })).await;
    let sid = started["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    (sid, started)
}

async fn write_kept(client: &Client, sid: &str) {
    ok(
        client,
        "write_file",
        json!({"session_id": sid, "path": KEPT, "content": KEPT_TEXT}),
    )
    .await;
}

async fn assert_kept(client: &Client, sid: &str) {
    let (read, _) = ok(
        client,
        "read_file",
        json!({"session_id": sid, "path": KEPT}),
    )
    .await;
    assert_eq!(
        read["text"], KEPT_TEXT,
        "home lost the file written before the fault"
    );
}

/// The host port Docker publishes the API on now.
fn api_port(name: &str) -> u16 {
    inspect_network(name)["NetworkSettings"]["Ports"]["7070/tcp"][0]["HostPort"]
        .as_str()
        .expect("a published API port")
        .parse()
        .expect("a port number")
}

fn running(name: &str) -> bool {
    inspect(name)["State"]["Running"] == json!(true)
}

/// How often a wait checks: each check is a `docker exec`.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Asserts the message names what happened and sends the agent to
/// `start_computer`.
fn assert_explains(result: &rmcp::model::CallToolResult, needles: &[&str]) {
    let message = text(result);
    assert!(is_error(result), "expected an error, got: {message}");
    for needle in needles.iter().chain(&["start_computer"]) {
        assert!(
            message.contains(needle),
            "the message should mention `{needle}`: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_no_token_goes_to_the_old_port_and_the_old_session_says_the_computer_restarted(
) {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (sid, _) = start(&client, "restart").await;
    write_kept(&client, &sid).await;
    let old_port = api_port(&computer.name);

    // The guard publishes the ports and keeps them across a restart of the
    // computer alone; a restart of both (as after the engine's) moves them.
    let guard = format!("{}-network", computer.name);
    docker(&["restart", "-t", "5", &guard, &computer.name]);
    let new_port = api_port(&computer.name);
    assert_ne!(
        old_port, new_port,
        "Docker gave the API the same port again; the test needs a moved port"
    );
    // Anyone on the machine may take the freed port; here, the test does.
    let squatter = TcpListener::bind((Ipv4Addr::LOCALHOST, old_port))
        .unwrap_or_else(|e| panic!("cannot bind the old API port {old_port}: {e}"));
    squatter.set_nonblocking(true).unwrap();
    let nothing_received = |squatter: &TcpListener| {
        if let Ok((mut stream, from)) = squatter.accept() {
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let mut head = [0u8; 512];
            let n = stream.read(&mut head).unwrap_or(0);
            panic!(
                "the old API port received a connection from {from}: {}",
                String::from_utf8_lossy(&head[..n])
            );
        }
    };

    // Two heartbeat periods and a half.
    let watch_until = Instant::now() + Duration::from_secs(25);
    while Instant::now() < watch_until {
        nothing_received(&squatter);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let r = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    assert_explains(&r, &["restarted", &sid]);
    nothing_received(&squatter);

    // The computer runs again: start_computer only opens a session.
    let (sid, started) = start(&client, "after restart").await;
    assert_eq!(started["computer"]["state"], "running", "{started}");
    assert_kept(&client, &sid).await;
    nothing_received(&squatter);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn computerd_killed_inside_the_container_is_explained_and_start_computer_recovers() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (sid, _) = start(&client, "computerd killed").await;
    write_kept(&client, &sid).await;

    let pid = docker(&["exec", &computer.name, "pgrep", "-o", "-x", "computerd"]);
    assert!(!pid.is_empty(), "no computerd process in the container");
    // The exec may die with the container; its exit status does not matter.
    let _ = docker_output(&["exec", &computer.name, "kill", "-9", &pid]);

    let r = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    // tini ends the container when computerd dies.
    assert_explains(&r, &["has stopped", "exit code", &computer.name]);
    assert!(!running(&computer.name), "the container still runs");

    let (sid, started) = start(&client, "after computerd died").await;
    assert_eq!(started["computer"]["state"], "started", "{started}");
    assert_kept(&client, &sid).await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_computer_stopped_during_a_shell_call_ends_the_call_promptly_with_the_reason() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (sid, _) = start(&client, "stopped during a call").await;
    write_kept(&client, &sid).await;

    let name = computer.name.clone();
    let stop_by_hand = tokio::spawn(async move {
        wait_until_holds(
            "the shell's sleep to run",
            Duration::from_secs(30),
            CHECK_EVERY,
            || {
                docker_output(&["exec", &name, "pgrep", "-x", "sleep"])
                    .status
                    .success()
            },
        )
        .await;
        let stopping = Instant::now();
        tokio::task::spawn_blocking(move || docker(&["stop", &name]))
            .await
            .unwrap();
        stopping
    });
    let long_call = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "sleep 300", "timeout": "10m"}),
    );
    let r = tokio::time::timeout(Duration::from_secs(90), long_call)
        .await
        .expect("the shell call hung after the container stopped");
    let returned = Instant::now();
    let stopping = stop_by_hand.await.unwrap();
    let took = returned.duration_since(stopping);
    // `docker stop` waits up to 10 s for the container to end by itself.
    assert!(
        took < Duration::from_secs(15),
        "the call returned {took:?} after the stop began"
    );
    assert_explains(&r, &["has stopped", "exit code", &computer.name]);

    // A later call on the same session says the same, at once.
    let r = call(&client, "computer_observe", json!({"session_id": sid})).await;
    assert_explains(&r, &["has stopped"]);

    let (sid, started) = start(&client, "after the stop").await;
    assert_eq!(started["computer"]["state"], "started", "{started}");
    assert_kept(&client, &sid).await;
    client.cancel().await.ok();
}
