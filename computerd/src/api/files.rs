//! Routes for the working folder and the file tools. File work is blocking
//! and runs off the async threads.

use super::json::ApiJson;
use super::live::Free;
use super::AppState;
use crate::files;
use crate::http_error::ApiError;
use axum::extract::State;
use axum::Json;
use computer_protocol::{
    ListFilesRequest, ListFilesResponse, ReadFileRequest, ReadFileResponse, SetCwdRequest,
    SetCwdResponse, WriteFileRequest, WriteFileResponse,
};

pub async fn set_cwd(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<SetCwdRequest>,
) -> Result<Json<SetCwdResponse>, ApiError> {
    let path = session
        .in_folders(&app.config.home, move |home, cwd| {
            files::set_cwd(&home, &cwd, &req.path)
        })
        .await?;
    session.set_cwd(path.clone());
    Ok(Json(SetCwdResponse {
        path: path.display().to_string(),
    }))
}

pub async fn list(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<ListFilesRequest>,
) -> Result<Json<ListFilesResponse>, ApiError> {
    let listing = session
        .in_folders(&app.config.home, move |home, cwd| {
            files::list(&home, &cwd, req.path.as_deref())
        })
        .await?;
    Ok(Json(listing))
}

pub async fn read(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<ReadFileRequest>,
) -> Result<Json<ReadFileResponse>, ApiError> {
    let read = session
        .in_folders(&app.config.home, move |home, cwd| {
            files::read(&home, &cwd, &req)
        })
        .await?;
    Ok(Json(read))
}

pub async fn write(
    State(app): State<AppState>,
    Free(session): Free,
    ApiJson(req): ApiJson<WriteFileRequest>,
) -> Result<Json<WriteFileResponse>, ApiError> {
    let written = session
        .in_folders(&app.config.home, move |home, cwd| {
            files::write(&home, &cwd, &req)
        })
        .await?;
    Ok(Json(written))
}
