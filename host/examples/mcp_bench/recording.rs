//! What recording costs: observe and act with and without one, the bytes
//! of a desktop task's steps, and stopping 200 steps.

use crate::median;
use serde_json::{json, Value};
use std::time::Instant;

/// Calls a tool, asserts success, returns its structured content.
/// What recording costs: observe and act with and without a recording
/// (alternating rounds on the same ticking screen, so both see changed
/// frames), the bytes per step of a desktop task, and stopping 200 steps.
pub struct RecordingFigures {
    pub observe: (f64, f64),
    pub act: (f64, f64),
    pub bytes_per_step: f64,
    pub task_steps: u64,
    pub stop_200_ms: f64,
    pub stop_200_bytes: f64,
}

pub async fn recording_rows<F, Fut>(call: &F, sid: &str) -> RecordingFigures
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let out = std::env::temp_dir().join(format!("cu-bench-evidence-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("bench folder");
    let host_path = |name: &str| out.join(name).display().to_string();
    let (mut observe_plain, mut observe_recorded) = (Vec::new(), Vec::new());
    let (mut act_plain, mut act_recorded) = (Vec::new(), Vec::new());
    let timed = |tool: &'static str, args: Value| async move {
        let t = Instant::now();
        call(tool, args).await;
        t.elapsed().as_secs_f64() * 1000.0
    };
    let click = |i: u64| json!({"session_id": sid, "actions": [{"type": "move", "x": 200 + i, "y": 700}], "settle_ms": 0});
    for round in 0..10u64 {
        for i in 0..3 {
            observe_plain.push(timed("computer_observe", json!({"session_id": sid})).await);
            act_plain.push(timed("computer_act", click(round * 8 + i)).await);
        }
        call(
            "start_recording",
            json!({"session_id": sid, "task": "bench overhead"}),
        )
        .await;
        for i in 0..3 {
            observe_recorded.push(timed("computer_observe", json!({"session_id": sid})).await);
            act_recorded.push(timed("computer_act", click(round * 8 + 4 + i)).await);
        }
        call(
            "stop_recording",
            json!({"session_id": sid, "host_path": host_path(&format!("overhead-{round}"))}),
        )
        .await;
    }

    // A desktop task on a fresh session: a terminal and a page.
    let task = call("start_computer", json!({"title": "bench evidence"})).await;
    let task = task["session_id"].as_str().expect("id").to_string();
    call(
        "start_recording",
        json!({"session_id": task, "task": "bench task"}),
    )
    .await;
    call("launch_app", json!({"session_id": task, "app": "terminal"})).await;
    for i in 0..4 {
        call("computer_act", json!({"session_id": task, "actions": [{"type": "type", "text": format!("ls -la /usr/share | head -{}\n", 10 + i)}]})).await;
        call("shell", json!({"session_id": task, "command": "ls ~"})).await;
    }
    call("write_file", json!({"session_id": task, "path": "~/bench.html", "content": "<title>Bench</title><h1>A page</h1><p>Some text to read.</p>"})).await;
    call(
        "open_path",
        json!({"session_id": task, "target": "~/bench.html"}),
    )
    .await;
    for i in 0..4 {
        call("computer_act", json!({"session_id": task, "actions": [{"type": "click", "x": 300 + i * 40, "y": 300}]})).await;
        call("computer_observe", json!({"session_id": task})).await;
    }
    call(
        "recording_note",
        json!({"session_id": task, "text": "done"}),
    )
    .await;
    let stopped = call(
        "stop_recording",
        json!({"session_id": task, "host_path": host_path("task")}),
    )
    .await;
    let task_steps = stopped["steps"].as_u64().expect("steps");
    let bytes_per_step = stopped["bytes"].as_f64().expect("bytes") / task_steps as f64;

    // 200 steps: shell calls and observes of the ticking screen.
    call(
        "start_recording",
        json!({"session_id": sid, "task": "bench 200"}),
    )
    .await;
    for i in 0..200 {
        if i % 4 == 0 {
            call("computer_observe", json!({"session_id": sid})).await;
        } else {
            call("shell", json!({"session_id": sid, "command": "echo step"})).await;
        }
    }
    let t = Instant::now();
    let stopped = call(
        "stop_recording",
        json!({"session_id": sid, "host_path": host_path("two-hundred")}),
    )
    .await;
    let stop_200_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(stopped["steps"], 200, "{stopped}");
    let stop_200_bytes = stopped["bytes"].as_f64().expect("bytes");
    call("end_session", json!({"session_id": task})).await;
    let _ = std::fs::remove_dir_all(&out);
    RecordingFigures {
        observe: (median(observe_plain), median(observe_recorded)),
        act: (median(act_plain), median(act_recorded)),
        bytes_per_step,
        task_steps,
        stop_200_ms,
        stop_200_bytes,
    }
}

pub fn print_recording(r: RecordingFigures) {
    println!();
    println!("| recording (median ms) | not recorded | recorded | added |");
    println!("|---|---:|---:|---:|");
    for (name, (plain, recorded)) in [
        ("computer_observe (changed 1280x800 frame)", r.observe),
        ("computer_act (a move, then a changed frame)", r.act),
    ] {
        println!(
            "| {name} | {plain:.2} | {recorded:.2} | {:+.2} |",
            recorded - plain
        );
    }
    println!(
        "| bytes per step of a desktop task (terminal and a page, {} steps) | | {:.0} KB | |",
        r.task_steps,
        r.bytes_per_step / 1024.0
    );
    println!(
        "| stop_recording of 200 steps, {:.1} MB (build and copy home) | | {:.0} ms | |",
        r.stop_200_bytes / 1048576.0,
        r.stop_200_ms
    );
}
