//! Recordings end to end: the real host binary driven by a real MCP client
//! (stdio, or HTTP with `COMPUTER_USE_TEST_TRANSPORT=http`), a real
//! computer, and the package opened from disk in real headless Chromium
//! with the network off.

use crate::support::docker::{shared_computer, TestComputer};
use crate::support::mcp::{
    call, connect, host_command, is_error, ok, refused, start_session, text,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Typed with `secret: true`: it must be in no file of the package.
const SECRET: &str = "Tr0ub4dor-and-3-horses";

/// Every file beneath `dir`, as (relative path, bytes).
pub(crate) fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// `computer-use-mcp review ARGS` for `computer`; (exit code, stdout, stderr).
pub(crate) async fn review(computer: &TestComputer, args: &[&str]) -> (i32, String, String) {
    let mut cmd = host_command(computer, &[]);
    cmd.arg("review").args(args).stdin(Stdio::null());
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("review answers within 3 minutes")
        .expect("review runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Opens `package/index.html` in headless Chromium with the network off
/// (`computerd/tests/browser/walkthrough.test.mjs`) and fails with its
/// output when a check fails.
fn open_offline(package: &Path, expect: &[&str], forbidden: &str) {
    let browser_dir = test_support::require_playwright();
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", "walkthrough.test.mjs"])
        .current_dir(&browser_dir)
        .env("PACKAGE_DIR", package)
        .env("EXPECT_TEXTS", serde_json::to_string(expect).unwrap())
        .env("FORBIDDEN_TEXT", forbidden)
        .stdin(Stdio::null())
        .output()
        .expect("node runs (apt-get install nodejs)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ℹ fail 0") && !stdout.contains("ℹ pass 0"),
        "the walkthrough page failed in Chromium:\n{stdout}\n{stderr}"
    );
}

pub(crate) fn walkthrough(package: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(package.join("walkthrough.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_task_becomes_a_package_that_opens_offline() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start_session(&client, "evidence").await;
    let host_dir = tempfile::tempdir().unwrap();

    let (started, _) = ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "Check the evidence page"}),
    )
    .await;
    let recording_id = started["recording_id"].as_str().unwrap().to_string();

    ok(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "terminal"}),
    )
    .await;
    // A password prompt: the secret is typed where it does not echo.
    ok(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [
            {"type": "click", "x": 400, "y": 300},
            {"type": "type", "text": "read -s PW && echo typed-${#PW}-chars\n"},
        ]}),
    )
    .await;
    let (acted, _) = ok(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [
            {"type": "type", "text": format!("{SECRET}\n"), "secret": true},
        ]}),
    )
    .await;
    assert_eq!(acted["outcomes"][0]["ok"], true, "{acted}");
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo shell-output-marker-42"}),
    )
    .await;
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    ok(
        &client,
        "recording_note",
        json!({"session_id": sid, "text": "Checked: the marker printed and the prompt took the password."}),
    )
    .await;
    ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "~/evidence-page.html",
               "content": "<title>Evidence page title</title><h1>Evidence</h1>"}),
    )
    .await;
    ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "~/evidence-page.html"}),
    )
    .await;
    // A failing call is a step too, shown as an error.
    let missing = call(
        &client,
        "read_file",
        json!({"session_id": sid, "path": "~/no-such-file"}),
    )
    .await;
    assert!(is_error(&missing));

    let started_at = Instant::now();
    let (stopped, result) = ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": host_dir.path().to_str().unwrap()}),
    )
    .await;
    eprintln!("stop_recording took {:?}", started_at.elapsed());
    let package = PathBuf::from(stopped["path"].as_str().unwrap());
    assert!(
        package.starts_with(host_dir.path())
            && package
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("check-the-evidence-page-"),
        "{}",
        text(&result)
    );
    assert_eq!(stopped["recording_id"], recording_id.as_str());
    assert_eq!(stopped["steps"], 9, "{}", text(&result));
    assert!(package.join("index.html").is_file());
    assert_eq!(
        stopped["index"],
        package.join("index.html").to_str().unwrap()
    );

    let data = walkthrough(&package);
    let wrong = crate::support::schema::walkthrough_violations(&data);
    assert!(
        wrong.is_empty(),
        "walkthrough.json does not fit its schema: {wrong:?}"
    );
    let steps = data["steps"].as_array().unwrap();
    let tools: Vec<&str> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "launch_app",
            "computer_act",
            "computer_act",
            "shell",
            "computer_observe",
            "recording_note",
            "write_file",
            "open_path",
            "read_file"
        ]
    );
    // Screen steps have their frames; the click is marked on the frame
    // before it; the page shown has its URL and title; the error is one.
    let click = &steps[1];
    assert!(
        click["before"].is_string() && click["after"].is_string(),
        "{click}"
    );
    let point = &click["points"][0];
    assert_eq!(
        (point["x"].as_i64(), point["y"].as_i64()),
        (Some(400), Some(300))
    );
    assert!(point["left"].as_f64().unwrap() > 0.0, "{point}");
    assert_eq!(steps[2]["arguments"]["actions"][0]["text"], "•••");
    assert!(steps[3]["text"]
        .as_str()
        .unwrap()
        .contains("shell-output-marker-42"));
    assert_eq!(steps[5]["kind"], "note");
    assert_eq!(
        steps[7]["page"]["title"], "Evidence page title",
        "{}",
        steps[7]
    );
    assert!(steps[7]["page"]["url"]
        .as_str()
        .unwrap()
        .starts_with("file://"));
    assert_eq!(steps[8]["is_error"], true);
    // The step that typed the secret keeps no frame (a screen may echo
    // it), and is no step's before; every other screen step has its frame.
    assert!(steps[2]["after"].is_null(), "{}", steps[2]);
    assert!(steps[4]["before"].is_null(), "{}", steps[4]);
    for step in steps.iter().filter(|s| s["kind"] == "screen") {
        if step["index"] == 3 {
            continue;
        }
        let after = step["after"].as_str().unwrap_or_else(|| panic!("{step}"));
        assert!(package.join(after).is_file(), "{after}");
    }

    // The secret is in no file; the manifest holds; the page reads offline.
    for (path, bytes) in files_of(&package) {
        let shown = String::from_utf8_lossy(&bytes);
        assert!(!shown.contains(SECRET), "{path} holds the secret text");
    }
    let (code, out, err) = review(computer, &[package.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("files match the manifest"), "{out}");
    open_offline(
        &package,
        &[
            "shell-output-marker-42",
            "Checked: the marker printed and the prompt took the password.",
            "Evidence page title",
        ],
        SECRET,
    );

    // A changed frame is named.
    let frame = package.join(steps[4]["after"].as_str().unwrap());
    let mut bytes = std::fs::read(&frame).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&frame, bytes).unwrap();
    let (code, out, err) = review(computer, &[package.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{out}{err}");
    let name = steps[4]["after"].as_str().unwrap();
    assert!(err.contains(&format!("changed: {name}")), "{err}");
}

/// Waits until `path` holds something, for at most 30 s.
async fn written(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} was never written",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn review_trusts_what_the_host_saw_not_what_the_computer_wrote() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start_session(&client, "attested").await;
    let host_dir = tempfile::tempdir().unwrap();
    let record = |task: &'static str| {
        let (client, sid) = (&client, &sid);
        async move {
            let (started, _) = ok(
                client,
                "start_recording",
                json!({"session_id": sid, "task": task}),
            )
            .await;
            started["recording_id"].as_str().unwrap().to_string()
        }
    };
    let stop = |name: &'static str| {
        let (client, sid, dir) = (&client, &sid, host_dir.path().join(name));
        async move {
            let (stopped, result) = ok(
                client,
                "stop_recording",
                json!({"session_id": sid, "host_path": dir.to_str().unwrap()}),
            )
            .await;
            assert!(stopped["path"].is_string(), "{}", text(&result));
            PathBuf::from(stopped["path"].as_str().unwrap())
        }
    };

    // An honest recording: the host signs it and review says so.
    record("Honest").await;
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo honest-step"}),
    )
    .await;
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    // A secret typed where the screen may echo it: that step keeps no
    // frame, and a later step that repeats the secret shows it hidden.
    ok(
        &client,
        "launch_app",
        json!({"session_id": sid, "app": "terminal"}),
    )
    .await;
    ok(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [
            {"type": "click", "x": 400, "y": 300},
            {"type": "type", "text": SECRET, "secret": true},
        ]}),
    )
    .await;
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": format!("echo {SECRET}")}),
    )
    .await;
    let honest = stop("honest").await;
    assert!(honest.join("host-attestation.json").is_file());
    let (code, out, err) = review(computer, &[honest.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("attested: its 5 step(s)"), "{out}");
    let steps = walkthrough(&honest)["steps"].as_array().unwrap().clone();
    assert!(steps[2]["after"].is_string(), "{}", steps[2]);
    assert!(steps[3]["after"].is_null(), "{}", steps[3]);
    assert!(
        steps[4]["text"].as_str().unwrap().contains("•••"),
        "{}",
        steps[4]
    );
    for (path, bytes) in files_of(&honest) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{path} holds the secret text"
        );
    }
    // The terminal showed the typed secret: no frame of the package is
    // the one the secret step returned.
    let frames = std::fs::read_dir(honest.join("frames")).unwrap().count();
    assert_eq!(frames, 2, "the observe and launch_app frames only");

    // Its page is the host's: whatever the folder held is written again.
    std::fs::write(honest.join("index.html"), "<script>alert(1)</script>").unwrap();
    // A `#` in the folder's name is part of the path the browser is given.
    let odd = host_dir.path().join("pkg#x");
    std::fs::rename(&honest, &odd).unwrap();
    let opened = host_dir.path().join("opened.txt");
    let stub = host_dir.path().join("browser.sh");
    std::fs::write(
        &stub,
        format!("#!/bin/sh\necho \"$@\" > {}\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = host_command(
        computer,
        &[
            ("COMPUTER_USE_OPEN", "browser"),
            ("BROWSER", stub.to_str().unwrap()),
        ],
    );
    cmd.arg("review").arg(&odd).stdin(Stdio::null());
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{out:?}");
    let url = written(&opened).await;
    assert!(url.trim().ends_with("/pkg%23x/index.html"), "{url}");
    let page = std::fs::read_to_string(odd.join("index.html")).unwrap();
    assert!(
        page.contains("honest-step") && !page.contains("alert(1)"),
        "review did not write the page again"
    );

    // Without its attestation the package is named, and opens only when
    // asked for as the computer's own account.
    std::fs::rename(
        odd.join("host-attestation.json"),
        host_dir.path().join("kept.json"),
    )
    .unwrap();
    let (code, out, err) = review(computer, &[odd.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("carries no host attestation"), "{err}");
    let (code, out, err) = review(computer, &["--unattested", odd.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("UNATTESTED"), "{out}");
    // An attestation edited to match is not this server's signature.
    let mut attestation: Value =
        serde_json::from_slice(&std::fs::read(host_dir.path().join("kept.json")).unwrap()).unwrap();
    attestation["steps"].as_array_mut().unwrap().remove(0);
    std::fs::write(
        odd.join("host-attestation.json"),
        serde_json::to_vec(&attestation).unwrap(),
    )
    .unwrap();
    let (code, out, err) = review(computer, &[odd.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("does not verify with this server's key"),
        "{err}"
    );

    // Code in the computer drops a step from the journal before the
    // package is made: package and manifest agree, the host does not.
    let id = record("Edited inside").await;
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo exfiltrate-the-secrets"}),
    )
    .await;
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo harmless"}),
    )
    .await;
    let journal = format!("~/.local/share/computer-use/recordings/{id}/journal.jsonl");
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": format!(
            "J={journal}; until [ \"$(wc -l < $J)\" -ge 2 ]; do sleep 0.1; done; sed -i 1d $J"
        ), "timeout": 30}),
    )
    .await;
    let edited = stop("edited").await;
    let tools: Vec<String> = walkthrough(&edited)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tools, ["shell", "shell"], "the journal edit did not happen");
    let (code, out, err) = review(computer, &[edited.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("leaves out") && err.contains("the first `shell` at"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_recording_calls_are_clear_errors_and_write_nothing() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start_session(&client, "bad evidence").await;
    let host_dir = tempfile::tempdir().unwrap();
    let a_file = host_dir.path().join("a-file");
    std::fs::write(&a_file, "keep me").unwrap();

    let unknown = "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30";
    let e = refused(
        &client,
        "start_recording",
        json!({"session_id": unknown, "task": "t"}),
    )
    .await;
    assert!(
        e.contains("no session") || e.contains("unknown") || e.contains("start_computer"),
        "{e}"
    );
    let e = refused(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "x".repeat(81)}),
    )
    .await;
    assert!(e.contains("`task`") && e.contains("80"), "{e}");
    let e = refused(&client, "stop_recording", json!({"session_id": sid})).await;
    assert!(
        e.contains("not recording") && e.contains("start_recording"),
        "{e}"
    );
    let e = refused(
        &client,
        "recording_note",
        json!({"session_id": sid, "text": "n"}),
    )
    .await;
    assert!(e.contains("not recording"), "{e}");

    ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "bad input"}),
    )
    .await;
    let e = refused(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "again"}),
    )
    .await;
    assert!(
        e.contains("records already") && e.contains("stop_recording"),
        "{e}"
    );
    let e = refused(
        &client,
        "recording_note",
        json!({"session_id": sid, "text": "n".repeat(2001)}),
    )
    .await;
    assert!(e.contains("`text`") && e.contains("2000"), "{e}");
    let e = refused(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": a_file.to_str().unwrap()}),
    )
    .await;
    assert!(
        e.contains("is a file") && e.contains("recording goes on"),
        "{e}"
    );
    let under_a_file = a_file.join("sub");
    let e = refused(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": under_a_file.to_str().unwrap()}),
    )
    .await;
    // Over HTTP the transfer root's lookup refuses it first.
    assert!(
        e.contains("cannot be written") || e.contains("cannot be looked up"),
        "{e}"
    );
    // Nothing was written, and the recording goes on.
    assert_eq!(std::fs::read_to_string(&a_file).unwrap(), "keep me");
    assert_eq!(files_of(host_dir.path()).len(), 1);
    ok(
        &client,
        "recording_note",
        json!({"session_id": sid, "text": "still recording"}),
    )
    .await;

    // The refused note is a step too (an error), the other a note; an
    // existing folder takes the package inside it.
    let out_dir = host_dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let (stopped, _) = ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": out_dir.to_str().unwrap()}),
    )
    .await;
    assert_eq!(stopped["steps"], 2, "{stopped}");
    let package = PathBuf::from(stopped["path"].as_str().unwrap());
    assert_eq!(package.parent(), Some(out_dir.as_path()));
    let steps = walkthrough(&package)["steps"].clone();
    assert_eq!(steps[0]["is_error"], true, "{steps}");
    assert_eq!(steps[1]["arguments"]["text"], "still recording");
    let e = refused(&client, "stop_recording", json!({"session_id": sid})).await;
    assert!(e.contains("not recording"), "{e}");
    ok(&client, "end_session", json!({"session_id": sid})).await;
    let e = refused(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "late"}),
    )
    .await;
    assert!(e.contains("ended"), "{e}");
}
