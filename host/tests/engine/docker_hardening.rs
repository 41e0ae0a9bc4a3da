//! What the computer's container may do to the machine and its neighbours,
//! against a real engine and the real image: resource and capability limits,
//! no token in the agent's environment, timed-out root commands killed, and
//! other containers on the engine locked out of the API and VNC.

use crate::support::docker::{
    docker, docker_output, image, inspect, inspect_network, TestComputer,
};
use crate::support::mcp::{connect, ok, text};
use computer_use_mcp::docker::limits::{default_memory, LOG_MAX_FILES, LOG_MAX_SIZE, PIDS_LIMIT};
use computer_use_mcp::docker::{ensure_computer, resolve_endpoint, Computer};
use computer_use_mcp::settings::ComputerSettings;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn ensure(t: &TestComputer) -> Computer {
    let env = t.env();
    let settings = ComputerSettings::from_env(&env).expect("test settings are valid");
    let endpoint = resolve_endpoint(&env).expect("the test machine's Docker endpoint resolves");
    ensure_computer(&settings, &endpoint)
        .await
        .unwrap_or_else(|e| panic!("ensure_computer `{}` failed: {e}", t.name))
}

/// `docker exec <computer> bash -c <script>` as the user `computer`:
/// (exit code, stdout, stderr).
fn exec(t: &TestComputer, script: &str) -> (i32, String, String) {
    let out = docker_output(&["exec", &t.name, "bash", "-c", script]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

/// Bit 13 of a capability mask from /proc/<pid>/status.
const CAP_NET_RAW: u32 = 13;

#[tokio::test(flavor = "multi_thread")]
async fn the_container_has_limits_and_no_raw_sockets_yet_sudo_and_chromium_work() {
    let t = TestComputer::new();
    ensure(&t).await;
    let i = inspect(&t.name);
    let host = &i["HostConfig"];
    assert_eq!(host["PidsLimit"], json!(PIDS_LIMIT), "{host}");
    assert_eq!(host["LogConfig"]["Type"], "json-file", "{host}");
    assert_eq!(
        host["LogConfig"]["Config"]["max-size"], LOG_MAX_SIZE,
        "{host}"
    );
    assert_eq!(
        host["LogConfig"]["Config"]["max-file"], LOG_MAX_FILES,
        "{host}"
    );
    let dropped: Vec<&str> = host["CapDrop"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(dropped.contains(&"NET_RAW"), "{dropped:?}");
    // The default memory limit: three quarters of the engine's memory, at
    // least 2 GiB, and no swap beyond it.
    let engine: u64 = docker(&["info", "--format", "{{.MemTotal}}"])
        .parse()
        .expect("MemTotal is a number");
    let expected = default_memory(Some(engine), 1);
    assert!(expected >= 2 << 30, "{expected}");
    assert_eq!(host["Memory"], json!(expected), "{host}");
    assert_eq!(host["MemorySwap"], json!(expected), "{host}");
    assert_eq!(host["NanoCpus"], 0, "{host}");

    // Root in the container has no raw sockets; sudo still works and says
    // nothing (no audit-message noise in the agent's output).
    let (code, mask, err) = exec(&t, "sudo -n awk '/^CapBnd/ {print $2}' /proc/self/status");
    assert_eq!((code, err.as_str()), (0, ""), "{mask}");
    let mask = u64::from_str_radix(&mask, 16).unwrap_or_else(|_| panic!("CapBnd {mask:?}"));
    assert_eq!(
        mask & (1 << CAP_NET_RAW),
        0,
        "CapBnd {mask:#x} has cap_net_raw"
    );
    let (code, out, err) = exec(&t, "sudo -n true && echo ok");
    assert_eq!((code, out.as_str(), err.as_str()), (0, "ok", ""));

    // Chromium still renders a page under the default memory limit.
    let (code, out, err) = exec(
        &t,
        "timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom 'data:text/html,<p id=x>rendered</p>' 2>/dev/null",
    );
    assert!(
        code == 0 && out.contains("<p id=\"x\">rendered</p>"),
        "chromium failed ({code}): {out}\n{err}"
    );
}

/// A Python script run in another container on the same engine: the API's
/// answers without a token, and the security types Xvnc offers.
/// From a neighbour container: whether each of the computer's ports
/// accepts a connection at all.
const PROBE: &str = r#"
import json, socket, sys
ip = sys.argv[1]
def opens(port):
    try:
        socket.create_connection((ip, port), timeout=5).close()
        return True
    except OSError:
        return False
print(json.dumps({str(port): opens(port) for port in (7070, 6080, 5901)}))
"#;

/// The first bytes of a VNC server and the security types it offers.
fn rfb_security_types(port: u16) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("VNC answers");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut version = [0u8; 12];
    s.read_exact(&mut version).unwrap();
    s.write_all(b"RFB 003.008\n").unwrap();
    let mut count = [0u8; 1];
    s.read_exact(&mut count).unwrap();
    let mut types = vec![0u8; usize::from(count[0])];
    s.read_exact(&mut types).unwrap();
    (String::from_utf8_lossy(&version).trim().to_string(), types)
}

#[tokio::test(flavor = "multi_thread")]
async fn another_container_cannot_connect_and_this_machine_needs_the_token_and_the_vnc_password() {
    let t = TestComputer::new();
    let c = ensure(&t).await;
    // Open screen 1 so that Xvnc listens on 5901.
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/sessions", c.api_url))
        .bearer_auth(c.token.expose())
        .json(&json!({"title": "neighbour", "owner": "test-neighbour"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sid = created["session_id"].as_str().expect("session_id");
    let observed = http
        .post(format!("{}/v1/sessions/{sid}/observe", c.api_url))
        .bearer_auth(c.token.expose())
        .json(&json!({}))
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert!(observed.status().is_success(), "{}", observed.status());

    let ip = inspect_network(&t.name)["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
        .as_str()
        .expect("the computer is on the default bridge")
        .to_string();
    let probe_name = format!("{}-neighbour", t.name);
    let out = docker(&[
        "run",
        "--rm",
        "--name",
        &probe_name,
        "--entrypoint",
        "python3",
        &image(),
        "-c",
        PROBE,
        &ip,
    ]);
    let answer: Value = serde_json::from_str(out.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("probe printed {out:?}: {e}"));
    // The network guard lets no other container open a connection to it.
    assert_eq!(
        answer,
        json!({"7070": false, "6080": false, "5901": false}),
        "{answer}"
    );
    // Through the ports published on this machine, the API still wants the
    // token and VNC the password.
    let unauthorised = http
        .get(format!("{}/v1/sessions", c.api_url))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorised.status().as_u16(), 401);
    let (version, types) = rfb_security_types(c.port_base + 1);
    assert!(version.starts_with("RFB 003.00"), "{version}");
    // 2 is VncAuth; 1 (None) would let anyone in.
    assert_eq!(types, vec![2]);
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_host_runs_in_the_computer_carries_no_token() {
    let computer = TestComputer::new();
    // Every call then rides a `docker exec` of `computerd relay`, as on a
    // remote engine.
    let (client, _) = connect(&computer, &[("COMPUTER_USE_TUNNEL", "always")]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "execs"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    // As the computer's user, whose processes the agent's code can read
    // (root in the computer lacks CAP_SYS_PTRACE to read other users').
    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "for p in /proc/[0-9]*; do if tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -q '^COMPUTERD_TOKEN=.'; then tr '\\0' ' ' < $p/cmdline; echo; fi; done; echo relays=$(pgrep -fc 'computerd relay')"}),
    )
    .await;
    let out = r["stdout"].as_str().unwrap();
    // The relay carrying this very call runs meanwhile, so the check sees it.
    let relays: u32 = out
        .rsplit_once("relays=")
        .map(|(_, n)| n.trim().parse().unwrap())
        .unwrap();
    assert!(relays >= 1, "{r}");
    assert!(
        out.starts_with("relays="),
        "processes in the computer hold the token: {r}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_commands_never_see_the_token_and_timed_out_sudo_dies() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "hardening"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();

    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "printenv COMPUTERD_TOKEN; tr '\\0' '\\n' </proc/$$/environ | grep -c '^COMPUTERD_TOKEN=' ; true"}),
    )
    .await;
    assert_eq!(r["stdout"], "0\n", "{r}");
    // Nor is it in the first environment of computerd (the shell's parent)
    // or of the container's first process, which /proc shows for their
    // whole lives.
    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n' | grep -c '^COMPUTERD_TOKEN=' ; true"}),
    )
    .await;
    assert_eq!(r["stdout"], "0\n", "{r}");

    let (r, result) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "sudo sh -c 'trap \"\" HUP TERM; sleep 300'", "timeout": 2}),
    )
    .await;
    assert_eq!(r["timed_out"], true, "{r}");
    let said = text(&result);
    assert!(
        said.starts_with("timed out and was killed with everything it started"),
        "{said}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (r, _) = ok(
            &client,
            "shell",
            json!({"session_id": sid, "command": "pgrep -u root -x sleep || true"}),
        )
        .await;
        if r["stdout"] == "" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "root's sleep outlived the timeout by 10 s: pids {}",
            r["stdout"]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    client.cancel().await.ok();
}

