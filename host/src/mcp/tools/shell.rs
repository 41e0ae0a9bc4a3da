//! shell.

use super::ToolResult;
use crate::agent::Agent;
use crate::mcp::args::{parse, ShellArgs};
use crate::mcp::result::structured;
use computer_protocol::routes::{session_action, SessionRoute};
use computer_protocol::{SessionId, ShellRequest, ShellResult};
use reqwest::Method;
use rmcp::model::JsonObject;
use std::time::Duration;

/// Time allowed beyond the command's own timeout for computerd to kill it
/// and answer.
const MARGIN: Duration = Duration::from_secs(30);

pub async fn shell(host: &Agent, arguments: Option<JsonObject>) -> ToolResult {
    let a: ShellArgs = parse(arguments)?;
    let conn = host.reach(&a.session_id).await?;
    let default_max = conn.shell_timeout_max;
    // computerd enforces the limits and explains them; the host only needs
    // a deadline that outlasts the command's own timeout.
    let timeout = a
        .timeout
        .as_ref()
        .and_then(|t| t.to_duration().ok())
        .unwrap_or(default_max)
        .min(Duration::from_secs(24 * 3600));
    let path = session_action(&SessionId(a.session_id.clone()), SessionRoute::Shell);
    let req = ShellRequest {
        command: a.command,
        timeout: a.timeout,
    };
    let ran = conn
        .client
        .call(
            Method::POST,
            &path,
            Some(&req),
            timeout + MARGIN,
            "the command may still be running inside the computer; check with `ps` through shell",
        )
        .await;
    let r: ShellResult = host.answer(&a.session_id, ran).await?;
    let status = match (r.timed_out, r.exit_code) {
        (true, _) if r.survivors > 0 => format!(
            "timed out and was killed, but {} of the processes it started run as another user and could not be killed; find them with `ps -ef`",
            r.survivors
        ),
        (true, _) => "timed out and was killed with everything it started".to_string(),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "killed by a signal".to_string(),
    };
    let mut text = format!("{status} after {} ms\n", r.duration_ms);
    if !r.stdout.is_empty() {
        text.push_str(&format!(
            "--- stdout ---\n{}\n",
            r.stdout.trim_end_matches('\n')
        ));
    }
    if !r.stderr.is_empty() {
        text.push_str(&format!(
            "--- stderr ---\n{}\n",
            r.stderr.trim_end_matches('\n')
        ));
    }
    Ok(structured(text, &r))
}
