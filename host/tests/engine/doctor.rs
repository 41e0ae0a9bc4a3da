//! `computer-use-mcp doctor`: the real binary against a real engine and a
//! real computer of each test's own, and `start_computer`'s error pointing
//! at it when Docker is gone.

use crate::support::docker::{image, TestComputer};
use crate::support::mcp::{connect, host_bin, live_sessions, refused};
use computer_use_mcp::docker::fix::{ENGINE_UNREACHABLE, RUN_DOCTOR};
use computer_use_mcp::docker::{ensure_computer, resolve_endpoint};
use computer_use_mcp::settings::ComputerSettings;
use serde_json::{json, Value};
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs `doctor ARGS` for `computer` with `extra` variables; returns its
/// output and how long it took.
async fn doctor(
    computer: &TestComputer,
    args: &[&str],
    extra: &[(&str, &str)],
) -> (Output, Duration) {
    let mut cmd = tokio::process::Command::new(host_bin());
    cmd.arg("doctor")
        .args(args)
        .env("COMPUTER_USE_NAME", &computer.name)
        .env("COMPUTER_USE_PORT_BASE", computer.port_base.to_string())
        .env("COMPUTER_USE_IMAGE", image())
        .kill_on_drop(true);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("doctor ends within 120 s")
        .expect("doctor runs");
    (out, started.elapsed())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn shown(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The checks of a `--json` run, each with exactly the four fields.
fn json_checks(out: &Output) -> Vec<Value> {
    let v: Value = serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("--json prints one JSON object ({e}):\n{}", shown(out)));
    let object = v.as_object().expect("an object");
    assert_eq!(object.keys().collect::<Vec<_>>(), vec!["checks"], "{v}");
    let checks = v["checks"].as_array().expect("checks is a list").clone();
    for c in &checks {
        let mut keys: Vec<&String> = c
            .as_object()
            .expect("a check is an object")
            .keys()
            .collect();
        keys.sort();
        assert_eq!(keys, vec!["detail", "fix", "name", "status"], "{c}");
        let status = c["status"].as_str().expect("status");
        assert!(["ok", "warn", "err"].contains(&status), "{c}");
        assert!(c["name"].as_str().is_some_and(|n| !n.is_empty()), "{c}");
        assert!(c["detail"].as_str().is_some_and(|d| !d.is_empty()), "{c}");
        match status {
            "ok" => assert!(c["fix"].is_null(), "{c}"),
            _ => assert!(c["fix"].as_str().is_some_and(|f| !f.is_empty()), "{c}"),
        }
    }
    checks
}

fn status_of<'a>(checks: &'a [Value], name: &str) -> &'a str {
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no `{name}` check in {checks:?}"))["status"]
        .as_str()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn green_on_a_working_machine_as_text_and_json() {
    let t = TestComputer::new();
    let env = t.env();
    let settings = ComputerSettings::from_env(&env).unwrap();
    ensure_computer(&settings, &resolve_endpoint(&env).unwrap())
        .await
        .expect("the computer starts");

    let (out, took) = doctor(&t, &[], &[]).await;
    eprintln!("plain doctor took {took:?}:\n{}", stdout(&out));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = stdout(&out);
    assert!(!text.lines().any(|l| l.starts_with("err")), "{text}");
    for name in [
        "settings",
        "docker-endpoint",
        "docker-engine",
        "docker-disk",
        "image",
        "snapshots",
        "computer",
        "ports",
        "computerd",
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "no `{name}` line in:\n{text}"
        );
    }
    assert!(text.contains(&format!("`{}` is running", t.name)), "{text}");
    assert!(took < Duration::from_secs(10), "a plain run took {took:?}");

    let (out, _) = doctor(&t, &["--json"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let checks = json_checks(&out);
    assert_eq!(status_of(&checks, "computerd"), "ok", "{checks:?}");
    assert_eq!(status_of(&checks, "docker-engine"), "ok", "{checks:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_docker_host_exits_1_naming_docker_and_the_fix() {
    let t = TestComputer::new();
    let socket = format!("unix:///tmp/cu-doctor-{}-nothing.sock", t.name);
    let (out, took) = doctor(&t, &[], &[("DOCKER_HOST", &socket)]).await;
    eprintln!("doctor on a dead socket took {took:?}:\n{}", stdout(&out));
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let text = stdout(&out);
    let engine = text
        .lines()
        .position(|l| l.starts_with("err") && l.contains("docker-engine"))
        .unwrap_or_else(|| panic!("no err line for the engine:\n{text}"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[engine].contains(&format!(
            "cannot reach the Docker engine at `{socket}` (from DOCKER_HOST)"
        )),
        "{text}"
    );
    assert!(
        lines[engine + 1].trim_start().starts_with("fix:")
            && lines[engine + 1].ends_with(ENGINE_UNREACHABLE),
        "{text}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");

    let (out, _) = doctor(&t, &["--json"], &[("DOCKER_HOST", &socket)]).await;
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let checks = json_checks(&out);
    let engine = checks
        .iter()
        .find(|c| c["name"] == "docker-engine")
        .unwrap();
    assert_eq!(engine["status"], "err");
    assert_eq!(engine["fix"], json!(ENGINE_UNREACHABLE));
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_starts_the_computer_checks_a_spare_screen_and_ends_it() {
    let t = TestComputer::new();
    let (out, took) = doctor(&t, &["--deep", "--json"], &[]).await;
    eprintln!("doctor --deep took {took:?}:\n{}", stdout(&out));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let checks = json_checks(&out);
    assert!(checks.iter().all(|c| c["status"] != "err"), "{checks:#?}");
    for name in [
        "computer-start",
        "spare-screen",
        "screenshot",
        "browser",
        "devtools",
        "accessibility",
        "viewer-page",
        "viewer-websocket",
        "vnc",
        "cleanup",
    ] {
        assert_eq!(status_of(&checks, name), "ok", "{checks:#?}");
    }
    assert!(took < Duration::from_secs(60), "a deep run took {took:?}");
    let left: Vec<Value> = live_sessions(&t)
        .await
        .into_iter()
        .filter(|s| {
            s["owner"]
                .as_str()
                .is_some_and(|o| o.starts_with("doctor-"))
        })
        .collect();
    assert!(left.is_empty(), "doctor's session is still there: {left:?}");

    // Again on the computer it left running: nothing to start this time.
    let (out, took) = doctor(&t, &["--deep", "--json"], &[]).await;
    eprintln!("doctor --deep on a running computer took {took:?}");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let checks = json_checks(&out);
    assert!(
        checks.iter().all(|c| c["name"] != "computer-start"),
        "{checks:#?}"
    );
    assert_eq!(status_of(&checks, "vnc"), "ok", "{checks:#?}");
    assert!(live_sessions(&t).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn start_computer_on_a_dead_docker_host_ends_with_the_doctor_fix() {
    let t = TestComputer::new();
    let socket = format!("unix:///tmp/cu-doctor-{}-nothing.sock", t.name);
    let (client, _) = connect(&t, &[("DOCKER_HOST", &socket)]).await;
    let error = refused(&client, "start_computer", json!({"title": "dead docker"})).await;
    assert!(
        error.contains(&format!("cannot reach the Docker engine at `{socket}`")),
        "{error}"
    );
    assert!(
        error.ends_with(&format!("; {ENGINE_UNREACHABLE}; {RUN_DOCTOR}")),
        "{error}"
    );
    assert!(error.contains("`computer-use-mcp doctor`"), "{error}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_taken_port_is_an_err_with_the_start_computer_fix() {
    use computer_use_mcp::docker::fix::PORT_TAKEN;
    let t = TestComputer::new();
    let taken = t.port_base + 5;
    let _holder = std::net::TcpListener::bind(("127.0.0.1", taken)).expect("the port is free");
    let (out, _) = doctor(&t, &["--json"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let checks = json_checks(&out);
    let ports = checks.iter().find(|c| c["name"] == "ports").unwrap();
    assert_eq!(ports["status"], "err", "{ports}");
    assert!(
        ports["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("host port {taken} on 127.0.0.1 is taken")),
        "{ports}"
    );
    assert_eq!(ports["fix"], json!(PORT_TAKEN));
}

#[tokio::test]
async fn help_lists_doctor_and_a_bad_flag_is_refused() {
    let help = tokio::process::Command::new(host_bin())
        .arg("--help")
        .output()
        .await
        .expect("--help runs");
    assert!(
        stdout(&help).contains("computer-use-mcp doctor [--json] [--deep]"),
        "{}",
        shown(&help)
    );
    let bad = tokio::process::Command::new(host_bin())
        .args(["doctor", "--fix"])
        .output()
        .await
        .expect("doctor runs");
    assert_eq!(bad.status.code(), Some(2), "{}", shown(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("`doctor` takes `--json` and `--deep`, not `--fix`"));
}
