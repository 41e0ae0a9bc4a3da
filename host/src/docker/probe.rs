//! The two questions the Docker side asks computerd itself: is it up
//! (`GET /health`, unauthenticated), and what is the viewer key
//! (`GET /v1/computer` with the token). Everything else goes through the
//! host's computerd client.

use super::error::DockerError;
use super::found::{find_computer, ComputerState};
use crate::client::{loopback_http, read_limited, Limited};
use crate::error_chain::describe;
use bollard::Docker;
use computer_protocol::endpoints::{Endpoint, GetComputer, GetHealth};
use computer_protocol::{check_viewer_key, ComputerInfo, Token, ViewerKey};
use std::time::{Duration, Instant};

/// Between health polls; computerd usually answers within a few polls.
const POLL_EVERY: Duration = Duration::from_millis(100);
/// One health request; the API is on loopback, so a slow answer means a
/// stuck process rather than a slow network.
const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// How often the wait also asks Docker whether the container still runs, so
/// a crash fails at once instead of at the deadline.
const STATE_CHECK_EVERY: Duration = Duration::from_secs(1);
const VIEWER_KEY_DEADLINE: Duration = Duration::from_secs(5);

/// Most bytes read of computerd's `/v1/computer` answer, a few dozen.
const COMPUTER_INFO_MAX: usize = 64 * 1024;

fn client() -> reqwest::Client {
    // No proxy, no redirects: HTTP_PROXY must never see loopback traffic
    // or the token, and a hostile computer must not send the host elsewhere.
    // No fallback to a default client, which would use the proxy.
    loopback_http()
        .build()
        .expect("an HTTP client without TLS always builds")
}

/// Polls `GET <api_url>/health` until it answers 200, the container stops,
/// or `limit` passes.
pub(crate) async fn wait_healthy(
    docker: &Docker,
    name: &str,
    api_url: &str,
    limit: Duration,
) -> Result<(), DockerError> {
    let client = client();
    let url = format!("{api_url}{}", GetHealth::PATH);
    let started = Instant::now();
    let mut next_state_check = started + STATE_CHECK_EVERY;
    let mut ticks = tokio::time::interval(POLL_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let last = match client.get(&url).timeout(REQUEST_DEADLINE).send().await {
            Ok(answer) if answer.status().is_success() => return Ok(()),
            Ok(answer) => format!("last answer: status {}", answer.status()),
            Err(e) => format!("last error: {}", describe(&e)),
        };
        if Instant::now() >= next_state_check {
            next_state_check += STATE_CHECK_EVERY;
            match find_computer(docker, name).await? {
                None => {
                    return Err(DockerError::Vanished {
                        name: name.to_string(),
                    })
                }
                Some(found) if found.state != ComputerState::Running => {
                    return Err(DockerError::Exited {
                        name: name.to_string(),
                        exit_code: found.exit_code.unwrap_or(-1),
                    })
                }
                Some(_) => {}
            }
        }
        if started.elapsed() >= limit {
            return Err(DockerError::Unhealthy {
                name: name.to_string(),
                url,
                after: limit,
                last,
            });
        }
    }
}

/// Checks that what holds the viewer's local port `port` is this
/// computer's viewer (another MCP server's tunnel to it): it must answer a
/// fresh nonce with [`computer_protocol::viewer::viewer_proof`] under `key`.
/// Anything else would be given the key by the person's browser.
pub async fn prove_viewer(name: &str, port: u16, key: &ViewerKey) -> Result<(), DockerError> {
    let nonce: String = (0..16)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect();
    let expected = computer_protocol::viewer::viewer_proof(key.expose(), &nonce);
    let url = format!("http://127.0.0.1:{port}/api/proof?nonce={nonce}");
    let held = |answer: String| DockerError::ViewerPortHeld {
        name: name.to_string(),
        port,
        answer,
    };
    let answer = client()
        .get(&url)
        .timeout(VIEWER_KEY_DEADLINE)
        .send()
        .await
        .map_err(|e| held(describe(&e)))?;
    let status = answer.status();
    let mut body = Vec::new();
    read_limited(answer, &mut body, COMPUTER_INFO_MAX)
        .await
        .map_err(|_| {
            held(format!(
                "status {status} and an answer over {COMPUTER_INFO_MAX} bytes"
            ))
        })?;
    if status.is_success() && body == expected.as_bytes() {
        return Ok(());
    }
    Err(held(format!("status {status}, not the proof")))
}

/// The viewer key computerd keeps in home (also the VNC password).
pub async fn viewer_key(
    name: &str,
    api_url: &str,
    token: &Token,
) -> Result<ViewerKey, DockerError> {
    let url = format!("{api_url}{}", GetComputer::PATH);
    let failed = |reason: String| DockerError::ViewerKey {
        name: name.to_string(),
        url: url.clone(),
        reason,
    };
    let answer = client()
        .get(&url)
        .bearer_auth(token.expose())
        .timeout(VIEWER_KEY_DEADLINE)
        .send()
        .await
        .map_err(|e| failed(describe(&e)))?;
    if !answer.status().is_success() {
        return Err(failed(format!("status {}", answer.status())));
    }
    let mut body = Vec::new();
    read_limited(answer, &mut body, COMPUTER_INFO_MAX)
        .await
        .map_err(|e| match e {
            Limited::Over => failed(format!("its answer is over {COMPUTER_INFO_MAX} bytes")),
            Limited::Failed(e) => failed(describe(&e)),
        })?;
    let info: ComputerInfo = serde_json::from_slice(&body)
        .map_err(|e| failed(format!("its answer is not JSON: {e}")))?;
    check_viewer_key(info.viewer_key.expose())?;
    Ok(info.viewer_key)
}
