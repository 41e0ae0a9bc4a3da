//! MCP over Streamable HTTP: the real host binary serving `/mcp` with a
//! bearer token, driven by rmcp's HTTP client against a real computer.
//! Several clients share one host, each with its own sessions; a client
//! that goes away ends only its own.

use crate::support::docker::{shared_computer, TestComputer};
use crate::support::mcp::{
    call, host_command, http_client, is_error, live_sessions, ok, start_session, text,
    wait_session_gone, HttpHost, HTTP_TOKEN,
};
use serde_json::{json, Value};
use std::time::Duration;

/// What is sent, the headers, the status expected.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);

/// A plain HTTP POST of an `initialize` to the host, with `headers`.
async fn raw_initialize(url: &str, headers: &[(&str, &str)]) -> reqwest::StatusCode {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        )
        .timeout(Duration::from_secs(10));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.expect("the host answers").status()
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_without_the_token_or_from_a_foreign_origin_or_host_are_refused() {
    let computer = shared_computer();
    let host = HttpHost::start(
        computer,
        &[
            ("COMPUTER_USE_HTTP_ORIGINS", "http://allowed.example:3000"),
            ("COMPUTER_USE_HTTP_HOSTS", "mcp.example, lan.example:1"),
        ],
    )
    .await;
    let bearer = format!("Bearer {HTTP_TOKEN}");
    let port = host
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let foreign_host = format!("evil.example:{port}");
    let listed_on_another_port = format!("lan.example:{port}");
    let cases: [Case; 6] = [
        ("no token", vec![], 401),
        (
            "a wrong token",
            vec![(
                "authorization",
                "Bearer test-token-0123456789abcdef012345678X",
            )],
            401,
        ),
        (
            "a token prefix",
            vec![("authorization", "Bearer test-token")],
            401,
        ),
        (
            "a foreign Origin",
            vec![
                ("authorization", &bearer),
                ("origin", "https://evil.example"),
            ],
            403,
        ),
        (
            "a foreign Host",
            vec![("authorization", &bearer), ("host", &foreign_host)],
            403,
        ),
        (
            "a listed Host with another port",
            vec![
                ("authorization", &bearer),
                ("host", &listed_on_another_port),
            ],
            403,
        ),
    ];
    for (what, headers, status) in &cases {
        let got = raw_initialize(&host.url, headers).await;
        assert_eq!(got.as_u16(), *status, "{what}: {got}");
    }
    // The right token passes, with no Origin or with a listed one.
    assert!(raw_initialize(&host.url, &[("authorization", &bearer)])
        .await
        .is_success());
    let listed = [
        ("authorization", bearer.as_str()),
        ("origin", "http://allowed.example:3000"),
    ];
    assert!(raw_initialize(&host.url, &listed).await.is_success());
    // A name listed in COMPUTER_USE_HTTP_HOSTS passes both the guard and
    // rmcp's own check: without a port on any port, as a TLS proxy sends it.
    let listed_host = format!("mcp.example:{port}");
    for host_name in [listed_host.as_str(), "mcp.example"] {
        let headers = [("authorization", bearer.as_str()), ("host", host_name)];
        let got = raw_initialize(&host.url, &headers).await;
        assert!(got.is_success(), "Host {host_name}: {got}");
    }
    // rmcp's client without the token cannot connect.
    assert!(http_client(&host.url, None).await.is_err());
    assert!(
        http_client(&host.url, Some("test-token-0123456789abcdef01234567XX"))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_short_token_refuses_to_start_naming_the_variable() {
    let computer = TestComputer::new();
    for token in [None, Some("too-short-0123456789")] {
        let mut cmd = host_command(&computer, &[]);
        cmd.env_remove("COMPUTER_USE_HTTP_TOKEN");
        if let Some(token) = token {
            cmd.env("COMPUTER_USE_HTTP_TOKEN", token);
        }
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            cmd.args(["serve", "--http", "127.0.0.1:0"]).output(),
        )
        .await
        .expect("the host exits at once")
        .expect("the host runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{token:?}: started anyway");
        assert!(
            stderr.contains("`COMPUTER_USE_HTTP_TOKEN`") && stderr.contains("32"),
            "{token:?}: {stderr}"
        );
        assert!(!stderr.contains("MCP over HTTP at"), "{stderr}");
    }
    // Not loopback without --allow-remote; every address only with the
    // names clients use (no Host could pass otherwise); a listed name that
    // is not one. None of them binds a port.
    let every_address = ["serve", "--allow-remote", "--http", "0.0.0.0:0"];
    let refusals: [(&[&str], Option<&str>, &str); 3] = [
        (&["serve", "--http", "0.0.0.0:0"], None, "--allow-remote"),
        (
            &every_address,
            None,
            "listens on every address, so no `Host` a client sends can be checked against it: set `COMPUTER_USE_HTTP_HOSTS`",
        ),
        (
            &every_address,
            Some("mcp.example/mcp"),
            "`COMPUTER_USE_HTTP_HOSTS` lists `mcp.example/mcp`, which is not a `host` or `host:port`",
        ),
    ];
    for (args, hosts, says) in refusals {
        let mut cmd = host_command(&computer, &[("COMPUTER_USE_HTTP_TOKEN", HTTP_TOKEN)]);
        if let Some(hosts) = hosts {
            cmd.env("COMPUTER_USE_HTTP_HOSTS", hosts);
        }
        let out = tokio::time::timeout(Duration::from_secs(20), cmd.args(args).output())
            .await
            .expect("the host exits at once")
            .expect("the host runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(says),
            "{args:?} {hosts:?}: {stderr}"
        );
        assert!(!stderr.contains("MCP over HTTP at"), "{stderr}");
    }
}

/// A heartbeat window the tests outlast in seconds rather than half a
/// minute: sessions end 8 s after their host's last beat.
const HEARTBEAT_WINDOW: &str = "COMPUTER_USE_HEARTBEAT_WINDOW";
const SHORT_WINDOW: &str = "8s";
/// Longer than the window and a beat together, so a session still live
/// after it was kept alive by beats.
const PAST_THE_WINDOW: Duration = Duration::from_secs(12);

/// The owner computerd lists for `session`.
async fn owner_of(computer: &TestComputer, session: &str) -> Value {
    live_sessions(computer)
        .await
        .into_iter()
        .find(|s| s["session_id"] == json!(session))
        .map(|s| s["owner"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn two_clients_have_their_own_sessions_and_one_leaving_ends_only_its_own() {
    let computer = shared_computer();
    let host = HttpHost::start(computer, &[(HEARTBEAT_WINDOW, SHORT_WINDOW)]).await;
    let a = host.client().await;
    let b = host.client().await;
    let sa = start_session(&a, "client a").await;
    let sb = start_session(&b, "client b").await;
    // Each is its own owner at computerd.
    let (owner_a, owner_b) = (owner_of(computer, &sa).await, owner_of(computer, &sb).await);
    assert!(
        owner_a.is_string() && owner_b.is_string(),
        "{owner_a} {owner_b}"
    );
    assert_ne!(owner_a, owner_b, "both clients share one owner");
    // Both drive their screens, at once.
    let (oa, ob) = tokio::join!(
        ok(&a, "computer_observe", json!({"session_id": sa})),
        ok(&b, "computer_observe", json!({"session_id": sb})),
    );
    assert!(
        oa.1.content.len() > 1 && ob.1.content.len() > 1,
        "no screenshots"
    );
    let (ra, rb) = tokio::join!(
        ok(
            &a,
            "shell",
            json!({"session_id": sa, "command": "echo from-a"})
        ),
        ok(
            &b,
            "shell",
            json!({"session_id": sb, "command": "echo from-b"})
        ),
    );
    assert!(text(&ra.1).contains("from-a") && text(&rb.1).contains("from-b"));
    // One client cannot reach the other's session by its id: to b, a's
    // session does not exist, and a's survives b's attempts.
    for (tool, args) in [
        ("shell", json!({"session_id": sa, "command": "echo from-b"})),
        ("computer_observe", json!({"session_id": sa})),
        ("end_session", json!({"session_id": sa})),
    ] {
        let refused = call(&b, tool, args).await;
        assert!(is_error(&refused), "b's {tool} on a's session ran");
        assert!(
            text(&refused).contains(&format!("there is no session `{sa}`")),
            "{tool}: {}",
            text(&refused)
        );
    }
    assert_eq!(
        owner_of(computer, &sa).await,
        owner_a,
        "b ended a's session"
    );
    ok(&a, "shell", json!({"session_id": sa, "command": "true"})).await;
    // Client a cancels: its MCP session ends and with it its sessions; b's
    // stays and still works.
    a.cancel().await.ok();
    let took = wait_session_gone(computer, &sa, Duration::from_secs(10)).await;
    assert!(took <= Duration::from_secs(5), "took {took:?}");
    assert_eq!(
        owner_of(computer, &sb).await,
        owner_b,
        "b's session ended too"
    );
    ok(&b, "shell", json!({"session_id": sb, "command": "true"})).await;
    // Heartbeats keep b's session alive past its window.
    tokio::time::sleep(PAST_THE_WINDOW).await;
    assert_eq!(
        owner_of(computer, &sb).await,
        owner_b,
        "b's heartbeat stopped"
    );
    b.cancel().await.ok();
    wait_session_gone(computer, &sb, Duration::from_secs(10)).await;
    drop(host);
}

/// An rmcp client of the 2026-07-28 revision: `server/discover` instead
/// of `initialize`, so no MCP session; every request stands alone.
async fn sessionless_client(url: &str) -> crate::support::mcp::Client {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{serve_client_with_lifecycle, ClientLifecycleMode};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(HTTP_TOKEN.to_string());
    serve_client_with_lifecycle(
        (),
        StreamableHttpClientTransport::from_config(config),
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("server/discover over HTTP")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_an_mcp_session_keeps_its_computer_session_across_requests() {
    let computer = shared_computer();
    let host = HttpHost::start(computer, &[(HEARTBEAT_WINDOW, SHORT_WINDOW)]).await;
    let client = sessionless_client(&host.url).await;
    let sid = start_session(&client, "sessionless").await;
    let owner = owner_of(computer, &sid).await;
    assert!(owner.is_string(), "the session ended with its request");
    let (observed, _) = ok(&client, "computer_observe", json!({"session_id": sid})).await;
    assert!(observed["frame_id"].is_u64(), "{observed}");
    let ran = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo still-here"}),
    )
    .await;
    assert!(text(&ran.1).contains("still-here"), "{}", text(&ran.1));
    // The process's agent beats for it past its window.
    tokio::time::sleep(PAST_THE_WINDOW).await;
    assert_eq!(owner_of(computer, &sid).await, owner, "no heartbeat");
    ok(&client, "end_session", json!({"session_id": sid})).await;
    wait_session_gone(computer, &sid, Duration::from_secs(10)).await;
    drop(host);
}

/// Where `scripts/install-test-deps.sh` puts the official MCP Python SDK
/// (pinned), beside the system's packages rather than among them.
fn python_sdk_dir() -> std::path::PathBuf {
    let home = std::env::var("HOME").expect("HOME is set");
    let dir =
        std::path::PathBuf::from(home).join(".local/share/computer-use-mcp-tests/mcp-python-sdk");
    assert!(
        dir.join("mcp").is_dir(),
        "the MCP Python SDK is missing from {}: run `bash scripts/install-test-deps.sh`",
        dir.display()
    );
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_closes_its_session_without_a_warning() {
    let computer = shared_computer();
    let host = HttpHost::start(computer, &[]).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/close_session.py");
    let run = tokio::process::Command::new("python3")
        .arg(script)
        .args([host.url.as_str(), HTTP_TOKEN])
        .env("PYTHONPATH", python_sdk_dir())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the Python client finishes within 60 s")
        .expect("python3 runs (apt-get install python3)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed: {stdout}\n{stderr}"
    );
    assert!(
        stdout.lines().any(|l| l == "tools 26"),
        "the Python client lists the 26 tools: {stdout}"
    );
    // The SDK sends DELETE on exit and warns unless it gets 200 or 204.
    assert!(
        stdout.lines().any(|l| l == "DELETE 204"),
        "the session is ended with 204: {stdout}"
    );
    assert!(
        !stderr.contains("Session termination failed"),
        "the SDK warned on exit: {stderr}"
    );
}
