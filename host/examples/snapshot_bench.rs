//! What the snapshot tools cost on a busy computer (issue 42's speed
//! rows): `save_snapshot` (wall time and how long the computer is paused),
//! `restore_snapshot` to its first frame and to a drawn one,
//! `reset_computer`, four computers forked at once from a snapshot
//! (`COMPUTER_USE_TEMPLATE`), and, beside the save, the plain way in the
//! same run on the same data: `docker commit` (paused, docker's default)
//! plus a copy of the home volume into a new volume. Run with
//! `bash scripts/bench-snapshot.sh` (release build, the
//! `computer-use-mcp:dev` image).
//!
//! The real host binary (next to this example) serves MCP over stdio to
//! rmcp's client, as an agent's client would. "Busy" is what the issue
//! describes: Chromium open on the session's screen, 200 MB written in the
//! home, and 100 MB written outside it as root (standing for an installed
//! package). A reset empties the home and drops the package, so each round
//! makes them again before it saves. The restored computer and each fork
//! are checked to hold that data; a miss is printed under the table.
//!
//! The computer is its own (`cu-snapshot-bench`, ports from 23500), and so
//! are the forks (`cu-snapshot-bench-fork-N`, ports from 23600); all are
//! removed at the start and at the end with their guards, their home
//! volumes and every snapshot image and volume labelled as theirs.
//!
//! Options: `--runs N` (3): rounds, each row a median over them;
//! `--image TAG` (default `computer-use-mcp:dev`).

// Each bench uses part of the shared file.
#[allow(dead_code)]
#[path = "support/bench.rs"]
mod bench;

use bench::docker_ok;

use base64::Engine;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type Client = RunningService<RoleClient, ()>;

const NAME: &str = "cu-snapshot-bench";
const PORT_BASE: u16 = 23500;
/// Computers forked at once from a snapshot, as the row has it.
const FORKS: u16 = 4;
/// The label the host puts on a snapshot's image and volume.
const SNAPSHOT_OF: &str = "computer-use.snapshot.of";
/// The label of the host's short-lived copier containers.
const COPIER_OF: &str = "computer-use.copier-of";
/// How long a restored screen may stay black before the row gives up.
const DRAWN_WITHIN: Duration = Duration::from_secs(30);

struct Options {
    runs: usize,
    image: String,
}

fn options() -> Options {
    let mut o = Options {
        runs: 3,
        image: "computer-use-mcp:dev".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                o.runs = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| *n > 0)
                    .expect("--runs N (1 or more)")
            }
            "--image" => o.image = args.next().expect("--image TAG"),
            other => panic!("unknown option `{other}`; options: --runs N, --image TAG"),
        }
    }
    o
}

/// Runs docker for cleaning up, where "no such thing" is the usual answer.
fn docker_quiet(args: &[&str]) -> String {
    Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Removes everything of the computer `name`: containers first (they hold
/// images and volumes), then snapshot and baseline images, then volumes.
fn remove_all(name: &str) {
    let mut containers: Vec<String> = vec![name.into(), format!("{name}-network")];
    // A copier or a restore's `-next-` container left by a crash.
    for filter in [
        format!("label={COPIER_OF}={name}"),
        format!("name={name}-next-"),
    ] {
        containers.extend(
            docker_quiet(&["ps", "-aq", "--filter", &filter])
                .lines()
                .map(String::from),
        );
    }
    let mut args = vec!["rm", "-f", "-v"];
    args.extend(containers.iter().map(String::as_str));
    docker_quiet(&args);
    let images = docker_quiet(&[
        "image",
        "ls",
        "-q",
        "--filter",
        &format!("label={SNAPSHOT_OF}={name}"),
    ]);
    let baseline = docker_quiet(&["image", "ls", "-q", &format!("{name}-baseline")]);
    for id in images.lines().chain(baseline.lines()) {
        docker_quiet(&["rmi", "-f", id]);
    }
    let volumes = docker_quiet(&[
        "volume",
        "ls",
        "-q",
        "--filter",
        &format!("label={SNAPSHOT_OF}={name}"),
    ]);
    for volume in volumes.lines() {
        docker_quiet(&["volume", "rm", "-f", volume]);
    }
    docker_quiet(&["volume", "rm", "-f", &format!("{name}-home")]);
}

fn fork_name(n: u16) -> String {
    format!("{NAME}-fork-{n}")
}

/// The bench's computer and its forks, all of it.
fn remove_everything() {
    remove_all(NAME);
    for n in 1..=FORKS {
        remove_all(&fork_name(n));
    }
}

/// Cleans up however the run ends, a failed call's panic included.
struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        remove_everything();
    }
}

