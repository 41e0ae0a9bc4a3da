//! Screens that must keep working when a display is busy, a start fails, or
//! a client hangs up half way, against a real computerd and real Xvnc.

use crate::common::{wait_until, Daemon, DaemonOptions};
use reqwest::StatusCode;
use serde_json::json;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the daemon may take to settle its screens after a request.
const SETTLE: Duration = Duration::from_secs(20);

/// A live process whose pid a fake lock file names, killed on drop with
/// the lock file.
struct HeldDisplay {
    sleeper: Child,
    lock: String,
}

impl HeldDisplay {
    /// Writes `/tmp/.X<display>-lock` naming a live `sleep`, the way an X
    /// server an agent started by hand would hold the display.
    fn hold(display: u32) -> HeldDisplay {
        let sleeper = Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep starts");
        let lock = format!("/tmp/.X{display}-lock");
        std::fs::write(&lock, format!("{:>10}\n", sleeper.id())).expect("lock file");
        HeldDisplay { sleeper, lock }
    }
}

impl Drop for HeldDisplay {
    fn drop(&mut self) {
        let _ = self.sleeper.kill();
        let _ = self.sleeper.wait();
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Binds a VNC port of the daemon's range, so Xvnc cannot listen there.
fn hold_port(d: &Daemon, screen: u16) -> TcpListener {
    TcpListener::bind(("127.0.0.1", d.rfb_port_base + screen)).expect("the VNC port is free")
}

async fn observe(d: &Daemon, sid: &str) -> (StatusCode, serde_json::Value) {
    d.post(&format!("/v1/sessions/{sid}/observe"), json!({}))
        .await
}

/// Waits until every Xvnc on the daemon's range belongs to a screen the
/// session list shows: no orphan, nothing missing.
async fn no_stray_xvnc(d: &Daemon) {
    let mut seen = (Vec::new(), Vec::new());
    let settled = tokio::time::timeout(SETTLE, async {
        loop {
            seen = (d.running_xvnc_screens(), d.listed_screens().await);
            if seen.0 == seen.1 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        settled.is_ok(),
        "after {SETTLE:?}, Xvnc runs for screens {:?} but the sessions list {:?}",
        seen.0,
        seen.1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_displays_are_skipped_and_later_screens_still_open() {
    let d = Daemon::start().await;
    // Display 1 is held by another "X server"; the VNC port of screen 2 is
    // taken, so its Xvnc exits during start.
    let _display = HeldDisplay::hold(d.display_base + 1);
    let _port = hold_port(&d, 2);
    let a = d.create_session("first").await;
    let b = d.create_session("second").await;
    assert_eq!(d.open_screen(&a).await, 3);
    assert_eq!(d.open_screen(&b).await, 4);
    assert_eq!(d.listed_screens().await, vec![3, 4]);
    no_stray_xvnc(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn when_no_display_works_the_error_quotes_xvnc_and_names_the_cause() {
    let d = Daemon::start().await;
    let _ports: Vec<TcpListener> = (1..=16).map(|n| hold_port(&d, n)).collect();
    let sid = d.create_session("nowhere").await;
    let (status, v) = observe(&d, &sid).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    let message = v["message"].as_str().expect("message");
    assert!(message.contains("exited by itself"), "{message}");
    let port = d.rfb_port_base + 16;
    assert!(message.contains(&format!("VNC port {port}")), "{message}");
    // Xvnc's own words about the port it could not listen on.
    assert!(
        message.to_lowercase().contains("address already in use"),
        "{message}"
    );
    // Failed numbers are not tried again at once: the next call says so
    // instead of starting sixteen Xvnc again.
    let (status, v) = observe(&d, &sid).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("failed to start in the last minute"),
        "{v}"
    );
    no_stray_xvnc(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_observe_cut_short_leaves_no_orphan_xvnc() {
    let d = Daemon::start().await;
    let a = d.create_session("hangs up").await;
    d.send_and_hang_up(
        "POST",
        &format!("/v1/sessions/{a}/observe"),
        "{}",
        Duration::from_millis(100),
    )
    .await;
    no_stray_xvnc(&d).await;
    let b = d.create_session("after").await;
    let (status, v) = observe(&d, &b).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    no_stray_xvnc(&d).await;
}

/// A `fluxbox` that takes 2 s to exit on SIGTERM, so that closing a
/// screen is slow enough to be cut short. It runs the real Fluxbox, which
/// draws the desktop a screen waits for before it is handed out.
fn slow_fluxbox(dir: &std::path::Path) -> String {
    let real = test_support::require_program("fluxbox", "apt-get install fluxbox");
    path_with_fluxbox(
        dir,
        &format!(
            "{} \"$@\" &\nwm=$!\ntrap 'kill $wm; sleep 2; exit 0' TERM\nwhile :; do sleep 0.2; done",
            real.display()
        ),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_end_cut_short_still_closes_the_screen_and_frees_its_number() {
    let bin = tempfile::tempdir().expect("temp dir");
    let d = Daemon::start_with(DaemonOptions {
        env: vec![("PATH", slow_fluxbox(bin.path()))],
    })
    .await;
    let a = d.create_session("ends").await;
    assert_eq!(d.open_screen(&a).await, 1);
    d.send_and_hang_up(
        "DELETE",
        &format!("/v1/sessions/{a}"),
        "",
        Duration::from_millis(100),
    )
    .await;
    wait_until("session to end", SETTLE, || async {
        let (status, _) = observe(&d, &a).await;
        (status == StatusCode::GONE).then_some(())
    })
    .await;
    no_stray_xvnc(&d).await;
    assert_eq!(d.running_xvnc_screens(), Vec::<u64>::new());
    // Stopped with SIGTERM (which removes the lock), not left behind.
    let lock = format!("/tmp/.X{}-lock", d.display_base + 1);
    assert!(!std::path::Path::new(&lock).exists(), "{lock} is gone");
    let b = d.create_session("after").await;
    let (status, v) = observe(&d, &b).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    no_stray_xvnc(&d).await;
}

/// An observation of the whole screen with its image even when nothing
/// changed, decoded to RGB, and how long the call took.
async fn forced_frame(d: &Daemon, sid: &str) -> ((u32, u32, Vec<u8>), Duration) {
    let started = Instant::now();
    let v = d
        .ok(
            &format!("/v1/sessions/{sid}/observe"),
            json!({"force": true}),
        )
        .await;
    (
        crate::common::frame_pixels::observation_rgb(&v),
        started.elapsed(),
    )
}

/// The check: a new session's first frame is the desktop it will
/// work on, not the black of an Xvnc whose window manager has not drawn yet.
/// The image's Fluxbox shows no toolbar (so no clock) and nothing else that
/// changes by itself, so the frame 1.5 s later must have the same pixels.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_screens_first_frame_is_its_drawn_desktop() {
    let d = Daemon::start().await;
    for attempt in 1..=3 {
        let sid = d.create_session(&format!("first frame {attempt}")).await;
        let (first, took) = forced_frame(&d, &sid).await;
        eprintln!("session {attempt}: the first observe (screen opening) took {took:?}");
        assert!(
            first.2.iter().any(|&channel| channel != 0),
            "session {attempt}: the first frame is all black"
        );
        // The check is about what a later look shows, so this pause is the
        // measurement itself, not a wait for some condition.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let (later, _) = forced_frame(&d, &sid).await;
        assert_eq!((first.0, first.1), (later.0, later.1), "frame size");
        let differing = first
            .2
            .chunks(3)
            .zip(later.2.chunks(3))
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differing, 0,
            "session {attempt}: {differing} pixels of the first frame differ from the frame 1.5 s later (first pixel {:?}, later {:?})",
            &first.2[..3],
            &later.2[..3]
        );
        let (status, v) = d.call("DELETE", &format!("/v1/sessions/{sid}"), None).await;
        assert!(status.is_success(), "end session {attempt}: {status} {v}");
    }
}

/// A `PATH` whose `fluxbox` is a shell script of `body`, in `dir`.
fn path_with_fluxbox(dir: &std::path::Path, body: &str) -> String {
    let script = dir.join("fluxbox");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A `fluxbox` that exits at once without drawing anything.
fn fluxbox_that_exits(dir: &std::path::Path) -> String {
    path_with_fluxbox(dir, "exit 3")
}

/// No black frame in place of a desktop: when the window manager dies
/// before drawing, the first observe says so, at once, with the fix.
#[tokio::test(flavor = "multi_thread")]
async fn a_screen_whose_window_manager_dies_before_drawing_says_so() {
    let bin = tempfile::tempdir().expect("temp dir");
    let d = Daemon::start_with(DaemonOptions {
        env: vec![("PATH", fluxbox_that_exits(bin.path()))],
    })
    .await;
    let sid = d.create_session("no desktop").await;
    let started = Instant::now();
    let (status, v) = observe(&d, &sid).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    let message = v["message"].as_str().expect("message");
    for part in [
        "desktop cannot be drawn",
        "Fluxbox exited",
        "exit status: 3",
        "end_session",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the error came only after {:?}, not as soon as Fluxbox exited",
        started.elapsed()
    );
}

/// A `fluxbox` that runs but never draws.
fn fluxbox_that_never_draws(dir: &std::path::Path) -> String {
    path_with_fluxbox(dir, "exec sleep 600")
}

/// The wait for the desktop has a deadline, and its error names what is
/// missing, the time waited and what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_desktop_never_drawn_fails_the_first_observe_after_its_deadline() {
    let bin = tempfile::tempdir().expect("temp dir");
    let d = Daemon::start_with(DaemonOptions {
        env: vec![("PATH", fluxbox_that_never_draws(bin.path()))],
    })
    .await;
    let sid = d.create_session("undrawn").await;
    let started = Instant::now();
    let (status, v) = observe(&d, &sid).await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    let message = v["message"].as_str().expect("message");
    for part in [
        "desktop was not drawn within 10s: Fluxbox did not take the screen",
        "`_NET_SUPPORTING_WM_CHECK`",
        "observe again",
        "end_session",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert!(
        (Duration::from_secs(10)..Duration::from_secs(20)).contains(&took),
        "the error came after {took:?}"
    );
}
