//! The browser's rows: open_path beside a page load in Chromium alone, and
//! the DevTools bridge's calls, with what they cost computerd.

use crate::{docker, median, NAME};
use serde_json::{json, Value};
use std::time::Instant;

/// The browser's figures: rows beside baselines, cookie-sync CPU, RSS.
pub struct BrowserFigures {
    pub rows: Vec<(&'static str, f64, &'static str, f64)>,
    pub sync_cpu_with_four: f64,
    pub idle_cpu: f64,
    pub chromium_rss_mb: f64,
}

/// CPU seconds computerd has used so far (user + system).
fn computerd_cpu_seconds() -> f64 {
    let out = docker(&[
        "exec",
        NAME,
        "sh",
        "-c",
        "cut -d' ' -f14,15 /proc/$(pgrep -x computerd)/stat",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let ticks: f64 = text
        .split_whitespace()
        .filter_map(|t| t.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

fn cpu_percent_over(seconds: u64) -> f64 {
    let before = computerd_cpu_seconds();
    std::thread::sleep(std::time::Duration::from_secs(seconds));
    (computerd_cpu_seconds() - before) / seconds as f64 * 100.0
}

pub async fn browser_rows<F, Fut>(call: &F, sid: &str) -> BrowserFigures
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let page = "<!doctype html><title>bench page</title><h1>bench</h1>";
    call(
        "write_file",
        json!({"session_id": sid, "path": "bench/page.html", "content": page}),
    )
    .await;
    let sampling = std::env::var("MCP_BENCH_ONLY").as_deref() != Ok("browser");
    let idle_cpu = if sampling {
        cpu_percent_over(20)
    } else {
        f64::NAN
    };
    // Cold: a new session's screen has no browser yet.
    let mut cold = Vec::new();
    let mut sessions = Vec::new();
    for i in 0..4 {
        let started = call(
            "start_computer",
            json!({"title": format!("bench browser {i}")}),
        )
        .await;
        let s = started["session_id"].as_str().expect("id").to_string();
        call("computer_observe", json!({"session_id": s})).await;
        let t = Instant::now();
        let r = call(
            "open_path",
            json!({"session_id": s, "target": "~/bench/page.html"}),
        )
        .await;
        cold.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r["ready"], true, "{r}");
        sessions.push(s);
    }
    // Warm: the same screen again, its browser running.
    let mut warm = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        call(
            "open_path",
            json!({"session_id": sessions[0], "target": "~/bench/page.html"}),
        )
        .await;
        warm.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    // The baseline of a cold open: a fresh headless Chromium to a screenshot.
    let mut headless = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let out = docker(&[
            "exec", NAME, "sh", "-c",
            "chromium --headless --no-sandbox --disable-dev-shm-usage --user-data-dir=$(mktemp -d) --screenshot=/tmp/bench.png --window-size=1280,800 file:///home/computer/bench/page.html >/dev/null 2>&1",
        ]);
        assert!(out.status.success(), "headless chromium screenshot");
        headless.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let sync_cpu_with_four = if sampling {
        cpu_percent_over(60)
    } else {
        f64::NAN
    };
    for s in sessions {
        call("end_session", json!({"session_id": s})).await;
    }
    // One browser on a blank page: a new session's, started by launch_app.
    let started = call("start_computer", json!({"title": "bench blank"})).await;
    let blank = started["session_id"].as_str().expect("id").to_string();
    call("launch_app", json!({"session_id": blank, "app": "browser"})).await;
    // Chromium leads a process group of its own: its pid is the group id.
    let out = docker(&[
        "exec", NAME, "sh", "-c",
        // PSS, not RSS: Chromium's processes share most of their pages.
        "pid=$(ps -eo pid=,args= | grep -- '--remote-debugging-port=' | grep -v -e '--type=' -e grep | head -1 | awk '{print $1}'); for p in $(ps -eo pid=,pgid= | awk -v g=\"$pid\" '$2 == g {print $1}'); do awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup; done | awk '{s += $1} END {print s}'",
    ]);
    let chromium_rss_mb = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse::<f64>()
        .unwrap_or(f64::NAN)
        / 1024.0;
    call("end_session", json!({"session_id": blank})).await;
    BrowserFigures {
        rows: vec![
            (
                "open_path of a local page, browser not running",
                median(cold),
                "docker exec chromium --headless --screenshot",
                median(headless.clone()),
            ),
            (
                "open_path of a local page, browser running",
                median(warm),
                "docker exec chromium --headless --screenshot",
                median(headless),
            ),
        ],
        sync_cpu_with_four,
        idle_cpu,
        chromium_rss_mb,
    }
}

pub struct DevToolsFigures {
    pub rows: Vec<(&'static str, f64, &'static str, f64)>,
    pub bridge_rss_mb: f64,
}

/// `start_chrome_devtools` with and without a running browser, one
/// `list_pages` through `shell`, and the bridge's memory.
pub async fn devtools_rows<F, Fut>(call: &F) -> DevToolsFigures
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let started = call("start_computer", json!({"title": "bench devtools"})).await;
    let sid = started["session_id"].as_str().expect("id").to_string();
    call("computer_observe", json!({"session_id": sid})).await;
    let t = Instant::now();
    let bridge = call("start_chrome_devtools", json!({"session_id": sid})).await;
    let cold_ms = t.elapsed().as_secs_f64() * 1000.0;
    let name = bridge["bridge"].as_str().expect("bridge").to_string();
    let mut list = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let r = call(
            "shell",
            json!({"session_id": sid, "command": format!("mcpc {name} tools-call list_pages '{{}}'")}),
        )
        .await;
        assert_eq!(r["exit_code"], 0, "{r}");
        list.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let out = docker(&[
        "exec", NAME, "sh", "-c",
        "ps -eo rss=,args= | grep -e '[b]ridge/index.js' -e '^ *[0-9]* chrome-devtools-mcp' | awk '{s += $1} END {print s}'",
    ]);
    let bridge_rss_mb = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse::<f64>()
        .unwrap_or(f64::NAN)
        / 1024.0;
    // The same call without MCP and shell around it.
    let mut direct = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let out = docker(&[
            "exec",
            NAME,
            "mcpc",
            &name,
            "tools-call",
            "list_pages",
            "{}",
        ]);
        assert!(out.status.success(), "docker exec mcpc");
        direct.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut warm = Vec::new();
    for _ in 0..3 {
        call("stop_chrome_devtools", json!({"session_id": sid})).await;
        let t = Instant::now();
        call("start_chrome_devtools", json!({"session_id": sid})).await;
        warm.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    call("end_session", json!({"session_id": sid})).await;
    DevToolsFigures {
        rows: vec![
            (
                "start_chrome_devtools, browser not running",
                cold_ms,
                "-",
                f64::NAN,
            ),
            (
                "start_chrome_devtools, browser running",
                median(warm),
                "-",
                f64::NAN,
            ),
            (
                "mcpc list_pages through shell",
                median(list),
                "docker exec mcpc list_pages",
                median(direct),
            ),
        ],
        bridge_rss_mb,
    }
}
