//! shell.

use super::ToolResult;
use crate::mcp::args::{Args, ShellArgs};
use crate::mcp::result::structured;
use crate::mcp::ComputerUseServer;
use computer_protocol::endpoints::Shell;
use computer_protocol::{SessionId, ShellRequest, ShellResult};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use std::time::Duration;

/// Time allowed beyond the command's own timeout for computerd to kill it
/// and answer.
const MARGIN: Duration = Duration::from_secs(30);

#[tool_router(router = shell_tools, vis = "pub(crate)")]
impl ComputerUseServer {
    #[tool(
        name = "shell",
        output_schema = schema_for_output::<ShellResult>(),
        title = "Run a shell command",
        description = "Run a command with `bash -lc` as the user `computer` in the session's working folder, with no input; DISPLAY points at the session's screen once it has one. Returns exit_code, duration_ms, timed_out, stdout and stderr (each keeps its first and last 15000 bytes). A non-zero exit is a normal result. The call returns when the command exits: start long jobs in the background with output redirected, e.g. `setsid nohup server >log 2>&1 &`. On timeout the command and everything it started are killed.",
        annotations(
            title = "Run a shell command",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn shell(&self, Parameters(args): Parameters<Args<ShellArgs>>) -> ToolResult {
        let a = args.read()?;
        let conn = self.reach(&a.session_id).await?;
        let default_max = conn.shell_timeout_max;
        // computerd enforces the limits and explains them; the host only needs
        // a deadline that outlasts the command's own timeout.
        let timeout = a
            .timeout
            .as_ref()
            .and_then(|t| t.to_duration().ok())
            .unwrap_or(default_max)
            .min(Duration::from_secs(24 * 3600));
        let req = ShellRequest {
            command: a.command,
            timeout: a.timeout,
        };
        let ran = conn
            .client
            .send::<Shell>(
                &SessionId(a.session_id.clone()),
                &req,
                timeout + MARGIN,
                "the command may still be running inside the computer; check with `ps` through shell",
            )
            .await;
        let r = self.answer(&a.session_id, ran).await?;
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
}
