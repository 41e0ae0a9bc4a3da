//! Soak: the real release host binary over stdio with rmcp's client, 16
//! sessions at once in one computer, each looping computer_observe,
//! computer_act, shell, write_file and read_file for a given time. Prints the
//! calls made and failed, p50/p99 latency per tool, and the memory of the
//! host, computerd and the container at the start and the end, and the
//! container's processes and threads (what its pids limit counts) at the
//! start, the end and their peak.
//!
//! Run with `bash scripts/soak.sh [--seconds N] [--sessions N] [--browsers]`
//! (default 600 seconds, 16 sessions). `--browsers` opens each session's
//! Chromium before the run: the figure the pids limit is set from. Uses its own computer (`COMPUTER_USE_NAME=cu-soak`,
//! port base 24900, loopback only) and removes it at the end. Every call has
//! a deadline, so a hang counts as a failure instead of stalling the run.

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NAME: &str = "cu-soak";
const PORT_BASE: &str = "24900";
/// Longest a single call may take before it counts as failed.
const CALL_DEADLINE: Duration = Duration::from_secs(120);
const TOOLS: [&str; 5] = [
    "computer_observe",
    "computer_act",
    "shell",
    "write_file",
    "read_file",
];

type Client = RunningService<RoleClient, ()>;

struct Options {
    seconds: u64,
    sessions: usize,
    browsers: bool,
}

fn options() -> Options {
    let mut o = Options {
        seconds: 600,
        sessions: 16,
        browsers: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("`{}` needs a whole number after it", args[i]))
        };
        match args[i].as_str() {
            "--seconds" => o.seconds = value(),
            "--sessions" => o.sessions = (value() as usize).clamp(1, 16),
            "--browsers" => {
                o.browsers = true;
                i += 1;
                continue;
            }
            other => panic!(
                "unknown argument `{other}`; use --seconds N, --sessions N (1..16) and --browsers"
            ),
        }
        i += 2;
    }
    o
}

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker")
        .args(args)
        .output()
        .expect("docker runs")
}

fn remove_computer() {
    let _ = docker(&["rm", "-f", "-v", NAME, &format!("{NAME}-network")]);
    let _ = docker(&["volume", "rm", &format!("{NAME}-home")]);
}

/// Resident memory of a process on this machine, from /proc.
fn rss_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "?".into())
}

fn computerd_rss() -> String {
    let out = docker(&[
        "exec",
        NAME,
        "sh",
        "-c",
        "grep VmRSS /proc/$(pgrep -o -x computerd)/status",
    ]);
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .trim_start_matches("VmRSS:")
        .trim()
        .to_string()
}