/// Starts a host for the computer `name`; with `template` (`COMPUTER:NAME`
/// of a snapshot), a computer that does not exist yet forks from it.
async fn connect(o: &Options, name: &str, port_base: u16, template: Option<&str>) -> Client {
    let host = std::env::current_exe()
        .expect("own path")
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("computer-use-mcp");
    assert!(
        host.is_file(),
        "build it first: cargo build --release -p computer-use-mcp"
    );
    let mut cmd = tokio::process::Command::new(host);
    cmd.env("COMPUTER_USE_NAME", name)
        .env("COMPUTER_USE_PORT_BASE", port_base.to_string())
        .env("COMPUTER_USE_OPEN", "none")
        // A release build would otherwise pull the published image.
        .env("COMPUTER_USE_IMAGE", &o.image)
        // Each round deletes its snapshot, but a failed round must not
        // leave the next one refused for the default limit (10).
        .env("COMPUTER_USE_SNAPSHOTS_MAX", "100");
    if let Some(template) = template {
        cmd.env("COMPUTER_USE_TEMPLATE", template);
    }
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("host binary starts");
    ().serve(transport).await.expect("MCP handshake")
}

/// Calls `tool`; a tool error comes back as the tool's own message, which
/// is what a report of a failing snapshot tool needs.
async fn try_call(
    client: &Client,
    tool: &'static str,
    args: Value,
) -> Result<CallToolResult, String> {
    let result = client
        .call_tool(
            CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .map_err(|e| format!("{tool}: the call failed: {e}"))?;
    if result.is_error == Some(true) {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        return Err(format!("{tool} failed: {}", text.join(" ")));
    }
    Ok(result)
}

/// [`try_call`] where a failure ends the bench (cleaned up by [`Cleanup`]).
async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    try_call(client, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn structured(result: &CallToolResult) -> &Value {
    result.structured_content.as_ref().unwrap_or(&Value::Null)
}

/// Runs a shell command in the session; a nonzero exit panics.
async fn shell(client: &Client, sid: &str, command: &str) {
    let result = call(
        client,
        "shell",
        json!({"session_id": sid, "command": command, "timeout": "300s"}),
    )
    .await;
    let done = structured(&result);
    assert_eq!(
        done["exit_code"].as_i64(),
        Some(0),
        "`{command}` failed: {done}"
    );
}

/// Whether the result's PNG shows anything: a screen that has not been
/// drawn yet is all black. `None` when it carries no image (the screen is
/// unchanged since the session's previous frame).
fn drawn(result: &CallToolResult) -> Option<bool> {
    let image = result.content.iter().find_map(|c| c.as_image())?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .expect("a base64 frame");
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    // Palette frames (a one-colour desktop) become their colours.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG frame");
    let mut pixels = vec![0u8; reader.output_buffer_size().expect("a sane frame")];
    let frame = reader.next_frame(&mut pixels).expect("a PNG frame");
    let (color, depth) = reader.output_color_type();
    let bytes = usize::from(depth as u8).div_ceil(8);
    // Alpha is left out: an opaque black pixel is still undrawn.
    let samples = color.samples();
    let colours = match color {
        png::ColorType::GrayscaleAlpha | png::ColorType::Rgba => samples - 1,
        _ => samples,
    };
    let drawn = pixels[..frame.buffer_size()]
        .chunks_exact(samples * bytes)
        .any(|p| p[..colours * bytes].iter().any(|b| *b != 0));
    Some(drawn)
}

/// Makes the computer busy as the issue describes. A reset or a restore
/// ended Chromium and a reset emptied the home, so every round does it.
async fn make_busy(client: &Client, sid: &str) {
    call(
        client,
        "launch_app",
        json!({"session_id": sid, "app": "browser"}),
    )
    .await;
    // 200 MB of changed home, as a few files; random, so no layer of the
    // way can compress or dedupe it.
    shell(
        client,
        sid,
        "mkdir -p ~/bench && for i in 1 2 3 4; do head -c 50M /dev/urandom > ~/bench/data$i; done",
    )
    .await;
    // 100 MB outside the home as root: what an installed package changes
    // in the container's own filesystem, which a snapshot commits.
    shell(
        client,
        sid,
        "sudo mkdir -p /opt/bench && sudo sh -c 'head -c 100M /dev/urandom > /opt/bench/pkg'",
    )
    .await;
    // Written back now, so neither the save nor the baseline pays for
    // flushing the other's (or this) data.
    shell(client, sid, "sync").await;
}

/// The plain way beside save_snapshot: `docker commit` (which pauses the
/// container while it commits) and a copy of the home volume into a new
/// volume, as root, on the same engine. Its wall time; what it made is
/// removed afterwards, untimed.
fn baseline(o: &Options, round: usize) -> Duration {
    let image = format!("{NAME}-baseline:{round}");
    let volume = format!("{NAME}-baseline-{round}");
    let home = format!("{NAME}-home");
    let started = Instant::now();
    docker_ok(&["commit", NAME, &image]);
    // Labelled as the computer's, so the cleanup finds it after a crash.
    docker_ok(&[
        "volume",
        "create",
        "--label",
        &format!("{SNAPSHOT_OF}={NAME}"),
        &volume,
    ]);
    docker_ok(&[
        "run",
        "--rm",
        "--user",
        "0",
        "--network",
        "none",
        // The image's own entrypoint starts computerd; the copy needs none.
        "--entrypoint",
        "/bin/sh",
        "-v",
        &format!("{home}:/from:ro"),
        "-v",
        &format!("{volume}:/to"),
        &o.image,
        "-c",
        "cp -a /from/. /to/",
    ]);
    let took = started.elapsed();
    docker_ok(&["rmi", &image]);
    docker_ok(&["volume", "rm", &volume]);
    took
}

/// Whether the computer holds what [`make_busy`] wrote, in and outside the
/// home: a restore or a fork that lost it would be fast for nothing. The
/// check runs as root, since sudo's umask left `/opt/bench` root's only.
async fn data_kept(client: &Client, sid: &str) -> Result<(), String> {
    let listed = try_call(
        client,
        "shell",
        json!({"session_id": sid, "command": "for f in ~/bench/data4 /opt/bench/pkg; do sudo test -s $f || echo \"$f is missing or empty\"; done"}),
    )
    .await?;
    let out = structured(&listed)["stdout"].as_str().unwrap_or("").trim();
    if out.is_empty() {
        Ok(())
    } else {
        Err(format!("the data is not all there: {out}"))
    }
}

/// Four computers that do not exist yet, each with a host of its own and
/// `COMPUTER_USE_TEMPLATE` naming the snapshot `snapshot` of the bench's
/// computer: the four start_computer calls at once, timed to the last one
/// done. The hosts are started and handshaken first, untimed: an agent's
/// client has its host already. Each fork is then checked to hold the
/// template's data, and removed. A failure is the row's, not the bench's.
async fn fork_four(o: &Options, snapshot: &str) -> Result<Duration, String> {
    let template = format!("{NAME}:{snapshot}");
    let mut clients = Vec::new();
    for n in 1..=FORKS {
        clients.push(connect(o, &fork_name(n), 23600 + 100 * (n - 1), Some(&template)).await);
    }
    let t = Instant::now();
    let started = futures::future::join_all(clients.iter().map(|client| async move {
        let result = try_call(client, "start_computer", json!({"title": "fork bench"})).await;
        (result, t.elapsed())
    }))
    .await;
    let took = t.elapsed();
    let mut outcome = Ok(took);
    for (n, (client, (result, own))) in clients.iter().zip(started).enumerate() {
        let checked = match result {
            Ok(result) => {
                eprintln!("fork {}: started in {:.2} s", n + 1, own.as_secs_f64());
                let sid = structured(&result)["session_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                // The fork must be the template's, not a fresh computer.
                data_kept(client, &sid)
                    .await
                    .map_err(|e| format!("fork {}: {e}", n + 1))
            }
            Err(e) => Err(e),
        };
        if let Err(e) = checked {
            eprintln!("{e}");
            outcome = Err(e);
        }
    }
    for client in clients {
        let _ = client.cancel().await;
    }
    // The forks run from the snapshot's image; they go before it does.
    for n in 1..=FORKS {
        remove_all(&fork_name(n));
    }
    outcome
}

/// Each row's figures in ms, one per round.
#[derive(Default)]
struct Rows {
    save: Vec<f64>,
    frozen: Vec<f64>,
    base: Vec<f64>,
    restore: Vec<f64>,
    drawn: Vec<f64>,
    reset: Vec<f64>,
    fork: Vec<f64>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied()
}

fn seconds(v: Option<f64>) -> String {
    v.map(|ms| format!("{:.2} s", ms / 1000.0))
        .unwrap_or_else(|| "not measured".into())
}

/// `| row | median | baseline | ratio | target | met |`
fn row(label: &str, got: Option<f64>, base: Option<f64>, target_s: f64) {
    let (base_text, ratio) = match (got, base) {
        (Some(g), Some(b)) => (seconds(Some(b)), format!("{:.2}x", g / b)),
        _ => (String::new(), String::new()),
    };
    let met = match got {
        Some(g) if g <= target_s * 1000.0 => "yes",
        Some(_) => "no",
        None => "-",
    };
    println!(
        "| {label} | {} | {base_text} | {ratio} | <= {target_s} s | {met} |",
        seconds(got)
    );
}

#[tokio::main]
async fn main() {
    let o = options();
    docker_ok(&["image", "inspect", "--format", "{{.Id}}", &o.image]);
    remove_everything();
    let _cleanup = Cleanup;
    let client = connect(&o, NAME, PORT_BASE, None).await;
    let started = call(
        &client,
        "start_computer",
        json!({"title": "snapshot bench"}),
    )
    .await;
    let mut sid = structured(&started)["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();

    let mut rows = Rows::default();
    let mut size_bytes = 0;
    let mut first_frames_drawn = 0;
    // What went wrong without ending the bench, printed after the table.
    let mut problems = Vec::new();
    for round in 0..o.runs {
        eprintln!(
            "snapshot bench: round {} of {}: making the computer busy",
            round + 1,
            o.runs
        );
        make_busy(&client, &sid).await;
        let snapshot = format!("bench-{round}");
        // Alternate which goes first, so neither always meets a warmer cache.
        for ours in [round % 2 == 0, round % 2 != 0] {
            if ours {
                let t = Instant::now();
                let saved = call(
                    &client,
                    "save_snapshot",
                    json!({"session_id": sid, "name": snapshot, "note": "snapshot bench"}),
                )
                .await;
                rows.save.push(ms(t.elapsed()));
                let saved = structured(&saved);
                rows.frozen
                    .push(saved["frozen_ms"].as_f64().expect("frozen_ms"));
                size_bytes = saved["size_bytes"].as_u64().unwrap_or(0);
            } else {
                rows.base.push(ms(baseline(&o, round)));
            }
        }

        let t = Instant::now();
        let restored = call(
            &client,
            "restore_snapshot",
            json!({"session_id": sid, "name": snapshot, "end_other_sessions": true}),
        )
        .await;
        rows.restore.push(ms(t.elapsed()));
        if let Some(id) = structured(&restored)["session_id"].as_str() {
            sid = id.to_string();
        }
        // The frame the restore returns may come before the desktop is
        // drawn; observe until it is (an unchanged frame is still black).
        let mut is_drawn = drawn(&restored) == Some(true);
        if is_drawn {
            first_frames_drawn += 1;
        }
        while !is_drawn && t.elapsed() < DRAWN_WITHIN {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let seen = call(&client, "computer_observe", json!({"session_id": sid})).await;
            is_drawn = drawn(&seen) == Some(true);
        }
        if is_drawn {
            rows.drawn.push(ms(t.elapsed()));
        } else {
            eprintln!("snapshot bench: the restored screen stayed black for {DRAWN_WITHIN:?}");
        }
        if let Err(e) = data_kept(&client, &sid).await {
            eprintln!("restore: {e}");
            problems.push(format!("restore_snapshot: {e}"));
        }
        // The forks start from this round's snapshot, before it is deleted.
        match fork_four(&o, &snapshot).await {
            Ok(took) => rows.fork.push(ms(took)),
            Err(e) => problems.push(e),
        }
        call(
            &client,
            "delete_snapshot",
            json!({"session_id": sid, "name": snapshot}),
        )
        .await;

        let t = Instant::now();
        let reset = call(
            &client,
            "reset_computer",
            json!({"session_id": sid, "end_other_sessions": true}),
        )
        .await;
        rows.reset.push(ms(t.elapsed()));
        if let Some(id) = structured(&reset)["session_id"].as_str() {
            sid = id.to_string();
        }
    }
    let _ = client.cancel().await;

    println!(
        "snapshot tools on a busy computer (Chromium open, 200 MB changed in home, 100 MB outside home as root standing for an installed package; snapshot size {:.0} MB): medians of {} rounds, real host binary, same run",
        size_bytes as f64 / 1e6,
        o.runs
    );
    println!("| row | median | baseline (docker commit + volume copy) | ratio to baseline | target | met |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let base = median(&rows.base);
    row("save_snapshot, wall", median(&rows.save), base, 3.0);
    row(
        "save_snapshot, frozen_ms (paused)",
        median(&rows.frozen),
        None,
        2.0,
    );
    row(
        "restore_snapshot, call to its frame",
        median(&rows.restore),
        None,
        5.0,
    );
    row(
        "restore_snapshot, to a drawn frame",
        median(&rows.drawn),
        None,
        5.0,
    );
    row("reset_computer, wall", median(&rows.reset), None, 3.0);
    row(
        "fork: 4 computers from a template, all started",
        median(&rows.fork),
        None,
        10.0,
    );
    println!(
        "ratio below 1: save_snapshot is faster than the baseline; the restore's own frame was drawn in {first_frames_drawn} of {} rounds",
        o.runs
    );
    for e in &problems {
        println!("problem: {e}");
    }
}
