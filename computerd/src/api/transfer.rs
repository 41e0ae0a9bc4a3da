//! Routes of `file_transfer`: the checks before any data moves, and the two
//! streaming directions. Bodies are tar streams, never held in memory.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::http_error::ApiError;
use crate::jobs;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use computer_protocol::{
    SourceRequest, TransferSource, TransferSummary, UploadRequest, UploadTarget,
};

pub async fn check(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<UploadRequest>,
) -> Result<Json<UploadTarget>, ApiError> {
    Ok(Json(
        jobs::check_upload(&app.config.home, &session, req).await?,
    ))
}

pub async fn source(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<SourceRequest>,
) -> Result<Json<TransferSource>, ApiError> {
    Ok(Json(
        jobs::describe_source(&app.config.home, &session, req).await?,
    ))
}

pub async fn upload(
    State(app): State<AppState>,
    Free(session): Free,
    query: Result<Query<UploadRequest>, QueryRejection>,
    body: Body,
) -> Result<Json<TransferSummary>, ApiError> {
    let req = upload_query(query)?;
    let stream = body.into_data_stream();
    let summary = jobs::upload(&app.sessions, &app.config.home, &session, req, stream).await?;
    Ok(Json(summary))
}

/// An upload says what it is in its query string, beside its tar body.
fn upload_query(
    query: Result<Query<UploadRequest>, QueryRejection>,
) -> Result<UploadRequest, ApiError> {
    let Query(req) = query.map_err(|e| {
        ApiError::invalid(format!(
            "the upload's query does not fit: {}; send `path`, `name`, `kind` (`file` or `folder`) and `overwrite`",
            e.body_text()
        ))
    })?;
    Ok(req)
}

pub async fn download(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<SourceRequest>,
) -> Result<Response, ApiError> {
    let stream = jobs::download(&app.config.home, &session, req).await?;
    let tar = [(header::CONTENT_TYPE, "application/x-tar")];
    Ok((tar, Body::from_stream(stream)).into_response())
}
