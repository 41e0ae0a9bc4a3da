//! Benchmark harness: medians of capture + encode, per-action input overhead,
//! what the effects watch adds to a batch
//! and a shell round trip through the API, each beside a common baseline run
//! in the same process on the same screen. Run with `just bench` (release).
//!
//! It starts a real computerd (the release binary next to this example) on a
//! free display range, opens one screen with a ticking xterm on it so every
//! frame differs, and measures.

use base64::Engine;
use computer_protocol::Action;
use computerd::capture::{encode_png, Capturer};
use computerd::desktop::effects::Finished;
use computerd::desktop::EffectsWatch;
use computerd::display::Display;
use computerd::input::Input;
use computerd::screens::WatchConnection;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/fluxbox_config.rs"]
mod fluxbox_config;

const TOKEN: &str = "bench-token-0123456789abcdef";

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    samples[samples.len() / 2]
}

fn time_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let samples = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    median(samples)
}

/// The computerd under test, stopped when the bench ends or panics, so a
/// failed run leaves no daemon (and no screen) behind.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: signalling our own child so it closes its screen.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

struct Api {
    base: String,
    agent: reqwest::blocking::Client,
}

impl Api {
    fn post(&self, path: &str, body: Value) -> Value {
        let resp = self
            .agent
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .expect("computerd answers");
        assert!(resp.status().is_success(), "{path}: {}", resp.status());
        resp.json().expect("json")
    }
}

