//! The real `computer-use-mcp` binary driven by rmcp's client, over stdio
//! or, with `COMPUTER_USE_TEST_TRANSPORT=http`, over Streamable HTTP, plus
//! a direct look at computerd's session list for checks that the agent
//! cannot make (sessions ended after the host died).

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
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

/// The bearer token the tests give an HTTP host.
pub const HTTP_TOKEN: &str = "test-token-0123456789abcdef0123456789";

/// Whether the MCP tests run over HTTP (`COMPUTER_USE_TEST_TRANSPORT=http`)
/// instead of stdio.
pub fn over_http() -> bool {
    match std::env::var("COMPUTER_USE_TEST_TRANSPORT").as_deref() {
        Ok("http") => true,
        Ok("stdio") | Err(_) => false,
        Ok(other) => panic!("COMPUTER_USE_TEST_TRANSPORT={other}: use `stdio` or `http`"),
    }
}

/// The host command for `computer`, with the test's settings.
pub fn host_command(
    computer: &TestComputer,
    extra_env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(host_bin());
    cmd.env("COMPUTER_USE_NAME", &computer.name)
        .env("COMPUTER_USE_PORT_BASE", computer.port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        .env("COMPUTER_USE_IMAGE", super::docker::image())
        // The host's own folder (recording key and step logs), shared by
        // every host a test starts so `review` checks what a server signed.
        .env(
            "COMPUTER_USE_STATE_DIR",
            std::env::temp_dir().join("computer-use-mcp-test-state"),
        );
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd
}

/// Starts `computer` (making it if need be) with one `start_computer` over
/// stdio, from a thread that may not await, and ends that session by
/// closing the host's input. Fails after [`START_LIMIT`] rather than hang.
pub fn start_computer_blocking(computer: &TestComputer) {
    use std::io::{BufRead, BufReader, Write};
    let mut host = host_command(computer, &[])
        .into_std()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("computer-use-mcp starts");
    let mut input = host.stdin.take().expect("piped stdin");
    let output = BufReader::new(host.stdout.take().expect("piped stdout"));
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "shared-computer", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "start_computer", "arguments": {"title": "the shared computer"}}}),
    ];
    for message in messages {
        writeln!(input, "{message}").expect("the host reads its input");
    }
    // The answer to call 2, read on a thread of its own so the wait for it
    // has a deadline.
    let (answered, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let frame = output
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
            .find(|frame| frame["id"] == 2);
        let _ = answered.send(frame);
    });
    let answer = match answer.recv_timeout(START_LIMIT) {
        Ok(Some(answer)) => answer,
        Ok(None) => panic!("the host ended before start_computer answered"),
        Err(_) => {
            let _ = host.kill();
            panic!("start_computer for the shared computer did not answer within {START_LIMIT:?}");
        }
    };
    assert!(
        answer["result"]["isError"] != true && answer.get("error").is_none(),
        "start_computer for the shared computer failed: {answer}"
    );
    drop(input);
    host.wait().expect("the host exits once its input closes");
}

/// How long making the shared computer may take: a new computer answers
/// within computerd's 30 s health deadline, plus the engine's own calls.
const START_LIMIT: Duration = Duration::from_secs(90);

/// Starts the host binary for `computer` and connects a client to it, over
/// the transport [`over_http`] picks. Returns the client and the host's pid.
pub async fn connect(computer: &TestComputer, extra_env: &[(&str, &str)]) -> (Client, u32) {
    connect_with(host_command(computer, extra_env), ()).await
}

