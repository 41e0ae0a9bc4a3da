//! Recordings end to end, how a package reaches the host and what is kept:
//! delivered when the session ends or the host dies mid-recording, old
//! recordings aged out by count and age, a short disk refused, and a full
//! recording that stops growing. The real host binary, a real MCP client
//! (stdio, or HTTP with `COMPUTER_USE_TEST_TRANSPORT=http`), a real computer.

use crate::mcp_evidence::{files_of, review, walkthrough};
use crate::support::docker::TestComputer;
use crate::support::mcp::{
    connect, host_command, ok, refused, shell_ok, start_session, text, Client,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn ending_the_session_delivers_the_package() {
    let computer = TestComputer::new();
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = host_command(&computer, &[]);
    cmd.current_dir(cwd.path());
    // Over HTTP the default folder is beneath the transfer root.
    cmd.env("COMPUTER_USE_TRANSFER_ROOT", cwd.path());
    let (client, _) = crate::support::mcp::connect_with(cmd, ()).await;
    let sid = start_session(&client, "ends recording").await;
    ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "End it"}),
    )
    .await;
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo ended-marker"}),
    )
    .await;
    let (ended, result) = ok(&client, "end_session", json!({"session_id": sid})).await;
    let package = PathBuf::from(
        ended["recording"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", text(&result))),
    );
    assert!(
        package.starts_with(cwd.path().join("computer-use-evidence")),
        "{}",
        package.display()
    );
    assert!(package
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("end-it-"));
    let data = walkthrough(&package);
    assert_eq!(data["steps"][0]["tool"], "shell");
    let (code, out, err) = review(&computer, &[package.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_killed_mid_recording_still_gets_its_package() {
    let computer = TestComputer::new();
    let (client, pid) = connect(&computer, &[]).await;
    let sid = start_session(&client, "killed host").await;
    let (started, _) = ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "Survive a kill"}),
    )
    .await;
    let id = started["recording_id"].as_str().unwrap().to_string();
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo before-the-kill"}),
    )
    .await;
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    ok(
        &client,
        "recording_note",
        json!({"session_id": sid, "text": "last words"}),
    )
    .await;

    // The steps leave the host moments after each call: wait until the
    // computer holds all three, then kill the host outright.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, out, err) = review(&computer, &["--list"]).await;
        assert_eq!(code, 0, "{out}{err}");
        let line = out
            .lines()
            .find(|l| l.starts_with(&id))
            .unwrap_or_default()
            .to_string();
        if line.contains("3 steps") {
            assert!(
                line.contains("Survive a kill") && line.contains("recording"),
                "{line}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the recording never showed 3 steps:\n{out}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(client);
    nix_kill(pid);

    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("fetched");
    let (code, out, err) = review(&computer, &["--fetch", &id, target.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(target.to_str().unwrap()), "{out}");
    let data = walkthrough(&target);
    let tools: Vec<&str> = data["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["shell", "computer_observe", "recording_note"]);
    let (code, out, err) = review(&computer, &[target.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = review(&computer, &["--fetch", "../etc"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("not a recording id"), "{err}");
}

/// Starts and stops a recording on `sid`; its id.
async fn record_once(client: &Client, sid: &str, task: &str, home: &Path) -> (String, Value) {
    let (started, result) = ok(
        client,
        "start_recording",
        json!({"session_id": sid, "task": task}),
    )
    .await;
    ok(
        client,
        "stop_recording",
        json!({"session_id": sid, "host_path": home.to_str().unwrap()}),
    )
    .await;
    let text = Value::String(text(&result));
    (started["recording_id"].as_str().unwrap().to_string(), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn old_recordings_go_by_count_and_age_and_a_short_disk_is_refused() {
    let computer = TestComputer::new();
    let home = tempfile::tempdir().unwrap();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_RECORDINGS_KEEP", "2")]).await;
    let sid = start_session(&client, "retention").await;
    let (first, _) = record_once(&client, &sid, "First", home.path()).await;
    let (second, said) = record_once(&client, &sid, "Second", home.path()).await;
    assert!(!said.as_str().unwrap().contains("deleted"), "{said}");
    // A third keeps two: the first goes, and the agent is told.
    let (third, said) = record_once(&client, &sid, "Third", home.path()).await;
    let said = said.as_str().unwrap();
    assert!(
        said.contains(&format!("deleted {first}")) && said.contains("COMPUTER_USE_RECORDINGS_KEEP"),
        "{said}"
    );
    let (code, listed, err) = review(&computer, &["--list"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        !listed.contains(&first) && listed.contains(&second) && listed.contains(&third),
        "{listed}"
    );

    // A recording older than 30 days goes whatever the count (planted as
    // a copy of one, named for a day in 2020).
    let old = "20200101T000000Z-0001";
    shell_ok(
        &client,
        &sid,
        &format!("cd ~/.local/share/computer-use/recordings && cp -r {third} {old}"),
    )
    .await;
    let (code, out, err) = review(&computer, &["--delete", &second]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("deleted recording {second}")),
        "{out}"
    );
    let (fourth, said) = record_once(&client, &sid, "Fourth", home.path()).await;
    assert!(said.as_str().unwrap().contains(old), "{said}");
    let (_, listed, _) = review(&computer, &["--list"]).await;
    assert!(
        !listed.contains(old)
            && !listed.contains(&second)
            && listed.contains(&third)
            && listed.contains(&fourth),
        "{listed}"
    );

    // Deleting: an unknown id, a bad one and an open recording are refused.
    let (code, _, err) = review(&computer, &["--delete", &second]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("no recording `{second}`")) && err.contains("--list"),
        "{err}"
    );
    let (code, _, err) = review(&computer, &["--delete", "../etc"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("not a recording id"), "{err}");
    let (open, _) = ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "Open"}),
    )
    .await;
    let open = open["recording_id"].as_str().unwrap().to_string();
    let (code, _, err) = review(&computer, &["--delete", &open]).await;
    assert_eq!(code, 1);
    assert!(err.contains("still recording"), "{err}");
    ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": home.path().to_str().unwrap()}),
    )
    .await;

    // A recording that could fill the disk is refused with the figures,
    // and none starts.
    let free = shell_ok(&client, &sid, "df -B1M --output=avail ~ | tail -1").await;
    let free_mb: u64 = free["stdout"].as_str().unwrap().trim().parse().unwrap();
    let too_big = (free_mb + 1).to_string();
    let (big, _) = connect(
        &computer,
        &[("COMPUTER_USE_RECORDING_MAX_MB", too_big.as_str())],
    )
    .await;
    let big_sid = start_session(&big, "a short disk").await;
    let e = refused(
        &big,
        "start_recording",
        json!({"session_id": big_sid, "task": "Too big"}),
    )
    .await;
    assert!(
        e.contains("disk has")
            && e.contains(&format!("{too_big} MB"))
            && e.contains("review --delete"),
        "{e}"
    );
    let (_, listed, _) = review(&computer, &["--list"]).await;
    assert!(!listed.contains("Too big"), "{listed}");
}

/// SIGKILL: the host gets no chance to end anything.
fn nix_kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_recording_stops_growing_and_says_so() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_RECORDING_MAX_MB", "1")]).await;
    let sid = start_session(&client, "full recording").await;
    let host_dir = tempfile::tempdir().unwrap();
    ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "Fill it"}),
    )
    .await;
    ok(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "terminal"}),
    )
    .await;
    // Each round fills the terminal with new random text, so each frame is
    // new and compresses poorly (tens of KB even as an indexed PNG).
    let mut told = None;
    for round in 0..80 {
        let (_, result) = ok(
            &client,
            "computer_act",
            json!({"session_id": sid, "actions": [
                {"type": "type", "text": format!("clear; head -c 3000 /dev/urandom | base64 # {round}\n")},
            ]}),
        )
        .await;
        let shown = text(&result);
        if shown.contains("reached its size limit") {
            told = Some((round, shown));
            break;
        }
    }
    let (round, shown) = told.expect("the recording never said it was full");
    assert!(
        shown.contains("COMPUTER_USE_RECORDING_MAX_MB") && shown.contains("stop_recording"),
        "{shown}"
    );
    // Said once, not on every result after.
    let (_, again) = ok(&client, "computer_observe", json!({"session_id": sid})).await;
    assert!(!text(&again).contains("reached its size limit"));
    let (stopped, result) = ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": host_dir.path().to_str().unwrap()}),
    )
    .await;
    assert_eq!(stopped["full"], true, "{}", text(&result));
    assert!(
        text(&result).contains("stopped growing"),
        "{}",
        text(&result)
    );
    let package = PathBuf::from(stopped["path"].as_str().unwrap());
    let data = walkthrough(&package);
    assert_eq!(data["full"], true);
    assert!(data["steps"].as_array().unwrap().len() <= round + 2);
    let frames: u64 = files_of(&package.join("frames"))
        .iter()
        .map(|(_, b)| b.len() as u64)
        .sum();
    assert!(
        frames <= 1 << 20,
        "{frames} bytes of frames in a 1 MB recording"
    );
    let (code, out, err) = review(&computer, &[package.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
}
