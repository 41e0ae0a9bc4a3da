//! The computer's lifecycle against a real Docker engine and the real
//! `computer-use-mcp:dev` image: create, start, upgrade, never downgrade,
//! never touch a running computer, and name a taken port.

use crate::support::docker::{
    docker, docker_output, exists, image, inspect, inspect_network, TestComputer,
};
use computer_use_mcp::docker::image::binary_version;
use computer_use_mcp::docker::{ensure_computer, resolve_endpoint, Computer, DockerError, Startup};
use computer_use_mcp::settings::{ComputerSettings, Env};
use std::net::{Ipv4Addr, TcpListener};
use std::time::Instant;

async fn ensure_with(env: &Env) -> Result<Computer, DockerError> {
    let settings = ComputerSettings::from_env(env).expect("test settings are valid");
    let endpoint = resolve_endpoint(env).expect("the test machine's Docker endpoint resolves");
    ensure_computer(&settings, &endpoint).await
}

async fn ensure(t: &TestComputer) -> Computer {
    ensure_with(&t.env())
        .await
        .unwrap_or_else(|e| panic!("ensure_computer `{}` failed: {e}", t.name))
}

async fn health(api_url: &str) -> serde_json::Value {
    let answer = reqwest::get(format!("{api_url}/health"))
        .await
        .expect("health answers");
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

fn env_of(inspect: &serde_json::Value) -> Vec<String> {
    inspect["Config"]["Env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn label(inspect: &serde_json::Value) -> String {
    inspect["Config"]["Labels"]["computer-use.version"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn image_version() -> String {
    docker(&[
        "image",
        "inspect",
        "-f",
        "{{index .Config.Labels \"computer-use.version\"}}",
        &image(),
    ])
}

#[tokio::test]
async fn creates_a_computer_from_nothing() {
    let t = TestComputer::new();
    assert!(!exists(&t.name));
    let started = Instant::now();
    let c = ensure(&t).await;
    eprintln!(
        "timing: create from nothing until healthy: {:?}",
        started.elapsed()
    );

    assert_eq!(c.startup, Startup::Created);
    assert_eq!(c.name, t.name);
    assert_eq!(c.image, image());
    assert_eq!(c.port_base, t.port_base);
    assert!(!c.upgrade_pending);
    let token = c.token.expose();
    assert!(token.len() >= 32 && token.chars().all(|ch| ch.is_ascii_alphanumeric()));

    let i = inspect(&t.name);
    assert_eq!(i["Id"].as_str().unwrap(), c.id);
    assert_eq!(i["State"]["Status"], "running");

    // Every published port, configured and live, is on 127.0.0.1 only, and
    // published by the network guard whose namespace the computer joined.
    let network = inspect_network(&t.name);
    assert_eq!(
        i["HostConfig"]["NetworkMode"],
        format!("container:{}", network["Id"].as_str().unwrap())
    );
    assert_eq!(network["Name"], format!("/{}-network", t.name));
    for key in ["HostConfig", "NetworkSettings"] {
        let map = if key == "HostConfig" {
            &network["HostConfig"]["PortBindings"]
        } else {
            &network["NetworkSettings"]["Ports"]
        };
        let map = map.as_object().unwrap();
        assert_eq!(map.len(), 18, "{key}: {map:?}");
        for (port, bindings) in map {
            for b in bindings.as_array().unwrap() {
                assert_eq!(b["HostIp"], "127.0.0.1", "{key} {port}: {b}");
            }
        }
    }
    let host_port = |container: &str| -> u16 {
        network["NetworkSettings"]["Ports"][container][0]["HostPort"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(host_port("6080/tcp"), t.port_base);
    assert_eq!(host_port("5901/tcp"), t.port_base + 1);
    assert_eq!(host_port("5916/tcp"), t.port_base + 16);
    assert_eq!(
        c.api_url,
        format!("http://127.0.0.1:{}", host_port("7070/tcp"))
    );

    let env = env_of(&i);
    assert!(
        env.contains(&format!("COMPUTERD_TOKEN={}", c.token.expose())),
        "{env:?}"
    );
    assert!(
        env.contains(&format!("COMPUTER_USE_PORT_BASE={}", t.port_base)),
        "{env:?}"
    );
    assert!(env.contains(&"LANG=en_US.UTF-8".to_string()), "{env:?}");
    assert!(env.contains(&"LC_ALL=en_US.UTF-8".to_string()), "{env:?}");
    let host_zone = iana_time_zone::get_timezone().expect("the test machine has a time zone");
    assert!(env.contains(&format!("TZ={host_zone}")), "{env:?}");

    assert_eq!(label(&i), image_version());
    assert_eq!(c.image_version.as_deref(), Some(image_version().as_str()));
    assert_eq!(i["HostConfig"]["ShmSize"], 2i64 * 1024 * 1024 * 1024);
    let mounts = i["Mounts"].as_array().unwrap();
    assert!(
        mounts.iter().any(|m| m["Type"] == "volume"
            && m["Name"] == t.volume().as_str()
            && m["Destination"] == "/home/computer"),
        "{mounts:?}"
    );

    assert_eq!(health(&c.api_url).await["status"], "ok");
    let key = c.viewer_key.clone().expect("computerd gave its viewer key");
    let key = key.expose();
    assert_eq!(key.len(), 32);
    assert_eq!(
        c.viewer_url(),
        Some(format!("http://127.0.0.1:{}/#key={key}", t.port_base))
    );
}

#[tokio::test]
async fn starts_a_stopped_computer_with_the_same_token() {
    let t = TestComputer::new();
    let first = ensure(&t).await;
    t.stop();
    assert_eq!(inspect(&t.name)["State"]["Status"], "exited");

    let started = Instant::now();
    let again = ensure(&t).await;
    eprintln!(
        "timing: start of a stopped computer until healthy: {:?}",
        started.elapsed()
    );

    assert_eq!(again.startup, Startup::Started);
    assert_eq!(again.id, first.id);
    assert_eq!(again.token, first.token);
    assert_eq!(again.port_base, first.port_base);
    // The key lives in home, so links stay valid across restarts.
    assert_eq!(again.viewer_key, first.viewer_key);
    assert_eq!(health(&again.api_url).await["status"], "ok");

    // A running computer is used as it is.
    let third = ensure(&t).await;
    assert_eq!(third.startup, Startup::AlreadyRunning);
    assert_eq!(third.id, first.id);
    assert_eq!(third.api_url, again.api_url);
}

#[tokio::test]
async fn recreates_a_stopped_older_computer_keeping_home_and_ports() {
    let t = TestComputer::new();
    let old_token = "old-token-0123456789abcdefghij";
    t.create_labelled("0.0.1", old_token);
    let old_id = inspect(&t.name)["Id"].as_str().unwrap().to_string();
    docker(&["start", &t.name]);

    // Running, it is only reported as behind.
    let running = ensure(&t).await;
    assert_eq!(running.startup, Startup::AlreadyRunning);
    assert_eq!(running.id, old_id);
    assert!(running.upgrade_pending);
    assert_eq!(running.token.expose(), old_token);
    docker(&[
        "exec",
        &t.name,
        "sh",
        "-c",
        "echo survived > /home/computer/marker.txt",
    ]);
    t.stop();

    // The user asks for another base; the recreated computer keeps its own.
    let mut env = t.env();
    let other_base = crate::support::docker::free_port_base();
    env.insert("COMPUTER_USE_PORT_BASE".into(), other_base.to_string());
    let started = Instant::now();
    let c = ensure_with(&env)
        .await
        .unwrap_or_else(|e| panic!("recreate failed: {e}"));
    eprintln!(
        "timing: recreate of a stopped older computer until healthy: {:?}",
        started.elapsed()
    );

    assert_eq!(
        c.startup,
        Startup::Recreated {
            previous_version: Some("0.0.1".into())
        }
    );
    assert_ne!(c.id, old_id);
    assert_eq!(c.port_base, t.port_base);
    assert!(!c.upgrade_pending);
    assert_eq!(c.image_version.as_deref(), Some(image_version().as_str()));
    let i = inspect(&t.name);
    assert_eq!(label(&i), image_version());
    assert_eq!(
        inspect_network(&t.name)["NetworkSettings"]["Ports"]["6080/tcp"][0]["HostPort"]
            .as_str()
            .unwrap(),
        t.port_base.to_string()
    );
    assert_eq!(
        docker(&["exec", &t.name, "cat", "/home/computer/marker.txt"]),
        "survived"
    );
    // The viewer key is in home too, so old links still open.
    assert_eq!(c.viewer_key, running.viewer_key);
    assert_eq!(health(&c.api_url).await["status"], "ok");
}

#[tokio::test]
async fn moves_a_stopped_computer_that_owns_its_network_into_a_guards() {
    let t = TestComputer::new();
    // As an earlier version made it: its own namespace, its ports on itself.
    t.create_labelled(&image_version(), "own-network-token-0123456789ab");
    let old_id = inspect(&t.name)["Id"].as_str().unwrap().to_string();
    docker(&["start", &t.name]);
    docker(&[
        "exec",
        &t.name,
        "sh",
        "-c",
        "echo survived > /home/computer/marker.txt",
    ]);
    t.stop();

    let c = ensure(&t).await;
    assert_eq!(
        c.startup,
        Startup::Recreated {
            previous_version: Some(image_version())
        }
    );
    assert_ne!(c.id, old_id);
    assert_eq!(c.port_base, t.port_base);
    let guard = inspect(&format!("{}-network", t.name));
    assert_eq!(
        inspect(&t.name)["HostConfig"]["NetworkMode"],
        format!("container:{}", guard["Id"].as_str().unwrap())
    );
    assert_eq!(
        docker(&["exec", &t.name, "cat", "/home/computer/marker.txt"]),
        "survived"
    );
}

#[tokio::test]
async fn a_computer_and_its_guard_removed_by_hand_are_made_again() {
    let t = TestComputer::new();
    let first = ensure(&t).await;
    let guard = format!("{}-network", t.name);
    let first_guard = inspect(&guard)["Id"].as_str().unwrap().to_string();

    // The computer removed by hand: its guard, left holding the ports, goes.
    docker(&["rm", "-f", &t.name]);
    let second = ensure(&t).await;
    assert_eq!(second.startup, Startup::Created);
    assert_ne!(second.id, first.id);
    assert_eq!(second.port_base, t.port_base);
    let second_guard = inspect(&guard)["Id"].as_str().unwrap().to_string();
    assert_ne!(second_guard, first_guard);

    // The guard removed by hand: the computer cannot run without it, and
    // the error says how to make both again.
    t.stop();
    docker(&["rm", "-f", &guard]);
    let e = ensure_with(&t.env()).await.unwrap_err();
    assert!(matches!(e, DockerError::GuardGone { .. }), "{e:?}");
    assert!(
        e.to_string().contains(&format!(
            "remove the computer with `docker rm -f {}`",
            t.name
        )),
        "{e}"
    );
    docker(&["rm", "-f", &t.name]);
    assert_eq!(ensure(&t).await.startup, Startup::Created);
}

#[tokio::test]
async fn leaves_a_running_older_computer_alone() {
    let t = TestComputer::new();
    t.create_labelled("0.0.1", "older-running-token-0123456789");
    docker(&["start", &t.name]);
    let before = inspect(&t.name);

    let c = ensure(&t).await;
    assert_eq!(c.startup, Startup::AlreadyRunning);
    assert!(c.upgrade_pending);
    assert_eq!(c.image_version.as_deref(), Some("0.0.1"));
    let after = inspect(&t.name);
    assert_eq!(after["Id"], before["Id"]);
    assert_eq!(
        after["State"]["StartedAt"], before["State"]["StartedAt"],
        "it was restarted"
    );
    assert_eq!(label(&after), "0.0.1");
}

#[tokio::test]
async fn never_downgrades_a_newer_computer() {
    let t = TestComputer::new();
    t.create_labelled("99.0.0", "newer-stopped-token-0123456789");
    let id = inspect(&t.name)["Id"].as_str().unwrap().to_string();

    let c = ensure(&t).await;
    assert_eq!(c.startup, Startup::Started);
    assert_eq!(c.id, id);
    assert!(!c.upgrade_pending);
    assert_eq!(c.image_version.as_deref(), Some("99.0.0"));
    assert_eq!(label(&inspect(&t.name)), "99.0.0");
    assert_ne!(binary_version(), "99.0.0");
}

#[tokio::test]
async fn names_a_taken_port_and_the_setting() {
    let t = TestComputer::new();
    let taken = t.port_base + 3;
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, taken)).unwrap();

    let e = ensure_with(&t.env()).await.unwrap_err();
    assert!(
        matches!(e, DockerError::PortTaken { port, .. } if port == taken),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!("host port {taken} on 127.0.0.1 is taken")),
        "{text}"
    );
    assert!(text.contains("COMPUTER_USE_PORT_BASE"), "{text}");
    assert!(!exists(&t.name), "nothing is created when a port is taken");

    // A stopped computer keeps its ports; the error says how to move it.
    // Its network guard holds them while it runs, so it is stopped too.
    drop(listener);
    ensure(&t).await;
    t.stop();
    docker(&["stop", "-t", "1", &format!("{}-network", t.name)]);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, taken)).unwrap();
    let e = ensure_with(&t.env()).await.unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, DockerError::ExistingPortTaken { port, .. } if port == taken),
        "{e:?}"
    );
    assert!(text.contains(&format!("docker rm {}", t.name)), "{text}");
    assert!(text.contains("COMPUTER_USE_PORT_BASE"), "{text}");
    assert_eq!(inspect(&t.name)["State"]["Status"], "exited");
    drop(listener);
}

