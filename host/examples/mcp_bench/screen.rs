//! The screen's rows: settling after an act, changed frames at 1280x800
//! and 3840x2160, and text views beside their screenshots.

use crate::{call_tool, connect, median, Client};
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use std::time::Instant;

/// Median time of `computer_act` for a click that changes nothing, a click
/// that opens a menu and a key that reloads a page, and of `open_path` of
/// that page, each with `fixed` 300 ms, `fixed` 2000 ms and `quiet`.
pub async fn settle_rows<F, Fut>(call: &F) -> Vec<(&'static str, f64, f64, f64)>
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let started = call("start_computer", json!({"title": "bench settle"})).await;
    let sid = started["session_id"].as_str().expect("id").to_string();
    call("computer_observe", json!({"session_id": sid})).await;
    let modes = [
        json!({"settle": "fixed", "settle_ms": 300}),
        json!({"settle": "fixed", "settle_ms": 2000}),
        json!({"settle": "quiet"}),
    ];
    let mut rows = Vec::new();
    let cases: [(&'static str, Value, Option<Value>); 2] = [
        (
            "click that changes nothing",
            json!([{"type": "click", "x": 900, "y": 500}]),
            None,
        ),
        (
            "right click that opens the desktop menu",
            json!([{"type": "click", "x": 600, "y": 400, "button": "right"}]),
            Some(json!([{"type": "key", "key": "esc"}, {"type": "click", "x": 900, "y": 500}])),
        ),
    ];
    for (name, actions, undo) in cases {
        let mut medians = Vec::new();
        for mode in &modes {
            let mut times = Vec::new();
            for i in 0..5 {
                // Another spot each time: identical unchanged batches are refused.
                let mut batch = actions.clone();
                batch[0]["x"] = json!(batch[0]["x"].as_i64().unwrap() + i * 7);
                let mut args = json!({"session_id": sid, "actions": batch});
                for (k, v) in mode.as_object().unwrap() {
                    args[k] = v.clone();
                }
                let t = Instant::now();
                call("computer_act", args).await;
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                if let Some(undo) = &undo {
                    call(
                        "computer_act",
                        json!({"session_id": sid, "actions": undo, "observe": false}),
                    )
                    .await;
                }
            }
            medians.push(median(times));
        }
        rows.push((name, medians[0], medians[1], medians[2]));
    }
    // A page load: open it once, then reload it with F5 and wait.
    call("write_file", json!({"session_id": sid, "path": "bench/settle.html",
        "content": "<!doctype html><title>settle</title><script>let n=0;const t=setInterval(()=>{document.title='tick '+(++n); if(n>10)clearInterval(t)},50)</script>"})).await;
    call(
        "open_path",
        json!({"session_id": sid, "target": "~/bench/settle.html"}),
    )
    .await;
    let mut medians = Vec::new();
    for mode in &modes {
        let mut times = Vec::new();
        for i in 0..5u32 {
            // F5 and Ctrl+R take turns: a reload that ends where the last
            // one did leaves the screen unchanged, and the 4th identical
            // batch of those would be refused.
            let key = if i.is_multiple_of(2) { "f5" } else { "ctrl+r" };
            let mut args = json!({"session_id": sid, "actions": [{"type": "key", "key": key}]});
            for (k, v) in mode.as_object().unwrap() {
                args[k] = v.clone();
            }
            let t = Instant::now();
            call("computer_act", args).await;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        medians.push(median(times));
    }
    rows.push((
        "reload of a page that animates for 0.5 s",
        medians[0],
        medians[1],
        medians[2],
    ));
    // open_path itself, the same page: it waits for the load, then settles.
    let mut medians = Vec::new();
    for mode in &modes {
        let mut times = Vec::new();
        for _ in 0..5 {
            let mut args = json!({"session_id": sid, "target": "~/bench/settle.html"});
            for (k, v) in mode.as_object().unwrap() {
                args[k] = v.clone();
            }
            let t = Instant::now();
            call("open_path", args).await;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        medians.push(median(times));
    }
    rows.push((
        "open_path of a page that animates for 0.5 s",
        medians[0],
        medians[1],
        medians[2],
    ));
    call("end_session", json!({"session_id": sid})).await;
    rows
}

pub struct FrameFigures {
    pub rows: Vec<(&'static str, String, u64, f64)>,
    pub observe_4k_ms: f64,
}

/// Frame bytes and estimated tokens with the default bounds against an
/// unbounded PNG, at 1280x800 and (through a second host with a 4K
/// screen setting) at 3840x2160.
pub async fn frame_rows<F, Fut>(host: &std::path::Path, call: &F) -> FrameFigures
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let measure = |o: &Value| {
        let (w, h) = (
            o["frame_width"].as_u64().unwrap(),
            o["frame_height"].as_u64().unwrap(),
        );
        (
            format!("{w}x{h}"),
            o["bytes"].as_u64().unwrap(),
            (w * h) as f64 / 750.0,
        )
    };
    let mut rows = Vec::new();
    let started = call("start_computer", json!({"title": "bench frames"})).await;
    let sid = started["session_id"].as_str().expect("id").to_string();
    call("shell", json!({"session_id": sid, "command": "true"})).await;
    let default = call("computer_observe", json!({"session_id": sid})).await;
    let (size, bytes, tokens) = measure(&default);
    rows.push(("1280x800, defaults", size, bytes, tokens));
    let full = call(
        "computer_observe",
        json!({"session_id": sid, "max_side": 7680}),
    )
    .await;
    let (size, bytes, tokens) = measure(&full);
    rows.push(("1280x800, unbounded PNG", size, bytes, tokens));
    call("end_session", json!({"session_id": sid})).await;

    let big = connect(host, &[("COMPUTER_USE_SCREEN_SIZE", "3840x2160")]).await;
    let call4k = |tool: &'static str, args: Value| call_tool(&big, tool, args);
    let started = call4k("start_computer", json!({"title": "bench 4k"})).await;
    let sid = started["session_id"].as_str().expect("id").to_string();
    call4k("computer_observe", json!({"session_id": sid})).await;
    // The first screen's ticker pauses (its terminal stopped, its loop
    // then blocks on the full terminal): the 4K screen is measured beside
    // its own ticking terminal only, not beside a second one taking the
    // other core. It goes on once the 4K rows are done.
    call4k(
        "shell",
        json!({"session_id": sid, "command": "pkill -STOP -f '[x]term -geometry 160x50' || true"}),
    )
    .await;
    call4k("shell", json!({"session_id": sid, "command": "setsid nohup xterm -geometry 160x50+0+0 -e 'while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done' >/dev/null 2>&1 &"})).await;
    call4k(
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "wait", "ms": 1000}], "observe": false}),
    )
    .await;
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..30 {
        let t = Instant::now();
        last = call4k("computer_observe", json!({"session_id": sid})).await;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let (size, bytes, tokens) = measure(&last);
    rows.push(("3840x2160, defaults", size, bytes, tokens));
    let full = call4k(
        "computer_observe",
        json!({"session_id": sid, "max_side": 7680}),
    )
    .await;
    let (size, bytes, tokens) = measure(&full);
    rows.push((
        "3840x2160, unbounded PNG (kept under 1 MB)",
        size,
        bytes,
        tokens,
    ));
    call4k(
        "shell",
        json!({"session_id": sid, "command": "pkill -CONT -f '[x]term -geometry 160x50' || true"}),
    )
    .await;
    call4k("end_session", json!({"session_id": sid})).await;
    big.cancel().await.ok();
    FrameFigures {
        rows,
        observe_4k_ms: median(times),
    }
}