/// Every proxy variable points at a listener of the test's own: the tools
/// still work (computerd is reached straight on loopback) and the listener
/// never sees a connection, so neither the token nor any data went there.
#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_in_the_environment_sees_nothing_and_the_tools_still_work() {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").expect("proxy listener");
    proxy.set_nonblocking(true).expect("nonblocking listener");
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let vars = [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ];
    let env: Vec<(&str, &str)> = vars.iter().map(|v| (*v, proxy_url.as_str())).collect();
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &env).await;
    let (started, _) = ok(
        &client,
        "start_computer",
        json!({"title": "behind a proxy"}),
    )
    .await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    ok(&client, "computer_observe", json!({"session_id": sid})).await;
    let (r, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo through"}),
    )
    .await;
    assert_eq!(r["stdout"], "through\n", "{r}");
    let upload = tempfile::tempdir().unwrap();
    std::fs::write(upload.path().join("note.txt"), "no proxy\n").unwrap();
    ok(
        &client,
        "file_transfer",
        json!({"session_id": sid, "direction": "to_computer",
               "host_path": upload.path().join("note.txt"), "computer_path": "~"}),
    )
    .await;
    let (r, _) = ok(
        &client,
        "read_file",
        json!({"session_id": sid, "path": "~/note.txt"}),
    )
    .await;
    assert!(r.to_string().contains("no proxy"), "{r}");
    client.cancel().await.ok();
    match proxy.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("the proxy was contacted by {peer}"),
        Err(e) => panic!("accept on the proxy listener failed: {e}"),
    }
}
