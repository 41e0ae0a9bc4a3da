//! The viewer page in real headless Chromium (Debian's), driven by
//! Playwright: `browser/viewer.test.mjs` runs against a real computerd with
//! real screens started here, and this test fails with its output when any
//! of its checks fails.

use crate::common::{require_programs, Daemon, DaemonOptions};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The whole browser run takes about half a minute.
const RUN_LIMIT: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "multi_thread")]
async fn the_viewer_page_in_headless_chromium() {
    require_programs(&[
        ("chromium", "chromium"),
        ("xclip", "xclip"),
        ("xdotool", "xdotool"),
    ]);
    let browser_dir = test_support::require_playwright();
    assert!(
        crate::common::daemon::viewer_dir()
            .join("novnc/core/rfb.js")
            .is_file(),
        "noVNC is not in image/viewer/novnc; run `bash scripts/fetch-novnc.sh` (scripts/test.sh does)"
    );
    let d = Daemon::start_with(DaemonOptions {
        // The run's sessions must not end for want of heartbeats.
        env: vec![("COMPUTERD_HEARTBEAT_GRACE", "1h".into())],
    })
    .await;
    let key = d.viewer_key().await;
    let mut command = Command::new("node");
    command
        .args(["--test", "--test-reporter=spec", "viewer.test.mjs"])
        .current_dir(&browser_dir)
        .env("API_URL", &d.base_url)
        .env("TOKEN", crate::common::daemon::TOKEN)
        .env("VIEWER_URL", d.viewer_url(""))
        .env("KEY", &key)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().expect("node starts");
        let started = Instant::now();
        while child.try_wait().expect("node status").is_none() {
            if started.elapsed() > RUN_LIMIT {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        child.wait_with_output().expect("node output")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser tests failed ({}), in {}:\n`node --test viewer.test.mjs`\n{stdout}\n{stderr}",
        out.status,
        browser_dir.display()
    );
    // A run that found no tests would pass too; it must have run them all.
    assert!(stdout.contains("ℹ fail 0"), "{stdout}\n{stderr}");
    assert!(!stdout.contains("ℹ pass 0"), "{stdout}\n{stderr}");
}
