//! The DevTools bridge through the real host binary, in the real image with
//! the real npm packages: tools called through `shell` with `mcpc`, two
//! sessions' bridges apart, the idle stop and its restart with the page
//! kept, `stop_chrome_devtools`, `end_session`, and the shell-timeout rule.

use crate::support::docker::shared_computer;
use crate::support::mcp::{
    call, connect, is_error, ok, pids, screen_number, shell_ok as shell, start_session as start,
    text, wait_pids_gone, write_files, Client,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// `mcpc <bridge> tools-call <tool> '<json>'` through `shell`.
async fn devtools(client: &Client, sid: &str, bridge: &str, tool: &str, args: Value) -> Value {
    shell(
        client,
        sid,
        &format!("mcpc {bridge} tools-call {tool} '{args}'"),
    )
    .await
}

/// How many bridge processes run for `bridge`.
async fn bridge_processes(client: &Client, sid: &str, bridge: &str) -> usize {
    let r = shell(
        client,
        sid,
        &format!("ps -eo args= | grep -F 'bridge/index.js {bridge} ' | grep -vc grep || true"),
    )
    .await;
    r["stdout"].as_str().unwrap().trim().parse().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn devtools_tools_work_through_shell_and_the_bridge_stops_when_idle() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[("COMPUTER_USE_DEVTOOLS_IDLE", "8s")]).await;
    let sid = start(&client, "devtools").await;
    write_files(
        &client,
        &sid,
        &[
            (
                "page/index.html",
                "<!doctype html><title>devtools page</title><script>console.log('hello from the page')</script>",
            ),
            ("page/next.html", "<!doctype html><title>next page</title>"),
        ],
    )
    .await;
    ok(
        &client,
        "open_path",
        json!({"session_id": sid, "target": "page/index.html"}),
    )
    .await;

    let (started, result) = ok(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    let bridge = started["bridge"].as_str().unwrap().to_string();
    assert_eq!(bridge, format!("@cdt-{}", started["screen"]));
    let reply = text(&result);
    assert!(
        reply.contains(&format!("mcpc {bridge} tools-call")) && reply.contains("list_pages"),
        "{reply}"
    );
    assert!(reply.contains("navigate_page [pageId]"), "{reply}");

    // The page opened with open_path is there.
    let pages = devtools(&client, &sid, &bridge, "list_pages", json!({})).await;
    assert_eq!(pages["exit_code"], 0, "{pages}");
    assert!(
        pages["stdout"].as_str().unwrap().contains("index.html"),
        "{pages}"
    );

    // The bridge collects console messages from the pages it watches load.
    let reloaded = devtools(
        &client,
        &sid,
        &bridge,
        "navigate_page",
        json!({"pageId": 1, "type": "reload"}),
    )
    .await;
    assert_eq!(reloaded["exit_code"], 0, "{reloaded}");
    let logs = devtools(
        &client,
        &sid,
        &bridge,
        "list_console_messages",
        json!({"pageId": 1}),
    )
    .await;
    assert!(
        logs["stdout"]
            .as_str()
            .unwrap()
            .contains("hello from the page"),
        "{logs}"
    );
    let title = devtools(
        &client,
        &sid,
        &bridge,
        "evaluate_script",
        json!({"pageId": 1, "function": "() => document.title"}),
    )
    .await;
    assert!(
        title["stdout"].as_str().unwrap().contains("devtools page"),
        "{title}"
    );
    let moved = devtools(
        &client,
        &sid,
        &bridge,
        "navigate_page",
        json!({"pageId": 1, "type": "url", "url": "file:///home/computer/page/next.html"}),
    )
    .await;
    assert_eq!(moved["exit_code"], 0, "{moved}");

    // Calling start again returns the same bridge.
    let (again, _) = ok(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    assert_eq!(again["state"], "already running", "{again}");
    assert_eq!(bridge_processes(&client, &sid, &bridge).await, 1);

    // Without calls it stops by itself; the next call brings it back with
    // the page kept.
    let deadline = Instant::now() + Duration::from_secs(40);
    while bridge_processes(&client, &sid, &bridge).await > 0 {
        assert!(Instant::now() < deadline, "the idle bridge still runs");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let pages = devtools(&client, &sid, &bridge, "list_pages", json!({})).await;
    assert!(
        pages["stdout"].as_str().unwrap().contains("next.html"),
        "{pages}"
    );

    // A bridge whose process died is started again by start_chrome_devtools.
    shell(
        &client,
        &sid,
        &format!(
            "pkill -KILL -f '[b]ridge/index.js {bridge} '; pkill -KILL -f '^chrome-devtools-mcp'; true"
        ),
    )
    .await;
    let (revived, _) = ok(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    assert_ne!(
        revived["state"], "started",
        "the mcpc session was kept: {revived}"
    );
    assert_eq!(bridge_processes(&client, &sid, &bridge).await, 1);
    let pages = devtools(&client, &sid, &bridge, "list_pages", json!({})).await;
    assert!(
        pages["stdout"].as_str().unwrap().contains("next.html"),
        "{pages}"
    );

    // stop_chrome_devtools: gone at once, and a call says so.
    let (stopped, _) = ok(
        &client,
        "stop_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    assert_eq!(stopped["was_running"], true, "{stopped}");
    assert_eq!(bridge_processes(&client, &sid, &bridge).await, 0);
    let refused = devtools(&client, &sid, &bridge, "list_pages", json!({})).await;
    assert_ne!(refused["exit_code"], 0, "{refused}");
    assert!(
        refused["stderr"].as_str().unwrap().contains("not found"),
        "{refused}"
    );

    // end_session stops a running bridge too.
    ok(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    let other = start(&client, "watcher").await;
    let running = pids(&client, &other, &format!("[b]ridge/index.js {bridge} ")).await;
    assert_eq!(running.len(), 1, "{running:?}");
    ok(&client, "end_session", json!({ "session_id": sid })).await;
    wait_pids_gone(
        &client,
        &other,
        &running,
        Duration::from_secs(15),
        "the bridge of the ended session",
    )
    .await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn devtools_starts_the_browser_when_none_runs_with_statistics_and_crux_off() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let sid = start(&client, "devtools first").await;
    // The screen opens on the agent's first look; no page is opened.
    ok(&client, "computer_observe", json!({ "session_id": sid })).await;
    let n = screen_number(&client, &sid).await;
    let port = 9221 + n;
    // No page opened before: no Chromium runs for this screen.
    let browser = format!("pgrep -f -- '[-]-remote-debugging-port={port}' | wc -l");
    let none = shell(&client, &sid, &browser).await;
    assert_eq!(none["stdout"].as_str().unwrap().trim(), "0", "{none}");

    let (started, _) = ok(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    let bridge = started["bridge"].as_str().unwrap().to_string();
    let running = shell(
        &client,
        &sid,
        &format!("curl -fsS http://127.0.0.1:{port}/json/version"),
    )
    .await;
    assert_eq!(running["exit_code"], 0, "screen {n}'s Chromium: {running}");
    let pages = devtools(&client, &sid, &bridge, "list_pages", json!({})).await;
    assert_eq!(pages["exit_code"], 0, "{pages}");

    // The configuration mcpc runs, read back from the computer.
    let config = shell(
        &client,
        &sid,
        &format!("cat ~/.local/share/computer-use/devtools/cdt-{n}.json"),
    )
    .await;
    let config: Value = serde_json::from_str(config["stdout"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("cdt-{n}.json is not JSON: {e}: {config}"));
    let server = &config["mcpServers"][format!("cdt-{n}")];
    assert_eq!(
        server["args"],
        json!([
            format!("--browser-url=http://127.0.0.1:{port}"),
            "--no-usage-statistics",
            "--no-performance-crux"
        ]),
        "{config}"
    );
    assert_eq!(
        server["env"]["CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS"], "1",
        "{config}"
    );
    // And the server that runs has the variable (its command line is
    // not readable: it renames its process to `chrome-devtools-mcp`). The
    // computer is shared, so other tests' servers may run too: each must.
    let process = shell(
        &client,
        &sid,
        "for p in $(pgrep -f '^chrome-devtools-mcp'); do \\
         if tr '\\0' '\\n' </proc/$p/environ | grep -qx CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1; \\
         then echo with; else echo without; fi; done",
    )
    .await;
    let found = process["stdout"].as_str().unwrap();
    assert!(
        found.contains("with") && !found.contains("without"),
        "{process}"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_have_bridges_of_their_own() {
    let computer = shared_computer();
    let (client, _) = connect(computer, &[]).await;
    let a = start(&client, "devtools a").await;
    let b = start(&client, "devtools b").await;
    for (sid, title) in [(&a, "page of a"), (&b, "page of b")] {
        ok(
            &client,
            "write_file",
            json!({"session_id": sid, "path": format!("{title}.html").replace(' ', "-"),
                   "content": format!("<!doctype html><title>{title}</title>")}),
        )
        .await;
        ok(
            &client,
            "open_path",
            json!({"session_id": sid, "target": format!("{title}.html").replace(' ', "-")}),
        )
        .await;
    }
    let (sa, _) = ok(&client, "start_chrome_devtools", json!({ "session_id": a })).await;
    let (sb, _) = ok(&client, "start_chrome_devtools", json!({ "session_id": b })).await;
    let (ba, bb) = (
        sa["bridge"].as_str().unwrap(),
        sb["bridge"].as_str().unwrap(),
    );
    assert_ne!(ba, bb);
    let pa = devtools(&client, &a, ba, "list_pages", json!({})).await;
    let pb = devtools(&client, &b, bb, "list_pages", json!({})).await;
    let (pa, pb) = (
        pa["stdout"].as_str().unwrap(),
        pb["stdout"].as_str().unwrap(),
    );
    assert!(
        pa.contains("page-of-a") && !pa.contains("page-of-b"),
        "{pa}"
    );
    assert!(
        pb.contains("page-of-b") && !pb.contains("page-of-a"),
        "{pb}"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_timeout_under_a_minute_is_refused_with_the_fix() {
    let computer = shared_computer();
    let (client, _) = connect(
        computer,
        &[
            ("COMPUTER_USE_SHELL_TIMEOUT_MAX", "30"),
            ("COMPUTER_USE_SHELL_TIMEOUT", "20"),
        ],
    )
    .await;
    let sid = start(&client, "short shell").await;
    let r = call(
        &client,
        "start_chrome_devtools",
        json!({ "session_id": sid }),
    )
    .await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        text(&r).contains("COMPUTER_USE_SHELL_TIMEOUT_MAX") && text(&r).contains("1m"),
        "{}",
        text(&r)
    );
    client.cancel().await.ok();
}
