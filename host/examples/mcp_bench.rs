//! End-to-end benchmark through MCP: the real host binary over stdio with
//! rmcp's client, against the real container, beside the common baseline of
//! `docker exec` in the same run. Run with `bash scripts/bench-mcp.sh`.
//!
//! Uses its own computer (`COMPUTER_USE_NAME=cu-bench`, port base 23900) and
//! removes it at the end.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Instant;

const NAME: &str = "cu-bench";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker")
        .args(args)
        .output()
        .expect("docker runs")
}

#[tokio::main]
async fn main() {
    let exe = std::env::current_exe().expect("own path");
    let host = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("computer-use-mcp");
    assert!(
        host.is_file(),
        "build it first: cargo build --release -p computer-use-mcp"
    );
    let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
    let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
    let client = connect(&host, &[]).await;
    let call = |tool: &'static str, args: Value| call_tool(&client, tool, args);
    let t = Instant::now();
    let started = call("start_computer", json!({"title": "bench"})).await;
    let start_ms = t.elapsed().as_secs_f64() * 1000.0;
    let sid = started["session_id"].as_str().expect("id").to_string();
    let t = Instant::now();
    call("computer_observe", json!({"session_id": sid})).await;
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    // A ticking terminal makes every frame differ, so each observe encodes.
    call("shell", json!({"session_id": sid, "command": "setsid nohup xterm -geometry 160x50+0+0 -e 'while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done' >/dev/null 2>&1 &"})).await;
    call(
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "wait", "ms": 1000}], "observe": false}),
    )
    .await;

    // `MCP_BENCH_ONLY=recording` prints only the recording table.
    if std::env::var("MCP_BENCH_ONLY").as_deref() == Ok("recording") {
        print_recording(recording_rows(&call, &sid).await);
        let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
        let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
        return;
    }
    // `MCP_BENCH_ONLY=browser` prints only the open_path rows, without the
    // minute of CPU sampling around them: for comparing two images quickly.
    if std::env::var("MCP_BENCH_ONLY").as_deref() == Ok("browser") {
        let browser = browser_rows(&call, &sid).await;
        println!("| through MCP | median ms | baseline | median ms | ratio |");
        println!("|---|---:|---|---:|---:|");
        for (name, ours, base_name, base) in browser.rows {
            println!(
                "| {name} | {ours:.2} | {base_name} | {base:.2} | {:.2} |",
                ours / base
            );
        }
        let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
        let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
        return;
    }
    let mut observe = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        call("computer_observe", json!({"session_id": sid})).await;
        observe.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    // `MCP_BENCH_ONLY=frames` prints only the changed frames' medians (at
    // 1280x800 and 3840x2160) beside a `shell true` call: for comparing
    // two images' frame paths quickly.
    if std::env::var("MCP_BENCH_ONLY").as_deref() == Ok("frames") {
        let mut shell = Vec::new();
        for _ in 0..40 {
            let t = Instant::now();
            call("shell", json!({"session_id": sid, "command": "true"})).await;
            shell.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let frames = frame_rows(&host, &call).await;
        println!("| through MCP (median ms) | ms |");
        println!("|---|---:|");
        println!(
            "| computer_observe (changed 1280x800 frame) | {:.2} |",
            median(observe)
        );
        println!(
            "| computer_observe (changed 3840x2160 frame, default bounds) | {:.2} |",
            frames.observe_4k_ms
        );
        println!("| shell `true` | {:.2} |", median(shell));
        let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
        let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
        return;
    }
    let mut import = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let out = docker(&[
            "exec",
            "-e",
            "DISPLAY=:1",
            NAME,
            "sh",
            "-c",
            "import -window root png:- | base64 -w0 | wc -c",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        import.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut act = Vec::new();
    for row in 0..20 {
        // Another row each time: identical batches that change nothing are
        // refused after the third.
        let moves: Vec<Value> = (0..24)
            .map(|i| json!({"type": "move", "x": 100 + i * 10, "y": 300 + row}))
            .collect();
        let t = Instant::now();
        call(
            "computer_act",
            json!({"session_id": sid, "actions": moves, "observe": false, "settle_ms": 0}),
        )
        .await;
        act.push(t.elapsed().as_secs_f64() * 1000.0 / 24.0);
    }
    let mut shell = Vec::new();
    for _ in 0..40 {
        let t = Instant::now();
        call("shell", json!({"session_id": sid, "command": "true"})).await;
        shell.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut exec = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let out = docker(&["exec", NAME, "true"]);
        assert!(out.status.success());
        exec.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let rows = [
        (
            "computer_observe (changed 1280x800 frame)",
            median(observe),
            "docker exec import -window root, base64",
            median(import),
        ),
        (
            "computer_act, per move in a batch of 24",
            median(act),
            "-",
            f64::NAN,
        ),
        (
            "shell `true`",
            median(shell.clone()),
            "docker exec true",
            median(exec),
        ),
    ];
    let browser = browser_rows(&call, &sid).await;
    let devtools = devtools_rows(&call).await;
    let settle = settle_rows(&call).await;
    let frames = frame_rows(&host, &call).await;
    let text_views = textview_rows(&client, &call).await;
    let recording = recording_rows(&call, &sid).await;
    println!();
    println!("| through MCP | median ms | baseline | median ms | ratio |");
    println!("|---|---:|---|---:|---:|");
    for (name, ours, base_name, base) in rows {
        println!(
            "| {name} | {ours:.2} | {base_name} | {base:.2} | {:.2} |",
            ours / base
        );
    }
    for (name, ours, base_name, base) in browser.rows {
        println!(
            "| {name} | {ours:.2} | {base_name} | {base:.2} | {:.2} |",
            ours / base
        );
    }
    for (name, ours, base_name, base) in devtools.rows {
        println!(
            "| {name} | {ours:.2} | {base_name} | {base:.2} | {:.2} |",
            ours / base
        );
    }
    println!();
    println!("| settling (median ms of the whole call) | fixed 300 | fixed 2000 | quiet |");
    println!("|---|---:|---:|---:|");
    for (name, fixed_300, fixed_2000, quiet) in settle {
        println!("| {name} | {fixed_300:.0} | {fixed_2000:.0} | {quiet:.0} |");
    }
    println!();
    println!("| frame | size | bytes | est. tokens (w*h/750) |");
    println!("|---|---|---:|---:|");
    for (name, size, bytes, tokens) in &frames.rows {
        println!("| {name} | {size} | {bytes} | {tokens:.0} |");
    }
    println!();
    println!("| text view (computer_observe view text) | median ms | characters | est. tokens (chars/4) | PNG frame est. tokens (w*h/750) | PNG bytes |");
    println!("|---|---:|---:|---:|---:|---:|");
    for row in &text_views {
        println!(
            "| {} | {:.0} | {} | {:.0} | {:.0} | {} |",
            row.name,
            row.median_ms,
            row.chars,
            row.chars as f64 / 4.0,
            row.frame_tokens,
            row.frame_bytes
        );
    }
    println!(
        "computer_observe of a changed 3840x2160 screen with the default bounds (capture, scale, encode, through MCP): {:.1} ms median",
        frames.observe_4k_ms
    );
    println!();
    println!(
        "DevTools bridge: {:.0} MB RSS (mcpc's bridge and chrome-devtools-mcp)",
        devtools.bridge_rss_mb
    );
    println!(
        "cookie sync: computerd used {:.2}% of one core over 60 s with 4 browsers running, {:.2}% over 20 s with none",
        browser.sync_cpu_with_four, browser.idle_cpu
    );
    println!(
        "one Chromium on a blank page: {:.0} MB PSS (all its processes)",
        browser.chromium_rss_mb
    );
    println!();
    println!("start_computer (create the container until healthy): {start_ms:.0} ms; first observe (screen open): {open_ms:.0} ms");
    print_recording(recording);
    client.cancel().await.ok();
    let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
    let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
}

/// The browser's figures: rows beside baselines, cookie-sync CPU, RSS.
struct BrowserFigures {
    rows: Vec<(&'static str, f64, &'static str, f64)>,
    sync_cpu_with_four: f64,
    idle_cpu: f64,
    chromium_rss_mb: f64,
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

async fn browser_rows<F, Fut>(call: &F, sid: &str) -> BrowserFigures
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

struct DevToolsFigures {
    rows: Vec<(&'static str, f64, &'static str, f64)>,
    bridge_rss_mb: f64,
}

/// `start_chrome_devtools` with and without a running browser, one
/// `list_pages` through `shell`, and the bridge's memory.
async fn devtools_rows<F, Fut>(call: &F) -> DevToolsFigures
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

/// Median time of `computer_act` for a click that changes nothing, a click
/// that opens a menu and a key that reloads a page, and of `open_path` of
/// that page, each with `fixed` 300 ms, `fixed` 2000 ms and `quiet`.
async fn settle_rows<F, Fut>(call: &F) -> Vec<(&'static str, f64, f64, f64)>
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

struct FrameFigures {
    rows: Vec<(&'static str, String, u64, f64)>,
    observe_4k_ms: f64,
}

/// Frame bytes and estimated tokens with the default bounds against an
/// unbounded PNG, at 1280x800 and (through a second host with a 4K
/// screen setting) at 3840x2160.
async fn frame_rows<F, Fut>(host: &std::path::Path, call: &F) -> FrameFigures
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

/// The image to bench: `COMPUTER_USE_IMAGE`, or the dev build.
fn image() -> String {
    std::env::var("COMPUTER_USE_IMAGE").unwrap_or_else(|_| "computer-use-mcp:dev".into())
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A host process on the bench's computer, with `env` on top.
/// One scene's text view beside its screenshot.
struct TextViewRow {
    name: &'static str,
    median_ms: f64,
    chars: usize,
    frame_tokens: f64,
    frame_bytes: u64,
}

/// Text views of a page in the browser, a LibreOffice Writer window and a
/// GTK dialog, each on a screen of its own: latency (the tree is read
/// every time, also when the answer is "unchanged"), size of the first
/// answer's text, and the same screen's PNG frame.
async fn textview_rows<F, Fut>(client: &Client, call: &F) -> Vec<TextViewRow>
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

async fn connect(host: &std::path::Path, env: &[(&str, &str)]) -> Client {
    let mut cmd = tokio::process::Command::new(host);
    cmd.env("COMPUTER_USE_NAME", NAME)
        .env("COMPUTER_USE_PORT_BASE", "23900")
        .env("COMPUTER_USE_OPEN", "none")
        .env("COMPUTER_USE_IMAGE", image())
        .envs(env.iter().copied());
    ().serve(TokioChildProcess::new(cmd).expect("host starts"))
        .await
        .expect("handshake")
}

/// Calls a tool, asserts success, returns its structured content.
/// What recording costs: observe and act with and without a recording
/// (alternating rounds on the same ticking screen, so both see changed
/// frames), the bytes per step of a desktop task, and stopping 200 steps.
struct RecordingFigures {
    observe: (f64, f64),
    act: (f64, f64),
    bytes_per_step: f64,
    task_steps: u64,
    stop_200_ms: f64,
    stop_200_bytes: f64,
}

async fn recording_rows<F, Fut>(call: &F, sid: &str) -> RecordingFigures
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let out = std::env::temp_dir().join(format!("cu-bench-evidence-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("bench folder");
    let host_path = |name: &str| out.join(name).display().to_string();
    let (mut observe_plain, mut observe_recorded) = (Vec::new(), Vec::new());
    let (mut act_plain, mut act_recorded) = (Vec::new(), Vec::new());
    let timed = |tool: &'static str, args: Value| async move {
        let t = Instant::now();
        call(tool, args).await;
        t.elapsed().as_secs_f64() * 1000.0
    };
    let click = |i: u64| json!({"session_id": sid, "actions": [{"type": "move", "x": 200 + i, "y": 700}], "settle_ms": 0});
    for round in 0..10u64 {
        for i in 0..3 {
            observe_plain.push(timed("computer_observe", json!({"session_id": sid})).await);
            act_plain.push(timed("computer_act", click(round * 8 + i)).await);
        }
        call(
            "start_recording",
            json!({"session_id": sid, "task": "bench overhead"}),
        )
        .await;
        for i in 0..3 {
            observe_recorded.push(timed("computer_observe", json!({"session_id": sid})).await);
            act_recorded.push(timed("computer_act", click(round * 8 + 4 + i)).await);
        }
        call(
            "stop_recording",
            json!({"session_id": sid, "host_path": host_path(&format!("overhead-{round}"))}),
        )
        .await;
    }

    // A desktop task on a fresh session: a terminal and a page.
    let task = call("start_computer", json!({"title": "bench evidence"})).await;
    let task = task["session_id"].as_str().expect("id").to_string();
    call(
        "start_recording",
        json!({"session_id": task, "task": "bench task"}),
    )
    .await;
    call("launch_app", json!({"session_id": task, "app": "terminal"})).await;
    for i in 0..4 {
        call("computer_act", json!({"session_id": task, "actions": [{"type": "type", "text": format!("ls -la /usr/share | head -{}\n", 10 + i)}]})).await;
        call("shell", json!({"session_id": task, "command": "ls ~"})).await;
    }
    call("write_file", json!({"session_id": task, "path": "~/bench.html", "content": "<title>Bench</title><h1>A page</h1><p>Some text to read.</p>"})).await;
    call(
        "open_path",
        json!({"session_id": task, "target": "~/bench.html"}),
    )
    .await;
    for i in 0..4 {
        call("computer_act", json!({"session_id": task, "actions": [{"type": "click", "x": 300 + i * 40, "y": 300}]})).await;
        call("computer_observe", json!({"session_id": task})).await;
    }
    call(
        "recording_note",
        json!({"session_id": task, "text": "done"}),
    )
    .await;
    let stopped = call(
        "stop_recording",
        json!({"session_id": task, "host_path": host_path("task")}),
    )
    .await;
    let task_steps = stopped["steps"].as_u64().expect("steps");
    let bytes_per_step = stopped["bytes"].as_f64().expect("bytes") / task_steps as f64;

    // 200 steps: shell calls and observes of the ticking screen.
    call(
        "start_recording",
        json!({"session_id": sid, "task": "bench 200"}),
    )
    .await;
    for i in 0..200 {
        if i % 4 == 0 {
            call("computer_observe", json!({"session_id": sid})).await;
        } else {
            call("shell", json!({"session_id": sid, "command": "echo step"})).await;
        }
    }
    let t = Instant::now();
    let stopped = call(
        "stop_recording",
        json!({"session_id": sid, "host_path": host_path("two-hundred")}),
    )
    .await;
    let stop_200_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(stopped["steps"], 200, "{stopped}");
    let stop_200_bytes = stopped["bytes"].as_f64().expect("bytes");
    call("end_session", json!({"session_id": task})).await;
    let _ = std::fs::remove_dir_all(&out);
    RecordingFigures {
        observe: (median(observe_plain), median(observe_recorded)),
        act: (median(act_plain), median(act_recorded)),
        bytes_per_step,
        task_steps,
        stop_200_ms,
        stop_200_bytes,
    }
}

fn print_recording(r: RecordingFigures) {
    println!();
    println!("| recording (median ms) | not recorded | recorded | added |");
    println!("|---|---:|---:|---:|");
    for (name, (plain, recorded)) in [
        ("computer_observe (changed 1280x800 frame)", r.observe),
        ("computer_act (a move, then a changed frame)", r.act),
    ] {
        println!(
            "| {name} | {plain:.2} | {recorded:.2} | {:+.2} |",
            recorded - plain
        );
    }
    println!(
        "| bytes per step of a desktop task (terminal and a page, {} steps) | | {:.0} KB | |",
        r.task_steps,
        r.bytes_per_step / 1024.0
    );
    println!(
        "| stop_recording of 200 steps, {:.1} MB (build and copy home) | | {:.0} ms | |",
        r.stop_200_bytes / 1048576.0,
        r.stop_200_ms
    );
}

async fn call_tool(client: &Client, tool: &'static str, args: Value) -> Value {
    let r = client
        .call_tool(
            CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("call");
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    r.structured_content.unwrap_or(Value::Null)
}
