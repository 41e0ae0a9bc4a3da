//! End-to-end benchmark through MCP: the real host binary over stdio with
//! rmcp's client, against the real container, beside the common baseline of
//! `docker exec` in the same run. Run with `bash scripts/bench-mcp.sh`.
//!
//! Uses its own computer (`COMPUTER_USE_NAME=cu-bench`, port base 23900) and
//! removes it at the end.
//!
//! `main` takes the rows of observe, act and shell itself, then asks each
//! module for its own and prints them all: `browser` (open_path and the
//! DevTools bridge), `screen` (settling, changed frames, text views) and
//! `recording` (what a recording costs).

// Each bench uses part of the shared file.
#[allow(dead_code)]
#[path = "../support/bench.rs"]
mod bench;

use bench::median;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Instant;

mod browser;
mod recording;
mod screen;

use browser::{browser_rows, devtools_rows};
use recording::{print_recording, recording_rows};
use screen::{frame_rows, settle_rows, textview_rows};

const NAME: &str = "cu-bench";

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

/// The image to bench: `COMPUTER_USE_IMAGE`, or the dev build.
fn image() -> String {
    std::env::var("COMPUTER_USE_IMAGE").unwrap_or_else(|_| "computer-use-mcp:dev".into())
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A host process on the bench's computer, with `env` on top.
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
