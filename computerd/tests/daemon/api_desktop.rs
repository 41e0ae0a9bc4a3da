//! Screens, observe and act through the API, on real Xvnc screens.

use crate::common::{wait_until, Daemon};
use base64::Engine;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn decode_png(b64: &str) -> (u32, u32) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let (width, height, _) = crate::common::frame_pixels::decode_png_rgb(&bytes);
    (width, height)
}

/// The value without its image, for assertion messages.
fn brief(v: &Value) -> String {
    let mut v = v.clone();
    if let Some(o) = v.get_mut("observation").and_then(Value::as_object_mut) {
        o.remove("image_base64");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("image_base64");
    }
    v.to_string()
}

async fn observe(d: &Daemon, sid: &str) -> Value {
    d.ok(&format!("/v1/sessions/{sid}/observe"), json!({}))
        .await
}

/// An observe with `force: true`: the image even of an unchanged screen.
async fn observe_forced(d: &Daemon, sid: &str) -> Value {
    d.ok(
        &format!("/v1/sessions/{sid}/observe"),
        json!({"force": true}),
    )
    .await
}

async fn act(d: &Daemon, sid: &str, body: Value) -> (StatusCode, Value) {
    d.post(&format!("/v1/sessions/{sid}/act"), body).await
}

/// Starts `cat > file` in an xterm on the session's screen and waits until
/// the xterm has the focus.
async fn start_cat_terminal(d: &Daemon, sid: &str, file: &str) {
    d.shell(
        sid,
        &format!("LC_ALL=C.UTF-8 setsid nohup xterm -u8 -title catterm -e sh -c 'cat > {file}' >/dev/null 2>&1 &"),
    )
    .await;
    wait_until("the xterm to take the focus", Duration::from_secs(15), || async {
        let (status, v) = act(d, sid, json!({"actions": [{"type": "focus", "target": "catterm"}], "observe": true, "settle_ms": 0})).await;
        (status == StatusCode::OK && v["outcomes"][0]["ok"] == true
            && v["observation"]["active_window"] == "catterm")
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn observe_opens_a_screen_and_reports_changes_only() {
    let d = Daemon::start().await;
    let sid = d.create_session("observe").await;
    let first = observe(&d, &sid).await;
    assert_eq!(first["unchanged"], false);
    assert_eq!(
        (first["width"].as_u64(), first["height"].as_u64()),
        (Some(1280), Some(800))
    );
    assert_eq!(
        decode_png(first["image_base64"].as_str().unwrap()),
        (1280, 800)
    );
    assert!(first["captured_at"].as_str().unwrap().contains('T'));
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    assert_eq!(list["sessions"][0]["screen"], 1);

    // Fluxbox may still be drawing its first frame; wait for a still screen.
    let still = wait_until("the screen to settle", Duration::from_secs(10), || async {
        let o = observe(&d, &sid).await;
        (o["unchanged"] == true).then_some(o)
    })
    .await;
    assert!(
        still.get("image_base64").is_none(),
        "an unchanged frame carries no image"
    );
    assert!(still["frame_id"].as_u64() > first["frame_id"].as_u64());

    // Old finding 26: `force` brings the image back on a still screen. A
    // forced frame, then a plain one that is unchanged (so the screen is
    // still), then a forced one again: it carries the same image.
    wait_until(
        "a forced frame of a still screen",
        Duration::from_secs(15),
        || async {
            let before = observe_forced(&d, &sid).await;
            let image = before["image_base64"].as_str()?.to_string();
            let plain = observe(&d, &sid).await;
            if plain["unchanged"] != true {
                return None;
            }
            let again = observe_forced(&d, &sid).await;
            assert_eq!(again["unchanged"], false, "{}", brief(&again));
            let again_image = again["image_base64"].as_str().expect("a forced image");
            assert_eq!(decode_png(again_image), (1280, 800));
            (again_image == image).then_some(())
        },
    )
    .await;

    // Something new on the screen shows up as a changed frame.
    d.shell(&sid, "setsid nohup xterm -title painter >/dev/null 2>&1 &")
        .await;
    let changed = wait_until("the xterm to appear", Duration::from_secs(15), || async {
        let o = observe(&d, &sid).await;
        (o["unchanged"] == false).then_some(o)
    })
    .await;
    assert_eq!(
        decode_png(changed["image_base64"].as_str().unwrap()),
        (1280, 800)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn type_enters_any_unicode_text_exactly() {
    let d = Daemon::start().await;
    let sid = d.create_session("typing").await;
    observe(&d, &sid).await;
    let file = d.home.path().join("typed.txt");
    start_cat_terminal(&d, &sid, file.to_str().unwrap()).await;
    let text = "héllo wörld ÀÉ 你好 👋 ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./\nsecond line\tTAB\n";
    let (status, v) = act(
        &d,
        &sid,
        json!({"actions": [
        {"type": "type", "text": text},
        {"type": "key", "key": "ctrl+d"}
    ], "observe": false}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(
        v["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["ok"] == true),
        "{v}"
    );
    let written = wait_until("cat to write the file", Duration::from_secs(10), || async {
        let bytes = std::fs::read(&file).ok()?;
        (bytes.len() >= text.len()).then_some(bytes)
    })
    .await;
    assert_eq!(String::from_utf8_lossy(&written), text);
}

#[tokio::test(flavor = "multi_thread")]
async fn key_chords_reach_the_focused_window() {
    let d = Daemon::start().await;
    let sid = d.create_session("keys").await;
    observe(&d, &sid).await;
    let file = d.home.path().join("keys.txt");
    start_cat_terminal(&d, &sid, file.to_str().unwrap()).await;
    // ctrl+u erases the line typed so far; BackSpace erases one character;
    // shift+a types a capital; enter ends the line; ctrl+d ends cat.
    let (status, v) = act(
        &d,
        &sid,
        json!({"actions": [
        {"type": "type", "text": "discard me"},
        {"type": "key", "key": "ctrl+u"},
        {"type": "type", "text": "keepx"},
        {"type": "key", "key": "backspace"},
        {"type": "key", "key": "shift+a"},
        {"type": "key", "key": "enter"},
        {"type": "key", "key": "ctrl+d"}
    ], "observe": false}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let written = wait_until("cat to write the file", Duration::from_secs(10), || async {
        let text = std::fs::read_to_string(&file).ok()?;
        text.ends_with('\n').then_some(text)
    })
    .await;
    assert_eq!(written, "keepA\n");

    let (_, v) = act(
        &d,
        &sid,
        json!({"actions": [{"type": "key", "key": "ctrl+hyperspace"}], "observe": false}),
    )
    .await;
    assert_eq!(v["outcomes"][0]["ok"], false);
    assert!(
        v["outcomes"][0]["error"]
            .as_str()
            .unwrap()
            .contains("hyperspace"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_action_stops_the_batch_and_off_screen_points_fail() {
    let d = Daemon::start().await;
    let sid = d.create_session("batch").await;
    let (status, v) = act(
        &d,
        &sid,
        json!({"actions": [
        {"type": "move", "x": 10, "y": 10},
        {"type": "click", "x": 1280, "y": 5},
        {"type": "move", "x": 20, "y": 20}
    ], "settle_ms": 0}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{}", brief(&v));
    assert_eq!(v["requested"], 3);
    let outcomes = v["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "actions after a failure do not run: {v}");
    assert_eq!(outcomes[0]["ok"], true);
    assert_eq!(outcomes[1]["ok"], false);
    assert!(
        outcomes[1]["error"].as_str().unwrap().contains("1280x800"),
        "{v}"
    );
    assert_eq!(v["observation"]["cursor"], json!({"x": 10, "y": 10}));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fourth_identical_batch_that_changes_nothing_is_refused() {
    let d = Daemon::start().await;
    let sid = d.create_session("repeat").await;
    wait_until("the screen to settle", Duration::from_secs(10), || async {
        (observe(&d, &sid).await["unchanged"] == true).then_some(())
    })
    .await;
    // Moving to the same point and pressing Shift change nothing on the
    // screen. Fluxbox may still redraw its toolbar now and then while a batch
    // runs, which resets the count, so send the batch until it is refused:
    // never before the fourth, and within ten.
    let batch = json!({"actions": [{"type": "move", "x": 600, "y": 400}, {"type": "key", "key": "shift"}], "settle_ms": 50});
    let mut accepted = Vec::new();
    let refusal = loop {
        let (status, v) = act(&d, &sid, batch.clone()).await;
        if status == StatusCode::CONFLICT {
            break v;
        }
        assert_eq!(status, StatusCode::OK, "{}", brief(&v));
        assert_eq!(v["outcomes"][1]["ok"], true);
        accepted.push(v);
        assert!(
            accepted.len() <= 10,
            "never refused: {}",
            brief(&accepted[9])
        );
    };
    assert!(
        accepted.len() >= 3,
        "refused after only {} batches",
        accepted.len()
    );
    assert_eq!(refusal["code"], "not_reacting");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("not reacting"),
        "{refusal}"
    );
    // Another batch is fine.
    let (status, _) = act(
        &d,
        &sid,
        json!({"actions": [{"type": "move", "x": 5, "y": 5}], "observe": false}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_batches_of_only_waits_are_never_refused() {
    let d = Daemon::start().await;
    let sid = d.create_session("waits").await;
    wait_until("the screen to settle", Duration::from_secs(10), || async {
        (observe(&d, &sid).await["unchanged"] == true).then_some(())
    })
    .await;
    // An agent waiting for a slow job sends the same pause again and again
    // on a still screen; the rule against input that does nothing must not
    // refuse it, at the fourth or any later batch.
    let batch = json!({"actions": [{"type": "wait", "ms": 20}], "settle_ms": 50});
    for n in 1..=6 {
        let (status, v) = act(&d, &sid, batch.clone()).await;
        assert_eq!(status, StatusCode::OK, "wait batch {n}: {}", brief(&v));
        assert_eq!(
            v["outcomes"][0]["ok"],
            true,
            "wait batch {n}: {}",
            brief(&v)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_screens_then_a_clear_error_and_numbers_are_reused() {
    let d = Daemon::start().await;
    let mut ids = Vec::new();
    for i in 0..17 {
        ids.push(d.create_session(&format!("screen {i}")).await);
    }
    let opened = futures::future::join_all(ids[..16].iter().map(|sid| {
        let d = &d;
        async move {
            d.post(&format!("/v1/sessions/{sid}/observe"), json!({}))
                .await
        }
    }))
    .await;
    for (status, v) in &opened {
        assert_eq!(*status, StatusCode::OK, "{v}");
    }
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    let mut numbers: Vec<u64> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["screen"].as_u64())
        .collect();
    numbers.sort();
    assert_eq!(numbers, (1..=16).collect::<Vec<u64>>());

    let (status, v) = d
        .post(&format!("/v1/sessions/{}/observe", ids[16]), json!({}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{v}");
    assert!(v["message"].as_str().unwrap().contains("16 screens"), "{v}");

    let freed = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["screen"] == 5)
        .unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, v) = d
        .call("DELETE", &format!("/v1/sessions/{freed}"), None)
        .await;
    assert_eq!((status, v["screen"].clone()), (StatusCode::OK, json!(5)));
    let lock = format!("/tmp/.X{}-lock", d.display_base + 5);
    assert!(
        !std::path::Path::new(&lock).exists(),
        "Xvnc of screen 5 is gone"
    );
    observe(&d, &ids[16]).await;
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    let last = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == ids[16].as_str())
        .unwrap()
        .clone();
    assert_eq!(last["screen"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_xvnc_is_reported_and_sigterm_closes_every_screen() {
    let mut d = Daemon::start().await;
    let a = d.create_session("dies").await;
    let b = d.create_session("stays").await;
    observe(&d, &a).await;
    observe(&d, &b).await;
    let base = d.display_base;
    let lock = |n: u32| format!("/tmp/.X{}-lock", base + n);
    let pid: i32 = std::fs::read_to_string(lock(1))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: killing the Xvnc this test's daemon started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let err = wait_until(
        "the dead screen to be noticed",
        Duration::from_secs(10),
        || async {
            let (status, v) = d
                .post(&format!("/v1/sessions/{a}/observe"), json!({}))
                .await;
            (status == StatusCode::SERVICE_UNAVAILABLE).then_some(v)
        },
    )
    .await;
    assert!(
        err["message"].as_str().unwrap().contains("stopped working"),
        "{err}"
    );

    let status = d.stop().expect("computerd exits");
    assert!(status.success(), "{status}");
    assert!(
        !std::path::Path::new(&lock(2)).exists(),
        "screen 2's Xvnc stopped with computerd"
    );
}