fn main() {
    let exe = std::env::current_exe().expect("own path");
    let computerd = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("computerd"))
        .expect("target dir");
    assert!(
        computerd.is_file(),
        "build it first: cargo build --release -p computerd"
    );
    let home = tempfile::tempdir().expect("temp home");
    // The computer's own Fluxbox settings, as the tests give it: Fluxbox's
    // defaults draw no background, and a screen waits for one.
    let fluxbox = fluxbox_config::write_to(&home.path().join(".computer-use-fluxbox"));
    fluxbox_config::write_home_overlay(home.path());
    let display_base = 7000 + std::process::id() % 1000;
    let mut daemon = Daemon(
        Command::new(&computerd)
            .env("COMPUTERD_TOKEN", TOKEN)
            .env("COMPUTERD_LISTEN", "127.0.0.1:0")
            .env("COMPUTERD_HOME", home.path())
            .env("HOME", home.path())
            .env("COMPUTERD_FLUXBOX_DIR", &fluxbox)
            .env("COMPUTERD_DISPLAY_BASE", display_base.to_string())
            .env("COMPUTERD_RFB_PORT_BASE", "45900")
            .env("COMPUTERD_RFB_INTERFACE", "127.0.0.1")
            .env("COMPUTERD_VIEWER_LISTEN", "127.0.0.1:0")
            .env("COMPUTERD_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("computerd starts"),
    );
    let mut lines = BufReader::new(daemon.0.stdout.take().expect("stdout")).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("computerd prints its address")
            .expect("line");
        if let Some(a) = line.split("listening on ").nth(1) {
            break a.trim().to_string();
        }
    };
    let api = Api {
        base: format!("http://{addr}"),
        agent: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client"),
    };
    let sid = api.post("/v1/sessions", json!({"title": "bench", "owner": "bench"}))["session_id"]
        .as_str()
        .expect("id")
        .to_string();
    let t = Instant::now();
    api.post(&format!("/v1/sessions/{sid}/observe"), json!({}));
    let screen_open_ms = t.elapsed().as_secs_f64() * 1000.0;
    api.post(
        &format!("/v1/sessions/{sid}/shell"),
        json!({"command": "setsid nohup xterm -geometry 160x50+0+0 -e 'while :; do date +%s.%N; ls -la /usr/bin | head -40; sleep 0.005; done' >/dev/null 2>&1 &"}),
    );
    let display_number = display_base + 1;
    let dname = format!(":{display_number}");
    // The screen takes only connections with the desktop's cookie: this
    // process's own and the baselines' (`import`, `xdotool`) it starts.
    let cookie = computerd::viewer_key::state_dir(home.path()).join("x-desktop-cookie");
    std::env::set_var("XAUTHORITY", &cookie);
    let display = Display::connect(display_number, Duration::from_secs(10)).expect("display");
    // Let the xterm draw before measuring.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut capturer = Capturer::new(&display);
    let blank = capturer.grab(&display).expect("grab").fingerprint();
    while capturer.grab(&display).expect("grab").fingerprint() == blank && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut rows: Vec<(String, f64, String, f64)> = Vec::new();

    // Capture + encode in process, against ImageMagick's import + base64.
    let mut png_bytes = 0;
    let ours = time_ms(40, || {
        let frame = capturer.grab(&display).expect("grab");
        let png = encode_png(&frame).expect("png");
        png_bytes = png.len();
        let _ = base64::engine::general_purpose::STANDARD.encode(&png);
    });
    let baseline = time_ms(10, || {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "import -display {dname} -window root png:- | base64 -w0 | wc -c"
            ))
            .output()
            .expect("import runs");
        assert!(out.status.success(), "install imagemagick");
    });
    rows.push((
        "capture+encode+base64 1280x800".into(),
        ours,
        "import -window root, base64".into(),
        baseline,
    ));

    let observe = time_ms(40, || {
        api.post(&format!("/v1/sessions/{sid}/observe"), json!({}));
    });
    rows.push((
        "observe through the API (HTTP+JSON)".into(),
        observe,
        "import -window root, base64".into(),
        baseline,
    ));

    // Per-action overhead: 24 moves per batch, no settle, no observe. Each
    // batch moves along another row, since identical batches that change
    // nothing are refused after the third.
    let mut row = 0;
    let per_action_api = time_ms(20, || {
        row += 1;
        let moves: Vec<Value> = (0..24)
            .map(|i| json!({"type": "move", "x": 100 + i * 10, "y": 300 + row}))
            .collect();
        api.post(
            &format!("/v1/sessions/{sid}/act"),
            json!({"actions": moves, "observe": false, "settle_ms": 0}),
        );
    }) / 24.0;
    let mut input = Input::new(&display).expect("input");
    let per_action_lib = time_ms(200, || {
        input
            .perform(&display, &Action::move_to(200, 200))
            .expect("move");
    });
    let xdotool = time_ms(20, || {
        Command::new("xdotool")
            .args(["mousemove", "300", "300"])
            .env("DISPLAY", &dname)
            .status()
            .expect("install xdotool");
    });
    rows.push((
        "act: one move, batch of 24 via API".into(),
        per_action_api,
        "xdotool mousemove (process)".into(),
        xdotool,
    ));
    rows.push((
        "act: one move, in process".into(),
        per_action_lib,
        "xdotool mousemove (process)".into(),
        xdotool,
    ));

    // What `computer_act`'s effects watch adds to a batch of 24 actions:
    // begin, the check before each action and the finish with its round
    // trip, the actions themselves not run; beside the 24 moves it watches.
    let batch: Vec<Action> = (0..24).map(|i| Action::move_to(200 + i, 200)).collect();
    let mut watch_conn = Some(WatchConnection::open(display_number).expect("watch connection"));
    let watch = time_ms(200, || {
        let mut watch =
            EffectsWatch::begin(watch_conn.take().expect("connection"), None).expect("watch");
        for (index, action) in batch.iter().enumerate() {
            watch.before(index, action);
        }
        let Finished {
            effects,
            conn: back,
            ..
        } = watch.finish();
        assert_eq!(effects.len(), batch.len());
        watch_conn = Some(back);
    });
    let moves = time_ms(200, || {
        for action in &batch {
            input.perform(&display, action).expect("move");
        }
    });
    rows.push((
        "act: effects watch, batch of 24".into(),
        watch,
        "the 24 moves it watches, in process".into(),
        moves,
    ));

    // Shell `true` through the API, against spawning bash directly.
    let shell = time_ms(50, || {
        api.post(
            &format!("/v1/sessions/{sid}/shell"),
            json!({"command": "true"}),
        );
    });
    let bash = time_ms(50, || {
        // The same home as the daemon's, so both read the same profile.
        Command::new("bash")
            .args(["-lc", "true"])
            .env("HOME", home.path())
            .status()
            .expect("bash");
    });
    rows.push((
        "shell `true` through the API".into(),
        shell,
        "bash -lc true (local spawn)".into(),
        bash,
    ));

    println!();
    println!("| measure | ours (median ms) | baseline | baseline (median ms) | ours/baseline |");
    println!("|---|---:|---|---:|---:|");
    for (name, ours, base_name, base) in &rows {
        println!(
            "| {name} | {ours:.2} | {base_name} | {base:.2} | {:.2} |",
            ours / base
        );
    }
    println!();
    println!(
        "screen open (first observe): {screen_open_ms:.0} ms; PNG of the test desktop: {} KiB",
        png_bytes / 1024
    );
    let rss = |pid: u32| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
            })
            .unwrap_or(0)
    };
    println!("computerd RSS: {} MiB", rss(daemon.0.id()) / 1024);
}