/// Starts the host as `cmd` (from [`host_command`], with whatever else the
/// test sets, such as its working folder) and connects `handler` to it, over
/// the transport [`over_http`] picks. Returns the client and the host's pid.
pub async fn connect_with<H: ClientHandler>(
    cmd: tokio::process::Command,
    handler: H,
) -> (RunningService<RoleClient, H>, u32) {
    if over_http() {
        let host = HttpHost::spawn(cmd).await;
        let client = host.client_with(handler).await;
        let pid = host.pid;
        // The host lives as long as the test's runtime, like a stdio child.
        tokio::spawn(host.wait());
        return (client, pid);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("computer-use-mcp starts");
    let pid = transport.id().expect("child pid");
    let client = handler.serve(transport).await.expect("MCP handshake");
    (client, pid)
}

/// Calls a tool with JSON arguments.
pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed at the protocol level: {e}"));
    if let Some(structured) = &result.structured_content {
        super::schema::assert_fits_output_schema(client, tool, structured).await;
    }
    result
}

/// The error text of a call that must fail.
pub async fn refused(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args.clone()).await;
    assert!(
        is_error(&result),
        "{tool} {args} should be refused: {}",
        text(&result)
    );
    text(&result)
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
/// the container's configuration. The request goes through `docker exec` of
/// `computerd relay`, so it reaches the computer on any engine the `docker`
/// command reaches, a remote one included.
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
    let answer = computerd_get(&computer.name, "/v1/sessions", &token).await;
    let body: Value = serde_json::from_slice(&answer).expect("json");
    body["sessions"].as_array().cloned().unwrap_or_default()
}

/// The body of `GET path` on computerd's API in the container `name`, over
/// one `docker exec -i … computerd relay 127.0.0.1:7070`.
pub async fn computerd_get(name: &str, path: &str, token: &str) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut relay = tokio::process::Command::from(super::docker::docker_cli())
        .args([
            "exec",
            "-i",
            name,
            "/usr/local/bin/computerd",
            "relay",
            "127.0.0.1:7070",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("docker runs");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:7070\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    let mut stdin = relay.stdin.take().expect("stdin");
    stdin
        .write_all(request.as_bytes())
        .await
        .expect("request sent");
    let mut answer = Vec::new();
    let mut stdout = relay.stdout.take().expect("stdout");
    tokio::time::timeout(Duration::from_secs(10), stdout.read_to_end(&mut answer))
        .await
        .expect("computerd answers within 10 s")
        .expect("the relay's output reads");
    drop(stdin);
    let text = String::from_utf8_lossy(&answer);
    let (head, _) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "computerd answered {head}"
    );
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "a JSON answer has a length"
    );
    answer[head.len() + 4..].to_vec()
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

