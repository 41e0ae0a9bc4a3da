//! The route that runs a command.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::{ShellRequest, ShellResult};

pub async fn run(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<ShellRequest>,
) -> Result<Json<ShellResult>, ApiError> {
    let mut env = vec![("HOME".to_string(), app.config.home.display().to_string())];
    env.extend(app.launcher.env.iter().cloned());
    let result = crate::jobs::run_command(&app.sessions, &session, req, env).await?;
    Ok(Json(result))
}
