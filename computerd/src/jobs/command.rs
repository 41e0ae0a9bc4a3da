//! A session's shell command: its deadline checked against the session's
//! limits, and the environment it runs in (the session's id, and its
//! screen's display once that is open). [`crate::shell`] runs it.

use super::JobError;
use crate::sessions::{Session, Sessions};
use crate::shell::ShellSpec;
use computer_protocol::duration::format_duration;
use computer_protocol::{InvalidInput, ShellRequest, ShellResult};
use std::sync::Arc;
use std::time::Duration;

/// Runs `req` in `session`'s working folder with `env` (the computer's
/// own variables for commands) and the session's. A person who takes the
/// screen meanwhile, or the session's end, stops it and everything it
/// started.
pub async fn run_command(
    sessions: &Sessions,
    session: &Arc<Session>,
    req: ShellRequest,
    mut env: Vec<(String, String)>,
) -> Result<ShellResult, JobError> {
    let timeout = timeout_of(&req, session)?;
    env.push(("COMPUTER_USE_SESSION".to_string(), session.id.to_string()));
    // A screen still opening is not waited for: shell calls never wait for
    // the desktop, and `DISPLAY` is set only once the screen is there.
    if let Some(screen) = session.current_screen() {
        // The untrusted X cookie: the shell's programs cannot type, log
        // keys or read other windows (see `x_auth`).
        env.extend(screen.env().agent_vars());
    }
    let running_guard = session.command_started(&req.command);
    // A hold that began since the caller's check missed this command when
    // it stopped the session's others.
    session.check_free()?;
    let started_ms = crate::netguard::now_ms();
    let running = crate::shell::run(ShellSpec {
        command: req.command,
        cwd: session.cwd(),
        env,
        timeout,
    });
    // A command must not outlive its session (its `DISPLAY` and session
    // bus may soon be another session's screen) nor run on while a person
    // types on its screen. Dropping `run` kills everything it started.
    let stopped = running_guard.stopped();
    tokio::select! {
        result = running => {
            let mut result = with_oom_kills(session, result?);
            result.network_denials = crate::netguard::denial_lines_since(started_ms).await;
            Ok(result)
        }
        () = stopped.cancelled() => Err(sessions.why_stopped(session).into()),
    }
}

/// The command's deadline: the session's default, or the one asked for
/// within the session's longest; an empty command is refused too.
fn timeout_of(req: &ShellRequest, session: &Arc<Session>) -> Result<Duration, InvalidInput> {
    let limits = &session.limits;
    let timeout = match &req.timeout {
        None => limits.shell_timeout,
        Some(arg) => arg
            .to_duration()
            .map_err(|e| InvalidInput(format!("`timeout`: {e}")))?,
    };
    if timeout > limits.shell_timeout_max {
        return Err(InvalidInput(format!(
            "`timeout` is {}: the longest allowed is {} (COMPUTER_USE_SHELL_TIMEOUT_MAX); use a shorter timeout or run the job in the background with `setsid nohup ... >log 2>&1 &`",
            format_duration(timeout),
            format_duration(limits.shell_timeout_max)
        )));
    }
    if req.command.trim().is_empty() {
        return Err(InvalidInput(
            "`command` is empty: give a command for bash to run".to_string(),
        ));
    }
    Ok(timeout)
}

/// `result` with the out-of-memory kills this session has not heard of yet
/// and the limit they happened under.
fn with_oom_kills(session: &Arc<Session>, mut result: ShellResult) -> ShellResult {
    let Some(cgroup) = crate::memory::container() else {
        return result;
    };
    let Some(total) = cgroup.oom_kills() else {
        return result;
    };
    result.oom_kills = session.oom.news(total);
    if result.oom_kills > 0 {
        result.memory_limit = cgroup.limit();
    }
    result
}
