//! The browser per screen, what it opens, against a real computerd with real
//! Xvnc screens and real Chromiums: `open_path` of pages and files,
//! `launch_app`, the launcher behind the screens' menus, and a quiet settle
//! that waits for a page's animation to stop.

use crate::browser::{
    active_window, devtools_answer, launch, open, require_chromium, screen_of, start_site,
};
use crate::common::{wait_until, Daemon};
use serde_json::{json, Value};
use std::time::Duration;

/// A tiny valid PDF with one page.
fn tiny_pdf() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).bytes());
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for offset in offsets {
        pdf.extend(format!("{offset:010} 00000 n \n").bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    pdf
}

fn tiny_png() -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, 2, 2);
    encoder.set_color(png::ColorType::Rgb);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&[255u8; 12]).unwrap();
    writer.finish().unwrap();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn open_path_shows_pages_and_files_in_the_browser() {
    require_chromium();
    let site = start_site().await;
    let d = Daemon::start().await;
    let s = d.create_session("open_path").await;
    let home = d.home.path();
    std::fs::write(home.join("report.pdf"), tiny_pdf()).unwrap();
    std::fs::write(home.join("dot.png"), tiny_png()).unwrap();
    std::fs::write(home.join("notes.txt"), "plain text notes\n").unwrap();

    let page = open(&d, &s, &format!("{site}/")).await;
    assert_eq!(page["ready"], true, "{page}");
    assert!(page["observation"]["active_window"]
        .as_str()
        .unwrap()
        .contains("signed out"));
    for (file, title) in [
        ("report.pdf", "report.pdf"),
        ("dot.png", "dot.png"),
        ("notes.txt", "notes.txt"),
    ] {
        let r = open(&d, &s, file).await;
        assert_eq!(r["ready"], true, "{file}: {r}");
        assert!(
            r["observation"]["image_base64"].is_string(),
            "{file}: a screenshot"
        );
        // Chromium titles a PDF once its viewer has read the file, a moment
        // after the document itself loaded.
        wait_until(
            &format!("the browser to show {file}"),
            Duration::from_secs(10),
            || async { active_window(&d, &s).await.contains(title).then_some(()) },
        )
        .await;
    }

    // Missing files and other schemes are clear errors.
    let (status, missing) = d
        .post(
            &format!("/v1/sessions/{s}/open"),
            json!({"target": "nope.pdf"}),
        )
        .await;
    assert_eq!(status, 404, "{missing}");
    let message = missing["message"].as_str().unwrap();
    assert!(
        message.contains("nope.pdf") && message.contains("report.pdf"),
        "{message}"
    );
    let (status, scheme) = d
        .post(
            &format!("/v1/sessions/{s}/open"),
            json!({"target": "javascript:alert(1)"}),
        )
        .await;
    assert_eq!(status, 400, "{scheme}");
}

