//! A screenshot after a one-character change, through MCP, beside another
//! Rust computer-use server on the same desktop: `computer-use-linux`
//! 0.7.36, built from its crate's source. Run with
//! `bash scripts/bench-peer.sh`, which builds both.
//!
//! Both servers are driven by the same rmcp client over stdio. Ours is the
//! real host binary, which reaches computerd through its Docker tunnel; the
//! peer runs inside the same computer, on the session's own screen, behind
//! `docker exec -i`, so both cross the same container boundary. Each round
//! types one character into a terminal (through our `computer_act`, with a
//! quiet settle so the change is drawn), then takes one screenshot through
//! one server; the two servers alternate which goes first.
//!
//! Uses its own computer (`COMPUTER_USE_NAME=cu-peer-bench`, port base
//! 24100) and removes it at the end. Argument: the peer's binary.

#[path = "support/bench.rs"]
mod bench;

use bench::{docker_ok, median};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Instant;

const NAME: &str = "cu-peer-bench";
const ROUNDS: usize = 30;
const WARM_UP: usize = 3;
/// Where the peer's binary lands in the computer.
const PEER_IN_COMPUTER: &str = "/usr/local/bin/computer-use-linux";

type Client = RunningService<RoleClient, ()>;

fn remove_computer() {
    let _ = Command::new("docker")
        .args(["rm", "-f", "-v", NAME, &format!("{NAME}-network")])
        .output();
    let _ = Command::new("docker")
        .args(["volume", "rm", &format!("{NAME}-home")])
        .output();
}

/// One tool call; its structured content and the bytes of its image.
async fn call(client: &Client, tool: &str, args: Value) -> (Value, usize) {
    let r = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("call");
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    let image_bytes = r
        .content
        .iter()
        .filter_map(|c| c.as_image().map(|image| image.data.len() * 3 / 4))
        .sum();
    (r.structured_content.unwrap_or(Value::Null), image_bytes)
}

#[tokio::main]
async fn main() {
    let peer = std::env::args()
        .nth(1)
        .expect("usage: peer_bench PATH-TO-computer-use-linux");
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
    let mut cmd = tokio::process::Command::new(&host);
    cmd.env("COMPUTER_USE_NAME", NAME)
        .env("COMPUTER_USE_PORT_BASE", "24100")
        .env("COMPUTER_USE_OPEN", "none")
        .env(
            "COMPUTER_USE_IMAGE",
            std::env::var("COMPUTER_USE_IMAGE").unwrap_or("computer-use-mcp:dev".into()),
        );
    let ours =
        ().serve(TokioChildProcess::new(cmd).expect("host starts"))
            .await
            .expect("handshake");
    let (started, _) = call(&ours, "start_computer", json!({"title": "peer bench"})).await;
    let sid = started["session_id"].as_str().expect("id").to_string();
    call(&ours, "computer_observe", json!({"session_id": sid})).await;
    let (env, _) = call(
        &ours,
        "shell",
        json!({"session_id": sid, "command": "echo \"$DISPLAY $(id -un)\""}),
    )
    .await;
    let line = env["stdout"].as_str().expect("stdout").trim().to_string();
    let (display, user) = line.split_once(' ').expect("DISPLAY and user");
    let (display, user) = (display.to_string(), user.to_string());
    // The shell's own X cookie is untrusted and may not read pixels; the
    // peer gets the desktop's, as a program of the person's desktop has.
    let xauthority = docker_ok(&[
        "exec",
        NAME,
        "sh",
        "-c",
        "tr '\\0' '\\n' < /proc/$(pgrep -o fluxbox)/environ | sed -n 's/^XAUTHORITY=//p'",
    ]);
    assert!(
        !xauthority.is_empty(),
        "fluxbox runs with the desktop's cookie"
    );
    call(
        &ours,
        "shell",
        json!({"session_id": sid, "command": "setsid nohup xterm -geometry 100x30+40+40 >/dev/null 2>&1 &"}),
    )
    .await;
    docker_ok(&["cp", &peer, &format!("{NAME}:{PEER_IN_COMPUTER}")]);

    let mut peer_cmd = tokio::process::Command::new("docker");
    peer_cmd.args([
        "exec",
        "-i",
        "-u",
        &user,
        "-e",
        &format!("DISPLAY={display}"),
        "-e",
        &format!("XAUTHORITY={xauthority}"),
        // Straight to its X11 capture: the peer's fastest path here, without
        // first trying GNOME Shell and the portal, which this desktop lacks.
        "-e",
        "COMPUTER_USE_LINUX_SCREENSHOT_BACKEND=x11",
        NAME,
        PEER_IN_COMPUTER,
        "mcp",
    ]);
    let theirs =
        ().serve(TokioChildProcess::new(peer_cmd).expect("docker exec starts"))
            .await
            .expect("the peer's handshake");

    let one_char = |i: usize| {
        let letter = (b'a' + (i % 26) as u8) as char;
        json!({
            "session_id": sid,
            "actions": [{"type": "type", "text": letter.to_string()}],
            "observe": false,
            "settle": "quiet",
            "quiet_ms": 100,
        })
    };
    let (mut ours_ms, mut theirs_ms) = (Vec::new(), Vec::new());
    let (mut ours_bytes, mut theirs_bytes) = (Vec::new(), Vec::new());
    for round in 0..WARM_UP + ROUNDS {
        for turn in 0..2 {
            call(&ours, "computer_act", one_char(round * 2 + turn)).await;
            let peer_turn = (round + turn) % 2 == 1;
            let t = Instant::now();
            let (_, bytes) = if peer_turn {
                call(&theirs, "screenshot", json!({"full_screen": true})).await
            } else {
                call(&ours, "computer_observe", json!({"session_id": sid})).await
            };
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            assert!(bytes > 0, "a changed screen gives an image");
            if round < WARM_UP {
                continue;
            }
            if peer_turn {
                theirs_ms.push(ms);
                theirs_bytes.push(bytes as f64);
            } else {
                ours_ms.push(ms);
                ours_bytes.push(bytes as f64);
            }
        }
    }
    let _ = theirs.cancel().await;
    let _ = ours.cancel().await;
    remove_computer();

    let (ours_ms, theirs_ms) = (median(ours_ms), median(theirs_ms));
    let (ours_kb, theirs_kb) = (median(ours_bytes) / 1000.0, median(theirs_bytes) / 1000.0);
    println!("| screenshot after a one-character change ({ROUNDS} rounds) | ours | computer-use-linux 0.7.36 | ratio |");
    println!("|---|---:|---:|---:|");
    println!(
        "| median ms | {ours_ms:.2} | {theirs_ms:.2} | {:.2}x |",
        ours_ms / theirs_ms
    );
    println!(
        "| median PNG KB | {ours_kb:.1} | {theirs_kb:.1} | {:.2}x |",
        ours_kb / theirs_kb
    );
}
