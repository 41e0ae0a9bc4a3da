//! Snapshots through the real host binary and a real engine: save a
//! computer, wreck it as root, restore it, reset it, and every bad input
//! on the way refused with nothing changed. Over stdio, and over HTTP in
//! scripts/test-http.sh's pass, and on a remote engine over TLS and ssh in
//! scripts/test-remote.sh's.

use crate::support::docker::TestComputer;
use crate::support::mcp::{call, connect, is_error, ok, refused, shell_ok, start_session, text};
use rmcp::model::ContentBlock;
use serde_json::{json, Value};

/// The shell's stdout, trimmed.
async fn out(client: &crate::support::mcp::Client, session: &str, command: &str) -> String {
    let r = shell_ok(client, session, command).await;
    assert_eq!(r["exit_code"], json!(0), "{command}: {r}");
    r["stdout"].as_str().unwrap_or_default().trim().to_string()
}

fn names(listed: &Value) -> Vec<String> {
    listed["snapshots"]
        .as_array()
        .expect("snapshots")
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrecked_computer_comes_back_from_its_snapshot() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_SNAPSHOTS_MAX", "2")]).await;
    let me = start_session(&client, "snapshots").await;
    // Files, a link out of home and a fifo in home; a program outside home,
    // put there as root.
    out(
        &client,
        &me,
        "mkdir -p ~/work && echo kept > ~/work/a.txt && ln -s /etc/shadow ~/out-link \
         && mkfifo ~/pipe && echo tool | sudo tee /usr/local/bin/added-tool >/dev/null",
    )
    .await;

    let (saved, _) = ok(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "before-wreck", "note": "files and a tool"}),
    )
    .await;
    assert_eq!(saved["name"], json!("before-wreck"));
    assert!(saved["size_bytes"].as_u64().unwrap() > 0, "{saved}");
    let frozen = saved["frozen_ms"].as_u64().unwrap();
    assert!(frozen <= saved["took_ms"].as_u64().unwrap(), "{saved}");

    // Bad input is refused, naming the field, and changes nothing.
    let bad_name = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "Before Wreck"}),
    )
    .await;
    assert!(
        bad_name.contains("`name`") && bad_name.contains("1 to 64"),
        "{bad_name}"
    );
    let long_note = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "x", "note": "n".repeat(501)}),
    )
    .await;
    assert!(
        long_note.contains("`note` has 501 characters"),
        "{long_note}"
    );
    let taken = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "before-wreck"}),
    )
    .await;
    assert!(
        taken.contains("already has a snapshot named `before-wreck`"),
        "{taken}"
    );
    let (listed, _) = ok(&client, "list_snapshots", json!({"session_id": me})).await;
    assert_eq!(names(&listed), ["before-wreck"]);
    let only = &listed["snapshots"][0];
    assert_eq!(only["note"], json!("files and a tool"));
    assert!(only["created_at"].as_str().unwrap().contains('T'), "{only}");
    assert!(only["image_version"].as_str().is_some(), "{only}");

    // Another agent's session is live on the same computer.
    let (bystander, _) = connect(&computer, &[]).await;
    let them = start_session(&bystander, "bystander").await;

    // Wrecked as root: home emptied, a program of the image removed.
    out(
        &client,
        &me,
        "rm -rf ~/work ~/pipe ~/out-link && sudo rm -f /usr/bin/xterm /usr/local/bin/added-tool && echo wrecked",
    )
    .await;

    let unknown = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "nope"}),
    )
    .await;
    assert!(unknown.contains("it has: before-wreck"), "{unknown}");
    let busy = refused(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "before-wreck"}),
    )
    .await;
    assert!(
        busy.contains(&them) && busy.contains("bystander") && busy.contains("end_other_sessions"),
        "{busy}"
    );
    assert_eq!(out(&client, &me, "echo still here").await, "still here");

    let (restored, result) = ok(
        &client,
        "restore_snapshot",
        json!({"session_id": me, "name": "before-wreck", "end_other_sessions": true}),
    )
    .await;
    assert_eq!(restored["session_id"], json!(me), "{restored}");
    assert_eq!(restored["ended_sessions"][0]["session_id"], json!(them));
    assert!(
        result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Image(_))),
        "a frame of the fresh screen comes back: {}",
        text(&result)
    );
    // Files, the link (as a link), the fifo and the program are back.
    assert_eq!(
        out(
            &client,
            &me,
            "cat ~/work/a.txt; readlink ~/out-link; test -p ~/pipe && echo fifo; \
             test -x /usr/bin/xterm && echo xterm; sudo cat /usr/local/bin/added-tool"
        )
        .await,
        "kept\n/etc/shadow\nfifo\nxterm\ntool"
    );
    let told = call(
        &bystander,
        "shell",
        json!({"session_id": them, "command": "true"}),
    )
    .await;
    assert!(
        is_error(&told) && text(&told).contains("restored to snapshot before-wreck"),
        "{}",
        text(&told)
    );

    // A reset: the image's files and an empty home; the snapshot stays.
    let (reset, _) = ok(&client, "reset_computer", json!({"session_id": me})).await;
    assert_eq!(reset["session_id"], json!(me));
    assert_eq!(
        out(
            &client,
            &me,
            "test -e ~/work || echo no-work; test -x /usr/bin/xterm && echo xterm; \
             test -e /usr/local/bin/added-tool || echo no-tool"
        )
        .await,
        "no-work\nxterm\nno-tool"
    );

    // At most COMPUTER_USE_SNAPSHOTS_MAX (2 here).
    ok(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "fresh"}),
    )
    .await;
    let full = refused(
        &client,
        "save_snapshot",
        json!({"session_id": me, "name": "third"}),
    )
    .await;
    assert!(
        full.contains("has 2 snapshots") && full.contains("COMPUTER_USE_SNAPSHOTS_MAX"),
        "{full}"
    );

    let gone = refused(
        &client,
        "delete_snapshot",
        json!({"session_id": me, "name": "third"}),
    )
    .await;
    assert!(gone.contains("it has: before-wreck, fresh"), "{gone}");
    for name in ["before-wreck", "fresh"] {
        ok(
            &client,
            "delete_snapshot",
            json!({"session_id": me, "name": name}),
        )
        .await;
    }
    let (listed, _) = ok(&client, "list_snapshots", json!({"session_id": me})).await;
    assert!(names(&listed).is_empty(), "{listed}");
}
