//! Who may use the viewer: the `Host` a browser used (DNS rebinding), the
//! `Origin` of WebSocket upgrades, and the key, against a real computerd.

use crate::common::viewer::{connect, connect_as, get, get_from, next_json, Browser};
use crate::common::Daemon;
use std::net::IpAddr;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn the_page_loads_without_the_key_at_our_names_only() {
    let d = Daemon::start().await;
    let port = d.viewer_port();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let (status, body) = get(&d, "/", &host).await;
        assert_eq!(status, 200, "{host}");
        assert!(
            body.contains("<title>computer-use viewer</title>"),
            "{body}"
        );
        let (status, _) = get(&d, "/novnc/core/rfb.js", &host).await;
        assert_eq!(
            status, 200,
            "noVNC is missing: run `bash scripts/fetch-novnc.sh`"
        );
    }
    // The host's base port is ours too: inside the container that is the
    // port browsers use.
    let (status, _) = get(&d, "/", "127.0.0.1:20900").await;
    assert_eq!(status, 200);
    // ServeDir keeps requests inside the viewer's folder.
    let (status, _) = get(&d, "/../Cargo.toml", &d.viewer_addr).await;
    assert_ne!(status, 200);
    let (status, _) = get(&d, "/..%2f..%2fCargo.toml", &d.viewer_addr).await;
    assert_ne!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_host_is_refused_for_pages_data_and_sockets() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let port = d.viewer_port();
    // The base port (20900 by default) and the bound one, in order.
    let mut ports = [20900, port];
    ports.sort_unstable();
    let allowed = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}, http://localhost:{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    let foreign = [
        format!("rebind.example:{port}"),
        format!("127.0.0.2:{port}"),
        format!("localhost.rebind.example:{port}"),
        "127.0.0.1:8080".to_string(),
        "localhost".to_string(),
    ];
    for host in &foreign {
        for path in [
            "/".to_string(),
            "/js/main.js".to_string(),
            "/novnc/core/rfb.js".to_string(),
            format!("/api/sessions?key={key}"),
        ] {
            let (status, body) = get(&d, &path, host).await;
            assert_eq!(status, 403, "{host} {path}");
            assert_eq!(
                body,
                format!(
                    "the viewer answers only at {allowed}, not at `{host}`; \
                     open the viewer link that `computer-use-mcp info` prints"
                )
            );
        }
        let browser = Browser {
            host: host.clone(),
            origin: Some(format!("http://{host}")),
        };
        let refused = connect(&d, &format!("/api/live?key={key}"), &browser).await;
        assert_eq!(refused.err(), Some(403), "{host}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_required_for_data_and_sockets() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let session = d.create_session("Key check").await;
    let screen = d.open_screen(&session).await;
    let ours = Browser::ours(&d);
    let wrong = [
        String::new(),
        "?key=".to_string(),
        "?key=wrongkey".to_string(),
        format!("?key={}", key.to_uppercase()),
        format!("?key={key}x"),
    ];
    // Each wrong key from its own address: wrong keys are slowed per
    // client (see `wrong_keys_never_lock_out_the_right_one`).
    for (n, query) in (10u8..).zip(&wrong) {
        let client = IpAddr::from([127, 0, 0, n]);
        let (status, _, body) = get_from(&d, client, &format!("/api/sessions{query}")).await;
        assert_eq!(status, 403, "{query}");
        assert_eq!(
            body,
            "missing or wrong viewer key: open the viewer link that `computer-use-mcp info` prints, which carries the key"
        );
        for path in ["/api/live".to_string(), format!("/api/screen/{screen}")] {
            let refused = connect_as(&d, client, &format!("{path}{query}"), &ours).await;
            assert_eq!(refused.err(), Some(403), "{path}{query}");
        }
    }
    let (status, body) = get(&d, &format!("/api/sessions?key={key}"), &d.viewer_addr).await;
    assert_eq!(status, 200);
    let list: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["type"], "sessions");
    assert_eq!(list["sessions"][0]["title"], "Key check");
    assert_eq!(list["sessions"][0]["screen"], u64::from(screen));
    assert!(connect(&d, &format!("/api/live?key={key}"), &ours)
        .await
        .is_ok());
    assert!(
        connect(&d, &format!("/api/screen/{screen}?key={key}"), &ours)
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_keys_never_lock_out_the_right_one() {
    // computerd/src/viewer/throttle.rs: past 10 wrong keys within 60 s, an
    // address's wrong keys are told to wait; the 32-character key is too
    // long to guess, so the right key always passes.
    const PER_CLIENT: usize = 10;
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    assert_eq!(key.len(), 32, "{key}");
    let guesser = IpAddr::from([127, 0, 0, 2]);
    for n in 0..40 {
        let (status, retry_after, body) =
            get_from(&d, guesser, &format!("/api/sessions?key=wrong{n:03}")).await;
        if n < PER_CLIENT {
            assert_eq!(status, 403, "wrong key {n}: {body}");
        } else {
            assert_eq!(status, 429, "wrong key {n}: {body}");
            let wait = retry_after.expect("a Retry-After header");
            assert!((1..=60).contains(&wait), "Retry-After: {wait}");
            assert!(
                body.starts_with(
                    "too many wrong viewer keys from your address (the limit is 10 within 60 s)"
                ),
                "{body}"
            );
        }
    }
    // Guesses spread over many addresses change nothing either.
    for n in 0..40 {
        let client = IpAddr::from([127, 0, 1, n]);
        let (status, _, _) = get_from(&d, client, "/api/sessions?key=wrongkey").await;
        assert_eq!(status, 403);
    }
    // The person gets in, from their own address and from the guesser's
    // (every browser of the host shares Docker's one address).
    for person in [IpAddr::from([127, 0, 0, 1]), guesser] {
        let (status, _, body) = get_from(&d, person, &format!("/api/sessions?key={key}")).await;
        assert_eq!(status, 200, "{person}: {body}");
        assert!(connect_as(
            &d,
            person,
            &format!("/api/live?key={key}"),
            &Browser::ours(&d)
        )
        .await
        .is_ok());
    }
    // The VNC password (the key's first 8 characters) is not the key.
    let (status, _, _) = get_from(
        &d,
        IpAddr::from([127, 0, 0, 9]),
        &format!("/api/sessions?key={}", &key[..8]),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread")]
async fn websocket_upgrades_check_origin() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let session = d.create_session("Origin check").await;
    let screen = d.open_screen(&session).await;
    let port = d.viewer_port();
    let foreign = [
        Some("http://evil.example".to_string()),
        Some(format!("http://evil.example:{port}")),
        Some(format!("https://127.0.0.1:{port}")),
        Some("http://127.0.0.1:8080".to_string()),
        Some("null".to_string()),
        None,
    ];
    for origin in foreign {
        let browser = Browser {
            host: d.viewer_addr.clone(),
            origin: origin.clone(),
        };
        for path in [
            format!("/api/live?key={key}"),
            format!("/api/screen/{screen}?key={key}"),
        ] {
            let refused = connect(&d, &path, &browser).await;
            assert_eq!(refused.err(), Some(403), "{origin:?} {path}");
        }
    }
    let localhost = Browser {
        host: format!("localhost:{port}"),
        origin: Some(format!("http://localhost:{port}")),
    };
    let mut live = connect(&d, &format!("/api/live?key={key}"), &localhost)
        .await
        .expect("our own origin is let in");
    let first = next_json(&mut live, Duration::from_secs(10)).await;
    assert_eq!(first["type"], "sessions");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_counts_pages_and_focuses_them() {
    let d = Daemon::start().await;
    let key = d.viewer_key().await;
    let (_, status) = d.call("GET", "/v1/viewer", None).await;
    assert_eq!(status, serde_json::json!({"pages": 0}));
    let mut page = connect(&d, &format!("/api/live?key={key}"), &Browser::ours(&d))
        .await
        .expect("live channel");
    let first = next_json(&mut page, Duration::from_secs(10)).await;
    assert_eq!(
        first,
        serde_json::json!({"type": "sessions", "sessions": []})
    );
    crate::common::wait_until("the page to count", Duration::from_secs(10), || async {
        let (_, v) = d.call("GET", "/v1/viewer", None).await;
        (v["pages"] == 1).then_some(())
    })
    .await;
    let told = d
        .ok("/v1/viewer/focus", serde_json::json!({"screen": 3}))
        .await;
    assert_eq!(told, serde_json::json!({"pages": 1}));
    let focus = next_json(&mut page, Duration::from_secs(10)).await;
    assert_eq!(focus, serde_json::json!({"type": "focus", "screen": 3}));

    for (body, wanted) in [
        (
            serde_json::json!({"screen": 17}),
            "`screen` is 17: use a screen number from 1 to 16",
        ),
        (
            serde_json::json!({"screen": 0}),
            "`screen` is 0: use a screen number from 1 to 16",
        ),
    ] {
        let (status, v) = d.post("/v1/viewer/focus", body).await;
        assert_eq!(status, 400);
        assert_eq!(v["message"], wanted);
    }
    let (status, v) = d
        .post(
            "/v1/viewer/focus",
            serde_json::json!({"screen": 1, "extra": true}),
        )
        .await;
    assert_eq!(status, 400, "{v}");

    drop(page);
    crate::common::wait_until(
        "the closed page to stop counting",
        Duration::from_secs(10),
        || async {
            let (_, v) = d.call("GET", "/v1/viewer", None).await;
            (v["pages"] == 0).then_some(())
        },
    )
    .await;
}
