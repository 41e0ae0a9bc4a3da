//! The two questions the Docker side asks computerd itself: is it up
//! (`GET /health`, unauthenticated), and what is the viewer key
//! (`GET /v1/computer` with the token). Everything else goes through the
//! host's computerd client.

use super::container::{find_computer, ComputerState};
use super::error::{describe, DockerError};
use bollard::Docker;
use computer_protocol::{routes, ComputerInfo};
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

fn client() -> reqwest::Client {
    // No proxy: HTTP_PROXY must never see loopback traffic or the token.
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
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
    let url = format!("{api_url}{}", routes::HEALTH);
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

/// The viewer key computerd keeps in home (also the VNC password).
pub async fn viewer_key(name: &str, api_url: &str, token: &str) -> Result<String, DockerError> {
    let url = format!("{api_url}{}", routes::COMPUTER);
    let failed = |reason: String| DockerError::ViewerKey {
        name: name.to_string(),
        url: url.clone(),
        reason,
    };
    let answer = client()
        .get(&url)
        .bearer_auth(token)
        .timeout(VIEWER_KEY_DEADLINE)
        .send()
        .await
        .map_err(|e| failed(describe(&e)))?;
    if !answer.status().is_success() {
        return Err(failed(format!("status {}", answer.status())));
    }
    let info: ComputerInfo = answer.json().await.map_err(|e| failed(describe(&e)))?;
    Ok(info.viewer_key)
}
