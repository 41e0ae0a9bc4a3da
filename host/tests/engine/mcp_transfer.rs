//! `file_transfer` through the real host binary with rmcp's client (over
//! stdio, or HTTP with `COMPUTER_USE_TEST_TRANSPORT=http`), against a real
//! container: trees round trip both ways with checksums, modes, symlinks
//! and empty folders; the destination and overwrite rules; conflicts
//! partway; progress notifications; cancelling leaves no temporary files;
//! a stalled transfer fails.

use crate::support::docker::{docker, docker_output, shared_computer, TestComputer};
use crate::support::mcp::{connect_with, host_command, is_error, over_http, text};
use computer_protocol::archive::TEMP_PREFIX;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use test_support::{tree, wait_until_holds};
use tree::{build, temp_files};

/// A client that keeps the progress notifications it receives.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

type Client = RunningService<RoleClient, Recorder>;

/// The host binary for `computer`, with its working folder and home in
/// `host_dir`, so relative and `~` host paths land there; over the
/// transport `COMPUTER_USE_TEST_TRANSPORT` picks. Over HTTP `host_dir` is
/// the transfer root, so relative paths land there too.
async fn connect(
    computer: &TestComputer,
    host_dir: &Path,
    env: &[(&str, &str)],
) -> (Client, Recorder) {
    let mut cmd = host_command(computer, env);
    cmd.env("HOME", host_dir).current_dir(host_dir);
    if over_http() {
        cmd.env("COMPUTER_USE_TRANSFER_ROOT", host_dir);
    }
    let recorder = Recorder::default();
    let (client, _) = connect_with(cmd, recorder.clone()).await;
    (client, recorder)
}

fn params(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().cloned().unwrap())
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    client
        .call_tool(params(tool, args))
        .await
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args.clone()).await;
    assert!(
        !is_error(&result),
        "{tool} {args} failed: {}",
        text(&result)
    );
    result.structured_content.unwrap_or(Value::Null)
}

async fn failed(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args.clone()).await;
    assert!(
        is_error(&result),
        "{tool} {args} should fail: {}",
        text(&result)
    );
    text(&result)
}

async fn start(client: &Client) -> String {
    let v = ok(client, "start_computer", json!({"title": "transfer"})).await;
    v["session_id"].as_str().unwrap().to_string()
}

fn transfer(sid: &str, direction: &str, host: &Path, computer: &str, overwrite: bool) -> Value {
    json!({
        "session_id": sid, "direction": direction,
        "host_path": host.display().to_string(), "computer_path": computer,
        "overwrite": overwrite
    })
}

/// Runs `script` with bash inside the computer, as its user.
async fn sh(client: &Client, sid: &str, script: &str) -> String {
    let v = ok(
        client,
        "shell",
        json!({"session_id": sid, "command": script}),
    )
    .await;
    assert_eq!(v["exit_code"], 0, "`{script}`: {v}");
    v["stdout"].as_str().unwrap().to_string()
}

