//! The real `computer-use-mcp` binary driven over stdio by rmcp's client,
//! plus a direct look at computerd's session list for checks that the agent
//! cannot make (sessions ended after the host died).

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::docker::{inspect, TestComputer};

pub type Client = RunningService<RoleClient, ()>;

/// The host binary the tests drive: `COMPUTER_USE_TEST_HOST_BIN` (for
/// example the release build, `target/release/computer-use-mcp`), or this
/// build's.
pub fn host_bin() -> std::path::PathBuf {
    std::env::var_os("COMPUTER_USE_TEST_HOST_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_computer-use-mcp").into())
}

/// Starts the host binary for `computer` and connects a client to it.
/// Returns the client and the host's pid.
pub async fn connect(computer: &TestComputer, extra_env: &[(&str, &str)]) -> (Client, u32) {
    let mut cmd = tokio::process::Command::new(host_bin());
    cmd.env("COMPUTER_USE_NAME", &computer.name)
        .env("COMPUTER_USE_PORT_BASE", computer.port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        .env("COMPUTER_USE_IMAGE", super::docker::image());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("computer-use-mcp starts");
    let pid = transport.id().expect("child pid");
    let client = ().serve(transport).await.expect("MCP handshake");
    (client, pid)
}

/// Calls a tool with JSON arguments.
pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed at the protocol level: {e}"))
}

/// The text content of a result, joined.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Calls a tool and asserts success; returns the structured content.
pub async fn ok(client: &Client, tool: &str, args: Value) -> (Value, CallToolResult) {
    let result = call(client, tool, args.clone()).await;
    assert!(
        !is_error(&result),
        "{tool} {args} failed: {}",
        text(&result)
    );
    (
        result.structured_content.clone().unwrap_or(Value::Null),
        result,
    )
}

/// computerd's session list, read straight from its API with the token from
/// the container's configuration.
pub async fn live_sessions(computer: &TestComputer) -> Vec<Value> {
    let info = inspect(&computer.name);
    let token = info["Config"]["Env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(Value::as_str)
        .find_map(|e| e.strip_prefix("COMPUTERD_TOKEN="))
        .expect("token in the container's env")
        .to_string();
    let port = info["NetworkSettings"]["Ports"]["7070/tcp"][0]["HostPort"]
        .as_str()
        .expect("API port")
        .to_string();
    let body: Value = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/v1/sessions"))
        .bearer_auth(token)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("computerd answers")
        .json()
        .await
        .expect("json");
    body["sessions"].as_array().cloned().unwrap_or_default()
}

/// Polls until `session` is no longer live, failing after `limit`; returns
/// how long it took.
pub async fn wait_session_gone(
    computer: &TestComputer,
    session: &str,
    limit: Duration,
) -> Duration {
    let started = Instant::now();
    loop {
        let live = live_sessions(computer).await;
        if !live.iter().any(|s| s["session_id"] == json!(session)) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "session {session} still live after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `start_computer` with `title`; returns the session id.
pub async fn start_session(client: &Client, title: &str) -> String {
    let (started, _) = ok(client, "start_computer", json!({ "title": title })).await;
    started["session_id"]
        .as_str()
        .expect("session_id")
        .to_string()
}

/// Runs `command` with the `shell` tool (up to 90 s) and returns its
/// result; a non-zero exit is the caller's to check.
pub async fn shell_ok(client: &Client, session: &str, command: &str) -> Value {
    let (r, _) = ok(
        client,
        "shell",
        json!({"session_id": session, "command": command, "timeout": 90}),
    )
    .await;
    r
}

/// Writes each `(path, content)` with `write_file`.
pub async fn write_files(client: &Client, session: &str, files: &[(&str, &str)]) {
    for (path, content) in files {
        ok(
            client,
            "write_file",
            json!({"session_id": session, "path": path, "content": content}),
        )
        .await;
    }
}