fn container_memory() -> String {
    let out = docker(&["stats", "--no-stream", "--format", "{{.MemUsage}}", NAME]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Processes and threads in the container, as its pids limit counts them.
fn container_pids() -> u64 {
    let out = docker(&["stats", "--no-stream", "--format", "{{.PIDs}}", NAME]);
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

#[derive(Default)]
struct Tally {
    latencies_ms: BTreeMap<&'static str, Vec<f64>>,
    failed: BTreeMap<&'static str, u64>,
    first_failures: Vec<String>,
}

impl Tally {
    fn record(&mut self, tool: &'static str, took: Duration, failure: Option<String>) {
        self.latencies_ms
            .entry(tool)
            .or_default()
            .push(took.as_secs_f64() * 1000.0);
        if let Some(why) = failure {
            *self.failed.entry(tool).or_default() += 1;
            if self.first_failures.len() < 10 {
                self.first_failures.push(format!("{tool}: {why}"));
            }
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<Value, String> {
    let request = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    match tokio::time::timeout(CALL_DEADLINE, client.call_tool(request)).await {
        Err(_) => Err(format!("no answer within {CALL_DEADLINE:?}")),
        Ok(Err(e)) => Err(format!("protocol error: {e}")),
        Ok(Ok(r)) if r.is_error == Some(true) => Err(format!("{:?}", r.content)),
        Ok(Ok(r)) => Ok(r.structured_content.unwrap_or(Value::Null)),
    }
}

/// One session's loop until `until`.
async fn drive(
    client: Arc<Client>,
    sid: String,
    n: usize,
    until: Instant,
    tally: Arc<Mutex<Tally>>,
) {
    let mut round: u64 = 0;
    while Instant::now() < until {
        round += 1;
        // Another spot each round: the fourth identical batch that changes
        // nothing is refused by design.
        let x = 20 + (round % 1000) as i64;
        let y = 20 + (n as i64) * 10;
        let file = format!("soak/{n}.txt");
        let content = format!("session {n} round {round}\n");
        let steps: [(&'static str, Value); 5] = [
            ("computer_observe", json!({"session_id": sid})),
            (
                "computer_act",
                json!({"session_id": sid, "actions": [{"type": "move", "x": x, "y": y}], "observe": false, "settle_ms": 0}),
            ),
            (
                "shell",
                json!({"session_id": sid, "command": format!("echo {round}")}),
            ),
            (
                "write_file",
                json!({"session_id": sid, "path": file, "content": content}),
            ),
            ("read_file", json!({"session_id": sid, "path": file})),
        ];
        for (tool, args) in steps {
            let started = Instant::now();
            let outcome = call(&client, tool, args).await;
            let failure = match (tool, outcome) {
                (_, Err(e)) => Some(e),
                ("read_file", Ok(v)) if v["text"] != json!(content) => {
                    Some(format!("read back {:?}, wrote {content:?}", v["text"]))
                }
                _ => None,
            };
            tally
                .lock()
                .unwrap()
                .record(tool, started.elapsed(), failure);
        }
    }
}

type Memory = (String, String, String);

/// Prints the tables; returns the number of failed calls.
fn report(
    tally: &Tally,
    o: &Options,
    ran: Duration,
    start: &Memory,
    end: &Memory,
    pids: (u64, u64, u64),
) -> u64 {
    let made: usize = tally.latencies_ms.values().map(Vec::len).sum();
    let failed: u64 = tally.failed.values().sum();
    println!();
    println!(
        "{} sessions for {:.0} s: {made} calls made, {failed} failed ({:.1} calls/s)",
        o.sessions,
        ran.as_secs_f64(),
        made as f64 / ran.as_secs_f64()
    );
    println!();
    println!("| tool | calls | failed | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|");
    for tool in TOOLS {
        let mut v = tally.latencies_ms.get(tool).cloned().unwrap_or_default();
        v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        println!(
            "| {tool} | {} | {} | {:.1} | {:.1} |",
            v.len(),
            tally.failed.get(tool).copied().unwrap_or(0),
            percentile(&v, 0.50),
            percentile(&v, 0.99)
        );
    }
    println!();
    println!("| memory | start | end |");
    println!("|---|---|---|");
    println!("| host RSS | {} | {} |", start.0, end.0);
    println!("| computerd RSS | {} | {} |", start.1, end.1);
    println!("| container (docker stats) | {} | {} |", start.2, end.2);
    println!();
    println!(
        "container processes and threads: {} at the start, {} at the end, {} at most{}",
        pids.0,
        pids.1,
        pids.2,
        if o.browsers {
            " (a browser on every screen)"
        } else {
            ""
        }
    );
    for f in &tally.first_failures {
        println!("failure: {f}");
    }
    failed
}

#[tokio::main]
async fn main() {
    let o = options();
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
    remove_computer();
    let image =
        std::env::var("COMPUTER_USE_IMAGE").unwrap_or_else(|_| "computer-use-mcp:dev".into());
    let mut cmd = tokio::process::Command::new(&host);
    cmd.env("COMPUTER_USE_NAME", NAME)
        .env("COMPUTER_USE_PORT_BASE", PORT_BASE)
        .env("COMPUTER_USE_OPEN", "none")
        .env("COMPUTER_USE_IMAGE", &image);
    let transport = TokioChildProcess::new(cmd).expect("host starts");
    let host_pid = transport.id().expect("host pid");
    let client = Arc::new(().serve(transport).await.expect("handshake"));

    let mut sessions = Vec::new();
    for n in 0..o.sessions {
        let started = call(
            &client,
            "start_computer",
            json!({"title": format!("soak {n}")}),
        )
        .await
        .unwrap_or_else(|e| panic!("start_computer {n}: {e}"));
        sessions.push(started["session_id"].as_str().expect("id").to_string());
    }
    // Open every screen once before measuring, so the start memory counts them.
    for sid in &sessions {
        call(&client, "computer_observe", json!({"session_id": sid}))
            .await
            .unwrap_or_else(|e| panic!("first observe: {e}"));
    }
    if o.browsers {
        for sid in &sessions {
            call(
                &client,
                "launch_app",
                json!({"session_id": sid, "app": "browser"}),
            )
            .await
            .unwrap_or_else(|e| panic!("launch the browser: {e}"));
        }
    }
    let memory_start = (rss_of(host_pid), computerd_rss(), container_memory());
    let pids_start = container_pids();
    let pids_peak = Arc::new(std::sync::atomic::AtomicU64::new(pids_start));
    let sampler = {
        let peak = Arc::clone(&pids_peak);
        tokio::spawn(async move {
            loop {
                let now = tokio::task::spawn_blocking(container_pids)
                    .await
                    .unwrap_or(0);
                peak.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        })
    };

    let tally = Arc::new(Mutex::new(Tally::default()));
    let began = Instant::now();
    let until = began + Duration::from_secs(o.seconds);
    let loops: Vec<_> = sessions
        .iter()
        .enumerate()
        .map(|(n, sid)| {
            tokio::spawn(drive(
                Arc::clone(&client),
                sid.clone(),
                n,
                until,
                Arc::clone(&tally),
            ))
        })
        .collect();
    for l in loops {
        l.await.expect("a session loop panicked");
    }
    let ran = began.elapsed();
    let memory_end = (rss_of(host_pid), computerd_rss(), container_memory());
    sampler.abort();
    let pids_end = container_pids();
    let pids = (
        pids_start,
        pids_end,
        pids_peak
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(pids_end),
    );

    let failed = report(
        &tally.lock().unwrap(),
        &o,
        ran,
        &memory_start,
        &memory_end,
        pids,
    );
    if let Ok(client) = Arc::try_unwrap(client) {
        client.cancel().await.ok();
    }
    remove_computer();
    if failed > 0 {
        std::process::exit(1);
    }
}
