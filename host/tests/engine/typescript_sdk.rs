//! The host as the official MCP TypeScript SDK sees it: the real binary over
//! stdio, listed by `host/tests/node/list_tools.mjs`. The SDK compiles every
//! tool's output schema while listing and warns about what JSON Schema does
//! not define, so a clean listing means no client of it prints warnings.

use crate::support::mcp::host_bin;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn the_typescript_sdk_lists_every_tool_without_a_warning() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the MCP TypeScript SDK is missing: run `npm ci --prefix host/tests/node` (scripts/test-setup.sh does)"
    );
    let mut child = std::process::Command::new("node")
        .arg(dir.join("list_tools.mjs"))
        .arg(host_bin())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node runs (apt-get install nodejs)");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("node's status").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the TypeScript client did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("node's output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the TypeScript client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listed: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(listed["tools"], 26, "{listed}");
    assert_eq!(listed["warnings"], serde_json::json!([]), "{listed}");
}