/// One scene's text view beside its screenshot.
pub struct TextViewRow {
    pub name: &'static str,
    pub median_ms: f64,
    pub chars: usize,
    pub frame_tokens: f64,
    pub frame_bytes: u64,
}

/// Text views of a page in the browser, a LibreOffice Writer window and a
/// GTK dialog, each on a screen of its own: latency (the tree is read
/// every time, also when the answer is "unchanged"), size of the first
/// answer's text, and the same screen's PNG frame.
pub async fn textview_rows<F, Fut>(client: &Client, call: &F) -> Vec<TextViewRow>
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let page: String = std::iter::once("<!doctype html><title>Order form</title><h1>Order</h1>".to_string())
        .chain((1..=12).map(|i| format!("<p>Line {i} of the order, with some text to read.</p><label>Item {i} <input value=\"{i}\"></label><button>Remove {i}</button>")))
        .chain(std::iter::once("<a href=\"#terms\">Terms</a><button>Submit order</button>".to_string()))
        .collect();
    let scenes: [(&'static str, &'static str, Value); 3] = [
        (
            "page in Chromium (12 rows of a form)",
            "Chromium",
            json!({"tool": "open_path", "target": "/home/computer/order.html"}),
        ),
        (
            "LibreOffice Writer, empty document",
            "Writer",
            json!({"tool": "launch_app", "app": "libreoffice-writer"}),
        ),
        (
            "GTK dialog (zenity --entry)",
            "Bench dialog",
            json!({"tool": "shell", "command": "setsid nohup zenity --entry --title='Bench dialog' --text='Your name' >/dev/null 2>&1 </dev/null &"}),
        ),
    ];
    let mut rows = Vec::new();
    for (name, window, how) in scenes {
        let started = call("start_computer", json!({"title": name})).await;
        let sid = started["session_id"].as_str().expect("id").to_string();
        call("computer_observe", json!({"session_id": sid})).await;
        call(
            "write_file",
            json!({"session_id": sid, "path": "/home/computer/order.html", "content": page}),
        )
        .await;
        match how["tool"].as_str() {
            Some("open_path") => {
                call(
                    "open_path",
                    json!({"session_id": sid, "target": how["target"]}),
                )
                .await
            }
            Some("launch_app") => {
                call("launch_app", json!({"session_id": sid, "app": how["app"]})).await
            }
            _ => {
                call(
                    "shell",
                    json!({"session_id": sid, "command": how["command"]}),
                )
                .await
            }
        };
        // Until the tree is there (apps load their trees after the window).
        let args = json!({"session_id": sid, "view": "text", "window": window});
        let started = Instant::now();
        let first = loop {
            let r = client
                .call_tool(
                    CallToolRequestParams::new("computer_observe")
                        .with_arguments(args.as_object().cloned().unwrap_or_default()),
                )
                .await
                .expect("call");
            let nodes = r
                .structured_content
                .as_ref()
                .and_then(|s| s["text_view"]["total_nodes"].as_u64())
                .unwrap_or(0);
            if r.is_error != Some(true) && nodes > 3 {
                break r;
            }
            assert!(
                started.elapsed().as_secs() < 90,
                "{name}: no tree: {:?}",
                r.content
            );
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        };
        let chars: usize = first
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.chars().count()))
            .sum();
        let mut times = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            call("computer_observe", args.clone()).await;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let frame = call(
            "computer_observe",
            json!({"session_id": sid, "max_side": 1279}),
        )
        .await;
        let (w, h) = (
            frame["frame_width"].as_f64().unwrap_or(0.0),
            frame["frame_height"].as_f64().unwrap_or(0.0),
        );
        rows.push(TextViewRow {
            name,
            median_ms: median(times),
            chars,
            frame_tokens: w * h / 750.0,
            frame_bytes: frame["bytes"].as_u64().unwrap_or(0),
        });
        call("end_session", json!({"session_id": sid})).await;
    }
    rows
}
