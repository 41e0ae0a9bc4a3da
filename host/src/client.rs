//! The HTTP client of computerd's API. Every call has a deadline; failures
//! become [`ClientError`]s that say what happened and what may still be
//! running, so the agent is never left waiting on a hung call.

use computer_protocol::endpoints::Endpoint;
use computer_protocol::{ErrorCode, Token, WireError};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use std::time::Duration;

const MIB: usize = 1024 * 1024;
/// Most bytes read of an error answer; a wire error is a few hundred.
const ERROR_BODY_MAX: usize = 64 * 1024;
/// Bytes of an unexpected answer quoted in the agent's error.
const QUOTED_BYTES: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// computerd answered with its wire error.
    #[error("{0}")]
    Api(WireError),
    #[error("the computer did not answer `{what}` within {}s; {still_running}", .waited.as_secs())]
    Timeout {
        what: String,
        waited: Duration,
        still_running: &'static str,
    },
    #[error("cannot reach the computer at {url}: {reason}; the container may have stopped (check `docker ps` and `docker logs {container}`), then call start_computer again")]
    Unreachable {
        url: String,
        container: String,
        reason: String,
    },
    #[error("the computer answered `{what}` with something unexpected ({status}): {body}")]
    Unexpected {
        what: String,
        status: StatusCode,
        body: String,
    },
    #[error("the computer's answer to `{what}` is over the limit of {} MiB the host reads, so it was dropped; the computer is misbehaving: check `docker logs {container}`, or remove the container with `docker rm -f {container}` (its home volume stays) and call start_computer again", .limit / MIB)]
    TooLarge {
        what: String,
        limit: usize,
        container: String,
    },
}

impl ClientError {
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Api(e) => Some(e.code),
            _ => None,
        }
    }
}

/// A computerd at a base URL with its token.
#[derive(Clone, Debug)]
pub struct ComputerdClient {
    base_url: String,
    token: Token,
    /// Container name, for error messages that point at its logs.
    container: String,
    http: reqwest::Client,
}

/// How long an idle connection to computerd is kept for the next call.
pub const POOL_IDLE: Duration = Duration::from_secs(13);

/// The HTTP client for computerd's API: straight to loopback, never
/// through `HTTP_PROXY`/`ALL_PROXY` (the proxy would see the token and
/// everything sent), and never following a redirect (a hostile computer
/// could point the host's requests at any address it likes).
pub fn loopback_http() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
}

