//! A JSON body extractor whose rejections are wire errors that say what was
//! wrong and where (`actions[2].x: invalid type`), instead of axum's plain
//! text.

use crate::http_error::ApiError;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(ApiError::invalid(describe(&rejection))),
        }
    }
}

fn describe(rejection: &JsonRejection) -> String {
    match rejection {
        JsonRejection::JsonDataError(e) => format!(
            "the request does not fit: {}",
            e.body_text()
                .trim_start_matches("Failed to deserialize the JSON body into the target type: ")
        ),
        JsonRejection::JsonSyntaxError(e) => {
            format!("the request body is not valid JSON: {}", e.body_text())
        }
        JsonRejection::MissingJsonContentType(_) => {
            "send the body as JSON with `Content-Type: application/json`".to_string()
        }
        other => other.body_text(),
    }
}