#[tokio::test(flavor = "multi_thread")]
async fn launch_app_starts_terminals_desktop_entries_and_refuses_unknown_names() {
    require_chromium();
    let d = Daemon::start().await;
    let s = d.create_session("launch_app").await;
    let terminal = launch(&d, &s, "terminal").await;
    assert_eq!(terminal["ready"], true, "{terminal}");

    let apps = d.home.path().join(".local/share/applications");
    std::fs::create_dir_all(&apps).unwrap();
    std::fs::write(
        apps.join("test-notes.desktop"),
        "[Desktop Entry]\nType=Application\nName=Test Notes\nStartupWMClass=TestNotes\nExec=xterm -class TestNotes -T \"Test Notes Window\"\n",
    )
    .unwrap();
    let entry = launch(&d, &s, "test-notes").await;
    assert_eq!(entry["ready"], true, "{entry}");
    assert!(
        entry["observation"]["active_window"]
            .as_str()
            .unwrap_or("")
            .contains("Test Notes Window"),
        "{entry}"
    );

    let (status, unknown) = d
        .post(
            &format!("/v1/sessions/{s}/launch"),
            json!({"app": "no-such-app-anywhere"}),
        )
        .await;
    assert_eq!(status, 404, "{unknown}");
    let message = unknown["message"].as_str().unwrap();
    assert!(
        message.contains("no-such-app-anywhere") && message.contains("test-notes"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn launch_app_opens_only_web_pages_and_files_in_the_browser() {
    require_chromium();
    let d = Daemon::start().await;
    let s = d.create_session("browser uri").await;
    for uri in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "chrome://settings",
        "data:text/html,<script>alert(1)</script>",
    ] {
        let (status, refused) = d
            .post(
                &format!("/v1/sessions/{s}/launch"),
                json!({"app": "browser", "uri": uri}),
            )
            .await;
        assert_eq!(status, 400, "{uri}: {refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("`uri` `{uri}` is a `")),
            "{message}"
        );
        assert!(message.contains("`https://`"), "{message}");
    }
    // A file of the session's folder still opens, as its `file://` URL.
    let cwd = d.home.path();
    std::fs::write(cwd.join("hello.html"), "<title>hello file</title>").unwrap();
    let opened = d
        .ok(
            &format!("/v1/sessions/{s}/launch"),
            json!({"app": "browser", "uri": cwd.join("hello.html")}),
        )
        .await;
    assert_eq!(opened["ready"], true, "{opened}");
    wait_until(
        "the browser to show the file",
        Duration::from_secs(10),
        || async {
            active_window(&d, &s)
                .await
                .contains("hello file")
                .then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_launcher_opens_links_on_the_callers_screen() {
    require_chromium();
    let site = start_site().await;
    let d = Daemon::start().await;
    let a = d.create_session("menu a").await;
    let b = d.create_session("menu b").await;
    let (na, nb) = (screen_of(&d, &a).await, screen_of(&d, &b).await);
    // What the screen's menu and xdg-open run, from a shell on screen b
    // (by its path: a login shell sets its own PATH).
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/bin/computer-use-launch");
    let out = d
        .shell(
            &b,
            &format!("sh '{}' browser '{site}/login'", script.display()),
        )
        .await;
    assert_eq!(out["exit_code"], 0, "{out}");
    wait_until("the page on screen b", Duration::from_secs(10), || async {
        active_window(&d, &b)
            .await
            .contains("signed in as alice")
            .then_some(())
    })
    .await;
    assert!(devtools_answer(&d, nb).await);
    assert!(!devtools_answer(&d, na).await, "screen a got no browser");

    // Without the token the launcher refuses.
    let out = d
        .shell(
            &a,
            "curl -s -o /dev/null -w '%{http_code}' -X POST \"$COMPUTER_USE_LAUNCHER_URL/launch\" -d '{\"display\":\":1\",\"app\":\"browser\"}'",
        )
        .await;
    assert_eq!(out["stdout"], "401", "{out}");
}

/// A page that moves a box for 900 ms after it loads and after each click,
/// then stops and puts the run count in its title (`still N`).
const ANIMATED_PAGE: &str = r#"<!doctype html><title>anim</title>
<style>body{margin:0;background:#fff}
#box{position:absolute;left:0;top:100px;width:80px;height:80px;background:#c00}</style>
<div id=box></div>
<script>
let runs = 0;
function run(ms) {
  const start = performance.now();
  const id = setInterval(() => {
    const t = Math.min((performance.now() - start) / ms, 1);
    box.style.left = (t * 600) + 'px';
    box.style.background = 'rgb(' + Math.round(200 * (1 - t)) + ',0,' + Math.round(200 * t) + ')';
    if (t >= 1) { clearInterval(id); runs += 1; document.title = 'still ' + runs; }
  }, 20);
}
addEventListener('load', () => run(900));
addEventListener('click', () => { box.style.left = '0px'; run(900); });
</script>"#;

/// How long the screen must be still in the animation tests. The page
/// moves its box every 20 ms, yet in a full parallel run of the suite on
/// 2 cores (with an image build beside it) quiet settling at 250 ms once
/// ended mid-run: X DAMAGE saw no change for 250 ms, so the starved
/// renderer drew nothing that long, a true still period. The test checks
/// that settling waits for the end of motion, so its still period must be
/// longer than such stalls.
const STILL_MS: u64 = 700;

/// The frame equals one taken 2 s later: unchanged, or the same pixels.
async fn frame_holds_for_two_seconds(d: &Daemon, s: &str, frame: &Value, what: &str) {
    let later = d
        .ok(
            &format!("/v1/sessions/{s}/act"),
            json!({"actions": [{"type": "wait", "ms": 2000}], "settle_ms": 0}),
        )
        .await;
    let later = &later["observation"];
    if later["unchanged"] == true {
        return;
    }
    let (width, _, then) = crate::common::frame_pixels::observation_rgb(frame);
    let (_, _, now) = crate::common::frame_pixels::observation_rgb(later);
    let changed: Vec<(usize, usize)> = then
        .chunks(3)
        .zip(now.chunks(3))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| (i % width as usize, i / width as usize))
        .collect();
    let area = |pick: fn(&(usize, usize)) -> usize| {
        (
            changed.iter().map(pick).min(),
            changed.iter().map(pick).max(),
        )
    };
    assert!(
        changed.is_empty(),
        "{what}: {} pixels changed in the 2 s after the quiet frame, x {:?}, y {:?}",
        changed.len(),
        area(|p| p.0),
        area(|p| p.1)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn quiet_settling_after_open_path_and_a_click_waits_for_the_animation_to_stop() {
    require_chromium();
    let d = Daemon::start().await;
    let s = d.create_session("quiet open").await;
    std::fs::write(d.home.path().join("anim.html"), ANIMATED_PAGE).unwrap();

    // By default the screenshot comes as soon as the page loaded: mid-run.
    let fixed = open(&d, &s, "anim.html").await;
    assert_eq!(fixed["ready"], true, "{}", fixed["summary"]);
    assert_eq!(fixed["settled"], true);
    assert_eq!(fixed["settle_waited_ms"], 0);
    // Its run ends in front; behind the next tab its timers would be
    // throttled and its title would change seconds later, after any
    // quiet frame.
    wait_until(
        "the first tab's run to end",
        Duration::from_secs(10),
        || async {
            active_window(&d, &s)
                .await
                .contains("still 1")
                .then_some(())
        },
    )
    .await;

    // Quiet: only once the box stopped, and the frame stays the screen.
    let quiet = d
        .ok(
            &format!("/v1/sessions/{s}/open"),
            json!({"target": "anim.html", "settling": {"settle": "quiet", "quiet_ms": STILL_MS}}),
        )
        .await;
    let waited = quiet["settle_waited_ms"].as_u64().unwrap();
    assert_eq!(quiet["settled"], true, "waited {waited} ms");
    assert!(
        waited >= 600,
        "settled after {waited} ms, while the box still moved"
    );
    assert!(
        quiet["observation"]["active_window"]
            .as_str()
            .unwrap_or("")
            .contains("still 1"),
        "the frame is from before the run ended, after {waited} ms: {}",
        quiet["observation"]["active_window"]
    );
    frame_holds_for_two_seconds(&d, &s, &quiet["observation"], "open_path").await;

    // A click in the page starts another run: the quiet frame is its end.
    let click = d
        .ok(
            &format!("/v1/sessions/{s}/act"),
            json!({"actions": [{"type": "click", "x": 640, "y": 500}],
                   "settle": "quiet", "quiet_ms": STILL_MS, "settle_ms": 5000}),
        )
        .await;
    let waited = click["settle_waited_ms"].as_u64().unwrap();
    assert_eq!(click["settled"], true, "waited {waited} ms");
    assert!(
        waited >= 600,
        "settled after {waited} ms, while the box still moved"
    );
    assert!(
        click["observation"]["active_window"]
            .as_str()
            .unwrap_or("")
            .contains("still 2"),
        "the frame is from before the run ended: {}",
        click["observation"]["active_window"]
    );
    frame_holds_for_two_seconds(&d, &s, &click["observation"], "click").await;

    // launch_app settles the same way, and checks the same limits.
    let launched = d
        .ok(
            &format!("/v1/sessions/{s}/launch"),
            json!({"app": "terminal", "settling": {"settle": "quiet", "quiet_ms": 300}}),
        )
        .await;
    assert_eq!(launched["ready"], true, "{}", launched["summary"]);
    assert_eq!(launched["settled"], true);
    assert!(launched["settle_waited_ms"].as_u64().unwrap() >= 300);
    let (status, bad) = d
        .post(
            &format!("/v1/sessions/{s}/launch"),
            json!({"app": "terminal", "settling": {"settle": "quiet", "quiet_ms": 10}}),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(
        bad["message"],
        "`quiet_ms` is 10: use 50 to 2000 ms (default 250)"
    );
    let (status, bad) = d
        .post(
            &format!("/v1/sessions/{s}/open"),
            json!({"target": "anim.html", "settling": {"settle_ms": 5001}}),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(bad["message"], "`settle_ms` is 5001: the limit is 5000 ms");
}
