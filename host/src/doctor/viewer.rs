//! The viewer as a person's browser uses it: its page over HTTP, the session
//! list with the key, and the WebSocket that carries a screen (our `Origin`
//! and the key, as the viewer's guard wants them), which must hand over
//! the screen's RFB greeting.

use super::report::Outcome;
use crate::client::{loopback_http, Limited};
use crate::error_chain::describe;
use computer_protocol::ScreenNumber;
use futures::StreamExt;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// Most bytes read of the page or the session list.
const BODY_MAX: usize = 1024 * 1024;

/// Why a `GET` on the viewer port gave no page. The URL may hold the key:
/// the page check hides it before showing the text.
#[derive(Debug, thiserror::Error)]
enum GetError {
    #[error("`GET {url}` failed: {}", describe(.source))]
    Send { url: String, source: reqwest::Error },
    #[error("`GET {url}` answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    /// `source` is `None` when the answer was over [`BODY_MAX`].
    #[error("`GET {url}`: the answer could not be read whole")]
    Unread {
        url: String,
        source: Option<reqwest::Error>,
    },
}

/// `GET /` and `GET /api/sessions?key=K` on the viewer port.
pub(crate) async fn page(base: u16, key: &str, title: &str, screen: ScreenNumber) -> Outcome {
    let fix = "the viewer is computerd's; see its logs with `docker logs <computer>`, and check that nothing else answers on this port";
    let http = loopback_http()
        .build()
        .expect("an HTTP client without TLS always builds");
    let url = format!("http://127.0.0.1:{base}/");
    let page = match get(&http, &url).await {
        Ok(page) => page,
        Err(e) => return Outcome::err(e.to_string(), fix),
    };
    if !page.contains("<html") || !page.contains("viewer") {
        return Outcome::err(
            format!("`GET {url}` answered something other than the viewer page"),
            fix,
        );
    }
    let list = match get(&http, &format!("{url}api/sessions?key={key}")).await {
        Ok(list) => list,
        Err(e) => return Outcome::err(e.to_string().replace(key, "<key>"), fix),
    };
    // The viewer shows titles and screens, never session ids.
    let listed = serde_json::from_str::<serde_json::Value>(&list).is_ok_and(|v| {
        v["sessions"].as_array().is_some_and(|sessions| {
            sessions
                .iter()
                .any(|s| s["title"] == title && s["screen"] == screen.0)
        })
    });
    if !listed {
        return Outcome::err(
            format!("the viewer's session list does not show the spare session `{title}` on screen {screen}"),
            fix,
        );
    }
    Outcome::ok(format!(
        "{url} serves the page, and with the key lists the spare session"
    ))
}

async fn get(http: &reqwest::Client, url: &str) -> Result<String, GetError> {
    let answer = http
        .get(url)
        .send()
        .await
        .map_err(|source| GetError::Send {
            url: url.to_string(),
            source,
        })?;
    if !answer.status().is_success() {
        return Err(GetError::Status {
            url: url.to_string(),
            status: answer.status(),
        });
    }
    let mut body = Vec::new();
    crate::client::read_limited(answer, &mut body, BODY_MAX)
        .await
        .map_err(|limited| GetError::Unread {
            url: url.to_string(),
            source: match limited {
                Limited::Over => None,
                Limited::Failed(e) => Some(e),
            },
        })?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// `GET /api/screen/<n>?key=K` as a WebSocket, from the viewer's own origin;
/// its first frame is Xvnc's protocol version.
pub(crate) async fn socket(base: u16, key: &str, screen: ScreenNumber) -> Outcome {
    let fix = "the bridge is computerd's; see its logs with `docker logs <computer>`";
    let shown = format!("ws://127.0.0.1:{base}/api/screen/{screen}");
    let mut request = match format!("{shown}?key={key}").into_client_request() {
        Ok(request) => request,
        Err(e) => return Outcome::err(format!("{shown}: {e}"), fix),
    };
    request.headers_mut().insert(
        "Origin",
        format!("http://127.0.0.1:{base}")
            .parse()
            .expect("an origin is a header value"),
    );
    let (mut socket, _) = match tokio_tungstenite::connect_async(request).await {
        Ok(connected) => connected,
        Err(e) => {
            return Outcome::err(
                format!(
                    "{shown} did not open: {}",
                    e.to_string().replace(key, "<key>")
                ),
                fix,
            )
        }
    };
    let outcome = match socket.next().await {
        Some(Ok(Message::Binary(data))) if data.starts_with(b"RFB 003.") => Outcome::ok(format!(
            "{shown} opened and carries the screen's VNC ({})",
            String::from_utf8_lossy(&data[..data.len().min(12)]).trim()
        )),
        Some(Ok(other)) => Outcome::err(
            format!("{shown} sent {other:?} instead of the screen's VNC greeting"),
            fix,
        ),
        Some(Err(e)) => Outcome::err(format!("{shown} failed: {e}"), fix),
        None => Outcome::err(format!("{shown} closed before any VNC greeting"), fix),
    };
    // Closed before the session ends, so the screen is not kept for a viewer.
    let _ = socket.close(None).await;
    outcome
}
