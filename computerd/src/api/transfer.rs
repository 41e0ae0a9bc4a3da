//! Routes of `file_transfer`: the checks before any data moves, and the two
//! streaming directions. Bodies are tar streams, never held in memory.

use super::error::ApiError;
use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::sessions::Session;
use crate::transfer::{self, TransferError};
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use computer_protocol::{
    SessionId, SourceRequest, TransferSource, TransferSummary, UploadRequest, UploadTarget,
};
use futures::StreamExt;
use std::sync::Arc;

/// Runs blocking filesystem work with the session's home and working folder.
async fn with_paths<T: Send + 'static>(
    app: &AppState,
    session: &Arc<Session>,
    f: impl FnOnce(std::path::PathBuf, std::path::PathBuf) -> Result<T, TransferError> + Send + 'static,
) -> Result<T, TransferError> {
    let (home, cwd) = (app.config.home.clone(), session.cwd());
    tokio::task::spawn_blocking(move || f(home, cwd))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// A transfer that stopped because its session ended reports the session's
/// own reason, as any call on an ended session does.
fn explain(app: &AppState, id: &SessionId, error: TransferError) -> ApiError {
    match error {
        TransferError::SessionEnded => match app.sessions.get(id) {
            Err(ended) => ended.into(),
            Ok(session) => super::handoff::why_stopped(app, &session),
        },
        other => other.into(),
    }
}

pub async fn check(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<UploadRequest>,
) -> Result<Json<UploadTarget>, ApiError> {
    super::handoff::refuse_held(&session)?;
    let target = with_paths(&app, &session, move |home, cwd| {
        transfer::check_upload(&home, &cwd, &req)
    })
    .await?;
    Ok(Json(target))
}

pub async fn source(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<SourceRequest>,
) -> Result<Json<TransferSource>, ApiError> {
    super::handoff::refuse_held(&session)?;
    let (_, source) = with_paths(&app, &session, move |home, cwd| {
        transfer::describe(&home, &cwd, &req)
    })
    .await?;
    Ok(Json(source))
}

pub async fn upload(
    State(app): State<AppState>,
    Live(session): Live,
    query: Result<Query<UploadRequest>, QueryRejection>,
    body: Body,
) -> Result<Json<TransferSummary>, ApiError> {
    let id = session.id.clone();
    super::handoff::refuse_held(&session)?;
    let Query(req) = query.map_err(|e| {
        ApiError::invalid(format!(
            "the upload's query does not fit: {}; send `path`, `name`, `kind` (`file` or `folder`) and `overwrite`",
            e.body_text()
        ))
    })?;
    let running = session.command_started(&format!("to_computer {}", req.path));
    // A hold that began since the first check missed this transfer.
    super::handoff::refuse_held(&session)?;
    transfer::receive(
        app.config.home.clone(),
        session.cwd(),
        req,
        body.into_data_stream(),
        running.stopped(),
    )
    .await
    .map(Json)
    .map_err(|e| explain(&app, &id, e))
}

pub async fn download(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<SourceRequest>,
) -> Result<Response, ApiError> {
    super::handoff::refuse_held(&session)?;
    let (path, source) = with_paths(&app, &session, move |home, cwd| {
        transfer::describe(&home, &cwd, &req)
    })
    .await?;
    let running = session.command_started(&format!("from_computer {}", path.display()));
    // A hold that began since the first check missed this transfer.
    super::handoff::refuse_held(&session)?;
    let stream = transfer::send(path, source, running.stopped()).map(move |chunk| {
        // The session counts as active until the stream is dropped.
        let _ = &running;
        chunk
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-tar")],
        Body::from_stream(stream),
    )
        .into_response())
}
