//! The route that runs a command.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::sessions::Session;
use crate::shell::ShellSpec;
use axum::extract::State;
use axum::Json;
use computer_protocol::duration::format_duration;
use computer_protocol::{ShellRequest, ShellResult};

pub async fn run(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<ShellRequest>,
) -> Result<Json<ShellResult>, ApiError> {
    super::handoff::refuse_held(&session)?;
    let limits = &session.limits;
    let timeout = match &req.timeout {
        None => limits.shell_timeout,
        Some(arg) => arg
            .to_duration()
            .map_err(|e| ApiError::invalid(format!("`timeout`: {e}")))?,
    };
    if timeout > limits.shell_timeout_max {
        return Err(ApiError::invalid(format!(
            "`timeout` is {}: the longest allowed is {} (COMPUTER_USE_SHELL_TIMEOUT_MAX); use a shorter timeout or run the job in the background with `setsid nohup ... >log 2>&1 &`",
            format_duration(timeout),
            format_duration(limits.shell_timeout_max)
        )));
    }
    if req.command.trim().is_empty() {
        return Err(ApiError::invalid(
            "`command` is empty: give a command for bash to run",
        ));
    }
    let mut env = vec![
        ("HOME".to_string(), app.config.home.display().to_string()),
        ("COMPUTER_USE_SESSION".to_string(), session.id.to_string()),
    ];
    env.extend(app.launcher.env.iter().cloned());
    // A screen still opening is not waited for: shell calls never wait for
    // the desktop, and `DISPLAY` is set only once the screen is there.
    if let Some(screen) = session.current_screen() {
        // The untrusted X cookie: the shell's programs cannot type, log
        // keys or read other windows (see `x_auth`).
        env.extend(screen.env().agent_vars());
    }
    let running_guard = session.command_started(&req.command);
    // A hold that began since the check above missed this command when it
    // stopped the session's others.
    super::handoff::refuse_held(&session)?;
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
            let mut result = with_oom_kills(&session, result?);
            result.network_denials = crate::netguard::denial_lines_since(started_ms).await;
            Ok(Json(result))
        }
        () = stopped.cancelled() => Err(super::handoff::why_stopped(&app, &session)),
    }
}

/// `result` with the out-of-memory kills this session has not heard of yet
/// and the limit they happened under.
fn with_oom_kills(session: &Session, mut result: ShellResult) -> ShellResult {
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
