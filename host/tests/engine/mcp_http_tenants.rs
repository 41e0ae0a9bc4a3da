//! What an HTTP client of a server with tenants may reach: with
//! `COMPUTER_USE_HTTP_TENANTS` only its own tenant's computer and home, a
//! bad tenants file refused, one tenant past its share leaving the other
//! served; and the listener's own limits: a request head that never ends is
//! cut off, and connections past the cap wait in the kernel instead of
//! holding the server's descriptors. The real host binary over HTTP,
//! against the real engine.

use crate::mcp_http_trust::{on_computer, transfer, ALICE, BOB};
use crate::support::docker::{exists, inspect, inspect_network, TestComputer};
use crate::support::mcp::{host_command, ok, refused, shell_ok, start_session, HttpHost};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use test_support::wait_until_holds;

/// A tenants file of `lines`, mode 0600.
fn tenants_file(dir: &Path, lines: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tenants");
    std::fs::write(&path, lines).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// A tenant's home is labelled with its token's key: the same name with
/// another token (someone new) does not open it, and the refusal says how
/// the operator gives it back to the same person.
#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_name_given_a_new_token_does_not_open_the_old_home() {
    let computer = TestComputer::with_port_blocks(2);
    let _alice_computer = computer.tenant("alice");
    let dir = tempfile::tempdir().unwrap();
    let serve = |lines: String| {
        let file = tenants_file(dir.path(), &lines);
        let computer = &computer;
        async move {
            HttpHost::start(
                computer,
                &[("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap())],
            )
            .await
        }
    };

    let host = serve(format!("alice {ALICE}\n")).await;
    let alice = host.client_as(ALICE).await;
    let (started, _) = ok(&alice, "start_computer", json!({"title": "first"})).await;
    let sid = started["session_id"].as_str().unwrap();
    ok(
        &alice,
        "write_file",
        json!({"session_id": sid, "path": "~/mine.txt", "content": "first alice"}),
    )
    .await;
    drop(alice);
    drop(host);

    // The name goes to someone else.
    let host = serve(format!("alice {BOB}\n")).await;
    let newcomer = host.client_as(BOB).await;
    let e = refused(&newcomer, "start_computer", json!({"title": "second"})).await;
    let key: String = computer_protocol::handoff::handback_digest(ALICE)
        .chars()
        .take(16)
        .collect();
    assert!(
        e.contains("made for another token")
            && e.contains(&format!("COMPUTER_USE_TENANT_HOME={key}")),
        "{e}"
    );
    drop(newcomer);
    drop(host);

    // The operator says it is the same person: the home is theirs again.
    let host = serve(format!("alice {BOB} COMPUTER_USE_TENANT_HOME={key}\n")).await;
    let same = host.client_as(BOB).await;
    let (started, _) = ok(&same, "start_computer", json!({"title": "third"})).await;
    let sid = started["session_id"].as_str().unwrap();
    let (read, _) = ok(
        &same,
        "read_file",
        json!({"session_id": sid, "path": "~/mine.txt"}),
    )
    .await;
    assert!(read.to_string().contains("first alice"), "{read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tenants_get_two_computers_and_neither_reaches_the_other() {
    // The base's block and the two after it, where the tenants' computers go.
    let computer = TestComputer::with_port_blocks(3);
    let (alice_computer, bob_computer) = (computer.tenant("alice"), computer.tenant("bob"));
    let dir = tempfile::tempdir().unwrap();
    let file = tenants_file(
        dir.path(),
        &format!("# two people\nalice {ALICE}\nbob {BOB}\n"),
    );
    let root = dir.path().join("files");
    std::fs::create_dir(&root).unwrap();
    let host = HttpHost::start(
        &computer,
        &[
            ("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap()),
            ("COMPUTER_USE_TRANSFER_ROOT", root.to_str().unwrap()),
        ],
    )
    .await;
    // The tenants' folders exist from the start, private to the server.
    std::fs::write(root.join("alice/report.txt"), "alice's report").unwrap();

    let alice = host.client_as(ALICE).await;
    let bob = host.client_as(BOB).await;
    let (a, _) = ok(&alice, "start_computer", json!({"title": "alice"})).await;
    let (b, _) = ok(&bob, "start_computer", json!({"title": "bob"})).await;
    assert_eq!(a["computer"]["name"], alice_computer.name);
    assert_eq!(b["computer"]["name"], bob_computer.name);
    assert!(
        !exists(&computer.name),
        "no computer for the base name itself"
    );
    let (a_sid, b_sid) = (
        a["session_id"].as_str().unwrap(),
        b["session_id"].as_str().unwrap(),
    );

    // Two containers, two homes, two port blocks, two viewer links.
    let port_base = |name: &str| -> u16 {
        inspect_network(name)["HostConfig"]["PortBindings"]["6080/tcp"][0]["HostPort"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let home = |name: &str| -> String {
        inspect(name)["Mounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["Destination"] == "/home/computer")
            .map(|m| m["Name"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(home(&alice_computer.name), alice_computer.volume());
    assert_eq!(home(&bob_computer.name), bob_computer.volume());
    let (pa, pb) = (
        port_base(&alice_computer.name),
        port_base(&bob_computer.name),
    );
    assert!(
        pa.abs_diff(pb) >= 17 && pa > computer.port_base && pb > computer.port_base,
        "{pa} {pb}"
    );
    assert_ne!(a["viewer_url"], b["viewer_url"]);
    // Their default memory is a share of the engine's 75% each, not 75% each.
    let engine: u64 = crate::support::docker::docker(&["info", "-f", "{{.MemTotal}}"])
        .parse()
        .unwrap();
    let memory = |name: &str| inspect(name)["HostConfig"]["Memory"].as_u64().unwrap();
    let together = memory(&alice_computer.name) + memory(&bob_computer.name);
    assert!(
        together <= engine / 4 * 3,
        "the tenants' computers may use {together} bytes of the engine's {engine}"
    );
    // So are their processes: two tenants share one computer's limit.
    let pids = |name: &str| inspect(name)["HostConfig"]["PidsLimit"].as_i64().unwrap();
    assert_eq!(
        (pids(&alice_computer.name), pids(&bob_computer.name)),
        (2048, 2048)
    );
    let key = |v: &Value| {
        v["viewer_url"]
            .as_str()
            .unwrap()
            .split("#key=")
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_ne!(key(&a), key(&b), "each computer makes its own viewer key");

    // Files in one home are not in the other.
    shell_ok(&alice, a_sid, "echo alice-only > ~/mine.txt").await;
    let r = shell_ok(&bob, b_sid, "cat ~/mine.txt 2>&1; echo \" exit=$?\"").await;
    assert!(
        r["stdout"].as_str().unwrap().contains("No such file"),
        "{r}"
    );

    // Bob cannot drive or end Alice's session: to him it does not exist.
    for (tool, args) in [
        ("shell", json!({"session_id": a_sid, "command": "true"})),
        ("computer_observe", json!({"session_id": a_sid})),
        ("end_session", json!({"session_id": a_sid})),
    ] {
        let e = refused(&bob, tool, args).await;
        assert!(e.contains("there is no session"), "{tool}: {e}");
    }
    shell_ok(&alice, a_sid, "true").await;

    // Each tenant's host files are its own folder of the root.
    ok(
        &alice,
        "file_transfer",
        transfer(a_sid, "to_computer", "report.txt", "~/report.txt"),
    )
    .await;
    let theirs = root.join("alice/report.txt");
    for typed in ["../alice/report.txt", theirs.to_str().unwrap()] {
        let e = refused(
            &bob,
            "file_transfer",
            transfer(b_sid, "to_computer", typed, "~/stolen.txt"),
        )
        .await;
        assert!(e.contains("COMPUTER_USE_TRANSFER_ROOT"), "{typed}: {e}");
    }
    assert!(!on_computer(&bob, b_sid, "~/stolen.txt").await);

    // `info` lists the tenants' computers.
    let out = host_command(
        &computer,
        &[("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap())],
    )
    .arg("info")
    .output()
    .await
    .unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("tenants:  2"), "{info}");
    assert!(
        info.contains(&format!(
            "alice: `{}` is running, ports {pa}-",
            alice_computer.name
        )),
        "{info}"
    );
    assert!(
        info.contains(&format!(
            "bob: `{}` is running, ports {pb}-",
            bob_computer.name
        )),
        "{info}"
    );
    assert!(
        !info.contains(ALICE) && !info.contains(BOB),
        "info shows no token: {info}"
    );
}

/// Runs `serve --http` with `env` and expects it to refuse to start.
async fn refuses_to_start(computer: &TestComputer, env: &[(&str, &str)]) -> String {
    let out = host_command(computer, env)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success(), "the server started with {env:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tenants_file_others_may_read_or_a_bad_line_refuses_the_start() {
    use std::os::unix::fs::PermissionsExt;
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = tenants_file(dir.path(), &format!("alice {ALICE}\n"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = file.to_str().unwrap();
    let e = refuses_to_start(&computer, &[("COMPUTER_USE_HTTP_TENANTS", path)]).await;
    assert!(
        e.contains(path) && e.contains("mode 0644") && e.contains(&format!("chmod 600 {path}")),
        "{e}"
    );

    let file = tenants_file(dir.path(), "alice short-token\n");
    let e = refuses_to_start(
        &computer,
        &[("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap())],
    )
    .await;
    assert!(e.contains("line 1") && e.contains("fewer than 32"), "{e}");

    let file = tenants_file(dir.path(), &format!("alice {ALICE}\n"));
    let both = [
        ("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap()),
        ("COMPUTER_USE_HTTP_TOKEN", BOB),
    ];
    let e = refuses_to_start(&computer, &both).await;
    assert!(e.contains("unset the other"), "{e}");
}

/// How long the server may take to accept connections, and how often the
/// test looks: a check reads a `/proc` file.
const ACCEPT_LIMIT: Duration = Duration::from_secs(10);
const ACCEPT_CHECK_EVERY: Duration = Duration::from_millis(5);

/// Connections the kernel holds for the listening socket on `port` that
/// the server has not accepted (`rx_queue` of a LISTEN entry).
fn accept_queue(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f[1] == local && f[3] == "0A")
        .map(|f| usize::from_str_radix(f[4].split(':').nth(1).unwrap(), 16).unwrap())
        .unwrap_or(0)
}

/// Open descriptors of process `pid`.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfinished_request_head_is_cut_off_and_silent_connections_keep_nobody_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let computer = TestComputer::new();
    let host = HttpHost::start(&computer, &[]).await;
    let addr = host
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();

    // Half a request line, then nothing: closed after the 15 s deadline.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /mcp HT").await.unwrap();
    let sent = Instant::now();
    let mut buf = [0u8; 256];
    let closed = tokio::time::timeout(Duration::from_secs(25), async {
        loop {
            match slow.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the connection was still open 25 s after half a request head"
    );
    assert!(
        sent.elapsed() >= Duration::from_secs(14),
        "closed early: {:?}",
        sent.elapsed()
    );

    // Connections that say nothing prove no token: the server keeps at
    // most 64 of them, closing the oldest as new ones come, so 300 of them
    // hold few descriptors and keep no real client out.
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    let before = open_descriptors(host.pid);
    let mut idle = Vec::new();
    for _ in 0..300 {
        let mut half = tokio::net::TcpStream::connect(&addr).await.unwrap();
        half.write_all(b"POST /mcp HT").await.unwrap();
        idle.push(half);
    }
    wait_until_holds(
        "the server to take all 300, keeping at most 64",
        ACCEPT_LIMIT,
        ACCEPT_CHECK_EVERY,
        || accept_queue(port) == 0 && open_descriptors(host.pid) <= before + 64 + 2,
    )
    .await;
    let served = Instant::now();
    let client = host.client().await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    assert!(
        served.elapsed() < Duration::from_secs(5),
        "a real client waited {:?} behind connections that proved no token",
        served.elapsed()
    );
    drop(client);
    drop(idle);

    // Once they are gone, a real client is served.
    let client = host.client().await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_opens_on_the_servers_desktop_unless_asked() {
    let computer = TestComputer::new();
    // `COMPUTER_USE_OPEN` unset (empty reads as unset), as a server's
    // environment leaves it.
    let host = HttpHost::start(
        &computer,
        &[
            ("COMPUTER_USE_OPEN", ""),
            ("COMPUTER_USE_LOG", "warn,computer_use_mcp::open=debug"),
        ],
    )
    .await;
    let client = host.client().await;
    let sid = start_session(&client, "someone else's desktop").await;
    // The first observation is where a stdio server opens the viewer.
    ok(
        &client,
        "computer_observe",
        serde_json::json!({"session_id": sid, "view": "text", "max_nodes": 1}),
    )
    .await;
    wait_until_holds(
        "the server to say it opens nothing",
        Duration::from_secs(10),
        Duration::from_millis(50),
        || {
            host.log
                .lock()
                .unwrap()
                .iter()
                .any(|line| line.contains("`COMPUTER_USE_OPEN` is `none`, so no viewer opens"))
        },
    )
    .await;
    client.cancel().await.ok();
}

/// `initialize` as a raw request of `token`: its HTTP status.
async fn initialize_as(http: &reqwest::Client, url: &str, token: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"}}});
    http.post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn one_tenant_past_its_share_leaves_the_other_served() {
    use tokio::io::AsyncWriteExt;
    let computer = TestComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = tenants_file(dir.path(), &format!("alice {ALICE}\nbob {BOB}\n"));
    let host = HttpHost::start(
        &computer,
        &[("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap())],
    )
    .await;
    let addr = host
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let bob = host.client_as(BOB).await;
    let bob_answers = |what: &'static str| {
        let bob = &bob;
        async move {
            let started = Instant::now();
            let tools = tokio::time::timeout(Duration::from_secs(5), bob.list_all_tools())
                .await
                .unwrap_or_else(|_| panic!("bob waited over 5 s {what}"))
                .unwrap();
            assert!(!tools.is_empty());
            started.elapsed()
        }
    };

    // Alice holds 300 requests open (a head with her token, a body that
    // never comes): past her share (256 / 2 tenants) each is answered 429.
    // They name a session, so they hold connections, not session slots.
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..300 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: held\r\nContent-Length: 1000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        held.push(stream);
    }
    let answers = futures::future::join_all(held.iter_mut().map(|stream| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buf)).await {
            Ok(Ok(n)) => buf[..n].starts_with(b"HTTP/1.1 429"),
            _ => false,
        }
    }))
    .await;
    refused += answers.iter().filter(|r| **r).count();
    assert_eq!(
        refused,
        300 - 128,
        "alice's connections past her share of 128"
    );
    bob_answers("while alice held her share of connections").await;
    drop(held);

    // Alice opens MCP sessions in a loop: past 64 she gets 429; bob is
    // still served, and his own sessions are his.
    let http = reqwest::Client::new();
    let mut statuses = std::collections::BTreeMap::new();
    for _ in 0..300 {
        *statuses
            .entry(initialize_as(&http, &host.url, ALICE).await)
            .or_insert(0) += 1;
    }
    assert_eq!(statuses.get(&200), Some(&64), "{statuses:?}");
    assert_eq!(statuses.get(&429), Some(&(300 - 64)), "{statuses:?}");
    bob_answers("while alice held all her MCP sessions").await;
    assert_eq!(initialize_as(&http, &host.url, BOB).await, 200);
}