/// Relative path → kind, mode and SHA-256 (or link target), on the host,
/// in the form [`computer_manifest`] prints.
fn host_manifest(root: &Path) -> BTreeMap<String, String> {
    tree::manifest_with(root, |content| hex(&Sha256::digest(content)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The same, computed inside the computer.
async fn computer_manifest(client: &Client, sid: &str, root: &str) -> BTreeMap<String, String> {
    let script = format!(
        r#"cd {root} && find . -mindepth 1 -printf '%P\0' | sort -z | while IFS= read -r -d '' p; do
  if [ -L "$p" ]; then printf '%s\tlink %s\n' "$p" "$(readlink "$p")";
  elif [ -d "$p" ]; then printf '%s\tdir %s\n' "$p" "$(stat -c %a "$p")";
  elif [ -f "$p" ]; then printf '%s\tfile %s %s\n' "$p" "$(stat -c %a "$p")" "$(sha256sum < "$p" | cut -d' ' -f1)";
  else printf '%s\tother\n' "$p"; fi; done"#
    );
    sh(client, sid, &script)
        .await
        .lines()
        .map(|line| {
            let (path, desc) = line.split_once('\t').unwrap();
            (path.to_string(), desc.to_string())
        })
        .collect()
}

/// A tree with what a copy must keep: binary content over several chunks,
/// exec and private modes, nested and empty folders, relative and absolute
/// symlinks, and a pipe, which is skipped and listed.
fn sample_tree(root: &Path) {
    use tree::Item::{Dir, Fifo, File, Link, Mode};
    let data: Vec<u8> = (0..5_000_000u64)
        .map(|i| ((i * 2_654_435_761) >> 13) as u8)
        .collect();
    build(
        root,
        &[
            Dir("src/nested"),
            Dir("empty"),
            File("data.bin", &data),
            File("run.sh", b"#!/bin/sh\necho run\n"),
            Mode("run.sh", 0o755),
            File("private", b"secret"),
            Mode("private", 0o600),
            File("src/nested/lib.rs", b"pub fn f() {}\n"),
            Link("src/link", "nested/lib.rs"),
            Link("abs", "/etc/hostname"),
            Fifo("fifo"),
        ],
    );
}

/// How often a wait checks: each check may be a `docker exec`.
const CHECK_EVERY: Duration = Duration::from_millis(100);

fn computer_temp_files(computer: &TestComputer, dir: &str) -> String {
    let out = docker_output(&[
        "exec",
        &computer.name,
        "find",
        dir,
        "-name",
        &format!("{TEMP_PREFIX}*"),
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn trees_round_trip_both_ways_under_the_destination_and_overwrite_rules() {
    let computer = shared_computer();
    let host_dir = tempfile::tempdir().unwrap();
    let h = host_dir.path();
    let (client, _) = connect(computer, h, &[]).await;

    let tools = client.list_all_tools().await.unwrap();
    let tool = tools
        .iter()
        .find(|t| t.name == "file_transfer")
        .expect("file_transfer is listed");
    let hints = tool.annotations.as_ref().unwrap();
    assert_eq!(
        (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint
        ),
        (Some(false), Some(true), Some(false), Some(true))
    );
    let schema = serde_json::to_string(&tool.input_schema).unwrap();
    for field in [
        "session_id",
        "direction",
        "to_computer",
        "from_computer",
        "host_path",
        "computer_path",
        "overwrite",
    ] {
        assert!(schema.contains(field), "{field} missing from {schema}");
    }

    let sid = start(&client).await;
    let proj = h.join("proj");
    sample_tree(&proj);
    let mut expected = host_manifest(&proj);
    expected.remove("fifo");

    // Up into home, an existing folder: the copy lands under its own name.
    let v = ok(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &proj, "~", false),
    )
    .await;
    assert_eq!(v["path"], "/home/computer/proj");
    assert_eq!(v["source"], proj.display().to_string());
    assert_eq!(
        (
            v["files"].as_u64(),
            v["folders"].as_u64(),
            v["symlinks"].as_u64()
        ),
        (Some(4), Some(4), Some(2))
    );
    assert_eq!(v["bytes"], 5_000_000 + 19 + 6 + 14);
    assert!(v["duration_ms"].is_u64());
    assert_eq!(v["skipped"][0]["path"], "proj/fifo");
    assert_eq!(v["skipped"][0]["kind"], "pipe");
    assert_eq!(computer_manifest(&client, &sid, "~/proj").await, expected);

    // Again without overwrite: refused, naming the final path.
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &proj, "~", false),
    )
    .await;
    assert!(
        e.starts_with("`/home/computer/proj` already exists (a folder): set `overwrite` to true"),
        "{e}"
    );

    // Down under a new name (missing parents made), and into an existing
    // folder under its own name, with `~` and a relative host path.
    let v = ok(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", &h.join("new/copy"), "~/proj", false),
    )
    .await;
    assert_eq!(v["path"], h.join("new/copy").display().to_string());
    let mut downloaded = expected.clone();
    if over_http() {
        // Beneath the transfer root a link that leaves the copy is not made,
        // and the reply says so (mcp_http_trust.rs races two downloads).
        downloaded.remove("abs");
        let skipped = v["skipped"].to_string();
        assert!(
            skipped.contains("abs") && skipped.contains("transfer root"),
            "{skipped}"
        );
    }
    assert_eq!(host_manifest(&h.join("new/copy")), downloaded);
    fs::create_dir(h.join("Downloads")).unwrap();
    let v = ok(
        &client,
        "file_transfer",
        json!({
            "session_id": sid, "direction": "from_computer",
            // Over HTTP the server's home is not the client's: `~` is
            // refused there (mcp_http_trust.rs), relative paths start at
            // the transfer root.
            "host_path": if over_http() { "Downloads" } else { "~/Downloads" },
            "computer_path": "proj/data.bin"
        }),
    )
    .await;
    assert_eq!(
        v["path"],
        h.join("Downloads/data.bin").display().to_string()
    );
    assert_eq!(
        fs::read(h.join("Downloads/data.bin")).unwrap(),
        fs::read(proj.join("data.bin")).unwrap()
    );
    ok(
        &client,
        "file_transfer",
        json!({
            "session_id": sid, "direction": "from_computer",
            "host_path": "relative.sh", "computer_path": "/home/computer/proj/run.sh"
        }),
    )
    .await;
    let meta = fs::metadata(h.join("relative.sh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o755);

    // With overwrite, files are replaced and folders merge; the computer's
    // own files stay.
    sh(
        &client,
        &sid,
        "echo mine > ~/proj/keep.txt && echo mine > ~/proj/src/keep.txt",
    )
    .await;
    fs::write(proj.join("run.sh"), "#!/bin/sh\necho changed\n").unwrap();
    fs::write(proj.join("src/added.txt"), "added").unwrap();
    ok(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &proj, "~", true),
    )
    .await;
    let after = computer_manifest(&client, &sid, "~/proj").await;
    let mut merged = host_manifest(&proj);
    merged.remove("fifo");
    let keep = after["keep.txt"].clone();
    merged.insert("keep.txt".into(), keep.clone());
    merged.insert("src/keep.txt".into(), keep);
    assert_eq!(after, merged);

    // A file cannot take a folder's place: a conflict found partway stops the
    // copy and says how far it got.
    sh(&client, &sid, "rm ~/proj/private && mkdir ~/proj/private").await;
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &proj, "~", true),
    )
    .await;
    assert!(
        e.starts_with("stopped at `/home/computer/proj/private`, which is a folder, and the copy has a file there: only a folder can merge into a folder;")
            && e.contains("were written before it and stay in place"),
        "{e}"
    );
    // The same rule on the host, the other way round.
    ok(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", &h.join("Downloads"), "~/proj", false),
    )
    .await;
    let run = h.join("Downloads/proj/run.sh");
    fs::remove_file(&run).unwrap();
    fs::create_dir(&run).unwrap();
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", &h.join("Downloads"), "~/proj", true),
    )
    .await;
    assert!(
        e.starts_with(&format!(
            "stopped at `{}`, which is a folder, and the copy has a file there",
            run.display()
        )),
        "{e}"
    );

    // Refusals come before any data moves.
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &proj, "/usr/share", false),
    )
    .await;
    assert_eq!(e, "permission denied to write in `/usr/share`: choose a `computer_path` this user may write in, or change the permissions");
    let e = failed(
        &client,
        "file_transfer",
        transfer(
            &sid,
            "to_computer",
            &proj.join("run.sh"),
            "~/no-such-folder/",
            false,
        ),
    )
    .await;
    assert!(e.contains("ends with `/` but is not a folder"), "{e}");
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "from_computer", &h.join("x"), "~/missing", false),
    )
    .await;
    assert_eq!(
        e,
        "`/home/computer/missing` does not exist: check `computer_path`"
    );
    let e = failed(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &h.join("missing"), "~", false),
    )
    .await;
    assert_eq!(
        e,
        format!(
            "`{}` does not exist: check `host_path`",
            h.join("missing").display()
        )
    );
    let e = failed(
        &client,
        "file_transfer",
        transfer("no-such-session", "to_computer", &proj, "~", false),
    )
    .await;
    assert!(e.contains("start_computer"), "{e}");
    assert!(temp_files(h).is_empty());
    client.cancel().await.ok();
}

