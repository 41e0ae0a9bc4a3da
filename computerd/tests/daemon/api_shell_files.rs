//! `shell` and the file tools through the API.

use crate::common::{wait_until, Daemon};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn shell(d: &Daemon, sid: &str, body: Value) -> (StatusCode, Value) {
    d.post(&format!("/v1/sessions/{sid}/shell"), body).await
}

fn pid_alive(pid: i32) -> bool {
    // A zombie still answers kill(0); read its state instead.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_reports_exit_code_streams_and_working_folder() {
    let d = Daemon::start().await;
    let sid = d.create_session("shell").await;
    let (status, v) = shell(
        &d,
        &sid,
        json!({"command": "echo out; echo err >&2; pwd; cat; exit 3"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["timed_out"], false);
    let home = d.home.path().canonicalize().unwrap();
    assert_eq!(v["stdout"], format!("out\n{}\n", home.display()));
    assert_eq!(v["stderr"], "err\n");
    assert!(v["duration_ms"].as_u64().is_some());

    std::fs::create_dir(home.join("proj")).unwrap();
    let cwd = d
        .ok(&format!("/v1/sessions/{sid}/cwd"), json!({"path": "proj"}))
        .await;
    assert_eq!(cwd["path"], home.join("proj").display().to_string());
    let (_, v) = shell(
        &d,
        &sid,
        json!({"command": "pwd; echo $HOME; echo \"${DISPLAY:-none}\""}),
    )
    .await;
    assert_eq!(
        v["stdout"],
        format!(
            "{}\n{}\nnone\n",
            home.join("proj").display(),
            d.home.path().display()
        )
    );

    // Once the session has a screen, DISPLAY points at it, and the session
    // bus is the screen's own, whose AT-SPI bus serves that display.
    d.ok(&format!("/v1/sessions/{sid}/observe"), json!({}))
        .await;
    let (_, v) = shell(
        &d,
        &sid,
        json!({"command": "echo $DISPLAY; echo $QT_LINUX_ACCESSIBILITY_ALWAYS_ON; echo \"${NO_AT_BRIDGE:-unset}\"; dbus-send --session --print-reply=literal --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress"}),
    )
    .await;
    let display = d.display_base + 1;
    let stdout = v["stdout"].as_str().unwrap_or_default();
    let lines: Vec<&str> = stdout.lines().map(str::trim).collect();
    assert_eq!(
        lines[..3],
        [format!(":{display}").as_str(), "1", "unset"],
        "{v}"
    );
    assert!(
        lines
            .get(3)
            .is_some_and(|address| address.contains(&format!("/at-spi/bus_{display}"))),
        "the screen's session bus names its AT-SPI bus: {v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_kills_everything_the_command_started_and_keeps_its_output() {
    let d = Daemon::start().await;
    let sid = d.create_session("timeouts").await;
    let pids = d.home.path().join("pids");
    let command = format!(
        "sleep 300 & echo $! > {p}.1; setsid sleep 300 & echo $! > {p}.2; (setsid sh -c 'sleep 300 & echo $! > {p}.3; wait' &); echo started; sleep 300",
        p = pids.display()
    );
    let started = Instant::now();
    let (status, v) = shell(&d, &sid, json!({"command": command, "timeout": "1s"})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call returned after the timeout"
    );
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["exit_code"], Value::Null);
    assert_eq!(v["stdout"], "started\n");
    let all: Vec<i32> = (1..=3)
        .map(|i| {
            std::fs::read_to_string(format!("{}.{i}", pids.display()))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    wait_until(
        "every started process to be gone",
        Duration::from_secs(10),
        || async { all.iter().all(|p| !pid_alive(*p)).then_some(()) },
    )
    .await;

    // Timeouts in every form.
    for timeout in [json!(1), json!("1"), json!("1s")] {
        let (_, v) = shell(&d, &sid, json!({"command": "sleep 30", "timeout": timeout})).await;
        assert_eq!(v["timed_out"], true, "{timeout}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn long_output_keeps_head_and_tail_and_commands_run_side_by_side() {
    let d = Daemon::start().await;
    let sid = d.create_session("output").await;
    let (_, v) = shell(
        &d,
        &sid,
        json!({"command": "head -c 100000 /dev/zero | tr '\\0' a"}),
    )
    .await;
    let out = v["stdout"].as_str().unwrap();
    let marker = "[... 70000 bytes omitted ...]";
    assert!(out.contains(marker), "{}", &out[..100.min(out.len())]);
    assert_eq!(out.len(), 30000 + marker.len() + out.matches('\n').count());

    let started = Instant::now();
    let calls = (0..3).map(|_| shell(&d, &sid, json!({"command": "sleep 1; echo ok"})));
    let results = futures::future::join_all(calls).await;
    assert!(results
        .iter()
        .all(|(s, v)| *s == StatusCode::OK && v["stdout"] == "ok\n"));
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "three 1 s commands overlapped: {:?}",
        started.elapsed()
    );
}

/// A `shell` call and the list of sessions never wait for a screen that is
/// still opening. The screen's Xvnc is stopped (SIGSTOP) as soon as it
/// runs, so the opening cannot finish until the test lets it; meanwhile
/// both answer, and the command runs without the screen's `DISPLAY`.
#[tokio::test(flavor = "multi_thread")]
async fn shell_and_the_session_list_do_not_wait_for_a_screen_still_opening() {
    crate::common::require_x_programs();
    let d = Daemon::start().await;
    let sid = d.create_session("opening").await;
    let observe = tokio::spawn(
        d.raw()
            .post(d.url(&format!("/v1/sessions/{sid}/observe")))
            .bearer_auth(crate::common::daemon::TOKEN)
            .json(&json!({}))
            .send(),
    );
    let (xvnc, number) = wait_until("the screen's Xvnc runs", Duration::from_secs(20), || {
        let found = d.running_xvnc().first().copied();
        async move { found }
    })
    .await;
    // SAFETY: kill(2) with a pid read from /proc; no memory is involved.
    unsafe { libc::kill(xvnc, libc::SIGSTOP) };

    let answered = Duration::from_secs(5);
    let printed = tokio::time::timeout(answered, d.shell(&sid, "echo \"[$DISPLAY]\""))
        .await
        .expect("a shell call waited for the screen still opening");
    let (_, list) = tokio::time::timeout(answered, d.call("GET", "/v1/sessions", None))
        .await
        .expect("the session list waited for the screen still opening");
    let still_opening = !observe.is_finished();
    // SAFETY: as above.
    unsafe { libc::kill(xvnc, libc::SIGCONT) };

    assert!(
        still_opening,
        "the screen opened while its Xvnc was stopped"
    );
    let display = format!(":{}", d.display_base + number as u32);
    let stdout = printed["stdout"].as_str().unwrap();
    assert!(!stdout.contains(&display), "{stdout}");
    let listed = list["sessions"].as_array().unwrap();
    let entry = listed.iter().find(|s| s["session_id"] == sid).unwrap();
    assert!(entry["screen"].is_null(), "{entry}");

    let opened = observe.await.unwrap().expect("the observe is answered");
    assert!(opened.status().is_success(), "{}", opened.status());
    let printed = d.shell(&sid, "echo \"[$DISPLAY]\"").await;
    assert_eq!(printed["stdout"], format!("[{display}]\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn file_tools_work_from_the_working_folder() {
    let d = Daemon::start().await;
    let sid = d.create_session("files").await;
    let base = format!("/v1/sessions/{sid}");
    let home = d.home.path().canonicalize().unwrap();

    let w = d
        .ok(
            &format!("{base}/files/write"),
            json!({"path": "notes/today.txt", "content": "one\ntwo\nthree\n"}),
        )
        .await;
    assert_eq!(
        w["path"],
        home.join("notes/today.txt").display().to_string()
    );
    assert_eq!(w["bytes"], 14);
    let r = d
        .ok(
            &format!("{base}/files/read"),
            json!({"path": "~/notes/today.txt", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(r["kind"], "text");
    assert_eq!(r["text"], "two\n");
    assert_eq!(r["total_lines"], 3);

    std::fs::create_dir(home.join("notes/sub")).unwrap();
    let l = d
        .ok(&format!("{base}/files/list"), json!({"path": "notes"}))
        .await;
    let names: Vec<(&str, &str)> = l["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["type"].as_str().unwrap()))
        .collect();
    assert_eq!(names, [("sub", "dir"), ("today.txt", "file")]);
    assert_eq!(l["more"], 0);

    let (status, e) = d
        .post(
            &format!("{base}/files/read"),
            json!({"path": "missing.txt"}),
        )
        .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found")),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("missing.txt"),
        "{e}"
    );
    let (status, e) = d
        .post(
            &format!("{base}/files/write"),
            json!({"path": "notes", "content": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    let (status, e) = d
        .post(&format!("{base}/cwd"), json!({"path": "notes/today.txt"}))
        .await;
    assert!(status.is_client_error(), "{e}");
    std::fs::write(home.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let (status, e) = d
        .post(&format!("{base}/files/read"), json!({"path": "blob.bin"}))
        .await;
    assert!(status.is_client_error(), "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("file_transfer"),
        "{e}"
    );
}
