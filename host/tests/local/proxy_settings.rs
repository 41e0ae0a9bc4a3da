//! Finding 2: computerd's client never goes through `HTTP_PROXY` or
//! `ALL_PROXY`, which would see the token and everything sent. Proxy
//! variables apply to a whole process, and the other tests of this binary
//! run beside this one, so the check runs in a child process of this test
//! binary that alone has them.

use axum::routing::get;
use axum::Router;
use computer_protocol::endpoints::{Endpoint, GetViewer, NoBody};
use computer_protocol::Token;
use computer_use_mcp::client::ComputerdClient;
use serde_json::json;
use std::time::Duration;

/// Set (to `1`) in the child process, which runs the check itself.
const CHILD: &str = "COMPUTER_USE_TEST_PROXY_CHILD";

#[test]
fn the_computer_is_called_directly_whatever_the_proxy_settings() {
    if std::env::var_os(CHILD).is_some() {
        return tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(check_with_proxy_settings());
    }
    // This test alone, in a process of its own with the proxy variables.
    let name = "proxy_settings::the_computer_is_called_directly_whatever_the_proxy_settings";
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the check in its own process failed:\n{shown}"
    );
    // A filter that matched nothing would pass too.
    assert!(
        shown.contains("1 passed"),
        "the child ran no test:\n{shown}"
    );
}

/// The check itself, in the child process: every proxy variable points at
/// a listener, and neither the client nor the viewer key probe connects to it.
async fn check_with_proxy_settings() {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        std::env::set_var(var, &proxy_url);
    }
    for var in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(var);
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = Router::new().route(
        GetViewer::PATH,
        get(|| async { axum::Json(json!({"pages": 7})) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });

    let client = ComputerdClient::new(url.clone(), Token::new("secret-token"), "cu-stub".into());
    let answer = client
        .send::<GetViewer>(&(), &NoBody {}, Duration::from_secs(3), "nothing")
        .await;
    // The call has returned: a proxied request would have connected by now.
    assert!(
        matches!(proxy.accept(), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the proxy received a connection (and the token)"
    );
    assert_eq!(answer.unwrap().pages, 7);

    // The Docker side's probe too.
    let e = computer_use_mcp::docker::viewer_key("cu-stub", &url, &Token::new("secret-token"))
        .await
        .unwrap_err();
    assert!(
        matches!(proxy.accept(), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the proxy received the probe's connection: {e}"
    );
}
