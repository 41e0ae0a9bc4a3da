//! The computer's network against root inside it: the real host binary, a
//! real engine, the real image, and an "internet" of the test's own
//! (`scripts/test-internet.sh`: servers on documentation addresses in a
//! network namespace, with a DNS server for `allowed.test` and
//! `denied.test`). Traffic goes only to addresses the test made, loopback,
//! and the engine's bridge.

use crate::support::docker::{
    docker, docker_output, image, inspect, inspect_network, TestComputer,
};
use crate::support::mcp::{connect, ok, shell_ok, start_session, text};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};
use test_support::wait::wait_until;

/// Brings the test's internet up (idempotent, locked) and reads its
/// addresses.
fn internet() -> HashMap<String, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/test-internet.sh");
    let up = Command::new("bash")
        .args([script, "up"])
        .output()
        .expect("bash runs");
    assert!(
        up.status.success(),
        "scripts/test-internet.sh up failed (it needs root, ip and python3): {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let env = Command::new("bash")
        .args([script, "env"])
        .output()
        .expect("bash runs");
    String::from_utf8_lossy(&env.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A server on the engine's machine, on the bridge's gateway address only,
/// that answers every connection with `reply` as an HTTP page and closes.
fn host_server(gateway: &str, reply: &'static str) -> u16 {
    let listener = TcpListener::bind((gateway, 0)).expect("listens on the bridge gateway");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let _ = stream.read(&mut [0u8; 1024]);
            let answer = format!(
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

/// A container beside the computer on the same engine, serving HTTP on
/// 8000: what another tenant's computer looks like on the network.
struct Bystander {
    name: String,
}

impl Bystander {
    fn start(name: &str) -> Bystander {
        let _ = docker_output(&["rm", "-f", name]);
        docker(&[
            "run",
            "-d",
            "--name",
            name,
            "--entrypoint",
            "python3",
            &image(),
            "-m",
            "http.server",
            "8000",
        ]);
        Bystander {
            name: name.to_string(),
        }
    }

    fn address(&self) -> String {
        self.network_setting("IPAddress")
    }

    /// The engine's side of the default bridge: where `host.docker.internal`
    /// points from a computer.
    fn gateway(&self) -> String {
        self.network_setting("Gateway")
    }

    fn network_setting(&self, key: &str) -> String {
        let value = inspect(&self.name)["NetworkSettings"][key]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!value.is_empty(), "`{}` has no {key}", self.name);
        value
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = docker_output(&["rm", "-f", &self.name]);
    }
}

/// `command` in the session's shell: (exit code, stdout and stderr, result).
async fn run(
    client: &crate::support::mcp::Client,
    session: &str,
    command: &str,
) -> (i64, String, Value) {
    let r = shell_ok(client, session, command).await;
    let out = format!(
        "{}{}",
        r["stdout"].as_str().unwrap_or(""),
        r["stderr"].as_str().unwrap_or("")
    );
    (r["exit_code"].as_i64().unwrap_or(-1), out, r)
}

/// `curl` with a short deadline, printing the body and then `code=<http code>`.
fn curl(args: &str) -> String {
    format!("curl -sS -m 5 -w ' code=%{{http_code}}' {args} 2>&1")
}

#[tokio::test(flavor = "multi_thread")]
async fn root_in_the_computer_cannot_leave_its_network_and_the_policy_holds() {
    let net = internet();
    let (allowed_ip, denied_ip, www_ip, dns) = (
        net["INET_ALLOWED_IP"].clone(),
        net["INET_DENIED_IP"].clone(),
        net["INET_WWW_IP"].clone(),
        net["INET_DNS"].clone(),
    );
    let computer = TestComputer::new();
    let bystander = Bystander::start(&format!("{}-bystander", computer.name));
    let gateway = bystander.gateway();
    let open_port = host_server(&gateway, "host port open\n");
    let closed_port = host_server(&gateway, "host port leaked\n");
    let allow = "allowed.test,*.allowed.test,allowed.test:7000";
    let open_port_text = open_port.to_string();
    let policy = [
        ("COMPUTER_USE_EGRESS", "allowlist"),
        ("COMPUTER_USE_EGRESS_ALLOW", allow),
        ("COMPUTER_USE_EGRESS_DNS", dns.as_str()),
        ("COMPUTER_USE_HOST_PORTS", open_port_text.as_str()),
    ];
    let (client, _) = connect(&computer, &policy).await;
    let sid = start_session(&client, "network").await;
    let cert = std::fs::read_to_string(&net["INET_CERT"]).expect("the test internet's certificate");
    ok(
        &client,
        "write_file",
        json!({"session_id": sid, "path": "/tmp/inet.pem", "content": cert}),
    )
    .await;

    // Allowed names work, by HTTP, by HTTPS, and plain TCP by host:port.
    let (_, out, _) = run(&client, &sid, &curl("http://allowed.test/")).await;
    assert!(
        out.contains(&format!("hello from {allowed_ip} host=allowed.test")),
        "{out}"
    );
    let (_, out, _) = run(
        &client,
        &sid,
        &curl("--cacert /tmp/inet.pem https://www.allowed.test/"),
    )
    .await;
    assert!(
        out.contains(&format!("hello from {www_ip} host=www.allowed.test")),
        "{out}"
    );
    let echo = "python3 -c \"import socket; s=socket.create_connection(('allowed.test',7000),3); s.sendall(b'ping'); print(s.recv(10).decode())\"";
    let (_, out, _) = run(&client, &sid, echo).await;
    assert!(out.contains("ping"), "{out}");
    // The one host port named, under its stable name; nothing else of the host.
    let (_, out, _) = run(
        &client,
        &sid,
        &curl(&format!("http://host.docker.internal:{open_port}/")),
    )
    .await;
    assert!(out.contains("host port open"), "{out}");

    // Each escape, as root where root helps, is refused and nothing leaks.
    let leak = |out: &str| {
        out.contains(&format!("hello from {denied_ip}"))
            || out.contains("leaked")
            || out.contains("Directory listing")
    };
    let escapes: Vec<(&str, String)> = vec![
        ("flush the firewall", format!("sudo nft flush ruleset; {}", curl("http://denied.test/"))),
        ("add a route", format!("sudo ip route add {denied_ip}/32 via {gateway} dev eth0; {}", curl(&format!("http://{denied_ip}/")))),
        ("a raw socket", "sudo python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP); print('RAW' + 'OPEN')\"".into()),
        ("a packet socket", "sudo python3 -c \"import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print('RAW' + 'OPEN')\"".into()),
        ("another DNS server", format!("python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); q=bytes.fromhex('abcd01000001000000000000')+b'\\x06denied\\x04test\\x00\\x00\\x01\\x00\\x01'; s.sendto(q, ('{dns}', 53)); a=s.recv(512); print('rcode', a[3] & 15, 'answers', a[7])\"")),
        ("DNS over HTTPS to an address", curl(&format!("-k https://{dns}/dns-query?name=denied.test"))),
        ("a denied host's literal address", curl(&format!("http://{denied_ip}/"))),
        ("/etc/hosts pointing an allowed name at a denied address", format!("echo '{denied_ip} allowed.test' | sudo tee -a /etc/hosts >/dev/null; {}; sudo sh -c 'grep -v allowed.test /etc/hosts > /tmp/hosts; cat /tmp/hosts > /etc/hosts'", curl("http://allowed.test/"))),
        ("an allowed SNI with a denied Host", curl(&format!("--cacert /tmp/inet.pem --resolve allowed.test:443:{denied_ip} -H 'Host: denied.test' https://allowed.test/"))),
        ("IPv6", curl("-6 http://[2001:db8::140]/")),
        ("the bridge gateway", curl(&format!("http://{gateway}:{closed_port}/"))),
        ("another computer's address", curl(&format!("http://{}:8000/", bystander.address()))),
        ("the host's other ports", curl(&format!("http://host.docker.internal:{closed_port}/"))),
        ("a link-local address", curl("http://169.254.169.254/")),
        ("unset proxy variables", format!("env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY {}", curl(&format!("--resolve denied.test:80:{denied_ip} http://denied.test/")))),
        ("a new network namespace", format!("unshare -Urn {}; sudo unshare -n {}", curl(&format!("http://{denied_ip}/")), curl(&format!("http://{denied_ip}/")))),
        ("UDP to a public address", format!("python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2); s.sendto(b'x', ('{denied_ip}', 7000)); print(s.recv(10))\"")),
    ];
    for (what, command) in &escapes {
        let (_, out, _) = run(&client, &sid, command).await;
        assert!(!leak(&out), "{what}: it got through: {out}");
        assert!(!out.contains("RAWOPEN"), "{what}: {out}");
        assert!(
            !out.contains("answers 1"),
            "{what}: the name was answered: {out}"
        );
    }
    // The /etc/hosts and SNI tricks reach the allowed server, never the denied one.
    let (_, out, _) = run(
        &client,
        &sid,
        &curl(&format!(
            "--cacert /tmp/inet.pem --resolve allowed.test:443:{denied_ip} https://allowed.test/"
        )),
    )
    .await;
    assert!(out.contains(&format!("hello from {allowed_ip}")), "{out}");

    // A denied web request says why, names the host and the setting; the
    // shell result lists the denial; a refusal is fast.
    let (_, out, result) = run(
        &client,
        &sid,
        &curl(&format!(
            "--resolve denied.test:80:{denied_ip} http://denied.test/"
        )),
    )
    .await;
    assert!(
        out.contains("code=403")
            && out.contains("denied.test")
            && out.contains("COMPUTER_USE_EGRESS_ALLOW"),
        "{out}"
    );
    let denials = result["network_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        denials
            .iter()
            .any(|d| d.as_str().unwrap_or("").contains("denied.test")),
        "the shell result lists the denial: {result}"
    );
    let timing = format!("python3 -c \"import socket,time; t=time.monotonic()\ntry:\n s=socket.create_connection(('{denied_ip}',22),3); s.recv(1)\nexcept OSError as e: pass\nprint('refused in', int((time.monotonic()-t)*1000), 'ms')\"");
    let started = Instant::now();
    let (_, out, _) = run(&client, &sid, &timing).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "a refusal must not hang: {out}"
    );
    let ms: u64 = out
        .split_whitespace()
        .nth(2)
        .and_then(|w| w.parse().ok())
        .unwrap_or(u64::MAX);
    assert!(ms < 1000, "refused in {ms} ms: {out}");

    // Chromium gets allowed pages; a refused one is named in open_path's result.
    let (opened, _) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "http://chromium.allowed.test/"}),
    )
    .await;
    assert_eq!(opened["ready"], true, "{opened}");
    let denied_page = format!("http://{denied_ip}/");
    let (_, refused_page) = ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": denied_page}),
    )
    .await;
    assert!(
        text(&refused_page).contains(&format!("network denied: {denied_ip}")),
        "{}",
        text(&refused_page)
    );

    // Nobody else reaches into the computer either.
    let computer_ip = inspect_network(&computer.name)["NetworkSettings"]["IPAddress"]
        .as_str()
        .unwrap()
        .to_string();
    let inbound = docker_output(&[
        "exec",
        &bystander.name,
        "curl",
        "-sS",
        "-m",
        "3",
        &format!("http://{computer_ip}:7070/health"),
    ]);
    assert!(
        !inbound.status.success(),
        "another container reached computerd: {}",
        String::from_utf8_lossy(&inbound.stdout)
    );

    // The log: newest first, denials with their rule; denied_only filters.
    let (log, log_result) = ok(
        &client,
        "network_log",
        json!({"session_id": sid, "limit": 500}),
    )
    .await;
    assert_eq!(log["policy"]["mode"], "allowlist", "{log}");
    let entries = log["entries"].as_array().unwrap();
    let has = |host: &str, allowed: bool| {
        entries
            .iter()
            .any(|e| e["host"].as_str() == Some(host) && e["allowed"] == allowed)
    };
    assert!(has("allowed.test", true), "{}", text(&log_result));
    assert!(has("www.allowed.test", true), "{}", text(&log_result));
    let from_chromium = entries
        .iter()
        .find(|e| e["host"] == "chromium.allowed.test")
        .expect("Chromium's page is logged");
    // In the log from its start: Chromium keeps the connection open.
    assert_eq!(from_chromium["allowed"], true, "{from_chromium}");
    assert!(has("denied.test", false), "{}", text(&log_result));
    assert!(entries.iter().any(|e| e["address"] == "169.254.169.254"
        && e["allowed"] == false
        && e["rule"].as_str().unwrap().contains("link-local")));
    let allowed_entry = entries
        .iter()
        .find(|e| e["host"] == "allowed.test" && e["allowed"] == true)
        .unwrap();
    assert!(
        allowed_entry["bytes_in"].as_u64().unwrap() > 0,
        "{allowed_entry}"
    );
    let (denied_log, _) = ok(
        &client,
        "network_log",
        json!({"session_id": sid, "denied_only": true, "limit": 3}),
    )
    .await;
    let denied_entries = denied_log["entries"].as_array().unwrap();
    assert_eq!(denied_entries.len(), 3);
    assert!(denied_entries.iter().all(|e| e["allowed"] == false));
    let refused = crate::support::mcp::refused(
        &client,
        "network_log",
        json!({"session_id": sid, "limit": 501}),
    )
    .await;
    assert!(
        refused.contains("limit") && refused.contains("500"),
        "{refused}"
    );

    // A changed policy applies to the running computer within a second:
    // another server with another list starts using it.
    let wider = format!("{allow},denied.test");
    let (other, _) = connect(
        &computer,
        &[
            ("COMPUTER_USE_EGRESS", "allowlist"),
            ("COMPUTER_USE_EGRESS_ALLOW", wider.as_str()),
            ("COMPUTER_USE_EGRESS_DNS", dns.as_str()),
        ],
    )
    .await;
    let changed = Instant::now();
    start_session(&other, "wider").await;
    let (_, out, _) = run(&client, &sid, &curl("http://denied.test/")).await;
    assert!(
        out.contains(&format!("hello from {denied_ip}")),
        "the wider list applies: {out}"
    );
    println!(
        "a changed list applied within {:?} of start_computer",
        changed.elapsed()
    );

    // `none` reaches nothing, names included; open reaches the internet but
    // still no contained range.
    let (none, _) = connect(
        &computer,
        &[
            ("COMPUTER_USE_EGRESS", "none"),
            ("COMPUTER_USE_EGRESS_DNS", dns.as_str()),
        ],
    )
    .await;
    start_session(&none, "none").await;
    for target in [
        "http://allowed.test/".to_string(),
        format!("http://{allowed_ip}/"),
    ] {
        let (_, out, _) = run(&client, &sid, &curl(&target)).await;
        assert!(
            !out.contains("hello from"),
            "none mode reached {target}: {out}"
        );
    }
    let (open, _) = connect(&computer, &[("COMPUTER_USE_EGRESS_DNS", dns.as_str())]).await;
    start_session(&open, "open").await;
    let (_, out, _) = run(&client, &sid, &curl("http://denied.test/")).await;
    assert!(
        out.contains(&format!("hello from {denied_ip}")),
        "open mode: {out}"
    );
    let (_, out, _) = run(&client, &sid, &curl("http://169.254.169.254/")).await;
    assert!(
        out.contains("code=403") && out.contains("link-local"),
        "open mode is still contained: {out}"
    );
    // Open mode's public connections take the kernel path (no proxy), and
    // the log still has each one with its name, rule and bytes.
    let (_, out, _) = run(
        &client,
        &sid,
        &curl("http://denied.test/bytes/1000000 -o /dev/null"),
    )
    .await;
    assert!(out.contains("code=200"), "{out}");
    let (log, _) = ok(
        &client,
        "network_log",
        json!({"session_id": sid, "limit": 5}),
    )
    .await;
    assert_eq!(log["policy"]["mode"], "open", "{log}");
    let download = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["host"] == "denied.test" && e["port"] == 80)
        .unwrap_or_else(|| panic!("the download is logged: {log}"))
        .clone();
    assert_eq!(download["allowed"], true, "{download}");
    assert_eq!(download["rule"], "COMPUTER_USE_EGRESS=open", "{download}");
    assert_eq!(download["address"], denied_ip.as_str(), "{download}");
    assert!(
        download["bytes_in"].as_u64().unwrap() >= 1_000_000
            && download["bytes_out"].as_u64().unwrap() > 0,
        "the kernel's counters reach the log: {download}"
    );
    // The kernel path opens nothing contained: root's ways to the engine's
    // machine and to other computers still end at the guard in open mode.
    let bystander_page = curl(&format!("http://{}:8000/", bystander.address()));
    for (what, command) in [
        (
            "the bridge gateway",
            curl(&format!("http://{gateway}:{closed_port}/")),
        ),
        ("another computer's address", bystander_page.clone()),
        (
            "the host's other ports",
            curl(&format!("http://host.docker.internal:{closed_port}/")),
        ),
        (
            "flush the firewall",
            format!("sudo nft flush ruleset; {bystander_page}"),
        ),
        ("IPv6", curl("-6 http://[2001:db8::140]/")),
    ] {
        let (_, out, _) = run(&client, &sid, &command).await;
        assert!(
            !out.contains("leaked") && !out.contains("Directory listing"),
            "open mode, {what}: it got through: {out}"
        );
    }

    // Root plants code that runs at the computer's next start, before
    // computerd, and the computer is restarted behind the host's back. The
    // guard owns the network namespace, so its rules already hold then.
    let guard = format!("{}-network", computer.name);
    let guard_id = inspect(&guard)["Id"].as_str().unwrap().to_string();
    let plant = r#"sudo sed -i '2i curl -sS -m 3 -w " code=%{http_code}" http://169.254.169.254/ > /tmp/boot-probe.txt 2>&1 || true' /usr/local/bin/computerd-entrypoint"#;
    run(&client, &sid, plant).await;
    docker(&["restart", "-t", "5", &computer.name]);
    let _ = crate::support::mcp::call(
        &client,
        "shell",
        json!({"session_id": sid, "command": "true"}),
    )
    .await;
    let again = start_session(&client, "after restart").await;
    let (_, out, _) = run(&client, &again, "cat /tmp/boot-probe.txt").await;
    assert!(
        out.contains("code=403") && out.contains("link-local"),
        "code run at boot, before computerd, was contained: {out}"
    );
    assert_eq!(
        inspect(&guard)["Id"].as_str().unwrap(),
        guard_id,
        "the same guard outlived the computer's restart"
    );
    assert_eq!(
        inspect(&computer.name)["HostConfig"]["NetworkMode"],
        format!("container:{guard_id}"),
        "the computer runs in its guard's namespace"
    );
    let (_, out, _) = run(&client, &again, &curl("http://169.254.169.254/")).await;
    assert!(
        out.contains("code=403"),
        "still contained after a restart: {out}"
    );

    // The guard outlives a stopped computer, and the computer cannot start
    // without it: Docker refuses, so it never runs unguarded.
    computer.stop();
    assert_eq!(
        docker(&["inspect", "-f", "{{.State.Running}}", &guard]),
        "true"
    );
    docker(&["stop", "-t", "1", &guard]);
    let refused = docker_output(&["start", &computer.name]);
    assert!(
        !refused.status.success(),
        "the computer started without its guard: {}",
        String::from_utf8_lossy(&refused.stdout)
    );
    // start_computer starts the guard first, then the computer.
    let back = start_session(&client, "guard first").await;
    let (_, out, _) = run(&client, &back, "cat /tmp/boot-probe.txt").await;
    assert!(
        out.contains("code=403"),
        "contained at boot after a start from stopped: {out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_network_settings_are_refused_naming_the_variable() {
    let computer = TestComputer::new();
    for (env, variable) in [
        (
            vec![("COMPUTER_USE_EGRESS", "closed")],
            "COMPUTER_USE_EGRESS",
        ),
        (
            vec![("COMPUTER_USE_EGRESS", "allowlist")],
            "COMPUTER_USE_EGRESS_ALLOW",
        ),
        (
            vec![("COMPUTER_USE_EGRESS_PRIVATE", "10.0.0.0/40")],
            "COMPUTER_USE_EGRESS_PRIVATE",
        ),
        (
            vec![("COMPUTER_USE_HOST_PORTS", "3000,http")],
            "COMPUTER_USE_HOST_PORTS",
        ),
    ] {
        let (client, _) = connect(&computer, &env).await;
        let message =
            crate::support::mcp::refused(&client, "start_computer", json!({"title": "bad"})).await;
        assert!(message.contains(variable), "{message}");
        assert!(
            !crate::support::docker::exists(&computer.name),
            "nothing is created on a bad setting"
        );
    }
}