impl ComputerdClient {
    pub fn new(base_url: String, token: Token, container: String) -> ComputerdClient {
        let http = loopback_http()
            .connect_timeout(Duration::from_secs(5))
            // Idle keep-alive connections make repeated calls fast.
            // computerd closes a connection that sends no request head for
            // 15 s; dropping idle ones 2 s before keeps a request from
            // racing that close. Kept past the heartbeat's 10 s (plus the
            // 2 s a tunnel's Docker check may take), so the heartbeat always
            // finds one: through a tunnel a new connection is a new exec,
            // which waits while a `docker cp` holds the container.
            .pool_idle_timeout(POOL_IDLE)
            .build()
            .expect("an HTTP client without TLS always builds");
        ComputerdClient {
            base_url,
            token,
            container,
            http,
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// A request to `path` with the token and no total deadline, for a body
    /// that streams for as long as it takes. The caller watches for stalls
    /// instead, and turns failures into errors with [`Self::transport_error`]
    /// and [`Self::error_of`].
    pub fn streaming<E: Endpoint>(&self, key: &E::Key) -> reqwest::RequestBuilder {
        self.http
            .request(
                method_of::<E>(),
                format!("{}{}", self.base_url, E::path(key)),
            )
            .bearer_auth(self.token.expose())
    }

    /// The wire error of a response that is not a success, reading at most
    /// 64 KiB of its body for at most `deadline`: a streaming response has
    /// no deadline of its own, and a hostile computer could trickle it.
    pub async fn error_of(
        &self,
        what: &str,
        response: reqwest::Response,
        deadline: Duration,
    ) -> ClientError {
        let status = response.status();
        let mut body = Vec::new();
        let read =
            tokio::time::timeout(deadline, read_limited(response, &mut body, ERROR_BODY_MAX)).await;
        if let Ok(Ok(())) = read {
            if let Ok(wire) = serde_json::from_slice::<WireError>(&body) {
                return ClientError::Api(wire);
            }
        }
        let mut quoted = quote(&body);
        match read {
            Err(_) => quoted.push_str(&format!(
                " (the answer did not end within {} s)",
                deadline.as_secs()
            )),
            Ok(Err(Limited::Over)) => quoted.push_str(" (cut: the answer is too long)"),
            Ok(Err(Limited::Failed(e))) => quoted.push_str(&format!(" (reading it failed: {e})")),
            Ok(Ok(())) => {}
        }
        ClientError::Unexpected {
            what: what.to_string(),
            status,
            body: quoted,
        }
    }

    /// The JSON answer of endpoint `E`'s successful streaming response,
    /// read for at most `deadline` and at most `E`'s answer limit.
    pub async fn json_of<E: Endpoint>(
        &self,
        what: &str,
        response: reqwest::Response,
        deadline: Duration,
        still_running: &'static str,
    ) -> Result<E::Response, ClientError> {
        let status = response.status();
        let mut body = Vec::new();
        match tokio::time::timeout(deadline, read_limited(response, &mut body, E::ANSWER_MAX)).await
        {
            Err(_) => {
                return Err(ClientError::Timeout {
                    what: what.to_string(),
                    waited: deadline,
                    still_running,
                })
            }
            Ok(Err(e)) => {
                return Err(self.limited_error(e, what, E::ANSWER_MAX, deadline, still_running))
            }
            Ok(Ok(())) => {}
        }
        parse_json(what, status, &body)
    }

    fn limited_error(
        &self,
        e: Limited,
        what: &str,
        limit: usize,
        deadline: Duration,
        still_running: &'static str,
    ) -> ClientError {
        match e {
            Limited::Over => ClientError::TooLarge {
                what: what.to_string(),
                limit,
                container: self.container.clone(),
            },
            Limited::Failed(e) => self.transport_error(e, what, deadline, still_running),
        }
    }

    /// Calls endpoint `E` on `key`, sending `body` when the method carries
    /// one, and reads its JSON answer, giving up after `deadline`.
    /// `still_running` tells the agent what a timeout leaves behind.
    pub async fn send<E: Endpoint>(
        &self,
        key: &E::Key,
        body: &E::Request,
        deadline: Duration,
        still_running: &'static str,
    ) -> Result<E::Response, ClientError> {
        let path = E::path(key);
        let url = format!("{}{path}", self.base_url);
        let mut request = self
            .http
            .request(method_of::<E>(), &url)
            .bearer_auth(self.token.expose())
            .timeout(deadline);
        if E::METHOD == computer_protocol::endpoints::Method::Post {
            request = request.json(body);
        }
        let what = path;
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(e, &what, deadline, still_running))?;
        let status = response.status();
        if !status.is_success() {
            // The request's own timeout still bounds the read.
            return Err(self.error_of(&what, response, deadline).await);
        }
        let mut bytes = Vec::new();
        // Chunk by chunk with a cap; the request's timeout bounds the time.
        read_limited(response, &mut bytes, E::ANSWER_MAX)
            .await
            .map_err(|e| self.limited_error(e, &what, E::ANSWER_MAX, deadline, still_running))?;
        parse_json(&what, status, &bytes)
    }

    pub fn transport_error(
        &self,
        e: reqwest::Error,
        what: &str,
        deadline: Duration,
        still_running: &'static str,
    ) -> ClientError {
        if e.is_timeout() {
            ClientError::Timeout {
                what: what.to_string(),
                waited: deadline,
                still_running,
            }
        } else {
            ClientError::Unreachable {
                url: self.base_url.clone(),
                container: self.container.clone(),
                reason: crate::error_chain::describe(&e),
            }
        }
    }
}

/// reqwest's method for endpoint `E`.
fn method_of<E: Endpoint>() -> Method {
    match E::METHOD {
        computer_protocol::endpoints::Method::Get => Method::GET,
        computer_protocol::endpoints::Method::Post => Method::POST,
        computer_protocol::endpoints::Method::Delete => Method::DELETE,
    }
}

/// Why a body was not read to its end.
pub(crate) enum Limited {
    /// It holds more than the limit.
    Over,
    Failed(reqwest::Error),
}

/// Appends `response`'s body to `body`, chunk by chunk, stopping with
/// [`Limited::Over`] as soon as it would hold more than `limit` bytes.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    body: &mut Vec<u8>,
    limit: usize,
) -> Result<(), Limited> {
    while let Some(chunk) = response.chunk().await.map_err(Limited::Failed)? {
        if body.len() + chunk.len() > limit {
            let room = limit - body.len();
            body.extend_from_slice(&chunk[..room]);
            return Err(Limited::Over);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(())
}

/// A successful answer's JSON, or the error that quotes what came instead.
fn parse_json<T: DeserializeOwned>(
    what: &str,
    status: StatusCode,
    body: &[u8],
) -> Result<T, ClientError> {
    serde_json::from_slice(body).map_err(|e| ClientError::Unexpected {
        what: what.to_string(),
        status,
        body: format!("{e}: {}", quote(body)),
    })
}

/// The start of an answer, for an error message.
fn quote(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTED_BYTES)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::textview::TREE_DEPTH_MAX;
    use computer_protocol::{
        ActResponse, Bounds, Cursor, FrameId, ImageFormat, NodeState, Observation, Region,
        ScreenNumber, TextNode, TextView, TreeSource,
    };

    /// The deepest text view computerd sends: a chain of nodes nested
    /// [`TREE_DEPTH_MAX`] levels below the root, each with states and
    /// bounds (one more JSON level), inside an act result's observation
    /// (the deepest place a view travels in).
    fn act_with_deepest_view(levels_below_root: usize) -> ActResponse {
        let mut node: Option<TextNode> = None;
        for level in (0..=levels_below_root).rev() {
            node = Some(TextNode {
                node_ref: format!("e{}", level + 1),
                role: "group".into(),
                name: format!("level {level}"),
                value: None,
                states: vec![NodeState::Expanded],
                bounds: Some(Bounds {
                    x: 1,
                    y: 2,
                    width: 3,
                    height: 4,
                }),
                depth: None,
                children: node.into_iter().collect(),
            });
        }
        ActResponse {
            screen: ScreenNumber(1),
            outcomes: vec![],
            requested: 0,
            observation: Some(Observation {
                screen: ScreenNumber(1),
                frame_id: FrameId(1),
                captured_at: String::new(),
                width: 10,
                height: 10,
                cursor: Cursor { x: 0, y: 0 },
                active_window: None,
                unchanged: false,
                frame_width: 10,
                frame_height: 10,
                scale: 1.0,
                region: Region {
                    x: 0,
                    y: 0,
                    width: 10,
                    height: 10,
                },
                format: ImageFormat::Png,
                bytes: 0,
                reduced: None,
                image_base64: None,
                text_view: Some(TextView {
                    popups: vec![],
                    view_id: 1,
                    windows: vec![],
                    window: Some(1),
                    source: Some(TreeSource::Page),
                    nodes: node.into_iter().collect(),
                    total_nodes: levels_below_root + 1,
                    offset: 0,
                    note: None,
                    cursor: None,
                    unchanged: false,
                }),
            }),
            settled: true,
            settle_waited_ms: 0,
            effects: Vec::new(),
        }
    }

    #[test]
    fn the_deepest_text_view_computerd_sends_parses() {
        let sent = act_with_deepest_view(TREE_DEPTH_MAX);
        let body = serde_json::to_vec(&sent).unwrap();
        let parsed: ActResponse = parse_json("act", StatusCode::OK, &body)
            .unwrap_or_else(|e| panic!("a view nested {TREE_DEPTH_MAX} levels parses: {e}"));
        assert_eq!(parsed, sent);
        // Observe and open answers hold the observation one level higher.
        let observation = serde_json::to_vec(&sent.observation).unwrap();
        parse_json::<Observation>("observe", StatusCode::OK, &observation).unwrap();
    }

    #[test]
    fn debug_leaves_the_token_out() {
        let client = ComputerdClient::new(
            "http://127.0.0.1:9".into(),
            Token::new("secret-token-123"),
            "computer-use".into(),
        );
        let shown = format!("{client:?}");
        assert!(!shown.contains("secret-token-123"), "{shown}");
        assert!(shown.contains("Token(hidden)"), "{shown}");
    }
}