#[tokio::test]
async fn refuses_a_container_it_did_not_make() {
    let t = TestComputer::new();
    docker(&[
        "create",
        "--name",
        &t.name,
        "--entrypoint",
        "true",
        &image(),
    ]);
    let e = ensure_with(&t.env()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("a container named `{}` exists but was not made by computer-use-mcp (it has no COMPUTERD_TOKEN); set COMPUTER_USE_NAME to another name, or remove that container", t.name)
    );
    assert_eq!(inspect(&t.name)["State"]["Status"], "created");
}

#[tokio::test]
async fn dev_builds_never_pull_a_missing_image() {
    let t = TestComputer::new();
    let mut env = t.env();
    env.insert(
        "COMPUTER_USE_IMAGE".into(),
        "computer-use-mcp:no-such-tag".into(),
    );
    let e = ensure_with(&env).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the image `computer-use-mcp:no-such-tag` does not exist, and dev builds never pull: build it with `just image` (or `bash scripts/build-image.sh`), or set COMPUTER_USE_IMAGE to an image you have; run `computer-use-mcp doctor` to check the whole setup"
    );
    assert!(!exists(&t.name));
    assert!(!docker_output(&["volume", "inspect", &t.volume()])
        .status
        .success());
}

#[tokio::test]
async fn two_servers_starting_at_once_share_one_computer() {
    let t = TestComputer::new();
    let env = t.env();
    let (a, b) = tokio::join!(ensure_with(&env), ensure_with(&env));
    let a = a.unwrap_or_else(|e| panic!("first server: {e}"));
    let b = b.unwrap_or_else(|e| panic!("second server: {e}"));
    assert_eq!(a.id, b.id);
    assert_eq!(a.token, b.token);
    assert_eq!(a.api_url, b.api_url);
    assert!(
        [a.startup.clone(), b.startup.clone()].contains(&Startup::Created),
        "{:?} {:?}",
        a.startup,
        b.startup
    );

    // And again from stopped.
    t.stop();
    let (a, b) = tokio::join!(ensure_with(&env), ensure_with(&env));
    let a = a.unwrap_or_else(|e| panic!("first server after stop: {e}"));
    let b = b.unwrap_or_else(|e| panic!("second server after stop: {e}"));
    assert_eq!(a.id, b.id);
    assert_eq!(a.api_url, b.api_url);
}

