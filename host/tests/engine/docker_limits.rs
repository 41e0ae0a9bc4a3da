//! The computer's memory and CPU limits against a real engine and the real
//! image: `COMPUTER_USE_MEMORY` and `COMPUTER_USE_CPUS` become the
//! container's limits, and a process the kernel's out-of-memory killer kills
//! under the limit is reported by the session's next `shell` answer, through
//! the real host binary over MCP.

use crate::support::docker::{docker, exists, inspect, TestComputer};
use crate::support::mcp::{connect, ok, text};
use computer_use_mcp::docker::{ensure_computer, resolve_endpoint};
use computer_use_mcp::settings::ComputerSettings;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;

/// A Python one-liner that takes 1 GiB at once, every page touched.
const HOG: &str = r#"python3 -c "x = b'x' * (1 << 30); print(len(x))""#;

#[tokio::test(flavor = "multi_thread")]
async fn memory_and_cpu_settings_become_the_containers_limits() {
    let t = TestComputer::new();
    let mut env = t.env();
    env.insert("COMPUTER_USE_MEMORY".into(), "768m".into());
    env.insert("COMPUTER_USE_CPUS".into(), "1.5".into());
    let settings = ComputerSettings::from_env(&env).expect("valid settings");
    let endpoint = resolve_endpoint(&env).expect("the test machine's Docker endpoint resolves");
    ensure_computer(&settings, &endpoint)
        .await
        .unwrap_or_else(|e| panic!("ensure_computer `{}` failed: {e}", t.name));
    let host = &inspect(&t.name)["HostConfig"];
    assert_eq!(host["Memory"], json!(768 * MIB), "{host}");
    assert_eq!(host["MemorySwap"], json!(768 * MIB), "{host}");
    assert_eq!(host["NanoCpus"], json!(1_500_000_000u64), "{host}");
}

#[tokio::test(flavor = "multi_thread")]
async fn more_cpus_than_the_engine_has_are_refused_by_name() {
    let cpus: u64 = docker(&["info", "--format", "{{.NCPU}}"])
        .parse()
        .expect("NCPU is a number");
    let t = TestComputer::new();
    let mut env = t.env();
    let asked = (cpus + 1).to_string();
    env.insert("COMPUTER_USE_CPUS".into(), asked.clone());
    let settings = ComputerSettings::from_env(&env).expect("valid settings");
    let endpoint = resolve_endpoint(&env).expect("the test machine's Docker endpoint resolves");
    let error = ensure_computer(&settings, &endpoint)
        .await
        .expect_err("more CPUs than the engine has")
        .to_string();
    assert_eq!(
        error,
        format!("`COMPUTER_USE_CPUS` is `{asked}`: the Docker engine has {cpus} CPUs; use at most `{cpus}`, or `0` for no limit")
    );
    assert!(!exists(&t.name), "a container was created anyway");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oom_kill_is_reported_by_the_next_shell_answer() {
    let computer = TestComputer::new();
    let (client, _) = connect(&computer, &[("COMPUTER_USE_MEMORY", "512m")]).await;
    let (started, _) = ok(&client, "start_computer", json!({"title": "oom"})).await;
    let sid = started["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        inspect(&computer.name)["HostConfig"]["Memory"],
        json!(512 * MIB)
    );

    // The command itself goes past the limit.
    let (r, result) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": HOG, "timeout": 60}),
    )
    .await;
    let said = text(&result);
    assert_ne!(r["exit_code"], json!(0), "{r}");
    assert!(r["oom_kills"].as_u64() >= Some(1), "{r}");
    assert_eq!(r["memory_limit"], json!(512 * MIB), "{r}");
    assert!(
        said.contains("the out-of-memory killer killed 1 process in the computer since this session's previous command: the computer's memory limit is 512 MiB; use less memory at once (fewer parallel jobs, fewer tabs), or raise `COMPUTER_USE_MEMORY`"),
        "{said}"
    );
    if r["exit_code"].is_null() {
        assert!(
            said.starts_with("killed by the out-of-memory killer"),
            "{said}"
        );
    }

    // Each kill is news once.
    let (r, result) = ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": "echo calm"}),
    )
    .await;
    assert_eq!(r["stdout"], "calm\n", "{r}");
    assert!(r.get("oom_kills").is_none(), "{r}");
    assert!(
        !text(&result).contains("out-of-memory"),
        "{}",
        text(&result)
    );

    // A background job killed between calls is reported by the next one.
    ok(
        &client,
        "shell",
        json!({"session_id": sid, "command": format!("(sleep 1; {HOG}) >/dev/null 2>&1 </dev/null & disown")}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let reported: Value = loop {
        let (r, _) = ok(
            &client,
            "shell",
            json!({"session_id": sid, "command": "true"}),
        )
        .await;
        if r["oom_kills"].as_u64() >= Some(1) {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "no shell answer reported the background job's kill within 60 s: {r}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(reported["exit_code"], 0, "{reported}");
    assert_eq!(reported["memory_limit"], json!(512 * MIB), "{reported}");
    client.cancel().await.ok();
}
