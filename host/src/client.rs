//! The HTTP client of computerd's API. Every call has a deadline; failures
//! become [`ClientError`]s that say what happened and what may still be
//! running, so the agent is never left waiting on a hung call.

use computer_protocol::{ErrorCode, WireError};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

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
    token: String,
    /// Container name, for error messages that point at its logs.
    container: String,
    http: reqwest::Client,
}

impl ComputerdClient {
    pub fn new(base_url: String, token: String, container: String) -> ComputerdClient {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            // Idle keep-alive connections make repeated calls fast.
            .pool_idle_timeout(Duration::from_secs(60))
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
    pub fn streaming(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base_url))
            .bearer_auth(&self.token)
    }

    /// The wire error of a response that is not a success.
    pub async fn error_of(&self, what: &str, response: reqwest::Response) -> ClientError {
        let status = response.status();
        let bytes = response.bytes().await.unwrap_or_default();
        match serde_json::from_slice::<WireError>(&bytes) {
            Ok(wire) => ClientError::Api(wire),
            Err(_) => ClientError::Unexpected {
                what: what.to_string(),
                status,
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned(),
            },
        }
    }

    /// Sends `body` (if any) to `path` and reads the JSON answer, giving up
    /// after `deadline`. `still_running` tells the agent what a timeout leaves
    /// behind.
    pub async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
        deadline: Duration,
        still_running: &'static str,
    ) -> Result<T, ClientError> {
        let url = format!("{}{path}", self.base_url);
        let mut request = self
            .http
            .request(method, &url)
            .bearer_auth(&self.token)
            .timeout(deadline);
        if let Some(body) = body {
            request = request.json(body);
        }
        let what = path.to_string();
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(e, &what, deadline, still_running))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport_error(e, &what, deadline, still_running))?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| ClientError::Unexpected {
                what,
                status,
                body: format!(
                    "{e}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                ),
            });
        }
        match serde_json::from_slice::<WireError>(&bytes) {
            Ok(wire) => Err(ClientError::Api(wire)),
            Err(_) => Err(ClientError::Unexpected {
                what,
                status,
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned(),
            }),
        }
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
            let mut reason = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                reason = format!("{reason}: {s}");
                source = s.source();
            }
            ClientError::Unreachable {
                url: self.base_url.clone(),
                container: self.container.clone(),
                reason,
            }
        }
    }
}
