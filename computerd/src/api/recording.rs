//! Routes for recordings: start, steps and stop on a session; the list and
//! packages of every recording kept in the computer.

use super::json::ApiJson;
use super::live::Live;
use super::AppState;
use crate::http_error::ApiError;
use axum::extract::{Path, State};
use axum::Json;
use computer_protocol::endpoints::NoBody;
use computer_protocol::recording::{
    RecordingDeleted, RecordingId, RecordingPackage, RecordingStarted, RecordingTally,
    RecordingsResponse, StartRecordingRequest, StepRecord,
};

pub async fn start(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(req): ApiJson<StartRecordingRequest>,
) -> Result<Json<RecordingStarted>, ApiError> {
    let started =
        app.recordings
            .start(session.recorder_slot(), &session.id, &session.title, req)?;
    app.sessions.touch_overview();
    Ok(Json(started))
}

pub async fn step(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(step): ApiJson<StepRecord>,
) -> Result<Json<RecordingTally>, ApiError> {
    Ok(Json(app.recordings.step(session.recorder_slot(), step)?))
}

pub async fn stop(
    State(app): State<AppState>,
    Live(session): Live,
    ApiJson(_): ApiJson<NoBody>,
) -> Result<Json<RecordingPackage>, ApiError> {
    let package = app.recordings.stop(session.recorder_slot()).await;
    app.sessions.touch_overview();
    Ok(Json(package?))
}

pub async fn list(State(app): State<AppState>) -> Result<Json<RecordingsResponse>, ApiError> {
    Ok(Json(RecordingsResponse {
        recordings: app.recordings.list()?,
    }))
}

pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RecordingDeleted>, ApiError> {
    let id = RecordingId::parse(&id)?;
    Ok(Json(app.recordings.delete(&id)?))
}

pub async fn package(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(_): ApiJson<NoBody>,
) -> Result<Json<RecordingPackage>, ApiError> {
    let id = RecordingId::parse(&id)?;
    Ok(Json(app.recordings.package(&id).await?))
}
