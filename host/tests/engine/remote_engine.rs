//! The computer on a remote engine: the second dockerd of
//! `scripts/remote-engine.sh`, in a network namespace of its own, reached
//! over TLS and over ssh. What it publishes is on that namespace's loopback,
//! out of reach from here, so everything below goes through the tunnel: the
//! API, the viewer page and its WebSocket, and VNC.
//!
//! The MCP tests of sessions, transfer and the browser also run against this
//! engine over both transports (`scripts/test-remote.sh`); this file holds
//! what only a remote engine has: `doctor --deep` through the tunnel, the
//! engine's connection dropping in the middle of a call, and a `docker cp`
//! holding the container in the engine for longer than a session may go
//! without a heartbeat.

use crate::support::docker::TestComputer;
use crate::support::mcp::{call, connect_with, host_command, shell_ok, start_session, text};
use crate::support::remote::{
    remote_docker, remote_docker_command, remote_engine, ENDPOINT_VARS, LINK,
};
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

/// The remote engine's end of the veth pair, in its namespace. Taking it
/// down (rather than this machine's end) keeps the route to the engine on
/// the veth, so packets are dropped there instead of taking the default
/// route to somewhere else.
const NAMESPACE: &str = "/var/run/netns/cu-remote";
const ENGINE_LINK: &str = "cu-remote-n";

/// A computer of this test on the remote engine; removed with its volume
/// when dropped.
struct RemoteComputer {
    computer: TestComputer,
    env: Vec<(String, String)>,
}

impl RemoteComputer {
    fn new(env: &[(String, String)]) -> RemoteComputer {
        RemoteComputer {
            computer: TestComputer::new(),
            env: env.to_vec(),
        }
    }