/// The pids of the computer's processes whose command line matches the
/// `pgrep -f` pattern `pattern`, seen from `session`'s shell (start the
/// pattern with a bracket, `[s]leep`, so the shell's own line never matches).
pub async fn pids(client: &Client, session: &str, pattern: &str) -> Vec<u32> {
    let r = shell_ok(client, session, &format!("pgrep -f -- '{pattern}' || true")).await;
    r["stdout"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(|pid| pid.parse().expect("pgrep prints pids"))
        .collect()
}

/// Waits up to `limit` for the processes `pids` to be gone, asking from
/// `session`'s shell, and panics naming `what` if one outlives it. By pid, not
/// by name: on a shared computer another test's session may take the freed
/// screen number, and its processes the same command lines, at once.
pub async fn wait_pids_gone(
    client: &Client,
    session: &str,
    pids: &[u32],
    limit: Duration,
    what: &str,
) {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    // A zombie its parent has not reaped yet counts as gone, as for pgrep.
    let check = format!(
        "for p in {}; do grep -qs '^State:[[:space:]]*[^Z[:space:]]' /proc/$p/status && echo $p; done; true",
        list.join(" ")
    );
    let deadline = Instant::now() + limit;
    loop {
        let r = shell_ok(client, session, &check).await;
        let left = r["stdout"].as_str().unwrap_or_default().trim().to_string();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what} (pids {left}) still runs {limit:?} after it should have ended"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The screen number of a session with an open screen, from `DISPLAY` in
/// its shell (the image's displays are the screen numbers).
pub async fn screen_number(client: &Client, session: &str) -> u16 {
    let r = shell_ok(client, session, "echo ${DISPLAY#:}").await;
    r["stdout"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("no screen number in {r}: {e}"))
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

/// A host serving MCP over HTTP on a free loopback port.
pub struct HttpHost {
    pub child: tokio::process::Child,
    pub pid: u32,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    /// Every line it logged after it listened.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl HttpHost {
    /// Starts `computer-use-mcp serve --http 127.0.0.1:0` with
    /// [`HTTP_TOKEN`] and waits for the address it listens on.
    pub async fn start(computer: &TestComputer, extra_env: &[(&str, &str)]) -> HttpHost {
        HttpHost::spawn(host_command(computer, extra_env)).await
    }

    /// Starts `cmd` (from [`host_command`]) as `serve --http 127.0.0.1:0`
    /// and waits for the address it listens on. Unless `cmd` says otherwise,
    /// the host takes [`HTTP_TOKEN`] and confines transfers to the temporary
    /// folder, where the tests keep their host files.
    pub async fn spawn(mut cmd: tokio::process::Command) -> HttpHost {
        use tokio::io::AsyncBufReadExt;
        let given: Vec<String> = cmd
            .as_std()
            .get_envs()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        let has = |name: &str| given.iter().any(|g| g == name);
        if !has("COMPUTER_USE_HTTP_TENANTS") && !has("COMPUTER_USE_HTTP_TOKEN") {
            cmd.env("COMPUTER_USE_HTTP_TOKEN", HTTP_TOKEN);
        }
        if !has("COMPUTER_USE_TRANSFER_ROOT") {
            cmd.env("COMPUTER_USE_TRANSFER_ROOT", std::env::temp_dir());
            // The shared temporary folder holds other programs' files (a
            // CI clone's build, gigabytes): no quota counts them.
            if !has("COMPUTER_USE_TRANSFER_QUOTA_MB") {
                cmd.env("COMPUTER_USE_TRANSFER_QUOTA_MB", "0");
            }
        }
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("computer-use-mcp starts");
        let pid = child.id().expect("child pid");
        let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("host stderr") {
                eprintln!("{line}");
                if let Some(url) = line.strip_prefix("computer-use-mcp: MCP over HTTP at ") {
                    return url.trim().to_string();
                }
            }
            panic!("computer-use-mcp exited before listening");
        })
        .await
        .expect("computer-use-mcp listens within 30 s");
        // The rest of its log goes where a stdio host's goes, and is kept.
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("{line}");
                kept.lock().unwrap().push(line);
            }
        });
        HttpHost {
            child,
            pid,
            url,
            log,
        }
    }

    /// A new MCP client (one MCP session) with the right token.
    pub async fn client(&self) -> Client {
        self.client_with(()).await
    }

    /// A new MCP client (one MCP session) with `token`.
    pub async fn client_as(&self, token: &str) -> Client {
        http_client_with(&self.url, Some(token), ())
            .await
            .expect("MCP handshake over HTTP")
    }

    /// A new MCP client (one MCP session) with the right token, whose
    /// notifications go to `handler`.
    pub async fn client_with<H: ClientHandler>(&self, handler: H) -> RunningService<RoleClient, H> {
        http_client_with(&self.url, Some(HTTP_TOKEN), handler)
            .await
            .expect("MCP handshake over HTTP")
    }

    /// Waits for the host to exit; dropping this future kills it.
    pub async fn wait(mut self) {
        let _ = self.child.wait().await;
    }
}

/// An rmcp client over Streamable HTTP to `url`.
pub async fn http_client(url: &str, token: Option<&str>) -> Result<Client, String> {
    http_client_with(url, token, ()).await
}

/// The same, with `handler` for what the server sends.
pub async fn http_client_with<H: ClientHandler>(
    url: &str,
    token: Option<&str>,
    handler: H,
) -> Result<RunningService<RoleClient, H>, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    handler.serve(transport).await.map_err(|e| e.to_string())
}