/// Starts a `file_transfer` the test can cancel.
async fn cancellable(client: &Client, args: Value) -> rmcp::service::RequestHandle<RoleClient> {
    client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params("file_transfer", args))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("request sent")
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_is_reported_and_cancelling_or_ending_the_session_leaves_no_temporary_files() {
    let computer = shared_computer();
    let host_dir = tempfile::tempdir().unwrap();
    let h = host_dir.path();
    let (client, recorder) = connect(computer, h, &[]).await;
    let sid = start(&client).await;

    // rmcp's client sends a progress token with every request.
    fs::File::create(h.join("two-gig.bin"))
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let v = ok(
        &client,
        "file_transfer",
        transfer(&sid, "to_computer", &h.join("two-gig.bin"), "~", false),
    )
    .await;
    assert_eq!(v["bytes"], 2u64 << 30);
    let notes = recorder.progress.lock().unwrap().clone();
    assert!(notes.len() >= 2, "progress notifications: {notes:?}");
    assert!(notes.last().unwrap().progress > 0.0, "{notes:?}");
    assert!(
        notes.windows(2).all(|w| w[0].progress < w[1].progress),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .all(|n| n.message.as_deref().is_some_and(|m| m.contains("files"))),
        "{notes:?}"
    );

    // Up: cancel once the computer is writing, then no temporary file is
    // left there and the copy does not appear.
    sh(&client, &sid, "mkdir -p ~/up").await;
    fs::File::create(h.join("huge.bin"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let handle = cancellable(
        &client,
        transfer(&sid, "to_computer", &h.join("huge.bin"), "~/up", false),
    )
    .await;
    wait_until_holds(
        "a temporary file in the computer",
        Duration::from_secs(30),
        CHECK_EVERY,
        || !computer_temp_files(computer, "/home/computer/up").is_empty(),
    )
    .await;
    handle.cancel(Some("test cancels".into())).await.unwrap();
    wait_until_holds(
        "the computer to remove its temporary file",
        Duration::from_secs(20),
        CHECK_EVERY,
        || computer_temp_files(computer, "/home/computer/up").is_empty(),
    )
    .await;
    assert_eq!(sh(&client, &sid, "ls -A ~/up").await, "");

    // Down: the same on the host.
    sh(&client, &sid, "truncate -s 8G ~/huge-down.bin").await;
    fs::create_dir(h.join("down")).unwrap();
    let handle = cancellable(
        &client,
        transfer(
            &sid,
            "from_computer",
            &h.join("down"),
            "~/huge-down.bin",
            false,
        ),
    )
    .await;
    wait_until_holds(
        "a temporary file on the host",
        Duration::from_secs(30),
        CHECK_EVERY,
        || !temp_files(&h.join("down")).is_empty(),
    )
    .await;
    handle.cancel(Some("test cancels".into())).await.unwrap();
    wait_until_holds(
        "the host to remove its temporary file",
        Duration::from_secs(20),
        CHECK_EVERY,
        || fs::read_dir(h.join("down")).unwrap().count() == 0,
    )
    .await;

    // The server carries on.
    let v = ok(&client, "list_files", json!({"session_id": sid})).await;
    assert!(v["entries"].is_array());
    sh(&client, &sid, "rm -f ~/huge-down.bin ~/two-gig.bin").await;

    // Ending the session stops a transfer that is running, and the reply
    // says why.
    let running = tokio::spawn({
        let peer = client.peer().clone();
        let args = transfer(&sid, "to_computer", &h.join("huge.bin"), "~/up", false);
        async move { peer.call_tool(params("file_transfer", args)).await }
    });
    wait_until_holds(
        "a temporary file in the computer",
        Duration::from_secs(30),
        CHECK_EVERY,
        || !computer_temp_files(computer, "/home/computer/up").is_empty(),
    )
    .await;
    ok(&client, "end_session", json!({"session_id": sid})).await;
    let result = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the transfer stops with its session")
        .unwrap()
        .expect("a tool result");
    assert!(is_error(&result), "{}", text(&result));
    assert!(
        text(&result).contains("start_computer"),
        "{}",
        text(&result)
    );
    wait_until_holds(
        "the computer to remove its temporary file",
        Duration::from_secs(20),
        CHECK_EVERY,
        || computer_temp_files(computer, "/home/computer/up").is_empty(),
    )
    .await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transfer_where_no_data_moves_fails_after_the_stall_limit() {
    let computer = TestComputer::new();
    let host_dir = tempfile::tempdir().unwrap();
    let h = host_dir.path();
    // Test-only: 2 s instead of 60 s.
    let (client, _) = connect(&computer, h, &[("COMPUTER_USE_TRANSFER_STALL_SECS", "2")]).await;
    let sid = start(&client).await;
    sh(&client, &sid, "mkdir -p ~/stall").await;
    fs::File::create(h.join("huge.bin"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();

    let running = tokio::spawn({
        let peer = client.peer().clone();
        let args = transfer(&sid, "to_computer", &h.join("huge.bin"), "~/stall", false);
        async move { peer.call_tool(params("file_transfer", args)).await }
    });
    wait_until_holds(
        "a temporary file in the computer",
        Duration::from_secs(30),
        CHECK_EVERY,
        || !computer_temp_files(&computer, "/home/computer/stall").is_empty(),
    )
    .await;
    // The whole computer freezes: nothing reads the data any more.
    docker(&["pause", &computer.name]);
    let paused = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the stall limit ends the call")
        .unwrap()
        .expect("a tool result");
    let waited = paused.elapsed();
    docker(&["unpause", &computer.name]);
    assert!(is_error(&result), "{}", text(&result));
    assert!(
        text(&result).starts_with("no data moved for 2 s, so the transfer was stopped"),
        "{}",
        text(&result)
    );
    assert!(waited < Duration::from_secs(15), "took {waited:?}");
    wait_until_holds(
        "the computer to remove its temporary file",
        Duration::from_secs(30),
        CHECK_EVERY,
        || computer_temp_files(&computer, "/home/computer/stall").is_empty(),
    )
    .await;
    client.cancel().await.ok();
}