#[tokio::test]
async fn says_when_the_computer_stops_while_starting() {
    let t = TestComputer::new();
    // computerd refuses a token this short and exits at once. The label is
    // this binary's version: an older one would be recreated, not started.
    t.create_in_guard_with(env!("CARGO_PKG_VERSION"), "short", &[]);
    let e = ensure_with(&t.env()).await.unwrap_err();
    assert!(matches!(e, DockerError::Exited { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "the computer `{0}` stopped while starting (exit code {1}); its container is still there: see why with `docker logs {0}`",
            t.name,
            inspect(&t.name)["State"]["ExitCode"]
        )
    );
}

#[tokio::test]
async fn says_where_to_look_when_computerd_does_not_answer() {
    let t = TestComputer::new();
    // computerd runs but listens on the container's own loopback, which the
    // published API port does not reach.
    t.create_in_guard_with(
        env!("CARGO_PKG_VERSION"),
        "quiet-token-0123456789abcdef",
        &["COMPUTERD_LISTEN=127.0.0.1:7070"],
    );
    let started = Instant::now();
    let e = ensure_with(&t.env()).await.unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(e, DockerError::Unhealthy { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "computerd in the computer `{}` did not answer `GET http://127.0.0.1:",
            t.name
        )),
        "{text}"
    );
    assert!(text.contains("/health` within 30s ("), "{text}");
    assert!(
        text.ends_with(&format!(
            "the container is running: see its logs with `docker logs {}`",
            t.name
        )),
        "{text}"
    );
    assert!(
        waited.as_secs() >= 30 && waited.as_secs() < 40,
        "{waited:?}"
    );
    assert_eq!(inspect(&t.name)["State"]["Status"], "running");
}

