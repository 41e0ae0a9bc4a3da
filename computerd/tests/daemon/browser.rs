//! The browser per screen, against a real computerd with real Xvnc screens
//! and real Chromiums: one browser per screen, logins shared across
//! screens through the cookie jar, the template profile, a crashed browser
//! replaced, and a DevTools start that holds up no other screen. What the
//! browsers open is `browser_open`'s.
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

pub(crate) fn require_chromium() {
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
pub(crate) async fn start_site() -> String {
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

pub(crate) async fn open(d: &Daemon, session: &str, target: &str) -> Value {
    d.ok(
        &format!("/v1/sessions/{session}/open"),
        json!({ "target": target }),
    )
    .await
}

pub(crate) async fn launch(d: &Daemon, session: &str, app: &str) -> Value {
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

pub(crate) async fn active_window(d: &Daemon, session: &str) -> String {
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
pub(crate) async fn devtools_answer(d: &Daemon, n: u8) -> bool {
    let port = d.devtools_port_base + u16::from(n);
    reqwest::get(format!("http://127.0.0.1:{port}/json/version"))
        .await
        .is_ok_and(|r| r.status().is_success())
}

pub(crate) async fn screen_of(d: &Daemon, session: &str) -> u8 {
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
