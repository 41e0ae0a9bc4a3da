//! `info` against a real Docker engine: what it prints for a missing,
//! stopped and running computer, and when Docker cannot be reached.

use crate::support::docker::{image, TestComputer};
use computer_use_mcp::docker::{ensure_computer, resolve_endpoint, ComputerState};
use computer_use_mcp::info::gather_from;
use computer_use_mcp::settings::{process_env, ComputerSettings};

#[tokio::test]
async fn reports_missing_stopped_and_running_with_the_viewer_link() {
    let t = TestComputer::new();
    let env = t.env();

    let info = gather_from(&env).await;
    let text = info.to_string();
    assert_eq!(
        info.computer.state(),
        Some(ComputerState::Missing),
        "{text}"
    );
    assert!(
        text.starts_with(&format!(
            "computer-use-mcp {} (dev build)\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("image:    {} (present, version ", image())),
        "{text}"
    );
    assert!(text.contains("docker:   `"), "{text}");
    assert!(
        text.contains("network:  open (the public internet); never another computer"),
        "info shows the network policy: {text}"
    );
    assert!(
        text.contains(&format!(
            "computer: `{}` does not exist; start_computer creates it\n",
            t.name
        )),
        "{text}"
    );

    let settings = ComputerSettings::from_env(&env).unwrap();
    let endpoint = resolve_endpoint(&env).unwrap();
    let computer = ensure_computer(&settings, &endpoint).await.unwrap();
    let key = computer.viewer_key.clone().unwrap();
    let key = key.expose();

    let info = gather_from(&env).await;
    let text = info.to_string();
    assert_eq!(
        info.computer.state(),
        Some(ComputerState::Running),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "computer: `{}` is running, image version ",
            t.name
        )),
        "{text}"
    );
    assert!(text.contains("upgrade:  none pending\n"), "{text}");
    assert!(
        text.contains(&format!(
            "viewer:   http://127.0.0.1:{}/#key={key}\n",
            t.port_base
        )),
        "{text}"
    );

    t.stop();
    let info = gather_from(&env).await;
    let text = info.to_string();
    assert_eq!(
        info.computer.state(),
        Some(ComputerState::Stopped),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "computer: `{}` is stopped (exited), image version ",
            t.name
        )),
        "{text}"
    );
    assert!(!text.contains("viewer:"), "{text}");
}

#[tokio::test]
async fn reports_a_pending_upgrade_of_a_running_older_computer() {
    let t = TestComputer::new();
    t.create_labelled("0.0.1", "info-older-token-0123456789abc");
    crate::support::docker::docker(&["start", &t.name]);
    let text = gather_from(&t.env()).await.to_string();
    assert!(
        text.contains(&format!(
            "computer: `{}` is running, image version 0.0.1\n",
            t.name
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "upgrade:  pending: the computer runs 0.0.1 and this binary is {}; run `docker stop {}` and call start_computer to move it to the new image (files in home stay)\n",
            env!("CARGO_PKG_VERSION"),
            t.name
        )),
        "{text}"
    );
}

#[tokio::test]
async fn prints_what_it_knows_when_docker_is_unreachable() {
    // No engine needed: the endpoint points at a socket that does not exist.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("docker.sock");
    let mut env = process_env();
    env.insert("DOCKER_HOST".into(), format!("unix://{}", socket.display()));
    env.insert("COMPUTER_USE_NAME".into(), "cu-test-unreachable".into());
    env.remove("COMPUTER_USE_IMAGE");
    let text = gather_from(&env).await.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(
        lines[0],
        format!("computer-use-mcp {} (dev build)", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        lines[1], "image:    computer-use-mcp:dev",
        "the dev default"
    );
    assert!(
        lines[2].starts_with("network:  open (the public internet)"),
        "{text}"
    );
    assert_eq!(
        lines[3],
        format!(
            "docker:   `unix://{}` (from DOCKER_HOST), over unix socket",
            socket.display()
        )
    );
    assert!(
        lines[4].starts_with(&format!(
            "computer: unknown: cannot reach the Docker engine at `unix://{}` (from DOCKER_HOST):",
            socket.display()
        )),
        "{text}"
    );
}

#[tokio::test]
async fn prints_a_bad_setting_and_still_the_endpoint() {
    let mut env = process_env();
    env.insert("COMPUTER_USE_PORT_BASE".into(), "80".into());
    env.insert("DOCKER_HOST".into(), "ssh://me:secret@box".into());
    let text = gather_from(&env).await.to_string();
    assert!(
        text.contains("settings: `COMPUTER_USE_PORT_BASE` is `80`: use a port from 1024 to 65519"),
        "{text}"
    );
    assert!(
        text.contains("docker:   `ssh://me:secret@box` (from DOCKER_HOST) is not a usable ssh address: a plain-text password is not supported"),
        "{text}"
    );
    assert!(
        text.contains("computer: not checked; fix the problem above first"),
        "{text}"
    );
}
