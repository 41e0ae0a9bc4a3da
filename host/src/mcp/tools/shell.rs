//! shell.

use super::ToolResult;
use crate::mcp::args::{Args, ShellArgs};
use crate::mcp::progress::reporting;
use crate::mcp::result::structured;
use crate::mcp::ComputerUseServer;
use crate::settings::{format_size, MEMORY};
use computer_protocol::endpoints::Shell;
use computer_protocol::{ShellRequest, ShellResult};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
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
        description = "Run a command with `bash -lc` as user `computer` in the session's folder, no input; DISPLAY is the session's screen, X untrusted (no xdotool; paste with `computer-use-launch clipboard FILE`). stdout and stderr each keep their first and last 15000 bytes; a nonzero exit is a normal result. It returns when the command exits; start long jobs as `setsid nohup server >log 2>&1 &`.",
        annotations(
            title = "Run a shell command",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn shell(
        &self,
        Parameters(args): Parameters<Args<ShellArgs>>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
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
        let session = a.session_id.clone();
        let running = conn.client.send::<Shell>(
            &session,
            &req,
            timeout + MARGIN,
            "the command may still be running inside the computer; check with `ps` through shell",
        );
        let ran = reporting(&context, "shell still running", running).await;
        let r = self.answer(&a.session_id, ran).await?;
        let status = match (r.timed_out, r.exit_code) {
            (true, _) if r.survivors > 0 => format!(
                "timed out and was killed, but {} of the processes it started run as another user and could not be killed; find them with `ps -ef`",
                r.survivors
            ),
            (true, _) => "timed out and was killed with everything it started".to_string(),
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) if r.oom_kills > 0 => "killed by the out-of-memory killer".to_string(),
            (false, None) => "killed by a signal".to_string(),
        };
        let mut text = format!("{status} after {} ms\n", r.duration_ms);
        if let Some(note) = oom_note(&r) {
            text.push_str(&note);
            text.push('\n');
        }
        for line in &r.network_denials {
            text.push_str(line);
            text.push('\n');
        }
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

/// What the agent needs to know about out-of-memory kills since its last
/// command: how many, under which limit, and the setting that raises it.
fn oom_note(r: &ShellResult) -> Option<String> {
    let kills = r.oom_kills;
    if kills == 0 {
        return None;
    }
    let processes = if kills == 1 { "process" } else { "processes" };
    let cause = match r.memory_limit {
        Some(limit) => format!(
            "the computer's memory limit is {}; use less memory at once (fewer parallel jobs, fewer tabs), or raise `{MEMORY}` (it applies when the computer is next created)",
            format_size(limit)
        ),
        None => "the computer has no memory limit, so the machine running Docker is out of memory; use less memory at once".to_string(),
    };
    Some(format!(
        "the out-of-memory killer killed {kills} {processes} in the computer since this session's previous command: {cause}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(oom_kills: u64, memory_limit: Option<u64>) -> ShellResult {
        ShellResult {
            exit_code: None,
            duration_ms: 1,
            timed_out: false,
            survivors: 0,
            oom_kills,
            memory_limit,
            stdout: String::new(),
            stderr: String::new(),
            network_denials: Vec::new(),
        }
    }

    #[test]
    fn oom_kills_name_the_limit_and_the_setting() {
        assert_eq!(oom_note(&result(0, None)), None);
        assert_eq!(
            oom_note(&result(1, Some(512 << 20))).unwrap(),
            "the out-of-memory killer killed 1 process in the computer since this session's previous command: the computer's memory limit is 512 MiB; use less memory at once (fewer parallel jobs, fewer tabs), or raise `COMPUTER_USE_MEMORY` (it applies when the computer is next created)"
        );
        assert!(oom_note(&result(2, None))
            .unwrap()
            .contains("killed 2 processes in the computer since this session's previous command: the computer has no memory limit"));
    }
}