/// The `viewer:` lines of the container's log so far.
fn logged_viewer_lines(name: &str) -> Vec<String> {
    let out = docker_output(&["logs", name]);
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    log.lines()
        .filter(|line| line.starts_with("viewer: "))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_prints_the_viewer_link_and_vnc_password_at_every_start() {
    use crate::support::mcp::{connect, ok};
    let t = TestComputer::new();
    let (client, _) = connect(&t, &[]).await;
    let (started, _) = ok(
        &client,
        "start_computer",
        serde_json::json!({"title": "log line"}),
    )
    .await;
    let link = started["viewer_url"].as_str().unwrap().to_string();
    let key = link.split_once("#key=").expect("a key in the link").1;
    assert_eq!(key.len(), 32, "{key}");
    let line = format!("viewer: {link}  (VNC password: {})", &key[..8]);
    assert_eq!(logged_viewer_lines(&t.name), vec![line.clone()]);

    // The key lives in home, so the next start prints the same line again.
    docker(&["restart", "-t", "5", &t.name]);
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let lines = logged_viewer_lines(&t.name);
        if lines.len() == 2 {
            assert_eq!(lines, vec![line.clone(), line.clone()]);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the restarted computer did not print its viewer line: {lines:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // And start_computer still hands out that link.
    let (again, _) = ok(
        &client,
        "start_computer",
        serde_json::json!({"title": "after restart"}),
    )
    .await;
    assert_eq!(again["viewer_url"], link.as_str(), "{again}");
    client.cancel().await.ok();
}