/// A tenant's own line in the tenants file sets its computer's policy over
/// the server's, and a changed line applies to the running computer
/// without a restart.
#[tokio::test(flavor = "multi_thread")]
async fn a_tenants_own_policy_holds_and_a_changed_file_applies_at_once() {
    use std::os::unix::fs::PermissionsExt;
    const TOKEN: &str = "alice-token-0123456789abcdef0123456789";
    let net = internet();
    let (allowed_ip, denied_ip, dns) = (
        net["INET_ALLOWED_IP"].clone(),
        net["INET_DENIED_IP"].clone(),
        net["INET_DNS"].clone(),
    );
    let computer = TestComputer::with_port_blocks(2);
    let _alice_computer = computer.tenant("alice");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tenants");
    let write = |allow: &str| {
        std::fs::write(
            &file,
            format!(
                "alice {TOKEN} COMPUTER_USE_EGRESS=allowlist COMPUTER_USE_EGRESS_ALLOW={allow}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    write("allowed.test");
    // The server's own settings are open: the tenant's line narrows them.
    let host = crate::support::mcp::HttpHost::start(
        &computer,
        &[
            ("COMPUTER_USE_HTTP_TENANTS", file.to_str().unwrap()),
            ("COMPUTER_USE_EGRESS_DNS", dns.as_str()),
        ],
    )
    .await;
    let alice = host.client_as(TOKEN).await;
    let (started, _) = ok(&alice, "start_computer", json!({"title": "alice"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    let (_, out, _) = run(&alice, &sid, &curl("http://allowed.test/")).await;
    assert!(out.contains(&format!("hello from {allowed_ip}")), "{out}");
    let (_, out, _) = run(&alice, &sid, &curl("http://denied.test/")).await;
    // The resolver answers only allowed names.
    assert!(
        out.contains("Could not resolve host: denied.test"),
        "the tenant's allowlist holds although the server's mode is open: {out}"
    );

    write("allowed.test,denied.test");
    let changed = Instant::now();
    wait_until(
        "the tenant's wider list applies to its running computer",
        Duration::from_secs(10),
        || async {
            let (_, out, _) = run(&alice, &sid, &curl("http://denied.test/")).await;
            out.contains(&format!("hello from {denied_ip}"))
                .then_some(())
        },
    )
    .await;
    println!(
        "a changed tenants file applied within {:?}",
        changed.elapsed()
    );
}

/// A recording's step lists the connections that started during it, as
/// the guard logged them, allowed and denied.
#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_step_shows_the_connections_made_during_it() {
    let net = internet();
    let (allowed_ip, denied_ip, dns) = (
        net["INET_ALLOWED_IP"].clone(),
        net["INET_DENIED_IP"].clone(),
        net["INET_DNS"].clone(),
    );
    let computer = TestComputer::new();
    let (client, _) = connect(
        &computer,
        &[
            ("COMPUTER_USE_EGRESS", "allowlist"),
            ("COMPUTER_USE_EGRESS_ALLOW", "allowed.test"),
            ("COMPUTER_USE_EGRESS_DNS", dns.as_str()),
        ],
    )
    .await;
    let sid = start_session(&client, "recorded network").await;
    ok(
        &client,
        "start_recording",
        json!({"session_id": sid, "task": "network lines"}),
    )
    .await;
    let (_, out, _) = run(&client, &sid, &curl("http://allowed.test/")).await;
    assert!(out.contains(&format!("hello from {allowed_ip}")), "{out}");
    run(&client, &sid, &curl(&format!("http://{denied_ip}/"))).await;
    run(&client, &sid, "true").await;
    let host_dir = tempfile::tempdir().unwrap();
    let (stopped, _) = ok(
        &client,
        "stop_recording",
        json!({"session_id": sid, "host_path": host_dir.path().to_str().unwrap()}),
    )
    .await;
    let package = std::path::PathBuf::from(stopped["path"].as_str().unwrap());
    let data: Value =
        serde_json::from_slice(&std::fs::read(package.join("walkthrough.json")).unwrap()).unwrap();
    let wrong = crate::support::schema::walkthrough_violations(&data);
    assert!(wrong.is_empty(), "walkthrough.json: {wrong:?}");
    let network = |step: usize| -> String {
        data["steps"][step]["network"]
            .as_array()
            .map(|lines| {
                lines
                    .iter()
                    .map(|l| l.as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    assert!(
        network(0).contains(&format!(
            "network allowed: allowed.test ({allowed_ip}:80): COMPUTER_USE_EGRESS_ALLOW allowed.test"
        )),
        "the first shell step: {}",
        data["steps"][0]
    );
    assert!(
        network(1).starts_with(&format!("network denied: {denied_ip} ({denied_ip}:80)")),
        "the second shell step: {}",
        data["steps"][1]
    );
    assert_eq!(
        network(2),
        "",
        "a step that made no connection has no network lines"
    );
}
