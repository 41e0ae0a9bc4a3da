//! One Docker API call with its own deadline and the words its error needs:
//! what was being done and what may be left behind when it fails.

use super::error::DockerError;
use std::future::Future;
use std::time::Duration;

/// A Docker call about to be made.
pub(crate) struct Call {
    /// What the engine was asked to do, as "creating the container `x`".
    action: String,
    /// What exists or may still be running if the call fails.
    aftermath: String,
    limit: Duration,
}

impl Call {
    pub(crate) fn new(
        action: impl Into<String>,
        aftermath: impl Into<String>,
        limit: Duration,
    ) -> Call {
        Call {
            action: action.into(),
            aftermath: aftermath.into(),
            limit,
        }
    }

    /// Runs the call; any error becomes a [`DockerError`].
    pub(crate) async fn run<T>(
        &self,
        fut: impl Future<Output = Result<T, bollard::errors::Error>>,
    ) -> Result<T, DockerError> {
        self.run_raw(fut).await?.map_err(|e| self.failed(e))
    }

    /// Runs the call; only a missed deadline is an error here, so the caller
    /// can look at the engine's answer (a 404 or 409 is often expected).
    pub(crate) async fn run_raw<T>(
        &self,
        fut: impl Future<Output = Result<T, bollard::errors::Error>>,
    ) -> Result<Result<T, bollard::errors::Error>, DockerError> {
        match tokio::time::timeout(self.limit, fut).await {
            Ok(Err(bollard::errors::Error::RequestTimeoutError)) | Err(_) => Err(self.timed_out()),
            Ok(result) => Ok(result),
        }
    }

    /// The error for an answer the caller did not expect.
    pub(crate) fn failed(&self, source: bollard::errors::Error) -> DockerError {
        if matches!(source, bollard::errors::Error::RequestTimeoutError) {
            return self.timed_out();
        }
        DockerError::Call {
            action: self.action.clone(),
            aftermath: self.aftermath.clone(),
            source,
        }
    }

    fn timed_out(&self) -> DockerError {
        DockerError::Timeout {
            action: self.action.clone(),
            aftermath: self.aftermath.clone(),
            after: self.limit,
        }
    }
}

/// The engine's HTTP status, when it answered with an error.
pub(crate) fn status_of(error: &bollard::errors::Error) -> Option<u16> {
    match error {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// The engine's message, when it answered with an error.
pub(crate) fn message_of(error: &bollard::errors::Error) -> Option<&str> {
    match error {
        bollard::errors::Error::DockerResponseServerError { message, .. } => Some(message),
        _ => None,
    }
}
