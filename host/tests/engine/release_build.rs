//! The release build of the host binary, as `cargo install` and the release
//! archives ship it: without COMPUTER_USE_IMAGE it uses the image of its own
//! version on ghcr.io and pulls it when missing, and as no registry is
//! reachable here, `start_computer` fails with the pull error that names the
//! image and the login to run. With COMPUTER_USE_IMAGE pointing at the dev
//! image it starts the computer and works like a dev build.
//!
//! The binary is `COMPUTER_USE_TEST_RELEASE_BIN`, or else
//! `target/release/computer-use-mcp` (`cargo build --release -p
//! computer-use-mcp`). What these tests check hangs on one thing only, the
//! build's `debug_assertions` cfg (`host/src/version.rs`), so
//! `scripts/test.sh` hands them a host built with the test build's
//! dependencies and that cfg off instead of a second, optimised build of
//! every dependency. The other MCP tests run against a release binary with
//! `COMPUTER_USE_TEST_HOST_BIN=target/release/computer-use-mcp`.

use crate::support::docker::{exists, image, require_docker, TestComputer};
use crate::support::mcp::{call, is_error, ok, text, Client};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// What the release binary pulls: `ghcr.io/<owner>/computer-use-mcp:<version>`.
const RELEASE_IMAGE: &str = concat!(
    "ghcr.io/falleng0d/computer-use-mcp:",
    env!("CARGO_PKG_VERSION")
);

/// `COMPUTER_USE_TEST_RELEASE_BIN`, or `target/release/computer-use-mcp`
/// beside this build's binary, failing loudly when it is missing or older
/// than the sources it is built from.
fn release_bin() -> PathBuf {
    let this_build = Path::new(env!("CARGO_BIN_EXE_computer-use-mcp"));
    let bin = std::env::var_os("COMPUTER_USE_TEST_RELEASE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let profile_dir = this_build
                .parent()
                .expect("the binary is in a profile folder");
            profile_dir
                .parent()
                .expect("the profile folder is in the target folder")
                .join("release")
                .join(this_build.file_name().unwrap())
        });
    let build = "build it with `cargo build --release -p computer-use-mcp` (scripts/test.sh builds its own)";
    let built = std::fs::metadata(&bin)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| {
            panic!(
                "the release host binary `{}` is missing; {build}",
                bin.display()
            )
        });
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let sources = [
        workspace.join("host/src"),
        workspace.join("protocol/src"),
        workspace.join("host/Cargo.toml"),
        workspace.join("protocol/Cargo.toml"),
        workspace.join("Cargo.toml"),
        workspace.join("Cargo.lock"),
    ];
    if let Some(newer) = sources.iter().find_map(|p| newer_than(p, built)) {
        panic!(
            "the release host binary `{}` is older than `{}`; {build}",
            bin.display(),
            newer.display()
        );
    }
    bin
}

/// A file at or under `path` modified after `time`.
fn newer_than(path: &Path, time: SystemTime) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        std::fs::read_dir(path)
            .ok()?
            .flatten()
            .find_map(|entry| newer_than(&entry.path(), time))
    } else {
        (meta.modified().ok()? > time).then(|| path.to_path_buf())
    }
}

/// The release binary for `computer`, without COMPUTER_USE_IMAGE unless
/// `image` is given.
async fn connect_release(computer: &TestComputer, image: Option<&str>) -> Client {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let mut cmd = tokio::process::Command::new(release_bin());
    cmd.env("COMPUTER_USE_NAME", &computer.name)
        .env("COMPUTER_USE_PORT_BASE", computer.port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        .env_remove("COMPUTER_USE_IMAGE");
    if let Some(image) = image {
        cmd.env("COMPUTER_USE_IMAGE", image);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the release computer-use-mcp starts");
    ().serve(transport).await.expect("MCP handshake")
}

#[test]
fn info_of_the_release_build_names_the_ghcr_image_of_its_version() {
    require_docker();
    let out = Command::new(release_bin())
        .arg("info")
        .env("COMPUTER_USE_NAME", "cu-test-release-info")
        .env_remove("COMPUTER_USE_IMAGE")
        .output()
        .expect("the release binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "info failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(&format!(
            "computer-use-mcp {} (release build)\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "image:    {RELEASE_IMAGE} (not present; start_computer pulls it)"
        )),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn start_computer_without_an_image_setting_fails_with_the_ghcr_pull_error() {
    let computer = TestComputer::new();
    let client = connect_release(&computer, None).await;
    let result = call(&client, "start_computer", json!({"title": "release pull"})).await;
    let message = text(&result);
    assert!(is_error(&result), "start_computer succeeded: {message}");
    assert!(
        message.contains(&format!("cannot pull the image `{RELEASE_IMAGE}`")),
        "{message}"
    );
    assert!(
        message.contains("docker login ghcr.io -u <github-user>")
            && message.contains("read:packages")
            && message.contains("COMPUTER_USE_IMAGE"),
        "the error names the login and the setting: {message}"
    );
    assert!(
        !exists(&computer.name),
        "no container is created without its image"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_release_build_runs_the_computer_on_the_image_it_is_given() {
    let computer = TestComputer::new();
    let client = connect_release(&computer, Some(&image())).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "release run"})).await;
    let sid = started["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let (shell, _) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo from-release"}),
    )
    .await;
    assert_eq!(shell["exit_code"], 0, "{shell}");
    assert_eq!(
        shell["stdout"].as_str().map(str::trim),
        Some("from-release")
    );
    ok(&client, "end_session", json!({"session_id": sid})).await;
    client.cancel().await.unwrap();
}
