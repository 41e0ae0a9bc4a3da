//! Talking to a daemon's viewer the way a browser would, with the `Host`
//! and `Origin` headers under the test's control.

use super::Daemon;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

pub type Socket = WebSocketStream<TcpStream>;

/// What the viewer page's own requests carry.
pub struct Browser {
    pub host: String,
    pub origin: Option<String>,
}

impl Browser {
    /// A page loaded from the viewer at `127.0.0.1:<its port>`.
    pub fn ours(d: &Daemon) -> Browser {
        Browser {
            host: d.viewer_addr.clone(),
            origin: Some(format!("http://{}", d.viewer_addr)),
        }
    }
}

/// `GET path` over a fresh connection; returns the status and the body.
pub async fn get(d: &Daemon, path: &str, host: &str) -> (u16, String) {
    let tcp = TcpStream::connect(&d.viewer_addr)
        .await
        .expect("viewer accepts");
    let (status, _, body) = get_over(tcp, path, host).await;
    (status, body)
}

/// A connection to the viewer from `from`, another loopback address such
/// as 127.0.0.2: the viewer counts wrong keys per client address.
pub async fn connect_from(d: &Daemon, from: std::net::IpAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::new(from, 0))
        .expect("bind to the client address");
    socket
        .connect(d.viewer_addr.parse().expect("viewer address"))
        .await
        .expect("viewer accepts")
}

/// `GET path` from client address `from`; returns the status, the
/// `Retry-After` header and the body.
pub async fn get_from(
    d: &Daemon,
    from: std::net::IpAddr,
    path: &str,
) -> (u16, Option<u64>, String) {
    get_over(connect_from(d, from).await, path, &d.viewer_addr).await
}

async fn get_over(mut tcp: TcpStream, path: &str, host: &str) -> (u16, Option<u64>, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.expect("request");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), tcp.read_to_end(&mut raw))
        .await
        .expect("viewer answers within 20 s")
        .expect("response");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let retry_after = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("retry-after")
            .then(|| value.trim().parse().ok())?
    });
    (status, retry_after, body.to_string())
}

/// Opens a WebSocket to `path`; on refusal, the HTTP status.
pub async fn connect(d: &Daemon, path: &str, browser: &Browser) -> Result<Socket, u16> {
    let tcp = TcpStream::connect(&d.viewer_addr)
        .await
        .expect("viewer accepts");
    connect_over(tcp, d, path, browser).await
}

/// Opens a WebSocket to `path` from client address `from`.
pub async fn connect_as(
    d: &Daemon,
    from: std::net::IpAddr,
    path: &str,
    browser: &Browser,
) -> Result<Socket, u16> {
    connect_over(connect_from(d, from).await, d, path, browser).await
}

async fn connect_over(
    tcp: TcpStream,
    d: &Daemon,
    path: &str,
    browser: &Browser,
) -> Result<Socket, u16> {
    let mut request = format!("ws://{}{path}", d.viewer_addr)
        .into_client_request()
        .expect("request");
    let headers = request.headers_mut();
    headers.insert("Host", HeaderValue::from_str(&browser.host).expect("host"));
    if let Some(origin) = &browser.origin {
        headers.insert("Origin", HeaderValue::from_str(origin).expect("origin"));
    }
    match tokio_tungstenite::client_async(request, tcp).await {
        Ok((socket, _)) => Ok(socket),
        Err(tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(e) => panic!("WebSocket to {path} failed without an HTTP answer: {e}"),
    }
}

/// The next text message as JSON, within `limit`.
pub async fn next_json(socket: &mut Socket, limit: Duration) -> serde_json::Value {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .unwrap_or_else(|_| panic!("no message within {limit:?}"))
            .expect("socket open")
            .expect("message");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON message");
        }
    }
}

/// Reads binary frames until `n` bytes came, within `limit`.
pub async fn read_bytes(socket: &mut Socket, n: usize, limit: Duration) -> Vec<u8> {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + limit;
    let mut out = Vec::new();
    while out.len() < n {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .unwrap_or_else(|_| panic!("only {} of {n} bytes within {limit:?}", out.len()))
            .expect("socket open")
            .expect("message");
        if let Message::Binary(data) = message {
            out.extend_from_slice(&data);
        }
    }
    out
}