    /// The host binary with this computer's settings, on the remote engine.
    fn host(&self) -> tokio::process::Command {
        let mut cmd = host_command(&self.computer, &[]);
        for var in ENDPOINT_VARS {
            cmd.env_remove(var);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }
}

impl Drop for RemoteComputer {
    fn drop(&mut self) {
        let name = &self.computer.name;
        remote_docker(&self.env, &["rm", "-f", "-v", name]);
        remote_docker(&self.env, &["rm", "-f", &format!("{name}-network")]);
        remote_docker(&self.env, &["volume", "rm", "-f", &format!("{name}-home")]);
    }
}

fn link(state: &str) {
    let out = Command::new("nsenter")
        .arg(format!("--net={NAMESPACE}"))
        .args(["ip", "link", "set", ENGINE_LINK, state])
        .output()
        .expect("nsenter runs");
    assert!(
        out.status.success(),
        "ip link set {ENGINE_LINK} {state} in {NAMESPACE}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Brings the link back even when the test fails half way.
struct LinkDown;

impl LinkDown {
    fn take() -> LinkDown {
        link("down");
        LinkDown
    }
}

impl Drop for LinkDown {
    fn drop(&mut self) {
        link("up");
    }
}

async fn doctor_deep(remote: &RemoteComputer) -> std::process::Output {
    let mut cmd = remote.host();
    cmd.args(["doctor", "--deep", "--json"]).kill_on_drop(true);
    tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("doctor ends within 120 s")
        .expect("doctor runs")
}

/// Every check of `doctor --deep` passes with the computer on the remote
/// engine: the viewer page, its WebSocket and native VNC all answer on this
/// machine's 127.0.0.1 though the engine published them only on its own.
async fn doctor_deep_passes_through_the_tunnel(env: &[(String, String)], transport: &str) {
    // Beside the others: doctor takes no link down, and one that does
    // waits for it.
    let _link = LINK.read().await;
    let remote = RemoteComputer::new(env);
    let out = doctor_deep(&remote).await;
    let shown = format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let checks = report["checks"].as_array().expect("checks");
    let status = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no `{name}` check:\n{shown}"))["status"]
            .clone()
    };
    for name in [
        "docker-endpoint",
        "computer-start",
        "screenshot",
        "browser",
        "viewer-page",
        "viewer-websocket",
        "vnc",
        "cleanup",
    ] {
        assert_eq!(status(name), "ok", "`{name}` over {transport}:\n{shown}");
    }
    let endpoint = checks
        .iter()
        .find(|c| c["name"] == "docker-endpoint")
        .unwrap();
    assert!(
        endpoint["detail"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase()
            .contains(transport),
        "the endpoint check names {transport}:\n{shown}"
    );
    // The engine published the viewer on its own loopback only (on the
    // computer's network guard): the port that answered here was the tunnel's.
    let guard = format!("{}-network", remote.computer.name);
    let published = remote_docker(env, &["port", &guard, "6080/tcp"]);
    let published = String::from_utf8_lossy(&published.stdout).to_string();
    assert!(
        published.trim().starts_with("127.0.0.1:"),
        "the remote engine publishes on its loopback only: {published}"
    );
    if transport == "ssh" {
        // doctor's connections shared one login: its master outlives doctor
        // (for the next command) and answers on its socket, in a folder
        // only this user may enter.
        let folder = match std::env::var_os("XDG_RUNTIME_DIR") {
            Some(runtime) => std::path::Path::new(&runtime).join("computer-use-mcp"),
            // SAFETY: getuid has no preconditions and cannot fail.
            None => format!("/tmp/computer-use-mcp-{}", unsafe { libc::getuid() }).into(),
        };
        let check = Command::new("ssh")
            .arg("-o")
            .arg(format!("ControlPath={}/%C", folder.display()))
            .args(["-O", "check", "cu-remote"])
            .output()
            .expect("runs ssh");
        assert!(
            check.status.success(),
            "no shared ssh login answers in {}: {}",
            folder.display(),
            String::from_utf8_lossy(&check.stderr)
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", folder.display());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_deep_passes_on_a_remote_engine_over_tls() {
    doctor_deep_passes_through_the_tunnel(&remote_engine().tls, "tls").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_deep_passes_on_a_remote_engine_over_ssh() {
    doctor_deep_passes_through_the_tunnel(&remote_engine().ssh, "ssh").await;
}

/// The engine's machine drops off the network in the middle of a shell
/// call: the call ends with an error within its deadline instead of
/// hanging. The outage outlasts the heartbeat, so the session ends; once
/// the machine is back, `start_computer` finds the same computer running
/// and its new session works.
#[tokio::test(flavor = "multi_thread")]
async fn the_engine_dropping_mid_call_is_an_error_and_start_computer_recovers_after() {
    let _alone = LINK.write().await;
    let remote = RemoteComputer::new(&remote_engine().tls);
    let (client, _pid) = connect_with(remote.host(), ()).await;
    let session = start_session(&client, "remote fault").await;
    let first = shell_ok(&client, &session, "echo before").await;
    assert_eq!(first["stdout"].as_str().map(str::trim), Some("before"));

    let started = Instant::now();
    let during = client.call_tool(
        CallToolRequestParams::new("shell").with_arguments(
            json!({"session_id": session, "command": "touch /tmp/cu-mid-call; sleep 3; echo during", "timeout": 5})
                .as_object()
                .cloned()
                .unwrap(),
        ),
    );
    // The link goes down once the command is known to run.
    let name = remote.computer.name.clone();
    let env = remote.env.clone();
    let down = async move {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !remote_docker(&env, &["exec", &name, "test", "-f", "/tmp/cu-mid-call"])
            .status
            .success()
        {
            assert!(
                Instant::now() < deadline,
                "the command did not start within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        LinkDown::take()
    };
    let (answer, link_down) =
        tokio::join!(tokio::time::timeout(Duration::from_secs(60), during), down);
    let answer = answer
        .expect("the call ends within 60 s with the engine gone")
        .expect("an MCP answer");
    assert_eq!(answer.is_error, Some(true), "{}", text(&answer));
    let message = text(&answer);
    assert!(
        message.contains("did not answer") || message.contains("cannot reach"),
        "the error says the computer could not be reached: {message}"
    );
    eprintln!(
        "the call failed after {:.1} s: {message}",
        started.elapsed().as_secs_f64()
    );

    drop(link_down);
    // Back: the computer never stopped, so start_computer finds it running.
    let deadline = Instant::now() + Duration::from_secs(60);
    let again = loop {
        let result = call(
            &client,
            "start_computer",
            json!({"title": "after the outage"}),
        )
        .await;
        if result.is_error != Some(true) {
            break result.structured_content.unwrap_or_default();
        }
        assert!(
            Instant::now() < deadline,
            "start_computer did not succeed within 60 s of the engine coming back: {}",
            text(&result)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(again["computer"]["state"], "running", "{again}");
    let session = again["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    let after = shell_ok(&client, &session, "echo after").await;
    assert_eq!(after["stdout"].as_str().map(str::trim), Some("after"));
}

/// A `docker cp` holds the container in the engine for as long as it
/// copies: Docker's check of the computer, and any new exec (so any new
/// tunnel connection), wait for it. The heartbeat goes on without the check
/// and on the tunnel connection it already has, so the session outlives the
/// heartbeat window (8 s here, as `COMPUTER_USE_HEARTBEAT_WINDOW` asks).
#[tokio::test(flavor = "multi_thread")]
async fn a_docker_cp_holding_the_computer_longer_than_the_heartbeat_window_ends_no_session() {
    const HELD: Duration = Duration::from_secs(12);
    let _alone = LINK.write().await;
    let remote = RemoteComputer::new(&remote_engine().tls);
    let mut host = remote.host();
    host.env("COMPUTER_USE_HEARTBEAT_WINDOW", "8s");
    let (client, _pid) = connect_with(host, ()).await;
    let session = start_session(&client, "held by docker cp").await;
    let before = shell_ok(&client, &session, "echo before").await;
    assert_eq!(before["stdout"].as_str().map(str::trim), Some("before"));

    // An archive that never comes: the engine holds the container while it
    // waits for it, until the copy is killed.
    let name = remote.computer.name.clone();
    let mut copy = remote_docker_command(&remote.env, &["cp", "-", &format!("{name}:/tmp")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("docker cp starts");
    // Held: `docker inspect` waits too.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut inspect = remote_docker_command(
            &remote.env,
            &["inspect", "--format", "{{.State.Running}}", &name],
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("docker inspect starts");
        let waited = Instant::now() + Duration::from_secs(3);
        while inspect.try_wait().expect("inspect's status").is_none() && Instant::now() < waited {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let held = inspect.try_wait().expect("inspect's status").is_none();
        let _ = inspect.kill();
        let _ = inspect.wait();
        if held {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "`docker cp -` did not hold the container within 20 s (inspect kept answering)"
        );
    }

    let held_since = Instant::now();
    while held_since.elapsed() < HELD {
        assert!(
            copy.try_wait().expect("docker cp's status").is_none(),
            "docker cp ended early"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let _ = copy.kill();
    let _ = copy.wait();

    let after = shell_ok(&client, &session, "echo after").await;
    assert_eq!(after["stdout"].as_str().map(str::trim), Some("after"));
}

/// N15: a program on this machine that takes the viewer's port while no
/// MCP server relays it would be given the viewer key by the person's
/// browser. A start of the computer, which exists already (so no check of
/// free ports runs first), fails and names the port; once the program is
/// gone the same server starts, and a second MCP server of the same
/// computer, whose viewer port the first one relays, proves that relay and
/// starts too.
#[tokio::test(flavor = "multi_thread")]
async fn a_viewer_port_held_by_another_program_fails_the_start() {
    let _link = LINK.read().await;
    let remote = RemoteComputer::new(&remote_engine().tls);
    let port = remote.computer.port_base;
    {
        // The computer is made, then its server goes and the port with it.
        let (maker, _) = connect_with(remote.host(), ()).await;
        start_session(&maker, "made").await;
        maker.cancel().await.unwrap();
    }
    let squatter = bind_within(port, Duration::from_secs(20));
    squatter.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let serving = std::thread::spawn({
        let stop = std::sync::Arc::clone(&stop);
        move || {
            use std::io::{Read, Write};
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match squatter.accept() {
                    Ok((mut stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let mut request = [0u8; 4096];
                        let _ = stream.read(&mut request);
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\nmine",
                        );
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
    });

    let (first, _) = connect_with(remote.host(), ()).await;
    let refused = call(&first, "start_computer", json!({"title": "squatted"})).await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    let message = text(&refused);
    assert!(
        message.contains(&format!("127.0.0.1:{port}"))
            && message.contains("not this computer's viewer"),
        "{message}"
    );

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    serving.join().unwrap();
    start_session(&first, "the port is free again").await;
    let (second, _) = connect_with(remote.host(), ()).await;
    start_session(&second, "a second server of the same computer").await;
}

/// Binds 127.0.0.1:`port`, waiting up to `limit` for whoever held it to
/// let it go.
fn bind_within(port: u16, limit: Duration) -> std::net::TcpListener {
    let deadline = Instant::now() + limit;
    loop {
        match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return listener,
            Err(e) => assert!(
                Instant::now() < deadline,
                "127.0.0.1:{port} was not free within {limit:?}: {e}"
            ),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
