//! `computer_observe` and `shell true` over Streamable HTTP beside stdio, in
//! one run against one computer, and the HTTP host's memory with 4 clients
//! connected. Run with:
//!
//! ```sh
//! cargo build --release -p computer-use-mcp --bin computer-use-mcp --example http_bench
//! "${CARGO_TARGET_DIR:-target}/release/examples/http_bench"
//! ```
//!
//! Uses its own computer (`cu-bench-http`, port base 23950) and removes it
//! at the end.

// Each bench uses part of the shared file.
#[allow(dead_code)]
#[path = "support/bench.rs"]
mod bench;

use bench::median;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Instant;
use tokio::io::AsyncBufReadExt;

const NAME: &str = "cu-bench-http";
const TOKEN: &str = "bench-token-0123456789abcdef0123456789";
const ROUNDS: usize = 30;

type Client = RunningService<RoleClient, ()>;

fn host_command(host: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(host);
    cmd.env("COMPUTER_USE_NAME", NAME)
        .env("COMPUTER_USE_PORT_BASE", "23950")
        .env("COMPUTER_USE_OPEN", "none")
        .env("COMPUTER_USE_HTTP_TOKEN", TOKEN);
    cmd
}

async fn call(client: &Client, tool: &str, args: Value) -> Value {
    let r = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tool call");
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    r.structured_content.unwrap_or(Value::Null)
}

async fn session(client: &Client, title: &str) -> String {
    let s = call(client, "start_computer", json!({"title": title})).await;
    s["session_id"].as_str().expect("id").to_string()
}

/// (observe median, shell median) in ms.
async fn medians(client: &Client, sid: &str) -> (f64, f64) {
    call(client, "computer_observe", json!({"session_id": sid})).await;
    let (mut observe, mut shell) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        call(client, "computer_observe", json!({"session_id": sid})).await;
        observe.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        call(
            client,
            "shell",
            json!({"session_id": sid, "command": "true"}),
        )
        .await;
        shell.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    (median(observe), median(shell))
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("/proc status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

async fn http_client(url: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(TOKEN);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP over HTTP")
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
    let _ = Command::new("docker")
        .args(["rm", "-f", "-v", NAME, &format!("{NAME}-network")])
        .output();

    let (transport, _) = TokioChildProcess::builder(host_command(&host))
        .stderr(Stdio::null())
        .spawn()
        .expect("stdio host");
    let stdio_pid = transport.id().expect("pid");
    let stdio = ().serve(transport).await.expect("MCP over stdio");
    let stdio_sid = session(&stdio, "bench stdio").await;

    let mut child = host_command(&host)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("HTTP host");
    let http_pid = child.id().expect("pid");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .expect("stderr")
            .expect("host listens");
        if let Some(url) = line.strip_prefix("computer-use-mcp: MCP over HTTP at ") {
            break url.to_string();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let http = http_client(&url).await;
    let http_sid = session(&http, "bench http").await;

    let (so, ss) = medians(&stdio, &stdio_sid).await;
    let (ho, hs) = medians(&http, &http_sid).await;
    println!("{ROUNDS} rounds each, same computer, same run");
    println!("computer_observe median: stdio {so:.1} ms, HTTP {ho:.1} ms");
    println!("shell `true` median:     stdio {ss:.1} ms, HTTP {hs:.1} ms");
    println!("host RSS, stdio with 1 client: {} KiB", rss_kib(stdio_pid));
    println!("HTTP host RSS with 1 client: {} KiB", rss_kib(http_pid));

    let mut more = Vec::new();
    for i in 0..3 {
        let c = http_client(&url).await;
        let sid = session(&c, &format!("bench http {i}")).await;
        call(&c, "computer_observe", json!({"session_id": sid})).await;
        more.push(c);
    }
    println!(
        "HTTP host RSS with 4 clients, each with a session and one observe: {} KiB",
        rss_kib(http_pid)
    );

    for c in more {
        c.cancel().await.ok();
    }
    http.cancel().await.ok();
    stdio.cancel().await.ok();
    drop(child);
    let _ = Command::new("docker")
        .args(["rm", "-f", "-v", NAME, &format!("{NAME}-network")])
        .output();
    let _ = Command::new("docker")
        .args(["volume", "rm", &format!("{NAME}-home")])
        .output();
}
