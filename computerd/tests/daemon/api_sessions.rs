//! The API's guards and session lifecycle, against a real computerd.

use crate::common::{wait_until, Daemon, DaemonOptions};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn health_needs_no_token_and_tells_only_liveness_and_version() {
    let d = Daemon::start().await;
    let resp = d.raw().get(d.url("/health")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_v1_route_refuses_a_missing_or_wrong_token() {
    let d = Daemon::start().await;
    let routes = [
        ("GET", "/v1/computer"),
        ("GET", "/v1/sessions"),
        ("POST", "/v1/sessions"),
        ("DELETE", "/v1/sessions/x"),
        ("POST", "/v1/owners/o/heartbeat"),
        ("POST", "/v1/sessions/x/observe"),
        ("POST", "/v1/sessions/x/act"),
        ("POST", "/v1/sessions/x/shell"),
        ("POST", "/v1/sessions/x/files/read"),
        ("GET", "/v1/viewer"),
        ("POST", "/v1/viewer/focus"),
    ];
    for (method, path) in routes {
        for auth in [
            None,
            Some("Bearer wrong-token-0123456789abcdef"),
            Some("test-token-0123456789abcdef"),
        ] {
            let mut req = d.raw().request(method.parse().unwrap(), d.url(path));
            if let Some(a) = auth {
                req = req.header("Authorization", a);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(
                resp.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {auth:?}"
            );
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["code"], "unauthorized");
            assert!(body["message"]
                .as_str()
                .unwrap()
                .contains("Authorization: Bearer"));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_requests_get_a_clear_4xx_naming_the_problem() {
    let d = Daemon::start().await;
    let sid = d.create_session("malformed").await;
    let cases: Vec<(&str, Value, StatusCode, &str)> = vec![
        (
            "/v1/sessions",
            json!({"owner": "o"}),
            StatusCode::BAD_REQUEST,
            "title",
        ),
        (
            "/v1/sessions",
            json!({"title": "", "owner": "o"}),
            StatusCode::BAD_REQUEST,
            "`title` is empty",
        ),
        (
            "/v1/sessions",
            json!({"title": "x".repeat(81), "owner": "o"}),
            StatusCode::BAD_REQUEST,
            "81 characters",
        ),
        (
            "/v1/sessions",
            json!({"title": "t", "owner": "o", "colour": 1}),
            StatusCode::BAD_REQUEST,
            "colour",
        ),
        (
            "/v1/sessions",
            json!({"title": "t", "owner": "o", "settings": {"screen_size": "10x10"}}),
            StatusCode::BAD_REQUEST,
            "settings.screen_size",
        ),
        (
            "/v1/sessions",
            json!({"title": "t", "owner": "o", "settings": {"shell_timeout_secs": 700, "shell_timeout_max_secs": 600}}),
            StatusCode::BAD_REQUEST,
            "shell_timeout_max_secs",
        ),
        (
            "/v1/sessions/nope/shell",
            json!({"command": "true"}),
            StatusCode::NOT_FOUND,
            "start_computer",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": []}),
            StatusCode::BAD_REQUEST,
            "`actions` is empty",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": vec![json!({"type": "wait", "ms": 0}); 25]}),
            StatusCode::BAD_REQUEST,
            "24",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": [{"type": "scroll", "direction": "down", "steps": 21}]}),
            StatusCode::BAD_REQUEST,
            "`actions[0].steps`",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": [{"type": "wait", "ms": 5001}]}),
            StatusCode::BAD_REQUEST,
            "`actions[0].ms`",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": [{"type": "wait", "ms": 1}], "settle_ms": 9000}),
            StatusCode::BAD_REQUEST,
            "`settle_ms`",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": [{"type": "teleport"}]}),
            StatusCode::BAD_REQUEST,
            "teleport",
        ),
        (
            "/v1/sessions/SID/act",
            json!({"actions": [{"type": "click", "x": "left", "y": 1}]}),
            StatusCode::BAD_REQUEST,
            "actions[0]",
        ),
        (
            "/v1/sessions/SID/shell",
            json!({"command": "true", "timeout": "forever"}),
            StatusCode::BAD_REQUEST,
            "`timeout`",
        ),
        (
            "/v1/sessions/SID/shell",
            json!({"command": "true", "timeout": "11m"}),
            StatusCode::BAD_REQUEST,
            "COMPUTER_USE_SHELL_TIMEOUT_MAX",
        ),
        (
            "/v1/sessions/SID/shell",
            json!({"command": "true", "timeout": 0}),
            StatusCode::BAD_REQUEST,
            "`timeout`",
        ),
        (
            "/v1/sessions/SID/shell",
            json!({"command": " "}),
            StatusCode::BAD_REQUEST,
            "`command` is empty",
        ),
        (
            "/v1/sessions/SID/shell",
            json!({"cmd": "true"}),
            StatusCode::BAD_REQUEST,
            "cmd",
        ),
        (
            "/v1/sessions/SID/files/read",
            json!({}),
            StatusCode::BAD_REQUEST,
            "path",
        ),
    ];
    for (path, body, status, needle) in cases {
        let path = path.replace("SID", &sid);
        let (got, value) = d.post(&path, body.clone()).await;
        let message = value["message"].as_str().unwrap_or_default().to_string();
        assert_eq!(got, status, "POST {path} {body}: {value}");
        assert!(
            message.contains(needle),
            "POST {path} {body}: `{message}` should mention `{needle}`"
        );
    }
    let resp = d
        .raw()
        .post(d.url(&format!("/v1/sessions/{sid}/shell")))
        .bearer_auth(crate::common::daemon::TOKEN)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("not valid JSON"),
        "{body}"
    );
    let (status, body) = d.call("GET", "/v2/nothing", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["message"].as_str().unwrap().contains("/v1"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_listed_and_an_ended_one_says_why() {
    let d = Daemon::start().await;
    let a = d.create_session("First task").await;
    let b = d.create_session_as("Second task", "other-owner").await;
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    let titles: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["First task", "Second task"]);
    assert_eq!(list["sessions"][0]["screen"], Value::Null);

    let (status, ended) = d.call("DELETE", &format!("/v1/sessions/{a}"), None).await;
    assert_eq!(status, StatusCode::OK, "{ended}");
    let (status, err) = d
        .post(
            &format!("/v1/sessions/{a}/shell"),
            json!({"command": "true"}),
        )
        .await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(err["code"], "session_ended");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("end_session") && message.contains("start_computer"),
        "{message}"
    );

    let (_, info) = d.call("GET", "/v1/computer", None).await;
    assert_eq!(info["viewer_key"].as_str().unwrap().len(), 32);
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["session_id"], b.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_end_but_a_running_command_counts_as_activity() {
    let d = Daemon::start().await;
    let v = d
        .ok(
            "/v1/sessions",
            json!({"title": "idle", "owner": "o", "settings": {"idle_timeout_secs": 1}}),
        )
        .await;
    let busy = v["session_id"].as_str().unwrap().to_string();
    let v = d
        .ok(
            "/v1/sessions",
            json!({"title": "idle2", "owner": "o", "settings": {"idle_timeout_secs": 1}}),
        )
        .await;
    let idle = v["session_id"].as_str().unwrap().to_string();
    // A command longer than the idle timeout keeps its session alive.
    let out = d.shell(&busy, "sleep 2.5; echo done").await;
    assert_eq!(out["stdout"], "done\n");
    let (status, _) = d
        .post(
            &format!("/v1/sessions/{busy}/shell"),
            json!({"command": "true"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // The other one sat idle for those 2.5 s.
    let (status, err) = d
        .post(
            &format!("/v1/sessions/{idle}/shell"),
            json!({"command": "true"}),
        )
        .await;
    assert_eq!(status, StatusCode::GONE, "{err}");
    assert!(err["message"].as_str().unwrap().contains("idle"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_end_when_their_owner_stops_its_heartbeat() {
    let d = Daemon::start_with(DaemonOptions {
        env: vec![("COMPUTERD_HEARTBEAT_GRACE", "2s".into())],
    })
    .await;
    let lost = d.create_session_as("lost", "gone-host").await;
    let kept = d.create_session_as("kept", "live-host").await;
    let ended = wait_until(
        "the silent owner's session to end",
        Duration::from_secs(10),
        || async {
            let (status, _) = d.post("/v1/owners/live-host/heartbeat", json!({})).await;
            assert_eq!(status, StatusCode::OK);
            let (_, list) = d.call("GET", "/v1/sessions", None).await;
            let ids: Vec<String> = list["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["session_id"].as_str().unwrap().to_string())
                .collect();
            (!ids.contains(&lost)).then_some(ids)
        },
    )
    .await;
    assert_eq!(ended, vec![kept.clone()]);
    let (status, err) = d
        .post(
            &format!("/v1/sessions/{lost}/shell"),
            json!({"command": "true"}),
        )
        .await;
    assert_eq!(status, StatusCode::GONE);
    assert!(
        err["message"].as_str().unwrap().contains("heartbeats"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ending_an_owner_ends_all_its_sessions_at_once() {
    let d = Daemon::start().await;
    d.create_session_as("a", "host-a").await;
    d.create_session_as("b", "host-a").await;
    d.create_session_as("c", "host-b").await;
    let (status, body) = d.call("DELETE", "/v1/owners/host-a/sessions", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["sessions"], 2);
    let (_, list) = d.call("GET", "/v1/sessions", None).await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn ending_a_session_kills_its_running_commands() {
    let d = Daemon::start().await;
    let sid = d.create_session("long command").await;
    // A duration no other process uses, to find this one in /proc.
    let seconds = format!("{}.{}", 300 + std::process::id() % 600, 7);
    let command = format!("sleep {seconds}; echo finished");
    let sleeping = ["sleep", seconds.as_str()];
    let shell_path = format!("/v1/sessions/{sid}/shell");
    let ((status, answer), ()) = tokio::join!(
        d.post(&shell_path, json!({"command": command, "timeout": 60})),
        async {
            wait_until("the command to run", Duration::from_secs(10), || async {
                crate::common::processes::running(&sleeping).then_some(())
            })
            .await;
            let (status, v) = d.call("DELETE", &format!("/v1/sessions/{sid}"), None).await;
            assert_eq!(status, StatusCode::OK, "{v}");
            wait_until(
                "the command of the ended session to be killed",
                Duration::from_secs(10),
                || async { (!crate::common::processes::running(&sleeping)).then_some(()) },
            )
            .await;
        }
    );
    assert_eq!(status, StatusCode::GONE, "{answer}");
    assert_eq!(answer["code"], "session_ended", "{answer}");
}
