//! What the tunnel costs: `computer_observe` of a changed frame and
//! `shell true` through the real host binary, on a computer of the local
//! engine (published ports) and on computers of a remote engine (the
//! tunnel over TLS and over ssh), in the same run, side by side. Run with
//! `bash scripts/bench-remote.sh`, which stands up the remote engine of
//! `scripts/remote-engine.sh` and passes its variables:
//! `TUNNEL_BENCH_TLS="DOCKER_HOST=… DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=…"`
//! and `TUNNEL_BENCH_SSH="DOCKER_HOST=ssh://…"`.
//!
//! Each computer is its own (`cu-tunnel-bench-*`) and is removed at the end.

// Each bench uses part of the shared file.
#[allow(dead_code)]
#[path = "support/bench.rs"]
mod bench;

use bench::median;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Instant;

type Client = RunningService<RoleClient, ()>;

const OBSERVES: usize = 40;
const SHELLS: usize = 60;
/// The variables that choose an engine; each case sets its own.
const ENGINE_VARS: [&str; 5] = [
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
    "COMPUTER_USE_TUNNEL",
];

struct Case {
    label: &'static str,
    name: &'static str,
    port_base: u16,
    env: Vec<(String, String)>,
}

fn parse_env(var: &str) -> Vec<(String, String)> {
    let text = std::env::var(var).unwrap_or_else(|_| {
        panic!("`{var}` is not set: run this through `bash scripts/bench-remote.sh`")
    });
    text.split_whitespace()
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn docker(env: &[(String, String)], args: &[&str]) {
    let mut cmd = Command::new("docker");
    for var in ENGINE_VARS {
        cmd.env_remove(var);
    }
    let _ = cmd
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .output();
}

fn remove(case: &Case) {
    docker(
        &case.env,
        &[
            "rm",
            "-f",
            "-v",
            case.name,
            &format!("{}-network", case.name),
        ],
    );
    docker(&case.env, &["volume", "rm", &format!("{}-home", case.name)]);
}

async fn connect(host: &std::path::Path, case: &Case) -> Client {
    let mut cmd = tokio::process::Command::new(host);
    for var in ENGINE_VARS {
        cmd.env_remove(var);
    }
    cmd.env("COMPUTER_USE_NAME", case.name)
        .env("COMPUTER_USE_PORT_BASE", case.port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        .env(
            "COMPUTER_USE_IMAGE",
            std::env::var("COMPUTER_USE_IMAGE").unwrap_or_else(|_| "computer-use-mcp:dev".into()),
        )
        .envs(case.env.iter().map(|(k, v)| (k, v)));
    ().serve(TokioChildProcess::new(cmd).expect("host starts"))
        .await
        .expect("handshake")
}

async fn call(client: &Client, tool: &'static str, args: Value) -> Value {
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

/// Medians in ms of observe (changed frames) and `shell true`.
async fn measure(host: &std::path::Path, case: &Case) -> (f64, f64) {
    remove(case);
    let client = connect(host, case).await;
    let started = call(&client, "start_computer", json!({"title": "tunnel bench"})).await;
    let sid = started["session_id"]
        .as_str()
        .expect("session id")
        .to_string();
    // A ticking terminal makes every frame differ, so each observe encodes.
    call(&client, "shell", json!({"session_id": sid, "command": "setsid nohup xterm -geometry 160x50+0+0 -e 'while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done' >/dev/null 2>&1 &"})).await;
    call(
        &client,
        "computer_act",
        json!({"session_id": sid, "actions": [{"type": "wait", "ms": 1000}], "observe": false}),
    )
    .await;
    let mut observe = Vec::new();
    for _ in 0..OBSERVES {
        let t = Instant::now();
        call(&client, "computer_observe", json!({"session_id": sid})).await;
        observe.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut shell = Vec::new();
    for _ in 0..SHELLS {
        let t = Instant::now();
        call(
            &client,
            "shell",
            json!({"session_id": sid, "command": "true"}),
        )
        .await;
        shell.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let _ = client.cancel().await;
    remove(case);
    (median(observe), median(shell))
}

#[tokio::main]
async fn main() {
    let host = std::env::current_exe()
        .expect("own path")
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("computer-use-mcp");
    assert!(
        host.is_file(),
        "build it first: cargo build --release -p computer-use-mcp"
    );
    let cases = [
        Case {
            label: "local engine, published ports",
            name: "cu-tunnel-bench-local",
            port_base: 25900,
            env: Vec::new(),
        },
        Case {
            label: "remote engine over TLS, tunnel",
            name: "cu-tunnel-bench-tls",
            port_base: 25930,
            env: parse_env("TUNNEL_BENCH_TLS"),
        },
        Case {
            label: "remote engine over ssh, tunnel",
            name: "cu-tunnel-bench-ssh",
            port_base: 25960,
            env: parse_env("TUNNEL_BENCH_SSH"),
        },
    ];
    let mut rows = Vec::new();
    for case in &cases {
        eprintln!("tunnel bench: {}", case.label);
        rows.push((case.label, measure(&host, case).await));
    }
    let (_, (local_observe, local_shell)) = rows[0];
    println!(
        "medians of {OBSERVES} observes (changed 1280x800 frame) and {SHELLS} `shell true`, same run; goal: at most 3 ms over local"
    );
    println!("| way | computer_observe ms | over local | shell `true` ms | over local |");
    println!("|---|---|---|---|---|");
    for (label, (observe, shell)) in rows {
        println!(
            "| {label} | {observe:.2} | {:+.2} | {shell:.2} | {:+.2} |",
            observe - local_observe,
            shell - local_shell
        );
    }
}
