//! The browser per screen, against a real computerd with real Xvnc screens
//! and real Chromiums: one browser per screen, logins shared across
//! screens through the cookie jar, the template profile, `open_path`,
//! `launch_app`, the launcher behind the screens' menus, and clean closes.
//!
//! The "site" is a small HTTP server on loopback that signs in by setting
//! a cookie and signs out by clearing it; each page's title says which.

use crate::common::{wait_until, Daemon};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

fn require_chromium() {
    crate::common::require_programs(&[("chromium", "chromium"), ("curl", "curl")]);
}

/// A page whose title says who is signed in.
fn page(headers: &HeaderMap) -> String {
    let user = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix("sid="))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let title = match user {
        Some(user) => format!("signed in as {user}"),
        None => "signed out".to_string(),
    };
    format!("<!doctype html><title>{title}</title><h1>{title}</h1>")
}

/// Serves the site on 127.0.0.1; returns its base URL.
async fn start_site() -> String {
    let app = axum::Router::new()
        .route(
            "/",
            get(|headers: HeaderMap| async move { Html(page(&headers)) }),
        )
        .route(
            "/login",
            get(|| async {
                (
                    [(SET_COOKIE, "sid=alice; Path=/; Max-Age=3600; HttpOnly")],
                    Html("<!doctype html><title>signed in as alice</title>"),
                )
                    .into_response()
            }),
        )
        .route(
            // Sets a cookie without `Path`: Chromium gives it the folder of
            // this URL, which can be longer than the 1024 bytes
            // `Storage.setCookies` takes in an attribute.
            "/deep/{*rest}",
            get(|| async {
                (
                    [(SET_COOKIE, "p=1; Max-Age=3600")],
                    Html("<!doctype html><title>deep page</title>"),
                )
                    .into_response()
            }),
        )
        .route(
            "/logout",
            get(|| async {
                (
                    [(SET_COOKIE, "sid=; Path=/; Max-Age=0")],
                    Html("<!doctype html><title>signed out</title>"),
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn open(d: &Daemon, session: &str, target: &str) -> Value {
    d.ok(
        &format!("/v1/sessions/{session}/open"),
        json!({ "target": target }),
    )
    .await
}

async fn launch(d: &Daemon, session: &str, app: &str) -> Value {
    d.ok(
        &format!("/v1/sessions/{session}/launch"),
        json!({ "app": app }),
    )
    .await
}

async fn end(d: &Daemon, session: &str) {
    let (status, body) = d
        .call("DELETE", &format!("/v1/sessions/{session}"), None)
        .await;
    assert!(status.is_success(), "end {session}: {status} {body}");
}

async fn active_window(d: &Daemon, session: &str) -> String {
    let o = d
        .ok(&format!("/v1/sessions/{session}/observe"), json!({}))
        .await;
    o["active_window"].as_str().unwrap_or("").to_string()
}

/// Reloads the session's page until its title contains `want`.
/// F5 and Ctrl+R take turns: the same key again and again on a page that
/// does not change yet would be refused as "not reacting" on the 4th try.
async fn reload_until(d: &Daemon, session: &str, want: &str, limit: Duration) {
    let reloads = std::sync::atomic::AtomicUsize::new(0);
    wait_until(&format!("a reload showing `{want}`"), limit, || async {
        let n = reloads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let key = if n.is_multiple_of(2) { "f5" } else { "ctrl+r" };
        let r = d
            .ok(
                &format!("/v1/sessions/{session}/act"),
                json!({"actions": [{"type": "key", "key": key}], "settle_ms": 400}),
            )
            .await;
        let title = r["observation"]["active_window"].as_str().unwrap_or("");
        title.contains(want).then_some(())
    })
    .await;
}

/// Whether screen `n`'s DevTools answer.
async fn devtools_answer(d: &Daemon, n: u8) -> bool {
    let port = d.devtools_port_base + u16::from(n);
    reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
        .await
        .is_ok_and(|r| r.status().is_success())
}

async fn screen_of(d: &Daemon, session: &str) -> u8 {
    d.open_screen(session).await
}

#[tokio::test(flavor = "multi_thread")]
async fn each_screen_gets_a_browser_of_its_own() {
    require_chromium();
    let d = Daemon::start().await;
    let a = d.create_session("browser a").await;
    let b = d.create_session("browser b").await;
    // The report that started this: a focus on the browser from a second
    // session used to send the window to the first session's screen.
    for session in [&a, &b] {
        let r = d
            .ok(
                &format!("/v1/sessions/{session}/act"),
                json!({"actions": [{"type": "focus", "target": "browser"}]}),
            )
            .await;
        assert_eq!(r["outcomes"][0]["ok"], true, "{r}");
        let title = r["observation"]["active_window"].as_str().unwrap_or("");
        assert!(title.contains("Chromium"), "active window: {title}");
    }
    let (na, nb) = (screen_of(&d, &a).await, screen_of(&d, &b).await);
    assert_ne!(na, nb);
    assert!(devtools_answer(&d, na).await && devtools_answer(&d, nb).await);
    // A second launch raises the same browser instead of starting one.
    let again = launch(&d, &a, "browser").await;
    assert!(
        again["summary"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{again}"
    );

    // Ending a session closes its browser.
    end(&d, &a).await;
    wait_until(
        "screen a's DevTools to go away",
        Duration::from_secs(15),
        || async { (!devtools_answer(&d, na).await).then_some(()) },
    )
    .await;
    assert!(
        devtools_answer(&d, nb).await,
        "screen b's browser still runs"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_and_a_sign_out_spread_to_every_screen() {
    require_chromium();
    let site = start_site().await;
    let mut d = Daemon::start().await;
    let a = d.create_session("signs in").await;
    let b = d.create_session("watches").await;
    let opened = open(&d, &b, &format!("{site}/")).await;
    assert_eq!(opened["ready"], true, "{opened}");
    assert!(active_window(&d, &b).await.contains("signed out"));

    open(&d, &a, &format!("{site}/login")).await;
    reload_until(&d, &b, "signed in as alice", Duration::from_secs(5)).await;

    // A screen opened later loads the jar before its first page.
    let c = d.create_session("comes later").await;
    open(&d, &c, &format!("{site}/")).await;
    assert!(
        active_window(&d, &c).await.contains("signed in as alice"),
        "a new screen is signed in at once"
    );

    // The jar is private to the user and holds the login, not in a log.
    let jar = d.home.path().join(".local/share/computer-use/cookies.json");
    let mode = std::fs::metadata(&jar).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "cookies.json mode");
    assert!(std::fs::read_to_string(&jar).unwrap().contains("\"sid\""));

    open(&d, &a, &format!("{site}/logout")).await;
    reload_until(&d, &b, "signed out", Duration::from_secs(5)).await;
    reload_until(&d, &c, "signed out", Duration::from_secs(5)).await;

    // Signed in again, the login survives a restart of computerd.
    open(&d, &a, &format!("{site}/login")).await;
    wait_until(
        "the jar to hold the login",
        Duration::from_secs(10),
        || async {
            let text = std::fs::read_to_string(&jar).unwrap_or_default();
            text.contains("alice").then_some(())
        },
    )
    .await;
    d.restart();
    let e = d.create_session("after restart").await;
    open(&d, &e, &format!("{site}/")).await;
    assert!(active_window(&d, &e).await.contains("signed in as alice"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cookie_chromium_will_not_take_back_does_not_stop_the_others() {
    require_chromium();
    let site = start_site().await;
    let d = Daemon::start().await;
    let a = d.create_session("visits a deep page").await;
    let b = d.create_session("watches").await;
    open(&d, &b, &format!("{site}/")).await;

    // A cookie whose default path is 1100 characters long, then a login.
    let deep_path = format!("/deep/{}/page", "p".repeat(1100));
    open(&d, &a, &format!("{site}{deep_path}")).await;
    let jar = d.home.path().join(".local/share/computer-use/cookies.json");
    wait_until(
        "the jar to hold the deep cookie",
        Duration::from_secs(10),
        || async {
            let text = std::fs::read_to_string(&jar).unwrap_or_default();
            text.contains(&"p".repeat(1100)).then_some(())
        },
    )
    .await;
    open(&d, &a, &format!("{site}/login")).await;

    // A running browser gets the login beside the refused cookie.
    reload_until(&d, &b, "signed in as alice", Duration::from_secs(10)).await;
    // A new browser starts (the refused cookie does not fail its start)
    // and is signed in before its first page.
    let c = d.create_session("comes later").await;
    let (status, body) = d
        .call(
            "POST",
            &format!("/v1/sessions/{c}/open"),
            Some(json!({ "target": format!("{site}/") })),
        )
        .await;
    assert!(status.is_success(), "open on a new screen: {status} {body}");
    assert!(
        active_window(&d, &c).await.contains("signed in as alice"),
        "a new screen is signed in at once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jar_that_cannot_be_read_is_kept_aside_and_a_new_one_starts() {
    require_chromium();
    let site = start_site().await;
    let mut d = Daemon::start().await;
    let folder = d.home.path().join(".local/share/computer-use");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("cookies.json"), "{ not json").unwrap();
    d.restart();
    let s = d.create_session("corrupt jar").await;
    open(&d, &s, &format!("{site}/login")).await;
    assert_eq!(
        std::fs::read_to_string(folder.join("cookies.json.bad")).unwrap(),
        "{ not json"
    );
    wait_until(
        "a new jar with the login",
        Duration::from_secs(10),
        || async {
            let text = std::fs::read_to_string(folder.join("cookies.json")).unwrap_or_default();
            text.contains("alice").then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bookmark_reaches_the_template_and_the_next_browser() {
    require_chromium();
    let site = start_site().await;
    let d = Daemon::start().await;
    let s = d.create_session("bookmarks").await;
    let url = format!("{site}/");
    open(&d, &s, &url).await;
    // Ctrl+D bookmarks the page at once (its bubble only offers to edit it).
    let r = d
        .ok(
            &format!("/v1/sessions/{s}/act"),
            json!({"actions": [{"type": "key", "key": "ctrl+d"}]}),
        )
        .await;
    assert!(
        r["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["ok"] == true),
        "{r}"
    );
    let n = screen_of(&d, &s).await;
    let profile_bookmarks = d.home.path().join(format!(
        ".cache/computer-use/chromium/screen-{n}/Default/Bookmarks"
    ));
    wait_until(
        "Chromium to write the bookmark",
        Duration::from_secs(15),
        || async {
            let text = std::fs::read_to_string(&profile_bookmarks).unwrap_or_default();
            text.contains(&url).then_some(())
        },
    )
    .await;

    // A clean close (the session ends) copies it to the template.
    end(&d, &s).await;
    let template = d
        .home
        .path()
        .join(".local/share/computer-use/chromium-template/Default/Bookmarks");
    wait_until(
        "the template to hold the bookmark",
        Duration::from_secs(15),
        || async {
            let text = std::fs::read_to_string(&template).unwrap_or_default();
            text.contains(&url).then_some(())
        },
    )
    .await;

    // The next browser starts with it.
    let t = d.create_session("next browser").await;
    launch(&d, &t, "browser").await;
    let m = screen_of(&d, &t).await;
    let next = d.home.path().join(format!(
        ".cache/computer-use/chromium/screen-{m}/Default/Bookmarks"
    ));
    assert!(std::fs::read_to_string(next).unwrap().contains(&url));
}

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

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_browser_is_replaced_by_the_next_request() {
    require_chromium();
    let site = start_site().await;
    let d = Daemon::start().await;
    let s = d.create_session("crash").await;
    open(&d, &s, &format!("{site}/")).await;
    let n = screen_of(&d, &s).await;
    let port = d.devtools_port_base + u16::from(n);
    let killed = d
        .shell(
            &s,
            &format!("pkill -KILL -f -- '--remote-debugging-port={port}'"),
        )
        .await;
    assert_eq!(killed["exit_code"], 0, "{killed}");
    wait_until(
        "the browser to be gone",
        Duration::from_secs(10),
        || async { (!devtools_answer(&d, n).await).then_some(()) },
    )
    .await;
    let again = open(&d, &s, &format!("{site}/")).await;
    assert_eq!(again["ready"], true, "{again}");
    assert!(devtools_answer(&d, n).await);
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

/// A DevTools start waits up to a minute for `mcpc connect`; that holds up
/// its own screen only. Here `mcpc` is a stub whose `connect` sleeps 40 s:
/// meanwhile another session, whose screen closes as it ends (stopping
/// that screen's bridge), ends within 5 s.
#[tokio::test(flavor = "multi_thread")]
async fn a_devtools_start_waiting_on_mcpc_holds_up_no_other_screen() {
    let stub = tempfile::tempdir().unwrap();
    let connecting = stub.path().join("connecting");
    let script = stub.path().join("mcpc");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$*\" in *connect*) touch {}; sleep 40;; esac\nexit 0\n",
            connecting.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let image_bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/bin");
    let path = std::env::join_paths([stub.path().to_path_buf(), image_bin].into_iter().chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let d = Daemon::start_with(crate::common::DaemonOptions {
        env: vec![("PATH", path.to_string_lossy().into_owned())],
    })
    .await;

    let waiting = d.create_session("devtools waiting on mcpc").await;
    d.open_screen(&waiting).await;
    let other = d.create_session("ends meanwhile").await;
    d.open_screen(&other).await;
    let start = {
        let url = d.url(&format!("/v1/sessions/{waiting}/devtools/start"));
        let client = d.raw().clone();
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(crate::common::daemon::TOKEN)
                .json(&json!({"idle_secs": 600}))
                .send()
                .await
        })
    };
    wait_until(
        "the stub's `mcpc connect` to run",
        Duration::from_secs(60),
        || {
            let connecting = connecting.clone();
            async move { connecting.exists().then_some(()) }
        },
    )
    .await;

    let began = std::time::Instant::now();
    end(&d, &other).await;
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "ending another session waited {took:?} for a DevTools start"
    );
    start.abort();
}
