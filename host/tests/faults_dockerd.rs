//! The Docker engine dies under a running computer and comes back: the host's
//! calls say so and `start_computer` recovers with home intact.
//!
//! Alone in its binary on purpose: it kills `dockerd`, which every other
//! Docker test on the machine uses, so it must never run beside them. Run it
//! by itself: `cargo test -p computer-use-mcp --test faults_dockerd`.

mod support;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::docker::TestComputer;
use support::mcp::{call, connect, is_error, ok, text};

/// The running engine's pid, from `pidof`: the machine's own dockerd, not
/// the remote-engine tests' second one (scripts/remote-engine.sh), whose
/// command line names its state folder.
fn dockerd_pid() -> i32 {
    let out = Command::new("pidof")
        .arg("dockerd")
        .output()
        .expect("pidof runs (apt-get install procps)");
    let is_remote_engine = |pid: &i32| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("computer-use-remote"))
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .find(|pid| alive(*pid) && !is_remote_engine(pid))
        .expect("a running dockerd; this test needs the engine on this machine, run as root")
}

/// Whether `pid` runs: a killed process stays in /proc as a zombie until its
/// reaper collects it, which takes its time on some machines.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("State:"))
            .is_some_and(|state| !state.trim_start().starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_docker_engine_is_explained_and_start_computer_recovers() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "dockerd dies"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "kept.txt", "content": "kept\n"}),
    )
    .await;

    // The engine crashes.
    let pid = dockerd_pid();
    // SAFETY: signalling the engine this test is about.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let died = Instant::now();
    while alive(pid) {
        assert!(
            died.elapsed() < Duration::from_secs(10),
            "dockerd survived SIGKILL"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // While it is down, a call fails at once and names Docker.
    let asked = Instant::now();
    let r = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    let down_message = text(&r);
    let restart = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ensure-docker.sh"))
        .status()
        .expect("bash runs");
    assert!(
        restart.success(),
        "scripts/ensure-docker.sh could not start dockerd again"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(60),
        "the call while Docker was down took {:?}",
        asked.elapsed()
    );
    if is_error(&r) {
        assert!(
            down_message.contains("Docker") && down_message.contains("start_computer"),
            "{down_message}"
        );
    }

    // Back up: the next call explains what became of the computer (or just
    // works, when the container outlived the engine).
    let r = call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    if is_error(&r) {
        assert!(text(&r).contains("start_computer"), "{}", text(&r));
    }

    let (started, _) = ok(&client, "start_computer", json!({"title": "after dockerd"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    let (read, _) = ok(
        &client,
        "read_file",
        json!({"session_id": sid, "path": "kept.txt"}),
    )
    .await;
    assert_eq!(read["text"], "kept\n");
    client.cancel().await.ok();
}
